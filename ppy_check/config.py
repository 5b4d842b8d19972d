"""`[tool.ppy]` from pyproject.toml, and the walk that turns paths into files to check."""

from __future__ import annotations

import fnmatch
import os
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ppy_check.messages import ALL_CODES

DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "__pycache__", ".mypy_cache",
    ".pytest_cache", ".ruff_cache", "node_modules", "build", "dist", "site-packages", "*.egg-info",
)


class ConfigError(Exception):
    """A configuration problem worth one line to the user."""


@dataclass
class Config:
    include: list[str] = field(default_factory=lambda: ["*.py", "*.pyi"])
    exclude: list[str] = field(default_factory=list)
    select: list[str] = field(default_factory=lambda: list(ALL_CODES))
    ignore: list[str] = field(default_factory=list)
    source: Path | None = None

    def codes(self) -> list[str]:
        return [code for code in self.select if code not in self.ignore]

    def excluded(self, path: Path) -> bool:
        patterns = list(DEFAULT_EXCLUDE) + self.exclude
        name = path.name
        text = path.as_posix()
        return any(fnmatch.fnmatch(name, p) or fnmatch.fnmatch(text, p) or fnmatch.fnmatch(text, f"*/{p}") for p in patterns)

    def included(self, path: Path) -> bool:
        return any(fnmatch.fnmatch(path.name, pattern) for pattern in self.include)


def validate_codes(codes: list[str], where: str) -> list[str]:
    unknown = [code for code in codes if code not in ALL_CODES]
    if unknown:
        raise ConfigError(f"{where}: unknown rule code {unknown[0]!r} (codes: {', '.join(ALL_CODES)})")
    return codes


def find_pyproject(start: Path) -> Path | None:
    for folder in [start, *start.parents]:
        candidate = folder / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def load_config(pyproject: Path | None) -> Config:
    config = Config()
    if pyproject is None:
        return config
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"{pyproject}: cannot read: {error}") from None
    section = data.get("tool", {}).get("ppy", {})
    if not isinstance(section, dict):
        raise ConfigError(f"{pyproject}: [tool.ppy] must be a table")
    known = {"include", "exclude", "extend-exclude", "select", "ignore"}
    for key, value in section.items():
        if key not in known:
            raise ConfigError(f"{pyproject}: unknown key [tool.ppy] {key!r} (known: {', '.join(sorted(known))})")
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{pyproject}: [tool.ppy] {key} must be a list of strings")
    config.source = pyproject
    if "include" in section:
        config.include = section["include"]
    config.exclude = section.get("exclude", []) + section.get("extend-exclude", [])
    if "select" in section:
        config.select = validate_codes(section["select"], f"{pyproject}: [tool.ppy] select")
    config.ignore = validate_codes(section.get("ignore", []), f"{pyproject}: [tool.ppy] ignore")
    return config


def iter_files(paths: list[Path], config: Config) -> Iterator[Path | str]:
    """The files to check; a string instead of a path is a one-line problem with an argument."""
    seen: set[Path] = set()
    for path in paths:
        if not path.exists():
            yield f"{path}: no such file or directory"
            continue
        if path.is_file():
            if path not in seen:
                seen.add(path)
                yield path
            continue
        for root, dirs, files in os.walk(path, onerror=None):
            base = Path(root)
            dirs[:] = sorted(d for d in dirs if not config.excluded(base / d))
            for name in sorted(files):
                candidate = base / name
                if config.included(candidate) and not config.excluded(candidate) and candidate not in seen:
                    seen.add(candidate)
                    yield candidate
