"""Show that something slow is happening: a spinner with the elapsed time on a terminal, whole lines elsewhere."""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

from ppy_compile.toolchain import BuildInterrupted


@contextlib.contextmanager
def building(description: str) -> Iterator[None]:
    """Name the step while it runs, and how long it took when it ends.

    On a terminal: a spinner with the step and its elapsed time, then a line
    with the total. Elsewhere (CI logs, pipes): a whole line when the step
    starts, so a log shows what is running, and another, naming the step
    again, with its time when it ends. ``PPY_QUIET`` silences both.
    """
    if os.environ.get("PPY_QUIET"):
        yield
        return
    started = time.perf_counter()
    # The spinner redraws from a thread of rich's own, which no exiting interpreter starts (Python 3.12): a step
    # that begins once the program has ended (a background build in the wait at exit) is shown in lines.
    if sys.stderr.isatty() and threading.main_thread().is_alive() and not _hushed.is_set():
        from rich.console import Console
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        # The description holds file names: never read as markup or emoji codes.
        console = Console(stderr=True, markup=False, emoji=False, highlight=False)
        columns = (SpinnerColumn(), TextColumn("{task.description}", markup=False), TimeElapsedColumn())
        spinner = Progress(*columns, console=console, transient=True)
        with _spinning_guard:
            _spinning.add(spinner)
        try:
            with spinner:
                spinner.add_task(description, total=None)
                yield
        finally:
            with _spinning_guard:
                _spinning.discard(spinner)
        if not _hushed.is_set():
            console.print(f"{description}: done in {time.perf_counter() - started:.1f} s", style="dim")
        return
    _line(f"{description} ...")
    try:
        yield
    except BaseException as error:
        # Stopped from outside (a signal, Ctrl-C, a full disk): not a failure of the code being built.
        outcome = "stopped" if isinstance(error, (KeyboardInterrupt, BuildInterrupted)) else "failed"
        _line(f"{description}: {outcome} after {time.perf_counter() - started:.1f} s")
        raise
    _line(f"{description}: done in {time.perf_counter() - started:.1f} s")


_hushed = threading.Event()
_spinning: set[Any] = set()  # the spinners on the terminal now (rich Progress), which hush() takes down
_spinning_guard = threading.Lock()


def hush(last: str) -> None:
    """Say ``last``, then nothing more: the program says its builds are skipped (Ctrl-C at exit), and a build
    thread that goes on until the interpreter ends must not print after that line how its step ended, nor keep
    a spinner redrawing (whose stop also gives the terminal its cursor back)."""
    _hushed.set()
    with _spinning_guard:
        spinners = list(_spinning)
    for spinner in spinners:
        spinner.stop()
    if not os.environ.get("PPY_QUIET"):
        _write(last)


def _line(text: str) -> None:
    """One whole line, in one write: in a pipe or a log, what the program itself prints (or another process
    sharing the stream) can come between two lines, never into one."""
    if not _hushed.is_set():
        _write(text)


def _write(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def say(message: str) -> None:
    """``message`` on a line of its own on stderr (``PPY_QUIET`` silences it)."""
    if not os.environ.get("PPY_QUIET"):
        _line(message)
