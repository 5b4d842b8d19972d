"""Which files ppy reads, decided once for every front-end.

``ppy-check``, ``ppy build``, the mypy plugin and ``pytest --ppy-verify`` all
select files here, so a file ``[tool.ppy] exclude`` or ``extend-exclude``
lists is skipped by all four alike (a rule fixture that breaks the rules on
purpose is neither reported, nor built, nor verified). The two commands walk
the paths they are given (``select_files``); the two plugins are handed one
file at a time by mypy's or pytest's own walk and ask whether the walk from
the project root would have reached it (``Selection.selected``).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from ppy_check.config import Config, ConfigError, find_pyproject, load_config, validate_codes
from ppy_check.files import iter_files


@dataclass
class Selection:
    """The configuration for each path: ``config`` (a pyproject.toml named on the command line),
    ``no_config`` (none at all), or else the nearest pyproject.toml with a ``[tool.ppy]`` table above
    the path, as ruff finds its own; the command line's options over it."""

    config: Path | None = None
    no_config: bool = False
    select: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    exclude: list[str] | None = None  # replaces the configured exclude (the defaults included), as ruff's --exclude
    extend_exclude: list[str] = field(default_factory=list)
    force_exclude: bool = False
    _loaded: dict[Path | None, Config] = field(default_factory=dict, init=False, repr=False)
    _folders: dict[Path, Path | None] = field(default_factory=dict, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.config is not None and not os.path.isfile(self.config):
            raise ConfigError(f"{self.config}: no such config file")
        self.select = validate_codes(self.select, "--select", selecting=True)
        self.extend_select = validate_codes(self.extend_select, "--extend-select", selecting=True)
        self.ignore = validate_codes(self.ignore, "--ignore")

    def for_path(self, path: Path) -> Config:
        """The configuration that governs ``path`` (a file or a folder); ConfigError for a bad one."""
        pyproject = self.config
        if self.config is None and not self.no_config:
            folder = Path(os.path.abspath(path if os.path.isdir(path) else path.parent))
            if folder not in self._folders:
                self._folders[folder] = find_pyproject(folder)
            pyproject = self._folders[folder]
        if pyproject not in self._loaded:
            self._loaded[pyproject] = self._overridden(load_config(pyproject))
        return self._loaded[pyproject]

    def _overridden(self, config: Config) -> Config:
        config = config.overridden(self.select, self.extend_select, self.ignore)
        return replace(config, exclude=list(self.exclude) if self.exclude is not None else config.exclude,
                       extend_exclude=config.extend_exclude + self.extend_exclude,
                       force_exclude=config.force_exclude or self.force_exclude)

    def selected(self, path: Path) -> bool:
        """Whether walking the project from its root selects this file: it is included, and neither it
        nor a folder above it inside the project root is excluded. For front-ends that meet files one
        at a time (the mypy and pytest plugins)."""
        config = self.for_path(path)
        return config.included(path) and not config.force_excluded(path)


def select_files(paths: list[Path], selection: Selection) -> Iterator[tuple[Path, Config] | str]:
    """Each file the paths name (a folder: the files below it that are selected), once, with the
    configuration that governs it; a string instead is a one-line problem with that path. A file
    named itself is taken even when excluded, as ruff does, unless ``force-exclude`` holds."""
    seen: set[str] = set()
    for path in paths:
        config = selection.for_path(path)
        for item in iter_files([path], config, config.force_exclude):
            if isinstance(item, str):
                yield item
            elif os.path.abspath(item) not in seen:
                seen.add(os.path.abspath(item))
                yield item, config
