"""Which files hold regions, decided statically while pytest collects: nothing is imported here.

A file pytest visits (its arguments, else ``testpaths``; ``--ignore``,
``--ignore-glob``, ``norecursedirs`` and ``collect_ignore`` honoured) that may
hold a region becomes a ``RegionFile``; ``ModuleRegions`` (which only parses)
names its regions, and each becomes one item per device. ``ppy_paths`` are
walked the same way, for regions only, when pytest runs without paths. Files
that ppy-check excludes (``[tool.ppy] exclude``) are skipped: rule fixtures
break the rules on purpose.
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from ppy.pytest_settings import VERIFIER, Settings
from ppy.verify_item import RegionItem
from ppy_check.config import ConfigError


def ppy_exclusion(rootpath: Path) -> Callable[[Path], bool]:
    """Whether ppy-check, walking the project, would skip a file: the one selection every front-end uses
    (``[tool.ppy]`` of the nearest pyproject.toml above the file, its patterns anchored at its folder)."""
    from ppy_check.selection import Selection

    selection = Selection()
    try:
        selection.for_path(rootpath)  # a bad configuration is a usage error before anything is collected
    except ConfigError as error:
        raise pytest.UsageError(str(error)) from None

    def excluded(path: Path) -> bool:
        try:
            return not selection.selected(path)
        except ConfigError as error:
            raise pytest.UsageError(str(error)) from None

    return excluded


class RegionFile(pytest.File):
    """A file that holds regions: one item per region and device."""

    def collect(self) -> Iterator[RegionItem]:
        from ppy_check.module import ModuleRegions
        from ppy_check.source import SourceError, read_source

        try:
            text = read_source(self.path).text
        except (OSError, SourceError):
            return  # ppy-check reports such a file; Python cannot import it either
        regions = ModuleRegions.load(str(self.path), text).regions
        # Two definitions of one name (say in both arms of an `if`) are told apart by line.
        repeated = Counter(r.site.qualname for r in regions)
        devices = self.config.stash[VERIFIER].devices
        for region in regions:
            site = region.site
            label = site.qualname if repeated[site.qualname] == 1 else f"{site.qualname}:{site.line}"
            for device in devices:
                yield RegionItem.from_parent(self, name=f"{label}[{device}]", site=site, device=device)


class RegionDir(pytest.Directory):
    """A folder of ``ppy_paths``: its regions only, walked by pytest's ignore rules, its tests left alone."""

    def collect(self) -> Iterator[pytest.Collector]:
        for entry in sorted(os.scandir(self.path), key=lambda e: e.name):
            path = Path(entry.path)
            if self.session.isinitpath(path):
                continue  # pytest collects it from its own arguments
            if self.ihook.pytest_ignore_collect(collection_path=path, config=self.config):
                continue
            if entry.is_dir():
                yield RegionDir.from_parent(self, path=path)
            elif entry.is_file():
                found = region_file(self, path)
                if found is not None:
                    yield found


def region_file(parent: pytest.Collector, path: Path) -> RegionFile | None:
    """A collector for ``path`` if it may hold a region (the checker's cheap prefilter), else None."""
    from ppy_check.runner import may_hold
    from ppy_check.source import read_bytes

    if path.suffix != ".py" or parent.config.stash[VERIFIER].excluded(path):
        return None
    try:
        data = read_bytes(path)
    except OSError:
        return None
    return RegionFile.from_parent(parent, path=path) if may_hold(data) else None  # a BOM before `import ppy` too


def extra_roots(session: pytest.Session, settings: Settings) -> list[RegionDir]:
    """``ppy_paths`` applies where ``testpaths`` does: pytest run from the rootdir with no paths."""
    config = session.config
    if config.args_source == pytest.Config.ArgsSource.ARGS or config.invocation_params.dir != config.rootpath:
        return []
    return [RegionDir.from_parent(session, path=root) for root in settings.paths
            if not any(session.isinitpath(p) for p in [root, *root.parents])]
