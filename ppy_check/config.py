"""`[tool.ppy]` from pyproject.toml: which codes run on which file, and which paths are excluded.

Patterns follow ruff's conventions: a pattern without a slash matches a file
or folder name anywhere in the tree; a pattern with one matches the path
relative to the folder holding the pyproject.toml (the project root), so it
means the same whatever folder ppy-check runs from.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePath
from typing import cast

from ppy_check.messages import ALL_CODES, KNOWN_CODES, OPT_IN_CODES

DEFAULT_EXCLUDE = (
    ".git", ".hg", ".svn", ".venv", "venv", ".tox", ".nox", "__pycache__", ".mypy_cache",
    ".pytest_cache", ".ruff_cache", "node_modules", "build", "dist", "site-packages", "*.egg-info",
)

_LISTS = ("include", "exclude", "extend-exclude", "select", "extend-select", "ignore")
_KEYS = (*_LISTS, "per-file-ignores", "force-exclude")


class Patterns:
    """Glob patterns, ruff's way: without a slash, against the name; with one, against the path
    relative to ``root`` (or the absolute path, for an absolute pattern)."""

    def __init__(self, patterns: list[str], root: Path):
        self.root = root
        normal = [p.removeprefix("./").rstrip("/") for p in patterns]
        self.names = _compiled(p for p in normal if "/" not in p)
        self.relative = _compiled(p for p in normal if "/" in p and not os.path.isabs(p))
        self.absolute = _compiled(p for p in normal if os.path.isabs(p))

    def match(self, path: PurePath) -> bool:
        if self.names is not None and self.names.match(path.name):
            return True
        if self.relative is None and self.absolute is None:
            return False
        absolute = Path(os.path.abspath(path))
        if self.absolute is not None and self.absolute.match(absolute.as_posix()):
            return True
        return (self.relative is not None and absolute.is_relative_to(self.root)
                and self.relative.match(absolute.relative_to(self.root).as_posix()) is not None)


def _compiled(patterns: Iterable[str]) -> re.Pattern[str] | None:
    listed = list(patterns)
    return re.compile("|".join(fnmatch.translate(p) for p in listed)) if listed else None


class ConfigError(Exception):
    """A configuration problem worth one line to the user."""


@dataclass
class Config:
    include: list[str] = field(default_factory=lambda: ["*.py", "*.pyi"])
    exclude: list[str] = field(default_factory=lambda: list(DEFAULT_EXCLUDE))
    extend_exclude: list[str] = field(default_factory=list)
    select: list[str] = field(default_factory=lambda: list(ALL_CODES))
    extend_select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)
    force_exclude: bool = False
    source: Path | None = None
    # The folder that anchors patterns: the config file's, else the working directory.
    root: Path = field(default_factory=lambda: Path(os.path.abspath(".")))

    def codes(self) -> list[str]:
        wanted = self.select + [c for c in self.extend_select if c not in self.select]
        return [code for code in wanted if code not in self.ignore]

    def codes_for(self, path: PurePath) -> list[str]:
        """The codes that run on one file: ``select`` and ``ignore``, less its ``per-file-ignores``."""
        dropped = {code for patterns, codes in self._per_file if patterns.match(path) for code in codes}
        return [code for code in self.codes() if code not in dropped]

    def excluded(self, path: PurePath) -> bool:
        """Whether the path itself (not its parents) matches an exclude pattern."""
        return self._excludes.match(path)

    def force_excluded(self, path: PurePath) -> bool:
        """Whether the path or a parent of it inside the project root is excluded (``--force-exclude``)."""
        absolute = Path(os.path.abspath(path))
        chain = [absolute]
        if absolute.is_relative_to(self.root):
            chain += [p for p in absolute.parents if p.is_relative_to(self.root) and p != self.root]
        return any(self.excluded(p) for p in chain)

    def included(self, path: PurePath) -> bool:
        return self._includes.match(path)

    # Compiled on first use: the walk asks about every entry of every folder.
    @functools.cached_property
    def _excludes(self) -> Patterns:
        return Patterns(self.exclude + self.extend_exclude, self.root)

    @functools.cached_property
    def _includes(self) -> Patterns:
        return Patterns(self.include, self.root)

    @functools.cached_property
    def _per_file(self) -> list[tuple[Patterns, list[str]]]:
        return [(Patterns([pattern], self.root), codes) for pattern, codes in self.per_file_ignores.items()]

    def overridden(self, select: list[str], extend_select: list[str], ignore: list[str]) -> Config:
        """This configuration with the command line's code options over it: as in ruff, ``--select``
        replaces the file's ``select`` and ``extend-select`` both."""
        return replace(
            self,
            select=select or self.select,
            extend_select=([] if select else self.extend_select) + extend_select,
            ignore=self.ignore + ignore,
        )


def validate_codes(selectors: list[str], where: str, selecting: bool = False) -> list[str]:
    """The codes the selectors name, in the registry's order; ConfigError naming the first unknown one.

    As in ruff, a selector is a code or a prefix of codes (``ppy`` is every rule, ``ppy-un`` three of
    them), and ``ALL`` every code. When ``selecting``, a prefix leaves out the opt-in codes, which are
    selected only by their full name: ``--select ppy`` means the default rules.
    """
    named: set[str] = set()
    for selector in selectors:
        if selector in KNOWN_CODES:
            named.add(selector)
            continue
        prefix = "" if selector == "ALL" else selector
        matched = [code for code in KNOWN_CODES if code.startswith(prefix)
                   and not (selecting and code in OPT_IN_CODES)]
        if not matched or not selector:
            raise ConfigError(f"{where}: unknown rule code {selector!r}{did_you_mean(selector)} "
                              f"(codes: {', '.join(KNOWN_CODES)}, or a prefix of them)")
        named.update(matched)
    return [code for code in KNOWN_CODES if code in named]


def did_you_mean(text: str) -> str:
    """``; did you mean 'ppy-loop'?`` for a text close to a rule code (a code without its ``ppy-``, a typo),
    else nothing."""
    import difflib  # only for a code the registry does not know: not at every start

    lowered = text.strip().lower().replace("_", "-")
    candidates = [code for code in KNOWN_CODES if code in (lowered, f"ppy-{lowered}")]
    candidates = candidates or difflib.get_close_matches(lowered, KNOWN_CODES, n=1, cutoff=0.6)
    candidates = candidates or difflib.get_close_matches(f"ppy-{lowered}", KNOWN_CODES, n=1, cutoff=0.6)
    return f"; did you mean {candidates[0]!r}?" if candidates else ""


def _ppy_table(pyproject: Path) -> dict[str, object] | None:
    """The file's ``[tool.ppy]`` table, or None when it has none."""
    # Imported here: `--no-config` (pre-commit's hook, an editor's) reads no pyproject.toml, and the parser is a
    # good part of a small check's start.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # Python 3.10: the same parser, as a package (pyproject.toml's dependency for 3.10 only)
        import tomli as tomllib

    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise ConfigError(f"{pyproject}: cannot read: {error}") from None
    section = data.get("tool", {}).get("ppy")
    if section is not None and not isinstance(section, dict):
        raise ConfigError(f"{pyproject}: [tool.ppy] must be a table")
    return section


def find_pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml at or above ``start`` that has a ``[tool.ppy]`` table.

    As ruff does with ``[tool.ruff]``, a pyproject.toml without the table is
    passed over: a sub-package's own pyproject.toml does not hide the project's
    configuration.
    """
    start = Path(os.path.abspath(start))
    for folder in [start, *start.parents]:
        candidate = folder / "pyproject.toml"
        if os.path.isfile(candidate) and _ppy_table(candidate) is not None:
            return candidate
    return None


def load_config(pyproject: Path | None) -> Config:
    if pyproject is None:
        return Config()
    section = _ppy_table(pyproject) or {}
    for key, value in section.items():
        if key not in _KEYS:
            raise ConfigError(f"{pyproject}: unknown key [tool.ppy] {key!r} (known: {', '.join(sorted(_KEYS))})")
        if key in _LISTS and not _strings(value):
            raise ConfigError(f"{pyproject}: [tool.ppy] {key} must be a list of strings")
    force_exclude = section.get("force-exclude", False)
    if not isinstance(force_exclude, bool):
        raise ConfigError(f"{pyproject}: [tool.ppy] force-exclude must be true or false")
    per_file = section.get("per-file-ignores", {})
    if not isinstance(per_file, dict) or not all(_strings(codes) for codes in per_file.values()):
        raise ConfigError(f'{pyproject}: [tool.ppy] per-file-ignores must be a table of lists of codes, like {{"tests/*" = ["ppy-loop"]}}')
    lists = cast("dict[str, list[str]]", {key: value for key, value in section.items() if key in _LISTS})
    where = f"{pyproject}: [tool.ppy]"
    config = Config(
        source=pyproject,
        root=Path(os.path.abspath(pyproject.parent)),
        force_exclude=force_exclude,
        extend_exclude=lists.get("extend-exclude", []),
        extend_select=validate_codes(lists.get("extend-select", []), f"{where} extend-select", selecting=True),
        ignore=validate_codes(lists.get("ignore", []), f"{where} ignore"),
        per_file_ignores={pattern: validate_codes(codes, f"{where} per-file-ignores {pattern!r}") for pattern, codes in per_file.items()},
    )
    if "include" in lists:
        config.include = lists["include"]
    if "exclude" in lists:
        config.exclude = lists["exclude"]
    if "select" in lists:
        config.select = validate_codes(lists["select"], f"{where} select", selecting=True)
    return config


def _strings(value: object) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)
