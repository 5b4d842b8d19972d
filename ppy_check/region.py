"""Find the regions of a module and describe each: decorators, parameters, types.

A region is a function decorated with ``ppy.opt(...)`` or ``ppy.pure``, under
whatever name the module imported them (``from ppy import opt``,
``import ppy as p``). Everything else in a module is none of ppy's business.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field

from ppy_check.scope import ModuleScope, target_names
from ppy_check.types import AnnotationError, RegionType, parse_annotation

OPT = "ppy.opt"
PURE = "ppy.pure"
LEVELS = range(0, 4)
DEFAULT_LEVEL = 3

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True)
class Param:
    name: str
    node: ast.arg
    type: RegionType | None  # None when unannotated or not a region type
    problem: str | None  # why the annotation is refused, when it is


@dataclass
class Region:
    name: str
    node: FunctionNode
    scope: ModuleScope
    pure: bool
    level: int
    params: list[Param]
    returns: RegionType | None
    returns_problem: str | None
    decorator_problems: list[tuple[ast.AST, str]] = field(default_factory=list)
    # Enclosing functions, innermost last: (name, the names local to it).
    enclosing: list[tuple[str, frozenset[str]]] = field(default_factory=list)

    @property
    def param_names(self) -> list[str]:
        return [p.name for p in self.params]


def decorator_target(decorator: ast.expr, scope: ModuleScope) -> str | None:
    func = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = scope.resolve(func)
    return name if name in (OPT, PURE) else None


def _level(decorator: ast.expr) -> tuple[int, str | None]:
    if not isinstance(decorator, ast.Call):
        return DEFAULT_LEVEL, None
    values = list(decorator.args) + [k.value for k in decorator.keywords if k.arg == "level"]
    unknown = [k.arg for k in decorator.keywords if k.arg != "level"]
    if unknown:
        return DEFAULT_LEVEL, f"`ppy.opt` has no parameter `{unknown[0]}`"
    if len(values) > 1:
        return DEFAULT_LEVEL, "`ppy.opt` takes one level"
    if not values:
        return DEFAULT_LEVEL, None
    value = values[0]
    if isinstance(value, ast.Constant) and type(value.value) is int and value.value in LEVELS:
        return value.value, None
    return DEFAULT_LEVEL, f"`ppy.opt` level must be a literal 0, 1, 2 or 3, not `{ast.unparse(value)}`"


def function_locals(node: FunctionNode) -> frozenset[str]:
    """Parameters and every name bound in the body (not in nested functions)."""
    names = {a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs}
    if node.args.vararg:
        names.add(node.args.vararg.arg)
    if node.args.kwarg:
        names.add(node.args.kwarg.arg)
    for child in walk_body(node.body):
        if isinstance(child, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
            targets = child.targets if isinstance(child, ast.Assign) else [child.target]
            for target in targets:
                names.update(n.id for n in target_names(target))
        elif isinstance(child, ast.NamedExpr):
            names.add(child.target.id)
        elif isinstance(child, (ast.With, ast.AsyncWith)):
            for item in child.items:
                if item.optional_vars is not None:
                    names.update(n.id for n in target_names(item.optional_vars))
        elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(child.name)
        elif isinstance(child, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in child.names)
        elif isinstance(child, ast.ExceptHandler) and child.name:
            names.add(child.name)
        elif isinstance(child, ast.comprehension):
            names.update(n.id for n in target_names(child.target))
    return frozenset(names)


def walk_body(statements: list[ast.stmt]) -> Iterator[ast.AST]:
    """Every node of a body, without descending into nested functions, classes or lambdas."""
    stack: list[ast.AST] = list(reversed(statements))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _describe(node: FunctionNode, scope: ModuleScope, decorators: list[tuple[ast.expr, str]],
              enclosing: list[tuple[str, frozenset[str]]]) -> Region:
    pure = any(target == PURE for _, target in decorators)
    level, problems = DEFAULT_LEVEL, []
    for decorator, target in decorators:
        if target == OPT:
            level, problem = _level(decorator)
            if problem:
                problems.append((decorator, problem))
        elif isinstance(decorator, ast.Call):
            problems.append((decorator, "`ppy.pure` takes no arguments: write `@ppy.pure`"))
    params = []
    arguments = node.args
    for arg in arguments.posonlyargs + arguments.args + arguments.kwonlyargs:
        if arg.annotation is None:
            params.append(Param(arg.arg, arg, None, None))
            continue
        try:
            params.append(Param(arg.arg, arg, parse_annotation(arg.annotation, scope.resolve), None))
        except AnnotationError as error:
            params.append(Param(arg.arg, arg, None, str(error)))
    returns, returns_problem = None, None
    if node.returns is not None:
        try:
            returns = parse_annotation(node.returns, scope.resolve, is_return=True)
        except AnnotationError as error:
            returns_problem = str(error)
    return Region(node.name, node, scope, pure, level, params, returns, returns_problem, problems, enclosing)


def find_regions(module: ast.Module, scope: ModuleScope) -> list[Region]:
    regions: list[Region] = []

    def visit(statements: list[ast.stmt], enclosing: list[tuple[str, frozenset[str]]]) -> None:
        for statement in statements:
            for child in _direct_definitions(statement):
                if isinstance(child, ast.ClassDef):
                    visit(child.body, enclosing)
                    continue
                decorators = [(d, t) for d in child.decorator_list if (t := decorator_target(d, scope))]
                if decorators:
                    regions.append(_describe(child, scope, decorators, enclosing))
                visit(child.body, enclosing + [(child.name, function_locals(child))])

    visit(module.body, [])
    return regions


def _direct_definitions(statement: ast.stmt) -> Iterator[FunctionNode | ast.ClassDef]:
    """Function and class definitions at this statement's level (through if/try/with blocks)."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield statement
        return
    for name in ("body", "orelse", "finalbody", "handlers"):
        for child in getattr(statement, name, []) or []:
            if isinstance(child, ast.ExceptHandler):
                for inner in child.body:
                    yield from _direct_definitions(inner)
            elif isinstance(child, ast.stmt):
                yield from _direct_definitions(child)
