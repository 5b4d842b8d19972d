"""`pytest --ppy-verify`: every region of the project checked against its own Python body.

Registered through the ``pytest11`` entry point. Without ``--ppy-verify`` this
module adds its options and nothing else: like Hypothesis's plugin it imports
nothing heavy (no torch, no compiler) unless the flag is on. With the flag it
validates the settings (a bad value is a usage error, exit 4) and registers
the verifier (``ppy.verify_session``), which does the rest:

- ``ppy.verify_collect``: which files hold regions, found statically as pytest
  collects (``--ignore``, ``norecursedirs``, ``testpaths``, paths given);
- ``ppy.verify_item``: one item per region and device, run after the tests;
- ``ppy.verify_session``: the calls the tests make, and the summary table;
- ``ppy.verify``: one call compared, compiled against Python.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ppy.verify_session import Verifier

DEVICES = ("cpu", "cuda")


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ppy", "ppy region verification")
    group.addoption("--ppy-verify", action="store_true", default=False,
                    help="check every compiled region against its Python body")
    group.addoption("--ppy-verify-strict", action="store_true", default=False,
                    help="fail regions that have no samples and were never called")
    group.addoption("--ppy-devices", default=None, metavar="cpu,cuda",
                    help="devices to verify on (default: the ppy_devices ini key, else cpu,cuda)")
    group.addoption("--ppy-tolerance-scale", default=None, metavar="FACTOR",
                    help="multiply the dtype-aware tolerances (default: the ppy_tolerance_scale ini key, else 1)")
    parser.addini("ppy_paths", "folders holding regions, collected beside testpaths when pytest is given no paths",
                  type="paths", default=[])
    parser.addini("ppy_devices", "devices to verify regions on", type="args", default=list(DEVICES))
    parser.addini("ppy_tolerance_scale", "factor on the dtype-aware tolerances", default="1.0")


@dataclass(frozen=True)
class Settings:
    """What ``--ppy-verify`` was asked to do, validated once."""

    devices: tuple[str, ...]
    scale: float
    strict: bool
    paths: tuple[Path, ...]

    @classmethod
    def from_config(cls, config: pytest.Config) -> Settings:
        return cls(_devices(config), _scale(config), bool(config.getoption("--ppy-verify-strict")), _paths(config))


def _devices(config: pytest.Config) -> tuple[str, ...]:
    option = config.getoption("--ppy-devices")
    where = "--ppy-devices" if option else "ppy_devices"
    devices = tuple(d.strip() for d in option.split(",")) if option else tuple(config.getini("ppy_devices"))
    unknown = [d for d in devices if d not in DEVICES]
    if unknown:
        raise pytest.UsageError(f"{where}: unknown device {unknown[0]!r} (known: {', '.join(DEVICES)})")
    if not devices:
        raise pytest.UsageError(f"{where}: no device given (known: {', '.join(DEVICES)})")
    return devices


def _scale(config: pytest.Config) -> float:
    option = config.getoption("--ppy-tolerance-scale")
    where, raw = ("--ppy-tolerance-scale", option) if option is not None else (
        "ppy_tolerance_scale", config.getini("ppy_tolerance_scale"))
    try:
        value = float(raw)
    except (TypeError, ValueError):
        raise pytest.UsageError(f"{where}: {raw!r} is not a number") from None
    # A factor of zero or less would pass or fail everything; inf and nan compare nothing.
    if not (math.isfinite(value) and value > 0):
        raise pytest.UsageError(f"{where}: {raw!r} must be a positive finite number")
    return value


def _paths(config: pytest.Config) -> tuple[Path, ...]:
    paths = tuple(Path(p) for p in config.getini("ppy_paths"))
    missing = [p for p in paths if not p.is_dir()]
    if missing:
        raise pytest.UsageError(f"ppy_paths: {missing[0]} is not a folder")
    return paths


# A test whose calls of regions --ppy-verify does not judge: it holds them to expectations of its own (a
# documented difference such as an int result beyond 64 bits, an error raised on purpose on one side).
UNOBSERVED = "ppy_unobserved"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "ppy_region: a region verified against its Python body (pytest --ppy-verify)")
    config.addinivalue_line("markers", f"{UNOBSERVED}: the calls this test makes of regions are not judged by "
                                       "--ppy-verify (the test checks them itself)")
    if not config.getoption("--ppy-verify"):
        return
    settings = Settings.from_config(config)
    from ppy.verify_session import Verifier

    verifier = Verifier(config, settings)
    config.stash[VERIFIER] = verifier
    config.pluginmanager.register(verifier, "ppy-verifier")


VERIFIER = pytest.StashKey["Verifier"]()
