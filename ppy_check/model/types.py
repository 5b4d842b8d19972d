"""The static types of the values a region computes, as frozen records.

Each maps onto one C++ type (``ppy_compile.cpp_types``) and one set of Python
objects at the region's boundary. ``NumberT`` is what a parameter annotated
``float`` holds: PEP 484 lets an ``int`` stand for a ``float``, and Python
keeps it an ``int`` (so ``x * factor`` stays an integer tensor); the compiled
code carries the same distinction at run time.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class TensorT:
    def __str__(self) -> str:
        return "torch.Tensor"


@dataclass(frozen=True)
class IntT:
    def __str__(self) -> str:
        return "int"


@dataclass(frozen=True)
class FloatT:
    """Certainly a Python ``float`` (a literal, a true division, ``math.sqrt``...)."""

    def __str__(self) -> str:
        return "float"


@dataclass(frozen=True)
class NumberT:
    """An ``int`` or a ``float``, known only at run time (a ``float`` parameter, ``n ** m``)."""

    def __str__(self) -> str:
        return "float"


@dataclass(frozen=True)
class BoolT:
    def __str__(self) -> str:
        return "bool"


@dataclass(frozen=True)
class StrT:
    def __str__(self) -> str:
        return "str"


@dataclass(frozen=True)
class DtypeT:
    def __str__(self) -> str:
        return "torch.dtype"


@dataclass(frozen=True)
class DeviceT:
    def __str__(self) -> str:
        return "torch.device"


@dataclass(frozen=True)
class LayoutT:
    def __str__(self) -> str:
        return "torch.layout"


@dataclass(frozen=True)
class MemoryFormatT:
    def __str__(self) -> str:
        return "torch.memory_format"


@dataclass(frozen=True)
class NoneT:
    def __str__(self) -> str:
        return "None"


@dataclass(frozen=True)
class TupleT:
    """A tuple of known length; ``names`` for the named fields of a multi-output op (``.values``)."""

    items: tuple[Type, ...]
    names: tuple[str, ...] | None = None
    # The class Python hands such a result back as (torch.return_types.<structseq>), for a multi-output op.
    structseq: str | None = None

    def __str__(self) -> str:
        return f"tuple[{', '.join(str(i) for i in self.items)}]" if self.items else "tuple[()]"


@dataclass(frozen=True)
class SeqT:
    """A sequence whose length is known only at run time: ``tuple[int, ...]``, ``x.shape``, ``Tensor[]``."""

    item: Type
    # What a parameter of this type is passed as (its annotation's word), not part of the type: "tuple", a
    # `torch.Size` ("size": Python's value is a torch.Size, as `x.shape` is), or a `Sequence[...]` ("sequence": a
    # list or a tuple, read as a tuple; what tells the two apart is refused on it).
    passed: str = field(default="tuple", compare=False)

    def __str__(self) -> str:
        return f"tuple[{self.item}, ...]"


@dataclass(frozen=True)
class OptionalT:
    inner: Type

    def __str__(self) -> str:
        return f"{self.inner} | None"


@dataclass(frozen=True)
class SliceT:
    """``a:b:c`` inside an index."""

    def __str__(self) -> str:
        return "slice"


@dataclass(frozen=True)
class EllipsisT:
    def __str__(self) -> str:
        return "ellipsis"


@dataclass(frozen=True)
class PyTypeT:
    """``float``, ``int``, ``bool`` used as a value: torch takes them as dtypes (``x.to(float)``)."""

    name: str

    def __str__(self) -> str:
        return f"type[{self.name}]"


@dataclass(frozen=True)
class FunctionT:
    """A function passed as a value in torch's Python code (``_combine_input_and_mask(sum, ...)``): known where the
    region is built, so it is called, named (``op.__name__``) and tested (``callable(op)``) there; it has no C++
    form, and no region value ever holds one at run time."""

    name: str

    def __str__(self) -> str:
        return "function"


Type = (TensorT | IntT | FloatT | NumberT | BoolT | StrT | DtypeT | DeviceT | LayoutT | MemoryFormatT | NoneT | TupleT
        | SeqT | OptionalT | SliceT | EllipsisT | PyTypeT | FunctionT)

TENSOR = TensorT()
INT = IntT()
FLOAT = FloatT()
NUMBER = NumberT()
BOOL = BoolT()
STR = StrT()
DTYPE = DtypeT()
DEVICE = DeviceT()
LAYOUT = LayoutT()
MEMORY_FORMAT = MemoryFormatT()
NONE = NoneT()
SLICE = SliceT()
ELLIPSIS = EllipsisT()

NUMERIC = (IntT, FloatT, NumberT, BoolT)


def is_number(kind: Type) -> bool:
    return isinstance(kind, NUMERIC)


def strip_optional(kind: Type) -> Type:
    return kind.inner if isinstance(kind, OptionalT) else kind


def optional(kind: Type) -> Type:
    """``X | None``, flattened as typing does (``Optional[Optional[X]]`` is ``Optional[X]``)."""
    return kind if isinstance(kind, (OptionalT, NoneT)) else OptionalT(kind)


def item_types(kind: Type) -> tuple[Type, ...] | None:
    """The item types of a tuple of known length, else None."""
    return kind.items if isinstance(kind, TupleT) else None


def read_only(kind: Type) -> SeqT | None:
    """The `Sequence[...]` parameter's type ``kind`` is or holds (a list or a tuple at run time), if any."""
    if isinstance(kind, SeqT):
        return kind if kind.passed == "sequence" else read_only(kind.item)
    if isinstance(kind, OptionalT):
        return read_only(kind.inner)
    if isinstance(kind, TupleT):
        return next((found for item in kind.items if (found := read_only(item)) is not None), None)
    return None


def element_type(kind: Type) -> Type | None:
    """The one type every item of a sequence has, or None when they differ."""
    if isinstance(kind, SeqT):
        return kind.item
    if isinstance(kind, TupleT):
        kinds = set(kind.items)
        if len(kinds) == 1:
            return kinds.pop()
        if kinds and all(is_number(k) for k in kinds):
            return join_numbers(*kinds)
    return None


def join_numbers(*kinds: Type) -> Type:
    """The type of a value that may be any of these numbers."""
    unique = set(kinds)
    if len(unique) == 1:
        return unique.pop()
    if unique <= {INT, BOOL}:
        return INT
    return NUMBER
