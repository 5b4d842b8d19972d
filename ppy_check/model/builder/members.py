"""Attributes and subscripts: ``x.shape``, ``t.dtype``, ``torch.iinfo(...).max``, ``x[1:]``, ``s[0]``.

A new tensor property or attribute form goes here; a new kind of index too.
"""

from __future__ import annotations

import ast

from ppy_check.messages import refusals
from ppy_check.model import types as t
from ppy_check.model.bind import Argument
from ppy_check.model.builder.control import _Abandon
from ppy_check.model.builder.facts import _carries_tensors, _item
from ppy_check.model.builder.part import Part
from ppy_check.model.builder.tables import (
    _OTHER_LAYOUTS,
    DTYPE_TESTS,
    FINFO_ATTRIBUTES,
    INTEGER_BOUNDS,
    LAYOUT_PROPERTIES,
    PROPERTY_REFUSALS,
    QUERY_METHODS,
    STRIDED,
    TENSOR_PROPERTIES,
    VIEW_FUNCTIONS,
    VIEW_PROPERTIES,
)
from ppy_check.model.builder.text import _strip_dotted, display
from ppy_check.model.builder.values import (
    POISON,
    FunctionRef,
    LibraryModule,
    ModuleRef,
    ModuleValue,
    Poisoned,
    ProjectModule,
    UntypedParam,
    Value,
)
from ppy_check.model.ir import (
    Call,
    Const,
    Expr,
    Host,
    HostOp,
    IndexList,
    NoneRun,
    IndexPart,
    Item,
    MakeSeq,
    MakeTuple,
    Param,
    Read,
    SeqIndex,
    SeqSlice,
    SliceIndex,
    Span,
    TensorIndex,
    TensorQuery,
    Unwrap,
    VariableData,
)
from ppy_check.model.problems import CaptureOrigin


class Members(Part):
    """Attributes and subscripts."""

    # --- attributes ---------------------------------------------------------------------

    def attribute(self, node: ast.Attribute) -> Value:
        span = Span.of(node)
        if isinstance(node.value, ast.Call) and node.attr in FINFO_ATTRIBUTES:
            made = _strip_dotted(self.state.frame.scope.resolve(node.value.func) or "")
            if made == "torch.iinfo" and node.attr in ("min", "max") or made == "torch.finfo":
                # The class is read as Python reads it, at every call: its name is an assumption the runtime proves.
                if self.state.frame.dialect.records_assumptions and \
                        isinstance(self.exprs.expr(node.value.func), Poisoned):
                    return POISON
                return self.iinfo(node.value, node.attr) if made == "torch.iinfo" else self.finfo(node.value, node.attr)
        base = self.exprs.expr(node.value)
        if isinstance(base, Poisoned):
            return POISON
        if isinstance(base, ModuleValue):
            return self.modules.attribute(base, node.attr, span)
        if isinstance(base, ModuleRef) and self.state.frame.dialect.refuses_rebound_names and \
                f"{base.dotted}.{node.attr}" in self.state.frame.scope.patched:
            return self.state.rebound_capture(span, display(node), self.state.frame.scope.patched[f"{base.dotted}.{node.attr}"])
        if isinstance(base, ModuleRef):
            found = self.exprs.dotted_value(_strip_dotted(f"{base.dotted}.{node.attr}"), span, display(node))
            if self.state.frame.dialect.records_assumptions:
                self.exprs.assume(f"module:{base.dotted}", node.attr, found)
            return found
        if isinstance(base, LibraryModule):
            return FunctionRef(f"{base.dotted}.{node.attr}", display(node))
        if isinstance(base, ProjectModule):
            member = self.exprs.project_value(f"{base.dotted}.{node.attr}", display(node))
            if member is None:
                return self.state.capture(span, display(node), CaptureOrigin.IMPORTED, base.dotted)
            self.exprs.assume(base.path, node.attr, member)
            return member
        if isinstance(base, FunctionRef) and base.helper is None and base.dotted.startswith("torch."):
            # torch's Python code reads its own submodules (`torch.jit.is_scripting`, `torch.backends.cudnn`).
            return self.exprs.dotted_value(_strip_dotted(f"{base.dotted}.{node.attr}"), span, display(node))
        if isinstance(base, FunctionRef):
            return self.state.unsupported(span, display(node), refusals.ATTRIBUTE_FUNCTION(), attribute=True)
        if isinstance(base, UntypedParam):
            return self.state.capture(span, base.name, CaptureOrigin.ATTRIBUTE, node.attr)
        value = self.exprs.atom(base, node.value)
        kind = t.strip_optional(value.type)
        if isinstance(kind, t.TupleT) and kind.names and node.attr in kind.names:
            return _item(value, kind.names.index(node.attr))
        if isinstance(kind, t.TensorT):
            if isinstance(value.type, t.OptionalT):
                value = self.unwrap(value, display(node.value), span)
            return self.tensor_property(value, node.attr, span, display(node))
        if isinstance(kind, t.FunctionT) and node.attr == "__name__":
            return Const(kind.name, t.STR, span)
        if isinstance(kind, t.DeviceT) and node.attr == "type":
            return Host(HostOp.DEVICE_TYPE, (value,), t.STR, span)
        if isinstance(kind, t.DtypeT) and node.attr in DTYPE_TESTS:
            if isinstance(value, Const):
                return Const(value.value.scalar_type in DTYPE_TESTS[node.attr], t.BOOL, span)
            return Host(HostOp.DTYPE_IS, (value,), t.BOOL, span, function=node.attr)
        if isinstance(kind, t.DtypeT) and node.attr == "itemsize":
            return self.state.unsupported(span, display(node), refusals.DTYPE_PROPERTIES_COMPILED(), attribute=True)
        return self.state.unsupported(span, display(node),
                                refusals.DTYPE_PROPERTIES_COMPILED_2(type=value.type), attribute=True)

    def iinfo(self, node: ast.Call, bound: str) -> Value:
        """``torch.iinfo(dtype).min`` (or ``.max``): the bound of an integer dtype, which may be known only at run
        time (TypeError for another dtype, as Python raises)."""
        span = Span.of(node)
        args, keywords = self.calls.arguments(node)
        if args is None:
            return POISON
        if len(args) != 1 or args[0].spread or keywords or not isinstance(args[0].value.type, t.DtypeT):
            return self.state.unsupported(span, display(node), refusals.TORCH_IINFO_ANYTHING())
        dtype = args[0].value
        if isinstance(dtype, Const) and dtype.value.scalar_type in INTEGER_BOUNDS:
            return Const(INTEGER_BOUNDS[dtype.value.scalar_type][bound == "max"], t.INT, span)
        return Host(HostOp.IINFO, (dtype,), t.INT, span, function=bound)

    def finfo(self, node: ast.Call, attribute: str) -> Value:
        """``torch.finfo(dtype).min`` (``.eps``, ``.tiny``...): a number of a floating dtype, read when the region
        runs (the dtype is often a tensor's); no dtype is torch's default. TypeError for another dtype, as Python."""
        span = Span.of(node)
        args, keywords = self.calls.arguments(node)
        if args is None:
            return POISON
        if keywords or len(args) > 1 or any(a.spread or not isinstance(a.value.type, t.DtypeT) for a in args):
            return self.state.unsupported(span, display(node), refusals.TORCH_FINFO_ANYTHING())
        dtype = args[0].value if args else self.state.let(Host(HostOp.DEFAULT_DTYPE, (), t.DTYPE, span))
        return Host(HostOp.FINFO, (dtype,), t.INT if attribute == "bits" else t.FLOAT, span, function=attribute)

    def tensor_property(self, base: Expr, attr: str, span: Span, shown: str) -> Value:
        if attr in LAYOUT_PROPERTIES and self.strided(base):
            return Const(LAYOUT_PROPERTIES[attr], t.LAYOUT if attr == "layout" else t.BOOL, span)
        if attr in TENSOR_PROPERTIES:
            query, kind = TENSOR_PROPERTIES[attr]
            return TensorQuery(base, query, (), kind, span)
        if attr in VIEW_PROPERTIES:
            return self.calls.invoke_method(VIEW_PROPERTIES[attr], base, [], {}, span, shown)
        if attr in VIEW_FUNCTIONS:
            return self.calls.invoke_function(VIEW_FUNCTIONS[attr], [Argument(base)], {}, span, shown)
        if attr == "data":
            return VariableData(base, t.TENSOR, span, base.aliases)
        if attr in PROPERTY_REFUSALS:
            return self.state.unsupported(span, shown, PROPERTY_REFUSALS[attr](), attribute=True)
        if attr in self.state.data.properties:
            return self.state.unsupported(span, shown, refusals.TENSOR_PROPERTY_PPY(), attribute=True)
        if self.state.data.has_method(attr) or attr in QUERY_METHODS:
            return self.state.unsupported(span, shown, refusals.TENSOR_METHOD_CALL(attr=attr), attribute=True)
        return self.state.unsupported(span, shown, refusals.TENSOR_ATTRIBUTE_PPY(), attribute=True)

    def strided(self, value: Expr) -> bool:
        """Whether a tensor is certainly strided (dense), so that torch's decisions on its layout fold: a tensor
        parameter is (the compiled entry runs the Python body for a sparse or other one), and so is what an
        operator computes from strided tensors, unless the operator makes another layout (its name says so, or it
        takes a `layout`)."""
        if isinstance(value, Param):
            return _carries_tensors(value.type)
        if isinstance(value, Read):
            if value.var in self.state.strided_vars:
                return True
            known = self.state.values.get(value.var)
            return known is not None and self.strided(known)
        if isinstance(value, (Unwrap, Item, TensorIndex, SeqIndex)):
            return self.strided(value.base)
        if isinstance(value, MakeTuple):
            return all(self.strided(item) for item in value.items if _carries_tensors(item.type))
        if isinstance(value, Call):
            if any(word in value.native.name for word in _OTHER_LAYOUTS):
                return False
            for key, argument in value.args:
                if argument is None or not _carries_tensors(argument.type) and key != "layout":
                    continue
                if key == "layout":
                    if not (isinstance(argument, Const) and argument.value in (None, STRIDED)):
                        return False
                elif not self.strided(argument):
                    return False
            return True
        return False

    def unwrap(self, value: Expr, what: str, span: Span) -> Expr:
        """An optional used where a value is needed: the run time raises TypeError for None, as Python would."""
        if not isinstance(value.type, t.OptionalT):
            return value
        return self.state.let(Unwrap(value, what, value.type.inner, span, value.aliases))

    # --- subscripts ---------------------------------------------------------------------

    def subscript(self, node: ast.Subscript) -> Value:
        span = Span.of(node)
        if isinstance(node.value, ast.Name) and node.value.id in self.state.frame.lists:
            base = self.state.env[node.value.id]  # an item of a list torch's Python code is building
        else:
            base = self.exprs.expr(node.value)
        if isinstance(base, Poisoned):
            return POISON
        if isinstance(base, ModuleValue):
            return self.modules.item(base, node.slice, span)
        base = self.exprs.atom(base, node.value)
        kind = base.type
        if isinstance(kind, t.OptionalT):
            base = self.unwrap(base, display(node.value), span)
            kind = base.type
        if isinstance(kind, t.TensorT):
            return self.tensor_index(base, self.index_parts(node.slice), span)
        if isinstance(kind, (t.TupleT, t.SeqT)):
            return self.sequence_index(base, node.slice, span)
        return self.state.type_problem(span, display(node), refusals.CANNOT_INDEXED(kind=kind))

    def sequence_index(self, base: Expr, index_node: ast.expr, span: Span) -> Value:
        kind = base.type
        if isinstance(index_node, ast.Slice):
            if (sequence := t.read_only(kind)) is not None:
                return self.state.type_problem(span, display(index_node),
                                               refusals.SEQUENCE_SLICED(item=sequence.item))
            bounds = [None if p is None else self.exprs.atom(self.exprs.expr(p), p) for p in
                      (index_node.lower, index_node.upper, index_node.step)]
            for bound in bounds:
                # An `int | None` bound is taken as it is: None is the bound's default, as in Python.
                if bound is not None and not isinstance(bound.type, (t.IntT, t.NoneT)) and not (
                        isinstance(bound.type, t.OptionalT) and isinstance(bound.type.inner, t.IntT)):
                    return self.state.type_problem(span, display(index_node),
                                             refusals.SLICE_BOUNDS_MUST(bound_type=bound.type))
            if isinstance(kind, t.TupleT) and all(b is None or isinstance(b, Const) for b in bounds):
                items = [_item(base, i) for i in range(len(kind.items))]
                try:
                    picked = items[slice(*(b.value if isinstance(b, Const) else None for b in bounds))]
                except ValueError as error:  # a step of 0
                    return self.state.type_problem(span, display(index_node), refusals.ALWAYS_RAISES_VALUEERROR(error=error))
                return self.state.mark(MakeTuple(tuple(picked), t.TupleT(tuple(i.type for i in picked)), span,
                                           frozenset().union(*(i.aliases for i in picked))), self.state.kind_of(base))
            seq_type = t.SeqT(t.element_type(kind) or t.INT) if isinstance(kind, t.TupleT) else kind
            if isinstance(kind, t.TupleT) and t.element_type(kind) is None:
                return self.state.type_problem(span, display(index_node), refusals.TUPLE_MIXED_TYPES())
            lower, upper, step = bounds
            return SeqSlice(self.as_sequence(base), lower, upper, step, seq_type, span, base.aliases)
        index = self.exprs.atom(self.exprs.expr(index_node), index_node)
        if not isinstance(index.type, (t.IntT, t.BoolT)):
            return self.state.type_problem(span, display(index_node), refusals.SEQUENCE_INDEX_MUST(index_type=index.type))
        if isinstance(kind, t.TupleT):
            if isinstance(index, Const):
                position = int(index.value)
                if -len(kind.items) <= position < len(kind.items):
                    return _item(base, position % len(kind.items))
                return self.state.type_problem(span, display(index_node),
                                         refusals.INDEX_OUT_RANGE(position=position, kind_items_count=len(kind.items)))
            element = t.element_type(kind)
            if element is None:
                return self.state.type_problem(span, display(index_node), refusals.TUPLE_MIXED_TYPES_INDEXED())
            return SeqIndex(self.as_sequence(base), index, element, span, base.aliases)
        assert isinstance(kind, t.SeqT)  # the callers index only tuples and sequences
        return SeqIndex(base, index, kind.item, span, base.aliases)

    def as_sequence(self, value: Expr) -> Expr:
        """A tuple of one item type as a run-time sequence."""
        if isinstance(value.type, t.SeqT):
            return value
        assert isinstance(value.type, t.TupleT)
        element = t.element_type(value.type)
        items = tuple(_item(value, i) for i in range(len(value.type.items)))
        return MakeSeq(tuple((i, False) for i in items), t.SeqT(element or t.INT), value.span, value.aliases)

    def index_parts(self, node: ast.expr) -> tuple[IndexPart, ...]:
        """Python indexing, part by part: ints, slices, None, ..., tensors, and lists of ints (advanced indexing)."""
        leaves = _joined(node)
        if any(_none_run(leaf) is not None for leaf in leaves):
            # `x[(...,) + (None,) * n]`: the tuple joined where the index is read, its run of Nones counted then.
            joined: list[IndexPart] = []
            for leaf in leaves:
                count_node = _none_run(leaf)
                if count_node is None:
                    joined += self.index_parts(leaf)
                    continue
                count = self.exprs.atom(self.exprs.expr(count_node), count_node)
                if not isinstance(count.type, (t.IntT, t.BoolT)):
                    self.state.type_problem(Span.of(leaf), display(leaf), refusals.TUPLE_REPEATED(count_type=count.type))
                    raise _Abandon
                joined += [Const(None, t.NONE, Span.of(leaf))] * max(int(count.value), 0) \
                    if isinstance(count, Const) else [NoneRun(count)]
            if any(isinstance(p, NoneRun) for p in joined) and any(
                    isinstance(p, SliceIndex) and p.step is not None and not isinstance(p.step, Const) for p in joined):
                # Where each part stands is known only at run time: a step's zero check could not name its place.
                self.state.unsupported(Span.of(node), display(node), refusals.NONE_RUN_WITH_STEP())
                raise _Abandon
            return tuple(joined)
        elements = node.elts if isinstance(node, ast.Tuple) else [node]
        parts: list[IndexPart] = []
        for element in elements:
            element = self._slice_written(element)
            if isinstance(element, ast.Slice):
                bounds: list[Expr | None] = []
                for bound in (element.lower, element.upper, element.step):
                    if bound is None:
                        bounds.append(None)
                        continue
                    value = self.exprs.atom(self.exprs.expr(bound), bound)
                    # An `int | None` bound stays optional: None is the bound's default (`x[a:b]`, `a = None`).
                    if isinstance(value.type, t.OptionalT) and not isinstance(value.type.inner, t.IntT):
                        value = self.unwrap(value, display(bound), Span.of(bound))
                    if not isinstance(value.type, (t.IntT, t.NoneT)) and not (
                            isinstance(value.type, t.OptionalT) and isinstance(value.type.inner, t.IntT)):
                        self.state.type_problem(Span.of(bound), display(bound),
                                          refusals.SLICE_BOUNDS_MUST_INTS(type=value.type))
                        raise _Abandon
                    bounds.append(value)
                parts.append(SliceIndex(*bounds))
                continue
            if isinstance(element, ast.List):
                parts.append(self.index_list(element))
                continue
            value = self.exprs.atom(self.exprs.expr(element), element)
            values = [_item(value, i) for i in range(len(value.type.items))] if isinstance(value.type, t.TupleT) \
                and not isinstance(node, ast.Tuple) else [value]
            for value in values:
                if isinstance(value.type, t.OptionalT) and not isinstance(value, Const):
                    value = self.unwrap(value, display(element), Span.of(element))
                if not isinstance(value.type, (t.IntT, t.BoolT, t.TensorT, t.NoneT, t.EllipsisT)):
                    self.state.type_problem(Span.of(element), display(element), refusals.CANNOT_INDEX_TENSOR(type=value.type))
                    raise _Abandon
                parts.append(value)
        return tuple(parts)

    def _slice_written(self, element: ast.expr) -> ast.expr:
        """``slice(None)`` in an index (``x[(slice(None), None)]``) is the slice ``:``, and ``slice(a, b, c)``
        is ``a:b:c``."""
        if not isinstance(element, ast.Call) or element.keywords or not 1 <= len(element.args) <= 3 or \
                any(isinstance(a, ast.Starred) for a in element.args) or "slice" in self.state.env or \
                self.state.frame.scope.resolve(element.func) not in ("slice", "builtins.slice"):
            return element
        bounds: list[ast.expr | None] = [None if isinstance(a, ast.Constant) and a.value is None else a
                                         for a in element.args]
        lower, upper, step = ([None, bounds[0], None] if len(bounds) == 1 else [*bounds, None][:3])
        return ast.copy_location(ast.Slice(lower, upper, step), element)

    def index_list(self, node: ast.List) -> IndexList:
        """``x[[0, 1]]``: Python makes an index tensor of the list (ints, or bools as a mask)."""
        items = [self.exprs.atom(self.exprs.expr(e), e) for e in node.elts]
        ints = all(isinstance(i.type, t.IntT) for i in items)
        if not items or not (ints or all(isinstance(i.type, t.BoolT) for i in items)):
            self.state.type_problem(Span.of(node), display(node), refusals.INDEX_LIST_MUST())
            raise _Abandon
        return IndexList(tuple(items), boolean=not ints)

    def tensor_index(self, base: Expr, parts: tuple[IndexPart, ...], span: Span) -> Expr:
        # Basic indexing returns a view of the tensor; advanced indexing a copy.
        view = all(isinstance(p, (SliceIndex, NoneRun)) or (not isinstance(p, IndexList) and not isinstance(p.type, t.TensorT))
                   for p in parts)
        return TensorIndex(base, parts, t.TENSOR, span, base.aliases if view else frozenset())


def _joined(node: ast.expr) -> list[ast.expr]:
    """The operands of ``a + b + c`` in order (an index written as joined tuples); ``[node]`` for anything else."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _joined(node.left) + _joined(node.right)
    return [node]


def _none_run(node: ast.expr) -> ast.expr | None:
    """The count of ``(None,) * n`` (or ``n * (None,)``), a tuple of Nones repeated; None for anything else."""
    if not isinstance(node, ast.BinOp) or not isinstance(node.op, ast.Mult):
        return None
    for nones, count in ((node.left, node.right), (node.right, node.left)):
        if isinstance(nones, ast.Tuple) and nones.elts and all(
                isinstance(e, ast.Constant) and e.value is None for e in nones.elts):
            return count if len(nones.elts) == 1 else None
    return None
