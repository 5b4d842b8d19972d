"""The module-level values of torch and math a region may read: dtypes, layouts, memory formats, numbers."""

from __future__ import annotations

import math

from ppy_check.model import types as t
from ppy_check.model.hostmath import MATH_CONSTANTS
from ppy_check.model.ir import DtypeName, EnumName

# `torch.<name>`, by the ATen ScalarType it names.
TORCH_DTYPES = {
    "float32": "Float", "float": "Float", "float64": "Double", "double": "Double", "float16": "Half",
    "half": "Half", "bfloat16": "BFloat16", "int64": "Long", "long": "Long", "int32": "Int", "int": "Int",
    "int16": "Short", "short": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool",
    "complex64": "ComplexFloat", "cfloat": "ComplexFloat", "complex128": "ComplexDouble",
    "cdouble": "ComplexDouble", "complex32": "ComplexHalf", "chalf": "ComplexHalf",
    "float8_e4m3fn": "Float8_e4m3fn", "float8_e5m2": "Float8_e5m2", "uint16": "UInt16", "uint32": "UInt32",
    "uint64": "UInt64",
}
# Python's own types as dtypes (torch's parser takes `x.to(float)`).
PYTHON_TYPE_DTYPES = {"float": "Double", "int": "Long", "bool": "Bool", "complex": "ComplexDouble"}

TORCH_ENUMS: dict[str, tuple[t.Type, str]] = {
    "strided": (t.LAYOUT, "at::kStrided"),
    "sparse_coo": (t.LAYOUT, "at::kSparse"),
    "sparse_csr": (t.LAYOUT, "at::kSparseCsr"),
    "sparse_csc": (t.LAYOUT, "at::kSparseCsc"),
    "sparse_bsr": (t.LAYOUT, "at::kSparseBsr"),
    "sparse_bsc": (t.LAYOUT, "at::kSparseBsc"),
    "_mkldnn": (t.LAYOUT, "at::kMkldnn"),
    "jagged": (t.LAYOUT, "at::kJagged"),
    "contiguous_format": (t.MEMORY_FORMAT, "at::MemoryFormat::Contiguous"),
    "legacy_contiguous_format": (t.MEMORY_FORMAT, "at::MemoryFormat::Contiguous"),  # the same object in Python
    "preserve_format": (t.MEMORY_FORMAT, "at::MemoryFormat::Preserve"),
    "channels_last": (t.MEMORY_FORMAT, "at::MemoryFormat::ChannelsLast"),
    "channels_last_3d": (t.MEMORY_FORMAT, "at::MemoryFormat::ChannelsLast3d"),
}

TORCH_FLOATS = {"pi": math.pi, "e": math.e, "inf": math.inf, "nan": math.nan}


def module_constant(dotted: str) -> tuple[object, t.Type] | None:
    """The value and type of ``torch.float32``, ``math.pi``, ``torch.channels_last``..., or None."""
    module, _, name = dotted.rpartition(".")
    if module == "torch":
        if name in TORCH_DTYPES:
            return DtypeName(TORCH_DTYPES[name]), t.DTYPE
        if name in TORCH_ENUMS:
            kind, cpp = TORCH_ENUMS[name]
            return EnumName(cpp), kind
        if name in TORCH_FLOATS:
            return TORCH_FLOATS[name], t.FLOAT
    if module == "math" and name in MATH_CONSTANTS:
        return MATH_CONSTANTS[name], t.FLOAT
    return None


def python_repr(value: object) -> str:
    """How Python writes the object a torch or math constant is (``torch.float`` is ``torch.float32``): what
    the runtime holds the live object to (ppy.guard), the first spelling of each in the tables above."""
    if isinstance(value, DtypeName):
        return "torch." + next(name for name, scalar in TORCH_DTYPES.items() if scalar == value.scalar_type)
    if isinstance(value, EnumName):
        return "torch." + next(name for name, (_, cpp) in TORCH_ENUMS.items() if cpp == value.cpp)
    return repr(value)
