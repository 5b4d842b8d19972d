"""The walk from the paths a user names to the files ppy-check reads.

Only regular files are ever read: a FIFO or a device named `*.py` would block
the run or feed it endless bytes, and telling them apart needs only the
folder's entry (``stat``), never an ``open``.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ppy_check.config import Config


def iter_files(paths: list[Path], config: Config, force_exclude: bool = False) -> Iterator[Path | str]:
    """The files to check; a string instead of a path is a one-line problem with that path.

    A path named on the command line is checked even when excluded, as ruff
    does, unless ``force_exclude`` (or ``force-exclude = true``) says the
    exclusions hold for it too: what pre-commit needs, since it names every file.
    """
    seen: set[Path] = set()
    for path in paths:
        try:
            mode = os.stat(path).st_mode
        except FileNotFoundError:
            yield f"{path}: no such file or directory"
            continue
        except OSError as error:
            yield f"{path}: cannot read: {error.strerror or error}"
            continue
        if (force_exclude or config.force_exclude) and config.force_excluded(path):
            continue
        if stat.S_ISDIR(mode):
            yield from _walk(path, config, seen)
        elif not stat.S_ISREG(mode):
            yield f"{path}: not a regular file"
        elif path not in seen:
            seen.add(path)
            yield path


def _walk(folder: Path, config: Config, seen: set[Path]) -> Iterator[Path | str]:
    try:
        with os.scandir(folder) as scan:
            entries = sorted(scan, key=lambda entry: entry.name)
    except OSError as error:
        yield f"{folder}: cannot read folder: {error.strerror or error}"
        return
    for entry in entries:
        path = folder / entry.name
        if config.excluded(path):
            continue
        try:
            if entry.is_dir(follow_symlinks=False):
                yield from _walk(path, config, seen)
            elif not config.included(path) or path in seen:
                continue
            elif entry.is_file():
                seen.add(path)
                yield path
            elif entry.is_symlink() and not os.path.exists(path):
                yield f"{path}: cannot read: a symbolic link to a missing file"
        except OSError as error:
            yield f"{path}: cannot read: {error.strerror or error}"
