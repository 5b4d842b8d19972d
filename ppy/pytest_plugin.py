"""`pytest --ppy-verify`: every region in the project checked against its own Python body.

Registered through the ``pytest11`` entry point. Without ``--ppy-verify`` it
adds its options and nothing else: torch is imported only when it is on.

Each region found (statically, by the ppy-check engine) under ``ppy_paths``
becomes one test item per device, ``path/to/file.py::region[cpu]``. A region
with registered samples (``@region.samples``) is checked on them; one without
is checked on the calls the rest of the session makes to it, each of which
also runs the Python body on clones of its inputs. A region that nothing
exercised is reported as unverified, and fails under ``--ppy-verify-strict``.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

DEVICES = ("cpu", "cuda")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ppy", "ppy region verification")
    group.addoption("--ppy-verify", action="store_true", default=False,
                    help="check every compiled region against its Python body")
    group.addoption("--ppy-verify-strict", action="store_true", default=False,
                    help="fail regions that have no samples and were never called")
    group.addoption("--ppy-devices", default=None, metavar="cpu,cuda",
                    help="devices to verify on (default: the ppy_devices ini key, else cpu,cuda)")
    group.addoption("--ppy-tolerance-scale", type=float, default=None, metavar="FACTOR",
                    help="multiply the dtype-aware tolerances (default: the ppy_tolerance_scale ini key, else 1)")
    parser.addini("ppy_paths", "where to look for regions (default: the rootdir)", type="paths", default=[])
    parser.addini("ppy_devices", "devices to verify regions on", type="args", default=list(DEVICES))
    parser.addini("ppy_tolerance_scale", "factor on the dtype-aware tolerances", default="1.0")


@dataclass
class RegionRecord:
    """What the session learned about one region on one device."""

    calls: int = 0
    max_error: float = 0.0
    tolerance: tuple[float, float] | None = None
    failures: list[str] = field(default_factory=list)
    status: str = "pending"


class Verifier:
    """The session's state: which regions exist, and what each call showed."""

    def __init__(self, config: pytest.Config):
        self.config = config
        devices = config.getoption("--ppy-devices")
        self.devices = [d.strip() for d in devices.split(",")] if devices else list(config.getini("ppy_devices"))
        unknown = [d for d in self.devices if d not in DEVICES]
        if unknown:
            raise pytest.UsageError(f"--ppy-devices: unknown device {unknown[0]!r} (known: cpu, cuda)")
        scale = config.getoption("--ppy-tolerance-scale")
        self.scale = float(scale if scale is not None else config.getini("ppy_tolerance_scale"))
        self.strict = config.getoption("--ppy-verify-strict")
        self.records: dict[tuple[str, str], RegionRecord] = {}

    def record(self, key: str, device: str) -> RegionRecord:
        return self.records.setdefault((key, device), RegionRecord())

    def observe(self, region: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        """A call the session made: compare it now, on clones, before the real call runs."""
        from ppy.decorators import Call
        from ppy.verify import compare_call

        import inspect

        key = region_key(region)
        if key is None:
            return
        try:
            inspect.signature(region.python).bind(*args, **kwargs)
        except TypeError:
            return  # the real call raises Python's own error; there is nothing to compare
        device = _device_of(args, kwargs)
        record = self.record(key, device)
        try:
            outcome = compare_call(region, Call(*args, **kwargs), device=None, scale=self.scale)
        except Exception as error:  # a broken comparison is a finding, not a crash of the user's test
            record.calls += 1
            record.failures.append(f"region `{region.__name__}` on {device}: comparing a call raised {error!r}")
            return
        _add(record, outcome, region, device, "a call made by the test session")


def region_key(region: Any) -> str | None:
    """``path::name`` for a region object, relative to the working directory where possible."""
    import inspect

    try:
        path = inspect.getsourcefile(inspect.unwrap(region.python))
    except TypeError:
        return None
    if path is None:
        return None
    return f"{_relative(Path(path))}::{region.__name__}"


def _relative(path: Path) -> str:
    try:
        return path.resolve().relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return path.resolve().as_posix()


def _device_of(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    import torch

    for value in list(args) + list(kwargs.values()):
        if isinstance(value, torch.Tensor):
            return value.device.type
    return "cpu"


def _add(record: RegionRecord, outcome: Any, region: Any, device: str, source: str) -> None:
    record.calls += 1
    if not math.isnan(outcome.max_abs):
        record.max_error = max(record.max_error, outcome.max_abs)
    record.tolerance = outcome.tolerance or record.tolerance
    for mismatch in outcome.mismatches:
        record.failures.append(describe(region, device, mismatch, source))


def describe(region: Any, device: str, mismatch: Any, source: str) -> str:
    lines = [f"region `{region.__name__}` on {device}, {source}: {mismatch.what} differs", f"  {mismatch.detail}"]
    origin = _cpp_origin(region, mismatch.what)
    if origin:
        lines.append(f"  generated C++: {origin}")
    return "\n".join(lines)


def _cpp_origin(region: Any, what: str) -> str | None:
    """The generated line most likely to have produced a value: the return, or the writes to a parameter."""
    try:
        path = region._cpp_source_path
        symbol = region._cpp_symbol
        if path is None or symbol is None:
            return None
        from ppy.cli import extract_function

        function = extract_function(path.read_text(encoding="utf-8"), symbol)
    except (OSError, TypeError, ImportError):
        return None
    if function is None:
        return None
    body = [line.strip() for line in function.splitlines()[1:-1]]
    if what.startswith("parameter `"):
        name = what.split("`")[1]
        writes = [line for line in body if (f"{name}." in line or f"({name}" in line or f" = {name};" in line)
                  and ("_(" in line or "index_put_" in line or "_outf(" in line or "ppy_written" in line)]
        return " / ".join(writes) if writes else None
    returns = [line for line in body if line.startswith("return")]
    if not returns:
        return None
    # The return names a variable: point at the line that computed it.
    returned = returns[-1].removeprefix("return").strip(" ;")
    defining = [line for line in body if line.split(" = ", 1)[0].endswith(f" {returned}")]
    return defining[-1] if defining else returns[-1]


# --- hooks -------------------------------------------------------------------


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "ppy_region: a region verified against its Python body (pytest --ppy-verify)")
    if not config.getoption("--ppy-verify"):
        return
    verifier = Verifier(config)
    config.stash[VERIFIER] = verifier
    from ppy import runtime

    runtime.set_observer(verifier.observe)


def pytest_unconfigure(config: pytest.Config) -> None:
    if VERIFIER in config.stash:
        from ppy import runtime

        runtime.set_observer(None)


VERIFIER = pytest.StashKey[Verifier]()


def _region_sources(config: pytest.Config) -> list[tuple[Path, str]]:
    """Every file under ``ppy_paths`` that may hold a region, with its text (unreadable files are skipped)."""
    from ppy_check.config import find_pyproject, iter_files, load_config
    from ppy_check.runner import decode, region_candidates

    roots = [Path(p) for p in config.getini("ppy_paths")] or [Path(config.rootpath)]
    ppy_config = load_config(find_pyproject(Path(config.rootpath)))
    candidates, _ = region_candidates(item for item in iter_files(roots, ppy_config) if isinstance(item, Path))
    sources = []
    for path, data in candidates:
        try:
            sources.append((path, decode(data)))
        except (UnicodeDecodeError, SyntaxError, LookupError):
            continue  # ppy-check reports such a file; there is no region in it to verify
    return sources


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config, items: list[pytest.Item]) -> None:
    """Region items go last, so the calls the other tests make are seen before they are judged."""
    if VERIFIER not in config.stash:
        return
    from ppy_check.module import ModuleRegions

    verifier = config.stash[VERIFIER]
    for path, text in _region_sources(config):
        for region in ModuleRegions.load(str(path), text).regions:
            relative = _relative(path)
            for device in verifier.devices:
                items.append(RegionItem.from_parent(session, name=f"{relative}::{region.name}[{device}]",
                                                    nodeid=f"{relative}::{region.name}[{device}]",
                                                    path_=path, region_name=region.name, device=device))


class RegionVerificationError(Exception):
    pass


class RegionItem(pytest.Item):
    def __init__(self, *, path_: Path, region_name: str, device: str, **kwargs: Any):
        super().__init__(**kwargs)
        self.region_path = path_
        self.region_name = region_name
        self.device = device
        self.add_marker(pytest.mark.ppy_region)

    def _load(self) -> Any:
        import importlib.util
        import sys

        import ppy

        for module in list(sys.modules.values()):
            file = getattr(module, "__file__", None)
            if file and Path(file).resolve() == self.region_path.resolve():
                break
        else:
            name = "ppy_verify_" + "_".join(self.region_path.resolve().with_suffix("").parts[-3:])
            spec = importlib.util.spec_from_file_location(name, self.region_path)
            assert spec is not None and spec.loader is not None
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
        for value in vars(module).values():
            if isinstance(value, ppy.Region) and value.__name__ == self.region_name:
                return value
        for value in vars(module).values():  # a region defined in a class
            for inner in vars(value).values() if isinstance(value, type) else ():
                if isinstance(inner, ppy.Region) and inner.__name__ == self.region_name:
                    return inner
        raise RegionVerificationError(f"region `{self.region_name}` is not reachable from its module's globals")

    def runtest(self) -> None:
        import torch

        from ppy.verify import compare_call

        verifier = self.config.stash[VERIFIER]
        key = f"{_relative(self.region_path)}::{self.region_name}"
        record = verifier.record(key, self.device)
        if self.device == "cuda" and not torch.cuda.is_available():
            record.status = "skipped"
            pytest.skip("CUDA is not available on this machine")
        region = self._load()
        if not region.build():
            record.status = "python"
            raise RegionVerificationError(f"region `{self.region_name}` did not compile; it runs as Python (see the warning)")
        for call in region.sample_calls(self.device):
            _add(record, compare_call(region, call, device=self.device, scale=verifier.scale), region, self.device,
                 "a registered sample")
        if record.failures:
            record.status = "failed"
            raise RegionVerificationError("\n".join(record.failures))
        if record.calls == 0:
            record.status = "unverified"
            message = f"region `{self.region_name}` on {self.device}: unverified (no samples, and the session never called it)"
            if verifier.strict:
                raise RegionVerificationError(message + "; --ppy-verify-strict")
            pytest.skip(message)
        record.status = "passed"

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, RegionVerificationError):
            return str(excinfo.value)
        from ppy.errors import RegionError

        if isinstance(excinfo.value, RegionError):
            return str(excinfo.value)
        return super().repr_failure(excinfo)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.region_path, None, f"ppy region {self.region_name} [{self.device}]"


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    if VERIFIER not in config.stash:
        return
    verifier = config.stash[VERIFIER]
    if not verifier.records:
        return
    from io import StringIO

    from rich.console import Console
    from rich.table import Table

    table = Table("region", "device", "calls checked", "max error", "tolerance (rtol, atol)", "status", title="ppy verify")
    table.columns[0].overflow = "fold"
    for (key, device), record in sorted(verifier.records.items()):
        status = record.status if record.status != "pending" else ("failed" if record.failures else "observed")
        if record.calls == 0:
            tolerance = "-"
        else:
            tolerance = "exact" if record.tolerance is None else f"{record.tolerance[0]:g}, {record.tolerance[1]:g}"
        table.add_row(key, device, str(record.calls), f"{record.max_error:.2e}" if record.calls else "-", tolerance, status)
    buffer = StringIO()
    Console(file=buffer, width=max(140, terminalreporter._tw.fullwidth), force_terminal=False).print(table)
    terminalreporter.write_sep("=", "ppy verify")
    terminalreporter.write(buffer.getvalue())
    if os.environ.get("PPY_VERIFY_REPORT"):
        Path(os.environ["PPY_VERIFY_REPORT"]).write_text(buffer.getvalue(), encoding="utf-8")
