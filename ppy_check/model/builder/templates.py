"""A helper's model kept as a template, and its cloning for a new call."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from ppy_check.model.ir import Assertion, Branch, Expr, Span, Var, Write
from ppy_check.region import Region


@dataclass(frozen=True)
class _TemplateStart:
    """Where the model stood when a helper's inlining began (Builder.remember keeps what it added)."""

    body: int
    vars: int
    snapshot: tuple[int, int, int, int, int, bool]
    structural: int
    branches: int
    budgets: int
    callees: int
    natives: set[str]
    kinds: int
    sizes: set[Expr]
    inlined: int
    decided: int


@dataclass(frozen=True)
class _Template:
    """A helper's model for one kind of arguments: what inlining it added, and the arguments it was built on."""

    leaves: tuple[Expr, ...]  # the bound arguments, tuples before their items
    body: tuple[Any, ...]
    value: Expr
    first_var: int  # its variables are those numbered above first_var, up to last_var
    last_var: int
    writes: tuple[Write, ...]
    callees: tuple[tuple[Region, str, Span | None], ...]
    chain: str  # how the region reached the helper (each callee's chain ends with it)
    natives: frozenset[str]
    random: bool
    sizes: tuple[Expr, ...]
    kinds: tuple[tuple[Expr, str], ...]
    reached: frozenset[int]  # the helpers inlined, by identity: reused only where none of them is being inlined
    statements: int  # its cost in steps (budgets.MAX_STEPS): its statements and the helpers it reaches
    decided: tuple[tuple[int, str, Span | None], ...]  # its tests known at build time (BuildState.decided)


class _Cloner:
    """Copies of a template's model nodes: the first call's arguments replaced by this call's, each of its
    variables by a new one; a node shared in the template is one node in the copy."""

    def __init__(self, mapping: dict[int, Any], first_var: int, last_var: int, new_var: Any):
        self.mapping = mapping
        self.first_var, self.last_var = first_var, last_var
        self.new_var = new_var
        self.vars: dict[Var, Var] = {}

    def clone(self, node: Any) -> Any:
        found = self.mapping.get(id(node))
        if found is not None:
            return found
        if isinstance(node, tuple):
            return tuple(self.clone(item) for item in node)
        if isinstance(node, Var):
            copy: Any = self.new_var(node.name, node.type) if self.first_var < node.index <= self.last_var else node
            if copy is not node:
                self.vars[node] = copy
        elif type(node) in _MODEL_NODES:
            changes = {}
            for name in _MODEL_NODES[type(node)]:
                value = getattr(node, name)
                cloned = self.clone(value)
                if cloned is not value:
                    changes[name] = cloned
            copy = dataclasses.replace(node, **changes) if changes else node
        else:
            return node
        self.mapping[id(node)] = copy
        return copy


def _model_nodes() -> dict[type, tuple[str, ...]]:
    """The model's node classes whose fields may hold other nodes, and those fields."""
    from ppy_check.model import ir

    leaves = (ir.Span, ir.DtypeName, ir.EnumName, ir.ResultClass, ir.Write, ir.ParamInfo, ir.RegionModel, ir.Var)
    return {kind: tuple(f.name for f in dataclasses.fields(kind) if f.name not in ("span", "type", "aliases"))
            for kind in vars(ir).values()
            if isinstance(kind, type) and dataclasses.is_dataclass(kind) and kind not in leaves}


_MODEL_NODES = _model_nodes()


def _count_statements(body: tuple[Any, ...]) -> int:
    """Statements, those of run-time decisions' ways included: what instantiating a template costs."""
    total = 0
    for statement in body:
        total += 1
        if isinstance(statement, Branch):
            total += _count_statements(statement.then_body) + _count_statements(statement.else_body)
        elif isinstance(statement, Assertion):
            total += _count_statements(statement.body)
    return total
