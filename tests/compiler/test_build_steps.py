"""How a build is ordered and where it fails: the once-per-torch builds run at the same time, as one step;
a region whose C++ ppy cannot print, or the compiler rejects, falls back alone."""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ppy_compile import index, keys, load, pipeline, shared
from ppy_compile.cache import Cache
from ppy_compile.options import MODULE_NAME, BuildOptions


def test_the_bridge_and_the_header_build_together(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.delenv("PPY_QUIET", raising=False)
    cache = Cache.open(tmp_path / "cache")
    built: set[str] = set()
    # Each build waits for the other: run one after the other, the barrier would break.
    both_running = threading.Barrier(2, timeout=20)
    calls: list[tuple[str, bool]] = []

    def fake_ensure(cache: Cache, shared: shared.SharedBuild, progress: bool = True) -> str:
        calls.append((shared.kind, progress))
        if shared.kind not in built:
            both_running.wait()
            built.add(shared.kind)
        return f"key-{shared.kind}"

    def fake_valid(key: str) -> Any:
        return None if not built else object()

    monkeypatch.setattr(shared, "ensure_shared", fake_ensure)
    monkeypatch.setattr(cache, "valid", fake_valid)
    assert shared.ensure_all_shared(cache, with_pch=True) == ("key-bridge", "key-pch")
    assert {kind for kind, progress in calls if not progress} == {"bridge", "pch"}
    # One step for both: its start line and its done line, whole lines each.
    step = capsys.readouterr().err.splitlines()
    what = "ppy: building the bridge to torch and precompiling torch's headers (once per torch version)"
    assert len(step) == 2 and step[0] == f"{what} ..." and step[1].startswith(f"{what}: done in "), step


def test_only_what_is_missing_builds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = Cache.open(tmp_path / "cache")
    calls: list[tuple[str, bool]] = []

    def fake_ensure(cache: Cache, shared: shared.SharedBuild, progress: bool = True) -> str:
        calls.append((shared.kind, progress))
        return f"key-{shared.kind}"

    monkeypatch.setattr(shared, "ensure_shared", fake_ensure)
    # Only the header is missing: it is its own step; -O0 builds need no header at all.
    monkeypatch.setattr(cache, "valid", lambda key: None if key == shared.PCH.key(_tool()) else object())
    assert shared.ensure_all_shared(cache, with_pch=True) == ("key-bridge", "key-pch")
    assert calls == [("bridge", True), ("pch", True)]
    calls.clear()
    assert shared.ensure_all_shared(cache, with_pch=False) == ("key-bridge", None)
    assert calls == [("bridge", True)]


def _tool() -> Any:
    from ppy_compile.toolchain import toolchain

    return toolchain()


TWO_REGIONS = ("import ppy, torch\n\n\n@ppy.opt(1)\ndef faulty(x: torch.Tensor) -> torch.Tensor:\n    return x * 2\n\n\n"
               "@ppy.opt(1)\ndef innocent(x: torch.Tensor) -> torch.Tensor:\n    return x + 1\n")


def _build_with_a_faulty_printer(cache: Path, folder: Path, monkeypatch: pytest.MonkeyPatch,
                                 printed: Callable[[str], str]) -> str:
    """Build TWO_REGIONS in one unit with `faulty`'s C++ passed through ``printed``: only `innocent` compiles,
    and the reason `faulty` runs as Python is returned."""
    from ppy_compile import emit

    original = emit.Printer.function

    def function(self: emit.Printer) -> str:
        text = original(self)
        return printed(text) if self.model.name == "faulty" else text

    monkeypatch.setattr(emit.Printer, "function", function)
    monkeypatch.setattr(os, "cpu_count", lambda: 1)  # both regions in one unit
    built = pipeline.build_module(str(folder / "model.py"), TWO_REGIONS, Cache.open(cache))
    assert list(built.functions) == ["innocent:9"]
    (reason,) = built.fallbacks.values()
    return reason


def test_a_region_ppy_cannot_lower_falls_back_alone(fresh_cache: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from ppy_compile.cpp_types import NoCppForm

    def crashes(text: str) -> str:
        raise NoCppForm("a lowering ppy lacks")

    reason = _build_with_a_faulty_printer(fresh_cache, tmp_path, monkeypatch, crashes)
    assert "ppy could not lower it to C++ (line 4), a ppy bug worth reporting: NoCppForm: a lowering ppy lacks" in reason


def test_a_region_whose_cpp_does_not_compile_falls_back_alone(fresh_cache: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The compiler's error is blamed on the region whose lines it names; the rest of its unit builds again."""
    reason = _build_with_a_faulty_printer(fresh_cache, tmp_path, monkeypatch,
                                          lambda text: text.replace("try {", "try {\n        not_a_name_in_cpp;"))
    assert "the C++ ppy generated for it does not compile (line 4), a ppy bug worth reporting: " in reason
    assert "not_a_name_in_cpp" in reason


def test_a_failure_naming_no_region_line_is_traced_by_building_each_alone(fresh_cache: Path, tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure the compiler reports inside a header (a template the region instantiated) names no line of the
    unit: each region is then built alone, so only the one that fails alone falls back."""
    reason = _build_with_a_faulty_printer(
        fresh_cache, tmp_path, monkeypatch,
        lambda text: text.replace("try {", "try {\n        struct NoLess {}; NoLess q[2]; std::sort(q, q + 2);", 1))
    assert "the C++ ppy generated for it does not compile (line 4), a ppy bug worth reporting: " in reason
    assert "operator<" in reason


def test_a_bridge_that_fails_to_build_is_the_builds_failure_not_the_regions(fresh_cache: Path, tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The bridge builds while the modules compile (they need it only to link): its compile error stops the
    build as the bridge's, and no region is set aside as if its own C++ had failed."""
    import shutil

    from ppy_compile.toolchain import CompileError

    cache = Cache.open(fresh_cache)
    bridge_key = shared.BRIDGE.key(_tool())
    shutil.rmtree(cache.build_dir(bridge_key))
    failure = CompileError("the C++ compiler failed: the bridge, as a stand-in", [])

    def ensure(cache: Cache, built: shared.SharedBuild, progress: bool = True) -> str:
        assert built.kind == "bridge"
        raise failure

    monkeypatch.setattr(shared, "ensure_shared", ensure)
    with pytest.raises(CompileError) as raised:
        pipeline.build_module(str(tmp_path / "model.py"), TWO_REGIONS, cache)
    assert raised.value is failure  # not a module returned with both regions set aside as the compiler's rejects


def test_a_compile_error_is_summed_up_by_the_compilers_own_error_line(tmp_path: Path) -> None:
    """Not by the first line that mentions "error": the command line does, when a path in it (the cache's, for the
    precompiled header) names it."""
    from ppy_compile.toolchain import CompileError, run_ninja, write_ninja

    folder = tmp_path / "error_analysis" / "cache"  # a project's folder may well be called so
    folder.mkdir(parents=True)
    (folder / "bad.cpp").write_text("int f() { return not_declared; }\n", encoding="utf-8")
    tool = _tool()
    write_ninja(folder, tool, "bad.cpp", "bad.so", 0, [], extra_compile=[f"-I{folder}"])
    with pytest.raises(CompileError) as caught:
        run_ninja(folder, tool)
    assert str(caught.value).startswith("the C++ compiler failed: bad.cpp:1:"), str(caught.value)[:300]
    assert "not_declared" in str(caught.value)


FULL_DISK = "#!/bin/sh\necho 'cc1plus: fatal error: error writing to /tmp/ccQ.s: No space left on device' >&2\nexit 1\n"


def test_a_full_disk_stops_the_build_without_recording_the_regions(fresh_cache: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """A compiler the machine stops (here a disk that filled up) says nothing about the regions: the build
    raises BuildInterrupted, and the cache records no verdict on them, so the next process builds them."""
    import dataclasses

    from ppy_compile import toolchain as toolchains
    from ppy_compile.toolchain import BuildInterrupted, CompileError

    compiler = tmp_path / "full-disk-c++"
    compiler.write_text(FULL_DISK, encoding="utf-8")
    compiler.chmod(0o755)
    real = _tool()
    monkeypatch.setattr(toolchains, "toolchain", lambda: dataclasses.replace(real, cxx=str(compiler)))
    cache = Cache.open(fresh_cache)
    origin = str(tmp_path / "model.py")
    with pytest.raises(BuildInterrupted, match="No space left on device") as caught:
        pipeline.build_module(origin, TWO_REGIONS, cache)
    assert not isinstance(caught.value, CompileError)
    assert cache.read_index(index.index_key(origin, TWO_REGIONS, BuildOptions())) is None
    monkeypatch.setattr(toolchains, "toolchain", lambda: real)
    assert set(pipeline.build_module(origin, TWO_REGIONS, cache).functions) == {"faulty:4", "innocent:9"}


def test_two_threads_loading_one_module_load_one_copy(monkeypatch: pytest.MonkeyPatch) -> None:
    """A background build finishing while the program prepares another file: both may load the same module
    at once. One copy is loaded and both get it (a second copy of the bridge would register its types twice)."""
    opened: list[str] = []
    imported: list[str] = []

    class Opened:
        path = "/proc/self/fd/-1"
        manifest: dict[str, Any] = {}

        def close(self) -> None:
            pass

    def open_artifact(key: str) -> Opened:
        opened.append(key)
        return Opened()

    def slow_import(path: str, name: str) -> object:
        imported.append(name)
        threading.Event().wait(0.2)  # long enough for the other thread to arrive while this one loads
        return object()

    monkeypatch.setattr(load, "import_extension", slow_import)
    fake = type("FakeCache", (), {"open_artifact": staticmethod(open_artifact)})()
    key = "test-one-copy"
    results: list[object] = []
    threads = [threading.Thread(target=lambda: results.append(load.load_module(fake, key))) for _ in range(2)]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        load._loaded.pop(key, None)
    assert opened == [key] and imported == [MODULE_NAME]
    assert len(results) == 2 and results[0] is results[1]


def test_a_torch_reinstalled_under_the_same_version_is_another_build(monkeypatch: pytest.MonkeyPatch) -> None:
    """The warm start's key reads libtorch's stat: modules built against one libtorch are not loaded into a
    process running another that has the same version string (a rebuilt or reinstalled torch)."""
    from ppy_compile import toolchain as toolchains

    before = keys.light_identity(BuildOptions())
    real = toolchains._file_identity
    monkeypatch.setattr(toolchains, "_file_identity",
                        lambda path: real(path) + ":reinstalled" if path.endswith("libtorch_cpu.so") else real(path))
    assert keys.light_identity(BuildOptions()) != before


THREE_REGIONS = TWO_REGIONS + "\n\n@ppy.opt(1, compile=False)\ndef kept(x: torch.Tensor) -> torch.Tensor:\n    return x - 1\n"


def test_ppy_build_counts_every_region_and_cache_logs_shows_why_one_failed(
        fresh_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A region whose C++ does not compile, and one marked compile=False, are regions of the file all the same
    ("1 of 3 regions compiled", not "1 of 1"); the compiler's log of the failure is what `ppy cache logs` shows."""
    from ppy.cli import main as ppy_main
    from ppy_compile import emit

    original = emit.Printer.function

    def function(self: emit.Printer) -> str:
        text = original(self)
        return text.replace("try {", "try {\n        not_a_name_in_cpp;") if self.model.name == "faulty" else text

    monkeypatch.setattr(emit.Printer, "function", function)
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    source = tmp_path / "model.py"
    source.write_text(THREE_REGIONS, encoding="utf-8")
    assert ppy_main(["build", str(source)]) == 1
    assert "ppy build: 1 of 3 regions compiled, in 1 file" in capsys.readouterr().err
    assert ppy_main(["cache", "info"]) == 0
    assert "logs of failed builds: 1 (" in (info := capsys.readouterr().out) and "`ppy cache logs` shows them" in info
    assert ppy_main(["cache", "logs"]) == 0
    logs = capsys.readouterr().out
    assert logs.startswith(f"==> {fresh_cache / 'builds'}/.") and "not_a_name_in_cpp" in logs
    assert logs.rstrip().endswith("1 log of failed builds (`ppy cache clear` removes them)")
    assert ppy_main(["cache", "clear"]) == 0 and ppy_main(["cache", "logs"]) == 0
    assert "no logs of failed builds" in capsys.readouterr().out


def test_a_ninja_this_user_cannot_run_is_named_not_taken_for_missing(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """A venv whose ninja this user may not run (another user's home, no execute bit) is an environment to fix,
    said with the path, never a missing package or a ppy bug."""
    import shutil
    import sys

    from ppy.errors import BuildError
    from ppy_compile import toolchain

    (tmp_path / "ninja").write_text("#!/bin/sh\n", encoding="utf-8")
    (tmp_path / "ninja").chmod(0o644)
    monkeypatch.setattr(sys, "executable", str(tmp_path / "python"))
    monkeypatch.setattr(shutil, "which", lambda name: None)
    with pytest.raises(BuildError, match=rf"ninja cannot be run by this user: {tmp_path}/ninja \(not executable"):
        toolchain._ninja()
    (tmp_path / "ninja").unlink()
    with pytest.raises(BuildError, match=r"ninja is not installed"):
        toolchain._ninja()


def test_a_step_that_fails_without_a_word_is_a_silent_stop(tmp_path: Path) -> None:
    """GCC reading a broken precompiled header may exit 1 and say nothing: the pipeline then asks whether the header
    is to blame (shared.pch_crashes) before it takes the stop for a signal."""
    from ppy_compile.toolchain import BuildInterrupted, SilentStop, build_failure

    silent = build_failure(tmp_path, 1, "[1/2] compile module.cpp\nFAILED: [code=1] module.so.o\nninja: build stopped: "
                                        "subcommand failed.")
    assert isinstance(silent, SilentStop) and "without an error message" in str(silent)
    assert type(build_failure(tmp_path, -9, "")) is BuildInterrupted  # a signal ninja itself met


def test_a_ctrl_c_that_reaches_the_wrapper_before_ninja_runs_is_an_interruption(tmp_path: Path) -> None:
    """The wrapper that makes ninja die with its parent is a Python starting up: a Ctrl-C then stops the start, whose
    traceback ("Fatal Python error: ... error" included) is no compiler's error, and no log is kept of it."""
    from ppy_compile.toolchain import BuildInterrupted, build_failure

    started = ("Fatal Python error: init_sys_streams: can't initialize sys standard streams\nPython runtime state: "
               "core initialized\nTraceback (most recent call last):\n  File \"<frozen codecs>\", line 309, in "
               "__init__\nKeyboardInterrupt")
    for output in (started, "Traceback (most recent call last):\n  File \"<string>\", line 2, in <module>\n"
                            "KeyboardInterrupt"):
        stopped = build_failure(tmp_path, 1, output)
        assert type(stopped) is BuildInterrupted and "interrupted" in str(stopped), stopped
    assert not (tmp_path.parent / f"{tmp_path.name}.log").exists()  # no log: nothing reads as a failed build


LOAD_UNDER_MODES = """
import sys, torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch._subclasses.fake_tensor import FakeTensorMode
from ppy_compile import load, shared
from ppy_compile.cache import Cache
from ppy_compile.toolchain import toolchain


class Refusing(TorchDispatchMode):
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        raise RuntimeError(f"no op under this mode: {func}")


cache, key = Cache.open(), shared.BRIDGE.key(toolchain())
load.load_bridge(cache, key)
with FakeTensorMode(), Refusing():
    bridge = load.bridge_module(key)
print(bridge.__name__)
"""


def test_the_bridge_loads_under_a_dispatch_mode(fresh_cache: Path) -> None:
    """The bridge loads at a region's first call, which may come under a mode (FakeTensorMode in torch.export, or
    one that refuses every op): its check of torch's tensor layout makes its tensors through no mode."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", LOAD_UNDER_MODES], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PPY_CACHE_DIR": str(fresh_cache)})
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.strip() == "ppy_bridge"


def test_a_bridge_that_refuses_this_torch_is_a_build_error_naming_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bridge's own refusal (torch lays a tensor's Python object out otherwise) says why the regions run as
    Python, not "a ppy bug"; and it is not taken for a broken build to make again."""
    import torch

    from ppy_check.errors import BuildError

    refusal = "ppy's bridge does not match this torch: a torch.Tensor's Python object is not laid out as ..."

    def refusing(path: str, name: str) -> Any:
        raise ImportError(refusal)

    monkeypatch.setattr(load, "import_extension", refusing)
    monkeypatch.setitem(load._loaded, "k" * 64, (type("Artifact", (), {"path": "/nowhere/ppy_bridge.so"})(), None))
    with pytest.raises(load.BridgeRefused) as refused:
        load.bridge_module("k" * 64)
    assert isinstance(refused.value, BuildError) and not isinstance(refused.value, ImportError)
    assert str(refused.value) == f"{refusal} (torch {torch.__version__})"


def test_a_build_tool_this_user_cannot_run_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The interpreter that starts ninja, under another user's home, refuses this user: the build says which file
    cannot be run, not "a ppy bug"."""
    from ppy_check.errors import BuildError
    from ppy_compile import toolchain

    unrunnable = tmp_path / "python"
    unrunnable.write_text("#!/bin/sh\n", encoding="utf-8")
    unrunnable.chmod(0o644)
    monkeypatch.setattr(toolchain, "_ninja_command", lambda folder, tool, targets=(): [str(unrunnable), "-C", "x"])
    with pytest.raises(BuildError, match=rf"cannot run {unrunnable}: Permission denied"):
        toolchain.run_ninja(tmp_path, toolchain.toolchain())
