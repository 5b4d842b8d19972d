"""The on-disk build cache: where it lives, who may write it, and how entries appear atomically.

Layout under the root (``PPY_CACHE_DIR``, else ``$XDG_CACHE_HOME/ppy``, else
``~/.cache/ppy``)::

    builds/<key>/        one built shared object, its source and a manifest
    index/<key>.json     a region module's source text -> its build, so a
                         warm start needs no lowering and no torchgen
    locks/<key>.lock     held while one process builds <key>

An entry is built in a private temporary folder and renamed into place, so a
reader sees a whole entry or none; the manifest records the shared object's
sha256, so a truncated or corrupted entry is detected and rebuilt. Loading a
shared object runs its code, so a root that other users can write is refused.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import stat
import tempfile
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

MANIFEST = "manifest.json"


class CacheWarning(UserWarning):
    """The cache could not be used as configured; ppy fell back to a private folder."""


def default_root() -> Path:
    configured = os.environ.get("PPY_CACHE_DIR")
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ppy"


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _unsafe_reason(path: Path) -> str | None:
    """Why loading code from this folder could run someone else's code, or None if it could not."""
    info = path.stat()
    if hasattr(os, "getuid") and info.st_uid != os.getuid():
        return f"it is owned by another user (uid {info.st_uid})"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return "other users can write to it"
    return None


_private_root: Path | None = None


def _private() -> Path:
    global _private_root
    if _private_root is None:
        _private_root = Path(tempfile.mkdtemp(prefix="ppy-cache-"))
    return _private_root


@dataclass
class Cache:
    root: Path

    @classmethod
    def open(cls, root: Path | None = None) -> Cache:
        """The cache at ``root`` (default: the configured one), or a private one with a warning."""
        root = root or default_root()
        problem = None
        try:
            root.mkdir(parents=True, exist_ok=True, mode=0o700)
            problem = _unsafe_reason(root)
            if problem is None and not os.access(root, os.W_OK | os.X_OK):
                problem = "it is not writable"
        except OSError as error:
            problem = f"it cannot be created ({error.strerror or error})"
        if problem is not None:
            fallback = _private()
            warnings.warn(f"ppy: not using the cache folder {root}: {problem}; using {fallback} for this process",
                          CacheWarning, stacklevel=3)
            root = fallback
        for sub in ("builds", "index", "locks"):
            (root / sub).mkdir(exist_ok=True, mode=0o700)
        return cls(root)

    # --- builds ------------------------------------------------------------

    def build_dir(self, key: str) -> Path:
        return self.root / "builds" / key

    def valid(self, key: str) -> dict[str, Any] | None:
        """The manifest of a whole, unaltered entry; None (and the entry removed) otherwise."""
        folder = self.build_dir(key)
        try:
            manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
            artifact = folder / manifest["artifact"]
            if manifest.get("sha256") is None:
                # Too big to hash on every use (a precompiled header, which GCC validates itself):
                # the size still catches a truncated copy.
                if artifact.stat().st_size == manifest["size"]:
                    return manifest
            elif sha256_file(artifact) == manifest["sha256"]:
                return manifest
        except FileNotFoundError:
            if not folder.exists():
                return None
        except (OSError, ValueError, KeyError, TypeError):
            pass
        shutil.rmtree(folder, ignore_errors=True)  # truncated or corrupted: build it again
        return None

    @contextlib.contextmanager
    def locked(self, key: str) -> Iterator[None]:
        """Held while building ``key``: concurrent builders of one key wait and reuse the result."""
        with open(self.root / "locks" / f"{key}.lock", "a+") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    @contextlib.contextmanager
    def staging(self, key: str) -> Iterator[Path]:
        """A private folder for a build of ``key``; ``publish`` moves it into place."""
        folder = Path(tempfile.mkdtemp(prefix=f".{key[:16]}-", dir=self.root / "builds"))
        try:
            yield folder
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def publish(self, key: str, folder: Path, artifact: str, extra: dict[str, Any], hashed: bool = True) -> dict[str, Any]:
        path = folder / artifact
        manifest = {"artifact": artifact, "sha256": sha256_file(path) if hashed else None, "size": path.stat().st_size, **extra}
        (folder / MANIFEST).write_text(json.dumps(manifest, indent=2), encoding="utf-8")
        target = self.build_dir(key)
        try:
            os.rename(folder, target)
        except OSError:
            if self.valid(key) is None:  # the entry in the way was broken: replace it
                shutil.rmtree(target, ignore_errors=True)
                os.rename(folder, target)
        return manifest

    # --- index -------------------------------------------------------------

    def read_index(self, key: str) -> dict[str, Any] | None:
        try:
            return json.loads((self.root / "index" / f"{key}.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None

    def write_index(self, key: str, data: dict[str, Any]) -> None:
        target = self.root / "index" / f"{key}.json"
        handle, temporary = tempfile.mkstemp(prefix=".index-", dir=target.parent)
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            json.dump(data, out, indent=2)
        os.replace(temporary, target)

    # --- maintenance ---------------------------------------------------------

    def info(self) -> dict[str, Any]:
        builds = [p for p in (self.root / "builds").iterdir() if p.is_dir() and not p.name.startswith(".")]
        size = sum(f.stat().st_size for b in builds for f in b.rglob("*") if f.is_file())
        return {"root": str(self.root), "builds": len(builds), "bytes": size,
                "index": len(list((self.root / "index").glob("*.json")))}

    def clear(self) -> int:
        count = 0
        for sub in ("builds", "index", "locks"):
            for entry in (self.root / sub).iterdir():
                count += sub == "builds" and entry.is_dir() and not entry.name.startswith(".")
                if entry.is_dir():
                    shutil.rmtree(entry, ignore_errors=True)
                else:
                    entry.unlink(missing_ok=True)
        return count
