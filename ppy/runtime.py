"""What a region call runs. Until a region is compiled, its Python body."""

from __future__ import annotations

from typing import Any

from ppy.decorators import Region


def active(region: Region) -> bool:
    return False


def call(region: Region, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    return region.python(*args, **kwargs)
