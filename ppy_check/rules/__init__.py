"""The rule registry: one module per rule, its docstring the rule's documentation.

Every rule module defines ``CODE``, ``SUMMARY`` and ``check(region, facts)``,
which yields ``Finding``s. ``ppy-check --explain CODE`` prints the docstring,
and the README's rule section is checked against these docstrings by a test.
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


RULES: dict[str, ModuleType] = {module.CODE: module for module in _modules()}


def explain(code: str) -> str | None:
    module = RULES.get(code)
    if module is None:
        return None
    doc = (module.__doc__ or "").strip()
    return f"{code}: {module.SUMMARY}\n\n{doc}\n"
