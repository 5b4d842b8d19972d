"""What checking one file read besides its own text, so that a result kept for the file can be known to hold.

A region's findings depend on more than its file: a helper imported from
another file of the project is inlined from that file's text, and which file
an import names depends on which files exist (a new ``helpers.py`` beside the
importer shadows the one further down the path). ``ppy_check.imports`` reports
both here while ``recording()`` is on: every project file read (with the
digest of the bytes read, or None where it could not be read) and every
import resolved (with the file found, or None). A check whose outcome another
run could change (the file's time budget, the stack or memory ran out, the
builder failed) is marked unrepeatable. The result
cache (``result_cache``) keeps these beside a file's findings and asks them
again before it trusts them.

A leaf: it imports nothing of ppy's, so the import follower and the model
builder can report to it.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from dataclasses import dataclass, field


@dataclass
class Reads:
    """One file's check: the files it read and the imports it resolved, and whether doing it again gives the same."""

    files: dict[str, str | None] = field(default_factory=dict)  # path -> sha256 of the bytes read (None: unreadable)
    lookups: dict[tuple[str, str], str | None] = field(default_factory=dict)  # (importer, module) -> file found
    repeatable: bool = True


_current: contextvars.ContextVar[Reads | None] = contextvars.ContextVar("ppy_check_reads", default=None)


@contextlib.contextmanager
def recording() -> Iterator[Reads]:
    """Record what the check inside reads (see the module's text)."""
    with kept_apart() as reads:  # a check inside another's (none does now) is read by both
        yield reads


@contextlib.contextmanager
def kept_apart() -> Iterator[Reads]:
    """Record what the work inside reads on its own as well (and for the check around it, if one is recorded):
    for a result kept in memory beyond one check (a class model, reused by every later file that reaches the
    class while what it read reads the same). Recorded whether or not a check is: the kept result may serve one
    that is."""
    outer = _current.get()
    inner = Reads()
    token = _current.set(inner)
    try:
        yield inner
    finally:
        _current.reset(token)
        if outer is not None:
            for path, digest in inner.files.items():
                _note(outer, path, digest)
            outer.lookups.update(inner.lookups)
            outer.repeatable = outer.repeatable and inner.repeatable


def active() -> bool:
    """Whether a check is being recorded: the import follower computes a file's digest only then."""
    return _current.get() is not None


def read_file(path: str, digest: str | None) -> None:
    reads = _current.get()
    if reads is not None:
        _note(reads, path, digest)


def _note(reads: Reads, path: str, digest: str | None) -> None:
    if path in reads.files and reads.files[path] != digest:
        # Rewritten between two reads of one check: which text the findings came from is not known.
        reads.repeatable = False
    reads.files[path] = digest


def looked_up(importer: str, module: str, found: str | None) -> None:
    reads = _current.get()
    if reads is not None:
        reads.lookups[(importer, module)] = found


def unrepeatable() -> None:
    """The check's outcome depended on something no record says (the clock, the stack, memory): it must not
    be kept."""
    reads = _current.get()
    if reads is not None:
        reads.repeatable = False
