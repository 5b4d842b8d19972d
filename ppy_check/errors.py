"""The errors every layer of ppy may raise: a leaf module, importing nothing of ppy's above it."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ppy_check.diagnostic import Diagnostic


class RegionError(Exception):
    """A region broke the rules; ``diagnostics`` lists every finding."""

    def __init__(self, region: str, diagnostics: list[Diagnostic]):
        self.region = region
        self.diagnostics = list(diagnostics)
        lines = "\n".join(f"  {d.path}:{d.line}:{d.column}: {d.code} {d.message}" for d in self.diagnostics)
        super().__init__(f"region `{region}` is not a valid region:\n{lines}")

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (type(self), (self.region, self.diagnostics))


class BuildError(Exception):
    """The compiled form of a region could not be produced (no compiler, a compiler error...)."""
