"""Acting as another user in tests: a forked child that drops to `nobody` and runs one function.

The suite runs as root in CI, and root may write anywhere, so permission and
ownership tests switch user instead of skipping: the child calls setgroups,
setgid and setuid, runs the function, and sends back its result (or its
traceback) through a pipe. A fork rather than a new interpreter: the
interpreter may live where `nobody` cannot read it (a pyenv under /root).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import pwd
import shutil
import tempfile
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

T = TypeVar("T")

NOBODY = pwd.getpwnam("nobody")


def is_root() -> bool:
    return os.geteuid() == 0


def as_nobody(function: Callable[..., T], *args: Any) -> T:
    """``function(*args)`` run as the user nobody, in a forked child; its result, or its exception re-raised here."""
    if not is_root():
        pytest.skip("acting as a second user needs root (CI runs the suite as root)")
    reading, writing = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child's coverage is not collected
        os.close(reading)
        try:
            os.setgroups([])
            os.setgid(NOBODY.pw_gid)
            os.setuid(NOBODY.pw_uid)
            tempfile.tempdir = None  # chosen again, as nobody
            outcome: tuple[bool, Any] = (True, function(*args))
        except BaseException as error:  # noqa: BLE001 - everything goes back to the parent
            outcome = (False, f"{type(error).__name__}: {error}\n{traceback.format_exc()}")
        with os.fdopen(writing, "wb") as out:
            try:
                pickle.dump(outcome, out)
            except Exception as error:  # noqa: BLE001
                pickle.dump((False, f"unpicklable result: {error}"), out)
        os._exit(0)
    os.close(writing)
    with os.fdopen(reading, "rb") as answer:
        data = answer.read()
    os.waitpid(child, 0)
    ok, value = pickle.loads(data)
    if not ok:
        raise AssertionError(f"as nobody: {value}")
    return value  # type: ignore[no-any-return]


def as_unprivileged(function: Callable[..., T], *args: Any) -> T:
    """``function(*args)`` run as a user without root's powers: nobody under root, else the current user."""
    return as_nobody(function, *args) if is_root() else function(*args)


@contextlib.contextmanager
def shared_folder() -> Iterator[Path]:
    """A folder both root and nobody can reach (pytest's tmp_path is root's alone), removed afterwards."""
    base = Path(tempfile.mkdtemp(prefix="ppy-users-", dir="/tmp" if os.path.isdir("/tmp") else None))
    os.chmod(base, 0o755)
    try:
        yield base
    finally:
        shutil.rmtree(base, ignore_errors=True)


def give_to_nobody(path: Path, mode: int) -> Path:
    """Make ``path`` a folder owned by nobody with ``mode`` (as if nobody had made it)."""
    path.mkdir(exist_ok=True)
    os.chown(path, NOBODY.pw_uid, NOBODY.pw_gid)
    os.chmod(path, mode)
    return path
