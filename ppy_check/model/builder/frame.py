"""A frame (the function whose body is being built) and the analysis the builder returns."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ppy_check.model.builder.dialect import Dialect
from ppy_check.model.ir import RegionModel, Span, Write
from ppy_check.model.problems import Problems
from ppy_check.region import Region
from ppy_check.scope import ModuleScope


@dataclass
class Analysis:
    """The builder's result: a complete model, or the problems that stopped it."""

    model: RegionModel | None
    problems: Problems
    writes: list[Write] = field(default_factory=list)
    # Helpers and regions the region calls (inlined): the structural rules check their syntax too.
    # (helper, how the region reached it, the call in the region's file when the helper is in another file)
    callees: list[tuple[Region, str, Span | None]] = field(default_factory=list)
    # The `if`s and conditional expressions of those helpers whose test the builder knew, on every way the region
    # reached them (by node, how the region reached the helper, anchor as in ``callees``): each picked its way
    # while the region was built, so it is no branch (the branch rule reads this).
    decided: frozenset[tuple[int, str, Span | None]] = frozenset()


@dataclass
class Frame:
    """The function whose body is being interpreted: the region itself, or a helper it calls."""

    locals: frozenset[str]
    enclosing: list[tuple[str, frozenset[str]]]
    context: str  # "" for the region; how the region reached a helper, for messages
    node: ast.AST
    scope: ModuleScope
    path: str
    dialect: Dialect  # the language the function is written in: what its code may do
    called_as: str = ""  # in torch's Python code: the user's call that led there, which messages name
    # In torch's Python code: local lists still growing by `.append` (no other reference to them has been taken).
    lists: set[str] = field(default_factory=set)
    # In torch's Python code: what runs after the statement being built, block by block outward (innermost last);
    # None where a loop's body ends (what follows it is the next round, no straight continuation).
    rests: list[list[ast.stmt] | None] = field(default_factory=list)
    finished: bool = False  # the rest of the function was built inside a run-time branch (library_if)
    # A helper's frame: the anchor its reach was recorded with (Analysis.callees), which its decided tests name.
    anchor: Span | None = None
