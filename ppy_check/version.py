"""The release number, and one digest of the code that decides what ppy reports and builds.

Every cache key (the build cache, the mypy plugin's rules version) takes the
same digest, so a change anywhere in the rules, the op data or the compiler
invalidates them all alike.
"""

from __future__ import annotations

import functools
from pathlib import Path

__version__ = "0.1.0"

_PACKAGES = ("ppy_check", "ppy_compile")
_SUFFIXES = (".py", ".json", ".txt")  # .txt: torch's Python source that ppy inlines (torch_python/)


@functools.lru_cache(maxsize=1)
def source_digest() -> str:
    """sha256 over every source and data file of the checker and the compiler (rules included)."""
    import hashlib  # `import ppy_check` (every start) needs the release number alone

    digest = hashlib.sha256()
    top = Path(__file__).resolve().parent.parent
    for package in _PACKAGES:
        folder = top / package
        for path in sorted(p for p in folder.rglob("*") if p.suffix in _SUFFIXES and "__pycache__" not in p.parts):
            digest.update(path.relative_to(top).as_posix().encode("utf-8"))
            digest.update(b"\0")
            digest.update(path.read_bytes())
    return digest.hexdigest()


def full_version() -> str:
    """The release and the source digest: what a cache entry was made by."""
    return f"{__version__}+{source_digest()[:16]}"
