"""The verifier: the session's state from collection, through the tests' calls, to the summary table.

Registered by ``ppy.pytest_plugin`` only under ``--ppy-verify``. Region items
are collected with the tests (so pytest's count, ``-k`` and ``--co`` see
them) and run after them. Every call the tests make to a selected region is
compared on clones of its arguments before the real call runs; the region's
item then judges those calls together with its samples.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Generator
from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path
from typing import Any

import pytest

from ppy.decorators import Call, Region
from ppy.pytest_settings import UNOBSERVED, Settings
from ppy.verify_collect import RegionFile, extra_roots, ppy_exclusion, region_file
from ppy.verify_item import RegionItem
from ppy_check.site import RegionSite

SiteKey = tuple[str, str, int]


@functools.cache  # every call of every region asks
def site_key(site: RegionSite) -> SiteKey:
    """A site as both sides see it: the static one (from the path pytest walked) and the live one (from the code)."""
    return os.path.realpath(site.path), site.qualname, site.line


# Why a call of a region compared no value: each is counted, so that an item whose calls compared nothing fails
# saying why instead of passing (or reading as never called).
RAISED = "raised on both sides"
DECLINED = "went to the Python body, the compiled code not taking their arguments (one not exactly the type its " \
           "annotation names, or an int beyond the 64 bits torch takes)"
TRACED = "ran under a tracer (fake or wrapped tensors: opcheck, export, vmap, a dispatch mode), which has no values"
UNBOUND = "did not bind to its parameters (Python's TypeError, raised before either side runs)"
NOT_COMPILED = "ran the Python body because the region was not compiled yet (its build was not done)"


@dataclass
class Record:
    """What the session learned about one region on one device."""

    calls: int = 0  # the calls whose values were compared
    max_error: float = 0.0
    tolerance: tuple[float, float] | None = None  # of the outputs and parameters, as the table shows it
    failures: list[str] = field(default_factory=list)
    # Calls that compared no value, by why (RAISED, DECLINED, ...): they check nothing, so they are not `calls`.
    unchecked: dict[str, int] = field(default_factory=dict)
    # What one call that raised on both sides raised, to show in the item's failure.
    raised: str | None = None
    unobserved: int = 0  # calls made by tests marked UNOBSERVED, left unjudged

    def uncompared(self, why: str) -> None:
        self.unchecked[why] = self.unchecked.get(why, 0) + 1

    def nothing_compared(self) -> str:
        """Why the calls of an item that compared no value checked nothing: every reason, with its count."""
        parts = []
        for why, count in self.unchecked.items():
            said = f"{count} {'call' if count == 1 else 'calls'} {why}"
            if why == RAISED and self.raised is not None:
                said += f" ({self.raised})"
            parts.append(said)
        return "; ".join(parts)


class Verifier:
    """The plugin object of a ``--ppy-verify`` session, and the records its region items judge."""

    def __init__(self, config: pytest.Config, settings: Settings):
        from ppy import runtime

        # The tests' calls must reach compiled code to be compared: a cache miss is built before the call returns,
        # whatever PPY_BUILD says (in the background, the Python body would answer them unchecked).
        runtime.set_build_mode("wait")
        self.config = config
        self.settings = settings
        self.devices, self.absent = _present(settings.devices)
        self.excluded = ppy_exclusion(config.rootpath)
        self.records: dict[tuple[SiteKey, str], Record] = {}
        self.watched: dict[SiteKey, set[str]] = {}  # the selected items' sites and devices
        self.current: str | None = None  # the test whose calls are being observed
        self.observing = True  # False while a test marked UNOBSERVED runs
        self.rows: list[dict[str, Any]] = []
        runtime.set_observer(self.observe)

    def pytest_unconfigure(self, config: pytest.Config) -> None:
        from ppy import runtime

        runtime.set_observer(None)
        runtime.set_build_mode(None)

    def pytest_report_header(self) -> list[str]:
        return [self.absent] if self.absent else []

    # --- collection ----------------------------------------------------------

    def pytest_collect_file(self, file_path: Path, parent: pytest.Collector) -> RegionFile | None:
        return region_file(parent, file_path)

    @pytest.hookimpl(wrapper=True)
    def pytest_make_collect_report(self, collector: pytest.Collector) -> Generator[None, pytest.CollectReport, pytest.CollectReport]:
        """The session collects the ``ppy_paths`` beside its own arguments, so their items are counted too."""
        report = yield
        if isinstance(collector, pytest.Session) and report.passed:
            report.result.extend(extra_roots(collector, self.settings))
        return report

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        """Region items run last (after any reordering plugin): they judge the calls the tests make."""
        items.sort(key=lambda item: isinstance(item, RegionItem))

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        for item in session.items:
            if isinstance(item, RegionItem):
                self.watched.setdefault(site_key(item.site), set()).add(item.device)

    # --- running -------------------------------------------------------------

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, object, object]:
        self.current = item.nodeid
        self.observing = item.get_closest_marker(UNOBSERVED) is None
        try:
            return (yield)
        finally:
            self.current = None
            self.observing = True

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item) -> Generator[None, pytest.TestReport, pytest.TestReport]:
        """A region's skip points at the region, as a skip mark's does, not at the line that raised it."""
        report = yield
        if isinstance(item, RegionItem) and report.skipped and isinstance(report.longrepr, tuple):
            report.longrepr = (str(item.path), item.site.line, report.longrepr[2])
        return report

    def record(self, site: RegionSite, device: str) -> Record:
        return self.records.setdefault((site_key(site), device), Record())

    def observe(self, region: Region[Any, Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """A call a test made: compared now, on clones, before the real call runs."""
        import inspect

        key = site_key(region.site)
        devices = self.watched.get(key)
        if not devices:
            return  # no selected item judges this region
        device = _device_of(args, kwargs)
        if device not in devices:
            return
        record = self.record(region.site, device)
        if not self.observing:
            record.unobserved += 1  # the test holds its calls to expectations of its own (UNOBSERVED)
            return
        if _traced(args, kwargs):
            record.uncompared(TRACED)
            return
        try:
            inspect.signature(region.python).bind(*args, **kwargs)
        except TypeError:
            record.uncompared(UNBOUND)  # the real call raises Python's own error; there is nothing to compare
            return
        if region.compiled is None:
            record.uncompared(NOT_COMPILED)
            return
        self.check(record, region, Call(*args, **kwargs), None, device, f"a call made by {self.current or 'the session'}")

    def check(self, record: Record, region: Region[Any, Any], call: Call, move_to: str | None, device: str, source: str,
              must_run: bool = False) -> None:
        """Compare one call (moved to ``move_to`` first, unless None) and note what it showed.

        With ``must_run`` (a registered sample), a call whose Python body raises is a failure: both
        sides raising alike would otherwise pass with nothing compared.
        """
        from ppy.verify import compare_call, describe

        try:
            outcome = compare_call(region, call, device=move_to, scale=self.settings.scale)
        except Exception as error:  # a broken comparison is a finding, not a crash of the user's test
            record.calls += 1
            record.failures.append(f"region `{region.site.qualname}` on {device}, {source}: comparing raised {error!r}")
            return
        if outcome.declined:
            # A call the Python body answers (the compiled code does not take its arguments) checks nothing.
            record.failures.extend(describe(region, device, mismatch, source) for mismatch in outcome.mismatches)
            record.uncompared(DECLINED)
            if must_run:
                record.failures.append(f"region `{region.site.qualname}` on {device}, {source}: the compiled code "
                                       "does not take its arguments (one is not exactly the type its annotation "
                                       "names, or an int is beyond the 64 bits torch takes), so the Python body "
                                       "answers it and nothing was compared")
            return
        if outcome.raised is not None:
            # Both sides raised: their exceptions were compared, but no value was.
            record.failures.extend(describe(region, device, mismatch, source) for mismatch in outcome.mismatches)
            record.uncompared(RAISED)
            record.raised = record.raised or f"{source}: {type(outcome.raised).__name__}: {_first_line(outcome.raised)}"
            if must_run and not outcome.mismatches:
                record.failures.append(f"region `{region.site.qualname}` on {device}, {source}: its Python body "
                                       f"raises {type(outcome.raised).__name__}: {outcome.raised} (a sample must "
                                       "run; nothing was compared)")
            return
        record.calls += 1
        if not math.isnan(outcome.max_abs):
            record.max_error = max(record.max_error, outcome.max_abs)
        record.tolerance = outcome.tolerance or record.tolerance
        record.failures.extend(describe(region, device, mismatch, source) for mismatch in outcome.mismatches)

    def properties(self, item: RegionItem, record: Record) -> list[tuple[str, object]]:
        """The item's line of the table, as ``user_properties`` (which xdist carries and junitxml records)."""
        if record.calls == 0:
            tolerance = "-"
        else:
            tolerance = "exact" if record.tolerance is None else f"{record.tolerance[0]:g}, {record.tolerance[1]:g}"
        return [("ppy_region", item.region_name), ("ppy_device", item.device), ("ppy_calls", record.calls),
                ("ppy_max_error", f"{record.max_error:.2e}" if record.calls else "-"), ("ppy_tolerance", tolerance),
                ("ppy_status", item.status)]

    # --- reporting -----------------------------------------------------------

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        properties = dict(report.user_properties)
        if report.when == "call" and "ppy_status" in properties:
            self.rows.append(properties)

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if not self.rows:
            return
        from rich.console import Console
        from rich.table import Table
        from rich.text import Text

        table = Table("region", "device", "calls checked", "max error", "tolerance (rtol, atol)", "status",
                      title="ppy verify")
        table.columns[0].overflow = "fold"
        for row in sorted(self.rows, key=lambda r: (r["ppy_region"], r["ppy_device"])):
            # Text, not markup: a path may hold `[...]` or `:name:`.
            table.add_row(*(Text(str(row[key])) for key in ("ppy_region", "ppy_device", "ppy_calls", "ppy_max_error",
                                                            "ppy_tolerance", "ppy_status")))
        buffer = StringIO()
        width = max(140, self.config.get_terminal_writer().fullwidth)
        if self.absent:
            table.caption = Text(self.absent)
        Console(file=buffer, width=width, force_terminal=False).print(table)
        terminalreporter.write_sep("=", "ppy verify")
        terminalreporter.write(buffer.getvalue())


def _present(devices: tuple[str, ...]) -> tuple[tuple[str, ...], str]:
    """The devices to make items for, and the line saying which were left out: on a machine without CUDA a cuda
    item per region would only be skipped (half the table reading 'skipped'), so there are none, said once; unless
    cuda is all that was asked for, when each item's skip says why."""
    if "cuda" not in devices or len(devices) == 1:
        return devices, ""
    import torch

    if torch.cuda.is_available():
        return devices, ""
    left = tuple(device for device in devices if device != "cuda")
    return left, f"ppy verify: CUDA is not available on this machine: regions are verified on {', '.join(left)} only"


def _first_line(error: BaseException) -> str:
    return str(error).strip().split("\n", 1)[0]


def _traced(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether the call runs under a tracer: a dispatch mode is on, or a tensor is a subclass or functorch's."""
    import torch

    if torch._C._len_torch_dispatch_stack() > 0:  # pylint: disable=protected-access
        return True
    wrapped = torch._C._functorch.is_functorch_wrapped_tensor  # pylint: disable=protected-access
    return any(isinstance(value, torch.Tensor)
               and (type(value) not in (torch.Tensor, torch.nn.Parameter) or wrapped(value))
               for value in list(args) + list(kwargs.values()))


def _device_of(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    import torch

    for value in list(args) + list(kwargs.values()):
        if isinstance(value, torch.Tensor):
            return value.device.type
    return "cpu"
