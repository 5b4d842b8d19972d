"""The on-disk build cache: where it lives, what it trusts, and how entries appear atomically.

Layout under the root (``PPY_CACHE_DIR``, else ``$XDG_CACHE_HOME/ppy``, else
``~/.cache/ppy``)::

    builds/<key>/            one built artifact, its source and a manifest
    builds/.<key>-<token>/   a build of <key> in progress (stale once nobody holds its lock)
    index/<key>.json         a region module's source text -> its build, so a
                             warm start needs no lowering and no torchgen
    locks/<key>.lock         held while one process builds <key>

An entry is built in a private folder and renamed into place, so a reader sees
a whole entry or none; the manifest records the artifact's sha256, checked on
first use in each process, so a truncated or corrupted entry is rebuilt.

Loading a shared object runs its code, so the cache trusts only what no other
user can have written (the rules are in ``safedir``): the root is walked from
``/`` through open descriptors, everything below it is opened relative to the
root's descriptor with ``O_NOFOLLOW``, keys and artifact names are plain names,
and an artifact is handed out as the descriptor it was hashed through. A cache
that fails the rules is refused with a warning naming the folder and why, and a
private folder (removed at exit) is used instead.

A cache that passes the rules but that this user cannot write (one baked into
an image by root, ``chmod -R a+rX``, read by the image's unprivileged user) is
read, not refused: its builds and index serve as they are, never altered, and
anything new is built into a private folder in front of it (``base``).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import re
import secrets
import tempfile
import threading
import time
import warnings
import weakref
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from ppy_check import safedir
from ppy_check.cache_root import default_root
from ppy_check.errors import BuildError
from ppy_check.safedir import Untrusted
from ppy_compile.fallback import fallback_caches, private_root, remove_ended, try_lock
from ppy_compile.toolchain import BuildInterrupted

MANIFEST = "manifest.json"
FOLDERS = ("builds", "index", "holders", "locks")
SHARED_KINDS = ("bridge", "pch")  # built once per torch and compiler: a minute to make again
# Leftovers that no lock can vouch for (a temporary index file, a staging folder
# of an older ppy) are removed once this old.
STALE_SECONDS = 3600.0
# The names records are written under before they are renamed into place: what a killed writer leaves.
_TEMPORARY = {"index": ".index-", "holders": ".holder-"}
T = TypeVar("T")
LOG_SECONDS = 86400.0  # the log of a failed build, named in its error message, is kept this long

_KEY = re.compile(r"[0-9a-f]{64}\Z")
_PLAIN_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]{0,127}\Z")
_STAGING = re.compile(r"\.([0-9a-f]{64})-[0-9a-f]+\Z")
_INDEX_LIMIT = 16 << 20
_MANIFEST_LIMIT = 1 << 20


class Unwritable(safedir.Untrusted):
    """A cache folder that passes the rules but this user cannot write: it may still be read (``Cache.base``)."""


class CacheWarning(UserWarning):
    """The cache could not be used as configured; ppy fell back to a private folder."""


class CacheError(BuildError):
    """The cache cannot be used safely, or holds a value that is not a plain key or name."""


def is_key(value: object) -> bool:
    return isinstance(value, str) and _KEY.match(value) is not None


def _check_key(value: object) -> str:
    if not is_key(value):
        raise CacheError(f"not a cache key: {str(value)[:80]!r}")
    return value  # type: ignore[return-value]


def _check_name(value: object) -> str:
    if not isinstance(value, str) or _PLAIN_NAME.match(value) is None or value == MANIFEST:
        raise CacheError(f"not a plain artifact name: {str(value)[:80]!r}")
    return value


def _json(data: bytes) -> Any:
    """``data`` parsed; ValueError for anything that is not JSON, including nesting too deep for the parser
    (which json reports as RecursionError): a record read back from the cache may be any garbage."""
    try:
        return json.loads(data)
    except RecursionError:
        raise ValueError("JSON nested too deeply") from None


# --- digests -----------------------------------------------------------------

# (device, inode) -> (size, mtime, ctime, sha256) of files hashed in this process.
# Any write changes mtime and ctime (and ctime cannot be set back), so a match
# means the bytes are the ones hashed: a 400 MB precompiled header is hashed
# once per process, not on every module build.
_verified: dict[tuple[int, int], tuple[int, int, int, str]] = {}


def _stamp(info: os.stat_result) -> tuple[int, int, int]:
    return info.st_size, info.st_mtime_ns, info.st_ctime_ns


def sha256_fd(fd: int) -> str:
    digest = hashlib.sha256()
    buffer = bytearray(1 << 20)
    view = memoryview(buffer)
    offset = 0
    while read := os.preadv(fd, [buffer], offset):
        digest.update(view[:read])
        offset += read
    return digest.hexdigest()


def _digest_matches(fd: int, expected: object) -> bool:
    info = os.fstat(fd)
    if not isinstance(expected, str):
        return False
    if _verified.get((info.st_dev, info.st_ino)) == (*_stamp(info), expected):
        return True
    if sha256_fd(fd) != expected:
        return False
    _remember(info, expected)
    return True


def _remember(info: os.stat_result, digest: str) -> None:
    _verified[(info.st_dev, info.st_ino)] = (*_stamp(info), digest)


@dataclass(frozen=True)
class Artifact:
    """A built artifact, open: ``fd`` is the descriptor its digest was checked through."""

    fd: int
    manifest: dict[str, Any]

    @property
    def path(self) -> str:
        """A path naming exactly the checked file: opening it opens the inode ``fd`` holds, not a name."""
        path = f"/proc/self/fd/{self.fd}"
        if not os.path.exists(path):
            raise CacheError("loading a compiled region needs /proc mounted: it names the checked file by its descriptor")
        return path

    def close(self) -> None:
        os.close(self.fd)


# --- locks ---------------------------------------------------------------------

# How long a build waits for another process's build of the same key before it gives up (PPY_LOCK_TIMEOUT).
LOCK_TIMEOUT_SECONDS = 900.0
# The descriptors of lock files this process has open: a forked child closes its copies, which would
# otherwise hold its parent's locks for as long as the child lives.
_open_locks: set[int] = set()
# Lock files (by path) this process holds, and how many times: a wait on one of them is on this process's own
# build, which is making progress, so it has no bound.
_held: dict[str, int] = {}
_held_guard = threading.Lock()
# Set once the interpreter exits: a build then never waits on another process's.
_exiting = threading.Event()


class LockWaitEnded(BuildInterrupted):
    """A wait on another process's build of the same key gave up (its bound passed, or the program ended)."""


def end_waits() -> None:
    """From now on, waits on other processes' locks give up at once (the program is exiting)."""
    _exiting.set()


def _close_lock(fd: int) -> None:
    _open_locks.discard(fd)
    with contextlib.suppress(OSError):
        os.close(fd)


def _forget_locks_in_child() -> None:
    """In a forked child: close the copies of the parent's lock descriptors (closing a copy releases nothing
    while the parent holds its own), and forget the parent's holds and exit."""
    global _held_guard
    for fd in list(_open_locks):
        with contextlib.suppress(OSError):
            os.close(fd)
    _open_locks.clear()
    _held.clear()
    _held_guard = threading.Lock()
    _exiting.clear()


os.register_at_fork(after_in_child=_forget_locks_in_child)


def lock_timeout() -> float:
    value = os.environ.get("PPY_LOCK_TIMEOUT", "")
    try:
        return float(value) if value else LOCK_TIMEOUT_SECONDS
    except ValueError:
        warnings.warn(f"ppy: PPY_LOCK_TIMEOUT={value!r} is not a number of seconds; using {LOCK_TIMEOUT_SECONDS:.0f}",
                      stacklevel=2)
        return LOCK_TIMEOUT_SECONDS


class _LockWait:
    """One wait for a lock file: polled, so that it can end at its bound or when the program exits."""

    def __init__(self, path: str, shared: bool):
        self.path = path
        self.operation = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
        self.started = time.monotonic()
        self.timeout = lock_timeout()

    def until_taken(self, fd: int) -> None:
        pause = 0.005
        while not try_lock(fd, self.operation):
            with _held_guard:
                ours = _held.get(self.path, 0) > 0
            if not ours and _exiting.is_set():
                raise LockWaitEnded(f"the program ended while {self._holder(fd)} was building the same code "
                                    f"(lock {self.path}); it was not waited for, and the next run uses its build")
            if not ours and time.monotonic() - self.started > self.timeout:
                raise LockWaitEnded(f"gave up after {self.timeout:.0f} s waiting for {self._holder(fd)} to finish "
                                    f"building the same code (lock {self.path}): if that process is stopped (Ctrl-Z) "
                                    "or hung, resume or end it; PPY_LOCK_TIMEOUT sets the wait. Nothing was recorded, "
                                    "and the next run builds it")
            time.sleep(pause)
            pause = min(pause * 2, 0.1)

    def taken(self, fd: int) -> None:
        with _held_guard:
            _held[self.path] = _held.get(self.path, 0) + 1
        if self.operation == fcntl.LOCK_EX:
            with contextlib.suppress(OSError):  # who holds it, for the message of whoever waits
                os.ftruncate(fd, 0)
                os.pwrite(fd, f"{os.getpid()}\n".encode("ascii"), 0)

    @staticmethod
    def released(path: str) -> None:
        with _held_guard:
            if _held.get(path, 0) > 1:
                _held[path] -= 1
            else:
                _held.pop(path, None)

    @staticmethod
    def _holder(fd: int) -> str:
        """The process holding the lock, as its file records it, and whether it is stopped."""
        try:
            pid = int(os.pread(fd, 32, 0).decode("ascii").strip())
        except (OSError, ValueError, UnicodeDecodeError):
            return "another process"
        state = _process_state(pid)
        if state is None:
            return f"process {pid}"
        return f"process {pid} (stopped)" if state in ("T", "t") else f"process {pid}"


def _process_state(pid: int) -> str | None:
    """The state letter of a process (R, S, T ...), from /proc; None where unknown."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


# --- the cache -------------------------------------------------------------------


@dataclass
class Cache:
    root: Path
    # The root, open and checked: everything in the cache is reached from it.
    _fd: int | None = field(default=None, init=False, repr=False, compare=False)
    # A cache this one reads what it lacks from and never writes (an image's, baked by root); None: none.
    base: Cache | None = field(default=None, init=False, repr=False, compare=False)
    # Read, never written: nothing is created, discarded or locked in it (a base).
    read_only: bool = field(default=False, init=False, repr=False, compare=False)
    _said_unbaked: bool = field(default=False, init=False, repr=False, compare=False)

    @classmethod
    def open(cls, root: Path | None = None) -> Cache:
        """The cache at ``root`` (default: the configured one), or a private one with a warning."""
        root = Path(os.path.abspath(root or default_root()))
        base = None
        try:
            return cls._checked(root, create=True)
        except Unwritable:
            base = cls._readable(root)
            problem = "it is not writable"
        except (Untrusted, OSError) as error:
            problem = _describe(error, root)
        fallback = _private_root(root, problem)
        if base is None:
            warnings.warn(f"ppy: not using the cache folder {root}: {problem}; using {fallback} for this process "
                          "(removed when it exits)", CacheWarning, stacklevel=3)
        try:
            cache = cls._checked(fallback, create=True)
        except (Untrusted, OSError) as error:
            raise CacheError(f"no safe folder for the build cache: {root}: {problem}; "
                             f"{fallback}: {_describe(error, fallback)}") from None
        cache.base = base
        return cache

    @classmethod
    def _checked(cls, root: Path, create: bool) -> Cache:
        cache = cls(root)
        fd = safedir.open_dir(root, create=create)
        cache._attach(fd)
        if not os.access(".", os.W_OK | os.X_OK, dir_fd=fd):
            raise Unwritable(str(root), "{p} is not writable")
        for name in FOLDERS:
            sub = safedir.open_subdir(fd, name, str(root / name), create=True)
            try:
                if not os.access(".", os.W_OK | os.X_OK, dir_fd=sub):
                    raise Unwritable(str(root / name), "{p} is not writable")
            finally:
                os.close(sub)
        return cache

    @classmethod
    def _readable(cls, root: Path) -> Cache | None:
        """The cache at ``root`` to read only, where the rules hold for it (ours or root's, writable by no other
        user) and it can be read; None otherwise (then it is refused as any cache that breaks a rule)."""
        cache = cls(root)
        cache.read_only = True
        try:
            fd = safedir.open_dir(root)
            cache._attach(fd)
            if not os.access(".", os.R_OK | os.X_OK, dir_fd=fd):
                return None
        except (Untrusted, OSError):
            return None
        return cache

    def _attach(self, fd: int) -> None:
        self._fd = fd
        # Closed when the cache is dropped, never at exit (a finalizer's default): a background build goes on
        # after the program's atexit hooks, and its root, closed under it, fails it, or its number reused by
        # the next open points the build's writes into another folder.
        weakref.finalize(self, os.close, fd).atexit = False

    def _root_fd(self) -> int:
        if self._fd is None:  # made directly, as Cache(path): checked on first use, never replaced
            try:
                self._attach(safedir.open_dir(self.root))
            except (Untrusted, OSError) as error:
                raise CacheError(f"the cache folder {self.root}: {_describe(error, self.root)}") from None
        assert self._fd is not None
        return self._fd

    @contextlib.contextmanager
    def _folder(self, name: str) -> Iterator[int]:
        try:
            fd = safedir.open_subdir(self._root_fd(), name, str(self.root / name), create=not self.read_only)
        except Untrusted as error:
            raise CacheError(f"the cache folder {self.root}: {error}") from None
        try:
            yield fd
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def _reading(self, name: str) -> Iterator[int | None]:
        """The folder ``name`` to read from; None where a read-only cache has none (nothing was baked there)."""
        if not self.read_only:
            with self._folder(name) as fd:
                yield fd
            return
        try:
            fd = safedir.open_subdir(self._root_fd(), name, str(self.root / name))
        except (FileNotFoundError, Untrusted):
            yield None
            return
        try:
            yield fd
        finally:
            os.close(fd)

    def _discard_own(self, parent: int, name: str) -> None:
        """Remove what fails its checks, so that it is built again; a read-only cache's is left as it is (it is
        not served either)."""
        if not self.read_only:
            self._discard(parent, name)

    # --- builds ------------------------------------------------------------

    def build_dir(self, key: str) -> Path:
        """Where the entry ``key`` lies: here, or in the base where only the base holds it."""
        here = self.root / "builds" / _check_key(key)
        if self.base is not None and not os.path.lexists(here) and os.path.lexists(self.base.build_dir(key)):
            return self.base.build_dir(key)
        return here

    def valid(self, key: str) -> dict[str, Any] | None:
        """The manifest of a whole, unaltered entry; None (and the entry removed) otherwise."""
        artifact = self.open_artifact(key)
        if artifact is None:
            return None
        artifact.close()
        return artifact.manifest

    def open_artifact(self, key: str) -> Artifact | None:
        """The entry's artifact, open and checked (owner, mode, size, sha256); None (and the entry removed) otherwise.

        The caller owns the descriptor. Loading through ``Artifact.path`` loads
        the very bytes that were hashed, whatever happens to the name meanwhile.
        An entry this cache lacks is read from its base, which is never altered.
        """
        _check_key(key)
        found = self._own_artifact(key)
        if found is None and self.base is not None:
            found = self.base.open_artifact(key)
        return found

    def _own_artifact(self, key: str) -> Artifact | None:
        with self._reading("builds") as builds:
            if builds is None:
                return None
            where = str(self.root / "builds" / key)
            try:
                entry = safedir.open_subdir(builds, key, where)
            except FileNotFoundError:
                return None
            except (Untrusted, OSError):
                self._discard_own(builds, key)  # a link, a file, or a folder others could write: build it again
                return None
            try:
                artifact = self._checked_artifact(entry, where)
            finally:
                os.close(entry)
            if artifact is None:
                self._discard_own(builds, key)  # truncated, corrupted or altered: build it again
            return artifact

    @staticmethod
    def _checked_artifact(entry: int, where: str) -> Artifact | None:
        try:
            manifest = _json(safedir.read_file(entry, MANIFEST, f"{where}/{MANIFEST}", _MANIFEST_LIMIT))
            if not isinstance(manifest, dict):
                return None
            name = _check_name(manifest.get("artifact"))
            fd = safedir.open_file(entry, name, f"{where}/{name}")
        except (OSError, ValueError, Untrusted, CacheError):
            return None
        if os.fstat(fd).st_size == manifest.get("size") and _digest_matches(fd, manifest.get("sha256")):
            return Artifact(fd, manifest)
        os.close(fd)
        return None

    def discard(self, key: str) -> None:
        """Remove the entry ``key``: it is built again when next needed."""
        with self._folder("builds") as builds:
            self._discard(builds, _check_key(key))

    @staticmethod
    def _discard(parent: int, name: str) -> None:
        with contextlib.suppress(OSError):
            safedir.remove(parent, name)

    @contextlib.contextmanager
    def locked(self, key: str, shared: bool = False) -> Iterator[None]:
        """Held while building ``key`` (``shared``: while a build uses it, so that nothing removes it meanwhile):
        concurrent builders of one key wait and reuse the result.

        A wait on another process has a bound (``PPY_LOCK_TIMEOUT`` seconds) and, once the interpreter exits,
        none at all: both raise LockWaitEnded, which records nothing.
        """
        fd = self._acquire(key, shared)
        try:
            yield
        finally:
            self._release(key, fd, shared)

    def _lock_fd(self, key: str) -> int:
        with self._folder("locks") as locks:
            return os.open(f"{_check_key(key)}.lock", os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                           dir_fd=locks)

    def _lock_path(self, key: str) -> str:
        return str(self.root / "locks" / f"{key}.lock")

    def _acquire(self, key: str, shared: bool) -> int:
        """A descriptor holding the lock of ``key``: the lock file that is in place now, not one `ppy cache clear`
        removed while this process waited on it (whoever holds a removed file holds nothing anyone else sees)."""
        wait = _LockWait(self._lock_path(key), shared)
        while True:
            fd = self._lock_fd(key)
            _open_locks.add(fd)
            try:
                wait.until_taken(fd)
                if self._lock_in_place(key, fd):
                    wait.taken(fd)
                    return fd
            except BaseException:
                _close_lock(fd)
                raise
            _close_lock(fd)

    def _try_lock(self, key: str) -> int | None:
        """The lock of ``key``, taken only if nobody holds it now; its descriptor, or None."""
        while True:
            fd = self._lock_fd(key)
            _open_locks.add(fd)
            try:
                if not try_lock(fd):
                    _close_lock(fd)
                    return None
                if self._lock_in_place(key, fd):
                    return fd
            except BaseException:
                _close_lock(fd)
                raise
            _close_lock(fd)

    @contextlib.contextmanager
    def _unless_held(self, name: str) -> Iterator[bool]:
        """Whether nobody holds the lock of the entry ``name`` (held through the block when it is free; a name
        that is no key, or whose lock file is gone, has no holder)."""
        if not is_key(name):
            yield True
            return
        with self._folder("locks") as locks:
            try:
                os.stat(f"{name}.lock", dir_fd=locks, follow_symlinks=False)
                exists = True
            except FileNotFoundError:
                exists = False
        fd = self._try_lock(name) if exists else None
        try:
            yield fd is not None or not exists
        finally:
            if fd is not None:
                _close_lock(fd)

    def _lock_in_place(self, key: str, fd: int) -> bool:
        with self._folder("locks") as locks:
            try:
                named = os.stat(f"{key}.lock", dir_fd=locks, follow_symlinks=False)
            except FileNotFoundError:
                return False
        held = os.fstat(fd)
        return (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)

    def _release(self, key: str, fd: int, shared: bool) -> None:
        if not shared:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)  # the pid it names would otherwise outlive the hold
        _LockWait.released(self._lock_path(key))
        _close_lock(fd)  # closing releases the lock

    @contextlib.contextmanager
    def staging(self, key: str) -> Iterator[Path]:
        """A private folder for a build of ``key`` (hold ``locked(key)``); ``publish`` moves it into place."""
        name = f".{_check_key(key)}-{secrets.token_hex(6)}"
        with self._folder("builds") as builds:
            self._sweep(builds)
            os.mkdir(name, 0o700, dir_fd=builds)
        try:
            yield self.root / "builds" / name
        finally:
            with self._folder("builds") as builds:
                self._discard(builds, name)

    def publish(self, key: str, folder: Path, artifact: str, extra: dict[str, Any]) -> dict[str, Any]:
        """Record ``artifact``'s digest in a manifest and move the staging ``folder`` into place as ``key``."""
        _check_key(key)
        _check_name(artifact)
        if self.base is not None and not self._said_unbaked:
            # A read-only cache lacks a build: say so once, since each process builds it again.
            self._said_unbaked = True
            warnings.warn(f"ppy: the cache folder {self.base.root} is read-only and lacks a build this process "
                          f"needs, made in {self.root} (removed when it exits); build it into {self.base.root} "
                          "ahead, as its owner (`ppy build src/`), to serve it from there", CacheWarning,
                          stacklevel=2)
        if folder.parent != self.root / "builds":
            raise CacheError(f"{folder} is not a staging folder of {self.root}")
        with self._folder("builds") as builds:
            staged = safedir.open_subdir(builds, folder.name, str(folder))
            try:
                manifest = {"artifact": artifact, **_seal(staged, artifact, str(folder / artifact)), **extra}
                fd = os.open(MANIFEST, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                             dir_fd=staged)
                with os.fdopen(fd, "w", encoding="utf-8") as out:
                    json.dump(manifest, out, indent=2)
            finally:
                os.close(staged)
            try:
                os.rename(folder.name, key, src_dir_fd=builds, dst_dir_fd=builds)
            except OSError:
                found = self.valid(key)
                if found is not None:
                    return found  # another builder published it first
                self._discard(builds, key)  # what was in the way was broken (a dangling link, say): replace it
                os.rename(folder.name, key, src_dir_fd=builds, dst_dir_fd=builds)
        return manifest

    # --- index -------------------------------------------------------------

    def read_index(self, key: str) -> dict[str, Any] | None:
        """The index entry for ``key``; None when there is none, and when it is not a JSON object (then discarded)."""
        def parse(data: bytes) -> dict[str, Any] | None:
            value = _json(data)
            return value if isinstance(value, dict) else None

        return self._read_record("index", f"{_check_key(key)}.json", _INDEX_LIMIT, parse)

    def discard_index(self, key: str) -> None:
        with self._folder("index") as index:
            self._discard(index, f"{_check_key(key)}.json")

    def write_index(self, key: str, data: dict[str, Any]) -> None:
        self._write_record("index", f"{_check_key(key)}.json", json.dumps(data, indent=2))

    # --- holders: which module holds a region's C++ (a rebuild compiles only regions no module holds) ---

    def read_holder(self, digest: str) -> str | None:
        """The module recorded as holding the region of ``digest``: a key, or None (nothing, or not a key)."""
        def parse(data: bytes) -> str | None:
            key = data.decode("ascii").strip()
            return key if is_key(key) else None

        return self._read_record("holders", _check_key(digest), 128, parse)

    def write_holder(self, digest: str, key: str) -> None:
        self._write_record("holders", _check_key(digest), _check_key(key))

    # --- records: small files of index/ and holders/, read checked and written whole -------------------

    def _read_record(self, folder: str, name: str, limit: int, parse: Callable[[bytes], T | None]) -> T | None:
        """The record's parsed contents; None when there is none, and when it does not parse (then discarded).
        A record this cache lacks is read from its base."""
        value = None
        with self._reading(folder) as records:
            if records is not None:
                try:
                    value = parse(safedir.read_file(records, name, str(self.root / folder / name), limit))
                    if value is None:
                        self._discard_own(records, name)
                except FileNotFoundError:
                    pass
                except (OSError, ValueError, Untrusted):
                    self._discard_own(records, name)
        if value is None and self.base is not None:
            return self.base._read_record(folder, name, limit, parse)  # pylint: disable=protected-access
        return value

    def _write_record(self, folder: str, name: str, text: str) -> None:
        """Written under a temporary name, then renamed into place: a reader sees the old record or the new."""
        temporary = f"{_TEMPORARY[folder]}{secrets.token_hex(6)}"
        with self._folder(folder) as records:
            fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                         dir_fd=records)
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(text)
            try:
                os.replace(temporary, name, src_dir_fd=records, dst_dir_fd=records)
            except OSError:  # a folder in the way
                self._discard(records, name)
                os.replace(temporary, name, src_dir_fd=records, dst_dir_fd=records)

    # --- maintenance ---------------------------------------------------------

    def _sweep(self, builds: int) -> list[int]:
        """Remove what killed builds left behind; the size of each thing removed."""
        removed = []
        for name in self._leftovers(builds):
            with self._claimed(builds, name) as stale:
                if stale:
                    removed.append(safedir.size_of(builds, name))
                    self._discard(builds, name)
        for folder, prefix in _TEMPORARY.items():
            with self._folder(folder) as records:
                for name in os.listdir(records):
                    if name.startswith(prefix) and safedir.age_of(records, name) > STALE_SECONDS:
                        removed.append(safedir.size_of(records, name))
                        self._discard(records, name)
        return removed

    @staticmethod
    def _leftovers(builds: int) -> list[str]:
        """The dot-entries of builds/: builds in progress, what killed ones left, logs of failed ones."""
        return [name for name in os.listdir(builds) if name.startswith(".")]

    @contextlib.contextmanager
    def _claimed(self, builds: int, name: str) -> Iterator[bool]:
        """Whether the leftover ``name`` is stale; for a staging folder, decided by its key's lock.

        The lock dies with its process (``kill -9`` included), so a free lock
        means nobody builds there; it is held until the block ends, so no
        builder can start on the key while the folder is removed.
        """
        match = _STAGING.match(name)
        if match is None:
            yield safedir.age_of(builds, name) > (LOG_SECONDS if name.endswith(".log") else STALE_SECONDS)
            return
        fd = self._try_lock(match.group(1))
        try:
            yield fd is not None
        finally:
            if fd is not None:
                _close_lock(fd)

    def _entries(self, builds: int) -> Iterator[tuple[str, str]]:
        """(name, kind) of each entry in builds/: "bridge", "pch", "module", or "broken"."""
        for name in os.listdir(builds):
            if name.startswith("."):
                continue
            kind = "broken"
            with contextlib.suppress(OSError, ValueError, Untrusted, AttributeError):
                entry = safedir.open_subdir(builds, name, name)
                try:
                    manifest = _json(safedir.read_file(entry, MANIFEST, MANIFEST, _MANIFEST_LIMIT))
                    kind = str(manifest.get("kind", "broken"))
                finally:
                    os.close(entry)
            yield name, kind

    def info(self) -> dict[str, Any]:
        """What the cache holds, as [count, bytes]: entries by kind, builds in progress, leftovers, logs; and fallbacks."""
        kinds: dict[str, list[int]] = {kind: [0, 0] for kind in ("bridge", "pch", "module", "broken")}
        staging = {"building": [0, 0], "stale": [0, 0], "logs": [0, 0]}
        with self._folder("builds") as builds:
            for name, kind in self._entries(builds):
                counts = kinds.setdefault(kind, [0, 0])
                counts[0] += 1
                counts[1] += safedir.size_of(builds, name)
            for name in self._leftovers(builds):
                with self._claimed(builds, name) as stale:
                    counts = staging["logs" if name.endswith(".log") else "stale" if stale else "building"]
                counts[0] += 1
                counts[1] += safedir.size_of(builds, name)
        with self._folder("index") as index:
            indexed = [name for name in os.listdir(index) if not name.startswith(".")]
        return {
            "root": str(self.root),
            "builds": sum(count for count, _ in kinds.values()),
            "bytes": sum(size for _, size in kinds.values()),
            "kinds": kinds,
            "index": len(indexed),
            "staging": staging,
            "fallbacks": [f for f in fallback_caches() if f.path != self.root],
        }

    def logs(self) -> list[tuple[Path, float, str]]:
        """The logs of failed builds, oldest first: where each is, when it was written, and its text (a log
        larger than the index limit, or one that is not a plain file of this user's, is named, not read)."""
        found = []
        with self._folder("builds") as builds:
            for name in self._leftovers(builds):
                if not name.endswith(".log"):
                    continue
                where = self.root / "builds" / name
                try:
                    written = os.stat(name, dir_fd=builds, follow_symlinks=False).st_mtime
                    text = safedir.read_file(builds, name, str(where), _INDEX_LIMIT).decode("utf-8", "replace")
                except FileNotFoundError:
                    continue  # removed meanwhile
                except (OSError, Untrusted) as error:
                    written, text = 0.0, f"(not shown: {error})"
                found.append((where, written, text))
        return sorted(found, key=lambda log: log[1])

    def clear(self, everything: bool = False) -> tuple[int, int]:
        """Remove the modules, the index and the logs; with ``everything``, the bridge and precompiled header too.

        Returns how many builds were removed, and how many were kept because a build holds them (one being
        made, or a bridge or header a module build is compiling against). Builds in progress are left alone.
        """
        removed = in_use = 0
        with self._folder("builds") as builds:
            self._sweep(builds)
            for name in self._leftovers(builds):
                if name.endswith(".log"):
                    self._discard(builds, name)
            for name, kind in list(self._entries(builds)):
                if not everything and kind in SHARED_KINDS:
                    continue
                with self._unless_held(name) as free:
                    if free:
                        self._discard(builds, name)
                    removed += free
                    in_use += not free
        for folder in ("index", "holders"):
            with self._folder(folder) as entries:
                for name in os.listdir(entries):
                    if not name.startswith("."):  # a dot-file is one being written
                        self._discard(entries, name)
        if everything:
            self._clear_locks()
        return removed, in_use

    def _clear_locks(self) -> None:
        """Remove the lock files nobody holds. Each is removed while held, so that a process that opened it
        meanwhile finds, once it has the lock, that it is no longer in place, and takes the new one."""
        with self._folder("locks") as locks:
            for name in os.listdir(locks):
                key = name.removesuffix(".lock")
                if not is_key(key) or name != f"{key}.lock":
                    self._discard(locks, name)  # not a lock ppy makes
                    continue
                fd = self._try_lock(key)
                if fd is None:
                    continue  # a build holds it
                try:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(name, dir_fd=locks)
                finally:
                    _close_lock(fd)

    def prune(self) -> dict[str, list[int]]:
        """Remove what nothing will use: leftovers of killed builds, broken entries, ended processes' fallback caches.

        Returns the size of each thing removed, by what it was.
        """
        with self._folder("builds") as builds:
            leftovers = self._sweep(builds)
            broken = []
            for name, _ in list(self._entries(builds)):
                size = safedir.size_of(builds, name)
                if not is_key(name):
                    self._discard(builds, name)  # not a name ppy gives an entry
                elif self.valid(name) is not None:
                    continue
                broken.append(size)
        with self._folder("holders") as holders:
            names = [name for name in os.listdir(holders) if not name.startswith(".")]
        for name in names:
            # A record of which module holds a region is kept while that module lists the region.
            key = self.read_holder(name) if is_key(name) else None
            manifest = self.valid(key) if key is not None else None
            if manifest is None or name not in manifest.get("digests", ()):
                with self._folder("holders") as holders:
                    self._discard(holders, name)
        return {"leftovers": leftovers, "broken": broken, "fallbacks": remove_ended(keep=self.root)}


def _seal(folder: int, name: str, where: str) -> dict[str, Any]:
    """Make the artifact writable by its owner alone, and return its digest and size."""
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, dir_fd=folder)
    try:
        safedir.check(os.fstat(fd), where, kind="file", writable_ok=True)
        # A umask of 002 leaves group write on what the compiler made.
        os.fchmod(fd, os.fstat(fd).st_mode & 0o755)
        info = os.fstat(fd)
        digest = sha256_fd(fd)
        _remember(info, digest)
        return {"sha256": digest, "size": info.st_size}
    finally:
        os.close(fd)


def _private_root(refused: Path, problem: str) -> Path:
    try:
        return private_root()
    except OSError as error:
        raise CacheError(f"no safe folder for the build cache: {refused}: {problem}; and no private folder can be "
                         f"made in {tempfile.gettempdir()} ({error.strerror or error})") from None


def _describe(error: Exception, root: Path) -> str:
    if isinstance(error, Untrusted):
        return error.about(str(root))
    if isinstance(error, OSError):
        return f"it cannot be created or opened ({error.strerror or error})"
    return str(error)
