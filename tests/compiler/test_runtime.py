"""Regions at run time: compiled calls, argument binding, errors, fallbacks, the warm start."""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
import torch

import ppy
from ppy.cli import main as ppy_main

HERE = Path(__file__).resolve().parents[1]
ROOT = HERE.parent
MIXED = HERE / "fixtures" / "runtime" / "mixed.py"


@pytest.fixture(scope="module")
def mixed():
    spec = importlib.util.spec_from_file_location("ppy_mixed_fixture", MIXED)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_valid_region_compiles_beside_an_invalid_one(mixed) -> None:
    x = torch.randn(3)
    assert torch.equal(mixed.double(x), x * 2.0)
    assert mixed.double.__ppy_region__
    assert mixed.double.python(x, 3.0).equal(x * 3.0)


def test_invalid_region_raises_region_error_naming_the_problem(mixed) -> None:
    with pytest.raises(ppy.RegionError) as caught:
        mixed.looping(torch.randn(2), 2)
    assert caught.value.region == "looping"
    assert [d.code for d in caught.value.diagnostics] == ["ppy-loop", "ppy-unsupported"]
    assert "ppy-loop" in str(caught.value) and "`_`" in str(caught.value)
    with pytest.raises(ppy.RegionError):  # every call, not just the first
        mixed.looping(torch.randn(2), 2)


def test_keywords_and_defaults_bind_as_python_would(mixed) -> None:
    x = torch.randn(4)
    assert torch.equal(mixed.double(x, shift=1), x * 2.0 + 1)
    assert torch.equal(mixed.double(x, factor=0.5), x * 0.5)
    with pytest.raises(TypeError):
        mixed.double(x, nope=1)


def test_arguments_not_of_their_annotated_type_get_pythons_answer(mixed) -> None:
    mixed.double(torch.randn(1))
    assert mixed.double.__ppy_region__
    # Not a tensor: the compiled code steps aside and the Python body answers, as it would have.
    with pytest.raises(TypeError, match="can't multiply sequence by non-int of type 'float'"):
        mixed.double("text", 1.0)
    # A bool where an int is declared: Python's own arithmetic (True + 1 is 2), not the compiled int.
    x = torch.arange(3)
    assert torch.equal(mixed.double(x, 2, shift=True), mixed.double.python(x, 2, shift=True))
    with pytest.raises(TypeError):
        mixed.double(torch.randn(1), 1.0, 0)  # `shift` is keyword-only, as in Python


def test_an_int_for_a_float_parameter_stays_an_int(mixed) -> None:
    """PEP 484 lets an int stand for a float, and Python keeps it an int: so does the compiled region."""
    x = torch.arange(3)
    compiled, python = mixed.double(x, 2), mixed.double.python(x, 2)
    assert compiled.dtype == python.dtype == torch.int64 and torch.equal(compiled, python)
    assert mixed.double(x, 2.0).dtype == torch.float32


def test_aten_errors_surface_as_python_errors() -> None:
    import ops_regions

    with pytest.raises(RuntimeError, match="shape"):
        ops_regions.operators(torch.randn(3, 4), torch.randn(3, 4), torch.randn(7, 5))


def test_autograd_flows_through(mixed) -> None:
    x = torch.randn(5, requires_grad=True)
    mixed.double(x, 3.0).sum().backward()
    assert torch.equal(x.grad, torch.full((5,), 3.0))


def test_cpp_source_and_ppy_show(mixed, capsys: pytest.CaptureFixture[str]) -> None:
    symbol = mixed.double.site.cpp_symbol
    assert f"{symbol}(const at::Tensor& x, const at::Scalar& factor, int64_t shift)" in mixed.double.cpp_source
    assert ppy_main(["show", str(MIXED), "double"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"at::Tensor {symbol}(") and out.rstrip().endswith("}")
    assert ppy_main(["show", str(MIXED), "missing"]) == 1


def _run(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          cwd=ROOT, env={**os.environ, "PYTHONPATH": f"{ROOT}:{HERE / 'regions'}", **env})


WARM = """
    import sys, json, time, torch
    start = time.perf_counter()
    import tiny
    y = tiny.scale_shift(torch.ones(2), 2.0, 1)
    print(json.dumps({"active": tiny.scale_shift.__ppy_region__, "value": y.tolist(),
                      "lowering": "ppy_check.model.builder" in sys.modules or "ppy_check.schema" in sys.modules,
                      "cpp_extension": "torch.utils.cpp_extension" in sys.modules}))
"""


def test_warm_start_needs_no_lowering() -> None:
    first = _run(WARM)
    assert first.returncode == 0, first.stderr
    second = _run(WARM)
    result = json.loads(second.stdout)
    assert result == {"active": True, "value": [3.0, 3.0], "lowering": False, "cpp_extension": False}


def test_disable_runs_python() -> None:
    result = _run(WARM, PPY_DISABLE="1")
    assert json.loads(result.stdout)["active"] is False
    assert json.loads(result.stdout)["value"] == [3.0, 3.0]


def test_no_compiler_warns_once_and_runs_python(fresh_cache: Path) -> None:
    code = """
        import warnings, torch, tiny
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            a = tiny.scale_shift(torch.ones(1), 2.0, 0)
            b = tiny.scale_shift(torch.ones(1), 2.0, 0)
        print(len(seen), a.item(), tiny.scale_shift.__ppy_region__)
        print(seen[0].message)
    """
    result = _run(code, CXX="/nonexistent/c++")
    lines = result.stdout.splitlines()
    assert lines[0] == "1 2.0 False", result.stderr
    assert "region `scale_shift` runs as Python" in lines[1] and "no C++ compiler" in lines[1]
    strict = _run(code, CXX="/nonexistent/c++", PPY_STRICT="1")
    assert strict.returncode != 0 and "BuildError" in strict.stderr and "no C++ compiler" in strict.stderr


def test_a_ppy_bug_falls_back_with_a_warning(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import ppy_compile.build

    source = tmp_path / "buggy_regions.py"
    source.write_text("import ppy, torch\n\n@ppy.opt(2)\ndef twice(x: torch.Tensor) -> torch.Tensor:\n    return x * 2\n")
    spec = importlib.util.spec_from_file_location("buggy_regions", source)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)

    def broken(*args: object, **kwargs: object) -> None:
        raise ValueError("boom")

    monkeypatch.setattr(ppy_compile.build, "plan_module", broken)
    with pytest.warns(RuntimeWarning, match=r"region `twice` runs as Python: ppy failed while compiling buggy_regions.py \(ValueError: boom\).*a ppy bug"):
        result = module.twice(torch.ones(2))
    assert result.tolist() == [2.0, 2.0] and not module.twice.__ppy_region__


HELPER_PACKAGE = {
    "__init__.py": "",
    "layers.py": "import torch\n\n\ndef scale(x, by):\n    return x * by\n",
    "model.py": textwrap.dedent(
        """\
        import ppy
        import torch
        from .layers import scale


        @ppy.opt(1)
        def block(x: torch.Tensor) -> torch.Tensor:
            return scale(x, 2.0) + 1
        """
    ),
}

CALL_BLOCK = """
    import json, torch
    from helperpkg.model import block
    print(json.dumps({"value": block(torch.ones(2)).tolist(), "active": block.__ppy_region__}))
"""


def test_a_helper_in_another_file_is_compiled_and_its_edits_rebuild_the_caller(tmp_path: Path) -> None:
    package = tmp_path / "helperpkg"
    package.mkdir()
    for name, text in HELPER_PACKAGE.items():
        (package / name).write_text(text)
    env = {"PYTHONPATH": f"{ROOT}:{tmp_path}"}
    first = _run(CALL_BLOCK, **env)
    assert json.loads(first.stdout) == {"value": [3.0, 3.0], "active": True}, first.stderr
    (package / "layers.py").write_text(HELPER_PACKAGE["layers.py"].replace("x * by", "x * by * 2"))
    second = _run(CALL_BLOCK, **env)
    assert json.loads(second.stdout) == {"value": [5.0, 5.0], "active": True}, second.stderr


def test_a_helper_edited_after_import_is_not_compiled_under_the_old_python(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The build inlines a helper's text as its file reads now; Python runs the helper its module imported.
    Where they differ (the helper's file edited, only the region's module imported again), the region runs
    as Python, saying which file to import again; once both are, it runs compiled on the new text."""
    from ppy import runtime
    from ppy.runtime import RegionFallbackWarning

    package = tmp_path / "stalepkg"
    package.mkdir()
    for name, text in HELPER_PACKAGE.items():
        (package / name).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    observer = runtime._observer
    runtime.set_observer(None)  # the compiled entry itself, not the verifier's comparison
    try:
        model = importlib.import_module("stalepkg.model")
        assert model.block(torch.ones(2)).tolist() == [3.0, 3.0] and model.block.__ppy_region__
        (package / "layers.py").write_text(HELPER_PACKAGE["layers.py"].replace("x * by", "x * by * 2"))
        model = importlib.reload(model)  # its `from .layers import scale` is the old scale still
        with pytest.warns(RegionFallbackWarning, match=r"layers.py changed since .* import that file again"):
            assert model.block(torch.ones(2)).tolist() == [3.0, 3.0]
        assert not model.block.__ppy_region__
        importlib.reload(importlib.import_module("stalepkg.layers"))
        model = importlib.reload(model)
        assert model.block(torch.ones(2)).tolist() == [5.0, 5.0] and model.block.__ppy_region__
    finally:
        runtime.set_observer(observer)
        for name in [name for name in sys.modules if name.startswith("stalepkg")]:
            del sys.modules[name]


def _rewrite_keeping_stat(path: Path, text: str) -> None:
    """Rewrite to the same size with the modification time put back: an editor's "keep timestamps", `touch -d`,
    a checkout or a restore."""
    before = path.stat()
    assert len(text.encode()) == before.st_size
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


@pytest.mark.parametrize("bytecode", [False, True], ids=["source", "stale-bytecode"])
def test_a_helper_edited_to_the_same_size_and_mtime_is_never_compiled_as_its_old_text(
        monkeypatch: pytest.MonkeyPatch, bytecode: bool) -> None:
    """A long-lived process reloads both modules after the helper's file was rewritten to the same size with its
    mtime put back. The build must inline the helper's new text (its parse was kept by the file's stat, so the old
    text was compiled while the new file's digest was recorded). Where Python itself loads the old helper from a
    bytecode cache that the same stat vouches for, the region runs as Python, naming the file; compiled or not,
    the answer is Python's."""
    from tests.support.generated import SOURCES
    from ppy import runtime
    from ppy.runtime import RegionFallbackWarning

    name = f"samesize_{'bytecode' if bytecode else 'source'}"
    package = SOURCES / name
    package.mkdir(parents=True, exist_ok=True)
    for file, text in HELPER_PACKAGE.items():
        if not (package / file).exists() or (package / file).read_text(encoding="utf-8") != text:
            (package / file).write_text(text, encoding="utf-8")
    shutil.rmtree(package / "__pycache__", ignore_errors=True)
    monkeypatch.setattr(sys, "dont_write_bytecode", not bytecode)
    monkeypatch.syspath_prepend(str(SOURCES))
    observer = runtime._observer
    runtime.set_observer(None)  # the compiled entry itself, not the verifier's comparison
    try:
        model = importlib.import_module(f"{name}.model")
        assert model.block(torch.ones(2)).tolist() == [3.0, 3.0] and model.block.__ppy_region__
        _rewrite_keeping_stat(package / "layers.py", HELPER_PACKAGE["layers.py"].replace("x * by", "x - by"))
        importlib.reload(importlib.import_module(f"{name}.layers"))
        model = importlib.reload(model)
        python = model.block.python(torch.ones(2)).tolist()
        assert python == ([3.0, 3.0] if bytecode else [0.0, 0.0])  # what Python itself loaded
        if bytecode:
            with pytest.warns(RegionFallbackWarning, match=r"layers.py changed since .* import that file again"):
                assert model.block(torch.ones(2)).tolist() == python
            assert not model.block.__ppy_region__
        else:
            assert model.block(torch.ones(2)).tolist() == python and model.block.__ppy_region__
    finally:
        runtime.set_observer(observer)
        for module in [module for module in sys.modules if module.startswith(name)]:
            del sys.modules[module]


def test_a_region_python_runs_from_a_stale_bytecode_cache_runs_as_python(monkeypatch: pytest.MonkeyPatch) -> None:
    """The region's own file rewritten to the same size with its mtime put back: Python's bytecode cache still
    vouches for it and Python runs the old code, so compiling the file's new text would answer otherwise. The
    region runs as Python, saying why; a file changed the ordinary way still compiles."""
    from tests.support.generated import SOURCES
    from ppy import runtime
    from ppy.runtime import RegionFallbackWarning

    name = "samesize_own_bytecode"
    package = SOURCES / name
    shutil.rmtree(package, ignore_errors=True)
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    text = "import ppy\nimport torch\n\n\n@ppy.opt(1)\ndef block(x: torch.Tensor) -> torch.Tensor:\n    return x * 2.0\n"
    (package / "model.py").write_text(text, encoding="utf-8")
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.syspath_prepend(str(SOURCES))
    observer = runtime._observer
    runtime.set_observer(None)
    try:
        model = importlib.import_module(f"{name}.model")
        assert model.block(torch.ones(2)).tolist() == [2.0, 2.0] and model.block.__ppy_region__
        _rewrite_keeping_stat(package / "model.py", text.replace("x * 2.0", "x * 3.0"))
        model = importlib.reload(model)
        assert model.block.python(torch.ones(2)).tolist() == [2.0, 2.0]  # Python loaded the cached code
        with pytest.warns(RegionFallbackWarning, match=r"bytecode cache of other text than model.py holds"):
            assert model.block(torch.ones(2)).tolist() == [2.0, 2.0]
        assert not model.block.__ppy_region__
        (package / "model.py").write_text(text.replace("x * 2.0", "x * 4.0"), encoding="utf-8")
        os.utime(package / "model.py", ns=(time.time_ns(), time.time_ns() + 2_000_000_000))
        model = importlib.reload(model)
        assert model.block(torch.ones(2)).tolist() == [4.0, 4.0] and model.block.__ppy_region__
    finally:
        runtime.set_observer(observer)
        for module in [module for module in sys.modules if module.startswith(name)]:
            del sys.modules[module]


def test_a_helper_is_current_only_against_the_bytes_the_build_modelled(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Python loaded the helper's first text; a build modelled a second (the file was edited meanwhile), and then
    the file went back to the first. The loaded helper is the file's text again, but not the compiled one."""
    import hashlib

    from ppy.loaded import stale_helper

    def file_digest(path: Path) -> str:
        return hashlib.sha256(path.read_bytes()).hexdigest()

    package = tmp_path / "revertpkg"
    package.mkdir()
    for name, text in HELPER_PACKAGE.items():
        (package / name).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        model = importlib.import_module("revertpkg.model")
        layers = package / "layers.py"
        loaded = file_digest(layers)
        layers.write_text(HELPER_PACKAGE["layers.py"].replace("x * by", "x * by * 2"))
        modelled = file_digest(layers)
        layers.write_text(HELPER_PACKAGE["layers.py"])
        assert stale_helper(model.block, {str(layers): loaded}) is None
        assert stale_helper(model.block, {str(layers): modelled}) == str(layers)
    finally:
        for name in [name for name in sys.modules if name.startswith("revertpkg")]:
            del sys.modules[name]


# Python reads these files as latin-1: "\u00c3\u00aa" is the bytes c3 aa, which read as UTF-8 are one other
# character ("\u00ea"), and each file is valid UTF-8 too: read as UTF-8, the compiled region would silently
# return another string. Python's string constant and loop variable are made of the two latin-1 characters.
LATIN1_HEADER = "# -*- coding: latin-1 -*-\nimport ppy\nimport torch\n\n\n"
LATIN1_TAGGED = LATIN1_HEADER + """\
@ppy.opt(0)
def tagged(x: torch.Tensor) -> tuple[torch.Tensor, str]:
    return x * 2, "\u00c3\u00aa"
"""
LATIN1_LOOPING = LATIN1_HEADER + """\
@ppy.opt(0)
def looping(x: torch.Tensor, n: int) -> torch.Tensor:
    for \u00c3\u00aa in range(n):
        x = x * 2
    return x
"""
# A UTF-8 file that starts with a byte-order mark, which Python drops.
BOM_REGIONS = "import ppy\nimport torch\n\n\n@ppy.opt(0)\ndef tagged(x: torch.Tensor) -> tuple[torch.Tensor, str]:\n" \
              "    return x + 1, \"caf\u00e9\"\n"


def _source_file(name: str, data: bytes) -> Path:
    """``data`` at a stable path (a cache hit on the next run), rewritten only when it differs."""
    from tests.support.generated import SOURCES

    path = SOURCES / f"{name}.py"
    if not path.exists() or path.read_bytes() != data:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return path


def _import_file(path: Path) -> object:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_latin1_file_compiles_the_text_python_reads(tmp_path: Path) -> None:
    """ppy-check, the compiled region and the Python body read one text: the string constant is Python's, and the
    finding the runtime raises names the loop variable as ppy-check does."""
    from ppy_check.messages import ALL_CODES
    from ppy_check.runner import Target, run

    module = _import_file(_source_file("latin1_regions", LATIN1_TAGGED.encode("latin-1")))
    x = torch.arange(3.0)
    compiled, python = module.tagged(x), module.tagged.python(x)
    assert module.tagged.__ppy_region__, module.tagged.fallback_reason
    assert python[1] == "\u00c3\u00aa" and compiled[1] == python[1] and torch.equal(compiled[0], python[0])
    # An invalid region builds nothing, so it can live where the repository's own ppy-check does not look.
    path = tmp_path / "latin1_looping.py"
    path.write_bytes(LATIN1_LOOPING.encode("latin-1"))
    with pytest.raises(ppy.RegionError) as raised:
        _import_file(path).looping(x, 2)
    checked = run([Target(str(path), ALL_CODES, path)]).diagnostics
    assert "`\u00c3a`" in str(raised.value)  # Python's name: NFKC makes the second latin-1 character an "a"
    assert {(d.line, d.column, d.code, d.message) for d in raised.value.diagnostics} == \
        {(d.line, d.column, d.code, d.message) for d in checked}


def test_a_file_with_a_byte_order_mark_compiles(capsys: pytest.CaptureFixture[str]) -> None:
    path = _source_file("bom_regions", b"\xef\xbb\xbf" + BOM_REGIONS.encode("utf-8"))
    module = _import_file(path)
    x = torch.arange(3.0)
    compiled = module.tagged(x)
    assert module.tagged.__ppy_region__, module.tagged.fallback_reason
    assert compiled[1] == "caf\u00e9" and torch.equal(compiled[0], x + 1)
    assert ppy_main(["build", str(path)]) == 0
    assert "1 of 1 region compiled" in capsys.readouterr().err


SUPPRESSED = textwrap.dedent(
    """\
    import ppy
    import torch


    @ppy.opt(1)
    def looping(x: torch.Tensor, n: int) -> torch.Tensor:
        for _ in range(n):  # ppy: ignore[ppy-loop, ppy-unsupported]
            x = x * 2
        return x
    """
)


def test_a_suppressed_finding_runs_the_python_body_with_one_warning(tmp_path: Path) -> None:
    (tmp_path / "suppressed_regions.py").write_text(SUPPRESSED)
    code = """
        import json, warnings, torch
        import suppressed_regions as m
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            values = [m.looping(torch.ones(2), 3).tolist() for _ in range(3)]
        print(json.dumps({"values": values, "warnings": [str(w.message) for w in caught],
                          "where": [w.filename for w in caught], "reason": m.looping.fallback_reason}))
    """
    result = _run(code, PYTHONPATH=f"{ROOT}:{tmp_path}")
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["values"] == [[8.0, 8.0]] * 3
    assert len(out["warnings"]) == 1 and "region `looping` runs as Python" in out["warnings"][0]
    assert "ppy-loop (line 7)" in out["warnings"][0] and out["where"] == ["<string>"]
    assert "suppressed" in out["reason"]


def test_strict_raises_on_every_call() -> None:
    code = """
        import torch, ppy
        import tiny
        failures = 0
        for _ in range(3):
            try:
                tiny.scale_shift(torch.ones(2), 2.0, 1)
            except ppy.BuildError:
                failures += 1
        print(failures)
    """
    result = _run(code, PPY_STRICT="1", CXX="/nonexistent/c++", PPY_CACHE_DIR=str(ROOT / ".ppy-cache" / "strict-test"))
    assert result.stdout.strip() == "3", result.stderr


def test_ppy_explain_says_why_for_each_region(capsys: pytest.CaptureFixture[str]) -> None:
    assert ppy_main(["explain", str(MIXED)]) == 1  # a region in it breaks the rules
    out = capsys.readouterr().out
    assert "double (line 7): compiled at -O1, C++ function ppy_double_" in out and "module.cpp" in out
    assert "looping (line 12): invalid, every call raises ppy.RegionError" in out and "ppy-loop" in out
    assert ppy_main(["explain", f"{MIXED}:double"]) == 0
    assert "looping" not in capsys.readouterr().out
    assert ppy_main(["explain", f"{MIXED}:nothing"]) == 1
    assert "no region named `nothing`" in capsys.readouterr().err
