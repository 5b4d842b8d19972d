"""Private fallback caches: made when the configured cache is refused, removed when their process ends.

Each is a fresh 0700 folder in the temporary folder, holding a lock file its
process keeps locked for as long as it (or a child forked from it) lives. It is
removed at exit; after a ``kill -9`` the lock is free, and that is how ``ppy
cache prune`` tells a dead process's cache (a full bridge and precompiled
header, some 400 MB) from a live one's.
"""

from __future__ import annotations

import atexit
import errno
import fcntl
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ppy_check import safedir
from ppy_check.safedir import Untrusted

PREFIX = "ppy-cache-"
OWNER_LOCK = "owner.lock"
# A folder with no lock file yet was made a moment ago, or by an older ppy:
# it counts as alive until it is this old.
UNLOCKED_GRACE_SECONDS = 3600.0

_made: dict[int, Path] = {}  # user id -> this process's (a forked child shares its parent's)


def private_root() -> Path:
    """This process's private cache folder, made on first need and removed at exit."""
    user = os.geteuid()
    if user not in _made:
        path = Path(tempfile.mkdtemp(prefix=PREFIX))
        fd = os.open(path / OWNER_LOCK, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)  # never released: it ends with the process
        _made[user] = path
        atexit.register(_remove, os.getpid(), path)
    return _made[user]


def _remove(creator: int, path: Path) -> None:
    if os.getpid() == creator:  # not in a forked child: its parent still uses it
        shutil.rmtree(path, ignore_errors=True)


def try_lock(fd: int, operation: int = fcntl.LOCK_EX) -> bool:
    """Take the lock on ``fd`` (exclusive, or ``fcntl.LOCK_SH``) if nobody holds it against that; whether it was taken."""
    try:
        fcntl.flock(fd, operation | fcntl.LOCK_NB)
    except OSError as error:
        if error.errno in (errno.EWOULDBLOCK, errno.EAGAIN):
            return False
        raise
    return True


@dataclass(frozen=True)
class Fallback:
    path: Path
    bytes: int
    alive: bool  # its process still runs


def fallback_caches() -> list[Fallback]:
    """The current user's private caches in the temporary folder."""
    where = tempfile.gettempdir()
    try:
        parent = os.open(where, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return []
    found = []
    try:
        for name in os.listdir(parent):
            if not name.startswith(PREFIX):
                continue
            try:
                fd = safedir.open_subdir(parent, name, os.path.join(where, name))
            except (OSError, Untrusted):
                continue  # not a folder, or another user's: not ours to judge
            try:
                if os.fstat(fd).st_uid == os.geteuid():
                    found.append(Fallback(Path(where) / name, safedir.size_of(parent, name), _alive(fd)))
            finally:
                os.close(fd)
    finally:
        os.close(parent)
    return found


def _alive(folder: int) -> bool:
    try:
        fd = os.open(OWNER_LOCK, os.O_RDWR | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=folder)
    except FileNotFoundError:
        return safedir.age_of(folder, ".") < UNLOCKED_GRACE_SECONDS
    except OSError:
        return True
    try:
        return not try_lock(fd)
    finally:
        os.close(fd)


def remove_ended(keep: Path | None = None) -> list[int]:
    """Remove the caches of ended processes (never ``keep``); the size of each removed."""
    removed = []
    parent = os.open(tempfile.gettempdir(), os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for found in fallback_caches():
            if not found.alive and found.path != keep:
                safedir.remove(parent, found.path.name)
                removed.append(found.bytes)
    finally:
        os.close(parent)
    return removed
