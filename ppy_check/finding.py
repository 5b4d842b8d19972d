"""What a rule reports, before the engine places it in a file: a leaf that the rule modules and their
registry (``ppy_check.rules``) both import, so that no rule imports its registry."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ppy_check.messages import Message
from ppy_check.model.ir import Span
from ppy_check.model.problems import Suggestion
from ppy_check.region import Region

if TYPE_CHECKING:
    from ppy_check.model.builder import Analysis


@dataclass(frozen=True)
class Finding:
    """What a rule reports, before the engine places it in a file: a syntax node or a model span."""

    code: str
    node: ast.AST | Span
    text: Message
    fix: Suggestion | None = None

    @property
    def message(self) -> str:
        return self.text.render()

    @property
    def span(self) -> Span:
        return self.node if isinstance(self.node, Span) else Span.of(self.node)


Check = Callable[[Region, "Analysis"], Iterator[Finding]]
