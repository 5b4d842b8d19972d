"""The model builder's reasons are registry entries (ppy_check/messages/refusals.py), never free text, and each
site fills exactly its entry's fields, for the rule it reports under."""

from __future__ import annotations

import ast
import string
from pathlib import Path

from ppy_check.messages import Code, Reason, refusals
from ppy_check.model.builder import tables

CHECKER = Path(tables.__file__).resolve().parents[2]
# The methods of the builder's state that record a refusal, and the rule each records it under.
REFUSING = {"unsupported": Code.UNSUPPORTED, "type_problem": Code.TYPE}


def _refusal_sites() -> list[tuple[str, int, Code, ast.expr]]:
    """(file, line, rule, reason expression) of every refusal the checker's code records."""
    sites = []
    for path in sorted(CHECKER.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in REFUSING \
                    and ast.unparse(node.func.value) in ("self", "self.state"):
                why = node.args[2] if len(node.args) > 2 else next(k.value for k in node.keywords if k.arg == "why")
                sites.append((path.name, node.lineno, REFUSING[node.func.attr], why))
    return sites


def _free_text(node: ast.AST) -> list[ast.AST]:
    """String literals and f-strings in a reason expression: text that is not the registry's (the separator of
    a `", ".join(...)` a field shows, or a name compared to choose between two entries, is a value, not a message)."""
    found: list[ast.AST] = []
    for child in ast.walk(node):
        if isinstance(child, ast.JoinedStr) or (isinstance(child, ast.Constant) and isinstance(child.value, str)):
            found.append(child)
    values = {id(c.func.value) for c in ast.walk(node) if isinstance(c, ast.Call)
              and isinstance(c.func, ast.Attribute) and c.func.attr == "join"}
    values |= {id(operand) for c in ast.walk(node) if isinstance(c, ast.Compare) for operand in (c.left, *c.comparators)}
    return [c for c in found if id(c) not in values]


def _entries(node: ast.expr) -> list[str]:
    return [c.attr for c in ast.walk(node) if isinstance(c, ast.Attribute)
            and isinstance(c.value, ast.Name) and c.value.id == "refusals"]


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def test_the_builder_refuses_only_with_registry_entries() -> None:
    sites = _refusal_sites()
    assert len(sites) > 150
    problems = [f"{file}:{line}: free text {ast.unparse(text)}" for file, line, _, why in sites
                for text in _free_text(why)]
    for file, line, code, why in sites:
        tables = [c for c in ast.walk(why) if isinstance(c, ast.Subscript)]
        if not _entries(why) and not tables and not isinstance(why, ast.Name):
            problems.append(f"{file}:{line}: {ast.unparse(why)} is no refusals entry")
        for name in _entries(why):
            entry = getattr(refusals, name, None)
            if not isinstance(entry, Reason) or entry.code is not code:
                problems.append(f"{file}:{line}: refusals.{name} is not a {code.value} reason")
    assert not problems, "\n".join(problems)


def test_each_site_fills_its_entrys_fields() -> None:
    problems = []
    for file, line, _, why in _refusal_sites():
        for call in ast.walk(why):
            if not isinstance(call, ast.Call):
                continue
            names = _entries(call.func)
            if not names or any(isinstance(c, ast.Call) for c in ast.walk(call.func)):
                continue
            given = {k.arg for k in call.keywords if k.arg is not None}
            for name in names:
                wanted = _fields(getattr(refusals, name).template)
                if given != wanted:
                    problems.append(f"{file}:{line}: refusals.{name} takes {sorted(wanted)}, given {sorted(given)}")
    assert not problems, "\n".join(problems)


def test_the_tables_of_reasons_hold_entries() -> None:
    for table in (tables.HOST_READING_METHODS, tables.PROPERTY_REFUSALS):
        assert all(isinstance(reason, Reason) and reason.code is Code.UNSUPPORTED and not _fields(reason.template)
                   for reason in table.values())


def test_each_entry_is_defined_once() -> None:
    tree = ast.parse(Path(refusals.__file__).read_text(encoding="utf-8"))
    names = [target.id for node in tree.body if isinstance(node, ast.Assign) for target in node.targets
             if isinstance(target, ast.Name)]
    assert sorted(name for name in set(names) if names.count(name) > 1) == []
    templates = [(reason.code, reason.template) for reason in vars(refusals).values() if isinstance(reason, Reason)]
    assert len(templates) == len(set(templates)), "one wording, one entry"


def test_every_entry_is_used_and_renders_its_fields() -> None:
    # The builder's parts, and the class reader, whose reasons a module region's attribute reads report.
    sources = sorted((CHECKER / "model" / "builder").glob("*.py")) + [CHECKER / "classes.py"]
    text = "".join(path.read_text(encoding="utf-8") for path in sources)
    entries = {name: value for name, value in vars(refusals).items() if isinstance(value, Reason)}
    assert [name for name in entries if f"refusals.{name}" not in text] == []
    for reason in entries.values():
        fields = {name: f"<{name}>" for name in _fields(reason.template)}
        assert all(f"<{name}>" in reason(**fields).render() for name in fields)
