"""`ppy explain` and `ppy show` answer from the model: on an empty cache, with no compiler, they build nothing.

Building first (the bridge and the precompiled header, minutes on an empty
cache) just to print a verdict or a function is what they used to do; here no
compiler is on PATH, so a build would fail rather than pass unnoticed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ppy.cli import main as ppy_main

HERE = Path(__file__).resolve().parents[1]
MIXED = HERE / "fixtures" / "runtime" / "mixed.py"


def _without_compiler(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``ppy ARGS`` with an empty cache and nothing on PATH (no c++, no ninja): only the model can answer."""
    empty = tmp_path / "bin"
    empty.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if k not in ("CXX", "PPY_CACHE_DIR")}
    env.update(PATH=str(empty), PPY_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(HERE.parent))
    return subprocess.run([sys.executable, "-m", "ppy.cli", *args], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=300)


def _builds(cache: Path) -> list[Path]:
    return list((cache / "builds").iterdir()) if (cache / "builds").exists() else []


def test_explain_without_a_compiler_says_why_and_builds_nothing(tmp_path: Path) -> None:
    result = _without_compiler(tmp_path, "explain", str(MIXED))
    assert result.returncode == 1, result.stderr  # a region in it breaks the rules
    out = result.stdout
    assert "no toolchain: no C++ compiler: `c++` is not on PATH" in out
    assert "double (line 7): not built yet, and it cannot be: no C++ compiler" in out
    assert "it would compile at -O1 to C++ function ppy_double_" in out
    assert "looping (line 12): invalid, every call raises ppy.RegionError" in out and "ppy-loop" in out
    assert _builds(tmp_path / "cache") == []


def test_show_without_a_compiler_prints_the_cpp_from_the_model(tmp_path: Path) -> None:
    one = _without_compiler(tmp_path, "show", str(MIXED), "double")
    assert one.returncode == 0, one.stderr
    assert one.stdout.startswith("at::Tensor ppy_double_") and one.stdout.rstrip().endswith("}")
    assert "at::_ops::mul_Tensor::call(x" in one.stdout
    every = _without_compiler(tmp_path, "show", str(MIXED))
    assert every.returncode == 0, every.stderr
    assert every.stdout.startswith("// ppy: region double (line 7), -O1\n") and one.stdout in every.stdout
    assert "region `looping` has no C++: it breaks the rules" in every.stderr
    assert _without_compiler(tmp_path, "show", str(MIXED), "looping").returncode == 1
    assert _builds(tmp_path / "cache") == []


def test_explain_on_an_empty_cache_with_a_compiler_builds_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PPY_CACHE_DIR", str(tmp_path / "cache"))
    assert ppy_main(["explain", f"{MIXED}:double"]) == 0
    out = capsys.readouterr().out
    assert "double (line 7): not built yet: it compiles at -O1 to C++ function ppy_double_" in out
    assert f"`ppy build {MIXED}` builds it now" in out
    assert _builds(tmp_path / "cache") == []


def test_explain_and_show_name_a_folder_and_the_regions_there_are(capsys: pytest.CaptureFixture[str]) -> None:
    assert ppy_main(["explain", str(MIXED.parent)]) == 2
    assert f"ppy explain: {MIXED.parent}: a folder; ppy explain explains one file's regions" in capsys.readouterr().err
    assert ppy_main(["explain", f"{MIXED}:nope"]) == 1
    assert "no region named `nope` (regions: double, looping)" in capsys.readouterr().err
    assert ppy_main(["show", str(MIXED), "nope"]) == 1
    assert "no region named `nope` (regions: double, looping)" in capsys.readouterr().err
    assert ppy_main(["explain", str(MIXED.parent / "nosuch.py")]) == 2
    assert "nosuch.py: no such file" in capsys.readouterr().err


def test_a_file_that_does_not_parse_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("import ppy\ndef f(:\n")
    for command in ("explain", "show"):
        assert ppy_main([command, str(broken)]) == 1
        assert capsys.readouterr().err == f"ppy {command}: {broken}: cannot parse: invalid syntax\n"


def test_show_annotate_puts_each_python_line_before_the_cpp_it_became(tmp_path: Path) -> None:
    region = tmp_path / "two.py"
    region.write_text("import torch\nimport ppy\n\n\n@ppy.opt(2)\ndef two(x: torch.Tensor) -> torch.Tensor:\n"
                      "    y = torch.relu(x)\n    return torch.sigmoid(y)\n", encoding="utf-8")
    result = _without_compiler(tmp_path, "show", "--annotate", str(region))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    relu = next(i for i, line in enumerate(lines) if line.endswith("y = torch.relu(x)"))
    sigmoid = next(i for i, line in enumerate(lines) if line.endswith("return torch.sigmoid(y)"))
    assert relu < sigmoid
    assert "at::_ops::relu::call(x)" in lines[relu + 1]
    assert all("sigmoid" not in line for line in lines[relu + 1:sigmoid])
    assert "at::_ops::sigmoid::call(y)" in lines[sigmoid + 1]
    # -a prints the same C++ as plain `show`, only beside its lines
    plain = _without_compiler(tmp_path, "show", str(region), "two").stdout
    assert "at::_ops::sigmoid::call(y)" in plain and "ppy_line" in plain
    assert all("ppy_line" not in line for line in lines)
