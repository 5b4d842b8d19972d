"""Python builtins (``int``, ``min``, ``len``...), ``math`` functions on host values, and the few functions of
``functools`` and ``operator`` real code passes functions to (``reduce``, ``partial``, ``operator.mul``).

A new builtin a region may call goes in ``HostMath.builtin``; one only
torch's Python code uses goes in the library dialect's ``library_builtin``.
"""

from __future__ import annotations

import ast

from ppy_check import torch_python
from ppy_check.messages import refusals
from ppy_check.model import budgets, hostmath
from ppy_check.model.budgets import Budget, Exceeded
from ppy_check.model import types as t
from ppy_check.model.bind import Argument
from ppy_check.model.builder.control import _Abandon
from ppy_check.model.builder.facts import _item
from ppy_check.model.builder.part import Part
from ppy_check.model.builder.tables import BINARY_OPS
from ppy_check.model.builder.values import Helper, Partial, Value
from ppy_check.model.ir import Const, Expr, Host, HostOp, Length, MakeSeq, MakeTuple, Query, Span, TensorQuery

# operator.<name> and the operator it is (`reduce(operator.mul, sizes, 1)`).
OPERATOR_FUNCTIONS = {name: op for op, name in (
    (ast.Add, "add"), (ast.Sub, "sub"), (ast.Mult, "mul"), (ast.Div, "truediv"), (ast.FloorDiv, "floordiv"),
    (ast.Mod, "mod"), (ast.Pow, "pow"), (ast.LShift, "lshift"), (ast.RShift, "rshift"), (ast.BitAnd, "and_"),
    (ast.BitOr, "or_"), (ast.BitXor, "xor"), (ast.MatMult, "matmul")) if op in BINARY_OPS or op is ast.MatMult}


class HostMath(Part):
    """Python builtins and math on host values."""

    def builtin(self, name: str, args: list[Argument], keywords: dict[str, Expr], span: Span, shown: str) -> Expr:
        if name == "callable" and len(args) == 1 and not args[0].spread and not keywords:
            # Only a function passed as a value is callable: a region's other values are numbers, tensors, tuples.
            return Const(isinstance(args[0].value.type, t.FunctionT), t.BOOL, span)
        found = self.state.frame.dialect.builtin(name, args, keywords, span, shown)
        if found is not None:
            return found
        values = [a.value for a in args]
        if any(a.spread for a in args) or keywords:
            self.state.unsupported(span, shown, refusals.TENSOR_DIM_TAKES_2(name=name))
            raise _Abandon
        conversions = {"int": HostOp.TO_INT, "float": HostOp.TO_FLOAT, "bool": HostOp.TO_BOOL}
        if name in conversions and len(values) == 1:
            value = values[0]
            if isinstance(value.type, (t.TensorT, t.SeqT, t.TupleT)):
                self.state.unsupported(span, shown, (refusals.CONVERSION_READS_TENSOR if isinstance(value.type, t.TensorT)
                                               else refusals.CONVERSION_OF_SEQUENCE)(name=name, type=value.type))
                raise _Abandon
            if name == "float" and isinstance(value, Const) and isinstance(value.value, str):
                try:
                    return Const(float(value.value), t.FLOAT, span)
                except ValueError:
                    self.state.type_problem(span, shown, refusals.FLOAT_RAISES_VALUEERROR(value_value=value.value))
                    raise _Abandon from None
            kinds: dict[str, t.Type] = {"int": t.INT, "float": t.FLOAT, "bool": t.BOOL}
            kind = kinds[name]
            return self.ops.host(conversions[name], [value], span, shown, kind=kind) if t.is_number(value.type) else \
                self._refuse_conversion(name, value, span, shown)
        if name == "abs" and len(values) == 1:
            if isinstance(values[0].type, t.TensorT):
                return self.calls.invoke_method("abs", values[0], [], {}, span, shown)
            return self.ops.host(HostOp.ABS, values, span, shown)
        if name in ("min", "max") and len(values) == 1 and isinstance(values[0].type, (t.TupleT, t.SeqT)):
            return self.extreme_of(name, values[0], span, shown)
        if name in ("min", "max") and len(values) >= 2:
            if not all(t.is_number(v.type) for v in values):
                self.state.unsupported(span, shown,
                                 (refusals.MIN_OF_TENSORS if name == "min" else refusals.MAX_OF_TENSORS)(name=name))
                raise _Abandon
            return self.extreme(name, values, span, shown)
        if name == "round" and len(values) in (1, 2) and t.is_number(values[0].type):
            if len(values) == 1:
                return self.ops.host(HostOp.ROUND, values, span, shown, kind=t.INT)
            if not isinstance(values[1].type, t.IntT):
                self.state.type_problem(span, shown, refusals.ROUND_DIGITS_MUST())
                raise _Abandon
            kind = t.INT if isinstance(values[0].type, (t.IntT, t.BoolT)) else values[0].type
            return self.ops.host(HostOp.ROUND_DIGITS, values, span, shown, kind=kind)
        if name == "len" and len(values) == 1:
            kind = values[0].type
            if isinstance(kind, t.TupleT):
                return Const(len(kind.items), t.INT, span)
            if isinstance(kind, t.SeqT):
                return Length(values[0], t.INT, span)
            if isinstance(kind, t.TensorT):
                # `len(x)` is `Tensor.__len__` (torch/_tensor.py): TypeError for a 0-d tensor, else the first size.
                method = torch_python.tensor_method("__len__")
                if isinstance(method, tuple):
                    length = self.inliner.inline(Helper(method[0], method[1].scope, method[1].path, library=True),
                                         [Argument(values[0])], {}, span, shown)
                    if isinstance(length, Expr):
                        return length
                    raise _Abandon
                return TensorQuery(values[0], Query.SIZE, (Const(0, t.INT, span),), t.INT, span)
        if name in ("list", "tuple") and len(values) == 1 and isinstance(values[0].type, (t.TupleT, t.SeqT)):
            value = values[0]
            if isinstance(value.type, t.TupleT) and value.type.structseq is not None:
                # `tuple(torch.max(x, 1))` is a plain tuple of the fields
                items = tuple(_item(value, i) for i in range(len(value.type.items)))
                return self.state.mark(MakeTuple(items, t.TupleT(value.type.items), span, value.aliases), name)
            if self.exprs.is_size(value):
                # `tuple(x.shape)`: no torch.Size
                return self.state.mark(MakeSeq(((value, True),), value.type, span, value.aliases), name)
            # `list(x.shape[2:])`: a region's sequences are values, either spelling; a new one of that kind.
            return self.state.mark(self.exprs.concatenate([(value, True)], span), name)
        if name == "range" and 1 <= len(values) <= 3 and all(isinstance(v.type, (t.IntT, t.BoolT)) for v in values):
            return self.range_of(values, span, shown)
        self.state.unsupported(span, shown, refusals.PYTHON_CLASS_OF() if name == "type" else
                               refusals.PYTHON_BUILTIN_RUNS())
        raise _Abandon

    def range_of(self, values: list[Expr], span: Span, shown: str) -> Expr:
        """``range(...)`` taken whole (``tuple(range(len(x.shape)))``, ``x.sum(dim=tuple(range(1, x.ndim)))``):
        of literals, the tuple of its numbers; else a sequence computed when the region runs. (A loop over it is
        a loop, ppy-loop's.)"""
        if all(isinstance(v, Const) for v in values):
            try:
                numbers = range(*(int(v.value) for v in values if isinstance(v, Const)))  # all are, tested above
            except ValueError as error:
                self.state.type_problem(span, shown, refusals.ALWAYS_RAISES_VALUEERROR(error=error))
                raise _Abandon from None
            if len(numbers) > budgets.MAX_ITEMS:
                self.state.over_budget(span, shown, Exceeded(Budget.ITEMS, budgets.MAX_ITEMS))
                raise _Abandon
            return MakeTuple(tuple(Const(n, t.INT, span) for n in numbers), t.TupleT((t.INT,) * len(numbers)), span)
        return Host(HostOp.RANGE, tuple(self.exprs.atom(v) for v in values), t.SeqT(t.INT), span)

    def extreme(self, name: str, values: list[Expr], span: Span, shown: str) -> Expr:
        """`min()` or `max()` of numbers: the winning operand itself, of its own type."""
        bools = [isinstance(v.type, t.BoolT) for v in values]
        if any(bools) and not all(bools) and not all(isinstance(v, Const) for v in values):
            # `min(True, 2)` is True, a bool, and `min(True, 0)` is 0, an int: the type is known only at run time.
            self.state.unsupported(span, shown, refusals.BOOL_NUMBER_BOOL(name=name))
            raise _Abandon
        return self.ops.host(HostOp.MIN if name == "min" else HostOp.MAX, values, span, shown,
                         kind=t.join_numbers(*(v.type for v in values)))

    def extreme_of(self, name: str, sequence: Expr, span: Span, shown: str) -> Expr:
        """`min(x.shape)`, `max(sizes)`: of a tuple, the extreme of its items; of a sequence known only at run
        time (a shape), computed then, with Python's ValueError where it is empty."""
        kind = sequence.type
        if isinstance(kind, t.TupleT):
            if not kind.items:
                try:
                    (min if name == "min" else max)(())
                except ValueError as error:  # what this Python says (3.11's words differ from 3.12's)
                    self.state.type_problem(span, shown, refusals.ALWAYS_RAISES_VALUEERROR(error=error))
                raise _Abandon
            items = [_item(sequence, i) for i in range(len(kind.items))]
            if not all(t.is_number(i.type) for i in items):
                self.state.unsupported(span, shown,
                                       (refusals.MIN_OF_TENSORS if name == "min" else refusals.MAX_OF_TENSORS)(name=name))
                raise _Abandon
            return items[0] if len(items) == 1 else self.extreme(name, items, span, shown)
        assert isinstance(kind, t.SeqT)
        if not isinstance(kind.item, (t.IntT, t.FloatT)):
            self.state.unsupported(span, shown,
                                   (refusals.MIN_OF_TENSORS if name == "min" else refusals.MAX_OF_TENSORS)(name=name))
            raise _Abandon
        return Host(HostOp.MIN if name == "min" else HostOp.MAX, (self.exprs.atom(sequence),), kind.item, span)

    def _refuse_conversion(self, name: str, value: Expr, span: Span, shown: str) -> Expr:
        self.state.type_problem(span, shown, refusals.BOOL_NUMBER_BOOL_2(name=name, type=value.type))
        raise _Abandon

    def math(self, name: str, args: list[Argument], keywords: dict[str, Expr], span: Span, shown: str) -> Expr:
        if name == "prod" and len(args) == 1 and not keywords and not args[0].spread and \
                isinstance(args[0].value.type, (t.TupleT, t.SeqT)) and t.element_type(args[0].value.type) == t.INT:
            return Host(HostOp.PROD, (self.exprs.atom(self.members.as_sequence(args[0].value)),), t.INT, span)  # `math.prod(x.shape)`
        if name not in hostmath.MATH_FUNCTIONS:
            self.state.unsupported(span, shown, refusals.MATH_COMPILED(name=name))
            raise _Abandon
        kind, arity = hostmath.MATH_FUNCTIONS[name]
        values = [a.value for a in args]
        if keywords or any(a.spread for a in args) or len(values) != (2 if name == "log" and len(values) == 2 else arity):
            self.state.type_problem(span, shown,
                              (refusals.MATH_TAKES_ARGUMENTS if arity > 1 else refusals.MATH_TAKES_ARGUMENT)(name=name, arity=arity))
            raise _Abandon
        for value in values:
            if not t.is_number(value.type):
                self.state.type_problem(span, shown, refusals.MATH_TAKES_NUMBERS(name=name, type=value.type))
                raise _Abandon
        if name in ("gcd", "lcm") and not all(isinstance(v.type, (t.IntT, t.BoolT)) for v in values):
            self.state.type_problem(span, shown, refusals.MATH_TAKES_INTS(name=name))
            raise _Abandon
        return self.ops.host(HostOp.MATH, values, span, shown, function=name, kind=kind)

    def standard_library(self, namespace: str, name: str, args: list[Argument], keywords: dict[str, Expr], span: Span,
                         shown: str, node: ast.Call) -> Value:
        """``functools.reduce`` over a tuple of known length, folded into one call per item; ``functools.partial``,
        a function known where the region is built; ``operator.add`` and the other binary operators."""
        if namespace == "operator":
            if name not in OPERATOR_FUNCTIONS:
                return self.state.unsupported(span, shown, refusals.OPERATOR_OTHER())
            if len(args) != 2 or any(a.spread for a in args) or keywords:
                self.state.type_problem(span, shown, refusals.OPERATOR_TAKES_TWO())
                raise _Abandon
            return self.ops.operator(OPERATOR_FUNCTIONS[name](), args[0].value, args[1].value, span, text=shown)
        if name == "partial":
            if not args or args[0].spread or not isinstance(args[0].value.type, t.FunctionT):
                self.state.type_problem(span, shown, refusals.PARTIAL_TAKES())
                raise _Abandon
            bound = Partial(args[0].value, tuple(args[1:]), tuple(keywords.items()))
            return Const(bound, t.FunctionT(args[0].value.type.name), span)
        if name != "reduce":
            return self.state.unsupported(span, shown, refusals.FUNCTOOLS_OTHER())
        if not 2 <= len(args) <= 3 or any(a.spread for a in args) or keywords or \
                not isinstance(args[0].value.type, t.FunctionT):
            self.state.type_problem(span, shown, refusals.REDUCE_TAKES())
            raise _Abandon
        function, sequence = args[0].value, args[1].value
        if isinstance(sequence.type, t.SeqT):
            return self.state.unsupported(span, shown, refusals.REDUCE_RUN_TIME_LENGTH(type=sequence.type))
        if not isinstance(sequence.type, t.TupleT):
            self.state.type_problem(span, shown, refusals.REDUCE_TAKES())
            raise _Abandon
        items = [_item(sequence, i) for i in range(len(sequence.type.items))]
        if len(args) == 3:
            items.insert(0, args[2].value)
        if not items:
            self.state.type_problem(span, shown, refusals.REDUCE_EMPTY())
            raise _Abandon
        result = items[0]
        for item in items[1:]:
            # Python's order: the running value first, then the next item.
            result = self.exprs.atom(self.calls.call_value(function, [Argument(result), Argument(item)], {}, span,
                                                           shown, node))
        return result
