"""Pure functions from the model's types to C++: value types, operator parameter types, literals.

Two directions meet here. A region value's static type (``model/types.py``)
has one C++ type; an operator's schema type (``schema.py``) decides the C++
type ``at::_ops::<op>::call`` takes for it (torchgen's faithful signature,
SymInt included). ``argument`` spells a value of the one as the other.
"""

from __future__ import annotations

import math

from ppy_check.model import types as t
from ppy_check.schema import Base, BaseType, ListType, OptionalType, SchemaType


class NoCppForm(Exception):
    """A type with no C++ spelling here (a model invariant says this cannot happen for checked regions)."""


# --- literals -------------------------------------------------------------------------


def int_literal(value: int) -> str:
    if value == -(2**63):
        return "(-INT64_C(9223372036854775807) - 1)"
    return f"int64_t{{{value}}}" if -(2**31) < value < 2**31 else f"INT64_C({value})"


def float_literal(value: float) -> str:
    if math.isinf(value):
        return ("-" if value < 0 else "") + "::std::numeric_limits<double>::infinity()"
    if math.isnan(value):
        return "::std::numeric_limits<double>::quiet_NaN()"
    text = repr(float(value))
    # `2` and `2.0` promote differently: a float literal must stay a double in C++.
    return text if any(c in text for c in ".en") else text + ".0"


def string_literal(value: str) -> str:
    """A C++ string literal holding exactly these UTF-8 bytes: every byte outside printable ASCII escaped."""
    out = []
    for byte in value.encode("utf-8", "surrogatepass"):
        char = chr(byte)
        if char in '"\\?':
            out.append("\\" + char)  # `?` escaped too: no trigraphs
        elif 32 <= byte < 127:
            out.append(char)
        else:
            out.append(f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


def std_string(value: str) -> str:
    return f"::std::string({string_literal(value)}, {len(value.encode('utf-8', 'surrogatepass'))})"


def comment(text: str) -> str:
    """Text as a one-line C++ comment that nothing in it can end, continue or turn into code.

    Only printable ASCII stays; every other character (a newline above all) and
    the backslash (a backslash before a newline would splice the next line
    into the comment) become `<U+XXXX>`.
    """
    return "// " + "".join(c if 32 <= ord(c) < 127 and c != "\\" else f"<U+{ord(c):04X}>" for c in text)


# --- region values ----------------------------------------------------------------------


def cpp_type(kind: t.Type) -> str:
    """The C++ type holding a region value of this type."""
    simple = {
        t.TensorT: "at::Tensor", t.IntT: "int64_t", t.FloatT: "double", t.NumberT: "at::Scalar", t.BoolT: "bool",
        t.StrT: "::std::string", t.DtypeT: "at::ScalarType", t.DeviceT: "at::Device", t.LayoutT: "at::Layout",
        t.MemoryFormatT: "at::MemoryFormat",
    }
    found = simple.get(type(kind))
    if found is not None:
        return found
    if isinstance(kind, t.NoneT):
        return "void"
    if isinstance(kind, t.OptionalT):
        return f"::std::optional<{cpp_type(kind.inner)}>"
    if isinstance(kind, t.TupleT):
        return f"::std::tuple<{', '.join(cpp_type(i) for i in kind.items)}>"
    if isinstance(kind, t.SeqT):
        return f"::std::vector<{cpp_type(kind.item)}>"
    raise NoCppForm(str(kind))


def param_type(kind: t.Type) -> str:
    """How the region's C++ function takes a parameter: small values by value, the rest by const reference."""
    declared = cpp_type(kind)
    if isinstance(kind, (t.IntT, t.FloatT, t.BoolT, t.DtypeT, t.LayoutT, t.MemoryFormatT)):
        return declared
    return f"const {declared}&"


# --- converting a value to what a schema parameter takes --------------------------------------


def _is(kind: SchemaType, base: Base) -> bool:
    return isinstance(kind, BaseType) and kind.base is base


def takes_optional_tensors(kind: SchemaType) -> bool:
    """Whether a parameter is a list of optional tensors (advanced indexing's ``Tensor?[]``): a c10::List, whose
    header and ``ppy::optional_tensors`` come with ppy_indexing.h."""
    if isinstance(kind, OptionalType):
        kind = kind.elem
    return isinstance(kind, ListType) and isinstance(kind.elem, OptionalType) and _is(kind.elem.elem, Base.Tensor)


def argument(code: str, value: t.Type, kind: SchemaType) -> str:
    """C++ passing ``code`` (a value of type ``value``) where ``at::_ops`` takes schema type ``kind``."""
    if isinstance(value, t.NoneT):
        return "::std::nullopt"
    if isinstance(kind, OptionalType):
        if isinstance(value, t.OptionalT):
            return _optional_of_optional(code, value, kind)
        inner = argument(code, value, kind.elem)
        return f"{optional_cpp(kind.elem)}({inner})"
    if isinstance(kind, ListType):
        return _list_argument(code, value, kind)
    assert isinstance(kind, BaseType)
    base = kind.base
    if base is Base.Tensor:
        if isinstance(value, t.TensorT):
            return code
        return f"ppy::wrapped_number({scalar(code, value)})"
    if base is Base.Scalar:
        return scalar(code, value)
    if base is Base.float:
        return to_double(code, value)
    if base is Base.int:
        return code if isinstance(value, t.IntT) else f"static_cast<int64_t>({code})"
    if base is Base.SymInt:
        return f"c10::SymInt({code})"
    if base is Base.bool:
        return code
    if base is Base.str:
        return f"c10::string_view({code})"
    if base is Base.ScalarType:
        return code
    if base is Base.Device:
        if isinstance(value, t.StrT):
            return f"c10::Device({code})"
        if isinstance(value, t.IntT):
            return f"ppy::device_index({code})"
        return code
    if base in (Base.Layout, Base.MemoryFormat):
        return code
    raise NoCppForm(f"{value} as {kind}")


def _optional_of_optional(code: str, value: t.OptionalT, kind: OptionalType) -> str:
    """An optional region value into an optional parameter: convert the inside, keep None."""
    target = optional_cpp(kind.elem)
    owner = _owner(kind.elem)
    if owner is not None:
        # The parameter is a view (an ArrayRef, a string_view) onto storage it does not own. A lambda returning
        # the view would leave it pointing into its own locals, dead before the call (`int | None` into `int[1]?`
        # made a vector there). So the storage is an owning optional passed by value into ppy::optional_view:
        # the region's own variable, or a temporary of the call's full expression, either outliving the call.
        owned = code
        if cpp_type(value.inner) != owner:
            inside = _owned("(*ppy_o)", value.inner, kind.elem)
            owned = (f"[&]() -> ::std::optional<{owner}> {{ const auto& ppy_o = {code}; "
                     f"if (!ppy_o) return ::std::nullopt; return {inside}; }}()")
        return f"ppy::optional_view<{target}>({owned})"
    if cpp_type(value.inner) == optional_inner_cpp(kind.elem):
        return code
    converted = argument("(*ppy_o)", value.inner, kind.elem)
    return f"[&]() -> {target} {{ const auto& ppy_o = {code}; if (!ppy_o) return ::std::nullopt; return {converted}; }}()"


# The region value type each list parameter's items are, where the parameter is a view (an ArrayRef) onto them.
_VIEWED_ITEMS: dict[Base, t.Type] = {Base.int: t.INT, Base.SymInt: t.INT, Base.float: t.FLOAT, Base.Tensor: t.TENSOR,
                                     Base.Scalar: t.NUMBER}


def _owner(kind: SchemaType) -> str | None:
    """The owning C++ type a parameter of schema type ``kind`` views (None where it takes a value it owns)."""
    if _is(kind, Base.str):
        return "::std::string"
    if isinstance(kind, ListType) and isinstance(kind.elem, BaseType) and kind.elem.base in _VIEWED_ITEMS:
        return cpp_type(t.SeqT(_VIEWED_ITEMS[kind.elem.base]))
    return None


def _owned(code: str, value: t.Type, kind: SchemaType) -> str:
    """``code`` (a region value of type ``value``) as the owning value ``_owner(kind)`` names."""
    if _is(kind, Base.str):
        return code  # a str is a ::std::string
    assert isinstance(kind, ListType) and isinstance(kind.elem, BaseType)
    item = _VIEWED_ITEMS[kind.elem.base]
    if isinstance(value, (t.IntT, t.BoolT)) and item == t.INT:
        return f"::std::vector<int64_t>({kind.size}, {code})"  # `dim=1` for `int[1]`: the int, size times
    return convert(code, value, t.SeqT(item))


def optional_inner_cpp(kind: SchemaType) -> str:
    if isinstance(kind, BaseType):
        return {
            Base.Tensor: "at::Tensor", Base.int: "int64_t", Base.SymInt: "c10::SymInt", Base.float: "double",
            Base.bool: "bool", Base.Scalar: "at::Scalar", Base.ScalarType: "at::ScalarType", Base.str: "c10::string_view",
            Base.Device: "at::Device", Base.Layout: "at::Layout", Base.MemoryFormat: "at::MemoryFormat",
            Base.Generator: "at::Generator", Base.DeviceIndex: "at::DeviceIndex",
        }[kind.base]
    if isinstance(kind, ListType):
        return _list_cpp(kind)
    raise NoCppForm(str(kind))


def optional_cpp(kind: SchemaType) -> str:
    """The C++ type of an optional of ``kind`` as ``at::_ops`` takes it."""
    if isinstance(kind, ListType) and isinstance(kind.elem, BaseType) and kind.elem.base is Base.int:
        return "at::OptionalIntArrayRef"
    if isinstance(kind, ListType) and isinstance(kind.elem, BaseType) and kind.elem.base is Base.SymInt:
        return "at::OptionalSymIntArrayRef"
    return f"::std::optional<{optional_inner_cpp(kind)}>"


def _list_cpp(kind: ListType) -> str:
    elem = kind.elem
    if _is(elem, Base.int):
        return "at::IntArrayRef"
    if _is(elem, Base.SymInt):
        return "c10::SymIntArrayRef"
    if _is(elem, Base.float):
        return "at::ArrayRef<double>"
    if _is(elem, Base.Tensor):
        return "at::TensorList"
    if _is(elem, Base.Scalar):
        return "at::ArrayRef<at::Scalar>"
    if _is(elem, Base.bool):
        return f"::std::array<bool, {kind.size}>"
    if isinstance(elem, OptionalType) and _is(elem.elem, Base.Tensor):
        return "c10::List<::std::optional<at::Tensor>>"
    raise NoCppForm(str(kind))


def _list_argument(code: str, value: t.Type, kind: ListType) -> str:
    elem = kind.elem
    if _is(elem, Base.int) or _is(elem, Base.SymInt):
        if isinstance(value, t.IntT):
            ints = f"::std::vector<int64_t>({kind.size}, {code})"
        else:
            ints = code  # a std::vector<int64_t>
        return ints if _is(elem, Base.int) else f"c10::fromIntArrayRefSlow({ints})"
    if _is(elem, Base.float):
        return code
    if _is(elem, Base.Tensor) or _is(elem, Base.Scalar):
        return code
    if _is(elem, Base.bool):
        return f"ppy::bool_array<{kind.size}>({code})"
    if isinstance(elem, OptionalType) and _is(elem.elem, Base.Tensor):
        return f"ppy::optional_tensors({code})"
    raise NoCppForm(f"{value} as {kind}")


def scalar(code: str, value: t.Type) -> str:
    if isinstance(value, t.NumberT):
        return code
    if isinstance(value, t.IntT):
        return f"at::Scalar(static_cast<int64_t>({code}))"
    if isinstance(value, t.FloatT):
        return f"at::Scalar(static_cast<double>({code}))"
    if isinstance(value, t.BoolT):
        return f"at::Scalar(static_cast<bool>({code}))"
    raise NoCppForm(f"{value} as a Scalar")


def to_double(code: str, value: t.Type) -> str:
    if isinstance(value, t.FloatT):
        return code
    if isinstance(value, t.NumberT):
        return f"({code}).toDouble()"
    return f"static_cast<double>({code})"


def sequence_element(kind: t.Type) -> str:
    """The C++ element type a sequence of this model type holds."""
    if isinstance(kind, t.SeqT):
        return cpp_type(kind.item)
    element = t.element_type(kind)
    if element is None:
        raise NoCppForm(f"no element type for {kind}")
    return cpp_type(element)


def _same_python_type(value: t.Type, target: t.Type) -> bool:
    """Equal but for a named tuple's field names, which C++ does not spell."""
    if isinstance(value, t.TupleT) and isinstance(target, t.TupleT):
        return value.items == target.items
    return value == target


def convert(code: str, value: t.Type, target: t.Type) -> str:
    """A region value as another region type it is assignable to (a return, a tuple item, a sequence)."""
    if value == target or cpp_type(value) == cpp_type(target) and _same_python_type(value, target):
        return code
    if isinstance(target, t.NumberT):
        return scalar(code, value)
    if isinstance(target, t.FloatT):
        return to_double(code, value)
    if isinstance(target, t.IntT) and isinstance(value, t.BoolT):
        return f"static_cast<int64_t>({code})"
    if isinstance(target, t.OptionalT):
        if isinstance(value, t.NoneT):
            return f"{cpp_type(target)}()"
        if isinstance(value, t.OptionalT):
            inner = convert("(*ppy_o)", value.inner, target.inner)
            return (f"[&]() -> {cpp_type(target)} {{ const auto& ppy_o = {code}; if (!ppy_o) return ::std::nullopt; "
                    f"return {inner}; }}()")
        return f"{cpp_type(target)}({convert(code, value, target.inner)})"
    if isinstance(target, t.SeqT) and isinstance(value, t.SeqT):
        return f"ppy::convert_vector<{cpp_type(target.item)}>({code})"
    if isinstance(value, t.TupleT) and isinstance(target, (t.TupleT, t.SeqT)):
        # A multi-output op's result (a named tuple: `torch.max(x, 1)`) returned as a tuple or a sequence.
        targets = target.items if isinstance(target, t.TupleT) else (target.item,) * len(value.items)
        if len(targets) != len(value.items):
            raise NoCppForm(f"{value} as {target}")
        items = ", ".join(convert(f"::std::get<{i}>(ppy_t)", item, goal)
                          for i, (item, goal) in enumerate(zip(value.items, targets)))
        built = f"{cpp_type(target)}({items})" if isinstance(target, t.TupleT) else f"{cpp_type(target)}{{{items}}}"
        return f"[&]() {{ const auto& ppy_t = {code}; return {built}; }}()"
    raise NoCppForm(f"{value} as {target}")
