"""einops patterns (``"b n (h d) -> b h n d"``), parsed and planned as reshape, permute, reduce and expand.

einops is the most common non-torch call in model code; with a literal
pattern, ``rearrange``, ``repeat`` and ``reduce`` are a fixed sequence of
torch operations, which this works out (the plan) without einops installed.
The builder then performs the plan with ordinary calls (``reshape``,
``permute``, ``amax``...), so the compiled code is what einops itself does.
An ellipsis is flattened into one axis first and restored at the end, so
the plan never depends on the input's rank.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

ELLIPSIS = "..."
REDUCTIONS = ("mean", "sum", "max", "min", "prod")


class PatternError(Exception):
    """A pattern ppy cannot plan; the message says why."""


Group = tuple[str, ...]  # the elementary axes of one dimension: () for `1`, ("...",) for the ellipsis


@dataclass(frozen=True)
class Side:
    groups: tuple[Group, ...]

    @property
    def axes(self) -> list[str]:
        return [axis for group in self.groups for axis in group]


_TOKEN = re.compile(r"\(|\)|\.\.\.|[A-Za-z_][A-Za-z0-9_]*|\d+|\S")


def _side(text: str) -> Side:
    groups: list[Group] = []
    current: list[str] | None = None
    for token in _TOKEN.findall(text):
        if token == "(":
            if current is not None:
                raise PatternError("nested parentheses")
            current = []
        elif token == ")":
            if current is None:
                raise PatternError("a `)` without its `(`")
            groups.append(tuple(current))
            current = None
        elif token == ELLIPSIS or re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", token) or token.isdigit():
            if token.isdigit() and token != "1":
                raise PatternError(f"the number {token} in a pattern (write an axis name and pass its length)")
            if token == "1":
                if current is not None:
                    raise PatternError("`1` inside parentheses")
                groups.append(())
            elif current is not None:
                current.append(token)
            else:
                groups.append((token,))
        else:
            raise PatternError(f"`{token}` in a pattern")
    if current is not None:
        raise PatternError("a `(` without its `)`")
    axes = [axis for group in groups for axis in group]
    if len(axes) != len(set(axes)):
        raise PatternError("an axis named twice on one side")
    return Side(tuple(groups))


def parse(pattern: str) -> tuple[Side, Side]:
    if pattern.count("->") != 1:
        raise PatternError("a pattern needs one `->`")
    left, right = pattern.split("->")
    return _side(left), _side(right)


@dataclass(frozen=True)
class Plan:
    """What to do, in order; sizes refer to elementary axes by name, or to the input's dimensions by position."""

    left: Side
    right: Side
    reduced: tuple[str, ...]  # axes summed/averaged away (reduce)
    added: tuple[str, ...]  # axes new on the right (repeat)
    order: tuple[str, ...]  # the elementary axes in the right side's order, before new ones are inserted

    @property
    def has_ellipsis(self) -> bool:
        return ELLIPSIS in self.left.axes


def plan(function: str, pattern: str, lengths: set[str]) -> Plan:
    """The plan of ``einops.<function>(x, pattern, **lengths)``, or PatternError saying why there is none."""
    left, right = parse(pattern)
    left_axes, right_axes = left.axes, right.axes
    if (ELLIPSIS in left_axes) != (ELLIPSIS in right_axes):
        raise PatternError("`...` on one side only")
    reduced = tuple(a for a in left_axes if a not in right_axes)
    added = tuple(a for a in right_axes if a not in left_axes)
    if function == "rearrange" and (reduced or added):
        raise PatternError(f"rearrange keeps every axis; {'`' + (reduced or added)[0] + '`'} is on one side only")
    if function == "repeat" and reduced:
        raise PatternError(f"repeat drops no axis; `{reduced[0]}` is missing on the right")
    if function == "reduce" and added:
        raise PatternError(f"reduce adds no axis; `{added[0]}` is new on the right")
    missing = [a for a in added if a not in lengths]
    if missing:
        raise PatternError(f"the length of the new axis `{missing[0]}` is not given")
    for group in left.groups:
        unknown = [a for a in group if a not in lengths and a != ELLIPSIS]
        if len(group) > 1 and len(unknown) > 1:
            raise PatternError(f"`({' '.join(group)})` has more than one axis of unknown length")
    for name in lengths:
        if name not in left_axes and name not in right_axes:
            raise PatternError(f"`{name}=` names no axis of the pattern")
    order = tuple(a for a in right_axes if a not in added)
    return Plan(left, right, reduced, added, order)
