"""The base of every part of the builder: its references to the shared state and the other parts.

``Wiring`` holds one object per part; ``assemble()`` makes them and hands
the same wiring to each, so a part calls another as ``self.<part>.<method>``.
"""

from __future__ import annotations

from dataclasses import dataclass

from ppy_check.model.builder.api import (
    BuildStateAPI,
    CallsAPI,
    EinopsLoweringAPI,
    ExpressionsAPI,
    HostMathAPI,
    InlinerAPI,
    LibraryDialectAPI,
    MembersAPI,
    OperatorsAPI,
    RegionDialectAPI,
    StatementsAPI,
)


class Part:
    """A part of the builder: it reaches the shared state and every other part through these, set once."""

    state: BuildStateAPI
    stmts: StatementsAPI
    exprs: ExpressionsAPI
    members: MembersAPI
    ops: OperatorsAPI
    calls: CallsAPI
    host_math: HostMathAPI
    inliner: InlinerAPI
    einops_lowering: EinopsLoweringAPI
    region_dialect: RegionDialectAPI
    library_dialect: LibraryDialectAPI

    def __init__(self, state: BuildStateAPI) -> None:
        self.state = state

    def connect(self, wiring: Wiring) -> None:
        self.state = wiring.state
        self.stmts = wiring.stmts
        self.exprs = wiring.exprs
        self.members = wiring.members
        self.ops = wiring.ops
        self.calls = wiring.calls
        self.host_math = wiring.host_math
        self.inliner = wiring.inliner
        self.einops_lowering = wiring.einops_lowering
        self.region_dialect = wiring.region_dialect
        self.library_dialect = wiring.library_dialect

    def disconnect(self) -> None:
        """Drop the references to the other parts: they and this one hold each other (see BuildState.release)."""
        del self.state, self.stmts, self.exprs, self.members, self.ops, self.calls, self.host_math, self.inliner, self.einops_lowering, self.region_dialect, self.library_dialect


@dataclass(frozen=True)
class Wiring:
    """One object per part, handed to each part once (assemble)."""

    state: BuildStateAPI
    stmts: StatementsAPI
    exprs: ExpressionsAPI
    members: MembersAPI
    ops: OperatorsAPI
    calls: CallsAPI
    host_math: HostMathAPI
    inliner: InlinerAPI
    einops_lowering: EinopsLoweringAPI
    region_dialect: RegionDialectAPI
    library_dialect: LibraryDialectAPI
