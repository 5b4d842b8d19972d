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
    from ppy_compile.build_env import use_pch
    from ppy_compile.cache import Cache
    from ppy_compile.shared import ensure_bridge, ensure_pch

    cache = Cache.open(SESSION_CACHE)
    keys = [ensure_bridge(cache)]
    if use_pch():
        keys.append(ensure_pch(cache))
    return keys


@pytest.fixture
def fresh_cache(tmp_path: Path, toolchain_entries: list[str], monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache of this test's own, holding only the session's once-per-torch artifacts (support/session_cache.py)."""
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
    tied = [item for item in items if item.get_closest_marker("opdata_torch") is not None]
    other = other_torch() if tied else None
    for item in tied if other is not None else []:
        item.add_marker(pytest.mark.skip(reason=other))


def other_torch() -> str | None:
    """Why a test marked ``opdata_torch`` cannot hold here: the installed torch is not the op data's release
    (``make test-torch`` runs the suite under others). Read from the metadata: torch is not imported for it."""
    import importlib.metadata

    from ppy_check.installed_opdata import shipped_torch_version

    try:
        installed = importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return None
    shipped = shipped_torch_version()
    if installed.split("+")[0] == shipped:
        return None
    return f"holds only under torch {shipped}, the op data's release (torch {installed} is installed)"


@pytest.fixture(autouse=True)
def fresh_dynamo() -> None:
    """Each test compiles on Dynamo's empty caches. torch.compile of a torch.nn container starts every graph at one
    frame of torch's own (`wrap_inline`), so a worker's ninth test compiling one would stop at Dynamo's
    recompile_limit for graphs that earlier tests, not this one, made."""
    import sys

    dynamo = sys.modules.get("torch._dynamo")  # loaded only where something compiled: never loaded for it
    if dynamo is not None:
        dynamo.reset()
