"""Whether the helpers a region's build inlined are the functions Python loaded.

A build compiles each helper from its file's text as it is when the build
runs; Python runs the function objects the region's module imported, which
may come from an older text (the helper's file edited since, and only the
region's module imported again). A helper is current when the code object
Python holds is the one the bytes the build modelled compile to, and the file
still holds those bytes.
"""

from __future__ import annotations

import inspect
import os
import types
from collections.abc import Iterator
from typing import Any

from ppy.bytecode import compiled_functions
from ppy.decorators import Region
from ppy_check.source import SourceError, read_source


def _built_from(path: str, digest: str) -> dict[str, types.CodeType] | None:
    """Every function's code object in the file's text, by qualified name, when the file still holds the bytes
    the build modelled (``digest``); None when it holds others, or cannot be read or compiled."""
    try:
        source = read_source(path)
        if source.digest != digest:
            return None  # the helpers compiled are of bytes the file no longer holds: nothing to vouch for them
        return compiled_functions.of(source)
    except (OSError, SourceError, SyntaxError, ValueError, RecursionError, MemoryError):  # an edit Python could not load either
        return None


def _functions(value: Any, files: set[str]) -> Iterator[types.FunctionType]:
    """The plain functions a module-level name makes reachable: itself, a region's body, or what a module
    defined in one of ``files`` holds (``layers.scale(x)`` as well as ``scale(x)``)."""
    if isinstance(value, Region):
        value = value.python
    if isinstance(value, types.FunctionType):
        yield inspect.unwrap(value)
    elif isinstance(value, types.ModuleType) and _real(getattr(value, "__file__", None) or "") in files:
        for member in list(vars(value).values()):
            if isinstance(member, (types.FunctionType, Region)):
                yield from _functions(member, files)


def _real(path: str) -> str:
    return os.path.realpath(path) if path else ""


def stale_helper(region: Region[..., Any], dependencies: dict[str, str]) -> str | None:
    """A file the build compiled helpers from whose functions, as the region's module sees them, are not what
    the bytes the build modelled (``dependencies``: path -> their sha256) compile to; None when every one is
    current (or none is in sight)."""
    if not dependencies:
        return None
    files = {_real(path): path for path in dependencies}
    digests = {_real(path): digest for path, digest in dependencies.items()}
    namespace = inspect.unwrap(region.python).__globals__
    loaded: dict[str, list[types.CodeType]] = {}
    for value in list(namespace.values()):
        for function in _functions(value, set(files)):
            path = _real(function.__code__.co_filename)
            if path in files:
                loaded.setdefault(path, []).append(function.__code__)
    for path, codes in loaded.items():
        current = _built_from(files[path], digests[path])
        if current is None or any(current.get(code.co_qualname) != code for code in codes):
            return files[path]
    return None
