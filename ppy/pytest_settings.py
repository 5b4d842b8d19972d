"""What `pytest --ppy-verify` was asked to do, validated once: a leaf that the plugin and the verifier's
modules (collection, items, session) all import, so that none of them imports another for its settings."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ppy.verify_session import Verifier  # noqa: F401 (named in the stash key's type argument below)

DEVICES = ("cpu", "cuda")


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


# Where the session's verifier is kept (config.stash), for the collectors and items it made.
VERIFIER = pytest.StashKey["Verifier"]()
