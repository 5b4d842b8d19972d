"""What the property tests share: a module's regions, and each region's calls held to its own Python body."""

from __future__ import annotations

import inspect
import types
from collections.abc import Callable, Iterable
from typing import Any

import ppy

# How one call ended, from either side: the result as compared, or the exception's type and message.
Outcome = Any


def regions_of(module: types.ModuleType) -> list[str]:
    return sorted(name for name, value in vars(module).items() if isinstance(value, ppy.Region))


def kinds(region: ppy.Region[..., Any]) -> list[str]:
    """Each parameter's annotation as written (`int`, `float`, `tuple[int, ...]`): what to draw for it."""
    return [str(p.annotation) for p in inspect.signature(region.python).parameters.values()]


def wrong_answers(name: str, region: ppy.Region[..., Any], cases: Iterable[tuple[Any, ...]],
                  outcome: Callable[[Callable[..., Any], tuple[Any, ...]], Outcome],
                  licensed: Callable[[Outcome, Outcome, tuple[Any, ...]], bool]) -> list[str]:
    """A line for each case whose compiled outcome is not the Python body's, unless ``licensed`` allows it."""
    assert region.build(), f"{name} did not compile"
    wrong = []
    for args in cases:
        compiled, python = outcome(region, args), outcome(region.python, args)
        if compiled != python and not licensed(compiled, python, args):
            wrong.append(f"{name}{args!r}:\n  Python   {python}\n  compiled {compiled}")
    return wrong
