"""What the environment asks of a build: how many compilers run at once (``PPY_JOBS``), and whether optimised
modules use a precompiled header (``PPY_PCH``)."""

from __future__ import annotations

import os

from ppy_check.errors import BuildError


def compile_jobs() -> int:
    """How many compilers a build runs at once: ``$PPY_JOBS`` (``ppy build -j``), else one per core."""
    text = os.environ.get("PPY_JOBS", "").strip()
    if text:
        try:
            return max(1, int(text))
        except ValueError:
            raise BuildError(f"PPY_JOBS={text!r} is not a number of compilers") from None
    return os.cpu_count() or 1


def use_pch() -> bool:
    return os.environ.get("PPY_PCH", "1") not in ("0", "")


def pch_for(level: int) -> bool:
    return use_pch() and level > 0
