"""Which op data and torch Python source ppy reads: the shipped ones, or ones made for the installed torch.

The shipped ``opdata.json`` and ``torch_python/`` come from one torch release.
Under another, an overload whose schema changed would be bound against the
wrong signature and torch's Python functions inlined from the wrong source. So
where a torch of another release is installed, ppy makes both from it once, into
the cache (``<root>/opdata/<torch version>/``, the root as ``cache_root``
says), and reads those; the shipped files serve where torch is absent or is the
shipped data's release, at no cost beyond reading them.

Making them (``gen_opdata --cache-entry``, in a child process: the probe runs
torch's OpInfo samples, which reseed the global generator and swap torch's
builtins while they run) takes the schemas and sources from the installed torch
and probes only the overloads whose schema entry is new or differs from the
shipped one, reusing the shipped probed effects of the rest: seconds, not the
minutes a full probe takes.

The cache's trust rules hold here too (``safedir``): the root is walked from
``/`` through checked folders, every folder and file of an entry must be ours
(or root's), a regular file or folder, not a link, and writable by no one else.
An entry records the ppy it was made by (``version.full_version``) and the
sha256 of each file; one that is stale, incomplete, altered or fails a rule is
never read: it is made again, and where that is impossible (no PyYAML, the cache
refused) the shipped data serves, with one line on stderr saying why (and the
compiler's drift warning repeats it). Two processes making the same entry take a
lock; the second waits and reads what the first made.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ppy_check.cache_root import default_root

# Imported where a torch of another release is installed, not on every checker start (a few ms): safedir,
# hashlib, fcntl, secrets, subprocess.

SHIPPED_DATA = Path(__file__).with_name("opdata.json")
SHIPPED_SOURCES = Path(__file__).with_name("torch_python")
FOLDER = "opdata"
STAMP = "stamp.json"
DATA_NAME = "opdata.json"
SOURCES_NAME = "torch_python"
# Set in the child that makes an entry: whatever it reads of ppy's op data is the shipped one (it never waits
# on the lock its parent holds).
MAKING = "PPY_MAKING_OPDATA"
LOCK_SECONDS = 900.0  # how long a process waits for another's making of the same entry
MAKE_SECONDS = 900  # a making that runs longer is taken to hang
_FILE_LIMIT = 64 << 20
_STAMP_LIMIT = 1 << 20
# A torch version as a folder name: a plain name, never a path.
_VERSION = re.compile(r"[0-9A-Za-z][0-9A-Za-z_.+-]{0,63}\Z")
_TORCH_VERSION_LINE = re.compile(r"""^__version__\s*=\s*['"]([^'"]+)['"]""", re.MULTILINE)
_DATA_VERSION = re.compile(r'"torch_version"\s*:\s*"([^"]*)"')


class MakingFailed(Exception):
    """The op data for the installed torch could not be made or read; the message says why."""


@dataclass(frozen=True)
class InUse:
    """The op data and torch sources this process reads, and why those."""

    data: Path  # the opdata.json
    sources: Path  # the folder of torch's Python modules' source (``<module>.py.txt``)
    torch_version: str  # the release they come from
    installed: str | None  # the installed torch's version, None where torch is absent
    made: bool  # made for the installed torch in the cache, rather than shipped
    identity: str  # "shipped", or a digest of the made files: part of every build key
    reason: str | None = None  # why the shipped data serves under another torch
    unprobed: tuple[str, ...] = ()  # overloads of the made data whose hidden effects could not be probed

    def describe(self) -> str:
        """Which data is in use, for ``ppy explain`` and the drift warning."""
        if self.made:
            text = f"op data made for torch {self.installed} in the cache ({self.data.parent})"
            if self.unprobed:
                text += (f", {len(self.unprobed)} new or changed overloads' hidden effects unprobed (install "
                         f"expecttest and remove that folder to probe them)")
            return text
        text = f"the shipped op data of torch {self.torch_version}"
        return text + (f" (none made for torch {self.installed}: {self.reason})" if self.reason else "")


def release(version: str) -> str:
    """``2.13.0`` for ``2.13.0+cpu``: the part the op data's ``torch_version`` records."""
    return version.split("+")[0]


def installed_torch_version() -> str | None:
    """The installed torch's version, from its ``torch/version.py``, without importing torch (a checker that
    never needs torch pays a lookup on ``sys.path``, not torch's import; importlib.metadata alone costs more
    than that lookup and read); None where torch is absent."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("torch")
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    if not locations:
        return None
    try:
        text = (Path(locations[0]) / "version.py").read_text(encoding="utf-8")
    except OSError:
        text = ""
    found = _TORCH_VERSION_LINE.search(text)
    if found is not None:
        return found.group(1)
    import importlib.metadata

    try:
        return importlib.metadata.version("torch")
    except importlib.metadata.PackageNotFoundError:
        return None


def shipped_torch_version(path: Path | None = None) -> str:
    """The release the shipped op data comes from, read from the file's head (its third line)."""
    path = path or SHIPPED_DATA
    with path.open("rb") as file:
        found = _DATA_VERSION.search(file.read(4096).decode("utf-8", "replace"))
    if found is not None:
        return found.group(1)
    value: str = json.loads(path.read_text(encoding="utf-8"))["torch_version"]
    return value


@functools.lru_cache(maxsize=1)
def in_use() -> InUse:
    """The op data and sources for this process: made once per torch version where torch's release is not the
    shipped data's, else the shipped ones."""
    installed = installed_torch_version()
    shipped = shipped_torch_version()
    if installed is None or release(installed) == shipped or os.environ.get(MAKING):
        return _shipped(installed, shipped)
    if not _VERSION.match(installed):
        return _refused(installed, shipped, f"its version {installed!r} is not a plain folder name")
    from ppy_check import safedir

    try:
        return _cached_or_made(default_root(), installed)
    except (OSError, safedir.Untrusted, MakingFailed) as error:
        return _refused(installed, shipped, str(error) or type(error).__name__)


def _shipped(installed: str | None, shipped: str, reason: str | None = None) -> InUse:
    return InUse(SHIPPED_DATA, SHIPPED_SOURCES, shipped, installed, made=False, identity="shipped", reason=reason)


def _refused(installed: str, shipped: str, reason: str) -> InUse:
    _say(f"ppy: using the shipped operator data of torch {shipped} under torch {installed}: {reason}")
    return _shipped(installed, shipped, reason)


def _cached_or_made(root: Path, installed: str) -> InUse:
    from ppy_check import safedir

    folder, where = safedir.open_cache_folder(root, FOLDER)
    try:
        found = _entry(folder, where, installed)
        if found is not None:
            return found
        with _locked(folder, where, installed):
            found = _entry(folder, where, installed)  # made by another process while this one waited
            if found is None:
                _make(folder, where, installed)
                found = _entry(folder, where, installed)
        if found is None:
            raise MakingFailed(f"the data made in {where / installed} does not read back whole")
        return found
    finally:
        os.close(folder)


def _entry(folder: int, where: Path, installed: str) -> InUse | None:
    """The entry for ``installed`` if it is whole, made by this ppy and passes the trust rules; else None."""
    import hashlib

    from ppy_check import safedir
    from ppy_check.version import full_version

    path = where / installed
    try:
        entry = safedir.open_subdir(folder, installed, str(path))
    except FileNotFoundError:
        return None
    except (OSError, safedir.Untrusted):
        return None  # made again: _make removes what is there
    try:
        stamp = json.loads(safedir.read_file(entry, STAMP, str(path / STAMP), _STAMP_LIMIT))
        files = stamp["files"]
        if stamp.get("ppy") != full_version() or stamp.get("torch") != installed or DATA_NAME not in files:
            return None
        sources = safedir.open_subdir(entry, SOURCES_NAME, str(path / SOURCES_NAME))
        try:
            for name, digest in files.items():
                parent, base = (sources, name.removeprefix(SOURCES_NAME + "/")) if "/" in name else (entry, name)
                if "/" in base or not isinstance(digest, str):
                    return None
                content = safedir.read_file(parent, base, str(path / name), _FILE_LIMIT)
                if hashlib.sha256(content).hexdigest() != digest:
                    return None
        finally:
            os.close(sources)
        identity = hashlib.sha256(json.dumps(files, sort_keys=True).encode()).hexdigest()[:16]
        return InUse(path / DATA_NAME, path / SOURCES_NAME, release(installed), installed, made=True,
                     identity=identity, unprobed=tuple(stamp.get("unprobed", ())))
    except (OSError, safedir.Untrusted, ValueError, KeyError, TypeError, AttributeError):
        return None
    finally:
        os.close(entry)


@contextlib.contextmanager
def _locked(folder: int, where: Path, installed: str) -> Iterator[None]:
    """Held while this process makes ``installed``'s entry; another one making it waits here."""
    import fcntl

    from ppy_check import safedir

    name = f".{installed}.lock"
    fd = os.open(name, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK, 0o600, dir_fd=folder)
    try:
        safedir.check(os.fstat(fd), str(where / name), kind="file")
        deadline = time.monotonic() + LOCK_SECONDS
        waiting = False
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise MakingFailed(f"another process has been making it for over {LOCK_SECONDS:.0f} s") from None
                if not waiting:
                    _say(f"ppy: waiting for another process making operator data for torch {installed} ...")
                    waiting = True
                time.sleep(0.2)
        yield
    finally:
        os.close(fd)


def _make(folder: int, where: Path, installed: str) -> None:
    """Make the entry in a private staging folder and rename it into place: a reader sees all of it or none."""
    import secrets

    from ppy_check import safedir
    from ppy_check.version import full_version

    with os.scandir(folder) as found:
        leftovers = [e.name for e in found if e.name.startswith(f".{installed}-")]
    for name in leftovers:  # a killed making's (the lock is ours: nobody else is making this version)
        safedir.remove(folder, name)
    staging = f".{installed}-{secrets.token_hex(8)}"
    os.mkdir(staging, 0o700, dir_fd=folder)
    description = f"ppy: making operator data for torch {installed} (once per torch version)"
    _say(f"{description} ...")
    started = time.perf_counter()
    try:
        report = _run_maker(where / staging)
        entry = safedir.open_subdir(folder, staging, str(where / staging))
        try:
            files = _digests(entry, where / staging)
            stamp = {"ppy": full_version(), "torch": installed, "files": files,
                     "probed": report.get("probed", []), "unprobed": report.get("unprobed", []),
                     "seconds": report.get("seconds", {})}
            safedir.write_file(entry, STAMP, json.dumps(stamp, indent=1, sort_keys=True).encode())
        finally:
            os.close(entry)
        safedir.remove(folder, installed)  # a stale, incomplete or untrusted entry: never read, so replaced
        os.rename(staging, installed, src_dir_fd=folder, dst_dir_fd=folder)
    except BaseException:
        safedir.remove(folder, staging)
        # Why, the line saying which data serves instead tells (in_use).
        _say(f"{description}: failed after {time.perf_counter() - started:.1f} s")
        raise
    probed, unprobed = len(report.get("probed", [])), len(report.get("unprobed", []))
    detail = f"{probed} new or changed overloads probed" + (f", {unprobed} left unprobed" if unprobed else "")
    _say(f"{description}: done in {time.perf_counter() - started:.1f} s ({detail})")


def _run_maker(staging: Path) -> dict[str, Any]:
    """Run ``gen_opdata --cache-entry`` for the installed torch in a child process; its report."""
    import subprocess

    top = str(Path(__file__).resolve().parent.parent)  # this ppy_check, wherever the child's sys.path points
    env = {**os.environ, MAKING: "1", "PYTHONPATH": os.pathsep.join(filter(None, [top, os.environ.get("PYTHONPATH")]))}
    command = [sys.executable, "-m", "ppy_check.gen_opdata", "--cache-entry", str(staging), "--shipped",
               str(SHIPPED_DATA)]
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=MAKE_SECONDS, check=False)
    except subprocess.TimeoutExpired:
        raise MakingFailed(f"making it ran past {MAKE_SECONDS} s") from None
    if done.returncode != 0:
        lines = [line for line in done.stderr.splitlines() if line.strip()]
        raise MakingFailed(lines[-1].strip() if lines else f"gen_opdata exited with status {done.returncode}")
    try:
        report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        raise MakingFailed("gen_opdata gave no report") from None
    return report


def _digests(entry: int, where: Path) -> dict[str, str]:
    """The sha256 of the entry's files by relative name, each read through checked descriptors."""
    import hashlib

    from ppy_check import safedir

    files = {DATA_NAME: hashlib.sha256(safedir.read_file(entry, DATA_NAME, str(where / DATA_NAME),
                                                         _FILE_LIMIT)).hexdigest()}
    sources = safedir.open_subdir(entry, SOURCES_NAME, str(where / SOURCES_NAME))
    try:
        for name in sorted(os.listdir(sources)):
            content = safedir.read_file(sources, name, str(where / SOURCES_NAME / name), _FILE_LIMIT)
            files[f"{SOURCES_NAME}/{name}"] = hashlib.sha256(content).hexdigest()
    finally:
        os.close(sources)
    return files


def _say(message: str) -> None:
    """One whole line on stderr, as the compiler's build progress prints them (``PPY_QUIET`` silences it)."""
    if not os.environ.get("PPY_QUIET"):
        sys.stderr.write(message + "\n")
        sys.stderr.flush()
