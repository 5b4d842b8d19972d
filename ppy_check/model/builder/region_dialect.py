"""The region dialect: what a user's region may do under the rules, and what it refuses.

A refusal that applies to a user's code only (captures, rebound names,
questions the user answers) is a method here, asked through ``Dialect``.
"""

from __future__ import annotations

import ast

from ppy_check import messages as m
from ppy_check.model.bind import Argument
from ppy_check.model.builder.part import Part
from ppy_check.model.builder.values import POISON, Poisoned, RestTaken, Value
from ppy_check.model.ir import Const, Expr, Span
from ppy_check.model.problems import Capture, CaptureOrigin


class RegionDialect(Part):
    """A user's region (or a helper it calls), under the rules: what it may not do is a finding for the user."""

    records_assumptions = True
    refuses_rebound_names = True
    reads_torch_source = False
    answers_user_switches = False
    models_python_data = False
    offers_fixes = True
    reuses_templates = True

    def subject(self, name: str, why: m.Message) -> tuple[str, m.Message]:
        return name, why

    def budget_subject(self, subject: str) -> str:
        return subject

    def refused(self) -> None:
        return None

    def capture(self, span: Span, name: str, origin: CaptureOrigin, detail: str) -> Poisoned:
        self.state.problems.captures.append(Capture(self.state._span(span), name, origin, detail,
                                                      self.state.frame.context))
        self.state.complete = False
        return POISON

    def structural(self, node: ast.AST) -> None:
        return None

    def block_if(self, statements: list[ast.stmt], index: int) -> RestTaken:
        return RestTaken.NOT_HANDLED

    def statement(self, node: ast.stmt) -> bool:
        return False

    def expression(self, node: ast.expr) -> Value | None:
        return None

    def call(self, node: ast.Call) -> Value | None:
        return None

    def builtin(self, name: str, args: list[Argument], keywords: dict[str, Expr], span: Span,
                shown: str) -> Expr | None:
        return None

    def identity(self, left: Expr, right: Expr, negate: bool, span: Span, text: str) -> Const | None:
        return None
