"""``einops`` calls (rearrange, reduce, repeat), lowered to torch operations."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ppy_check.messages import refusals
from ppy_check.model import types as t
from ppy_check.model.bind import Argument
from ppy_check.model.builder.control import _Abandon
from ppy_check.model.builder.part import Part
from ppy_check.model.builder.values import Message
from ppy_check.model.ir import (
    Const,
    DtypeName,
    Expr,
    Host,
    HostOp,
    MakeTuple,
    PythonException,
    Query,
    Require,
    SeqIndex,
    SeqSlice,
    ShownSeq,
    Span,
    TensorQuery,
)

# The dtypes einops's torch backend averages (TorchBackend.is_float_type); another is its NotImplementedError.
_AVERAGED = ("Half", "Float", "Double", "BFloat16")


class EinopsLowering(Part):
    """einops calls."""

    def einops(self, name: str, args: list[Argument], keywords: dict[str, Expr], span: Span, shown: str) -> Expr:
        """``einops.rearrange/repeat/reduce`` with a literal pattern: the reshapes, permutes and reductions einops runs."""
        from ppy_check.model import einops_patterns as patterns

        if name not in ("rearrange", "repeat", "reduce") or any(a.spread for a in args):
            self.state.unsupported(span, shown, refusals.REARRANGE_REPEAT_REDUCE())
            raise _Abandon
        values = [a.value for a in args]
        keywords = dict(keywords)
        if name == "reduce" and len(values) == 2 and "reduction" in keywords:
            values.append(keywords.pop("reduction"))
        arity = 3 if name == "reduce" else 2
        pattern = values[1] if len(values) > 1 else keywords.pop("pattern", None)
        if len(values) != arity or not isinstance(values[0].type, t.TensorT):
            self.state.type_problem(span, shown, (refusals.EINOPS_REDUCE_ARGUMENTS if name == "reduce" else
                                            refusals.EINOPS_ARGUMENTS)(name=name))
            raise _Abandon
        if not isinstance(pattern, Const) or not isinstance(pattern.value, str):
            self.state.unsupported(span, shown, refusals.PATTERN_MUST_LITERAL())
            raise _Abandon
        reduction = values[2] if name == "reduce" else None
        if reduction is not None and not (isinstance(reduction, Const) and reduction.value in patterns.REDUCTIONS):
            self.state.unsupported(span, shown, refusals.REDUCTION_MUST_ONE(reductions=", ".join(patterns.REDUCTIONS)))
            raise _Abandon
        for key, value in keywords.items():
            if not isinstance(value.type, t.IntT):
                self.state.type_problem(span, shown, refusals.LENGTH_MUST_INT(key=key, type=value.type))
                raise _Abandon
        try:
            plan = patterns.plan(name, pattern.value, set(keywords))
        except patterns.PatternError as error:
            self.state.unsupported(span, shown, refusals.LENGTH_MUST_INT_2(pattern_value=pattern.value, error=error))
            raise _Abandon from None
        return self.run_einops_plan(plan, values[0], keywords, reduction.value if reduction is not None else "", span,
                                    shown, name, pattern.value)

    def run_einops_plan(self, plan: Any, x: Expr, lengths: dict[str, Expr], reduction: str, span: Span,
                        shown: str, function: str, pattern: str) -> Expr:
        from ppy_check.model.einops_patterns import ELLIPSIS

        def const(value: int) -> Const:
            return Const(value, t.INT, span)

        def ints(items: Sequence[Expr]) -> Expr:
            return self.exprs.atom(MakeTuple(tuple(items), t.TupleT(tuple(t.INT for _ in items)), span))

        def host(op: HostOp, left: Expr, right: Expr) -> Expr:
            return self.exprs.atom(self.ops.host(op, [left, right], span, shown))

        shape = self.exprs.atom(TensorQuery(x, Query.SHAPE, (), t.SeqT(t.INT), span))
        # einops's own checks, before anything is computed from the shape (an index past the rank, a reshape to
        # sizes that do not fit would raise torch's error, or fit and give a value where einops raises).
        context = _context(reduction or function, pattern, shape, lengths)

        def check(holds: Expr, *detail: str | Expr) -> None:
            if not (isinstance(holds, Const) and holds.value):
                self.state.body.append(Require(holds, PythonException.EINOPS_ERROR, (*context, *detail), span))

        groups = plan.left.groups
        ellipsis_at = next((i for i, g in enumerate(groups) if g == (ELLIPSIS,)), None)
        ndim = self.exprs.atom(TensorQuery(x, Query.DIM, (), t.INT, span))
        named = len(groups) - (ellipsis_at is not None)  # the dims the pattern names, a `1` too
        if ellipsis_at is None:
            check(host(HostOp.EQ, ndim, const(named)), f"Wrong shape: expected {named} dims. Received ", ndim,
                  "-dim tensor.")
        else:
            check(host(HostOp.GE, ndim, const(named)), f"Wrong shape: expected >={named} dims. Received ", ndim,
                  "-dim tensor.")
        sizes: dict[str, Expr] = dict(lengths)
        flat: list[Expr] = []  # the elementary sizes, the ellipsis flattened into one axis
        ellipsis: Expr | None = None
        decompose = False
        for index, group in enumerate(groups):
            if group == (ELLIPSIS,):
                after = len(groups) - index - 1
                ellipsis = self.exprs.atom(SeqSlice(shape, const(index), const(-after) if after else None, None,
                                              t.SeqT(t.INT), span))
                sizes[ELLIPSIS] = self.exprs.atom(Host(HostOp.PROD, (ellipsis,), t.INT, span))
                flat.append(sizes[ELLIPSIS])
                decompose = True
                continue
            position = index if ellipsis_at is None or index < ellipsis_at else index - len(groups)
            dim = self.exprs.atom(SeqIndex(shape, const(position), t.INT, span))
            unknown = [a for a in group if a not in lengths]
            if len(group) == 1 and unknown:
                sizes[group[0]] = dim  # einops's common case: an axis of its own, its length read, nothing checked
            else:
                # The lengths given (none for a `1`): their product is the dim's length, or divides it.
                known = [sizes[a] for a in group if a in lengths]
                product = known[0] if known else const(1)
                for other in known[1:]:
                    product = host(HostOp.MUL, product, other)
                if unknown:
                    check(host(HostOp.EQ, host(HostOp.MOD, dim, product), const(0)),
                          "Shape mismatch, can't divide axis of length ", dim, " in chunks of ", product)
                    sizes[unknown[0]] = host(HostOp.FLOORDIV, dim, product)
                else:
                    check(host(HostOp.EQ, dim, product), "Shape mismatch, ", dim, " != ", product)
                decompose = decompose or len(group) != 1  # a `1` goes, a group splits
            flat.extend(sizes[a] for a in group)
        current = plan.left.axes
        if decompose:
            x = self.exprs.atom(self.calls.invoke_method("reshape", x, [Argument(ints(flat))], {}, span, shown))
        if plan.reduced:
            if reduction == "mean":
                dtype = self.exprs.atom(TensorQuery(x, Query.DTYPE, (), t.DTYPE, span))
                averaged = self.ops.any_of([host(HostOp.EQ, dtype, Const(DtypeName(name), t.DTYPE, span))
                                            for name in _AVERAGED], span, shown)
                self.state.body.append(Require(self.exprs.atom(averaged), PythonException.NOT_IMPLEMENTED_ERROR,
                                               ("reduce_mean is not available for non-floating tensors",), span))
            dims = [current.index(a) for a in plan.reduced]
            if reduction == "prod":
                for dim in sorted(dims, reverse=True):
                    x = self.exprs.atom(self.calls.invoke_method("prod", x, [Argument(const(dim))], {}, span, shown))
            else:
                method = {"max": "amax", "min": "amin"}.get(reduction, reduction)
                x = self.exprs.atom(self.calls.invoke_method(method, x, [Argument(ints([const(d) for d in dims]))], {}, span, shown))
            current = [a for a in current if a not in plan.reduced]
        order = list(plan.order)
        if order != current:
            permutation = [const(current.index(a)) for a in order]
            x = self.exprs.atom(self.calls.invoke_method("permute", x, [Argument(ints(permutation))], {}, span, shown))
        right = plan.right.axes
        if plan.added:
            for position, axis in enumerate(right):
                if axis in plan.added:
                    x = self.exprs.atom(self.calls.invoke_method("unsqueeze", x, [Argument(const(position))], {}, span, shown))
            expanded = [sizes[a] if a in plan.added else const(-1) for a in right]
            x = self.exprs.atom(self.calls.invoke_method("expand", x, [Argument(ints(expanded))], {}, span, shown))
        singletons = all(len(g) == 1 and g != (ELLIPSIS,) for g in plan.right.groups)
        if singletons and not decompose:
            return x
        parts: list[tuple[Expr, bool]] = []
        for group in plan.right.groups:
            if group == (ELLIPSIS,):
                assert ellipsis is not None  # the pattern's two sides both have `...` or neither has
                parts.append((ellipsis, True))
                continue
            size: Expr = const(1)
            for axis in group:
                size = sizes[axis] if size is None or (isinstance(size, Const) and size.value == 1) else \
                    self.exprs.atom(self.ops.host(HostOp.MUL, [size, sizes[axis]], span, shown))
            parts.append((size, False))
        target = self.exprs.concatenate(parts, span)
        return self.calls.invoke_method("reshape", x, [Argument(self.exprs.atom(target))], {}, span, shown)


def _context(operation: str, pattern: str, shape: Expr, lengths: dict[str, Expr]) -> Message:
    """What einops's message says before the error itself: the call, the input's shape and the lengths given
    (``{'h': 8}``, in the order of the keywords)."""
    pieces: list[str | Expr | ShownSeq] = [
        f' Error while processing {operation}-reduction pattern "{pattern}".\n Input tensor shape: ',
        ShownSeq(shape, "torch.Size([", "])", False), ". Additional info: {"]
    for index, (axis, length) in enumerate(lengths.items()):
        pieces.extend((f"{', ' if index else ''}{axis!r}: ", length))
    pieces.append("}.\n ")
    return tuple(pieces)
