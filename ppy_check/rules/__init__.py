"""The rule registry: one module per rule, its docstring the rule's documentation.

Every rule module defines ``CODE`` and ``SUMMARY``. A region rule's
``check(region, analysis)`` yields ``Finding``s for one region: structural
rules from the region's syntax, the rest from the model builder's problems
and effects (``model/builder.py``); the engine runs those.
``ppy-unused-ignore`` judges a whole module's suppression comments after the
region rules, so the engine calls it on its own. ``ppy-check --explain CODE``
prints the docstring, and the README's rule section is checked against these
docstrings by a test.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Union

from ppy_check.model.ir import Span
from ppy_check.model.problems import Suggestion
from ppy_check.region import Region

if TYPE_CHECKING:
    from ppy_check.model.builder import Analysis


@dataclass(frozen=True)
class Finding:
    """What a rule reports, before the engine places it in a file: a syntax node or a model span."""

    code: str
    node: Union[ast.AST, Span]
    message: str
    fix: Suggestion | None = None

    @property
    def span(self) -> Span:
        return self.node if isinstance(self.node, Span) else Span.of(self.node)


Check = Callable[[Region, "Analysis"], Iterator[Finding]]


def _modules() -> list[ModuleType]:
    from ppy_check.rules import branch, captured, impure, loop, syntax, type_errors, unsupported, untyped

    return [untyped, loop, branch, captured, impure, unsupported, syntax, type_errors]


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
