"""ppy-check's kept results: a file is checked again exactly when it, or anything its check read, changed; an
entry it did not write, or one another user could have, is never believed."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ppy_check import reads, result_cache, runner
from ppy_check.cli import main
from ppy_check.diagnostic import Diagnostic
from ppy_check.model import budgets

HEAD = "import ppy\nimport torch\n\n\n"
REGION = "@ppy.opt(3)\ndef r(x: torch.Tensor) -> torch.Tensor:\n"
CLEAN = HEAD + REGION + "    return torch.relu(x)\n"
LOOPING = HEAD + REGION + "    for i in range(3):\n        x = x * 2\n    return x\n"
CALLS_HELPER = "import ppy\nimport torch\nfrom helpers import double\n\n\n" + REGION + "    return double(x)\n"
HELPER = "def double(x):\n    return x * 2\n"
LOOPING_HELPER = "def double(x):\n    for i in range(2):\n        x = x * 2\n    return x\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project folder to run in, with a cache of its own and the suite's PPY_CHECK_NO_CACHE taken away."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PPY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(result_cache.NO_CACHE_VARIABLE, raising=False)
    return tmp_path


class Checks:
    """How many files the engine checked (rather than the cache answering)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch):
        self.count = 0
        real = runner.check_text_of

        def counted(path: str, data: bytes, codes: object) -> runner.FileResult:
            self.count += 1
            return real(path, data, codes)  # type: ignore[arg-type]

        monkeypatch.setattr(runner, "check_text_of", counted)

    def since(self) -> int:
        count, self.count = self.count, 0
        return count


@pytest.fixture
def checks(monkeypatch: pytest.MonkeyPatch) -> Checks:
    return Checks(monkeypatch)


def check(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[dict[str, object]], str]:
    code = main(["--no-config", "--output-format", "json", "-j", "1", *args])
    out, err = capsys.readouterr()
    return code, json.loads(out), err


def codes(found: list[dict[str, object]]) -> list[object]:
    return [f["code"] for f in found]


def entries(project: Path) -> list[Path]:
    folder = project / "cache" / result_cache.FOLDER
    return sorted(p for p in folder.iterdir() if not p.name.startswith(".")) if folder.exists() else []


def test_a_kept_result_answers_until_the_file_changes(project: Path, checks: Checks,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    (project / "m.py").write_text(LOOPING)
    first = check(capsys, "m.py")
    assert first[0] == 1 and "ppy-loop" in codes(first[1]) and checks.since() == 1
    assert check(capsys, "m.py") == first and checks.since() == 0  # the same findings, every field, unchecked
    (project / "m.py").write_text(CLEAN)
    assert check(capsys, "m.py")[:2] == (0, []) and checks.since() == 1
    assert check(capsys, "m.py")[:2] == (0, []) and checks.since() == 0


def test_an_edited_helper_file_is_checked_again(project: Path, checks: Checks,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    (project / "m.py").write_text(CALLS_HELPER)
    (project / "helpers.py").write_text(HELPER)
    assert check(capsys, "m.py")[:2] == (0, []) and checks.since() == 1
    assert check(capsys, "m.py")[:2] == (0, []) and checks.since() == 0
    (project / "helpers.py").write_text(LOOPING_HELPER)
    code, found, _ = check(capsys, "m.py")
    assert code == 1 and "ppy-loop" in codes(found) and checks.since() == 1
    (project / "helpers.py").unlink()  # an import that finds nothing now: not the answer kept
    code, found, _ = check(capsys, "m.py")
    assert checks.since() == 1 and "ppy-loop" not in codes(found)


def test_a_new_file_that_an_import_now_finds_is_checked_again(project: Path, checks: Checks,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """The import resolves to the project's helpers.py until one appears beside the importer, which Python
    finds first: the same bytes everywhere else, another answer."""
    (project / "src").mkdir()
    (project / "src" / "m.py").write_text(CALLS_HELPER)
    (project / "helpers.py").write_text(HELPER)
    assert check(capsys, "src/m.py")[:2] == (0, []) and checks.since() == 1
    assert check(capsys, "src/m.py")[:2] == (0, []) and checks.since() == 0
    (project / "src" / "helpers.py").write_text(LOOPING_HELPER)
    code, found, _ = check(capsys, "src/m.py")
    assert code == 1 and "ppy-loop" in codes(found) and checks.since() == 1


def test_other_codes_are_another_entry(project: Path, checks: Checks, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "m.py").write_text(LOOPING)
    assert check(capsys, "m.py")[0] == 1
    assert "ppy-loop" not in codes(check(capsys, "--ignore", "ppy-loop", "m.py")[1])
    assert checks.since() == 2 and len(entries(project)) == 2
    assert "ppy-loop" in codes(check(capsys, "m.py")[1])
    assert "ppy-loop" not in codes(check(capsys, "--ignore", "ppy-loop", "m.py")[1])
    assert checks.since() == 0


def test_a_check_that_ran_out_of_time_is_not_kept(project: Path, checks: Checks, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    total = " + ".join(["x"] * 100)  # more steps than the builder takes between looks at the clock
    (project / "m.py").write_text(HEAD + REGION + f"    return {total}\n")
    monkeypatch.setenv(budgets.FILE_SECONDS_VARIABLE, "0")
    assert check(capsys, "m.py")[0] == 1 and check(capsys, "m.py")[0] == 1
    assert checks.since() == 2 and entries(project) == []
    monkeypatch.delenv(budgets.FILE_SECONDS_VARIABLE)
    assert check(capsys, "m.py")[:2] == (0, []) and checks.since() == 1


def test_not_kept_when_asked(project: Path, checks: Checks, monkeypatch: pytest.MonkeyPatch,
                             capsys: pytest.CaptureFixture[str]) -> None:
    (project / "m.py").write_text(LOOPING)
    check(capsys, "--no-cache", "m.py")
    check(capsys, "--no-cache", "m.py")
    monkeypatch.setenv(result_cache.NO_CACHE_VARIABLE, "1")
    check(capsys, "m.py")
    assert checks.since() == 3 and not (project / "cache").exists()


def forge_clean(entry: Path) -> None:
    """Rewrite an entry of a file with findings to claim it has none: what another user would plant."""
    data = json.loads(entry.read_text())
    assert data["diagnostics"]
    data["diagnostics"] = []
    entry.write_text(json.dumps(data))


def test_an_entry_another_user_could_write_is_not_believed(project: Path, checks: Checks,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    (project / "m.py").write_text(LOOPING)
    assert check(capsys, "m.py")[0] == 1 and checks.since() == 1
    [entry] = entries(project)
    forge_clean(entry)
    assert check(capsys, "m.py")[:2] == (0, []) and checks.since() == 0  # the owner's own edit is the owner's
    entry.chmod(0o666)  # still the forged entry: the run that believed it had nothing to replace
    assert check(capsys, "m.py")[0] == 1 and checks.since() == 1  # replaced by a check's own
    assert os.stat(entries(project)[0]).st_mode & 0o077 == 0
    forge_clean(entries(project)[0])
    entry.parent.chmod(0o777)  # the folder: anyone could have put anything there
    code, found, err = check(capsys, "m.py")
    assert code == 1 and "ppy-loop" in codes(found) and checks.since() == 1
    assert "ppy-check: warning: results are not kept between runs" in err and "other users can write" in err


def _wrong_shapes(data: dict[str, Any]) -> None:
    data["diagnostics"], data["files"] = [1, "x"], {"a": 1}


def _another_path(data: dict[str, Any]) -> None:
    data["diagnostics"][0]["path"] = 5


def _a_bool_line(data: dict[str, Any]) -> None:
    data["diagnostics"][0]["line"] = True
    data["diagnostics"][0]["message"] = ["a"]


def _another_files_finding(data: dict[str, Any]) -> None:
    data["diagnostics"][0]["path"] = "other.py"


def _a_nul_path(data: dict[str, Any]) -> None:
    data["files"] = [["m\0.py", None]]


def _a_long_module(data: dict[str, Any]) -> None:
    data["lookups"] = [["m.py", "x" * 5000, None]]


def _a_bad_fix(data: dict[str, Any]) -> None:
    data["diagnostics"][0]["fix"] = {"message": "m", "edits": [{"line": 0}], "applicability": "safe"}


@pytest.mark.parametrize("content", [
    b"", b"{", b"\xff\xfe", b"[]", b'{"format": 1}', b"null", b"[" * 100_000 + b"]" * 100_000,
    _wrong_shapes, _another_path, _a_bool_line, _another_files_finding, _a_nul_path, _a_long_module, _a_bad_fix,
])
def test_an_entry_that_does_not_read_back_is_checked_again(content: bytes | Callable[[dict[str, Any]], None],
                                                           project: Path, checks: Checks,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """Whatever an entry holds, the run reports what a check finds: the fields are checked, not trusted."""
    (project / "m.py").write_text(LOOPING)
    first = check(capsys, "m.py")
    [entry] = entries(project)
    if callable(content):
        data = json.loads(entry.read_text())
        content(data)
        content = json.dumps(data).encode()
    entry.write_bytes(content)
    again = check(capsys, "m.py")
    assert again == first and checks.since() == 2
    assert "Traceback" not in again[2] and "internal error" not in again[2]


def test_a_folder_under_an_entrys_name_is_replaced(project: Path, checks: Checks,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    (project / "m.py").write_text(LOOPING)
    check(capsys, "m.py")
    [entry] = entries(project)
    entry.unlink()
    (entry / "inside").mkdir(parents=True)
    assert check(capsys, "m.py")[0] == 1 and entry.is_file() and checks.since() == 2


def test_a_cache_that_cannot_be_made_warns_and_checks(tmp_path: Path, project: Path, checks: Checks,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    (project / "m.py").write_text(CLEAN)
    (tmp_path / "plain").write_text("a file, not a folder")
    monkeypatch.setenv("PPY_CACHE_DIR", str(tmp_path / "plain" / "cache"))
    code, found, err = check(capsys, "m.py")
    assert (code, found) == (0, []) and checks.since() == 1
    assert err.count("ppy-check: warning: results are not kept between runs") == 1
    assert "--no-cache" in err and "Traceback" not in err


def test_many_files_checked_in_parallel_are_kept(project: Path, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    names = [f"m{index}.py" for index in range(runner.PARALLEL_THRESHOLD)]
    for name in names:
        (project / name).write_text(LOOPING)
    first = main(["--no-config", "--output-format", "json", "-j", "2", *names])
    found = json.loads(capsys.readouterr().out)
    assert first == 1 and {f["path"] for f in found} == set(names) and len(entries(project)) == len(names)

    def no_pool(*args: object) -> None:
        raise AssertionError("every result was kept: nothing is left for workers")

    monkeypatch.setattr(runner, "_in_pool", no_pool)
    assert main(["--no-config", "--output-format", "json", "-j", "2", *names]) == 1
    assert json.loads(capsys.readouterr().out) == found


def test_the_fingerprint_follows_the_checkers_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "package"
    (package / "rules").mkdir(parents=True)
    (package / "rules" / "loop.py").write_text("A = 1\n")
    monkeypatch.setattr(result_cache, "_PACKAGE", str(package))
    before = result_cache.checker_fingerprint()
    assert result_cache.checker_fingerprint() == before
    os.utime(package / "rules" / "loop.py", ns=(1, 1))
    touched = result_cache.checker_fingerprint()
    assert touched != before
    (package / "rules" / "loop.py").write_text("A = 22\n")
    os.utime(package / "rules" / "loop.py", ns=(1, 1))
    assert result_cache.checker_fingerprint() != touched  # the same time, another size
    monkeypatch.setattr(sys, "version", sys.version + " (another build)")
    assert result_cache.checker_fingerprint() != touched


def test_a_result_that_could_vary_is_never_stored(tmp_path: Path) -> None:
    cache = result_cache.ResultCache.open(tmp_path / "cache")
    try:
        found = (Diagnostic("m.py", 1, 1, "ppy-loop", "a message", "r"),)
        varied = reads.Reads(repeatable=False)
        cache.store("m.py", b"data", ("ppy-loop",), found, varied)
        assert cache.lookup("m.py", b"data", ("ppy-loop",)) is None
        cache.store("m.py", b"data", ("ppy-loop",), found, reads.Reads())
        assert cache.lookup("m.py", b"data", ("ppy-loop",)) == found
        assert cache.lookup("m.py", b"other data", ("ppy-loop",)) is None
    finally:
        cache.close()


INNER = ("import torch\nimport torch.nn as nn\n\n\nclass Inner(nn.Module):\n    def __init__(self, w: int):\n"
         "        super().__init__()\n        self.lin = nn.Linear(w, w)\n\n"
         "    def forward(self, x: torch.Tensor) -> torch.Tensor:\n        return self.lin(x)\n")
OUTER = ("import torch\nimport torch.nn as nn\nfrom b import Inner\n\n\nclass Outer(nn.Module):\n"
         "    def __init__(self, w: int):\n        super().__init__()\n        self.inner = Inner(w)\n\n"
         "    def forward(self, x: torch.Tensor) -> torch.Tensor:\n        return self.inner(x)\n")
BLOCK = ("import ppy\nimport torch\nimport torch.nn as nn\nfrom a import Outer\n\n\nclass Block(nn.Module):\n"
         "    def __init__(self, w: int):\n        super().__init__()\n        self.o = Outer(w)\n\n"
         "    @ppy.opt(3)\n    def forward(self, x: torch.Tensor) -> torch.Tensor:\n        return self.o(x)\n")


def test_a_class_model_reused_by_a_second_file_still_counts_what_it_read(
        project: Path, checks: Checks, capsys: pytest.CaptureFixture[str]) -> None:
    """The classes of other files are modelled once per process; the second file that reaches them depends on the
    files their model read (b.py, through a.py) as much as the first."""
    (project / "b.py").write_text(INNER)
    (project / "a.py").write_text(OUTER)
    (project / "m1.py").write_text(BLOCK)
    (project / "m2.py").write_text(BLOCK)
    assert check(capsys, "m1.py", "m2.py")[:2] == (0, []) and checks.since() == 2
    (project / "b.py").write_text(INNER.replace("        return self.lin(x)\n",
                                                "        for i in range(2):\n            x = self.lin(x)\n"
                                                "        return x\n"))
    code, found, _ = check(capsys, "m1.py", "m2.py")
    assert code == 1 and {f["path"] for f in found if f["code"] == "ppy-loop"} == {"m1.py", "m2.py"}
    assert checks.since() == 2


def test_a_check_stopped_by_the_stack_or_a_failure_is_not_kept(project: Path, checks: Checks,
                                                                monkeypatch: pytest.MonkeyPatch,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    """How deep the stack already was when a worker began decides a RecursionError: another process may finish."""
    from ppy_check.model.builder.state import BuildState

    (project / "m.py").write_text(CLEAN)
    for stop in (RecursionError, MemoryError, KeyError):
        def stopped(self: BuildState, stop: type[BaseException] = stop) -> None:
            raise stop("stopped")

        monkeypatch.setattr(BuildState, "build", stopped)
        assert check(capsys, "m.py")[0] == 1 and checks.since() == 1 and entries(project) == []
    monkeypatch.undo()
