"""Show that something slow is happening: a spinner with the elapsed time on a terminal, one line elsewhere."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterator


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
    try:
        yield
    except BaseException:
        print(f"failed after {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
        raise
    print(f"done in {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
