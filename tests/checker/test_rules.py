"""The rule fixtures through ppy-check's engine."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.support.fixtures_support import (FIXTURES, SNAPSHOTS, UPDATE_SNAPSHOTS, compare, expectations, fixture_files,
                                            snapshot_problems)

from ppy_check.engine import check_source
from ppy_check.messages import ALL_CODES


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: p.name)
def test_fixture(path: Path) -> None:
    """Findings stand where the inline markers say, and their whole text is the snapshot's (fixtures_support says
    how to update it)."""
    found = check_source(path.read_text(encoding="utf-8"), str(path))
    problems = compare(path, [(d.line, d.code, d.message) for d in found])
    problems += snapshot_problems(path, [(d.line, d.column, d.code, d.message) for d in found])
    assert not problems, "\n".join(problems)


def test_no_message_starts_or_ends_in_a_space() -> None:
    """A return-type message ended in a space (an empty detail stood in for none): a snapshot holds it unseen."""
    for path in fixture_files():
        for line in (SNAPSHOTS / f"{path.stem}.txt").read_text(encoding="utf-8").splitlines():
            message = line.split(" ", 2)[2]
            assert message == message.strip() and "  (" not in message, f"{path.name}: {line!r}"


def test_every_snapshot_has_its_fixture() -> None:
    assert {file.stem for file in SNAPSHOTS.glob("*.txt")} == {path.stem for path in fixture_files()}


def test_a_changed_message_differs_from_the_snapshot(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(UPDATE_SNAPSHOTS, raising=False)
    path = FIXTURES / "loop.py"
    found = [(d.line, d.column, d.code, d.message) for d in check_source(path.read_text(encoding="utf-8"), str(path))]
    assert snapshot_problems(path, found) == []
    line, column, code, message = found[0]
    changed = [(line, column, code, message.replace("region", "function", 1))] + found[1:]
    diff = snapshot_problems(path, changed)
    assert diff and any(row.startswith("+") and "function `" in row for row in diff), diff


def test_every_rule_has_bad_cases() -> None:
    covered = {e.code for path in fixture_files() for e in expectations(path)}
    assert covered == set(ALL_CODES)


def test_every_message_names_its_region() -> None:
    for path in fixture_files():
        for d in check_source(path.read_text(encoding="utf-8"), str(path)):
            assert f"`{d.region}`" in d.message, d


@pytest.mark.parametrize("path", fixture_files(), ids=lambda p: p.name)
def test_fast_path_agrees_with_full_walk(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Regions of plain statements skip the full walk; forcing the walk must change nothing."""
    import re

    from ppy_check import region

    text = path.read_text(encoding="utf-8")
    fast = check_source(text, str(path))
    monkeypatch.setattr(region, "_STRUCTURE", re.compile(r""))
    assert check_source(text, str(path)) == fast


def test_readme_rules_match_the_docstrings() -> None:
    from ppy_check import docs

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme.split(docs.START, 1)[1].split(docs.END, 1)[0]
    assert section.strip() == docs.render().strip(), "run: python -m ppy_check.docs --write"


PLAIN_EXPRESSIONS = ["x", "F.linear(h, w).reshape", "f(a, (b, c), k=(d,), n=-1)", "g()()", "(a, b).count", "f(())",
                     "(1).real", "1.5.real", "'s'.join(p)", "f(*a)", "f(**k)", "f(x)[0]", "(-1, 2)", "f(True, None)"]


def test_display_spells_plain_expressions_as_unparse_does() -> None:
    """Messages display the plainest expressions without ``ast.unparse`` (too slow for every call); the text
    must be unparse's, for these and for every expression of the checker's own source."""
    import ast

    from ppy_check.model.builder import text as build_text

    trees = [ast.parse(text, mode="eval") for text in PLAIN_EXPRESSIONS]
    sources = sorted(Path(build_text.__file__).parents[2].rglob("*.py"))
    trees += [ast.parse(path.read_text(encoding="utf-8")) for path in sources]
    covered = 0
    for tree in trees:
        for node in ast.walk(tree):
            text = build_text._plain_text(node) if isinstance(node, ast.expr) else None
            if text is not None:
                covered += 1
                assert text == ast.unparse(node)
    assert covered > 10_000


def test_each_code_is_reported_by_its_own_rule_module() -> None:
    """The registry (ppy_check.messages.Code) names each code's module; the module must say the same code."""
    from ppy_check.messages import Code
    from ppy_check.rules import KNOWN_RULES

    assert {code: module.__name__ for code, module in KNOWN_RULES.items()} == {
        code.value: f"ppy_check.rules.{code.module}" for code in Code}
    assert all(module.CODE == code for code, module in KNOWN_RULES.items())
