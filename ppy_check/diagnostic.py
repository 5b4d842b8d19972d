"""The one record every front-end reports: a rule code at a place in a region."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any


@dataclass(frozen=True, order=True)
class Diagnostic:
    """One finding. ``line`` and ``column`` are 1-based; ``region`` is "" for a file-level finding."""

    path: str
    line: int
    column: int
    code: str
    message: str
    region: str

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    def concise(self) -> str:
        return f"{self.path}:{self.line}:{self.column}: {self.code} {self.message}"
