"""The region dialect: what a user's region may do under the rules, and what it refuses.

A refusal that applies to a user's code only (captures, rebound names,
questions the user answers) is a method here, asked through ``Dialect``.
So are a region's checks (``assert``, and an ``if`` whose body only raises,
``region.is_check``): on host values they compile to ``Require``s raising
Python's exception with Python's message (an ``assert`` inside an
``Assertion``, which ``python -O`` skips); what they cannot compile is
ppy-branch's finding (``problems.branches``), with what to write instead.
"""

from __future__ import annotations

import ast

from ppy_check import messages as m
from ppy_check.messages import refusals
from ppy_check.model import types as t
from ppy_check.model.bind import Argument
from ppy_check.model.builder.control import _Abandon
from ppy_check.model.builder.facts import _isinstance_answer
from ppy_check.model.builder.part import Part
from ppy_check.model.builder.text import display
from ppy_check.model.builder.values import POISON, Message, Poisoned, RestTaken, Value
from ppy_check.model.ir import Assertion, Branch, Const, Expr, HostOp, PythonException, Read, Require, ShownSeq, Span
from ppy_check.model.problems import Capture, CaptureOrigin
from ppy_check.region import is_check

# What `isinstance(x, ...)` and `torch.is_tensor(x)` are called as, when the module does not rebind them.
_ISINSTANCE = ("isinstance", "builtins.isinstance")
_IS_TENSOR = "torch.is_tensor"


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
        node = statements[index]
        assert isinstance(node, ast.If)  # Statements.statements asks this of an `if` alone
        known = None if is_check(node) else self.decided(node.test)
        if known is None:
            return RestTaken.NOT_HANDLED  # a check (statement), or a branch the rule reports
        self.record_decided(node, node.orelse if known.value else node.body)
        self.stmts.statements(node.body if known.value else node.orelse)
        return RestTaken.NO

    def statement(self, node: ast.stmt) -> bool:
        if isinstance(node, ast.Assert):
            self.assertion(node)
            return True
        if isinstance(node, ast.If) and is_check(node):
            self.raise_check(node)
            return True
        return False

    def expression(self, node: ast.expr) -> Value | None:
        if isinstance(node, ast.IfExp):
            known = self.decided(node.test)
            if known is not None:
                self.record_decided(node, [node.orelse if known.value else node.body])
                return self.exprs._expr(node.body if known.value else node.orelse)  # only the way taken, as Python
        if isinstance(node, ast.BoolOp) and self.state.frame.node is not self.state.region.node:
            return self.decided_bool(node)
        return None

    # --- a helper's tests known where the region is built --------------------------------

    def decided(self, test: ast.expr) -> Const | None:
        """Whether the test of an `if` (or `x if test else y`) in a helper holds, where the builder knows it: a literal
        argument (`helper(x, True)`), a value folded from literals, or a truth the type decides (None, a tuple).
        Then the `if` picks its way as the region is built, as torch's own Python code folds (library_dialect):
        the compiled region holds only that way, for every call. A region's own tests are on its parameters, known
        only at run time: a branch."""
        if self.state.frame.node is self.state.region.node:
            return None
        return self.library_dialect.try_truth(test)

    def decided_bool(self, node: ast.BoolOp) -> Const | None:
        """`a and b` (`or`) in a helper, where the operands Python evaluates are known here: the operand Python's
        short-circuit gives, those after it never evaluated. None where one it needs is known only at run time."""
        is_or = isinstance(node.op, ast.Or)
        for taken, operand in enumerate(node.values):
            known = self.library_dialect.try_constant(operand)
            if known is None:
                return None
            if bool(known.value) == is_or or taken == len(node.values) - 1:
                self.record_decided(node, node.values[taken + 1:])
                return known
        return None  # unreachable: a BoolOp has operands

    def record_decided(self, node: ast.If | ast.IfExp | ast.BoolOp, untaken: list[ast.stmt] | list[ast.expr]) -> None:
        """The test, and what the way not taken holds (its `elif`s, a `raise` there), are no branch on this reach:
        that code never runs here."""
        frame = self.state.frame
        for decided in (node, *(inner for way in untaken for inner in ast.walk(way))):
            self.state.decided.append((id(decided), frame.context, frame.anchor))

    def call(self, node: ast.Call) -> Value | None:
        resolved = self.state.frame.scope.resolve(node.func)
        if resolved in _ISINSTANCE and "isinstance" not in self.state.env or resolved == _IS_TENSOR:
            return self.type_test(node, resolved == _IS_TENSOR)
        return None

    def builtin(self, name: str, args: list[Argument], keywords: dict[str, Expr], span: Span,
                shown: str) -> Expr | None:
        return None

    def identity(self, left: Expr, right: Expr, negate: bool, span: Span, text: str) -> Const | None:
        return None

    # --- checks -------------------------------------------------------------------------

    def assertion(self, node: ast.Assert) -> None:
        """`assert test, message`: the test, then (were it false) the message, as Python computes them, all of it
        skipped where Python skips asserts (``python -O``)."""
        saved = self.state.body
        self.state.body = []
        try:
            self.fails(self.truth(node.test), PythonException.ASSERTION_ERROR, node.msg, Span.of(node))
            body = self.state.body
        finally:
            self.state.body = saved
        if body:
            self.state.body.append(Assertion(tuple(body), Span.of(node)))

    def raise_check(self, node: ast.If) -> None:
        """`if test: raise E(message)`: a check that `test` is false, raising Python's exception and message."""
        raised = node.body[0]
        assert isinstance(raised, ast.Raise)  # is_check
        error = self.exception(raised)
        holds = self.truth(node.test, negate=True)
        message = raised.exc.args[0] if isinstance(raised.exc, ast.Call) and raised.exc.args else None
        self.fails(holds, error, message, Span.of(node))

    def fails(self, holds: Expr, error: PythonException, text: ast.expr | None, span: Span) -> None:
        """Raise ``error`` where ``holds`` is false, with the message ``text`` computes, computed only then (as
        Python computes it only then: what could fail computing it fails only there too)."""
        if isinstance(holds, Const) and holds.value:
            return  # it always holds: Python never computes the message (`assert isinstance(x, T), type(x)`)
        saved = self.state.body
        self.state.body = []
        try:
            message = self.message(text) if text is not None else ("",)
            computed = self.state.body
        finally:
            self.state.body = saved
        if not computed:
            self.state.body.append(Require(holds, error, message, span))
            return
        failing = Require(Const(False, t.BOOL, span), error, message, span)
        self.state.body.append(Branch(holds, (), (*computed, failing), (), span))

    def refuse(self, node: ast.AST, template: str, **fields: object) -> _Abandon:
        """Record a check ppy-branch refuses; the statement goes no further (raise what this returns)."""
        self.state.problems.branches.append((self.state._span(Span.of(node)), m.message(
            template, self.state.frame.context, region=self.state.region.name, **fields)))
        self.state.complete = False
        return _Abandon()

    def exception(self, node: ast.Raise) -> PythonException:
        """The exception a check raises: one Python's C API names, made from at most one message."""
        text = display(node)
        call = node.exc
        if call is None or isinstance(call, ast.Call) and (len(call.args) > 1 or call.keywords) or \
                node.cause is not None and not (isinstance(node.cause, ast.Constant) and node.cause.value is None):
            raise self.refuse(node, m.BRANCH_CHECK_RAISE, text=text)
        func = call.func if isinstance(call, ast.Call) else call
        name = self.state.frame.scope.resolve(func)
        error = next((e for e in PythonException if e.builtin and name in (e.value, f"builtins.{e.value}")), None)
        if error is None or isinstance(func, ast.Name) and func.id in self.state.env:
            known = ", ".join(f"`{e.value}`" for e in PythonException if e.builtin)
            raise self.refuse(node, m.BRANCH_CHECK_EXCEPTION, text=text, name=display(func), known=known)
        return error

    def message(self, text: ast.expr) -> Message:
        """A check's message as Python's str() of the exception shows it: literal text, an f-string's pieces, a
        value; refused where the compiled code could not show it as Python does."""
        if isinstance(text, ast.Constant) and isinstance(text.value, str):
            return (text.value,)
        pieces: list[str | Expr | ShownSeq] = []
        parts = text.values if isinstance(text, ast.JoinedStr) else [text]
        for part in parts:
            if isinstance(part, ast.Constant) and isinstance(part.value, str):
                pieces.append(part.value)
                continue
            value = part.value if isinstance(part, ast.FormattedValue) else part
            if isinstance(part, ast.FormattedValue) and (part.format_spec is not None or
                                                         part.conversion not in (-1, ord("s"))):
                raise self.refuse(text, m.BRANCH_CHECK_MESSAGE, text=display(text))
            shown = self.shown(value)
            if shown is None:
                raise self.refuse(text, m.BRANCH_CHECK_MESSAGE, text=display(text))
            pieces.extend(shown)
        return tuple(pieces)

    def shown(self, node: ast.expr) -> Message | None:
        """One value of a message as Python's str() shows it: its text where it is known here, else the pieces
        the compiled code prints as Python does; None where it cannot."""
        known = self.library_dialect.try_constant(node)
        if known is not None:
            value = known.value
            return (str(value),) if isinstance(value, (str, int, float, bool)) or value is None else None
        value = self.checked_value(node)
        return self.stmts.shown(value) if isinstance(value, Expr) else None

    def checked_value(self, node: ast.expr) -> Value:
        """The value a check reads: refused where it is a tensor's value read back (`(x > 0).all().item()`),
        abandoned where its own problem is recorded already."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("item", "tolist") \
                and not node.args and not node.keywords:
            read = self.exprs.expr(node.func.value)
            if isinstance(read, Expr) and isinstance(read.type, t.TensorT):
                raise self.refuse(node, m.BRANCH_CHECK_TENSOR, test=display(node))
        value = self.exprs.expr(node)
        if isinstance(value, Poisoned):
            raise _Abandon
        return value

    def truth(self, node: ast.expr, negate: bool = False) -> Expr:
        """Whether ``node`` is true, as Python's truth test asks it, as a host bool (``negate``: whether it is false).
        `and` and `or` short-circuit as Python's do: what the right-hand side computes runs only where Python
        would run it."""
        span = Span.of(node)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return self.truth(node.operand, not negate)
        if isinstance(node, ast.BoolOp):
            is_or = isinstance(node.op, ast.Or)
            result = self.truth(node.values[0])
            for operand in node.values[1:]:
                result = self.short_circuit(result, operand, is_or, span)
            return self.negated(result, span) if negate else result
        value = self.checked_value(node)
        if not isinstance(value, Expr):
            raise self.refuse(node, m.BRANCH_CHECK_NOT_VALUE, test=display(node))
        if isinstance(value.type, t.TensorT) or \
                isinstance(value.type, t.OptionalT) and isinstance(value.type.inner, t.TensorT):
            raise self.refuse(node, m.BRANCH_CHECK_TENSOR, test=display(node))
        truth: Expr
        if isinstance(value, Const) and (isinstance(value.value, (bool, int, float, str)) or value.value is None):
            truth = Const(bool(value.value), t.BOOL, span)
        elif isinstance(value.type, t.BoolT):
            truth = value
        elif t.is_number(value.type):
            truth = self.exprs.atom(self.ops.host(HostOp.TO_BOOL, [value], span, display(node), kind=t.BOOL))
        elif isinstance(value.type, t.TupleT):
            truth = Const(bool(value.type.items), t.BOOL, span)  # a tuple of known length
        elif isinstance(value.type, t.NoneT):
            truth = Const(False, t.BOOL, span)
        else:
            raise self.refuse(node, m.BRANCH_CHECK_TEST, test=display(node), type=value.type)
        return self.negated(truth, span) if negate else truth

    def negated(self, truth: Expr, span: Span) -> Expr:
        if isinstance(truth, Const):
            return Const(not truth.value, t.BOOL, span)
        return self.exprs.atom(self.ops.host(HostOp.NOT, [truth], span, "not"))

    def short_circuit(self, first: Expr, operand: ast.expr, is_or: bool, span: Span) -> Expr:
        """`first or operand` (`and`), as truth values: ``operand`` is computed only where ``first`` does not
        decide (a C++ `if` around what it computes, when it computes anything)."""
        if isinstance(first, Const):
            return first if bool(first.value) == is_or else self.truth(operand)
        saved = self.state.body
        self.state.body = []
        try:
            second = self.truth(operand)
            computed = self.state.body
        finally:
            self.state.body = saved
        if not computed:
            if isinstance(second, Const):
                return first if bool(second.value) != is_or else second
            if is_or:
                return self.ops.any_of([first, second], span, "or")
            return self.exprs.atom(self.ops.host(HostOp.ALL, [first, second], span, "and", kind=t.BOOL))
        var = self.state.new_var("", t.BOOL)
        decided = Const(is_or, t.BOOL, span)
        if is_or:
            self.state.body.append(Branch(first, (), tuple(computed), ((var, decided, second),), span))
        else:
            self.state.body.append(Branch(first, tuple(computed), (), ((var, second, decided),), span))
        return Read(var, t.BOOL, span)

    def type_test(self, node: ast.Call, is_tensor: bool) -> Value:
        """`isinstance(x, classes)` or `torch.is_tensor(x)`: answered by the model's type of ``x`` (a region's
        arguments are exactly their annotated types, or the Python body runs)."""
        shown = display(node)
        if node.keywords or len(node.args) != (1 if is_tensor else 2) or \
                any(isinstance(arg, ast.Starred) for arg in node.args):
            return self.state.unsupported(Span.of(node), shown, refusals.TYPE_TEST_ARGUMENTS())
        value = self.exprs.expr(node.args[0])
        if isinstance(value, Poisoned):
            return value
        if not isinstance(value, Expr):
            return self.state.unsupported(Span.of(node), shown, refusals.TYPE_TEST_NOT_VALUE(
                value=display(node.args[0])))
        if is_tensor:
            names = frozenset({"torch.Tensor"})
        else:
            classes = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
            found = {self.state.frame.scope.resolve(c) or display(c) for c in classes}
            names = frozenset(n if "." in n else f"builtins.{n}" for n in found)
        answer = _isinstance_answer(value.type, names, self.state.kind_of(value))
        if answer is None:
            return self.state.unsupported(Span.of(node), shown, refusals.TYPE_TEST_UNANSWERED(
                value=display(node.args[0]), type=value.type))
        return Const(answer, t.BOOL, Span.of(node))
