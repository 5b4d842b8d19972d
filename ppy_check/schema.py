"""torch's operators as typed records, read from ``opdata.json`` (no torch needed).

``python -m ppy_check.gen_opdata`` writes that file from torchgen's own model
of ``native_functions.yaml``; this module turns it back into frozen
dataclasses: schema types, arguments with their alias and write annotations,
the Python-visible overloads in the order torch's argument parser tries
them, and the effects torch's schemas leave out (``probe.py`` observed them).
The checker resolves calls against these; the compiler prints C++ from them.
"""

from __future__ import annotations

import enum
import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ppy_check.opdata_lines import DecodedOpData, OpDataLines, OpDataSource

DATA_PATH = Path(__file__).with_name("opdata.json")  # the shipped file (installed_opdata.py: which one is read)


class Base(enum.Enum):
    """torchgen's ``BaseTy``: the scalar types a schema argument can have."""

    Tensor = "Tensor"
    int = "int"
    SymInt = "SymInt"
    float = "float"
    bool = "bool"
    str = "str"
    Scalar = "Scalar"
    ScalarType = "ScalarType"
    Device = "Device"
    DeviceIndex = "DeviceIndex"
    Layout = "Layout"
    MemoryFormat = "MemoryFormat"
    Generator = "Generator"
    Dimname = "Dimname"
    DimVector = "DimVector"
    QScheme = "QScheme"
    Storage = "Storage"
    Stream = "Stream"
    SymBool = "SymBool"
    GraphModule = "GraphModule"


@dataclass(frozen=True)
class BaseType:
    base: Base

    def __str__(self) -> str:
        return self.base.value


@dataclass(frozen=True)
class OptionalType:
    elem: SchemaType

    def __str__(self) -> str:
        return f"{self.elem}?"


@dataclass(frozen=True)
class ListType:
    elem: SchemaType
    size: int | None

    def __str__(self) -> str:
        return f"{self.elem}[{self.size or ''}]"


SchemaType = BaseType | OptionalType | ListType


def decode_type(raw: Any) -> SchemaType:
    if isinstance(raw, str):
        return BaseType(Base(raw))
    if raw[0] == "?":
        return OptionalType(decode_type(raw[1]))
    return ListType(decode_type(raw[1]), raw[2])


def is_tensor_like(kind: SchemaType) -> bool:
    """Tensor, Tensor?, Tensor[] and Tensor?[]: arguments that carry tensors (and so aliases)."""
    while isinstance(kind, (OptionalType, ListType)):
        kind = kind.elem
    return kind == BaseType(Base.Tensor)


@dataclass(frozen=True)
class Alias:
    """A ``Tensor(a!)``-style annotation: the alias sets, and whether the op writes through it."""

    sets: frozenset[str]
    write: bool


def _alias(raw: Any) -> Alias | None:
    return None if raw is None else Alias(frozenset(raw[0]), bool(raw[1]))


@dataclass(frozen=True)
class Named:
    """A schema default that is a name rather than a literal (``Mean``, ``contiguous_format``, ``long``)."""

    name: str


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()  # a parameter with no default


def _default(raw: Any) -> Any:
    if isinstance(raw, dict):
        return Named(raw["name"])
    if isinstance(raw, list):
        return tuple(raw)
    return raw


@dataclass(frozen=True)
class SchemaArg:
    name: str
    type: SchemaType
    alias: Alias | None
    default: Any  # MISSING, or the literal / Named default
    cpp_default: str | None  # the C++ expression for the default, as torchgen renders it

    @property
    def is_write(self) -> bool:
        return self.alias is not None and self.alias.write


@dataclass(frozen=True)
class SchemaReturn:
    name: str
    type: SchemaType
    alias: Alias | None


@dataclass(frozen=True)
class HiddenWrite:
    """A write the schema does not annotate; ``when`` names a bool argument and the value it must have."""

    arg: str
    when: tuple[str, bool] | None


@dataclass(frozen=True)
class Effects:
    """What running the op showed beyond its schema (see probe.py)."""

    writes: tuple[HiddenWrite, ...] = ()
    aliases: tuple[tuple[int, str], ...] = ()  # (return index, argument it may hand back or view)
    random: bool = False


@dataclass(frozen=True)
class Native:
    """One native function overload (``add.Tensor``)."""

    key: str
    name: str  # without the overload name
    ops_struct: str  # at::_ops::<ops_struct>::call, the dispatcher entry for exactly this overload
    header: str  # ATen/ops/<header>_ops.h
    args: tuple[SchemaArg, ...]
    returns: tuple[SchemaReturn, ...]
    seeded: bool  # draws random numbers (torch's nondeterministic_seeded tag)
    inplace_view: bool
    effects: Effects

    @functools.cached_property
    def arg(self) -> dict[str, SchemaArg]:
        return {a.name: a for a in self.args}

    @property
    def writes(self) -> bool:
        return any(a.is_write for a in self.args)


@dataclass(frozen=True)
class PyParam:
    """A parameter as Python sees it: ``input`` for a function's ``self``, keyword-only or not, a default or not."""

    name: str
    schema_name: str
    type: SchemaType
    kwonly: bool
    default: Any = MISSING

    @property
    def required(self) -> bool:
        return self.default is MISSING


@dataclass(frozen=True)
class Overload:
    """One Python signature of a name, bound to its native function (and its ``out=`` form)."""

    name: str
    native: Native
    params: tuple[PyParam, ...]
    out: Native | None
    outputs: tuple[str, ...]
    numbers_as_tensors: bool
    method: bool
    fixed: tuple[tuple[str, Any], ...] = ()  # schema arguments a hand-bound method sets itself (`Tensor.float`)

    @functools.cached_property
    def positional(self) -> tuple[PyParam, ...]:
        return tuple(p for p in self.params if not p.kwonly)

    @functools.cached_property
    def by_name(self) -> dict[str, PyParam]:
        return {p.name: p for p in self.params}

    @functools.cached_property
    def required(self) -> tuple[str, ...]:
        """The schema names of the parameters a call must give."""
        return tuple(p.schema_name for p in self.params if p.required)

    def signature_text(self) -> str:
        """How the overload reads in an error message, close to torch's own."""
        parts, star = [], False
        for param in self.params:
            if param.kwonly and not star:
                parts.append("*")
                star = True
            text = f"{param.type} {param.name}"
            if not param.required:
                text += f"={_show_default(param.default)}"
            parts.append(text)
        if self.outputs:
            if not star:
                parts.append("*")
            parts.append("Tensor out=None")
        return f"({', '.join(parts)})"


def _show_default(value: Any) -> str:
    if isinstance(value, Named):
        return value.name
    return repr(value) if isinstance(value, str) else str(value)


class OpData:
    """The shipped op data, decoded on demand (most checks touch a few dozen ops of thousands)."""

    def __init__(self, source: OpDataSource | dict[str, Any]):
        self.lines: OpDataSource = DecodedOpData(source) if isinstance(source, dict) else source
        self.torch_version: str = self.lines.value("torch_version")
        self._natives: dict[str, Native] = {}
        self._functions: dict[str, tuple[Overload, ...]] = {}
        self._methods: dict[str, tuple[Overload, ...]] = {}

    @functools.cached_property
    def raw(self) -> dict[str, Any]:
        """The whole file decoded, for the tools that walk every op (probe, drift)."""
        return self.lines.decoded()

    @functools.cached_property
    def bindings(self) -> dict[str, dict[str, str]]:
        found: dict[str, dict[str, str]] = self.lines.value("bindings", {})
        return found

    @functools.cached_property
    def properties(self) -> frozenset[str]:
        return frozenset(self.lines.value("properties", ()))

    def native(self, key: str) -> Native:
        found = self._natives.get(key)
        if found is None:
            raw = self.lines.entry("natives", key)
            if raw is None:
                raise KeyError(key)
            effects = self.lines.entry("effects", key) or {}
            name = key.split(".")[0]
            found = self._natives[key] = Native(
                key=key,
                name=name,
                ops_struct=raw["ops"],
                header=raw["header"],
                args=tuple(SchemaArg(a[0], decode_type(a[1]), _alias(a[2]), _default(a[3]) if len(a) > 3 else MISSING,
                                     a[4] if len(a) > 4 else None) for a in raw["args"]),
                returns=tuple(SchemaReturn(r[0], decode_type(r[1]), _alias(r[2])) for r in raw["returns"]),
                seeded="nondeterministic_seeded" in raw.get("tags", ()),
                inplace_view="inplace_view" in raw.get("tags", ()),
                effects=Effects(
                    writes=tuple(HiddenWrite(w[0], tuple(w[1]) if w[1] else None) for w in effects.get("writes", ())),
                    aliases=tuple((a[0], a[1]) for a in effects.get("aliases", ())),
                    random=bool(effects.get("random", False)),
                ),
            )
        return found

    def _overloads(self, raw: list[dict[str, Any]], name: str, method: bool) -> tuple[Overload, ...]:
        return tuple(
            Overload(
                name=name,
                native=self.native(entry["native"]),
                params=tuple(PyParam(p[0], p[1], decode_type(p[2]), bool(p[3]), _default(p[4]) if len(p) > 4 else MISSING)
                             for p in entry["args"]),
                out=self.native(entry["out"]) if "out" in entry else None,
                outputs=tuple(entry.get("outputs", ())),
                numbers_as_tensors=bool(entry.get("numbers_as_tensors", False)),
                method=method,
                fixed=tuple((k, _default(v)) for k, v in sorted(entry.get("fixed", {}).items())),
            )
            for entry in raw
        )

    def function(self, name: str) -> tuple[Overload, ...]:
        """Overloads of a native function's Python signature name (``add``, ``special_erf``, ``log_sigmoid``)."""
        found = self._functions.get(name)
        if found is None:
            found = self._functions[name] = self._overloads(self.lines.entry("functions", name) or [], name, method=False)
        return found

    def method(self, name: str) -> tuple[Overload, ...]:
        found = self._methods.get(name)
        if found is None:
            found = self._methods[name] = self._overloads(self.lines.entry("methods", name) or [], name, method=True)
        return found

    def binding(self, namespace: str, name: str) -> str | None:
        """The native signature name a Python builtin ``namespace.name`` is (by identity, at generation time)."""
        return self.bindings.get(namespace, {}).get(name)

    def has_function(self, name: str) -> bool:
        return self.lines.has("functions", name)

    def has_method(self, name: str) -> bool:
        return self.lines.has("methods", name)


@functools.lru_cache(maxsize=1)
def opdata() -> OpData:
    """The op data of the installed torch's release: the shipped file, or one made for that release in the
    cache where another torch is installed (``installed_opdata``)."""
    from ppy_check.installed_opdata import in_use

    text = in_use().data.read_text(encoding="utf-8")
    return OpData(OpDataLines(text) if OpDataLines.laid_out(text) else json.loads(text))
