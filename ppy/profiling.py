"""Per-region call profile (``ppy.profile()`` / ``PPY_PROFILE=1``): calls, compiled vs Python, time per call.

While a profile is active the runtime routes regions through ``Region.__call__`` (see runtime._route), which
times each call here; while none is, the compiled entry stays the class's ``__call__`` and nothing is timed."""
from __future__ import annotations

import atexit
import os
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType


@dataclass
class Row:
    region: str
    calls: int = 0
    compiled: int = 0
    python: int = 0
    total_s: float = 0.0

    @property
    def mean_s(self) -> float:
        return self.total_s / self.calls if self.calls else 0.0


class Profile:
    def __init__(self, print_on_exit: bool = True) -> None:
        self._rows: dict[str, Row] = {}
        self._lock = threading.Lock()
        self.print_on_exit = print_on_exit

    def record(self, region: str, compiled: bool, seconds: float) -> None:
        with self._lock:
            row = self._rows.setdefault(region, Row(region))
            row.calls += 1
            row.compiled += compiled
            row.python += not compiled
            row.total_s += seconds

    def rows(self) -> list[Row]:
        with self._lock:
            return sorted((Row(**vars(r)) for r in self._rows.values()), key=lambda r: -r.total_s)

    def table(self) -> str:
        head = f"{'region':<40} {'calls':>7} {'compiled':>9} {'python':>7} {'total ms':>10} {'mean us':>10}"
        lines = [head] + [f"{r.region:<40} {r.calls:>7} {r.compiled:>9} {r.python:>7} {r.total_s * 1e3:>10.3f} "
                          f"{r.mean_s * 1e6:>10.1f}" for r in self.rows()]
        return "\n".join(lines)

    def print(self) -> None:
        try:
            from rich.console import Console
            from rich.table import Table
        except ImportError:
            print("ppy profile\n" + self.table(), file=sys.stderr)
            return
        table = Table(title="ppy profile")
        for name in ("region", "calls", "compiled", "python", "total ms", "mean us"):
            table.add_column(name, justify="left" if name == "region" else "right")
        for r in self.rows():
            table.add_row(r.region, str(r.calls), str(r.compiled), str(r.python), f"{r.total_s * 1e3:.3f}",
                          f"{r.mean_s * 1e6:.1f}")
        Console(file=sys.stderr, width=120).print(table)

    def __enter__(self) -> Profile:
        _activate(self)
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None,
                 traceback: TracebackType | None) -> None:
        _deactivate(self)
        if self.print_on_exit:
            self.print()


active: Profile | None = None
# Set by ppy.runtime: re-routes the prepared regions when profiling starts or stops (no import cycle).
def _no_reroute() -> None:
    pass


reroute: Callable[[], None] = _no_reroute


def _activate(profile: Profile) -> None:
    global active  # pylint: disable=global-statement
    active = profile
    reroute()


def _deactivate(profile: Profile) -> None:
    global active  # pylint: disable=global-statement
    if active is profile:
        active = None
        reroute()


def profile(print_on_exit: bool = True) -> Profile:
    """A context manager: regions called inside it are counted and timed; the table prints on leaving it."""
    return Profile(print_on_exit)


def _from_environment() -> None:
    if os.environ.get("PPY_PROFILE", "") in ("", "0"):
        return
    whole = Profile()
    _activate(whole)
    atexit.register(whole.print)




_from_environment()
