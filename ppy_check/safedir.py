"""Folders and files no other user can have written, reached through open descriptors.

Loading a shared object runs its code, and a compiler reading a precompiled
header takes code from it, so what the cache hands to either must be something
only the current user (or root) can have put there. A path checked now may
name something else a moment later; an open descriptor cannot. So a folder is
opened relative to the descriptor of the folder above it (``openat`` with
``O_NOFOLLOW``), checked through its own descriptor (``fstat``), and the next
step starts from it: what was checked is what is used.

The rules, from ``/`` down to the cache root:

- every folder is owned by the current user or root;
- none is writable by group or others, except that a folder above the cache
  root may be world-writable if it is sticky (like ``/tmp``): there only an
  entry's owner can rename or remove it, and that entry is checked in turn;
- a symbolic link is followed only if it is owned by the current user or
  root (anyone else could retarget it at any time), and what it points to is
  checked by the same rules.

Below the cache root nothing is followed: each folder and file is opened with
``O_NOFOLLOW`` and must be owned by the current user or root and not writable
by group or others. Once a path passes, no other user can change what it names,
so the compiler and the linker, which take paths, see what was checked.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import time
from pathlib import Path

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: opening a FIFO planted under a file's name must not hang.
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK
_MAX_LINKS = 40  # as the kernel's own limit on symbolic links in one lookup


class Untrusted(Exception):
    """A folder or file another user could have written; ``reason`` names it as ``{p}``."""

    def __init__(self, path: str, reason: str):
        super().__init__(reason.format(p=path))
        self.path = path
        self.reason = reason

    def about(self, subject: str) -> str:
        """The reason, calling the object "it" when it is ``subject`` itself."""
        return self.reason.format(p="it" if os.path.abspath(subject) == self.path else self.path)


def _trusted_owner(uid: int) -> bool:
    return uid in (os.geteuid(), 0)


def check(info: os.stat_result, where: str, kind: str = "folder", sticky_ok: bool = False,
          writable_ok: bool = False) -> None:
    """Raise ``Untrusted`` unless ``info`` is a ``kind`` ("folder" or "file") only we or root can change.

    ``writable_ok`` skips the mode test, for a file about to have its mode set.
    """
    if stat.S_ISLNK(info.st_mode):
        raise Untrusted(where, "{p} is a symbolic link")
    wanted = stat.S_ISDIR if kind == "folder" else stat.S_ISREG
    if not wanted(info.st_mode):
        raise Untrusted(where, f"{{p}} is not a {'folder' if kind == 'folder' else 'regular file'}")
    if not _trusted_owner(info.st_uid):
        raise Untrusted(where, f"{{p}} is owned by another user (uid {info.st_uid})")
    if writable_ok:
        return
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not (sticky_ok and info.st_mode & stat.S_ISVTX):
        raise Untrusted(where, "other users can write to {p}")


def _join(where: str, name: str) -> str:
    return where.rstrip("/") + "/" + name


def open_dir(path: str | Path, create: bool = False) -> int:
    """A descriptor of the folder ``path``, every folder and link on the way checked by the rules above.

    With ``create``, missing folders are made (mode 0700). Raises ``Untrusted``,
    or ``OSError`` when a folder is missing or cannot be made.
    """
    pending = os.path.abspath(path).split("/")[1:]
    chain = [os.open("/", _DIR_FLAGS)]
    places = ["/"]
    links = 0
    try:
        check(os.fstat(chain[0]), "/", sticky_ok=True)
        while pending:
            name = pending.pop(0)
            if name in ("", "."):
                continue
            if name == "..":
                if len(chain) > 1:
                    os.close(chain.pop())
                    places.pop()
                continue
            where = _join(places[-1], name)
            try:
                info = os.stat(name, dir_fd=chain[-1], follow_symlinks=False)
            except FileNotFoundError:
                if not create:
                    raise
                try:
                    os.mkdir(name, 0o700, dir_fd=chain[-1])
                except FileExistsError:
                    pass  # made by someone else meanwhile: checked below like anything found
                info = os.stat(name, dir_fd=chain[-1], follow_symlinks=False)
            if stat.S_ISLNK(info.st_mode):
                if not _trusted_owner(info.st_uid):
                    raise Untrusted(where, f"{{p}} is a symbolic link owned by another user (uid {info.st_uid}), "
                                           "who can point it anywhere at any time")
                links += 1
                if links > _MAX_LINKS:
                    raise Untrusted(where, "{p} goes through too many symbolic links")
                target = os.readlink(name, dir_fd=chain[-1])
                if target.startswith("/"):
                    while len(chain) > 1:
                        os.close(chain.pop())
                        places.pop()
                pending[:0] = target.split("/")
                continue
            chain.append(_open_checked_dir(chain[-1], name, where, sticky_ok=True))
            places.append(where)
        # The end of the walk is the folder itself: no sticky exception for it.
        check(os.fstat(chain[-1]), places[-1])
        found = chain.pop()
        return found
    finally:
        for fd in chain:
            os.close(fd)


def _open_checked_dir(parent: int, name: str, where: str, sticky_ok: bool = False) -> int:
    try:
        fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
    except OSError as error:
        if error.errno in (errno.ELOOP, errno.ENOTDIR):
            info = os.stat(name, dir_fd=parent, follow_symlinks=False)
            check(info, where)  # raises: a link or not a folder
            raise Untrusted(where, "{p} changed while it was being checked") from None
        raise
    try:
        check(os.fstat(fd), where, sticky_ok=sticky_ok)
    except BaseException:
        os.close(fd)
        raise
    return fd


def open_cache_folder(root: str | Path, name: str) -> tuple[int, Path]:
    """A descriptor of the folder ``name`` of the cache at ``root`` (both made where missing, every step checked),
    and its path for messages."""
    root = Path(os.path.abspath(root))
    root_fd = open_dir(root, create=True)
    try:
        return open_subdir(root_fd, name, str(root / name), create=True), root / name
    finally:
        os.close(root_fd)


def open_subdir(parent: int, name: str, where: str, create: bool = False) -> int:
    """The checked folder ``name`` inside the folder open as ``parent`` (``where`` names it in errors)."""
    if create:
        try:
            os.mkdir(name, 0o700, dir_fd=parent)
        except FileExistsError:
            pass
    return _open_checked_dir(parent, name, where)


def open_file(parent: int, name: str, where: str) -> int:
    """A read-only descriptor of the checked regular file ``name`` inside the folder open as ``parent``."""
    try:
        fd = os.open(name, _FILE_FLAGS, dir_fd=parent)
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise Untrusted(where, "{p} is a symbolic link") from None
        raise
    try:
        check(os.fstat(fd), where, kind="file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_file(parent: int, name: str, where: str, limit: int) -> bytes:
    """The contents of the checked regular file ``name``, refused past ``limit`` bytes."""
    fd = open_file(parent, name, where)
    try:
        size = os.fstat(fd).st_size
        if size > limit:
            raise Untrusted(where, f"{{p}} is larger than {limit} bytes")
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def write_file(folder: int, name: str, content: bytes, durable: bool = True) -> None:
    """``name`` in the folder open as ``folder``, whole or not at all (a temporary file renamed into place), mode
    0600. ``durable`` waits for the disk first: without it a crash may leave the file empty, for a reader that
    can tell (a cache entry that fails to parse is a miss)."""
    import secrets

    temporary = f".{name}-{secrets.token_hex(4)}"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600, dir_fd=folder)
    try:
        try:
            view = memoryview(content)
            while view:
                view = view[os.write(fd, view):]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.rename(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        _unlink(temporary, folder)
        raise


def remove(parent: int, name: str) -> None:
    """Remove ``name`` from the folder open as ``parent``, whatever it is, never following a link.

    Something another process removed first is not an error.
    """
    try:
        info = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(info.st_mode):
        # fwalk opens each folder relative to its parent's descriptor and never enters a link.
        for _, folders, files, fd in os.fwalk(name, topdown=False, dir_fd=parent):
            for entry in files:
                _unlink(entry, fd)
            for entry in folders:
                try:
                    os.rmdir(entry, dir_fd=fd)
                except NotADirectoryError:  # a link to a folder is listed among the folders
                    _unlink(entry, fd)
                except FileNotFoundError:
                    pass
        with contextlib.suppress(FileNotFoundError):
            os.rmdir(name, dir_fd=parent)
    else:
        _unlink(name, parent)


def _unlink(name: str, parent: int) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(name, dir_fd=parent)


def size_of(parent: int, name: str) -> int:
    """The bytes ``name`` takes (a folder: all its files), links not followed; 0 when it is gone."""
    try:
        info = os.stat(name, dir_fd=parent, follow_symlinks=False)
        if not stat.S_ISDIR(info.st_mode):
            return info.st_size
        fd = os.open(name, _DIR_FLAGS, dir_fd=parent)
    except OSError:
        return 0
    try:
        total = 0
        for _, _, files, folder in os.fwalk(".", dir_fd=fd):
            for file in files:
                with contextlib.suppress(OSError):
                    total += os.stat(file, dir_fd=folder, follow_symlinks=False).st_size
        return total
    finally:
        os.close(fd)


def age_of(parent: int, name: str) -> float:
    """Seconds since ``name`` last changed; 0 when it is gone."""
    try:
        return time.time() - os.stat(name, dir_fd=parent, follow_symlinks=False).st_mtime
    except OSError:
        return 0.0
