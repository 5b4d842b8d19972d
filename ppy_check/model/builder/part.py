"""The base of every part of the builder: its references to the shared state and the other parts.

``Wiring`` holds one object per part; ``assemble()`` makes them and hands
the same wiring to each, so a part calls another as ``self.<part>.<method>``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from ppy_check.model.builder.api import (
    BuildStateAPI,
    CallsAPI,
    EinopsLoweringAPI,
    ExpressionsAPI,
    HostMathAPI,
    InlinerAPI,
    LibraryDialectAPI,
    MembersAPI,
    ModulesAPI,
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
    modules: ModulesAPI
    region_dialect: RegionDialectAPI
    library_dialect: LibraryDialectAPI

    def __init__(self, state: BuildStateAPI) -> None:
        self.state = state

    def connect(self, wiring: Wiring) -> None:
        # Wiring's fields are this class's annotated references, name for name: one list, not a copy per method.
        for name in _PART_NAMES:
            setattr(self, name, getattr(wiring, name))

    def disconnect(self) -> None:
        """Drop the references to the other parts: they and this one hold each other (see BuildState.release)."""
        for name in _PART_NAMES:
            delattr(self, name)


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
    modules: ModulesAPI
    region_dialect: RegionDialectAPI
    library_dialect: LibraryDialectAPI


_PART_NAMES: tuple[str, ...] = tuple(f.name for f in fields(Wiring))
