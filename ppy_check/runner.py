"""Check many files: each read once, a cheap prefilter, then the rule engine, in parallel when it pays.

A failure while checking one file (a RecursionError on a deeply nested
expression, a MemoryError, a checker bug, even a worker process that dies)
costs that file alone: it becomes one error line naming the file, and every
other file is still checked and reported.
"""

from __future__ import annotations

import codecs
import contextlib
import gc
import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ppy_check import reads as recorded
from ppy_check.diagnostic import Diagnostic
from ppy_check.messages import SYNTAX
from ppy_check.prefilter import may_hold_region
from ppy_check.source import SourceError, decode, python_lines, read_bytes

if TYPE_CHECKING:
    from ppy_check.result_cache import ResultCache

# Below this many candidate files a process pool costs more than it saves.
PARALLEL_THRESHOLD = 8

# A check's objects (syntax trees, models) die by reference counting, cycle-free (a test keeps them so), yet at
# Python's default threshold (700 allocations) the cyclic collector walks every one still alive again and again:
# about 15% of a check. At this threshold it runs rarely, as mypy does for the same reason.
GC_THRESHOLD = 50_000

# What a worker gets: the name to report, the file's bytes, the codes to run.
Job = tuple[str, bytes, tuple[str, ...]]


@dataclass(frozen=True)
class Target:
    """One file to check: read from ``path``, unless its bytes are already in ``data`` (standard input)."""

    name: str  # as reported
    codes: tuple[str, ...]
    path: Path
    data: bytes | None = None


@dataclass
class FileResult:
    path: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)
    error: str | None = None
    reads: recorded.Reads | None = None  # what the check read besides the file: what keeping its result rests on


@dataclass
class RunResult:
    files: int = 0
    diagnostics: list[Diagnostic] = field(default_factory=list)
    sources: dict[str, list[str]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # said on stderr without changing the exit status


def may_hold(data: bytes) -> bool:
    # The prefilter anchors `import ppy` at a line start; a BOM sits before the first one.
    return may_hold_region(data.removeprefix(codecs.BOM_UTF8))


def display(path: Path) -> str:
    """The path as the user gave it, or relative to here when they gave it absolute and it is under here."""
    if not path.is_absolute():
        return str(path)
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def read(path: Path) -> bytes | str:
    """The file's bytes, or a one-line reason it cannot be read."""
    try:
        return read_bytes(path)
    except OSError as error:
        return f"{display(path)}: cannot read: {error.strerror or error}"


def region_candidates(files: Iterable[Path]) -> tuple[list[tuple[Path, bytes]], list[str]]:
    """The files that may hold a region, each read once, and a one-line reason for each that cannot be read."""
    candidates, problems = [], []
    for path in files:
        data = read(path)
        if isinstance(data, str):
            problems.append(data)
        elif may_hold(data):
            candidates.append((path, data))
    return candidates, problems


def check_source(text: str, path: str, codes: Sequence[str]) -> list[Diagnostic]:
    """The engine's check of one file's text. The engine is imported at the first file that passes the prefilter:
    a tree without regions (torch's own source) never needs the model builder, nor its start-up."""
    from ppy_check import engine

    return engine.check_source(text, path, codes)


def check_text_of(path: str, data: bytes, codes: Sequence[str]) -> FileResult:
    try:
        text = decode(data, path).text
    except SourceError as error:  # Python could not import it either: a file that does not parse
        found = [error.diagnostic()] if SYNTAX in codes else []
        return FileResult(path, found, python_lines(data.decode("utf-8", "replace")) if found else [])
    try:
        with recorded.recording() as reads:
            diagnostics = check_source(text, path, codes)
    except Exception as error:  # this file's failure is this file's alone
        if os.environ.get("PPY_DEBUG"):
            import traceback  # only for this rare failure, not at every start

            traceback.print_exc()
        return FileResult(path, error=f"{path}: cannot check: {_why(error)}; a ppy-check limitation worth reporting")
    return FileResult(path, diagnostics, python_lines(text) if diagnostics else [], reads=reads)


def kept_result(name: str, data: bytes, diagnostics: Sequence[Diagnostic]) -> FileResult:
    """A result the cache kept, with the lines a report quotes (read from the bytes, as a check would)."""
    lines = python_lines(decode(data, name).text) if diagnostics else []
    return FileResult(name, list(diagnostics), lines)


def _why(error: Exception) -> str:
    if isinstance(error, RecursionError):
        return "nested deeper than the checker can follow (RecursionError)"
    if isinstance(error, MemoryError):
        return "out of memory (MemoryError)"
    return f"internal error: {type(error).__name__}: {error}"


def _collect_rarely() -> None:
    gc.set_threshold(GC_THRESHOLD, *gc.get_threshold()[1:])


@contextlib.contextmanager
def collecting_rarely() -> Iterator[None]:
    """The cyclic collector at ``GC_THRESHOLD`` while checking; the caller's setting after."""
    saved = gc.get_threshold()
    _collect_rarely()
    try:
        yield
    finally:
        gc.set_threshold(*saved)


def _check_jobs(jobs: list[Job]) -> list[FileResult]:
    return [check_text_of(name, data, codes) for name, data, codes in jobs]


def _isolating(jobs: list[Job]) -> list[FileResult]:
    """Check ``jobs`` in a process of their own after a worker died: when this one dies too, halve
    them until the file that kills it is alone, and report that file."""
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    try:
        with ProcessPoolExecutor(max_workers=1, initializer=_collect_rarely) as pool:
            return pool.submit(_check_jobs, jobs).result()
    except BrokenProcessPool:
        if len(jobs) > 1:
            return _isolating(jobs[:len(jobs) // 2]) + _isolating(jobs[len(jobs) // 2:])
        name = jobs[0][0]
        return [FileResult(name, error=f"{name}: cannot check: the checking process died on this file; "
                                       "a ppy-check limitation worth reporting")]


def _in_pool(jobs: list[Job], workers: int) -> list[FileResult]:
    # Imported here: multiprocessing costs a small check's start-up more than its checking does.
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool

    size = max(1, len(jobs) // (workers * 4))
    chunks = [jobs[start:start + size] for start in range(0, len(jobs), size)]
    outcomes: list[FileResult] = []
    with ProcessPoolExecutor(max_workers=min(workers, len(jobs)), initializer=_collect_rarely) as pool:
        futures = [pool.submit(_check_jobs, chunk) for chunk in chunks]
        for chunk, future in zip(chunks, futures):
            try:
                outcomes += future.result()
            except BrokenProcessPool:
                outcomes += _isolating(chunk)
    return outcomes


def run(targets: Sequence[Target], jobs: int | None = None, keep: bool = True) -> RunResult:
    """Check ``targets``; with ``keep``, a file whose kept result still holds is not checked again, and every
    finished check's result is kept (``result_cache``)."""
    result = RunResult(files=len(targets))
    # The workers get the bytes: every file is read once.
    candidates: list[Job] = []
    for target in targets:
        data = target.data if target.data is not None else read(target.path)
        if isinstance(data, str):
            result.errors.append(data)
        elif may_hold(data):
            candidates.append((target.name, data, target.codes))
    cache = _open_cache(result) if keep and candidates else None
    try:
        kept, checked = _kept(candidates, cache)
        fresh = _check(checked, jobs)
        if cache is not None:
            for (name, data, codes), outcome in zip(checked, fresh):
                if outcome.error is None and outcome.reads is not None:
                    cache.store(name, data, codes, outcome.diagnostics, outcome.reads)
    finally:
        if cache is not None:
            cache.close()
    outcomes = kept + fresh
    for outcome in outcomes:
        if outcome.error is not None:
            result.errors.append(outcome.error)
        result.diagnostics.extend(outcome.diagnostics)
        if outcome.lines:
            result.sources[outcome.path] = outcome.lines
    result.diagnostics.sort()
    return result


def _kept(candidates: list[Job], cache: ResultCache | None) -> tuple[list[FileResult], list[Job]]:
    """The results the cache kept that still hold, and the jobs left to check."""
    if cache is None:
        return [], candidates
    kept: list[FileResult] = []
    left: list[Job] = []
    for name, data, codes in candidates:
        found = cache.lookup(name, data, codes)
        if found is None:
            left.append((name, data, codes))
        else:
            kept.append(kept_result(name, data, found))
    return kept, left


def _check(jobs: list[Job], workers: int | None) -> list[FileResult]:
    count = workers if workers is not None else (os.cpu_count() or 1)
    with collecting_rarely():
        if count > 1 and len(jobs) >= PARALLEL_THRESHOLD:
            import ppy_check.engine  # noqa: F401  # once, before the workers fork: each inherits it imported
            return _in_pool(jobs, count)
        return _check_jobs(jobs)


def _open_cache(result: RunResult) -> ResultCache | None:
    """The result cache for this run, or None (with a warning saying why) where it cannot be used."""
    from ppy_check import result_cache, safedir
    from ppy_check.cache_root import default_root

    if result_cache.disabled():
        return None
    root = default_root()
    try:
        return result_cache.ResultCache.open(root)
    except safedir.Untrusted as error:
        reason = str(error)
    except OSError as error:
        reason = f"{error.filename or root}: {error.strerror or error}"
    result.warnings.append(f"results are not kept between runs: {reason} (--no-cache, or "
                           f"{result_cache.NO_CACHE_VARIABLE}=1, checks without them and without this warning)")
    return None
