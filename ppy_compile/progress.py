"""Show that something slow is happening: a spinner with the elapsed time on a terminal, whole lines elsewhere."""

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
    with the total. Elsewhere (CI logs, pipes): a whole line when the step
    starts, so a log shows what is running, and another, naming the step
    again, with its time when it ends. ``PPY_QUIET`` silences both.
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


def hush() -> None:
    """Say nothing more: the program was told its builds are skipped (Ctrl-C at exit), and a build thread that
    goes on until the interpreter ends must not print after that line how its step ended."""
    _hushed.set()


def _line(text: str) -> None:
    """One whole line, in one write: in a pipe or a log, what the program itself prints (or another process
    sharing the stream) can come between two lines, never into one."""
    if _hushed.is_set():
        return
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


def say(message: str) -> None:
    """``message`` on a line of its own on stderr (``PPY_QUIET`` silences it)."""
    if not os.environ.get("PPY_QUIET"):
        _line(message)
