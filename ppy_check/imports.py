"""Follow a region's imports to the helpers they name, by reading files, never importing them.

``from .layers import rotate`` and ``from model.layers import rotate`` name a
function in another file of the project: the model builder inlines it like a
helper of the same module. The file is found the way Python's path-based
finder would find it from the importing file: relative imports from its
package, absolute ones from its package root, the working directory and
``sys.path`` (without site-packages: a region's helpers are the project's own).
Every file read this way is a dependency of the region: its digest joins the
build's cache key, so an edit to the helper rebuilds the caller. The digest
recorded is that of the very bytes the helper was modelled from (one read,
``ppy_check.source``), and within ``one_read()`` (one file's build) every
region that reaches a file reaches the same read of it.
"""

from __future__ import annotations

import contextlib
import contextvars
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from ppy_check import reads as recorded
from ppy_check.module import ModuleRegions
from ppy_check.source import ByContent, Source, SourceError, file_digest, read_source


@dataclass(frozen=True)
class ProjectFile:
    """A project file as one read gave it: the module parsed from ``source.text``, and ``source.digest``."""

    source: Source
    module: ModuleRegions


# Parses by the digest of the bytes they came from, never by the file's stat (which can be put back).
_parses: ByContent[ModuleRegions] = ByContent(lambda source: ModuleRegions.load(source.path, source.text))
# Within one_read(): path -> the read every later lookup of that path gets (None: it could not be read).
_reads: contextvars.ContextVar[dict[str, ProjectFile | None] | None] = contextvars.ContextVar("ppy_reads", default=None)


@contextlib.contextmanager
def one_read() -> Iterator[None]:
    """Every ``load_file`` inside reads each file once: the regions of one build inline one text of a helper,
    the text whose digest the build records, even when the file is rewritten while they are modelled.
    Nested, the outermost one holds."""
    if _reads.get() is not None:
        yield
        return
    token = _reads.set({})
    try:
        yield
    finally:
        _reads.reset(token)


def load_file(path: str) -> ProjectFile | None:
    """The file read now (or as first read within ``one_read``) and parsed; None when unreadable or undecodable."""
    reads = _reads.get()
    if reads is not None and path in reads:
        found = reads[path]
    else:
        try:
            source = read_source(path)
            found = ProjectFile(source, _parses.of(source))
        except (OSError, SourceError) as error:
            # Bytes Python cannot decode are still bytes the result depends on.
            found = None
            if recorded.active():
                recorded.read_file(path, digest_now(path) if isinstance(error, SourceError) else None)
        if reads is not None:
            reads[path] = found
    if found is not None and recorded.active():
        recorded.read_file(path, found.source.digest)
    return found


def digest_now(path: str) -> str | None:
    """The sha256 of the file's bytes as they are now; None where it cannot be read."""
    try:
        return file_digest(path)
    except OSError:
        return None


def reads_the_same(files: Iterable[tuple[str, str | None]], lookups: Iterable[tuple[str, str, str | None]]) -> bool:
    """Whether files read before hold the same bytes now (by digest; None: unreadable) and imports resolved before
    find the same files. Each is read and resolved again as a check would, so the check being recorded depends on
    them as the first did. Raises what ``find_module`` raises for a name no file system takes."""
    for importer, module, found in lookups:
        if find_module(importer, module) != found:
            return False
    for path, digest in files:
        now = digest_now(path)
        recorded.read_file(path, now)
        if now != digest:
            return False
    return True


def load_module(path: str) -> ModuleRegions | None:
    """A module's parse, from its file's bytes as they are now (see ``load_file``)."""
    found = load_file(path)
    return found.module if found is not None else None


def _package_root(folder: Path) -> Path:
    """The folder holding the top-level package that ``folder`` is part of."""
    while (folder / "__init__.py").exists() and folder.parent != folder:
        folder = folder.parent
    return folder


def _candidates(base: Path, parts: list[str]) -> list[Path]:
    target = base.joinpath(*parts)
    return [target.with_suffix(".py"), target / "__init__.py"]


def find_module(importer: str, dotted: str) -> str | None:
    """The file of the module ``dotted`` (leading dots: relative to ``importer``'s package), or None."""
    found = _find_module(importer, dotted)
    recorded.looked_up(importer, dotted, found)
    return found


def _find_module(importer: str, dotted: str) -> str | None:
    level = len(dotted) - len(dotted.lstrip("."))
    parts = [p for p in dotted.lstrip(".").split(".") if p]
    here = Path(importer).resolve().parent
    if level:
        base = here
        for _ in range(level - 1):
            base = base.parent
        roots = [base]
    else:
        roots = [here, _package_root(here), Path.cwd()]
        roots += [Path(p) for p in sys.path if p and "site-packages" not in p and "dist-packages" not in p]
    for root in dict.fromkeys(roots):
        for candidate in _candidates(root, parts):
            if candidate.is_file():
                return str(candidate)
    return None
