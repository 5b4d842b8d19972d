"""ppy-check as a user runs it: formats, exit codes, config, suppression, bad input."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ppy_check.cli import main

ROOT = Path(__file__).resolve().parents[1]

THREE_PROBLEMS = textwrap.dedent(
    """\
    import ppy
    import torch

    W = torch.randn(3, 3)


    @ppy.opt(3)
    def region(x: torch.Tensor, n) -> torch.Tensor:
        for i in range(3):
            x = x @ W
        return x
    """
)


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.py").write_text(THREE_PROBLEMS)
    return tmp_path


def test_json_reports_loop_capture_and_untyped(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["--output-format", "json", "bad.py"], capsys)
    assert code == 1
    findings = json.loads(out)
    by_code = {f["code"]: f for f in findings}
    assert set(by_code) >= {"ppy-loop", "ppy-captured", "ppy-untyped"}
    assert "`i`" in by_code["ppy-loop"]["message"]
    assert "`W`" in by_code["ppy-captured"]["message"]
    assert "`n`" in by_code["ppy-untyped"]["message"]
    for finding in findings:
        assert set(finding) >= {"path", "line", "column", "code", "message", "region"}
        assert finding["region"] == "region" and finding["path"] == "bad.py"
    assert by_code["ppy-captured"]["line"] == 10 and by_code["ppy-captured"]["column"] == 17


def test_clean_exit_zero(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "ok.py").write_text("import ppy, torch\n\n@ppy.opt(3)\ndef f(x: torch.Tensor) -> torch.Tensor:\n    return x * 2\n")
    code, out, err = run(["."], capsys)
    assert (code, out) == (0, "")
    assert "All checks passed" in err


def test_concise_and_full(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, err = run(["bad.py"], capsys)
    assert "bad.py:9:5: ppy-loop region `region`: `for` loop over `i`" in out
    assert "Found" in err
    _, out, _ = run(["--output-format", "full", "bad.py"], capsys)
    assert "   10 |         x = x @ W\n" + " " * 24 + "^" in out


def test_github_and_sarif(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(["--output-format", "github", "bad.py"], capsys)
    assert out.startswith("::error file=bad.py,line=")
    assert "title=ppy-" in out
    _, out, _ = run(["--output-format", "sarif", "bad.py"], capsys)
    document = json.loads(out)
    results = document["runs"][0]["results"]
    assert {r["ruleId"] for r in results} >= {"ppy-loop", "ppy-captured", "ppy-untyped"}
    from ppy_check.messages import ALL_CODES

    assert {r["id"] for r in document["runs"][0]["tool"]["driver"]["rules"]} == set(ALL_CODES)


def test_select_ignore_statistics_exit_zero(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = run(["--output-format", "json", "--select", "ppy-loop", "bad.py"], capsys)
    assert {f["code"] for f in json.loads(out)} == {"ppy-loop"}
    _, out, _ = run(["--output-format", "json", "--ignore", "ppy-loop,ppy-unsupported", "bad.py"], capsys)
    assert {f["code"] for f in json.loads(out)} == {"ppy-captured", "ppy-untyped"}
    code, out, _ = run(["--statistics", "bad.py"], capsys)
    assert code == 1
    assert any(line.split()[:2] == ["1", "ppy-loop"] for line in out.splitlines())
    code, _, _ = run(["--exit-zero", "bad.py"], capsys)
    assert code == 0
    code, _, err = run(["--select", "ppy-nothing", "bad.py"], capsys)
    assert code == 2 and "unknown rule code 'ppy-nothing'" in err


def test_pyproject_config(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "pyproject.toml").write_text('[tool.ppy]\nignore = ["ppy-untyped"]\nexclude = ["skipped"]\n')
    (project / "skipped").mkdir()
    (project / "skipped" / "also_bad.py").write_text(THREE_PROBLEMS)
    _, out, _ = run(["--output-format", "json", "."], capsys)
    findings = json.loads(out)
    assert {f["path"] for f in findings} == {"bad.py"}
    assert "ppy-untyped" not in {f["code"] for f in findings}
    (project / "pyproject.toml").write_text("[tool.ppy]\nselekt = []\n")
    code, _, err = run(["."], capsys)
    assert code == 2 and "unknown key" in err and "Traceback" not in err


def test_explain(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["--explain", "ppy-impure"], capsys)
    assert code == 0 and "**Fix.**" in out and "**Example.**" in out and out.startswith("ppy-impure:")
    code, _, err = run(["--explain", "ppy-nope"], capsys)
    assert code == 2 and "unknown rule code" in err


def test_bad_input_is_one_line_each_and_others_still_checked(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "broken.py").write_text("import ppy\n\n@ppy.opt(3)\ndef f(:\n")
    (project / "latin.py").write_bytes(b"import ppy\nx = '\xff\xfe'\n")
    (project / "dangling.py").symlink_to(project / "missing-target.py")
    code, out, err = run(["--output-format", "json", ".", "does-not-exist"], capsys)
    assert code == 2
    findings = json.loads(out)
    assert any(f["path"] == "broken.py" and f["code"] == "ppy-syntax" and f["line"] == 4 for f in findings)
    assert any(f["path"] == "bad.py" for f in findings)
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert any("does-not-exist: no such file or directory" in line for line in lines)
    assert any("latin.py: not valid UTF-8" in line for line in lines)
    assert any("dangling.py: cannot read" in line for line in lines)


def test_parallel_matches_serial(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    for index in range(12):
        (tmp_path / f"m{index}.py").write_text(THREE_PROBLEMS)
    _, serial, _ = run(["--output-format", "json", "-j", "1", "."], capsys)
    _, parallel, _ = run(["--output-format", "json", "-j", "2", "."], capsys)
    assert serial == parallel and len(json.loads(serial)) == 12 * 4


def test_python_dash_m_and_console_script(project: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "ppy_check", "--output-format", "json", "bad.py"],
        capture_output=True, text=True, cwd=project,
    )
    assert result.returncode == 1 and json.loads(result.stdout)
    script = Path(sys.executable).parent / "ppy-check"
    if script.exists():
        again = subprocess.run([str(script), "--output-format", "json", "bad.py"], capture_output=True, text=True, cwd=project)
        assert again.stdout == result.stdout


def test_repository_checks_clean() -> None:
    """The project's own tree (examples included) holds only valid regions."""
    result = subprocess.run([sys.executable, "-m", "ppy_check", "."], capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


def test_pre_commit_hook_definition() -> None:
    text = (ROOT / ".pre-commit-hooks.yaml").read_text()
    assert "id: ppy-check" in text and "entry: ppy-check" in text and "types: [python]" in text


@pytest.mark.parametrize("header", ["import ppy", "import torch, ppy", "import numpy as np, ppy as p", "from ppy import opt",
                                    "    import ppy"])
def test_prefilter_sees_every_import_of_ppy(header: str) -> None:
    from ppy_check.engine import may_hold_region

    assert may_hold_region(f"x = 1\n{header}\n".encode())


@pytest.mark.parametrize("text", ["import happy", "import numpy  # ppy later", "x = 'import ppy'", "from ppyx import y"])
def test_prefilter_skips_what_cannot_hold_a_region(text: str) -> None:
    from ppy_check.engine import may_hold_region

    assert not may_hold_region(f"{text}\n".encode())
