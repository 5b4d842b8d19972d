"""The one record every front-end reports: a rule code at a place in a region."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Edit:
    """Replace the text from (line, column) up to (end_line, end_column) with ``content``: 1-based
    character columns, the end excluded, as a finding's own span counts."""

    line: int
    column: int
    end_line: int
    end_column: int
    content: str


@dataclass(frozen=True)
class Fix:
    """What ``ppy-check --fix`` does about a finding, as ruff shapes it: its edits, and whether
    applying them is "safe" (meaning kept: ``--fix`` applies it) or "unsafe" (``--unsafe-fixes``)."""

    message: str
    edits: tuple[Edit, ...]
    applicability: str = "safe"


@dataclass(frozen=True, order=True)
class Diagnostic:
    """One finding. ``line`` and ``column`` are 1-based; ``region`` is "" for a file-level finding.

    ``end_line`` and ``end_column`` are where the offending thing ends, the column just past its last
    character (as ruff and SARIF count); 0 means it is not known, and the end is the start.

    ``regions`` is every region the finding stands in, in file order: one, except for a finding in a helper
    that several regions inline, which is reported once, at the helper, for all of them (``region`` is then
    the first of them); none for a file-level finding.
    """

    path: str
    line: int
    column: int
    code: str
    message: str
    region: str
    end_line: int = 0
    end_column: int = 0
    fix: Fix | None = field(default=None, compare=False)
    regions: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if not self.regions and self.region:
            object.__setattr__(self, "regions", (self.region,))
        elif not isinstance(self.regions, tuple):  # a list, read back from JSON
            object.__setattr__(self, "regions", tuple(self.regions))
        if self.end_line <= 0 or (self.end_line, self.end_column) < (self.line, self.column):
            object.__setattr__(self, "end_line", self.line)
            object.__setattr__(self, "end_column", self.column)

    def as_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Diagnostic:
        """The finding ``as_json`` wrote (a build's index keeps a region's findings so)."""
        fix = data.get("fix")
        if isinstance(fix, dict):
            edits = tuple(Edit(**edit) for edit in fix["edits"])
            data = {**data, "fix": Fix(fix["message"], edits, fix["applicability"])}
        return cls(**data)

    def concise(self) -> str:
        return f"{self.path}:{self.line}:{self.column}: {self.code} {self.message}"
