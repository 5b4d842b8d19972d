"""The rule registry: one module per rule, its docstring the rule's documentation.

Every rule module defines ``CODE`` and ``SUMMARY``. A region rule's
``check(region, facts)`` yields ``Finding``s for one region; the engine runs
those. ``ppy-unused-ignore`` judges a whole module's suppression comments
after the region rules, so the engine calls it on its own. ``ppy-check
--explain CODE`` prints the docstring, and the README's rule section is
checked against these docstrings by a test.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import ModuleType

from ppy_check.analysis import RegionFacts
from ppy_check.region import Region


@dataclass(frozen=True)
class Finding:
    """What a rule reports, before the engine places it in a file."""

    code: str
    node: ast.AST
    message: str


Check = Callable[[Region, RegionFacts], Iterator[Finding]]


def _modules() -> list[ModuleType]:
    from ppy_check.rules import branch, captured, impure, loop, syntax, unsupported, untyped

    return [untyped, loop, branch, captured, impure, unsupported, syntax]


# The region rules, in ALL_CODES order.
RULES: dict[str, ModuleType] = {module.CODE: module for module in _modules()}


def _suppression_rules() -> list[ModuleType]:
    from ppy_check.rules import unused_ignore

    return [unused_ignore]


# Every rule, in KNOWN_CODES order: what --explain, the README, SARIF and --statistics describe.
KNOWN_RULES: dict[str, ModuleType] = {**RULES, **{module.CODE: module for module in _suppression_rules()}}


def explain(code: str) -> str | None:
    """The rule's documentation in Markdown, headed by its code and summary; None for an unknown code."""
    module = KNOWN_RULES.get(code)
    if module is None:
        return None
    doc = (module.__doc__ or "").strip()
    return f"**{code}**: {module.SUMMARY}\n\n{doc}\n"
