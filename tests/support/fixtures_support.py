"""Read the inline expectations of the rule fixtures (shared by every front-end's tests)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

FIXTURES = Path(__file__).parents[1] / "fixtures" / "rules"
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
