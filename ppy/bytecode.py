"""Whether Python ran a region from a bytecode cache compiled from other text than its file holds now.

Python trusts a ``.pyc`` whose header records the source's modification time and size. A file rewritten to
the same size with its modification time put back (an editor's "keep timestamps", ``touch -d``, a restore)
still matches, so Python runs the old code while ppy would compile the new text. The file's change time
cannot be put back, so only a file changed after its ``.pyc`` was written is compiled here and its code
compared with the code Python loaded: the usual start pays two ``stat`` calls.

The compile of a file's bytes into its functions' code objects, kept by content, is shared with the check of
the helpers a region inlined (ppy/loaded.py).
"""

from __future__ import annotations

import importlib.util
import os
import sys
import types
from collections.abc import Iterator

from ppy_check.source import ByContent, Source, SourceError, decode

# A .pyc header: magic, flags, then the source's mtime and size (PEP 552); flags other than 0 mean hash-based.
_HEADER = 16


def stale(function: types.FunctionType, path: str, data: bytes) -> bool:
    """Whether ``function`` (as loaded) came from a ``.pyc`` of text other than ``data``, ``path``'s bytes now."""
    if not _pyc_vouches_for_a_later_change(function, path):
        return False
    try:
        fresh = compiled_functions.of(decode(data, path))
    except (SourceError, SyntaxError, ValueError, RecursionError, MemoryError):
        return True  # Python could not have compiled the file's text: what it runs came from elsewhere
    return fresh.get(function.__code__.co_qualname) != function.__code__


def _functions_of(source: Source) -> dict[str, types.CodeType]:
    """Every function's code object in the file's bytes, compiled as an import compiles them (their own encoding)."""
    return {code.co_qualname: code for code in _codes(compile(source.data, source.path, "exec", dont_inherit=True))}


# One compile per file and content: kept by the digest of the bytes compiled, never by the file's stat.
compiled_functions: ByContent[dict[str, types.CodeType]] = ByContent(_functions_of)


def _codes(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            yield from _codes(constant)


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
