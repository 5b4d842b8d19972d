"""The protocol every dialect answers: what a frame's code may do, asked where the dialects differ."""

from __future__ import annotations

import ast
from typing import Protocol

from ppy_check import messages as m
from ppy_check.model.bind import Argument
from ppy_check.model.builder.values import Poisoned, RestTaken, Value
from ppy_check.model.ir import Const, Expr, Span
from ppy_check.model.problems import CaptureOrigin


class Dialect(Protocol):
    """The language a frame's code is written in, asked wherever a user's region and torch's own code differ.

    Policies are answers to one question each; hooks build the forms only a dialect has (None, False or
    NOT_HANDLED: the form is not the dialect's, and the builder's own code builds or refuses it)."""

    # The runtime proves what the model took a module-level name (or a module's attribute) to be.
    records_assumptions: bool
    # A module-level name the module rebinds behind its assignments (or a star import may bind) is refused.
    refuses_rebound_names: bool
    # Names resolve into torch's shipped Python source: its modules, functions, bindings and constants.
    reads_torch_source: bool
    # What torch's code asks the world is answered even where the user sets the switch it reads.
    answers_user_switches: bool
    # Python data a function builds as it goes (growing lists, set displays, dicts spread as keywords,
    # generators consumed in place) is modelled.
    models_python_data: bool
    # A finding may offer the user a fix (`x.mT()` as `x.mT`) or an alternative (torch_python.ALTERNATIVES).
    offers_fixes: bool
    # A helper's model may be reused as a template for calls with the same argument signature.
    reuses_templates: bool

    def subject(self, name: str, why: m.Message) -> tuple[str, m.Message]:
        """What a finding names, and what it says, for a problem at ``name``."""

    def budget_subject(self, subject: str) -> str:
        """What a budget finding names."""

    def refused(self) -> None:
        """A problem was recorded: whatever the dialect stops with then (torch's code: the whole call)."""

    def capture(self, span: Span, name: str, origin: CaptureOrigin, detail: str) -> Poisoned:
        """A name read from outside the function that the model cannot take as fixed."""

    def structural(self, node: ast.AST) -> None:
        """A construct the loop, branch or syntax rule reports: what the dialect records beside that."""

    def block_if(self, statements: list[ast.stmt], index: int) -> RestTaken:
        """The `if` at ``statements[index]``, where the dialect builds it with the statements after it."""

    def statement(self, node: ast.stmt) -> bool:
        """Build a statement only this dialect has (True), or leave it to the builder (False)."""

    def expression(self, node: ast.expr) -> Value | None:
        """Build a conditional, boolean, dict or list-comprehension expression this dialect folds, or None."""

    def call(self, node: ast.Call) -> Value | None:
        """Build a call only this dialect has (checks, `isinstance`, `super()`, list growth), or None."""

    def builtin(self, name: str, args: list[Argument], keywords: dict[str, Expr], span: Span,
                shown: str) -> Expr | None:
        """A builtin call only this dialect has (over sequences known here), or None."""

    def identity(self, left: Expr, right: Expr, negate: bool, span: Span, text: str) -> Const | None:
        """`left is right` beyond `is None`: its answer, or None (then the builder refuses it)."""
