"""What the model builder could not give a meaning to, as typed records the rules turn into findings.

Each record belongs to one rule (captured, unsupported, type); constructs the
structural rules report from the syntax (loops, branches, nested scopes) are
only marked, so that a region with any of them has no model and the same
finding is never reported twice.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from ppy_check.messages import Message
from ppy_check.model.budgets import Exceeded
from ppy_check.model.ir import Span


class CaptureOrigin(enum.Enum):
    GLOBAL = "global"
    IMPORTED = "imported"
    CLOSURE = "closure"
    ATTRIBUTE = "attribute"
    UNDEFINED = "undefined"
    REBOUND = "rebound"  # a module-level name that `globals()[...]`, `exec` or a star import rebinds


@dataclass(frozen=True)
class Capture:
    span: Span
    name: str
    origin: CaptureOrigin
    detail: str  # the line it was bound at, the module it came from, the enclosing function, the attribute
    context: str = ""  # how the region reached the helper it is in ("" in the region itself)
    how: str = ""  # for REBOUND: the statement that rebinds it ("exec(...)", "from settings import *")
    star: str | None = None  # for REBOUND by a star import: its module


@dataclass(frozen=True)
class Unsupported:
    span: Span
    name: str  # the call or attribute as written
    why: Message  # a messages.refusals entry with its fields
    attribute: bool = False
    context: str = ""


@dataclass(frozen=True)
class Suggestion:
    """A mechanical edit that settles a problem: ``span`` (in the region's own file) becomes ``content``.
    ``safe`` when the code means what it did (``ppy-check --fix``), else only with ``--unsafe-fixes``."""

    span: Span
    content: str
    message: str
    safe: bool


@dataclass(frozen=True)
class TypeProblem:
    """What Python would reject when the region runs (a TypeError, an unbound name, an overflow)."""

    span: Span
    subject: str
    why: Message  # a messages.refusals entry with its fields
    context: str = ""
    fix: Suggestion | None = None


@dataclass(frozen=True)
class OverBudget:
    """The builder stopped following the region: a budget of work ran out (``budgets``), or it failed."""

    span: Span
    subject: str  # the expression it was at, as written
    exceeded: Exceeded | None  # None: the builder itself failed (``error`` says how)
    context: str = ""
    error: str = ""


@dataclass
class Problems:
    captures: list[Capture] = field(default_factory=list)
    unsupported: list[Unsupported] = field(default_factory=list)
    types: list[TypeProblem] = field(default_factory=list)
    # ppy-branch's findings the builder finds: chained comparisons of tensors, checks it cannot compile
    branches: list[tuple[Span, Message]] = field(default_factory=list)
    structural: list[Span] = field(default_factory=list)  # reported by the loop, branch and syntax rules
    budgets: list[OverBudget] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.captures or self.unsupported or self.types or self.branches or self.structural
                    or self.budgets)
