"""Show that something slow is happening: a rich spinner on a terminal, one line elsewhere."""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Iterator

# Below this, a finished step prints nothing where there is no terminal.
QUIET_SECONDS = 1.0


@contextlib.contextmanager
def building(description: str) -> Iterator[None]:
    if os.environ.get("PPY_QUIET"):
        yield
        return
    started = time.perf_counter()
    if sys.stderr.isatty():
        from rich.console import Console

        console = Console(stderr=True)
        with console.status(description + " ..."):
            yield
        console.print(f"{description}: done in {time.perf_counter() - started:.1f} s", style="dim")
        return
    yield
    elapsed = time.perf_counter() - started
    if elapsed >= QUIET_SECONDS:
        print(f"{description}: done in {elapsed:.1f} s", file=sys.stderr, flush=True)
