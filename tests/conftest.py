"""Shared set-up: one build cache for the whole test session, so nothing is built twice."""

from __future__ import annotations

import fnmatch
from pathlib import Path

import pytest

# Imported first: it points PPY_CACHE_DIR at the session cache before anything of ppy's reads it.
from tests.support.session_cache import SESSION_CACHE, seeded_cache
from tests.support.groups import Group, group_of, outside_every_group


@pytest.fixture(scope="session")
def toolchain_entries() -> list[str]:
    """The once-per-torch builds (bridge, precompiled header), built or found once in the session cache."""
    from ppy_compile.build import _ensure_bridge, _ensure_pch, use_pch
    from ppy_compile.cache import Cache

    cache = Cache.open(SESSION_CACHE)
    keys = [_ensure_bridge(cache)]
    if use_pch():
        keys.append(_ensure_pch(cache))
    return keys


@pytest.fixture
def fresh_cache(tmp_path: Path, toolchain_entries: list[str], monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache of this test's own, holding only the session's once-per-torch builds (hard links)."""
    root = seeded_cache(tmp_path / "cache", toolchain_entries)
    monkeypatch.setenv("PPY_CACHE_DIR", str(root))
    return root


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """A test file outside the groups' folders fails collection: unmarked, `pytest -m` would never select it."""
    is_test_file = any(fnmatch.fnmatch(file_path.name, pattern) for pattern in parent.config.getini("python_files"))
    if is_test_file and outside_every_group(file_path):
        return Ungrouped.from_parent(parent, path=file_path)
    return None


class Ungrouped(pytest.File):
    def collect(self) -> list[pytest.Item]:
        folders = ", ".join(f"tests/{group.folder}" for group in Group)
        raise self.CollectError(f"{self.path.name} is in no group: move it into one of {folders}, by what it needs "
                                "(tests/README.md)")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Every test, and every region `--ppy-verify` finds in a test file, is marked by its file's folder.
    for item in items:
        group = group_of(item.path)
        if group is not None:
            item.add_marker(group.marker)
