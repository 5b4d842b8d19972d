"""The types a region's parameters and results may have, read from annotations.

A region takes tensors, Python numbers, strings, dtypes and devices, optional
forms of those, and tuples of them (a ``torch.Size`` is a tuple of ints, a
``Sequence[X]`` a list or a tuple, read as a tuple): exactly what maps onto an ``at::`` C++
signature. Annotations become the model's static types (``model/types.py``),
which the compiler turns into C++ types, so the checker and the compiler
cannot disagree on what a parameter is.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from ppy_check.model import types as t

REGION_TYPES = ("torch.Tensor, int, float, bool, str, torch.dtype, torch.device, optionals and tuples of these, "
                "torch.Size, Sequence[...]")


class AnnotationError(Exception):
    """An annotation a region cannot take; the message says why."""


# A resolver turns a name or attribute chain into the dotted name it refers to
# ("torch.Tensor", "typing.Optional", "builtins.int"), or None when it cannot tell.
Resolver = Callable[[ast.expr], str | None]

_SCALAR_NAMES: dict[str, t.Type] = {
    "torch.Tensor": t.TENSOR,
    "torch.dtype": t.DTYPE,
    "torch.device": t.DEVICE,
    "builtins.int": t.INT,
    # PEP 484: an int is a valid float, and Python keeps it an int.
    "builtins.float": t.NUMBER,
    "builtins.bool": t.BOOL,
    "builtins.str": t.STR,
}
_OPTIONAL_NAMES = {"typing.Optional", "typing_extensions.Optional"}
_UNION_NAMES = {"typing.Union", "typing_extensions.Union"}
_TUPLE_NAMES = {"builtins.tuple", "typing.Tuple", "typing_extensions.Tuple"}
# Read-only sequences: a parameter so annotated takes a list or a tuple, read as a tuple (a region never writes
# one); what tells a list from a tuple (`+`, `*`, comparing, slicing, returning it, showing it) is refused on it.
_SEQUENCE_NAMES = {"typing.Sequence", "collections.abc.Sequence", "typing_extensions.Sequence"}


def parse_annotation(node: ast.expr, resolve: Resolver, *, is_return: bool = False) -> t.Type:
    """The static type an annotation denotes, or AnnotationError saying why it has none."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            inner = ast.parse(node.value, mode="eval").body
        except SyntaxError as error:
            raise AnnotationError(f"the string does not parse: {error.msg}") from None
        return parse_annotation(inner, resolve, is_return=is_return)
    if isinstance(node, ast.Constant) and node.value is None:
        if is_return:
            return t.NONE
        raise AnnotationError("a parameter cannot be only None")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union([node.left, node.right], resolve)
    if isinstance(node, ast.Subscript):
        head = resolve(node.value)
        args = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        if head in _OPTIONAL_NAMES and len(args) == 1:
            return _optional(parse_annotation(args[0], resolve))
        if head in _UNION_NAMES:
            return _union(args, resolve)
        if head in _TUPLE_NAMES:
            if len(args) == 2 and isinstance(args[1], ast.Constant) and args[1].value is Ellipsis:
                return t.SeqT(parse_annotation(args[0], resolve))
            if any(isinstance(a, ast.Constant) and a.value is Ellipsis for a in args):
                raise AnnotationError("`...` may only follow a single item type")
            if len(args) == 1 and isinstance(args[0], ast.Tuple) and not args[0].elts:
                return t.TupleT(())
            return t.TupleT(tuple(parse_annotation(a, resolve) for a in args))
        if head in _SEQUENCE_NAMES and len(args) == 1:
            item = parse_annotation(args[0], resolve)
            return t.SeqT(item) if is_return else t.SeqT(item, passed="sequence")
        if head in ("builtins.list", "typing.List"):
            shown = ast.unparse(args[0]) if len(args) == 1 else "int"
            raise AnnotationError(f"lists are mutable; annotate `tuple[{shown}, ...]` or `Sequence[{shown}]`")
        raise AnnotationError(f"`{head or ast.unparse(node.value)}[...]` is not a region type")
    name = resolve(node)
    if name == "torch.Size":
        # A tuple of ints, as `x.shape` is: Python's value stays a torch.Size (its slices, sums, returned).
        return t.SeqT(t.INT, passed="size")
    if name in _SCALAR_NAMES:
        return _SCALAR_NAMES[name]
    if name in _TUPLE_NAMES:
        raise AnnotationError("a bare tuple needs its item types: `tuple[int, ...]`")
    if name is None:
        raise AnnotationError(f"regions take {REGION_TYPES}")
    raise AnnotationError(f"`{name.removeprefix('builtins.')}` is not one of {REGION_TYPES}")


def _union(members: list[ast.expr], resolve: Resolver) -> t.Type:
    flat: list[ast.expr] = []

    def spread(member: ast.expr) -> None:
        if isinstance(member, ast.BinOp) and isinstance(member.op, ast.BitOr):
            spread(member.left)
            spread(member.right)
        else:
            flat.append(member)

    for member in members:
        spread(member)
    nones = [m for m in flat if isinstance(m, ast.Constant) and m.value is None]
    others = [m for m in flat if m not in nones]
    if len(nones) == 1 and len(others) == 1:
        return _optional(parse_annotation(others[0], resolve))
    raise AnnotationError("the only union a region takes is `X | None`")


def _optional(kind: t.Type) -> t.Type:
    """The inside of an optional: `Optional[Optional[X]]` is `Optional[X]`, as typing says."""
    if isinstance(kind, t.NoneT):
        raise AnnotationError("`None | None` is not a value")
    return t.optional(kind)
