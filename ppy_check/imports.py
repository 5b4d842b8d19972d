"""Follow a region's imports to the helpers they name, by reading files, never importing them.

``from .layers import rotate`` and ``from model.layers import rotate`` name a
function in another file of the project: the model builder inlines it like a
helper of the same module. The file is found the way Python's path-based
finder would find it from the importing file: relative imports from its
package, absolute ones from its package root, the working directory and
``sys.path`` (without site-packages: a region's helpers are the project's own).
Every file read this way is a dependency of the region: its digest joins the
build's cache key, so an edit to the helper rebuilds the caller.
"""

from __future__ import annotations

import functools
import hashlib
import os
import sys
from pathlib import Path

from ppy_check.module import ModuleRegions


@functools.lru_cache(maxsize=256)
def _load(path: str, stamp: tuple[int, int]) -> ModuleRegions | None:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    return ModuleRegions.load(path, text)


def load_module(path: str) -> ModuleRegions | None:
    """A module's parse, cached while its file is unchanged."""
    try:
        info = os.stat(path)
    except OSError:
        return None
    return _load(path, (info.st_mtime_ns, info.st_size))


def file_digest(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


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
