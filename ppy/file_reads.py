"""A value derived from a file's bytes, read again only when the file's stat says it may have changed."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

# (device, inode, size, mtime, ctime): a replaced or rewritten file differs in one of them.
Stamp = tuple[int, int, int, int, int]


def derived(cache: dict[str, tuple[Stamp, T]], path: str, derive: Callable[[bytes], T]) -> T:
    """``derive(the file's bytes)``, kept in ``cache`` under ``path`` until the file's stamp changes.

    Raises OSError when the file cannot be read, and whatever ``derive`` raises; neither is kept.
    """
    info = os.stat(path)
    stamp = (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    known = cache.get(path)
    if known is None or known[0] != stamp:
        with open(path, "rb") as source:
            known = cache[path] = (stamp, derive(source.read()))
    return known[1]
