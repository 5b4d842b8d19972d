"""The one reader of Python source files: their bytes, the text Python reads from them, and the bytes' digest.

Every part of ppy that reads a region's file or a helper's (ppy-check, the mypy
plugin, ``ppy build``, the runtime, the pytest plugin) reads it here, so they
all see the text Python runs: decoded as ``tokenize.detect_encoding`` decides
(a UTF-8 byte-order mark, a PEP 263 coding comment on line 1 or 2, UTF-8
otherwise), with Python's newlines. A file Python could not decode is a
``SourceError`` carrying a ``ppy-syntax`` finding's words and place, never a
traceback.

The digest is of the very bytes the text was decoded from, so what a build
records is what it modelled. ``ByContent`` keeps what is derived from a file
(its parse, its compiled code) by that digest: a file rewritten to the same
size with its modification time put back reads as the new text all the same.

A leaf: it imports nothing of ppy's but the message registry and the finding record, so every layer may import it.
"""

from __future__ import annotations

import codecs
import functools
import io
import os
import re
import stat
import threading
import tokenize
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from ppy_check import messages as m
from ppy_check.diagnostic import Diagnostic

T = TypeVar("T")

# PEP 263's declaration, as tokenize reads it (tokenize.cookie_re, in bytes), and the lines it may follow.
_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)", re.ASCII)
_BLANK_OR_COMMENT = re.compile(rb"^[ \t\f]*(?:[#\r\n]|$)", re.ASCII)


@dataclass(frozen=True)
class Source:
    """One read of a file: its bytes, the text Python decodes from them, and the bytes' sha256."""

    path: str
    data: bytes = field(repr=False)
    text: str = field(repr=False)
    encoding: str  # as tokenize names it: "utf-8", "utf-8-sig" (a BOM), "iso-8859-1", ...

    @functools.cached_property
    def digest(self) -> str:
        """The bytes' sha256, made where it is read (the build cache, the mypy plugin): a check never needs it,
        and hashlib's import is a few percent of a small check's start-up."""
        return digest_of(self.data)


class SourceError(ValueError):
    """A file whose bytes Python cannot decode: the ``ppy-syntax`` message and the place of the bad bytes."""

    def __init__(self, path: str, line: int, column: int, message: str) -> None:
        super().__init__(message)
        self.path = path
        self.line = line
        self.column = column
        self.message = message

    def diagnostic(self) -> Diagnostic:
        """The file-level ``ppy-syntax`` finding, at the bad bytes (or the coding comment)."""
        return Diagnostic(self.path, self.line, self.column, m.SYNTAX, self.message, "")


def digest_of(data: bytes) -> str:
    """The sha256 of ``data``, in hex. From CPython's own sha256 module where it has one: hashlib's import loads
    OpenSSL, a tenth of a start of ppy-check whose results are all kept (``result_cache``)."""
    digest: str = _sha256()(data).hexdigest()
    return digest


@functools.lru_cache(maxsize=1)
def _sha256() -> Callable[[bytes], Any]:
    import importlib

    for module in ("_sha2", "_sha256"):  # 3.12 on, then 3.10 and 3.11
        try:
            made: Callable[[bytes], Any] = importlib.import_module(module).sha256
            return made
        except (ImportError, AttributeError):
            continue
    import hashlib

    return hashlib.sha256


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """The file's bytes, read through one descriptor; OSError for anything but a regular file.

    Opened without blocking, so a FIFO or a device under a source file's name is refused, not waited on.
    """
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as opened:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise OSError(f"{os.fspath(path)}: not a regular file")
        return opened.read()


def file_digest(path: str | os.PathLike[str]) -> str:
    """The sha256 of the file's bytes as they are now."""
    return digest_of(read_bytes(path))


def decode(data: bytes, path: str = "<string>") -> Source:
    """``data`` as Python reads source: its declared encoding, a BOM dropped, ``\\r\\n`` and ``\\r`` made ``\\n``.

    Raises SourceError where Python's own import would fail to decode it.
    """
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as error:
        encoding = _refused_declaration(data, path, error)
    if not _ascii_compatible(encoding):
        raise SourceError(path, _cookie_line(data) or 1, 1, m.SYNTAX_ENCODING_DECLARED.format(
            problem=f"`{encoding}` is not ASCII-compatible, and Python reads source only in such an encoding"))
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError as error:
        line, column = _place(data, error.start, encoding)
        bad = error.object[error.start:error.end]
        shown = f"byte 0x{bad.hex()} is" if len(bad) == 1 else "bytes " + " ".join(f"0x{b:02x}" for b in bad) + " are"
        raise SourceError(path, line, column, m.SYNTAX_UNDECODABLE.format(
            bytes=shown, encoding=_shown(encoding), reason=error.reason)) from None
    return Source(path, data, text.replace("\r\n", "\n").replace("\r", "\n"), encoding)


def read_source(path: str | os.PathLike[str]) -> Source:
    """The file read once and decoded as Python would; OSError when unreadable, SourceError when undecodable."""
    return decode(read_bytes(path), os.fspath(path))


def python_lines(text: str) -> list[str]:
    """The text's lines as Python numbers them: split at ``\n``, ``\r\n`` and ``\r`` only (a form feed or U+2028
    is no line break, though ``str.splitlines`` breaks there)."""
    if "\r" in text:  # a text not read here (check_source's callers): Python's newlines all the same
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _shown(encoding: str) -> str:
    return "UTF-8" if encoding in ("utf-8", "utf-8-sig") else encoding


def _ascii_compatible(encoding: str) -> bool:
    """Whether ASCII bytes decode to themselves (a coding comment can only be read in such an encoding)."""
    sample = "# -*- coding: x -*-\nimport ppy\n"
    try:
        return codecs.decode(sample.encode("ascii"), encoding) == sample
    except (LookupError, UnicodeError, TypeError):
        return False


def _cookie_line(data: bytes) -> int | None:
    """The line (1 or 2) of the coding comment Python would read, if there is one."""
    first, _, rest = data.removeprefix(codecs.BOM_UTF8).partition(b"\n")
    if _COOKIE.match(first):
        return 1
    if _BLANK_OR_COMMENT.match(first) and _COOKIE.match(rest.partition(b"\n")[0]):
        return 2
    return None


def _refused_declaration(data: bytes, path: str, error: SyntaxError) -> str:
    """Why tokenize refused the file's encoding, as a SourceError; or, where it found no declaration to
    refuse (the first lines are not UTF-8), UTF-8, so that decoding names the bad bytes and their place."""
    line = _cookie_line(data)
    if line is None:
        return "utf-8"
    declared = _COOKIE.match(data.removeprefix(codecs.BOM_UTF8).split(b"\n")[line - 1])
    name = declared.group(1).decode("ascii") if declared is not None else "?"
    if data.startswith(codecs.BOM_UTF8):
        problem = f"the file starts with a UTF-8 byte-order mark but its coding comment says `{name}`"
    else:
        problem = f"the coding comment names `{name}`, which is not an encoding Python knows ({error.msg})"
    raise SourceError(path, line, 1, m.SYNTAX_ENCODING_DECLARED.format(problem=problem))


def _place(data: bytes, offset: int, encoding: str) -> tuple[int, int]:
    """The 1-based line and character column of byte ``offset`` in ``data``."""
    line_start = data.rfind(b"\n", 0, offset) + 1
    before = data[line_start:offset].removeprefix(codecs.BOM_UTF8)
    return data.count(b"\n", 0, offset) + 1, len(before.decode(encoding, "replace")) + 1


class ByContent(Generic[T]):
    """Values derived from source files, kept by the path and the digest of the bytes they came from.

    ``get`` reads the file every time (a read and a sha256 cost little next to a parse or a compile) and
    derives again only for bytes it has not seen: nothing a file's stat says, which an editor, ``touch -d``
    or a checkout can put back, decides what is reused. At most ``size`` values are kept, the least
    recently used dropped first.
    """

    def __init__(self, derive: Callable[[Source], T], size: int = 256) -> None:
        self._derive = derive
        self._size = size
        self._kept: OrderedDict[tuple[str, str], T] = OrderedDict()
        self._lock = threading.Lock()  # a background build and the program may read at once

    def get(self, path: str) -> T:
        """What the file's bytes as they are now derive; OSError, SourceError or what deriving raises."""
        return self.of(read_source(path))

    def of(self, source: Source) -> T:
        """What ``source`` derives, from this cache when the same bytes of the same path were derived before."""
        key = (source.path, source.digest)
        with self._lock:
            if key in self._kept:
                self._kept.move_to_end(key)
                return self._kept[key]
        value = self._derive(source)
        with self._lock:
            self._kept[key] = value
            while len(self._kept) > self._size:
                self._kept.popitem(last=False)
        return value

    def clear(self) -> None:
        with self._lock:
            self._kept.clear()
