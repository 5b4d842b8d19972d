"""The one record every front-end reports: a rule code at a place in a region."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True, order=True)
class Diagnostic:
    """One finding. ``line`` and ``column`` are 1-based; ``region`` is "" for a file-level finding.

    ``end_line`` and ``end_column`` are where the offending thing ends, the column just past its last
    character (as ruff and SARIF count); 0 means it is not known, and the end is the start.
    """

    path: str
    line: int
    column: int
    code: str
    message: str
    region: str
    end_line: int = 0
    end_column: int = 0

    def __post_init__(self) -> None:
        if self.end_line <= 0 or (self.end_line, self.end_column) < (self.line, self.column):
            object.__setattr__(self, "end_line", self.line)
            object.__setattr__(self, "end_column", self.column)

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    def concise(self) -> str:
        return f"{self.path}:{self.line}:{self.column}: {self.code} {self.message}"
