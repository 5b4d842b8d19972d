"""The types a region's parameters and results may have, read from annotations.

A region takes tensors, Python scalars, strings and dtypes, optional forms of
those, and tuples of them: exactly what maps onto an ``at::`` C++ signature.
The compiler derives its C++ types from these values, so the checker and the
compiler cannot disagree on what a parameter is.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass
from typing import Callable, Union

SCALARS = ("Tensor", "int", "float", "bool", "str", "dtype")


@dataclass(frozen=True)
class Scalar:
    """A plain value: ``Tensor``, ``int``, ``float``, ``bool``, ``str`` or ``dtype``."""

    name: str

    def __str__(self) -> str:
        return f"torch.{self.name}" if self.name in ("Tensor", "dtype") else self.name


@dataclass(frozen=True)
class Optional:
    inner: RegionType

    def __str__(self) -> str:
        return f"{self.inner} | None"


@dataclass(frozen=True)
class Tuple:
    """``tuple[A, B]``, or ``tuple[A, ...]`` when ``variadic``."""

    items: tuple[RegionType, ...]
    variadic: bool = False

    def __str__(self) -> str:
        inner = ", ".join(str(item) for item in self.items)
        return f"tuple[{inner}, ...]" if self.variadic else f"tuple[{inner}]"


@dataclass(frozen=True)
class NoneType:
    """Only as a return: a region that works by writing its parameters."""

    def __str__(self) -> str:
        return "None"


RegionType = Union[Scalar, Optional, Tuple, NoneType]

TENSOR = Scalar("Tensor")


class AnnotationError(Exception):
    """An annotation a region cannot take; the message says why."""


# The module constants a region may read, for the checker and the compiler
# alike: `torch.<dtype>` (by the ATen ScalarType it names) and a few floats.
TORCH_DTYPES = {
    "float32": "Float", "float": "Float", "float64": "Double", "double": "Double", "float16": "Half",
    "half": "Half", "bfloat16": "BFloat16", "int64": "Long", "long": "Long", "int32": "Int", "int": "Int",
    "int16": "Short", "short": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
    "complex64": "ComplexFloat", "cfloat": "ComplexFloat", "complex128": "ComplexDouble",
    "cdouble": "ComplexDouble", "float8_e4m3fn": "Float8_e4m3fn", "float8_e5m2": "Float8_e5m2",
}
FLOAT_CONSTANTS = {
    "torch.pi": math.pi, "torch.e": math.e, "torch.inf": math.inf, "torch.nan": math.nan,
    "math.pi": math.pi, "math.e": math.e, "math.inf": math.inf, "math.nan": math.nan, "math.tau": math.tau,
}


# A resolver turns a name or attribute chain into the dotted name it refers to
# ("torch.Tensor", "typing.Optional", "int"), or None when it cannot tell.
Resolver = Callable[[ast.expr], Union[str, None]]

_SCALAR_NAMES = {
    "torch.Tensor": "Tensor",
    "torch.dtype": "dtype",
    "builtins.int": "int",
    "builtins.float": "float",
    "builtins.bool": "bool",
    "builtins.str": "str",
}
_OPTIONAL_NAMES = {"typing.Optional", "typing_extensions.Optional"}
_UNION_NAMES = {"typing.Union", "typing_extensions.Union"}
_TUPLE_NAMES = {"builtins.tuple", "typing.Tuple", "typing_extensions.Tuple"}


def parse_annotation(node: ast.expr, resolve: Resolver, *, is_return: bool = False) -> RegionType:
    """The region type an annotation denotes, or AnnotationError saying why it has none."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            inner = ast.parse(node.value, mode="eval").body
        except SyntaxError as error:
            raise AnnotationError(f"the string does not parse: {error.msg}") from None
        return parse_annotation(inner, resolve, is_return=is_return)
    if isinstance(node, ast.Constant) and node.value is None:
        if is_return:
            return NoneType()
        raise AnnotationError("a parameter cannot be only None")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union([node.left, node.right], resolve, node)
    if isinstance(node, ast.Subscript):
        head = resolve(node.value)
        args = list(node.slice.elts) if isinstance(node.slice, ast.Tuple) else [node.slice]
        if head in _OPTIONAL_NAMES and len(args) == 1:
            return Optional(_plain(parse_annotation(args[0], resolve)))
        if head in _UNION_NAMES:
            return _union(args, resolve, node)
        if head in _TUPLE_NAMES:
            if len(args) == 2 and isinstance(args[1], ast.Constant) and args[1].value is Ellipsis:
                return Tuple((parse_annotation(args[0], resolve),), variadic=True)
            if any(isinstance(a, ast.Constant) and a.value is Ellipsis for a in args):
                raise AnnotationError("`...` may only follow a single item type")
            return Tuple(tuple(parse_annotation(a, resolve) for a in args))
        if head in ("builtins.list", "typing.List"):
            raise AnnotationError("lists are mutable; use a tuple")
        raise AnnotationError(f"`{head or ast.unparse(node.value)}[...]` is not a region type")
    name = resolve(node)
    if name in _SCALAR_NAMES:
        return Scalar(_SCALAR_NAMES[name])
    if name in _TUPLE_NAMES:
        raise AnnotationError("a bare tuple needs its item types: `tuple[int, ...]`")
    return _refuse(name, node)


def _refuse(name: str | None, node: ast.expr) -> RegionType:
    if name is None:
        raise AnnotationError("regions take torch.Tensor, int, float, bool, str, torch.dtype, optionals and tuples of these")
    raise AnnotationError(
        f"`{name.removeprefix('builtins.')}` is not one of torch.Tensor, int, float, bool, str, torch.dtype, optionals and tuples of these"
    )


def _union(members: list[ast.expr], resolve: Resolver, node: ast.expr) -> RegionType:
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
        return Optional(_plain(parse_annotation(others[0], resolve)))
    raise AnnotationError("the only union a region takes is `X | None`")


def _plain(kind: RegionType) -> RegionType:
    """The inside of an optional: `Optional[Optional[X]]` is `Optional[X]`, as typing says."""
    if isinstance(kind, NoneType):
        raise AnnotationError("`None | None` is not a value")
    return kind.inner if isinstance(kind, Optional) else kind
