"""The errors ppy raises at decoration, build and call time (defined in the leaf ``ppy_check.errors``)."""

from __future__ import annotations

from ppy_check.errors import BuildError, RegionError

__all__ = ["BuildError", "RegionError"]
