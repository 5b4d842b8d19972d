"""ppy-check under odd input: it never hangs, never crashes the run, and never hides a file.

Each test checks one bad file next to a good one with a finding, and expects
the good one's finding in every case: one file's trouble costs that file alone.
"""

from __future__ import annotations

import ast
import json
import os
import stat
import subprocess
import sys
import tempfile
import types
from collections.abc import Iterator
from pathlib import Path

import pytest

from ppy_check import runner
from ppy_check.runner import Target, run

ROOT = Path(__file__).resolve().parents[2]
HEADER = "import ppy\nimport torch\n\n\n@ppy.opt(3)\ndef f(x: torch.Tensor) -> torch.Tensor:\n"
GOOD_WITH_FINDING = HEADER + "    for i in range(2):\n        x = x * 2\n    return x\n"


def check(args: list[str], cwd: Path, timeout: float = 60, user: list[str] | None = None) -> subprocess.CompletedProcess[str]:
    command = (user or []) + [sys.executable, "-m", "ppy_check", "--no-config", "--output-format", "json", *args]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, timeout=timeout, env=env)


def paths_with_findings(result: subprocess.CompletedProcess[str]) -> set[str]:
    return {f["path"] for f in json.loads(result.stdout)}


def test_a_file_starting_with_a_bom_is_checked(tmp_path: Path) -> None:
    (tmp_path / "bom.py").write_bytes(b"\xef\xbb\xbf" + GOOD_WITH_FINDING.encode())
    result = check(["bom.py"], tmp_path)
    assert result.returncode == 1, result.stderr
    findings = json.loads(result.stdout)
    # The BOM is not a character of the line: columns are the same as without it.
    assert ("bom.py", 7, 5, "ppy-loop") in {(f["path"], f["line"], f["column"], f["code"]) for f in findings}


@pytest.mark.parametrize("breaker", ["\x0c", "\x1c", "\u2028"])
def test_a_character_splitlines_breaks_at_is_no_line_break(tmp_path: Path, breaker: str) -> None:
    """Python numbers lines at newlines alone: a form feed (or U+2028 in a comment) above a region moves neither a
    finding's line, its column, nor the suppression comment that silences it."""
    text = "import ppy\nimport torch\n" + f"# page{breaker}break\n\x0c\n" + GOOD_WITH_FINDING.removeprefix("import ppy\nimport torch\n")
    suppressed = text.replace("for i in range(2):", "for i in range(2):  # ppy: ignore[ppy-loop]")
    (tmp_path / "paged.py").write_text(text, encoding="utf-8")
    (tmp_path / "quiet.py").write_text(suppressed, encoding="utf-8")
    result = check(["--select", "ppy-loop", "paged.py", "quiet.py"], tmp_path)
    assert result.returncode == 1, result.stderr
    found = {(f["path"], f["line"], f["column"], f["code"]) for f in json.loads(result.stdout)}
    assert found == {("paged.py", 9, 5, "ppy-loop")}


def test_a_latin1_file_is_read_by_its_coding_comment(tmp_path: Path) -> None:
    """A non-ASCII name in a latin-1 file is the name Python reads, in the finding, at Python's column."""
    text = "# -*- coding: latin-1 -*-\n" + GOOD_WITH_FINDING.replace("for i in", "r\u00e9p = 1; for i in").replace(
        "r\u00e9p = 1; for", "r\u00e9p = 1\n    for")
    (tmp_path / "latin.py").write_bytes(text.encode("latin-1"))
    result = check(["latin.py"], tmp_path)
    assert result.returncode == 1, result.stderr
    found = {(f["line"], f["column"], f["code"]) for f in json.loads(result.stdout)}
    assert (9, 5, "ppy-loop") in found


def test_a_fifo_in_a_folder_is_skipped_unopened(tmp_path: Path) -> None:
    (tmp_path / "good.py").write_text(GOOD_WITH_FINDING)
    os.mkfifo(tmp_path / "pipe.py")
    result = check(["."], tmp_path, timeout=30)  # opening the FIFO would block until the timeout
    assert result.returncode == 1, result.stderr
    assert paths_with_findings(result) == {"good.py"} and "pipe.py" not in result.stderr


def test_a_fifo_named_explicitly_is_an_error_not_a_hang(tmp_path: Path) -> None:
    (tmp_path / "good.py").write_text(GOOD_WITH_FINDING)
    os.mkfifo(tmp_path / "pipe.py")
    result = check(["pipe.py", "good.py"], tmp_path, timeout=30)
    assert result.returncode == 2
    assert "pipe.py: not a regular file" in result.stderr and paths_with_findings(result) == {"good.py"}


DEEP = {
    "chain.py": "    return x" + ".abs()" * 330 + "\n",
    "sum.py": "    return " + " + ".join(["x"] * 1000) + "\n",
    "minus.py": "    return " + "-" * 6000 + "x\n",
}


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_deep_expressions_cost_their_own_file_only(tmp_path: Path, jobs: str) -> None:
    for name, body in DEEP.items():
        (tmp_path / name).write_text(HEADER + body)
    # Enough files for the process pool at -j 2: the failure must cross back from a worker.
    for index in range(runner.PARALLEL_THRESHOLD):
        (tmp_path / f"good{index}.py").write_text(GOOD_WITH_FINDING)
    result = check(["-j", jobs, "."], tmp_path)
    assert result.returncode in (1, 2) and "Traceback" not in result.stderr
    findings = json.loads(result.stdout)
    goods = {f"good{index}.py" for index in range(runner.PARALLEL_THRESHOLD)}
    assert {f["path"] for f in findings} - set(DEEP) == goods, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("ppy-check: ")]
    for line in errors:
        assert line.split(": ")[1] in DEEP and ": cannot check: " in line, line
    for name in DEEP:
        # At most one line for itself, however it fails; a file the checker can follow gets its findings.
        assert sum(line.startswith(f"ppy-check: {name}: ") for line in errors) <= 1
    assert (result.returncode == 2) == bool(errors)


def test_any_failure_in_one_file_is_that_files_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    real = runner.check_source

    def flaky(text: str, path: str, codes: object) -> object:
        if path == "broken.py":
            raise ValueError("a checker bug")
        return real(text, path, codes)

    monkeypatch.setattr(runner, "check_source", flaky)
    targets = [Target(name, ("ppy-loop",), Path(name), GOOD_WITH_FINDING.encode()) for name in ("a.py", "broken.py", "b.py")]
    result = run(targets, jobs=1)
    assert {d.path for d in result.diagnostics} == {"a.py", "b.py"}
    assert result.errors == ["broken.py: cannot check: internal error: ValueError: a checker bug; a ppy-check limitation worth reporting"]


def test_a_worker_that_dies_costs_its_file_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """A worker killed outright (a crash in C, the OOM killer) breaks the pool; the other files are checked again."""
    import multiprocessing

    assert multiprocessing.get_start_method() == "fork", "the workers must inherit the patched checker"
    real = runner.check_source

    def deadly(text: str, path: str, codes: object) -> object:
        if path == "fatal.py":
            os._exit(70)
        return real(text, path, codes)

    monkeypatch.setattr(runner, "check_source", deadly)
    names = [f"m{index}.py" for index in range(12)] + ["fatal.py"]
    targets = [Target(name, ("ppy-loop",), Path(name), GOOD_WITH_FINDING.encode()) for name in names]
    result = run(targets, jobs=2)
    assert {d.path for d in result.diagnostics} == set(names) - {"fatal.py"}
    assert result.errors == ["fatal.py: cannot check: the checking process died on this file; a ppy-check limitation worth reporting"]


@pytest.fixture
def shared_folder() -> Iterator[Path]:
    """A folder an unprivileged user can enter (pytest's tmp_path is private to root)."""
    folder = Path(tempfile.mkdtemp(prefix="ppy-perm-"))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        for path in folder.rglob("*"):
            if path.is_dir():
                path.chmod(0o755)
        subprocess.run(["rm", "-rf", str(folder)], check=True)


def as_nobody() -> list[str]:
    """Run as an unprivileged user; the suite runs as root in CI, and root reads everything."""
    if os.geteuid() != 0:
        return []
    return ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]


def test_unreadable_file_and_folder_are_named_and_the_rest_checked(shared_folder: Path) -> None:
    (shared_folder / "good.py").write_text(GOOD_WITH_FINDING)
    (shared_folder / "good.py").chmod(0o644)
    secret = shared_folder / "secret.py"
    secret.write_text(GOOD_WITH_FINDING)
    secret.chmod(0)
    locked = shared_folder / "locked"
    locked.mkdir()
    (locked / "inside.py").write_text(GOOD_WITH_FINDING)
    locked.chmod(0)
    assert not stat.S_IMODE(secret.stat().st_mode)

    named = check(["good.py", "secret.py", "locked/inside.py"], shared_folder, user=as_nobody())
    assert named.returncode == 2, named.stderr
    assert paths_with_findings(named) == {"good.py"}
    assert "secret.py: cannot read: Permission denied" in named.stderr
    assert "locked/inside.py: cannot read: Permission denied" in named.stderr
    assert "internal error" not in named.stderr

    walked = check(["."], shared_folder, user=as_nobody())
    assert walked.returncode == 2, walked.stderr
    assert paths_with_findings(walked) == {"good.py"}
    assert "locked: cannot read folder: Permission denied" in walked.stderr
    assert "secret.py: cannot read: Permission denied" in walked.stderr


def test_checking_regions_leaves_no_cyclic_garbage() -> None:
    """The runner calls the cyclic collector rarely (runner.GC_THRESHOLD): a file's trees and models must die by
    reference counting, or each file's would pile up until a collection."""
    import gc

    from ppy_check.engine import check_source

    text = HEADER + "    y = torch.nn.functional.linear(x, x).reshape((2, 3)).transpose(0, 1)\n    return torch.add(x, y)\n"
    check_source(text, "warm.py")  # the op data, loaded once, is not garbage
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)  # what a collection finds stays in gc.garbage, to be told apart
    try:
        check_source(text, "plain.py")
        gc.collect()
        # Only the check's own: another thread of the test session (a background build) may leave garbage too.
        ours = [o for o in gc.garbage if isinstance(o, ast.AST) or type(o).__module__.startswith("ppy_check")
                or (isinstance(o, types.FrameType) and "ppy_check" in o.f_code.co_filename)]
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        if enabled:
            gc.enable()
    assert ours == []
