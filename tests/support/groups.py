"""Which group a test file belongs to: the folder under tests/ it lies in, which also gives its pytest marker."""

from __future__ import annotations

import enum
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


class Group(enum.Enum):
    """What a group's tests need: each value is (its folder under tests/, the marker its tests get)."""

    CHECKER = ("checker", "checker")  # neither torch nor a compiler
    # Not tests/torch: pytest puts tests/ on sys.path (to import conftest.py), and where torch is not installed
    # `import torch` would find that folder as a namespace package instead of failing.
    TORCH = ("torch_only", "torch")  # torch, no C++ builds
    COMPILER = ("compiler", "compiler")  # builds and runs compiled regions
    INTEGRATION = ("integration", "integration")  # runs ppy in other processes: mypy, pytest, pip, venvs

    @property
    def folder(self) -> str:
        return self.value[0]

    @property
    def marker(self) -> str:
        return self.value[1]


def group_of(path: Path) -> Group | None:
    """The group of a file under tests/, by its first folder; None for a file outside every group's folder."""
    try:
        parts = path.resolve().relative_to(TESTS).parts
    except ValueError:
        return None
    folders = {group.folder: group for group in Group}
    return folders.get(parts[0]) if len(parts) > 1 else None


def outside_every_group(path: Path) -> bool:
    """A file under tests/ that no group's folder holds: a test file there would go unmarked."""
    resolved = path.resolve()
    return resolved.is_relative_to(TESTS) and group_of(resolved) is None
