"""Check many files: a cheap prefilter, then the rule engine, in parallel when it pays."""

from __future__ import annotations

import os
import tokenize
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from io import BytesIO
from collections.abc import Iterable
from pathlib import Path

from ppy_check.diagnostic import Diagnostic
from ppy_check.engine import check_source, may_hold_region

# Below this many candidate files a process pool costs more than it saves.
PARALLEL_THRESHOLD = 8


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


def decode(data: bytes) -> str:
    """Source text by the file's own encoding declaration (UTF-8 unless it says otherwise)."""
    encoding, _ = tokenize.detect_encoding(BytesIO(data).readline)
    return data.decode(encoding)


def check_text_of(path: str, data: bytes, codes: list[str]) -> FileResult:
    try:
        text = decode(data)
    except (UnicodeDecodeError, SyntaxError, LookupError) as error:
        reason = error.reason if isinstance(error, UnicodeDecodeError) else str(error)
        return FileResult(path, error=f"{path}: not valid UTF-8 or its declared encoding ({reason})")
    diagnostics = check_source(text, path, codes)
    return FileResult(path, diagnostics, text.splitlines() if diagnostics else [])


def _check_file(item: tuple[str, bytes], codes: list[str]) -> FileResult:
    path, data = item
    return check_text_of(path, data, codes)


def _display(path: Path) -> str:
    """The path as the user gave it, or relative to here when they gave it absolute and it is under here."""
    if not path.is_absolute():
        return str(path)
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def region_candidates(files: Iterable[Path]) -> tuple[list[tuple[Path, bytes]], list[str]]:
    """The files that may hold a region, each read once, and a one-line reason for each that cannot be read."""
    candidates, problems = [], []
    for path in files:
        try:
            data = path.read_bytes()
        except OSError as error:
            problems.append(f"{_display(path)}: cannot read: {error.strerror or error}")
            continue
        if may_hold_region(data):
            candidates.append((path, data))
    return candidates, problems


def run(files: list[Path], codes: list[str], jobs: int | None = None) -> RunResult:
    result = RunResult(files=len(files))
    found, result.errors = region_candidates(files)
    # The workers get the bytes: every file is read once.
    candidates = [(_display(path), data) for path, data in found]
    workers = jobs if jobs is not None else (os.cpu_count() or 1)
    if workers > 1 and len(candidates) >= PARALLEL_THRESHOLD:
        with ProcessPoolExecutor(max_workers=min(workers, len(candidates))) as pool:
            chunk = max(1, len(candidates) // (workers * 4))
            outcomes = list(pool.map(_check_file, candidates, [codes] * len(candidates), chunksize=chunk))
    else:
        outcomes = [_check_file(path, codes) for path in candidates]
    for outcome in outcomes:
        if outcome.error is not None:
            result.errors.append(outcome.error)
        result.diagnostics.extend(outcome.diagnostics)
        if outcome.lines:
            result.sources[outcome.path] = outcome.lines
    result.diagnostics.sort()
    return result
