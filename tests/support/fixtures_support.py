"""Read the rule fixtures' inline expectations and whole-message snapshots (shared by every front-end's tests).

The inline ``# expect: code[needle]`` markers say where a finding is expected; the snapshot
(``snapshots/NAME.txt``, one ``line:column code message`` line a finding) is the exact check, so a changed
message shows as a reviewed diff. After a deliberate change, rewrite the snapshots and read the diff::

    PPY_UPDATE_SNAPSHOTS=1 .venv/bin/python -m pytest tests/checker/test_rules.py -k test_fixture -p no:cacheprovider
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parents[1] / "fixtures" / "rules"
SNAPSHOTS = FIXTURES / "snapshots"
UPDATE_SNAPSHOTS = "PPY_UPDATE_SNAPSHOTS"  # set to 1: the fixture test writes the snapshots instead of comparing
_EXPECT = re.compile(r"#.*?\bexpect:\s*(.*)$")
_ITEM = re.compile(r"(ppy-[a-z]+)(?:\[(.*)\])?$")


@dataclass(frozen=True)
class Expected:
    line: int
    code: str
    needle: str  # must appear in the message


def fixture_files() -> list[Path]:
    return sorted(FIXTURES.glob("*.py"))


def expectations(path: Path) -> list[Expected]:
    found = []
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        match = _EXPECT.search(text)
        if not match:
            continue
        for item in match.group(1).split(";"):
            parsed = _ITEM.match(item.strip())
            assert parsed, f"{path.name}:{number}: bad expectation {item!r}"
            found.append(Expected(number, parsed.group(1), parsed.group(2) or ""))
    return found


def compare(path: Path, actual: list[tuple[int, str, str]]) -> list[str]:
    """Differences between expected and actual (line, code, message) findings, as readable lines."""
    problems = []
    remaining = list(actual)
    for expected in expectations(path):
        match = next(
            (a for a in remaining if a[0] == expected.line and a[1] == expected.code and expected.needle in a[2]), None
        )
        if match is None:
            near = [a for a in actual if a[0] == expected.line]
            problems.append(f"{path.name}:{expected.line}: expected {expected.code}[{expected.needle}], got {near}")
        else:
            remaining.remove(match)
    problems += [f"{path.name}:{line}: unexpected {code}: {message}" for line, code, message in remaining]
    return problems


def snapshot_path(path: Path) -> Path:
    return SNAPSHOTS / f"{path.stem}.txt"


def _python_says(function: Any) -> str:
    try:
        function(())
    except ValueError as error:
        return str(error)
    raise AssertionError(function)


# Python's own words that a message quotes and that differ by release (`max(())`: "max() arg is an empty
# sequence" until 3.11, "max() iterable argument is empty" from 3.12), as a snapshot holds them: one snapshot
# serves every Python.
PYTHON_WORDS = {_python_says(max): "<max(()) raises>", _python_says(min): "<min(()) raises>"}


def snapshot_lines(findings: list[tuple[int, int, str, str]]) -> list[str]:
    """(line, column, code, message) findings as a snapshot holds them, in line order."""
    lines = []
    for line, column, code, message in sorted(findings):
        for words, placeholder in PYTHON_WORDS.items():
            message = message.replace(words, placeholder)
        lines.append(f"{line}:{column} {code} {message}")
    return lines


def snapshot(path: Path) -> list[str]:
    """The findings the fixture's snapshot records (none when it has no snapshot yet)."""
    file = snapshot_path(path)
    return file.read_text(encoding="utf-8").splitlines() if file.exists() else []


def snapshot_problems(path: Path, findings: list[tuple[int, int, str, str]]) -> list[str]:
    """How the findings differ from the fixture's snapshot, as a unified diff; with PPY_UPDATE_SNAPSHOTS=1 the
    snapshot is rewritten to them instead."""
    actual = snapshot_lines(findings)
    if os.environ.get(UPDATE_SNAPSHOTS) == "1":
        snapshot_path(path).parent.mkdir(exist_ok=True)
        snapshot_path(path).write_text("".join(f"{line}\n" for line in actual), encoding="utf-8")
        return []
    import difflib

    expected = snapshot(path)
    if expected == actual:
        return []
    return [f"{snapshot_path(path).name} differs (rerun with {UPDATE_SNAPSHOTS}=1 and review the diff):",
            *difflib.unified_diff(expected, actual, "snapshot", "found", lineterm="")]
