"""ppy's dataclasses, made from methods compiled ahead (``gen_records``) instead of from source at every start.

When a class is created, ``dataclasses`` writes the source of its
``__init__``, ``__repr__``, ``__eq__``, ``__hash__`` and frozen
``__setattr__`` and compiles it: for ppy's some 130 records (the model, the
op schemas, the diagnostics) that compiling was half of a small check's
start-up. ``install`` has ``dataclasses`` take each text it is about to
compile for a class of ppy's own from ``_records_pyXY`` (generated for each
Python, compiled to bytecode as any installed module is), keyed by the whole
text, so a method is the one that text compiles to or none: a text the table
lacks (a class changed since the table was made, a Python it was not made
for) is compiled as before, and so is every class that is not ppy's.

``dataclasses`` compiles through the name ``exec`` in its own module
(CPython 3.10 to 3.13); ``install`` puts its function under that name, where
Python finds it before the builtin. On a Python whose ``dataclasses`` works
otherwise, nothing is taken from the table, and nothing changes.
"""

from __future__ import annotations

import builtins
import dataclasses
import importlib
import importlib.machinery
import importlib.util
import os
import sys
import types
from typing import Any

OWN_PACKAGES = frozenset({"ppy", "ppy_check", "ppy_compile", "ppy_mypy"})
TABLE_MODULE = f"ppy_check._records_py{sys.version_info[0]}{sys.version_info[1]}"

_made: dict[str, types.FunctionType] | None = None


def install() -> None:
    """Make ppy's dataclasses from the table from now on (idempotent)."""
    if vars(dataclasses).get("exec") is not _exec:
        dataclasses.exec = _exec  # type: ignore[attr-defined]


def _table() -> dict[str, types.FunctionType]:
    global _made
    if _made is None:
        _made = {}
        try:
            spec = importlib.util.find_spec(TABLE_MODULE)
        except (ImportError, ValueError):
            spec = None
        if spec is not None and _bytecode_at_hand(spec):  # else no table for this Python: every text is compiled
            _made = importlib.import_module(TABLE_MODULE).MADE
    return _made


def _bytecode_at_hand(spec: importlib.machinery.ModuleSpec) -> bool:
    """Whether the table loads as bytecode: compiling its source takes longer than the methods it holds (an
    install without .pyc files under PYTHONDONTWRITEBYTECODE compiles it at every start)."""
    return not sys.dont_write_bytecode or (spec.cached is not None and os.path.exists(spec.cached))


def made_for(source: str) -> types.FunctionType | None:
    """The table's function for ``source``, a ``def __create_fn__`` text ``dataclasses`` wrote, or None."""
    return _table().get(source)


def plain_exec(source: Any, globals_: dict[str, Any], namespace: dict[str, Any] | None) -> None:
    """What ``dataclasses``' own exec does: a text compiled without the future flags of the module calling it
    (this one's ``annotations`` would turn a method's annotations into strings)."""
    code = compile(source, "<string>", "exec", dont_inherit=True) if isinstance(source, str) else source
    builtins.exec(code, globals_, namespace)


def _exec(source: Any, globals_: dict[str, Any] | None = None, namespace: dict[str, Any] | None = None) -> None:
    if globals_ is None:  # what exec would have taken: the globals of its caller, dataclasses itself
        globals_ = vars(dataclasses)
    module = str(globals_.get("__name__", ""))
    made = made_for(source) if isinstance(source, str) and module.partition(".")[0] in OWN_PACKAGES else None
    if made is None or namespace is None:
        plain_exec(source, globals_, namespace)
        return
    # What exec(source, globals_, namespace) defines: the text's one function, with the class's module globals.
    namespace["__create_fn__"] = types.FunctionType(made.__code__, globals_, "__create_fn__")
