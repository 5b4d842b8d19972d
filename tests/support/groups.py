"""Which group a test file belongs to: the folder under tests/ it lies in, which is also its pytest marker."""

from __future__ import annotations

import enum
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


class Group(enum.Enum):
    """What a group's tests need; each value is a folder of tests/ and the marker its tests get."""

    CHECKER = "checker"  # neither torch nor a compiler
    TORCH = "torch"  # torch, no C++ builds
    COMPILER = "compiler"  # builds and runs compiled regions
    INTEGRATION = "integration"  # runs ppy in other processes: mypy, pytest, pip, venvs


def group_of(path: Path) -> Group | None:
    """The group of a file under tests/, by its first folder; None for a file outside every group's folder."""
    try:
        parts = path.resolve().relative_to(TESTS).parts
    except ValueError:
        return None
    folders = {group.value: group for group in Group}
    return folders.get(parts[0]) if len(parts) > 1 else None


def outside_every_group(path: Path) -> bool:
    """A file under tests/ that no group's folder holds: a test file there would go unmarked."""
    resolved = path.resolve()
    return resolved.is_relative_to(TESTS) and group_of(resolved) is None
