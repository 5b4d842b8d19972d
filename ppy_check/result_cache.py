"""Findings kept between runs for files that did not change, as ruff keeps its own: a second run over a tree
checks again only what changed since.

An entry is one file's findings as one check gave them, under a name made from
what it answers for (the working folder, the file's name as reported, the rule
codes it ran), with what that answer depends on:

- the checker itself: its release and, for every file of the package, its
  size and modification time (an edited or reinstalled ppy-check answers anew),
  the Python running it, the op data in use and the file's time budget;
- the digest of the file's bytes;
- every other project file the check read (the helpers it inlined), by the
  digest of the bytes read, and every import it resolved, by the file found
  (``ppy_check.reads`` records both).

An entry is used only when all of that is as it was: each file named is read
and hashed again, each import resolved again. A check whose outcome another run
could change (its file's time budget ran out, the stack or memory did, the
builder failed) or that could not finish is never kept.

Entries live in the ``check`` folder of ppy's cache (``PPY_CACHE_DIR``, as
the compiler's builds do), never in the project, where a committed entry
could claim a file clean. They are input like any file there: the folder and
each entry must pass the cache's trust rules (``safedir``: owned by this
user or root, writable by nobody else), an entry is read up to a size limit
and parsed as data, and anything that does not read back as an entry this
checker wrote is a miss, checked anew and replaced. ``--no-cache`` (or
``PPY_CHECK_NO_CACHE=1``) neither reads nor writes them.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ppy_check.diagnostic import Diagnostic
from ppy_check.reads import Reads
from ppy_check.source import digest_of

FOLDER = "check"
NO_CACHE_VARIABLE = "PPY_CHECK_NO_CACHE"
FORMAT = 1  # bumped whenever an entry's layout changes
ENTRY_LIMIT = 16 << 20  # bytes: a file's findings are a few kilobytes; anything far larger was not written here
_PACKAGE = os.path.dirname(os.path.abspath(__file__))
_SUFFIXES = (".py", ".json", ".txt")  # the checker's code, its op data, torch's source it inlines


def disabled() -> bool:
    """Whether ``PPY_CHECK_NO_CACHE`` asks every file to be checked anew."""
    return os.environ.get(NO_CACHE_VARIABLE, "") not in ("", "0")


def _package_files(folder: str) -> Iterator[tuple[str, int, int]]:
    """Each file of the checker under ``folder``: its path, size and modification time."""
    with os.scandir(folder) as entries:
        for entry in sorted(entries, key=lambda e: e.name):
            if entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__":
                    yield from _package_files(entry.path)
            elif entry.name.endswith(_SUFFIXES):
                info = entry.stat(follow_symlinks=False)
                yield entry.path, info.st_size, info.st_mtime_ns


def checker_fingerprint() -> str:
    """What made an entry: this checker's files as they are on disk (by size and time, not read: reading them
    all is most of a small check), the Python running it, the op data in use, and the file time budget."""
    from ppy_check.installed_opdata import in_use
    from ppy_check.model.budgets import file_seconds
    from ppy_check.version import __version__

    data = in_use()
    made = [__version__, sys.implementation.name, sys.version, str(data.data), data.identity, data.torch_version,
            repr(file_seconds()), *(f"{path[len(_PACKAGE):]}\0{size}\0{mtime}" for path, size, mtime in _package_files(_PACKAGE))]
    return digest_of("\n".join(made).encode("utf-8", "surrogateescape"))


@dataclass(frozen=True)
class Entry:
    """What one file's check answered, and what the answer rests on (see the module's text)."""

    digest: str
    files: tuple[tuple[str, str | None], ...]
    lookups: tuple[tuple[str, str, str | None], ...]
    diagnostics: tuple[Diagnostic, ...]

    def as_json(self, checker: str) -> bytes:
        return json.dumps({"format": FORMAT, "checker": checker, "digest": self.digest, "files": self.files,
                           "lookups": self.lookups, "diagnostics": [d.as_json() for d in self.diagnostics]},
                          ensure_ascii=False, separators=(",", ":")).encode("utf-8", "surrogateescape")

    @classmethod
    def from_json(cls, data: bytes, checker: str, name: str) -> Entry | None:
        """The entry ``as_json`` wrote for this checker and the file ``name``, or None for anything else: every
        field is checked for the type and range a check gives it, so nothing else is ever reported."""
        try:
            found = json.loads(data)
            if not isinstance(found, dict) or found.get("format") != FORMAT or found.get("checker") != checker:
                return None
            files = tuple((_path(path), _text_or_none(digest)) for path, digest in found["files"])
            lookups = tuple((_path(importer), _path(module), None if path is None else _path(path))
                            for importer, module, path in found["lookups"])
            diagnostics = tuple(_diagnostic(item, name) for item in found["diagnostics"])
            return cls(_text(found["digest"]), files, lookups, diagnostics)
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError):
            return None

    def holds(self) -> bool:
        """Whether every file it read reads the same now, and every import finds the same file."""
        if not self.files and not self.lookups:
            return True  # a file of its own: the import follower (and the parser it brings) stays unloaded
        from ppy_check.imports import reads_the_same

        try:
            return reads_the_same(self.files, self.lookups)
        except (OSError, ValueError, RuntimeError):  # a name no file system takes, a loop of links
            return False


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise TypeError("not a string")
    return value


def _text_or_none(value: object) -> str | None:
    return None if value is None else _text(value)


def _path(value: object) -> str:
    text = _text(value)
    if "\0" in text or len(text) > 4096:  # PATH_MAX: no check read such a file
        raise ValueError("not a path")
    return text


def _number(value: object, least: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < least:
        raise TypeError("not a line or column")
    return value


def _record(value: object, keys: set[str]) -> dict[str, Any]:
    if not isinstance(value, dict) or set(value) != keys:
        raise TypeError("not a record")
    return value


_DIAGNOSTIC_KEYS = {"path", "line", "column", "code", "message", "region", "end_line", "end_column", "fix", "regions"}
_FIX_KEYS = {"message", "edits", "applicability"}
_EDIT_KEYS = {"line", "column", "end_line", "end_column", "content"}


def _diagnostic(value: object, name: str) -> Diagnostic:
    """A finding as ``Diagnostic.as_json`` wrote it for the file ``name``: fields of the types a check gives."""
    item = _record(value, _DIAGNOSTIC_KEYS)
    if item["path"] != name:
        raise ValueError("another file's finding")
    for key in ("line", "column"):
        _number(item[key], 1)
    for key in ("end_line", "end_column"):
        _number(item[key], 0)
    for key in ("code", "message", "region"):
        _text(item[key])
    if not isinstance(item["regions"], list):
        raise TypeError("not a list of regions")
    for region in item["regions"]:
        _text(region)
    if item["fix"] is not None:
        fix = _record(item["fix"], _FIX_KEYS)
        _text(fix["message"])
        if fix["applicability"] not in ("safe", "unsafe") or not isinstance(fix["edits"], list):
            raise ValueError("not a fix")
        for edit in fix["edits"]:
            record = _record(edit, _EDIT_KEYS)
            for key in ("line", "column", "end_line", "end_column"):
                _number(record[key], 1)
            _text(record["content"])
    return Diagnostic.from_json(item)


class ResultCache:
    """The kept results, through one checked descriptor of their folder for the whole run."""

    def __init__(self, folder: int, where: Path):
        self.folder = folder
        self.where = where
        self.checker = checker_fingerprint()
        self.here = os.getcwd()

    @classmethod
    def open(cls, root: Path) -> ResultCache:
        """The cache under ``root``; raises OSError, or ``safedir.Untrusted`` where another user could write it."""
        from ppy_check import safedir

        folder, where = safedir.open_cache_folder(root, FOLDER)
        try:
            return cls(folder, where)
        except BaseException:
            os.close(folder)
            raise

    def close(self) -> None:
        os.close(self.folder)

    def _name(self, name: str, codes: Sequence[str]) -> str:
        return digest_of(json.dumps([FORMAT, self.here, name, list(codes)]).encode("utf-8", "surrogateescape"))

    def lookup(self, name: str, data: bytes, codes: Sequence[str]) -> tuple[Diagnostic, ...] | None:
        """The findings kept for this file's check, if everything they rest on is as it was; else None."""
        from ppy_check import safedir

        entry_name = self._name(name, codes)
        try:
            content = safedir.read_file(self.folder, entry_name, str(self.where / entry_name), ENTRY_LIMIT)
        except (OSError, safedir.Untrusted):
            return None  # none yet, or one this run must not trust: checked anew, and replaced
        entry = Entry.from_json(content, self.checker, name)
        if entry is None or entry.digest != digest_of(data) or not entry.holds():
            return None
        return entry.diagnostics

    def store(self, name: str, data: bytes, codes: Sequence[str], diagnostics: Sequence[Diagnostic],
              reads: Reads) -> None:
        """Keep a finished check's findings; one another run could end otherwise (``reads.unrepeatable``) is not."""
        from ppy_check import safedir

        if not reads.repeatable:
            return
        entry = Entry(digest_of(data), tuple(reads.files.items()),
                      tuple((importer, module, found) for (importer, module), found in reads.lookups.items()),
                      tuple(diagnostics))
        entry_name = self._name(name, codes)
        content = entry.as_json(self.checker)
        try:
            try:
                safedir.write_file(self.folder, entry_name, content, durable=False)
            except IsADirectoryError:
                safedir.remove(self.folder, entry_name)  # not an entry of ours: it goes, never followed
                safedir.write_file(self.folder, entry_name, content, durable=False)
        except OSError:
            pass  # a full disk costs the next run its speed, not this run its findings
