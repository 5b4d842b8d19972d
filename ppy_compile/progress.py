"""Show that something slow is happening: a spinner with the elapsed time on a terminal, one line elsewhere."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Iterator

from ppy_compile.toolchain import BuildInterrupted


@contextlib.contextmanager
def building(description: str) -> Iterator[None]:
    """Name the step while it runs, and how long it took when it ends.

    On a terminal: a spinner with the step and its elapsed time, then a line
    with the total. Elsewhere (CI logs, pipes): the step's line is written
    when it starts, so a log shows what is running, and finished with its
    time when it ends: one line per step. ``PPY_QUIET`` silences both.
    """
    if os.environ.get("PPY_QUIET"):
        yield
        return
    started = time.perf_counter()
    if sys.stderr.isatty():
        from rich.console import Console
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        # The description holds file names: never read as markup or emoji codes.
        console = Console(stderr=True, markup=False, emoji=False, highlight=False)
        columns = (SpinnerColumn(), TextColumn("{task.description}", markup=False), TimeElapsedColumn())
        with Progress(*columns, console=console, transient=True) as progress:
            progress.add_task(description, total=None)
            yield
        console.print(f"{description}: done in {time.perf_counter() - started:.1f} s", style="dim")
        return
    print(f"{description} ...", end=" ", file=sys.stderr, flush=True)
    with _guard:
        _open.append(description)
    try:
        yield
    except BaseException as error:
        # Stopped from outside (a signal, Ctrl-C, a full disk): not a failure of the code being built.
        outcome = "stopped" if isinstance(error, (KeyboardInterrupt, BuildInterrupted)) else "failed"
        _finish(description, f"{outcome} after {time.perf_counter() - started:.1f} s")
        raise
    _finish(description, f"done in {time.perf_counter() - started:.1f} s")


# The steps whose line is written up to its "...", waiting for its end; and those that `say` broke into.
_open: list[str] = []
_broken: set[str] = set()
_guard = threading.Lock()


def _finish(description: str, outcome: str) -> None:
    with _guard:
        _open.remove(description)
        again = description in _broken
        _broken.discard(description)
        # A step whose line `say` broke into names itself again, on a line of its own.
        print(f"{description}: {outcome}" if again else outcome, file=sys.stderr, flush=True)


def say(message: str) -> None:
    """``message`` on a line of its own on stderr, even while a step's line waits for its end (``PPY_QUIET``
    silences it)."""
    if os.environ.get("PPY_QUIET"):
        return
    with _guard:
        start = "\n" if _open and not sys.stderr.isatty() and not set(_open) <= _broken else ""
        _broken.update(_open)
        print(f"{start}{message}", file=sys.stderr, flush=True)
