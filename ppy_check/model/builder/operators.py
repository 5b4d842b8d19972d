"""Operators: ``+ - * / ...`` on tensors, numbers and sequences; unary operators; comparisons, ``in``.

A new operator (or a new operand type for one) goes here.
"""

from __future__ import annotations

import ast

from ppy_check import messages as m
from ppy_check.messages import refusals
from ppy_check.model import budgets, hostmath
from ppy_check.model import types as t
from ppy_check.model.bind import Argument
from ppy_check.model.budgets import Budget, Exceeded
from ppy_check.model.builder.control import _Abandon
from ppy_check.model.builder.facts import _item, _never_equal
from ppy_check.model.builder.part import Part
from ppy_check.model.builder.tables import (
    BINARY_OPS,
    COMPARE_OPS,
    INVERT_REFUSED,
    MIRRORED,
    OPERATOR_NAMES,
    TENSOR_BINARY,
    TENSOR_COMPARE,
    TENSOR_INPLACE,
)
from ppy_check.model.builder.text import display
from ppy_check.model.builder.values import POISON, Poisoned, Value
from ppy_check.model.ir import (
    Const,
    Expr,
    Host,
    HostOp,
    IsNone,
    Length,
    MakeTuple,
    PythonException,
    Query,
    Require,
    Span,
    TensorQuery,
    WriteKind,
)


class Operators(Part):
    """Binary, unary and comparison operators."""

    # --- operators ------------------------------------------------------------------------

    def operator(self, op: ast.operator, left: Expr, right: Expr, span: Span, in_place: bool = False,
                 text: str = "") -> Expr:
        """``left <op> right`` as Python evaluates it: a tensor operator, number arithmetic or tuple joining."""
        left = self.members.unwrap(left, "operand", span) if isinstance(left.type, t.OptionalT) else left
        right = self.members.unwrap(right, "operand", span) if isinstance(right.type, t.OptionalT) else right
        if isinstance(left.type, t.TensorT) or isinstance(right.type, t.TensorT):
            return self.tensor_operator(op, left, right, span, in_place, text)
        if isinstance(left.type, (t.TupleT, t.SeqT)) or isinstance(right.type, (t.TupleT, t.SeqT)):
            return self.sequence_operator(op, left, right, span, text)
        if isinstance(left.type, t.StrT) and isinstance(right.type, t.StrT) and isinstance(op, ast.Add) \
                and isinstance(left, Const) and isinstance(right, Const):
            if len(left.value) + len(right.value) > budgets.MAX_TEXT:
                self.state.over_budget(span, text, Exceeded(Budget.TEXT, budgets.MAX_TEXT))
                raise _Abandon
            return Const(left.value + right.value, t.STR, span)
        if isinstance(left.type, t.StrT) and isinstance(right.type, t.StrT) and isinstance(op, ast.Add):
            return Host(HostOp.ADD, (left, right), t.STR, span)  # text known at run time, joined then
        if isinstance(op, ast.Mult) and {type(left.type), type(right.type)} in ({t.StrT, t.IntT}, {t.StrT, t.BoolT}):
            return self.repeat_str(left, right, span, text)
        host = BINARY_OPS.get(type(op))
        if host is None:
            self.state.type_problem(span, text,
                              refusals.DOES_TAKE(operator_names=OPERATOR_NAMES[type(op)], left_type=left.type, right_type=right.type))
            raise _Abandon
        return self.host(host, [left, right], span, text)

    def repeat_str(self, left: Expr, right: Expr, span: Span, text: str) -> Expr:
        """``"a" * n`` (or ``n * "a"``): the text repeated, empty for a count below one, as Python's."""
        text_value, count = (left, right) if isinstance(left.type, t.StrT) else (right, left)
        if isinstance(text_value, Const) and isinstance(count, Const):
            repeated = max(int(count.value), 0) * len(text_value.value)
            if repeated > budgets.MAX_TEXT:
                self.state.over_budget(span, text, Exceeded(Budget.TEXT, budgets.MAX_TEXT))
                raise _Abandon
            return Const(text_value.value * int(count.value), t.STR, span)
        return Host(HostOp.MUL, (text_value, count), t.STR, span)

    def host(self, op: HostOp, operands: list[Expr], span: Span, text: str, function: str = "",
             kind: t.Type | None = None) -> Expr:
        """Scalar arithmetic: folded when every operand is a literal, else computed on the host."""
        if kind is None:
            try:
                if len(operands) == 2:
                    right = operands[1]
                    kind = hostmath.binary_type(op, operands[0].type, right.type,
                                                right.value if isinstance(right, Const) else None)
                else:
                    kind = hostmath.unary_type(op, operands[0].type)
            except hostmath.HostTypeError as error:
                self.state.type_problem(span, text, refusals.HOST_TYPE_ERROR(error=error))
                raise _Abandon from None
        if all(isinstance(o, Const) for o in operands):
            try:
                value = hostmath.fold(op, [o.value for o in operands if isinstance(o, Const)], function)  # all are
            except budgets.FoldTooLarge as error:
                self.state.over_budget(span, text, error.exceeded)
                raise _Abandon from None
            except (ArithmeticError, ValueError) as error:
                self.state.type_problem(span, text, refusals.ALWAYS_RAISES(error_type=type(error).__name__, error=error))
                raise _Abandon from None
            return Const(value, hostmath.type_of_value(value), span)
        return Host(op, tuple(operands), kind, span, function)

    def sequence_operator(self, op: ast.operator, left: Expr, right: Expr, span: Span, text: str) -> Expr:
        seq_left = isinstance(left.type, (t.TupleT, t.SeqT))
        seq_right = isinstance(right.type, (t.TupleT, t.SeqT))
        if (read := t.read_only(left.type) or t.read_only(right.type)) is not None:
            self.state.type_problem(span, text, refusals.SEQUENCE_OPERATOR(symbol=OPERATOR_NAMES[type(op)],
                                                                           item=read.item))
            raise _Abandon
        if isinstance(op, ast.Add) and seq_left and seq_right:
            kind = self.state.kind_of(left)
            joined = self.exprs.concatenate([(left, True), (right, True)], span)
            if self.exprs.is_size(left) or self.exprs.is_size(right):
                self.state.sizes.add(joined)  # torch.Size + tuple, and tuple + torch.Size, is a torch.Size
            return self.state.mark(joined, kind if kind == self.state.kind_of(right) else None)
        if isinstance(op, ast.Mult) and (seq_left != seq_right):
            sequence, count = (left, right) if seq_left else (right, left)
            if not isinstance(count.type, (t.IntT, t.BoolT)):
                self.state.type_problem(span, text, refusals.TUPLE_REPEATED(count_type=count.type))
                raise _Abandon
            if isinstance(sequence.type, t.TupleT) and isinstance(count, Const):
                if self.state.leaves(sequence.type) * int(count.value) > budgets.MAX_ITEMS:
                    self.state.over_budget(span, text, Exceeded(Budget.ITEMS, budgets.MAX_ITEMS))
                    raise _Abandon
                items = [_item(sequence, i) for i in range(len(sequence.type.items))] * max(int(count.value), 0)
                return MakeTuple(tuple(items), t.TupleT(tuple(i.type for i in items)), span, sequence.aliases)
            seq = self.members.as_sequence(sequence) if isinstance(sequence.type, t.TupleT) else sequence
            if isinstance(sequence.type, t.TupleT) and t.element_type(sequence.type) is None:
                self.state.type_problem(span, text, refusals.TUPLE_MIXED_TYPES_REPEATED())
                raise _Abandon
            return Host(HostOp.MUL, (seq, count), seq.type, span, aliases=seq.aliases)
        self.state.type_problem(span, text,
                          refusals.DOES_TAKE(operator_names=OPERATOR_NAMES[type(op)], left_type=left.type, right_type=right.type))
        raise _Abandon

    def tensor_operator(self, op: ast.operator, left: Expr, right: Expr, span: Span, in_place: bool, text: str) -> Expr:
        symbol = OPERATOR_NAMES[type(op)]
        if in_place and isinstance(left.type, t.TensorT) and TENSOR_INPLACE.get(type(op)) is None:
            in_place = False  # no `Tensor.__imatmul__`: Python computes `x @ y` and rebinds the target
        if in_place:
            method = TENSOR_INPLACE.get(type(op))
            if method is None or not isinstance(left.type, t.TensorT):
                self.state.type_problem(span, text,
                                  refusals.DOES_TAKE_2(symbol=symbol, left_type=left.type, right_type=right.type))
                raise _Abandon
            return self.calls.invoke_method(method, left, [Argument(right)], {}, span, text, write_kind=WriteKind.STORE)
        method = TENSOR_BINARY[type(op)]
        if isinstance(left.type, t.TensorT):
            return self.calls.invoke_method(method, left, [Argument(right)], {}, span, text)
        # A number on the left: Tensor's reflected operators (torch/_tensor.py).
        if method in ("add", "mul", "__and__", "__or__", "__xor__"):
            return self.calls.invoke_method(method, right, [Argument(left)], {}, span, text)
        if method == "sub":
            return self.calls.invoke_function("rsub", [Argument(right), Argument(left)], {}, span, text)
        if method == "div":
            reciprocal = self.exprs.atom(self.calls.invoke_method("reciprocal", right, [], {}, span, text))
            return self.calls.invoke_method("mul", reciprocal, [Argument(left)], {}, span, text)
        if method in ("floor_divide", "remainder", "pow"):
            return self.calls.invoke_function(method, [Argument(left), Argument(right)], {}, span, text)
        if method in ("__lshift__", "__rshift__"):  # Tensor.__rlshift__ and __rrshift__
            shift = "bitwise_left_shift" if method == "__lshift__" else "bitwise_right_shift"
            return self.calls.invoke_function(shift, [Argument(left), Argument(right)], {}, span, text)
        self.state.type_problem(span, text, refusals.LEFT_TENSOR(left_type=left.type, symbol=symbol))
        raise _Abandon

    def unary(self, node: ast.UnaryOp) -> Value:
        span = Span.of(node)
        value = self.exprs.expr(node.operand)
        if isinstance(value, Poisoned):
            return POISON
        operand = self.exprs.atom(value, node.operand)
        if isinstance(operand.type, t.OptionalT) and not isinstance(node.op, ast.Not):
            operand = self.members.unwrap(operand, display(node.operand), span)
        if isinstance(operand.type, t.TensorT):
            if isinstance(node.op, ast.Not):
                return self.state.unsupported(span, display(node), refusals.READS_TENSOR_VALUE())
            if isinstance(node.op, ast.Invert):
                self.require_integral(operand, span)
            method = {ast.USub: "neg", ast.Invert: "bitwise_not", ast.UAdd: "positive"}[type(node.op)]
            return self.calls.invoke_method(method, operand, [], {}, span, display(node))
        if isinstance(node.op, ast.Not) and isinstance(operand.type, t.OptionalT):
            return IsNone(operand, False, t.BOOL, span)
        if isinstance(node.op, ast.Not) and isinstance(operand.type, t.TupleT):
            return Const(not operand.type.items, t.BOOL, span)  # `not sizes`: empty or not, known here
        if isinstance(node.op, ast.Not) and isinstance(operand.type, t.SeqT):
            return self.host(HostOp.EQ, [self.exprs.atom(Length(operand, t.INT, span)), Const(0, t.INT, span)], span,
                             display(node))
        op = {ast.USub: HostOp.NEG, ast.UAdd: HostOp.POS, ast.Invert: HostOp.INVERT, ast.Not: HostOp.NOT}[type(node.op)]
        if op is HostOp.NOT and not t.is_number(operand.type):
            return self.state.unsupported(span, display(node), refusals.READS_TENSOR_VALUE_2(operand_type=operand.type))
        return self.host(op, [operand], span, display(node))

    def require_integral(self, operand: Expr, span: Span) -> None:
        """``~x`` is Tensor.__invert__, which refuses a floating or complex tensor with TypeError before it
        dispatches (torch's python_variable_methods.cpp), where ``bitwise_not`` would raise NotImplementedError."""
        for query in (Query.IS_FLOATING_POINT, Query.IS_COMPLEX):
            kind = self.exprs.atom(TensorQuery(operand, query, (), t.BOOL, span))
            holds = self.exprs.atom(self.host(HostOp.NOT, [kind], span, "~"))
            self.state.body.append(Require(holds, PythonException.TYPE_ERROR, (INVERT_REFUSED,), span))

    def compare(self, node: ast.Compare) -> Value:
        span = Span.of(node)
        operands = [self.exprs.expr(node.left)] + [self.membership(c) if isinstance(op, (ast.In, ast.NotIn)) else
                                             self.exprs.expr(c) for op, c in zip(node.ops, node.comparators)]
        if any(isinstance(o, Poisoned) for o in operands):
            return POISON
        values = [self.exprs.atom(o, n) for o, n in zip(operands, [node.left, *node.comparators])]
        if len(node.ops) > 1 and any(isinstance(v.type, t.TensorT) for v in values):
            # `a < x < b` on tensors is `and`, which reads the tensor's value: a branch.
            self.state.problems.branches.append((self.state._span(span), m.message(
                m.BRANCH_CHAINED, region=self.state.region.name, text=display(node))))
            self.state.complete = False
            return POISON
        results = []
        for op, left, right in zip(node.ops, values, values[1:]):
            results.append(self.exprs.atom(self.compare_pair(op, left, right, span, display(node)), node))
        if len(results) == 1:
            return results[0]
        return self.host(HostOp.ALL, results, span, display(node), kind=t.BOOL)

    def membership(self, node: ast.expr) -> Value:
        """What `in` tests in torch's Python code: a list it is building, read without letting it escape (it may
        still grow), or a set display as the tuple of its items (of numbers, strings and dtypes, whose hashes agree
        with their equality)."""
        if not self.state.frame.dialect.models_python_data:
            return self.exprs.expr(node)
        if isinstance(node, ast.Name) and node.id in self.state.frame.lists:
            return self.state.env[node.id]
        if not isinstance(node, ast.Set):
            return self.exprs.expr(node)
        items = [self.exprs.atom(self.exprs.expr(item), item) for item in node.elts]
        if not all(t.is_number(i.type) or isinstance(i.type, (t.StrT, t.DtypeT, t.LayoutT)) for i in items):
            return self.state.unsupported(Span.of(node), self.state.frame.called_as,
                                    refusals.LIBRARY_TESTS_MEMBERSHIP(node=display(node)))
        return MakeTuple(tuple(items), t.TupleT(tuple(i.type for i in items)), Span.of(node))

    def compare_pair(self, op: ast.cmpop, left: Expr, right: Expr, span: Span, text: str) -> Expr:
        if not isinstance(op, (ast.In, ast.NotIn)) and \
                (read := t.read_only(left.type) or t.read_only(right.type)) is not None:
            self.state.type_problem(span, text, refusals.SEQUENCE_COMPARED(item=read.item))
            raise _Abandon
        if isinstance(op, (ast.Eq, ast.NotEq)) and (_never_equal(left.type, right.type) or isinstance(left.type, t.TupleT)
                                                    and isinstance(right.type, t.TupleT)
                                                    and len(left.type.items) != len(right.type.items)):
            # Python's `==` across these types is False whatever the values (`dim == ()` for an int dim, or for
            # a tuple of another length).
            return Const(isinstance(op, ast.NotEq), t.BOOL, span)
        if isinstance(op, (ast.Is, ast.IsNot)) and type(left.type) is type(right.type) and \
                isinstance(left.type, (t.DtypeT, t.LayoutT, t.MemoryFormatT)):
            # torch's dtypes, layouts and memory formats are singletons: identity is equality.
            return self.compare_pair(ast.Eq() if isinstance(op, ast.Is) else ast.NotEq(), left, right, span, text)
        if isinstance(op, (ast.Is, ast.IsNot)):
            negate = isinstance(op, ast.IsNot)
            for value, other in ((left, right), (right, left)):
                if isinstance(other.type, t.NoneT):
                    if isinstance(value.type, t.NoneT):
                        return Const(not negate, t.BOOL, span)
                    if isinstance(value.type, t.OptionalT):
                        return IsNone(value, negate, t.BOOL, span)
                    return Const(negate, t.BOOL, span)  # a value that can never be None
            answer = self.state.frame.dialect.identity(left, right, negate, span, text)
            if answer is not None:
                return answer
            self.state.type_problem(span, text, refusals.COMPARES_IDENTITY_NONE())
            raise _Abandon
        if isinstance(op, (ast.In, ast.NotIn)):
            if isinstance(right.type, t.TupleT) and not isinstance(left.type, t.TensorT) and \
                    not any(isinstance(i, t.TensorT) for i in right.type.items):
                equal = [self.exprs.atom(self.compare_pair(ast.Eq(), left, _item(right, i), span, text))
                         for i in range(len(right.type.items))]
                found = self.any_of(equal, span, text)
                return self.host(HostOp.NOT, [found], span, text) if isinstance(op, ast.NotIn) else found
            self.state.unsupported(span, text, refusals.READS_VALUES_BACK())
            raise _Abandon
        if all(isinstance(v.type, (t.TupleT, t.SeqT)) and t.element_type(v.type) == t.INT for v in (left, right)):
            # Shapes compared (`target.size() == input.size()`): Python's tuple order is std::vector's.
            return Host(COMPARE_OPS[type(op)], (self.members.as_sequence(left), self.members.as_sequence(right)), t.BOOL, span)
        if isinstance(op, (ast.Eq, ast.NotEq)) and type(left.type) is type(right.type) and \
                isinstance(left.type, (t.StrT, t.DtypeT, t.LayoutT, t.MemoryFormatT, t.DeviceT, t.EllipsisT)):
            if isinstance(left, Const) and isinstance(right, Const):
                return Const((left.value == right.value) == isinstance(op, ast.Eq), t.BOOL, span)
            return Host(COMPARE_OPS[type(op)], (left, right), t.BOOL, span)  # `x.layout == torch.strided`
        name = TENSOR_COMPARE[type(op)]
        left = self.members.unwrap(left, "operand", span) if isinstance(left.type, t.OptionalT) else left
        right = self.members.unwrap(right, "operand", span) if isinstance(right.type, t.OptionalT) else right
        if isinstance(left.type, t.TensorT):
            return self.calls.invoke_method(name, left, [Argument(right)], {}, span, text)
        if isinstance(right.type, t.TensorT):
            return self.calls.invoke_method(MIRRORED[name], right, [Argument(left)], {}, span, text)
        return self.host(COMPARE_OPS[type(op)], [left, right], span, text)

    def any_of(self, values: list[Expr], span: Span, text: str) -> Expr:
        if not values:
            return Const(False, t.BOOL, span)
        negated = [self.exprs.atom(self.host(HostOp.NOT, [v], span, text)) for v in values]
        return self.host(HostOp.NOT, [self.exprs.atom(self.host(HostOp.ALL, negated, span, text, kind=t.BOOL))], span, text)
