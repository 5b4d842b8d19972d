"""The C++ that ships with ppy as files (``ppy_compile/cpp/``): read once per process, digested, copied into builds.

The bridge, the precompiled header and every region module are built from
these files (each one's first lines say what it is for and who includes it).
A build copies the bytes it was keyed on into its own folder and compiles
that copy, found beside the source by ``#include "..."``: what a cache entry
holds is exactly what its key names, even if ppy is reinstalled while a
process runs, and an entry's folder holds every file of ppy's its source
includes.
Which files a build needs is read from the files themselves (their
``#include "..."`` lines), so no list here can drift from what they include.
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Iterable
from pathlib import Path

from ppy_check.errors import BuildError

# Resolved once: a test points it at a changed copy to see the keys follow the bytes.
FOLDER = Path(__file__).resolve().parent / "cpp"

BRIDGE = "bridge.cpp"
PRECOMPILED = "precompiled.h"
RUNTIME = "ppy_runtime.h"  # what every region module includes
INDEXING = "ppy_indexing.h"  # what a module that indexes tensors includes besides (emit.py asks for it)
PROBE = "ppy_probe.h"  # what a module built for benchmarks includes besides
EINOPS = "ppy_einops.h"  # what a module whose checks raise einops.EinopsError includes besides (unit.py asks for it)
HELPERS = frozenset({INDEXING, EINOPS})  # the shipped headers a region's C++ may ask for (PrintedRegion.headers)

_SUFFIXES = (".h", ".cpp")
_LOCAL_INCLUDE = re.compile(rb'^[ \t]*#[ \t]*include[ \t]*"([^"\n]+)"', re.MULTILINE)


class CppFileError(BuildError):
    """A file of ppy's own C++ is missing or unreadable: the installation is incomplete."""

    def __init__(self, path: Path, error: OSError):
        super().__init__(f"ppy's C++ runtime cannot be read: {path} ({error.strerror or error}); the installation "
                         "of ppy is incomplete: reinstall it (pip install --force-reinstall ppy-regions)")


@functools.cache
def _read(folder: Path, name: str) -> bytes:
    path = folder / name
    try:
        return path.read_bytes()
    except OSError as error:
        raise CppFileError(path, error) from None


def read(name: str) -> bytes:
    """The bytes of one shipped file, read once per process."""
    return _read(FOLDER, name)


def needed(roots: Iterable[str]) -> tuple[str, ...]:
    """``roots`` and every shipped file they include, at any depth, each once, sorted by name."""
    found: set[str] = set()
    pending = list(roots)
    while pending:
        name = pending.pop()
        if name in found:
            continue
        found.add(name)
        pending += [include.decode("utf-8") for include in _LOCAL_INCLUDE.findall(read(name))]
    return tuple(sorted(found))


def digest(roots: Iterable[str]) -> str:
    """sha256 of the names and bytes of every shipped file a build of ``roots`` compiles."""
    return _digest(FOLDER, needed(roots))


def every_digest() -> str:
    """sha256 of every shipped file: what a region module's build depends on, whichever it includes."""
    return _every_digest(FOLDER)


@functools.cache
def _every_digest(folder: Path) -> str:
    try:
        names = sorted(p.name for p in folder.iterdir() if p.suffix in _SUFFIXES)
    except OSError as error:
        raise CppFileError(folder, error) from None
    return _digest(folder, names)


def _digest(folder: Path, names: Iterable[str]) -> str:
    sha = hashlib.sha256()
    for name in names:
        sha.update(name.encode("utf-8"))
        sha.update(b"\0")
        sha.update(_read(folder, name))
        sha.update(b"\0")
    return sha.hexdigest()


def write_into(folder: Path, roots: Iterable[str], renamed: dict[str, str] | None = None) -> None:
    """Copy what a build of ``roots`` compiles into its ``folder`` (a file in ``renamed`` under its new name)."""
    for name in needed(roots):
        (folder / (renamed or {}).get(name, name)).write_bytes(read(name))
