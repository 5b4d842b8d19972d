"""The rule registry: one module per rule, its docstring the rule's documentation.

Every rule module defines ``CODE``, ``SUMMARY`` and ``check(region, analysis)``,
which yields ``Finding``s: structural rules from the region's syntax, the rest
from the model builder's problems and effects (``model/builder.py``). ``ppy-check --explain CODE`` prints the docstring,
and the README's rule section is checked against these docstrings by a test.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Union

from ppy_check.model.ir import Span
from ppy_check.region import Region

if TYPE_CHECKING:
    from ppy_check.model.builder import Analysis


@dataclass(frozen=True)
class Finding:
    """What a rule reports, before the engine places it in a file: a syntax node or a model span."""

    code: str
    node: Union[ast.AST, Span]
    message: str

    @property
    def span(self) -> Span:
        return self.node if isinstance(self.node, Span) else Span.of(self.node)


Check = Callable[[Region, "Analysis"], Iterator[Finding]]


def _modules() -> list[ModuleType]:
    from ppy_check.rules import branch, captured, impure, loop, syntax, type_errors, unsupported, untyped

    return [untyped, loop, branch, captured, impure, unsupported, syntax, type_errors]


RULES: dict[str, ModuleType] = {module.CODE: module for module in _modules()}


def explain(code: str) -> str | None:
    module = RULES.get(code)
    if module is None:
        return None
    doc = (module.__doc__ or "").strip()
    return f"{code}: {module.SUMMARY}\n\n{doc}\n"
