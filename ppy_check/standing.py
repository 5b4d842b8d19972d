"""Which of a region's findings stand against compiling it: the checker's suppression policy, as the compiler
applies it (a finding a comment on its line silences does not stand; ``# type: ignore`` counts, as in ppy-check)."""

from __future__ import annotations

from ppy_check.diagnostic import Diagnostic
from ppy_check.suppression import silencer


def standing(diagnostics: list[Diagnostic], lines: list[str]) -> list[Diagnostic]:
    """The findings no suppression comment on their own line silences."""
    return [d for d in diagnostics if not (0 < d.line <= len(lines) and silencer(lines[d.line - 1], d.code) is not None)]
