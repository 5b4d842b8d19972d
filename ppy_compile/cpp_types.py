"""Pure functions from types to C++: region types, schema types, and literal values.

Two directions meet here. A region parameter's type (``ppy_check.types``)
becomes a C++ parameter type and the code that converts a Python object into
it; a schema argument type (``Tensor?``, ``int[1]?``, ``Scalar``) decides which
lowered values it accepts and how each is spelled as a C++ argument.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from ppy_check.types import TORCH_DTYPES, NoneType, Optional, RegionType, Scalar, Tuple


class TypeMismatch(Exception):
    """A value cannot be passed where a schema type is expected."""


@dataclass(frozen=True)
class CExpr:
    """A lowered Python value: C++ code and what kind of value it is.

    Kinds: tensor, opt_tensor, int, float, bool, str, dtype, device, none,
    ints (a vector of int64_t), tensors (a vector of tensors), tuple (a Python
    tuple: literal ``items``, or a std::tuple in ``code`` whose fields are
    ``items``), ellipsis, slice, and opt_<kind> for an optional parameter.
    """

    code: str
    kind: str
    items: tuple[CExpr, ...] | None = None
    names: tuple[str, ...] | None = None
    literal: object = field(default=None, compare=False)

    def item(self, index: int) -> CExpr:
        assert self.items is not None
        return self.items[index]


def dtype_code(name: str) -> str:
    return f"at::ScalarType::{TORCH_DTYPES[name]}"


def int_literal(value: int) -> str:
    return str(value) if -(2**31) < value < 2**31 else f"INT64_C({value})"


def float_literal(value: float) -> str:
    if math.isinf(value):
        return ("-" if value < 0 else "") + "::std::numeric_limits<double>::infinity()"
    if math.isnan(value):
        return "::std::numeric_limits<double>::quiet_NaN()"
    text = repr(float(value))
    # `2` and `2.0` promote differently: a float literal must stay a double in C++.
    return text if any(c in text for c in ".en") else text + ".0"


def string_literal(value: str) -> str:
    escaped = value.encode("utf-8").decode("latin-1")
    out = []
    for char in escaped:
        code = ord(char)
        if char in '"\\':
            out.append("\\" + char)
        elif 32 <= code < 127:
            out.append(char)
        else:
            out.append(f"\\{code:03o}")
    return '"' + "".join(out) + '"'


def literal(value: object) -> CExpr:
    if value is None:
        return CExpr("::std::nullopt", "none", literal=None)
    if isinstance(value, bool):
        return CExpr("true" if value else "false", "bool", literal=value)
    if isinstance(value, int):
        return CExpr(int_literal(value), "int", literal=value)
    if isinstance(value, float):
        return CExpr(float_literal(value), "float", literal=value)
    if isinstance(value, str):
        return CExpr(string_literal(value), "str", literal=value)
    if value is Ellipsis:
        return CExpr("at::indexing::Ellipsis", "ellipsis", literal=value)
    raise TypeMismatch(f"no C++ form for the literal {value!r}")


# --- region types -----------------------------------------------------------

def cpp_type(kind: RegionType) -> str:
    """The C++ type a region parameter or result of this type has."""
    if isinstance(kind, NoneType):
        return "void"
    if isinstance(kind, Scalar):
        return {
            "Tensor": "at::Tensor", "int": "int64_t", "float": "double", "bool": "bool",
            "str": "::std::string", "dtype": "at::ScalarType",
        }[kind.name]
    if isinstance(kind, Optional):
        return f"::std::optional<{cpp_type(kind.inner)}>"
    if isinstance(kind, Tuple):
        if kind.variadic:
            return f"::std::vector<{cpp_type(kind.items[0])}>"
        return f"::std::tuple<{', '.join(cpp_type(item) for item in kind.items)}>"
    raise TypeMismatch(f"no C++ type for {kind}")


def param_type(kind: RegionType) -> str:
    """How a region's C++ function takes a parameter: small values by value, the rest by const reference."""
    declared = cpp_type(kind)
    if isinstance(kind, Scalar) and kind.name in ("int", "float", "bool", "dtype"):
        return declared
    return f"const {declared}&"


def value_kind(kind: RegionType) -> str:
    """The CExpr kind of a region parameter of this type."""
    if isinstance(kind, Scalar):
        return "tensor" if kind.name == "Tensor" else kind.name
    if isinstance(kind, Optional):
        return "opt_" + value_kind(kind.inner)
    if isinstance(kind, Tuple):
        if kind.variadic:
            inner = value_kind(kind.items[0])
            return {"tensor": "tensors", "int": "ints"}.get(inner, "vector_" + inner)
        return "tuple"
    return "none"


def param_value(name: str, kind: RegionType) -> CExpr:
    """A region parameter as a lowered value."""
    if isinstance(kind, Tuple) and not kind.variadic:
        items = tuple(
            param_value(f"::std::get<{index}>({name})", item) for index, item in enumerate(kind.items)
        )
        return CExpr(name, "tuple", items=items)
    return CExpr(name, value_kind(kind))


# --- schema types ------------------------------------------------------------

_LIST = re.compile(r"^(?P<base>[A-Za-z]+\??)\[(?P<size>\d*)\](?P<optional>\?)?$")


def _is_int(value: CExpr) -> bool:
    return value.kind in ("int",)


def _is_number(value: CExpr) -> bool:
    return value.kind in ("int", "float", "bool")


def _int_items(value: CExpr) -> list[CExpr] | None:
    if value.kind == "tuple" and value.items is not None and not value.code and all(_is_int(i) for i in value.items):
        return list(value.items)
    return None


def unwrap(value: CExpr, what: str) -> CExpr:
    """An optional parameter used where a value is required: checked at run time, as Python would fail."""
    if value.kind.startswith("opt_"):
        return CExpr(f"ppy::value({value.code}, {string_literal(what)})", value.kind[4:])
    return value


def convert(value: CExpr, schema_type: str, *, numbers_as_tensors: bool, what: str = "") -> str:
    """C++ for passing ``value`` as an argument of ``schema_type``, or TypeMismatch."""
    optional = schema_type.endswith("?") and not _LIST.match(schema_type)
    list_match = _LIST.match(schema_type)
    if list_match is not None:
        optional = bool(list_match.group("optional"))
    if value.kind == "none":
        if optional:
            return "::std::nullopt"
        raise TypeMismatch("None")
    if list_match is not None:
        return _convert_list(value, list_match.group("base"), list_match.group("size"), numbers_as_tensors)
    base = schema_type.rstrip("?")
    if optional and value.kind.startswith("opt_") and _accepts_scalar(value.kind[4:], base, False):
        return value.code
    value = unwrap(value, what)
    if optional:
        # Spelled out: `int?` next to an `int[]` overload is otherwise ambiguous in C++
        # (a tensor converts to `std::optional<Tensor>` unambiguously and stays as written).
        inner = convert(value, base, numbers_as_tensors=numbers_as_tensors, what=what)
        return f"::std::optional<{_OPTIONAL_TYPES[base]}>({inner})" if base in _OPTIONAL_TYPES else inner
    kind = value.kind
    if base == "Tensor":
        if kind == "tensor":
            return value.code
        if numbers_as_tensors and _is_number(value):
            return f"ppy::wrapped_number({_scalar(value)})"
        raise TypeMismatch(kind)
    if not _accepts_scalar(kind, base, numbers_as_tensors):
        raise TypeMismatch(kind)
    if base == "Scalar":
        return _scalar(value)
    if base == "Device" and kind == "str":
        return f"c10::Device({value.code})"
    if base == "float" and kind == "int":
        return f"static_cast<double>({value.code})"
    if base in ("int", "SymInt") and value.literal is not None:
        return f"int64_t{{{value.code}}}"
    return value.code


_OPTIONAL_TYPES = {
    "int": "int64_t", "SymInt": "int64_t", "float": "double", "bool": "bool",
    "Scalar": "at::Scalar", "ScalarType": "at::ScalarType", "str": "c10::string_view", "Device": "at::Device",
}


def _scalar(value: CExpr) -> str:
    if value.kind == "int" and value.literal is not None:
        return f"at::Scalar(static_cast<int64_t>({value.code}))"
    return f"at::Scalar({value.code})"


def _accepts_scalar(kind: str, base: str, numbers_as_tensors: bool) -> bool:
    return {
        "int": kind == "int",
        "SymInt": kind == "int",
        "float": kind in ("float", "int"),
        "bool": kind == "bool",
        "Scalar": kind in ("int", "float", "bool"),
        "str": kind == "str",
        "ScalarType": kind == "dtype",
        "Device": kind in ("device", "str"),
        "Tensor": kind == "tensor" or (numbers_as_tensors and kind in ("int", "float", "bool")),
    }.get(base, False)


def _convert_list(value: CExpr, base: str, size: str, numbers_as_tensors: bool) -> str:
    if base in ("int", "SymInt"):
        if value.kind == "ints":
            return value.code
        items = _int_items(value)
        if items is not None:
            return "c10::IntArrayRef{" + ", ".join(i.code for i in items) + "}"
        if value.kind == "int" and size:
            return "c10::IntArrayRef{" + ", ".join([value.code] * int(size)) + "}"
        raise TypeMismatch(value.kind)
    if base == "float":
        if value.kind == "tuple" and value.items is not None and not value.code and all(_is_number(i) for i in value.items):
            return "::std::vector<double>{" + ", ".join(f"static_cast<double>({i.code})" for i in value.items) + "}"
        raise TypeMismatch(value.kind)
    if base == "bool":
        if value.kind == "tuple" and value.items is not None and not value.code and all(i.kind == "bool" for i in value.items):
            return f"::std::array<bool, {len(value.items)}>{{" + ", ".join(i.code for i in value.items) + "}"
        raise TypeMismatch(value.kind)
    if base == "Tensor":
        if value.kind == "tensors":
            return value.code
        if value.kind == "tuple" and value.items is not None and all(i.kind == "tensor" for i in value.items):
            codes = [i.code for i in value.items] if not value.code else [f"::std::get<{n}>({value.code})" for n in range(len(value.items))]
            return "::std::vector<at::Tensor>{" + ", ".join(codes) + "}"
        raise TypeMismatch(value.kind)
    if base == "Tensor?":
        if value.kind == "tuple" and value.items is not None and not value.code and all(
            i.kind in ("tensor", "opt_tensor", "none") for i in value.items
        ):
            parts = ["::std::optional<at::Tensor>()" if i.kind == "none" else i.code for i in value.items]
            return "c10::List<::std::optional<at::Tensor>>({" + ", ".join(parts) + "})"
        if value.kind == "tensors":
            return f"ppy::optional_list({value.code})"
        raise TypeMismatch(value.kind)
    raise TypeMismatch(value.kind)


def result_value(code: str, returns: list[tuple[str | None, str]]) -> CExpr:
    """The lowered value of a call whose schema returns ``returns`` (name, type)."""
    if len(returns) == 0:
        return CExpr(code, "none")
    if len(returns) == 1:
        return CExpr(code, _return_kind(returns[0][1]))
    items = tuple(CExpr(f"::std::get<{i}>({code})", _return_kind(t)) for i, (_, t) in enumerate(returns))
    return CExpr(code, "tuple", items=items, names=tuple(name or "" for name, _ in returns))


def _return_kind(schema_type: str) -> str:
    kind = {
        "Tensor": "tensor", "Tensor[]": "tensors", "int": "int", "SymInt": "int", "float": "float",
        "bool": "bool", "ScalarType": "dtype", "int[]": "ints", "SymInt[]": "ints",
    }.get(schema_type)
    if kind is None:
        raise TypeMismatch(f"a result of type {schema_type}")
    return kind
