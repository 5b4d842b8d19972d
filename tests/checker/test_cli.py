"""ppy-check as a user runs it: formats, exit codes, config, suppression, stdin, colour, bad input."""

from __future__ import annotations

import codecs
import io
import json
import os
import pty
import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from ppy_check.cli import main
from ppy_check.messages import KNOWN_CODES

ROOT = Path(__file__).resolve().parents[2]

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


ESC = "\x1b["


@pytest.fixture(autouse=True)
def no_colour_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    """The colour variables of whoever runs the suite must not decide what these tests see."""
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def run_stdin(args: list[str], data: bytes, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    return run(args, capsys)


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
    assert "`range(3)` as `i`" in by_code["ppy-loop"]["message"]
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
    assert "bad.py:9:5: ppy-loop region `region`: `for` loop iterates over `range(3)` as `i`" in out
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
    rules = document["runs"][0]["tool"]["driver"]["rules"]
    assert [r["id"] for r in rules] == list(KNOWN_CODES)
    for result in results:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
    for rule in rules:
        assert "helpUri" not in rule  # no published address: the documentation travels in `help`
        text = rule["fullDescription"]["text"]
        assert "**Fix.**" not in text and "\nFix. " in text, rule["id"]
        assert "**Fix.**" in rule["fullDescription"]["markdown"] and rule["help"]["text"] == text
    assert "informationUri" not in document["runs"][0]["tool"]["driver"]
    assert document["runs"][0]["columnKind"] == "unicodeCodePoints"


def test_end_positions_in_json_sarif_github_and_full(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each finding spans the offending thing: json and SARIF give its end (the column past its last
    character), github's annotation too, and `full` underlines all of it on its first line."""
    _, out, _ = run(["--output-format", "json", "bad.py"], capsys)
    spans = {f["code"]: (f["line"], f["column"], f["end_line"], f["end_column"]) for f in json.loads(out)}
    assert spans["ppy-unsupported"] == (9, 14, 9, 22)  # `range(3)`
    assert spans["ppy-loop"] == (9, 5, 10, 18)  # the whole `for` statement
    assert spans["ppy-captured"] == (10, 17, 10, 18)  # `W`
    _, out, _ = run(["--output-format", "sarif", "bad.py"], capsys)
    regions = {r["ruleId"]: r["locations"][0]["physicalLocation"]["region"]
               for r in json.loads(out)["runs"][0]["results"]}
    assert regions["ppy-unsupported"] == {"startLine": 9, "startColumn": 14, "endLine": 9, "endColumn": 22}
    _, out, _ = run(["--output-format", "github", "bad.py"], capsys)
    assert "line=9,col=14,endLine=9,endColumn=22,title=ppy-unsupported::" in out
    _, out, _ = run(["--output-format", "full", "bad.py"], capsys)
    assert "    9 |     for i in range(3):\n" + " " * 21 + "^" * 8 + "\n" in out  # range(3)
    assert "    9 |     for i in range(3):\n" + " " * 12 + "^" * 18 + "\n" in out  # to the line's end


def test_full_underlines_below_tabs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.py").write_text("import ppy, torch\n\n@ppy.opt(3)\ndef f(x: torch.Tensor) -> torch.Tensor:\n"
                                   "\treturn x.item()\n")
    _, out, _ = run(["--no-config", "--output-format", "full", "t.py"], capsys)
    assert "    5 |     return x.item()\n" + " " * 19 + "^" * 8 + "\n" in out


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


def test_select_and_ignore_take_prefixes(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """As in ruff: a prefix names every code it starts; the opt-in ones only by their full name."""
    (project / "bad.py").write_text(THREE_PROBLEMS.replace("return x", "return x  # ppy: ignore[ppy-impure]"))
    everything = {"ppy-loop", "ppy-captured", "ppy-untyped", "ppy-unsupported"}
    for prefix in ("ppy", "ppy-", "ALL"):
        _, out, _ = run(["--output-format", "json", "--select", prefix, "bad.py"], capsys)
        assert {f["code"] for f in json.loads(out)} == everything, prefix
    _, out, _ = run(["--output-format", "json", "--select", "ppy-un", "bad.py"], capsys)
    assert {f["code"] for f in json.loads(out)} == {"ppy-unsupported", "ppy-untyped"}
    _, out, _ = run(["--output-format", "json", "--select", "ppy-un,ppy-unused-ignore", "bad.py"], capsys)
    assert {f["code"] for f in json.loads(out)} == {"ppy-unsupported", "ppy-untyped", "ppy-unused-ignore"}
    _, out, _ = run(["--output-format", "json", "--ignore", "ppy-un", "bad.py"], capsys)
    assert {f["code"] for f in json.loads(out)} == {"ppy-loop", "ppy-captured"}
    (project / "pyproject.toml").write_text('[tool.ppy]\nselect = ["ppy-c"]\n')
    _, out, _ = run(["--output-format", "json", "bad.py"], capsys)
    assert {f["code"] for f in json.loads(out)} == {"ppy-captured"}


@pytest.mark.parametrize(("given", "meant"), [("loop", "ppy-loop"), ("ppy-lop", "ppy-loop"), ("Captured", "ppy-captured"),
                                              ("unused_ignore", "ppy-unused-ignore"), ("ppy-typ", "ppy-type")])
def test_unknown_code_says_what_was_meant(given: str, meant: str, project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["--explain", given], capsys)
    assert code == 2 and f"unknown rule code {given!r}; did you mean {meant!r}?" in err
    if given != "ppy-typ":  # a prefix of ppy-type: a selection, not a typo
        code, _, err = run(["--select", given, "bad.py"], capsys)
        assert code == 2 and f"--select: unknown rule code {given!r}; did you mean {meant!r}?" in err
    code, _, err = run(["--explain", "zzzz"], capsys)
    assert code == 2 and "did you mean" not in err and "ppy-loop" in err  # the list of codes


def test_explain_is_plain_text_when_piped(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["--explain", "ppy-impure"], capsys)
    assert code == 0 and out.startswith("ppy-impure:")
    assert "Fix." in out and "Example." in out and "**" not in out and ESC not in out
    assert "`@ppy.pure`" in out  # without colour, backticks are what marks code
    code, _, err = run(["--explain", "ppy-nope"], capsys)
    assert code == 2 and "unknown rule code" in err


def test_explain_is_rendered_in_colour(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    code, out, _ = run(["--explain", "ppy-loop"], capsys)
    assert code == 0 and f"{ESC}1mFix.{ESC}0m" in out and "**" not in out and "`" not in out
    monkeypatch.setenv("NO_COLOR", "1")  # wins over FORCE_COLOR
    _, out, _ = run(["--explain", "ppy-loop"], capsys)
    assert ESC not in out


def test_colour_only_where_asked(project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    _, plain, _ = run(["bad.py"], capsys)
    assert ESC not in plain
    monkeypatch.setenv("FORCE_COLOR", "1")
    _, coloured, _ = run(["--output-format", "full", "bad.py"], capsys)
    assert f"{ESC}1;31mppy-loop{ESC}0m" in coloured and f"{ESC}1mbad.py{ESC}0m" in coloured
    _, as_json, _ = run(["--output-format", "json", "bad.py"], capsys)
    assert ESC not in as_json  # machine formats never
    monkeypatch.setenv("NO_COLOR", "1")
    _, plain_again, _ = run(["bad.py"], capsys)
    assert plain_again == plain


def test_colour_in_a_terminal_and_not_in_a_pipe(project: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")} | {"TERM": "xterm"}
    command = [sys.executable, "-m", "ppy_check", "bad.py"]
    piped = subprocess.run(command, capture_output=True, text=True, cwd=project, env=env)
    assert piped.returncode == 1 and "ppy-loop" in piped.stdout and ESC not in piped.stdout
    leader, follower = pty.openpty()
    with subprocess.Popen(command, stdout=follower, stderr=subprocess.DEVNULL, cwd=project, env=env) as process:
        os.close(follower)
        seen = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal's other end closed
                break
            if not chunk:
                break
            seen += chunk
    os.close(leader)
    assert process.returncode == 1
    assert f"{ESC}1;31mppy-loop{ESC}0m".encode() in seen


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
    # Bytes Python cannot decode make a file that does not parse: a finding at the bad bytes, as Python's import says.
    assert any(f["path"] == "latin.py" and f["code"] == "ppy-syntax" and (f["line"], f["column"]) == (2, 6)
               and "byte 0xff is not UTF-8" in f["message"] for f in findings)
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert any("does-not-exist: no such file or directory" in line for line in lines)
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


@pytest.mark.parametrize("header", ["import ppy", "import torch, ppy", "import numpy as np, ppy as p", "from ppy import opt",
                                    "    import ppy"])
def test_prefilter_sees_every_import_of_ppy(header: str) -> None:
    from ppy_check.engine import may_hold_region

    assert may_hold_region(f"x = 1\n{header}\n".encode())


@pytest.mark.parametrize("text", ["import happy", "import numpy  # ppy later", "x = 'import ppy'", "from ppyx import y"])
def test_prefilter_skips_what_cannot_hold_a_region(text: str) -> None:
    from ppy_check.engine import may_hold_region

    assert not may_hold_region(f"{text}\n".encode())


LOOP_REGION = "import ppy, torch\n\n@ppy.opt(3)\ndef f(x: torch.Tensor) -> torch.Tensor:\n    for i in range(2):\n        x = x * 2\n    return x\n"


def test_summary_counts_files_with_findings(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "ok.py").write_text("import ppy\n")
    code, _, err = run(["--select", "ppy-loop,ppy-captured", "bad.py", "ok.py"], capsys)
    assert code == 1 and err.strip() == "Found 2 findings in 1 file."


@pytest.mark.parametrize("setup, args, problem", [
    (lambda p: None, ["nosuch"], "nosuch: no such file or directory"),
    (lambda p: os.mkfifo(p / "pipe.py"), ["pipe.py"], "pipe.py: not a regular file"),
])
def test_summary_never_says_passed_when_something_was_not_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], setup, args, problem
) -> None:
    monkeypatch.chdir(tmp_path)
    setup(tmp_path)
    code, out, err = run(args, capsys)
    assert (code, out) == (2, "")
    assert problem in err and "passed" not in err
    assert err.strip().splitlines()[-1] == "Nothing checked; 1 path could not be checked (above)."


def test_summary_with_findings_and_errors(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["--select", "ppy-loop", "bad.py", "nosuch"], capsys)
    assert code == 2 and err.strip().splitlines()[-1] == "Found 1 finding in 1 file; 1 path could not be checked (above)."
    (project / "ok.py").write_text("import ppy\n")
    code, _, err = run(["ok.py", "nosuch"], capsys)
    assert code == 2 and err.strip().splitlines()[-1] == "No findings in 1 file checked; 1 path could not be checked (above)."


def test_stdin_with_a_filename(project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, err = run_stdin(["--stdin-filename", "src/m.py", "-"], LOOP_REGION.encode(), capsys, monkeypatch)
    assert code == 1 and out.startswith("src/m.py:5:5: ppy-loop region `f`")
    assert err.strip() == "Found 2 findings in 1 file."
    code, out, _ = run_stdin(["--output-format", "json", "--stdin-filename", "src/m.py"], LOOP_REGION.encode(), capsys, monkeypatch)
    assert code == 1 and {f["path"] for f in json.loads(out)} == {"src/m.py"}


def test_stdin_alone_and_bad_stdin(project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _ = run_stdin(["-"], LOOP_REGION.encode(), capsys, monkeypatch)
    assert code == 1 and out.startswith("-:5:5: ppy-loop")
    code, out, err = run_stdin(["-"], b"import ppy\nx = '\xff'\n", capsys, monkeypatch)
    assert code == 1 and out.startswith("-:2:6: ppy-syntax cannot decode: byte 0xff is not UTF-8") and "passed" not in err
    with pytest.raises(SystemExit) as usage:
        run_stdin(["--stdin-filename", "m.py", "bad.py"], b"", capsys, monkeypatch)
    assert usage.value.code == 2 and "--stdin-filename names standard input" in capsys.readouterr().err


def test_stdin_filename_takes_its_configuration(project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    (project / "pyproject.toml").write_text(
        '[tool.ppy]\nextend-exclude = ["generated"]\nper-file-ignores = { "tests/*" = ["ppy-loop"] }\n')
    code, out, _ = run_stdin(["--stdin-filename", "tests/t.py", "-"], LOOP_REGION.encode(), capsys, monkeypatch)
    assert code == 1 and "ppy-loop" not in out and "ppy-unsupported" in out
    code, out, _ = run_stdin(["--force-exclude", "--stdin-filename", "generated/g.py"], LOOP_REGION.encode(), capsys, monkeypatch)
    assert (code, out) == (0, "")


def test_per_file_ignores_anchored_at_the_config(project: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    (project / "pyproject.toml").write_text(
        '[tool.ppy]\n[tool.ppy.per-file-ignores]\n"tests/*" = ["ppy-loop"]\n"conftest.py" = ["ppy-loop", "ppy-unsupported"]\n')
    for name in ("tests/t.py", "tests/conftest.py", "src/tests/s.py"):
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(LOOP_REGION)
    monkeypatch.chdir(project / "tests")  # patterns are the project root's, whatever the working directory
    _, out, _ = run(["--output-format", "json", ".", "../src"], capsys)
    codes: dict[str, set[str]] = {}
    for finding in json.loads(out):
        codes.setdefault(finding["path"], set()).add(finding["code"])
    assert codes == {"t.py": {"ppy-unsupported"}, "../src/tests/s.py": {"ppy-loop", "ppy-unsupported"}}


@pytest.mark.parametrize("table, problem", [
    ('per-file-ignores = { "tests/*" = ["ppy-lop"] }', "unknown rule code 'ppy-lop'"),
    ('per-file-ignores = ["tests/*"]', "per-file-ignores must be a table"),
    ("force-exclude = 1", "force-exclude must be true or false"),
    ('extend-select = ["ppy-nope"]', "unknown rule code 'ppy-nope'"),
])
def test_bad_configuration_is_one_line(project: Path, capsys: pytest.CaptureFixture[str], table: str, problem: str) -> None:
    (project / "pyproject.toml").write_text(f"[tool.ppy]\n{table}\n")
    code, out, err = run(["."], capsys)
    assert (code, out) == (2, "") and problem in err and len(err.strip().splitlines()) == 1


@pytest.fixture
def nested(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project in a sub-folder, its bad fixtures excluded by its own pyproject.toml; the run starts above it."""
    project = tmp_path / "myproj"
    (project / "tests" / "fixtures").mkdir(parents=True)
    (project / "pyproject.toml").write_text('[tool.ppy]\nextend-exclude = ["tests/fixtures"]\n')
    (project / "tests" / "fixtures" / "bad.py").write_text(THREE_PROBLEMS)
    (project / "tests" / "real.py").write_text(LOOP_REGION)
    monkeypatch.chdir(tmp_path)
    return project


def test_exclude_is_anchored_at_the_config_not_the_working_directory(
    nested: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, out, _ = run(["--output-format", "json", "myproj/tests"], capsys)
    assert {f["path"] for f in json.loads(out)} == {"myproj/tests/real.py"}
    monkeypatch.chdir(nested / "tests")
    _, out, _ = run(["--output-format", "json", "."], capsys)
    assert {f["path"] for f in json.loads(out)} == {"real.py"}


def test_force_exclude_applies_to_files_named_explicitly(nested: Path, capsys: pytest.CaptureFixture[str]) -> None:
    excluded = "myproj/tests/fixtures/bad.py"
    code, out, _ = run([excluded], capsys)
    assert code == 1 and out  # named explicitly, checked: ruff's default
    code, out, err = run(["--force-exclude", excluded], capsys)
    assert (code, out) == (0, "") and "All checks passed (0 files)." in err
    (nested / "pyproject.toml").write_text('[tool.ppy]\nextend-exclude = ["tests/fixtures"]\nforce-exclude = true\n')
    assert run([excluded], capsys)[0] == 0


def test_exclude_replaces_the_defaults_and_extend_exclude_adds(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for folder in ("build", "generated"):
        (project / folder).mkdir()
        (project / folder / "bad.py").write_text(THREE_PROBLEMS)
    (project / "pyproject.toml").write_text('[tool.ppy]\nextend-exclude = ["generated"]\n')
    _, out, _ = run(["--output-format", "json", "."], capsys)
    assert {f["path"] for f in json.loads(out)} == {"bad.py"}
    (project / "pyproject.toml").write_text('[tool.ppy]\nexclude = ["generated"]\n')
    _, out, _ = run(["--output-format", "json", "."], capsys)
    assert {f["path"] for f in json.loads(out)} == {"bad.py", "build/bad.py"}


def test_pre_commit_hook_as_pre_commit_runs_it(nested: Path) -> None:
    """pre-commit runs `entry`, then `args`, then every staged file by name."""
    (hook,) = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    assert hook["id"] == "ppy-check" and hook["types_or"] == ["python", "pyi"] and hook["language"] == "python"
    command = shlex.split(hook["entry"]) + hook.get("args", [])
    assert command[0] == "ppy-check"
    script = [sys.executable, "-m", "ppy_check"]  # the console script's own code, from this checkout
    excluded = subprocess.run(script + command[1:] + ["tests/fixtures/bad.py"], capture_output=True, text=True, cwd=nested)
    assert excluded.returncode == 0, excluded.stdout + excluded.stderr
    both = subprocess.run(script + command[1:] + ["tests/fixtures/bad.py", "tests/real.py"], capture_output=True, text=True, cwd=nested)
    assert both.returncode == 1 and "tests/real.py:5:5: ppy-loop" in both.stdout and "fixtures" not in both.stdout


UNUSED = textwrap.dedent(
    '''\
    import ppy
    import torch


    @ppy.opt(3)
    def f(x: torch.Tensor, n: int) -> torch.Tensor:
        """Shows `# ppy: ignore[ppy-loop]`, in a string: not a comment."""
        for i in range(n):  # ppy: ignore[ppy-loop, ppy-unsupported, ppy-branch]
            x = x * 2  # ppy: ignore
        y = x + 1  # type: ignore[ppy-impure, attr-defined]
        z = y * 2  # type: ignore
        w = z - 1  # ppy: ignore[ppy-loop, ppy-unused-ignore]
        return w  # noqa  # ppy: ignore[ppy-nothing]


    TOP = 1  # ppy: ignore[ppy-loop]
    '''
)


def test_unused_ignore_is_opt_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.py").write_text(UNUSED)
    code, out, err = run(["m.py"], capsys)
    assert (code, out) == (0, "") and "All checks passed" in err
    _, out, _ = run(["--output-format", "json", "--extend-select", "ppy-unused-ignore", "m.py"], capsys)
    found = [(f["line"], f["column"], f["message"]) for f in json.loads(out)]
    assert found == [
        (8, 25, "region `f`: `ppy-branch` in `# ppy: ignore[ppy-loop, ppy-unsupported, ppy-branch]` silences nothing on this line; remove it"),
        (9, 20, "region `f`: `# ppy: ignore` silences nothing on this line; remove it"),
        (10, 16, "region `f`: `ppy-impure` in `# type: ignore[ppy-impure, attr-defined]` silences nothing on this line; remove it"),
        (13, 23, "region `f`: `ppy-nothing` in `# ppy: ignore[ppy-nothing]` silences nothing on this line; remove it"),
        (16, 10, "`ppy-loop` in `# ppy: ignore[ppy-loop]` silences nothing: this line is in no region; remove it"),
    ]
    assert {f["code"] for f in json.loads(out)} == {"ppy-unused-ignore"}


def test_unused_ignore_counts_findings_of_deselected_rules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A comment that silences a rule switched off here is still needed where the rule is on."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.py").write_text(LOOP_REGION.replace("range(2):", "range(2):  # ppy: ignore[ppy-loop, ppy-unsupported]"))
    code, out, _ = run(["--select", "ppy-unused-ignore", "m.py"], capsys)
    assert (code, out) == (0, "")
    (tmp_path / "pyproject.toml").write_text('[tool.ppy]\nextend-select = ["ppy-unused-ignore"]\nignore = ["ppy-loop"]\n')
    code, out, _ = run(["m.py"], capsys)
    assert (code, out) == (0, "")
    (tmp_path / "m.py").write_text(LOOP_REGION.replace("x * 2", "x * 2  # ppy: ignore[ppy-loop]"))
    code, out, _ = run(["m.py"], capsys)
    assert code == 1 and "m.py:6:20: ppy-unused-ignore region `f`: `ppy-loop` in" in out and "ppy-unsupported" in out


SUPPRESSED = textwrap.dedent(
    """\
    import ppy
    import torch


    @ppy.opt(3)
    def f(x: torch.Tensor, n: int) -> torch.Tensor:
        # ppy: ignore
        y = x * 2  # ppy: ignore[ppy-loop]
        z = y + 1  # noqa: E501  # type: ignore[ppy-branch, attr-defined]
        w = z - 1  # ppy: ignore[ppy-loop, ppy-impure] keep this note
        print(w)  # ppy: ignore[ppy-unsupported, ppy-loop]
        return w  # ppy: ignore  # trailing
    """
)
FIXED = textwrap.dedent(
    """\
    import ppy
    import torch


    @ppy.opt(3)
    def f(x: torch.Tensor, n: int) -> torch.Tensor:
        y = x * 2
        z = y + 1  # noqa: E501  # type: ignore[attr-defined]
        w = z - 1  # keep this note
        print(w)  # ppy: ignore[ppy-unsupported]
        return w  # trailing
    """
)


def test_fix_removes_what_silences_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    """As ruff's RUF100 fix: the codes that silence nothing leave the comment, and a comment left with none
    goes (its line too, when it was alone there); mypy's codes and the rest of the comment stay."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "s.py").write_text(SUPPRESSED)
    code, _, err = run(["--no-config", "--extend-select", "ppy-unused-ignore", "s.py"], capsys)
    assert code == 1 and "Found 7 findings in 1 file (7 fixable with --fix)." in err
    _, out, _ = run(["--no-config", "--extend-select", "ppy-unused-ignore", "--output-format", "json", "s.py"], capsys)
    fixes = {f["line"]: f["fix"] for f in json.loads(out)}
    assert fixes[8] == {"message": "remove `# ppy: ignore[ppy-loop]`", "applicability": "safe",
                        "edits": [{"line": 8, "column": 14, "end_line": 8, "end_column": 39, "content": ""}]}
    code, _, err = run(["--no-config", "--extend-select", "ppy-unused-ignore", "--fix", "s.py"], capsys)
    assert code == 0 and "Fixed 7 findings. All checks passed (1 file)." in err
    assert (tmp_path / "s.py").read_text() == FIXED
    code, _, _ = run(["--no-config", "--extend-select", "ppy-unused-ignore", "--fix", "s.py"], capsys)
    assert code == 0 and (tmp_path / "s.py").read_text() == FIXED


def test_fix_keeps_the_encoding_and_line_endings_and_what_it_cannot_fix(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(tmp_path)
    data = codecs.BOM_UTF8 + SUPPRESSED.replace("print(w)", "print('é')").replace("\n", "\r\n").encode()
    data = data.replace(b"    y = x * 2", b"    for _ in range(n):\r\n        x = x + 1\r\n    y = x * 2")
    (tmp_path / "s.py").write_bytes(data)
    code, _, err = run(["--no-config", "--extend-select", "ppy-unused-ignore", "--fix", "s.py"], capsys)
    assert code == 1 and "Fixed 7 findings. Found 2 findings in 1 file." in err  # the loop and its range stay
    fixed = (tmp_path / "s.py").read_bytes()
    assert fixed.startswith(codecs.BOM_UTF8) and b"\r\n" in fixed and b"\n" not in fixed.replace(b"\r\n", b"")
    assert fixed.decode("utf-8-sig").replace("\r\n", "\n") == FIXED.replace("print(w)", "print('é')").replace(
        "    y = x * 2", "    for _ in range(n):\n        x = x + 1\n    y = x * 2")


def test_unsafe_fix_only_with_unsafe_fixes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    """`x.mT()` as `x.mT` changes what the body does (it raised a TypeError): applied only when asked."""
    monkeypatch.chdir(tmp_path)
    source = "import ppy, torch\n\n@ppy.opt(3)\ndef f(x: torch.Tensor) -> torch.Tensor:\n    return x.mT() + x.T  ( ) * 2\n"
    (tmp_path / "p.py").write_text(source)
    _, out, _ = run(["--no-config", "--output-format", "json", "p.py"], capsys)
    assert [f["fix"]["applicability"] for f in json.loads(out)] == ["unsafe", "unsafe"]
    code, _, err = run(["--no-config", "--fix", "p.py"], capsys)
    assert code == 1 and "Found 2 findings in 1 file (2 fixable with --fix --unsafe-fixes)." in err
    assert (tmp_path / "p.py").read_text() == source
    code, _, err = run(["--no-config", "--fix", "--unsafe-fixes", "p.py"], capsys)
    assert code == 0 and "Fixed 2 findings." in err
    assert (tmp_path / "p.py").read_text() == source.replace("x.mT() + x.T  ( ) * 2", "x.mT + x.T * 2")


def test_fix_applies_only_to_selected_rules_and_files(project: Path, capsys: pytest.CaptureFixture[str],
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    (project / "s.py").write_text(SUPPRESSED)
    code, _, _ = run(["--fix", "s.py"], capsys)  # ppy-unused-ignore is opt-in: nothing to fix
    assert code == 0 and (project / "s.py").read_text() == SUPPRESSED
    with pytest.raises(SystemExit):
        run_stdin(["--fix", "-"], b"", capsys, monkeypatch)
    assert "--fix rewrites files: it does not take standard input" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["--unsafe-fixes", "s.py"])
    assert "--unsafe-fixes applies fixes with --fix" in capsys.readouterr().err


def test_unused_ignore_is_documented(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["--explain", "ppy-unused-ignore"], capsys)
    assert code == 0 and "Fix." in out and "RUF100" in out


def test_ppy_build_prints_user_text_plainly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A finding on line 100 stays `:100:` (not an emoji), on one line however long, and the counts agree in number."""
    pytest.importorskip("torch")
    from ppy.cli import main as ppy_main

    monkeypatch.setenv("PPY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    name = "[bold]model:100:" + "x" * 60 + ".py"
    (tmp_path / name).write_text("import ppy\nimport torch\n" + "\n" * 95 + LOOP_REGION.split("\n\n", 1)[1])
    code = ppy_main(["build", name])
    err = capsys.readouterr().err
    assert code == 1
    lines = err.splitlines()
    assert f"{name}:100:5: ppy-loop region `f`: `for` loop iterates over `range(2)` as `i`; a region is straight-line code, so move the loop to the caller and call the region once an item" in lines
    assert lines[-1] == "ppy build: 0 of 1 region compiled, in 1 file"


def test_ppy_show_names_a_folder_clearly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from ppy.cli import main as ppy_main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "src").mkdir()
    assert ppy_main(["show", "src"]) == 2
    assert "src: a folder; ppy show prints one file's C++" in capsys.readouterr().err
    assert ppy_main(["show", "nosuch.py"]) == 2
    assert "nosuch.py: no such file" in capsys.readouterr().err


@pytest.mark.parametrize("command, status", [
    pytest.param(["-m", "ppy_check", "--help"], 0, id="ppy-check --help"),  # argparse's own printing copes
    pytest.param(["-m", "ppy_check", "--explain", "ppy-loop"], 2, id="ppy-check --explain"),
    pytest.param(["-m", "ppy_check", "tests/fixtures"], 2, id="ppy-check findings"),
    pytest.param(["-m", "ppy.cli", "--help"], 0, id="ppy --help"),
    pytest.param(["-m", "ppy.cli", "cache", "info"], 0, id="ppy cache info"),
    pytest.param(["-m", "ppy.cli", "cache", "logs"], 0, id="ppy cache logs"),
])
def test_a_closed_standard_output_is_handled_quietly(command: list[str], status: int, tmp_path: Path) -> None:
    """`ppy cache info | head` and the like: the reader went away before the command wrote; no traceback, no
    "Exception ignored" at exit, nothing on stderr."""
    read, write = os.pipe()
    os.close(read)  # the reader has gone before the command writes anything
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PPY_CACHE_DIR": str(tmp_path / "cache")}
    try:
        result = subprocess.run([sys.executable, *command], stdout=write, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                                env=env, timeout=120)
    finally:
        os.close(write)
    assert result.stderr == "", result.stderr
    assert result.returncode == status


def test_ppy_cache_info_piped_to_head_exits_0_silently(tmp_path: Path) -> None:
    """The issue's own check, through a shell under pipefail: `ppy cache info | head -1` passes and says nothing
    on stderr. `head -n 0` leaves before ppy has started (Python's start alone outlasts it), so ppy's write always
    meets a closed pipe; `head -1` may read it all first."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PPY_CACHE_DIR": str(tmp_path / "cache")}
    for head, shown in (("head -n 0", ""), ("head -1", "cache: ")):
        command = f"set -o pipefail; {shlex.quote(sys.executable)} -m ppy.cli cache info | {head}"
        result = subprocess.run(["bash", "-c", command], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
        assert (result.returncode, result.stderr) == (0, ""), (head, result.stderr)
        assert result.stdout.startswith(shown) and result.stdout.count("\n") == (1 if shown else 0)
