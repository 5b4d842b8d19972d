"""Whether Python ran a region from a bytecode cache compiled from other text than its file holds now.

Python trusts a ``.pyc`` whose header records the source's modification time and size. A file rewritten to
the same size with its modification time put back (an editor's "keep timestamps", ``touch -d``, a restore)
still matches, so Python runs the old code while ppy would compile the new text. The file's change time
cannot be put back, so only a file changed after its ``.pyc`` was written is compiled here and its code
compared with the code Python loaded: the usual start pays two ``stat`` calls.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import types
from typing import Any

from ppy_check.source import SourceError, decode

# A .pyc header: magic, flags, then the source's mtime and size (PEP 552); flags other than 0 mean hash-based.
_HEADER = 16


def stale(function: types.FunctionType, path: str, data: bytes) -> bool:
    """Whether ``function`` (as loaded) came from a ``.pyc`` of text other than ``data``, ``path``'s bytes now."""
    if not _pyc_vouches_for_a_later_change(function, path):
        return False
    try:
        fresh = compile(decode(data, path).text, path, "exec", dont_inherit=True)
    except (SourceError, SyntaxError, ValueError, RecursionError, MemoryError):
        return True  # Python could not have compiled the file's text: what it runs came from elsewhere
    code = function.__code__
    twin = _find(fresh, code.co_qualname, code.co_name)
    return twin is None or _shape(twin) != _shape(code)


def _pyc_vouches_for_a_later_change(function: types.FunctionType, path: str) -> bool:
    """The function's module was loaded from a timestamp ``.pyc`` that matches the file's stat, although the
    file changed after the ``.pyc`` was written."""
    module = sys.modules.get(function.__module__)
    cached = getattr(module, "__cached__", None)
    if not isinstance(cached, str) or os.path.realpath(getattr(module, "__file__", "") or "") != os.path.realpath(path):
        return False
    try:
        source, pyc = os.stat(path), os.stat(cached)
        with open(cached, "rb") as opened:
            header = opened.read(_HEADER)
    except OSError:
        return False
    if source.st_ctime_ns <= pyc.st_mtime_ns or len(header) < _HEADER:
        return False
    if header[:4] != importlib.util.MAGIC_NUMBER or int.from_bytes(header[4:8], "little") != 0:
        return False
    mtime, size = int.from_bytes(header[8:12], "little"), int.from_bytes(header[12:16], "little")
    return mtime == int(source.st_mtime) & 0xFFFFFFFF and size == source.st_size & 0xFFFFFFFF


def _find(code: types.CodeType, qualname: str, name: str) -> types.CodeType | None:
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            if const.co_qualname == qualname and const.co_name == name:
                return const
            found = _find(const, qualname, name)
            if found is not None:
                return found
    return None


def _shape(code: types.CodeType) -> tuple[Any, ...]:
    """What a function computes, without where its lines are (a line added above moves none of it)."""
    consts = tuple(_shape(c) if isinstance(c, types.CodeType) else (type(c).__name__, repr(c)) for c in code.co_consts)
    return (code.co_code, consts, code.co_names, code.co_varnames, code.co_freevars, code.co_cellvars,
            code.co_argcount, code.co_kwonlyargcount, code.co_flags)
