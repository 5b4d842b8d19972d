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

from ppy_check.diagnostic import Diagnostic
from ppy_check.messages import SYNTAX
from ppy_check.prefilter import may_hold_region
from ppy_check.source import SourceError, decode, python_lines, read_bytes

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


@dataclass
class RunResult:
    files: int = 0
    diagnostics: list[Diagnostic] = field(default_factory=list)
    sources: dict[str, list[str]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


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
        diagnostics = check_source(text, path, codes)
    except Exception as error:  # this file's failure is this file's alone
        if os.environ.get("PPY_DEBUG"):
            import traceback  # only for this rare failure, not at every start

            traceback.print_exc()
        return FileResult(path, error=f"{path}: cannot check: {_why(error)}; a ppy-check limitation worth reporting")
    return FileResult(path, diagnostics, python_lines(text) if diagnostics else [])


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


def run(targets: Sequence[Target], jobs: int | None = None) -> RunResult:
    result = RunResult(files=len(targets))
    # The workers get the bytes: every file is read once.
    candidates: list[Job] = []
    for target in targets:
        data = target.data if target.data is not None else read(target.path)
        if isinstance(data, str):
            result.errors.append(data)
        elif may_hold(data):
            candidates.append((target.name, data, target.codes))
    workers = jobs if jobs is not None else (os.cpu_count() or 1)
    with collecting_rarely():
        if workers > 1 and len(candidates) >= PARALLEL_THRESHOLD:
            import ppy_check.engine  # noqa: F401  # once, before the workers fork: each inherits it imported
            outcomes = _in_pool(candidates, workers)
        else:
            outcomes = _check_jobs(candidates)
    for outcome in outcomes:
        if outcome.error is not None:
            result.errors.append(outcome.error)
        result.diagnostics.extend(outcome.diagnostics)
        if outcome.lines:
            result.sources[outcome.path] = outcome.lines
    result.diagnostics.sort()
    return result
