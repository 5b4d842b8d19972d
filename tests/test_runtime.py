"""Regions at run time: compiled calls, argument binding, errors, fallbacks, the warm start."""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

import ppy
from ppy.cli import main as ppy_main

HERE = Path(__file__).resolve().parent
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
