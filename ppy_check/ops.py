"""What the checker knows about torch without importing it: the shipped ``opdata.json``.

Regenerate with ``python -m ppy_check.gen_opdata``; a test fails when the file
no longer matches the installed torch.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DATA_PATH = Path(__file__).with_name("opdata.json")

# Python namespaces whose builtins reach a native function, by dotted module name.
FUNCTION_NAMESPACES = ("torch", "torch.nn.functional", "torch._C._nn", "torch.special", "torch.linalg", "torch.fft")


@dataclass(frozen=True)
class OpFacts:
    """One native function or method: which arguments it writes, which it returns a view of.

    ``writes``/``views`` hold (argument name, position) with position -1 for a
    method's receiver. ``returns`` is one letter a result: ``t`` tensor, ``T``
    list of tensors, ``i``/``f``/``b``/``s`` int, float, bool, Scalar; ``?``
    anything else or varying by overload.
    """

    native: str
    writes: tuple[tuple[str, int], ...] = ()
    views: tuple[tuple[str, int], ...] = ()
    returns: str = "t"


@functools.lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    return json.loads(DATA_PATH.read_text(encoding="utf-8"))


def torch_version() -> str:
    return str(_data()["torch_version"])


def _facts(native: str, raw: dict[str, Any]) -> OpFacts:
    return OpFacts(
        native=native,
        writes=tuple((name, pos) for name, pos in raw.get("w", ())),
        views=tuple((name, pos) for name, pos in raw.get("v", ())),
        returns=raw.get("r", "t"),
    )


@functools.lru_cache(maxsize=None)
def native_function(native: str) -> OpFacts | None:
    raw = _data()["namespaces"]["aten"].get(native)
    return None if raw is None else _facts(native, raw)


@functools.lru_cache(maxsize=None)
def function(namespace: str, name: str) -> OpFacts | None:
    """The native function a builtin ``namespace.name`` is bound to, if any."""
    native = _data()["namespaces"].get(namespace, {}).get(name)
    return None if native is None else native_function(native)


@functools.lru_cache(maxsize=None)
def method(name: str) -> OpFacts | None:
    raw = _data()["namespaces"]["Tensor"].get(name)
    return None if raw is None else _facts(name, raw)
