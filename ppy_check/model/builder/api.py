"""The typed API the builder's parts call each other through: one protocol per part.

Generated from what crosses parts: a method listed here is called by another
part; a method not listed is its part's own. Add a method here (by adding it
to its part and calling it from another) only when another part needs it.
"""

from __future__ import annotations

import ast
from typing import Any, Protocol

from ppy_check import messages as m
from ppy_check.classes import ClassModel
from ppy_check.model import types as t
from ppy_check.model.assumptions import Assumption
from ppy_check.model.bind import Argument
from ppy_check.model.budgets import Exceeded
from ppy_check.model.builder.dialect import Dialect
from ppy_check.model.builder.frame import Frame
from ppy_check.model.builder.templates import _Template
from ppy_check.model.builder.values import BooleanDispatch, FunctionRef, Helper, Message, ModuleValue, Poisoned, Value, _ValueT
from ppy_check.model.ir import (
    Const,
    Param,
    Expr,
    HostOp,
    IndexPart,
    PythonException,
    Read,
    ResultClass,
    Span,
    Var,
    Write,
    WriteKind,
)
from ppy_check.model.problems import CaptureOrigin, Problems, Suggestion
from ppy_check.region import Region
from ppy_check.schema import OpData
from ppy_check.scope import ModuleScope, Rebinding


class BuildStateAPI(Protocol):
    """What other parts may call on BuildState (the `state` of every part)."""

    anchor: Span | None
    assumptions: dict[tuple[str, str], Assumption]
    attributes: dict[str, Param]
    module_classes: dict[str, ClassModel]
    container_lengths: dict[str, int]
    methods_run: set[tuple[str, str]]
    narrowed_attributes: dict[str, Expr]
    at: ast.stmt | None
    body: list[Any]
    branching: int
    callees: list[tuple[Region, str, Span | None]]
    callees_reached: list[tuple[Region, str, Span | None]]
    callees_seen: set[tuple[int, str, Span | None]]
    decided: list[tuple[int, str, Span | None]]
    branched: set[tuple[int, str, Span | None]]
    complete: bool
    consumed: dict[int, str]
    data: OpData
    deadline: float | None
    dependencies: dict[str, str]
    env: dict[str, Value]
    frame: Frame
    inlined: list[int]
    inlining: list[ast.AST]
    leaves_of: dict[int, tuple[t.TupleT, int]]
    natives: set[str]
    problems: Problems
    raising: bool
    random: bool
    region: Region
    result_classes: tuple[tuple[tuple[int, ...], ResultClass], ...]
    returned: bool
    returned_value: Value | None
    scope: ModuleScope
    sequence_kinds: dict[int, tuple[Expr, str]]
    size_vars: set[Var]
    sizes: set[Expr]
    steps: int
    strided_vars: set[Var]
    templates: dict[tuple[Any, ...], _Template]
    values: dict[Var, Expr]
    vars: int
    writes: list[Write]
    def dialect_for(self, helper: Helper) -> Dialect:
        ...

    def mark(self, value: _ValueT, kind: str | None) -> _ValueT:
        ...

    def kind_of(self, value: Value) -> str | None:
        ...

    def _span(self, span: Span) -> Span:
        ...

    def unsupported(self, span: Span, name: str, why: m.Message, attribute: bool=False) -> Poisoned:
        ...

    def type_problem(self, span: Span, subject: str, why: m.Message, fix: Suggestion | None=None) -> Poisoned:
        ...

    def over_budget(self, span: Span, subject: str, exceeded: Exceeded) -> Poisoned:
        ...

    def _uncalled(self, node: ast.Call) -> Suggestion | None:
        ...

    def capture(self, span: Span, name: str, origin: CaptureOrigin, detail: str) -> Poisoned:
        ...

    def rebound_capture(self, span: Span, name: str, rebinding: Rebinding) -> Poisoned:
        ...

    def structural(self, node: ast.AST) -> None:
        ...

    def snapshot(self) -> tuple[int, int, int, int, int, bool]:
        ...

    def rollback(self, saved: tuple[int, int, int, int, int, bool]) -> None:
        ...

    def new_var(self, name: str, kind: t.Type) -> Var:
        ...

    def let(self, value: Expr, name: str='') -> Read:
        ...

    def count_step(self) -> None:
        ...

    def leaves(self, kind: t.TupleT) -> int:
        ...

    def disconnect(self) -> None:
        """Part.disconnect: the end of a build."""


class StatementsAPI(Protocol):
    """What other parts may call on Statements (the `stmts` of every part)."""

    def statements(self, statements: list[ast.stmt]) -> None:
        ...

    def continuation(self) -> list[ast.stmt]:
        ...

    def runtime_branch(self, test_node: ast.expr, then: list[ast.stmt], otherwise: list[ast.stmt], node: ast.If) -> None:
        ...

    def merge(self, what: m.Message, one: Expr, other: Expr | None, span: Span, shown: m.Message, merged: list[tuple[Var, Expr | None, Expr | None]], swapped: bool=False) -> Read:
        ...

    def poison_targets(self, statement: ast.stmt) -> None:
        ...

    def statement(self, node: ast.stmt) -> None:
        ...

    def local_definition(self, node: ast.FunctionDef | ast.ClassDef) -> Value:
        ...

    def require(self, test: ast.expr, node: ast.stmt, error: PythonException, message: Message, negate: bool) -> None:
        ...

    def raised(self, node: ast.Raise) -> tuple[PythonException | None, Message]:
        ...

    def message(self, text: ast.expr) -> Message:
        ...

    def shown(self, value: Expr) -> Message | None:
        ...

    def bind_poison(self, target: ast.expr) -> None:
        ...

    def assign(self, target: ast.expr, value: Value, statement: ast.stmt, renames_after: int | None=None) -> None:
        ...

    def disconnect(self) -> None:
        """Part.disconnect: the end of a build."""


class ExpressionsAPI(Protocol):
    """What other parts may call on Expressions (the `exprs` of every part)."""

    def shadow(self, node: ast.AST) -> None:
        ...

    def repeated(self, node: ast.ListComp) -> Expr | None:
        ...

    def is_size(self, value: Expr) -> bool:
        ...

    def classes_of(self, value: Expr, path: tuple[int, ...]) -> list[tuple[tuple[int, ...], ResultClass]]:
        ...

    def atom(self, value: Value, node: ast.AST | None=None) -> Expr:
        ...

    def expr(self, node: ast.expr, top: bool=False) -> Value:
        ...

    def _expr(self, node: ast.expr) -> Value:
        ...

    def name(self, node: ast.Name) -> Value:
        ...

    def assume(self, namespace: str, name: str, value: Value) -> None:
        ...

    def constant(self, node: ast.expr, span: Span, scope: ModuleScope | None=None) -> Value:
        ...

    def dotted_value(self, dotted: str, span: Span, shown: str) -> Value:
        ...

    def project_value(self, dotted: str, shown: str) -> Value | None:
        ...

    def concatenate(self, parts: list[tuple[Expr, bool]], span: Span) -> Expr:
        ...

    def disconnect(self) -> None:
        """Part.disconnect: the end of a build."""


class MembersAPI(Protocol):
    """What other parts may call on Members (the `members` of every part)."""

    def attribute(self, node: ast.Attribute) -> Value:
        ...

    def strided(self, value: Expr) -> bool:
        ...

    def unwrap(self, value: Expr, what: str, span: Span) -> Expr:
        ...

    def subscript(self, node: ast.Subscript) -> Value:
        ...

    def as_sequence(self, value: Expr) -> Expr:
        ...

    def index_parts(self, node: ast.expr) -> tuple[IndexPart, ...]:
        ...

    def tensor_index(self, base: Expr, parts: tuple[IndexPart, ...], span: Span) -> Expr:
        ...

    def disconnect(self) -> None:
        """Part.disconnect: the end of a build."""


class OperatorsAPI(Protocol):
    """What other parts may call on Operators (the `ops` of every part)."""

    def operator(self, op: ast.operator, left: Expr, right: Expr, span: Span, in_place: bool=False, text: str='') -> Expr:
        ...

    def host(self, op: HostOp, operands: list[Expr], span: Span, text: str, function: str='', kind: t.Type | None=None) -> Expr:
        ...

    def sequence_operator(self, op: ast.operator, left: Expr, right: Expr, span: Span, text: str) -> Expr:
        ...

    def unary(self, node: ast.UnaryOp) -> Value:
        ...

    def compare(self, node: ast.Compare) -> Value:
        ...

    def any_of(self, values: list[Expr], span: Span, text: str) -> Expr:
        ...

    def disconnect(self) -> None:
        """Part.disconnect: the end of a build."""


class CallsAPI(Protocol):
    """What other parts may call on Calls (the `calls` of every part)."""

    def call(self, node: ast.Call) -> Value:
        ...

    def super_method(self, node: ast.Call) -> Value:
        ...

    def arguments(self, node: ast.Call) -> tuple[list[Argument] | None, dict[str, Expr]]:
        ...

    def keyword_spread(self, keyword: ast.keyword) -> dict[str, Expr] | None:
        ...

    def call_value(self, callee: object, args: list[Argument], keywords: dict[str, Expr], span: Span, shown: str, node: ast.Call) -> Value:
        ...

    def invoke_function(self, name: str, args: list[Argument], keywords: dict[str, Expr], span: Span, shown: str) -> Expr:
        ...

    def invoke_method(self, name: str, receiver: Expr, args: list[Argument], keywords: dict[str, Expr], span: Span, shown: str, write_kind: WriteKind | None=None) -> Expr:
        ...

    def bind_signature(self, spec: ast.arguments, args: list[Argument], keywords: dict[str, Expr], span: Span, shown: str, scope: ModuleScope | None=None) -> dict[str, Value]:
        ...

    def disconnect(self) -> None:
        """Part.disconnect: the end of a build."""


class HostMathAPI(Protocol):
    """What other parts may call on HostMath (the `host_math` of every part)."""

    def builtin(self, name: str, args: list[Argument], keywords: dict[str, Expr], span: Span, shown: str) -> Expr:
        ...

    def extreme(self, name: str, values: list[Expr], span: Span, shown: str) -> Expr:
        ...

    def math(self, name: str, args: list[Argument], keywords: dict[str, Expr], span: Span, shown: str) -> Expr:
        ...

    def standard_library(self, namespace: str, name: str, args: list[Argument], keywords: dict[str, Expr], span: Span, shown: str, node: ast.Call) -> Value:
        ...

    def disconnect(self) -> None:
        """Part.disconnect: the end of a build."""


class InlinerAPI(Protocol):
    """What other parts may call on Inliner (the `inliner` of every part)."""

    def inline(self, helper: Helper, args: list[Argument], keywords: dict[str, Expr], span: Span, shown: str, receiver: tuple[str, Value] | None=None) -> Value:
        ...

    def disconnect(self) -> None:
        """Part.disconnect: the end of a build."""


class ModulesAPI(Protocol):
    """What other parts may call on Modules (the `modules` of every part)."""

    def instance(self, cls: ClassModel, name: str) -> ModuleValue:
        ...

    def attribute(self, base: ModuleValue, attr: str, span: Span) -> Value:
        ...

    def item(self, container: ModuleValue, index: ast.expr, span: Span) -> Value:
        ...

    def path_of(self, node: ast.Attribute) -> str | None:
        ...

    def call_member(self, receiver: ModuleValue, attr: str, args: list[Argument], keywords: dict[str, Expr], span: Span, shown: str) -> Value:
        ...

    def call_super(self, receiver: ModuleValue, current: ast.FunctionDef, name: str, args: list[Argument], keywords: dict[str, Expr], span: Span, shown: str) -> Value:
        ...

    def call_module(self, module: ModuleValue, args: list[Argument], keywords: dict[str, Expr], span: Span, shown: str) -> Value:
        ...

    def disconnect(self) -> None:
        """Part.disconnect: the end of a build."""


class EinopsLoweringAPI(Protocol):
    """What other parts may call on EinopsLowering (the `einops_lowering` of every part)."""

    def einops(self, name: str, args: list[Argument], keywords: dict[str, Expr], span: Span, shown: str) -> Expr:
        ...

    def disconnect(self) -> None:
        """Part.disconnect: the end of a build."""


class RegionDialectAPI(Dialect, Protocol):
    """What other parts may call on RegionDialect (the `region_dialect` of every part)."""

    def disconnect(self) -> None:
        """Part.disconnect: the end of a build."""


class LibraryDialectAPI(Dialect, Protocol):
    """What other parts may call on LibraryDialect (the `library_dialect` of every part)."""

    def comprehension(self, node: ast.ListComp | ast.GeneratorExp) -> Value:
        ...

    def try_constant(self, node: ast.expr) -> Const | None:
        ...

    def try_truth(self, node: ast.expr) -> Const | None:
        ...

    def library_binding(self, value: ast.expr, span: Span, name: str) -> Value:
        ...

    def dispatch(self, chooser: BooleanDispatch, args: list[Argument], keywords: dict[str, Expr], span: Span, shown: str) -> Value:
        ...

    def ntuple(self, count: int, args: list[Argument], span: Span, shown: str) -> Expr:
        ...

    def library_function(self, dotted: str, node: ast.FunctionDef, scope: ModuleScope, name: str) -> FunctionRef:
        ...

    def torch_python_function(self, dotted: str) -> Helper | Value | None:
        ...

    def disconnect(self) -> None:
        """Part.disconnect: the end of a build."""
