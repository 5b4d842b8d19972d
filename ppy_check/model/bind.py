"""Overload resolution, as torch's Python argument parser does it, on static types.

torch tries a name's signatures in a fixed order (``opdata.json`` keeps it)
and takes the first whose parameters accept the arguments; this does the same
with the types the model knows, so the overload the compiler calls is the one
the Python body would have reached. The rules follow
``python_arg_parser.cpp``: a ``bool`` is no ``int``, numbers bind to Tensor
parameters only for the arithmetic functions torch lists, a single
``int[N]`` parameter may be given as separate ints (``x.view(b, n)``), a
sized int list takes a lone int, and NumPy's spellings of some keywords
(``axis``, ``keepdims``) are accepted.
"""

from __future__ import annotations

from dataclasses import dataclass

from ppy_check.model import types as t
from ppy_check.model.ir import Const, Expr, MakeSeq, MakeTuple
from ppy_check.schema import Base, BaseType, ListType, OptionalType, Overload, SchemaType

# python_arg_parser.cpp: numpy_compatibility_arg_names.
NUMPY_NAMES = {"axis": "dim", "keepdims": "keepdim", "x": "input", "a": "input", "x1": "input", "x2": "other"}


@dataclass(frozen=True)
class Argument:
    """A positional argument as written: a value, or a ``*spread`` of a sequence."""

    value: Expr
    spread: bool = False


@dataclass(frozen=True)
class Bound:
    """The chosen overload and, for each Python parameter given, its value (by schema argument name)."""

    overload: Overload
    values: dict[str, Expr]
    out: tuple[Expr, ...] = ()  # the out= tensors, in the order of ``overload.outputs``
    requires_grad: Expr | None = None


def accepts(kind: SchemaType, value: t.Type, numbers_as_tensors: bool, *, allow_unwrap: bool = True) -> bool:
    """Whether a value of static type ``value`` binds to a parameter of schema type ``kind``.

    An optional value (``X | None``) binds where its inside would: the run
    time then raises TypeError for None, as the parser would.
    """
    if isinstance(kind, OptionalType):
        if isinstance(value, t.NoneT):
            return True
        if isinstance(value, t.OptionalT):
            return accepts(kind.elem, value.inner, numbers_as_tensors, allow_unwrap=False)
        return accepts(kind.elem, value, numbers_as_tensors, allow_unwrap=False)
    if isinstance(value, t.OptionalT):
        return allow_unwrap and accepts(kind, value.inner, numbers_as_tensors, allow_unwrap=False)
    if isinstance(kind, ListType):
        return _accepts_list(kind, value)
    base = kind.base
    if base is Base.Tensor:
        return isinstance(value, t.TensorT) or (numbers_as_tensors and t.is_number(value))
    if base is Base.Scalar:
        return t.is_number(value)
    if base is Base.float:
        return t.is_number(value)
    if base in (Base.int, Base.SymInt):
        return isinstance(value, t.IntT)
    if base is Base.bool:
        return isinstance(value, t.BoolT)
    if base is Base.str:
        return isinstance(value, t.StrT)
    if base is Base.ScalarType:
        return isinstance(value, (t.DtypeT, t.PyTypeT))
    if base is Base.Device:
        return isinstance(value, (t.DeviceT, t.StrT, t.IntT))
    if base is Base.Layout:
        return isinstance(value, t.LayoutT)
    if base is Base.MemoryFormat:
        return isinstance(value, t.MemoryFormatT)
    return False  # Generator, Dimname, Storage...: no region value has these types


def _accepts_list(kind: ListType, value: t.Type) -> bool:
    elem = kind.elem
    if isinstance(elem, BaseType) and elem.base in (Base.int, Base.SymInt):
        if isinstance(value, t.IntT):
            return bool(kind.size)  # `int[2] stride` takes a lone int, repeated
        return _items_are(value, lambda item: isinstance(item, t.IntT))
    if isinstance(elem, BaseType) and elem.base is Base.float:
        return _items_are(value, t.is_number)
    if isinstance(elem, BaseType) and elem.base is Base.bool:
        return isinstance(value, t.TupleT) and all(isinstance(i, t.BoolT) for i in value.items)
    if isinstance(elem, BaseType) and elem.base is Base.Scalar:
        return _items_are(value, t.is_number)
    if isinstance(elem, BaseType) and elem.base is Base.Tensor:
        return _items_are(value, lambda item: isinstance(item, t.TensorT))
    if isinstance(elem, OptionalType) and elem.elem == BaseType(Base.Tensor):
        return _items_are(value, lambda item: isinstance(item, (t.TensorT, t.NoneT)) or item == t.OptionalT(t.TENSOR))
    return False


def _items_are(value: t.Type, test: object) -> bool:
    if isinstance(value, t.TupleT):
        return all(test(item) for item in value.items)  # type: ignore[operator]
    if isinstance(value, t.SeqT):
        return bool(test(value.item))  # type: ignore[operator]
    return False


def _positional_values(args: list[Argument]) -> list[Expr] | None:
    """Positional arguments with tuple spreads expanded; None when a spread's length is unknown."""
    values: list[Expr] = []
    for argument in args:
        if not argument.spread:
            values.append(argument.value)
        elif isinstance(argument.value, MakeTuple):
            values.extend(argument.value.items)
        else:
            return None
    return values


def _varargs_list(overload: Overload, args: list[Argument]) -> Expr | None:
    """``x.view(b, n)``, ``x.reshape(*x.shape[:-1], -1, 2)``: every positional argument into the one int list."""
    positional = overload.positional
    if len(positional) != 1 or not isinstance(positional[0].type, ListType):
        return None
    elem = positional[0].type.elem
    if not (isinstance(elem, BaseType) and elem.base in (Base.int, Base.SymInt)):
        return None
    if not args or (len(args) == 1 and not args[0].spread):
        first = args[0].value if args else None
        if first is None or not isinstance(first.type, t.IntT):
            return None  # a lone tuple is the list itself, bound normally
    parts = []
    for argument in args:
        kind = argument.value.type
        if argument.spread:
            if not (isinstance(kind, (t.TupleT, t.SeqT)) and _items_are(kind, lambda i: isinstance(i, t.IntT))):
                return None
        elif not isinstance(kind, t.IntT):
            return None
        parts.append((argument.value, argument.spread))
    span = args[0].value.span
    if all(not spread or isinstance(value, MakeTuple) for value, spread in parts):
        items = tuple(item for value, spread in parts for item in (value.items if spread else (value,)))  # type: ignore[union-attr]
        return MakeTuple(items, t.TupleT(tuple(i.type for i in items)), span)
    return MakeSeq(tuple(parts), t.SeqT(t.INT), span)


def bind(overload: Overload, args: list[Argument], keywords: dict[str, Expr]) -> Bound | None:
    """The arguments bound to this overload's parameters, or None when it does not take them."""
    by_name = overload.by_name
    values: dict[str, Expr] = {}
    varargs = _varargs_list(overload, args)
    if varargs is not None:
        values[overload.positional[0].schema_name] = varargs
    else:
        positional = _positional_values(args)
        if positional is None or len(positional) > len(overload.positional):
            return None
        for param, value in zip(overload.positional, positional):
            if not accepts(param.type, value.type, overload.numbers_as_tensors):
                return None
            values[param.schema_name] = value
    out: tuple[Expr, ...] = ()
    requires_grad = None
    for key, value in keywords.items():
        if key == "out" and overload.outputs:
            if isinstance(value, Const) and value.value is None:
                continue  # out=None is no out=
            outs = value.items if isinstance(value, MakeTuple) else (value,)
            if len(outs) != len(overload.outputs) or not all(isinstance(o.type, t.TensorT) for o in outs):
                return None
            out = tuple(outs)
            continue
        named = by_name.get(key) or by_name.get(NUMPY_NAMES.get(key, ""))
        if named is None or named.schema_name in values:
            return None
        if named.name == "requires_grad" and named.schema_name not in overload.native.arg:
            if not isinstance(value.type, t.BoolT):
                return None
            requires_grad = value
            continue
        if not accepts(named.type, value.type, overload.numbers_as_tensors):
            return None
        values[named.schema_name] = value
    if any(name not in values for name in overload.required):
        return None
    if out and overload.out is None:
        return None
    return Bound(overload, values, out, requires_grad)


def resolve(overloads: tuple[Overload, ...], args: list[Argument], keywords: dict[str, Expr]) -> Bound | None:
    """The first overload, in torch's order, that takes the arguments."""
    for overload in overloads:
        found = bind(overload, args, keywords)
        if found is not None:
            return found
    return None


def describe_arguments(args: list[Argument], keywords: dict[str, Expr]) -> str:
    """``(Tensor, int, dim=int)``: what a call passed, for a message."""
    shown = [("*" if a.spread else "") + str(a.value.type) for a in args]
    shown += [f"{key}={value.type}" for key, value in keywords.items()]
    return "(" + ", ".join(shown) + ")"
