"""The build cache: concurrent builders, repairs, unusable folders, leftovers of killed builds, maintenance, toolchain."""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

import ppy
import ppy_compile.cache
from tests.support.other_user import NOBODY, as_unprivileged, is_root, shared_folder
from tests.support.process_table import descendants
from tests.support.session_cache import seeded_cache
from ppy.cli import main as ppy_main
from ppy_check.errors import BuildError
from ppy_compile.cache import Cache, CacheWarning
from ppy_compile.fallback import fallback_caches

HERE = Path(__file__).resolve().parents[1]
ROOT = HERE.parent
TINY = HERE / "regions" / "tiny.py"

BUILD_TINY = """
    import torch, tiny
    assert tiny.scale_shift.build(), "not compiled"
    print(tiny.scale_shift(torch.ones(2), 3.0, 1).tolist())
"""


def _start(code: str, cache: Path, **env: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": f"{ROOT}:{HERE / 'regions'}", "PPY_CACHE_DIR": str(cache), **env}
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.PIPE, text=True, env=env)


def _build_tiny(cache: Path) -> None:
    builder = _start(BUILD_TINY, cache)
    out, err = builder.communicate(timeout=300)
    assert builder.returncode == 0, err
    assert out.strip() == "[4.0, 4.0]"


def _entries(cache: Path, kind: str) -> list[Path]:
    found = []
    for entry in (cache / "builds").iterdir():
        with_manifest = entry / "manifest.json"
        if not entry.name.startswith(".") and with_manifest.exists() and json.loads(with_manifest.read_text())["kind"] == kind:
            found.append(entry)
    return found


def _staging(cache: Path) -> list[Path]:
    return [p for p in (cache / "builds").iterdir() if p.name.startswith(".") and p.is_dir()]


def test_concurrent_builders_make_one_good_build(fresh_cache: Path) -> None:
    builders = [_start(BUILD_TINY, fresh_cache) for _ in range(3)]
    results = [b.communicate(timeout=300) for b in builders]
    for builder, (out, err) in zip(builders, results):
        assert builder.returncode == 0, err
        assert out.strip() == "[4.0, 4.0]"
    assert len(_entries(fresh_cache, "module")) == 1
    assert _staging(fresh_cache) == []


def test_corrupted_entry_is_detected_and_rebuilt(fresh_cache: Path) -> None:
    _build_tiny(fresh_cache)
    (built,) = _entries(fresh_cache, "module")
    library = built / "module.so"
    library.write_bytes(library.read_bytes()[: 1000])  # truncated, as by a crash mid-copy
    _build_tiny(fresh_cache)
    assert Cache(fresh_cache).valid(built.name) is not None


# --- the cache repairs itself ------------------------------------------------------


def test_a_broken_index_is_discarded_and_rebuilt(fresh_cache: Path) -> None:
    from ppy_compile.pipeline import build_module

    origin, text = str(TINY), TINY.read_text()
    assert build_module(origin, text).functions
    (index,) = (fresh_cache / "index").glob("*.json")
    good = json.loads(index.read_text())
    broken = [
        "[]",  # valid JSON of the wrong shape
        "{not json",
        json.dumps({**good, "errors": []}),
        json.dumps({**good, "symbols": {"scale_shift:7": 7}}),
        json.dumps({**good, "builds": {key: "../../../../tmp/planted" for key in good["builds"]}}),  # a path, not a key
        json.dumps({**good, "builds": {"elsewhere:1": key for key in good["builds"].values()}}),  # no such region
        json.dumps({**good, "builds": []}),
        json.dumps({**good, "bridge": None}),
    ]
    for content in broken:
        index.write_text(content)
        built = build_module(origin, text)
        assert list(built.functions) == list(good["symbols"]), content
        assert json.loads(index.read_text()) == good, content


def test_json_nested_past_the_parsers_limit_is_garbage_like_any_other(tmp_path: Path) -> None:
    """json raises RecursionError, not ValueError, for nesting too deep: still a broken record, not a crash."""
    cache = Cache.open(tmp_path / "cache")
    key, deep = "a" * 64, "[" * 100_000
    index = tmp_path / "cache" / "index" / f"{key}.json"
    index.write_text(deep)
    assert cache.read_index(key) is None and not index.exists()
    entry = tmp_path / "cache" / "builds" / key
    entry.mkdir(mode=0o700)
    (entry / "manifest.json").write_text(deep)
    assert cache.info()["kinds"]["broken"][0] == 1
    assert cache.valid(key) is None and not entry.exists()


def test_a_dangling_link_in_place_of_an_entry_is_rebuilt_once(fresh_cache: Path) -> None:
    _build_tiny(fresh_cache)
    (built,) = _entries(fresh_cache, "module")
    shutil.rmtree(built)
    built.symlink_to(fresh_cache / "nowhere")
    _build_tiny(fresh_cache)  # rebuilt: no NotADirectoryError
    assert built.is_dir() and not built.is_symlink()
    inode = (built / "module.so").stat().st_ino
    _build_tiny(fresh_cache)  # and then found, not rebuilt on every run
    assert (built / "module.so").stat().st_ino == inode


def _own_copy(path: Path) -> None:
    """Replace a hard link into the session cache by a copy, so changing it leaves the session's alone."""
    shutil.copyfile(path, path.with_name(path.name + ".copy"))
    os.replace(path.with_name(path.name + ".copy"), path)
    os.chmod(path, 0o644)


def _corrupt_in_place(path: Path) -> None:
    """Same size, different bytes, as a bad disk or a faulty copy leaves it."""
    _own_copy(path)
    size = path.stat().st_size
    with open(path, "r+b") as out:
        for offset in (size // 3, size // 2, 2 * size // 3):
            out.seek(offset)
            out.write(bytes(4096))


def _pch(cache: Path) -> Path:
    (entry,) = _entries(cache, "pch")
    return entry


@pytest.fixture
def with_pch() -> None:
    from ppy_compile.build_env import use_pch

    if not use_pch():
        pytest.skip("PPY_PCH=0: no precompiled header in this run")


def test_a_precompiled_header_corrupted_in_place_fails_its_digest(fresh_cache: Path, with_pch: None) -> None:
    entry = _pch(fresh_cache)
    _corrupt_in_place(entry / "ppy_pch.h.gch")
    assert Cache(fresh_cache).valid(entry.name) is None
    assert not entry.exists()  # removed: the next module build makes it again


def test_a_large_artifact_is_hashed_once_per_process(fresh_cache: Path, with_pch: None,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    cache, entry = Cache(fresh_cache), _pch(fresh_cache)
    # A copy of its own: a hard link shares its times with the session's file, whose ctime another worker's
    # new link changes, which would (rightly) make the cache hash it again.
    _own_copy(entry / "ppy_pch.h.gch")
    assert cache.valid(entry.name) is not None

    def hashed(fd: int) -> str:
        raise AssertionError("hashed again")

    monkeypatch.setattr(ppy_compile.cache, "sha256_fd", hashed)
    assert cache.valid(entry.name) is not None  # its digest is remembered with its inode, size, mtime and ctime
    os.utime(entry / "ppy_pch.h.gch")  # as any write would, it changes the times
    with pytest.raises(AssertionError, match="hashed again"):
        cache.valid(entry.name)


def test_a_compiler_crash_on_a_bad_precompiled_header_rebuilds_it(fresh_cache: Path, with_pch: None) -> None:
    entry = _pch(fresh_cache)
    header = entry / "ppy_pch.h.gch"
    _corrupt_in_place(header)
    # A header whose digest vouches for it (a faulty machine wrote it so): only the compiler can tell.
    manifest = json.loads((entry / "manifest.json").read_text())
    bad_digest = hashlib.sha256(header.read_bytes()).hexdigest()
    _own_copy(entry / "manifest.json")  # a hard link into the session cache: writing it in place would corrupt that
    (entry / "manifest.json").write_text(json.dumps({**manifest, "sha256": bad_digest}))
    _build_tiny(fresh_cache)
    assert json.loads((_pch(fresh_cache) / "manifest.json").read_text())["sha256"] != bad_digest
    assert len(_entries(fresh_cache, "module")) == 1


def _precompiled_modules(cache: Path) -> list[bool]:
    return [(entry / "module.cpp").read_text().startswith('#include "ppy_pch.h"') for entry in _entries(cache, "module")]


def test_a_missing_precompiled_header_is_not_waited_for_and_is_made_after(fresh_cache: Path, with_pch: None,
                                                                          tmp_path: Path) -> None:
    """On a new machine the first compiled result waits for the bridge alone: the module compiles without the
    precompiled header, which is made after it (finished at exit, said in one line), and the next build uses it."""
    shutil.rmtree(_pch(fresh_cache))
    builder = _start(BUILD_TINY, fresh_cache, PPY_QUIET="")
    out, err = builder.communicate(timeout=300)
    assert builder.returncode == 0 and out.strip() == "[4.0, 4.0]", err
    assert "ppy: finishing torch's precompiled header, so that later builds are faster (Ctrl-C skips)" in err
    assert len(_entries(fresh_cache, "pch")) == 1 and _precompiled_modules(fresh_cache) == [False]
    edited = tmp_path / "edited"
    edited.mkdir()
    (edited / "tiny.py").write_text(TINY.read_text().replace("x * scale + shift", "x * scale + shift * 1"))
    builder = _start(BUILD_TINY, fresh_cache, PYTHONPATH=f"{ROOT}:{edited}")
    out, err = builder.communicate(timeout=300)
    assert builder.returncode == 0 and out.strip() == "[4.0, 4.0]", err
    assert sorted(_precompiled_modules(fresh_cache)) == [False, True]
    assert "precompiled header" not in err  # made once


# --- killed builds and private fallbacks -------------------------------------------

KILLED = """
    import ppy, torch

    @ppy.opt(2)
    def killed_mid_build(x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x) * 3 - x
"""


def _running(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


def _wait_until_gone(pids: list[int], seconds: float) -> list[int]:
    deadline = time.monotonic() + seconds
    while any(_running(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return [pid for pid in pids if _running(pid)]


def test_kill_9_mid_build_leaves_no_compiler_running_and_prune_removes_its_staging(
        fresh_cache: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    source = tmp_path / "killed_regions.py"
    source.write_text(textwrap.dedent(KILLED))
    builder = _start(f"from ppy_compile.pipeline import build_module\nbuild_module({str(source)!r}, open({str(source)!r}).read())",
                     fresh_cache)
    deadline = time.monotonic() + 240
    processes: dict[int, str] = {}
    while not any(name.startswith("cc1") for name in processes.values()):
        assert builder.poll() is None, builder.communicate()[1]
        assert time.monotonic() < deadline, "no compiler started"
        time.sleep(0.02)
        processes = descendants(builder.pid)
    # The compiler is stopped, so it cannot finish on its own: whatever ends it
    # and ninja (which waits for it) is the build dying with its parent.
    compilers = [pid for pid, name in processes.items() if name.startswith("cc1")]
    try:
        for pid in compilers:
            os.kill(pid, signal.SIGSTOP)  # a compile takes seconds: it is still running here
        os.kill(builder.pid, signal.SIGKILL)
        builder.communicate()
        ninja = [pid for pid, name in processes.items() if name == "ninja"]
        assert ninja and _wait_until_gone(ninja, 30) == []
    finally:
        for pid in compilers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)  # a signal sent meanwhile takes effect now
    left = _wait_until_gone(list(processes), 30)
    for pid in left:  # the failure's cleanup: nothing keeps running after the test
        os.kill(pid, signal.SIGKILL)
    assert [processes[pid] for pid in left] == []
    (staging,) = _staging(fresh_cache)
    assert list(staging.glob("*.so")) == []  # stopped, not finished
    assert Cache(fresh_cache).info()["staging"]["stale"][0] == 1
    assert ppy_main(["cache", "prune"]) == 0
    assert "removed 1 leftover of a killed build (" in capsys.readouterr().out
    assert not staging.exists()


FALLBACK = """
    import sys
    from ppy_compile.cache import Cache
    print(Cache.open(sys.argv[1]).root, flush=True)
    if sys.argv[2] == "wait":
        sys.stdin.read()
"""


def test_private_fallback_caches_go_at_exit_or_by_prune(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    temporary = tmp_path / "tmp"  # where the fallbacks go: other runs' are not this test's to prune
    temporary.mkdir()
    unsafe = tmp_path / "unsafe"
    unsafe.mkdir()
    os.chmod(unsafe, 0o777)

    def start(how: str) -> tuple[subprocess.Popen[str], Path]:
        process = subprocess.Popen([sys.executable, "-c", textwrap.dedent(FALLBACK), str(unsafe), how], text=True,
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   env={**os.environ, "PYTHONPATH": str(ROOT), "TMPDIR": str(temporary)})
        assert process.stdout is not None
        return process, Path(process.stdout.readline().strip())

    ended, ended_cache = start("exit")
    assert ended.wait(timeout=60) == 0 and "not using the cache folder" in ended.communicate()[1]
    assert ended_cache.parent == temporary and not ended_cache.exists()  # removed at exit
    live, live_cache = start("wait")
    killed, killed_cache = start("wait")
    killed.kill()
    killed.communicate()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    monkeypatch.setenv("PPY_CACHE_DIR", str(tmp_path / "cache"))
    assert {f.path: f.alive for f in fallback_caches()} == {live_cache: True, killed_cache: False}
    assert ppy_main(["cache", "info"]) == 0
    assert "fallback caches of ended processes: 1" in capsys.readouterr().out
    assert ppy_main(["cache", "prune"]) == 0
    assert "removed 1 fallback cache" in capsys.readouterr().out
    assert live_cache.exists() and not killed_cache.exists()
    live.communicate(input="")
    assert not live_cache.exists()


# --- folders that cannot be used ---------------------------------------------------


def test_folder_other_users_can_write_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    with pytest.warns(CacheWarning, match="other users can write to it"):
        cache = Cache.open(shared)
    assert cache.root != shared


def test_folder_that_cannot_be_created_falls_back(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.warns(CacheWarning, match=f"{blocker} is not a folder"):
        cache = Cache.open(blocker / "cache")
    assert cache.root.is_dir() and os.access(cache.root, os.W_OK)


def _open_and_report(root: Path) -> tuple[list[str], bool]:
    """Cache.open's warnings and whether it fell back; run as an unprivileged user."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        cache = Cache.open(root)
    assert cache.root == root or cache.base is None or cache.base.root == root
    if cache.root != root:
        shutil.rmtree(cache.root)  # a forked child ends by os._exit, past the atexit that would
    return [str(w.message) for w in seen], cache.root != root


def _owned_by_the_unprivileged(path: Path) -> None:
    if is_root():
        for folder, _, files in os.walk(path):
            for name in [folder, *(os.path.join(folder, f) for f in files)]:
                os.chown(name, NOBODY.pw_uid, NOBODY.pw_gid)


@pytest.mark.parametrize("read_only", ["", "builds", "index", "locks"])
def test_a_read_only_folder_is_read_with_new_builds_in_front_of_it(read_only: str) -> None:
    """A cache the user cannot write but may trust (an image's, baked by root) is read, not refused: it becomes the
    base of a private cache, which new builds go to. Opening it says nothing; a build it lacks says so."""
    # Root writes anywhere, so under root the cache is nobody's and nobody opens it.
    with shared_folder() as base:
        root = base / "cache"
        Cache.open(root)
        _owned_by_the_unprivileged(root)
        os.chmod(root / read_only, 0o500)
        messages, fell_back = as_unprivileged(_open_and_report, root)
    assert fell_back
    assert messages == []


# --- maintenance -------------------------------------------------------------------


def test_cache_info_clear_and_clear_all(fresh_cache: Path, toolchain_entries: list[str],
                                        capsys: pytest.CaptureFixture[str]) -> None:
    assert ppy_main(["build", str(TINY)]) == 0
    capsys.readouterr()
    shared = len(toolchain_entries)
    assert ppy_main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert str(fresh_cache) in out and f"builds: {shared + 1}" in out
    assert "bridges: 1" in out and "modules: 1" in out and "indexed source files: 1" in out
    assert f"precompiled headers: {shared - 1}" in out
    assert ppy_main(["cache", "clear"]) == 0
    out = capsys.readouterr().out
    assert "removed 1 build from" in out and "kept the bridge and the precompiled header" in out
    assert sorted(p.name for p in (fresh_cache / "builds").iterdir()) == sorted(toolchain_entries)
    assert list((fresh_cache / "index").iterdir()) == []
    assert ppy_main(["cache", "clear", "--all"]) == 0
    assert f"removed {shared} builds from" in capsys.readouterr().out
    assert list((fresh_cache / "builds").iterdir()) == []


def test_ppy_build_ahead_of_time(fresh_cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = ppy_main(["build", str(TINY), str(HERE / "fixtures" / "runtime")])
    err = capsys.readouterr().err
    assert code == 1  # the fixture folder holds a region that breaks the rules
    assert "ppy-loop" in err and "2 of 3 regions compiled, in 2 files" in err
    assert len(_entries(fresh_cache, "module")) == 2


TWO_REGIONS = (
    "import ppy\nimport torch\n\n\n@ppy.opt(1)\ndef jobs_a(x: torch.Tensor) -> torch.Tensor:\n    return x * 3 - 1\n\n\n"
    "@ppy.opt(1)\ndef jobs_b(x: torch.Tensor) -> torch.Tensor:\n    return x / 3 + 1\n"
)


def test_ppy_build_jobs_is_how_many_compilers_run_at_once(fresh_cache: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """With one compiler the two regions are one unit (units are as many as compilers, one per core by
    default); --quiet leaves only findings, and there are none."""
    monkeypatch.setenv("PPY_JOBS", "")  # what ppy build -j sets is undone after the test
    source = tmp_path / "two.py"
    source.write_text(TWO_REGIONS)
    assert ppy_main(["build", "-j", "1", "--quiet", str(source)]) == 0
    assert capsys.readouterr().err == ""
    (module,) = _entries(fresh_cache, "module")
    assert sorted(json.loads((module / "manifest.json").read_text())["regions"]) == ["jobs_a", "jobs_b"]


def test_ppy_jobs_must_be_a_number(monkeypatch: pytest.MonkeyPatch) -> None:
    from ppy_compile.build_env import compile_jobs

    monkeypatch.setenv("PPY_JOBS", "3")
    assert compile_jobs() == 3
    monkeypatch.setenv("PPY_JOBS", "many")
    with pytest.raises(BuildError, match="PPY_JOBS='many' is not a number of compilers"):
        compile_jobs()


# --- the toolchain -----------------------------------------------------------------


@pytest.fixture
def fresh_toolchain() -> Iterator[None]:
    """toolchain() is computed once per process: recompute it for this test's CXX, and after it for the rest."""
    from ppy_compile.toolchain import toolchain

    toolchain.cache_clear()
    yield
    toolchain.cache_clear()


def test_cxx_may_start_with_a_launcher(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_toolchain: None) -> None:
    from ppy_compile.toolchain import compiler_identity, run_ninja, toolchain, write_ninja

    programs = tmp_path / "bin"
    programs.mkdir()
    log = tmp_path / "launched.log"
    launcher = programs / "ccache"  # a stand-in: it logs, then runs the compiler it was given
    launcher.write_text(f'#!/bin/sh\necho "$@" >> {log}\nexec "$@"\n')
    compiler = programs / "site-g++"
    compiler.write_text('#!/bin/sh\nexec g++ "$@"\n')
    for script in (launcher, compiler):
        script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{programs}:{os.environ['PATH']}")
    monkeypatch.setenv("CXX", "ccache site-g++")
    identity = compiler_identity()
    assert str(launcher) in identity and str(compiler) in identity
    compiler.write_text('#!/bin/sh\n# another version\nexec g++ "$@"\n')
    assert compiler_identity() != identity  # the compiler behind the launcher is part of the key

    tool = toolchain()
    folder = tmp_path / "unit"
    folder.mkdir()
    (folder / "unit.cpp").write_text('extern "C" int answer() { return 42; }\n')
    write_ninja(folder, tool, "unit.cpp", "unit.so", 1, [])
    run_ninja(folder, tool)
    assert ctypes.CDLL(str(folder / "unit.so")).answer() == 42
    assert "site-g++" in log.read_text()

    masquerade = tmp_path / "masquerade"  # as /usr/lib/ccache: the launcher under the compiler's name
    masquerade.mkdir()
    (masquerade / "site-g++").symlink_to(launcher)
    monkeypatch.setenv("PATH", f"{masquerade}:{programs}:{os.environ['PATH']}")
    monkeypatch.setenv("CXX", "site-g++")
    assert str(compiler) in compiler_identity()  # the compiler found behind the launcher

    monkeypatch.setenv("CXX", "ccache no-such-compiler")
    toolchain.cache_clear()
    with pytest.raises(BuildError, match="`no-such-compiler`, which ccache is to run"):
        toolchain()


CUDA_BUILD_WITHOUT_GPU = """
    import torch
    torch.cuda._is_compiled = lambda: True  # as a CUDA build of torch sees itself, on a machine without a GPU
    torch.version.cuda = "12.4"
    torch.cuda.is_available = lambda: False
    from ppy_compile.toolchain import toolchain
    toolchain()
"""


def test_a_quiet_build_says_nothing_of_cuda_home(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PPY_QUIET"}
    env.update(PYTHONPATH=str(ROOT), CUDA_HOME=str(tmp_path))
    run = [sys.executable, "-c", textwrap.dedent(CUDA_BUILD_WITHOUT_GPU)]
    loud = subprocess.run(run, capture_output=True, text=True, env=env)
    assert loud.returncode == 0, loud.stderr
    assert "No CUDA runtime is found" in loud.stderr  # torch's own words, which a quiet build must not repeat
    quiet = subprocess.run(run, capture_output=True, text=True, env={**env, "PPY_QUIET": "1"})
    assert quiet.returncode == 0, quiet.stderr
    assert quiet.stderr == ""


def _baked_call(cache: Path, source: Path) -> tuple[bool, list[str]]:
    """As the image's user: the region of ``source`` built (from the baked cache alone) and called; whether the
    call ran compiled, and the warnings said."""
    import importlib.util

    os.environ["PPY_CACHE_DIR"] = str(cache)
    spec = importlib.util.spec_from_file_location(source.stem, source)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        compiled = module.baked.build()
        with ppy.profile(print_on_exit=False) as profile:
            module.baked(torch.ones(3))
    calls = [(row.calls, row.compiled) for row in profile.rows()]
    return compiled and calls == [(1, 1)], [str(w.message) for w in seen]


def _tree(root: Path) -> list[tuple[str, int, float]]:
    return sorted((str(p.relative_to(root)), p.stat().st_mode, p.stat().st_mtime) for p in root.rglob("*"))


def test_a_cache_baked_into_an_image_serves_another_user_read_only(toolchain_entries: list[str]) -> None:
    """README's image recipe: `ppy build` into PPY_CACHE_DIR as root, `chmod -R a+rX` it, and the image's user
    runs the compiled regions from it: nothing built, nothing said, nothing in it changed."""
    with shared_folder() as base:
        source = base / "baked_region.py"
        source.write_text("import ppy\nimport torch\n\n\n@ppy.opt(3)\ndef baked(x: torch.Tensor) -> torch.Tensor:\n"
                          "    return torch.tanh(x) * 2\n")
        source.chmod(0o644)
        cache = seeded_cache(base / "cache", toolchain_entries)
        built = subprocess.run([sys.executable, "-m", "ppy.cli", "build", str(source)], capture_output=True,
                               text=True, env={**os.environ, "PPY_CACHE_DIR": str(cache)}, timeout=600)
        assert built.returncode == 0, built.stderr
        subprocess.run(["chmod", "-R", "a+rX,go-w" if is_root() else "a+rX,a-w", str(cache)], check=True)
        before = _tree(cache)
        compiled, said = as_unprivileged(_baked_call, cache, source)
        assert compiled and said == [], said
        assert _tree(cache) == before
        subprocess.run(["chmod", "-R", "u+w", str(cache)], check=True)  # for the folder's removal


def test_a_build_a_read_only_cache_lacks_says_so_once(tmp_path: Path) -> None:
    def publish_twice(root: Path) -> tuple[list[str], bool]:
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            cache = Cache.open(root)
            for key in ("a" * 64, "b" * 64):
                with cache.staging(key) as folder:
                    (folder / "artifact.so").write_bytes(b"built")
                    cache.publish(key, folder, "artifact.so", {})
        found = cache.base is not None and cache.valid("a" * 64) is not None
        shutil.rmtree(cache.root)
        return [str(w.message) for w in seen], found

    with shared_folder() as base:
        root = base / "cache"
        Cache.open(root)
        _owned_by_the_unprivileged(root)
        subprocess.run(["chmod", "-R", "a-w", str(root)], check=True)
        messages, found = as_unprivileged(publish_twice, root)
        subprocess.run(["chmod", "-R", "u+w", str(root)], check=True)
    assert found
    (message,) = messages
    assert f"the cache folder {root} is read-only and lacks a build this process needs" in message
