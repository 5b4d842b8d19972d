"""Find the regions of a module and describe each: decorators, parameters, types.

A region is a function decorated with ``ppy.opt(...)`` or ``ppy.pure``, under
whatever name the module imported them (``from ppy import opt``,
``import ppy as p``). Everything else in a module is none of ppy's business.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ppy_check import messages as m
from ppy_check.scope import ModuleScope, target_names
from ppy_check.node_memo import per_node
from ppy_check.site import RegionSite
from ppy_check.annotations import AnnotationError, parse_annotation
from ppy_check.model.types import Type

OPT = "ppy.opt"
PURE = "ppy.pure"
LEVELS = range(0, 4)
DEFAULT_LEVEL = 3

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef

_SIMPLE_STATEMENTS = frozenset({ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return, ast.Pass})
# Every expression-level construct a structural rule reports is spelled with one of these.
_STRUCTURE = re.compile(r"\b(?:for|while|if|and|or|lambda|yield|await)\b|:=")


@dataclass(frozen=True)
class Param:
    name: str
    node: ast.arg
    type: Type | None  # None when unannotated or not a region type
    problem: str | None  # why the annotation is refused, when it is


@dataclass
class Region:
    name: str
    node: FunctionNode
    scope: ModuleScope
    pure: bool
    level: int
    params: list[Param]
    returns: Type | None
    returns_problem: str | None
    decorator_problems: list[tuple[ast.AST, str]] = field(default_factory=list)
    # Enclosing functions, innermost last.
    enclosing_functions: list[FunctionNode] = field(default_factory=list)
    site: RegionSite = RegionSite("<string>", "", 0)

    # The region's source lines; empty when the caller has none to give.
    text: str = ""
    # What a type checker knows beyond the syntax (see oracle.py); None in ppy-check.
    oracle: Any = None
    # The model builder's result, once built (engine.analyse): every rule and the compiler share it.
    analysis: Any = None
    compiles: bool = True  # False for `@ppy.opt(..., compile=False)`
    # A method's class, and the name its instance is bound to (`self`, which is no parameter of the model: what
    # the region reads through it are inputs of their own, classes.py); None for a function.
    owner: ast.ClassDef | None = None
    self_name: str | None = None

    @functools.cached_property
    def nodes(self) -> list[ast.AST]:
        """Every node of the body that the structural rules (loop, branch, syntax) could report.

        Walking a body is most of a check's cost, and most regions are plain
        assignments: when every statement is simple and the text holds none of
        the keywords that start a loop, branch or scope, no nested node can be
        one, so the statements alone are the answer.
        """
        if self.text and all(type(s) in _SIMPLE_STATEMENTS for s in self.node.body) and not _STRUCTURE.search(self.text):
            return list(self.node.body)
        return list(walk_body(self.node.body))

    @functools.cached_property
    def locals(self) -> frozenset[str]:
        return function_locals(self.node, self.nodes)

    @functools.cached_property
    def enclosing(self) -> list[tuple[str, frozenset[str]]]:
        """(name, local names) of each enclosing function, innermost last."""
        return [(f.name, function_locals(f)) for f in self.enclosing_functions]


def decorator_target(decorator: ast.expr, scope: ModuleScope) -> str | None:
    func = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = scope.resolve(func)
    return name if name in (OPT, PURE) else None


def _level(decorator: ast.expr) -> tuple[int, str | None]:
    if not isinstance(decorator, ast.Call):
        return DEFAULT_LEVEL, None
    values = list(decorator.args) + [k.value for k in decorator.keywords if k.arg == "level"]
    unknown = [k.arg for k in decorator.keywords if k.arg not in ("level", "compile")]
    if unknown:
        return DEFAULT_LEVEL, m.message(m.DECORATOR_UNKNOWN_PARAMETER, name=unknown[0]).render()
    # Whether a region compiles is read from the source by tools that never import it: it must be a literal.
    for switch in (k.value for k in decorator.keywords if k.arg == "compile"):
        if not (isinstance(switch, ast.Constant) and type(switch.value) is bool):
            return DEFAULT_LEVEL, m.message(m.DECORATOR_COMPILE_NOT_LITERAL, value=ast.unparse(switch)).render()
    if len(values) > 1:
        return DEFAULT_LEVEL, m.DECORATOR_LEVELS
    if not values:
        return DEFAULT_LEVEL, None
    value = values[0]
    if isinstance(value, ast.Constant) and type(value.value) is int and value.value in LEVELS:
        return value.value, None
    return DEFAULT_LEVEL, m.message(m.DECORATOR_LEVEL_NOT_LITERAL, value=ast.unparse(value)).render()


_BINDERS = frozenset({
    ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor, ast.NamedExpr, ast.With, ast.AsyncWith,
    ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Import, ast.ImportFrom, ast.ExceptHandler,
    ast.comprehension,
})


def function_locals(node: FunctionNode, body_nodes: list[ast.AST] | None = None) -> frozenset[str]:
    """Parameters and every name bound in the body (not in nested functions)."""
    if body_nodes is None:
        return _walked_locals(node)
    return _locals(node, body_nodes)


@per_node  # every inlining of one of torch's functions asks it of the same node
def _walked_locals(node: FunctionNode) -> frozenset[str]:
    return _locals(node, walk_body(node.body))


def _locals(node: FunctionNode, body_nodes: Iterable[ast.AST]) -> frozenset[str]:
    names = {a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs}
    if node.args.vararg:
        names.add(node.args.vararg.arg)
    if node.args.kwarg:
        names.add(node.args.kwarg.arg)
    for child in body_nodes:
        if type(child) not in _BINDERS:
            continue
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


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
# Expression contexts and operators are AST singletons that no rule looks at.
_SKIPPED_FIELDS = frozenset({"ctx", "op", "ops", "type_comment"})
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def is_check(node: ast.AST) -> bool:
    """A check: an `assert`, or an `if` with no `else` whose body is one `raise`. It only stops the call, so the region
    stays one straight line (the builder compiles it, or says why it cannot)."""
    if isinstance(node, ast.Assert):
        return True
    return isinstance(node, ast.If) and not node.orelse and len(node.body) == 1 and isinstance(node.body[0], ast.Raise)


def check_parts(node: ast.Assert | ast.If) -> Iterator[ast.AST]:
    """The nodes that are a check's own, not branches of their own: the `raise` of an `if` check, and the `and`,
    `or` and `not` that join its test (evaluated as Python does, short-circuits included)."""
    if isinstance(node, ast.If):
        yield node.body[0]
    stack: list[ast.expr] = [node.test]
    while stack:
        test = stack.pop()
        if isinstance(test, ast.BoolOp):
            yield test
            stack.extend(test.values)
        elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            stack.append(test.operand)


def walk_body(statements: list[ast.stmt]) -> Iterator[ast.AST]:
    """Every node of a body in source order, without entering nested functions, classes or lambdas."""
    stack: list[ast.AST] = list(reversed(statements))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, _SCOPES):
            continue
        kind = type(node)
        fields = _CHILD_FIELDS.get(kind)
        if fields is None:
            fields = _CHILD_FIELDS[kind] = tuple(f for f in kind._fields if f not in _SKIPPED_FIELDS)
        children: list[ast.AST] = []
        for name in fields:
            value = getattr(node, name, None)
            if isinstance(value, ast.AST):
                children.append(value)
            elif isinstance(value, list):
                children.extend(item for item in value if isinstance(item, ast.AST))
        stack.extend(reversed(children))


def _compiles(decorators: list[tuple[ast.expr, str]]) -> bool:
    """False for `@ppy.opt(..., compile=False)`: a region, checked, that always runs its Python body."""
    for decorator, target in decorators:
        if target == OPT and isinstance(decorator, ast.Call):
            for keyword in decorator.keywords:
                if keyword.arg == "compile" and isinstance(keyword.value, ast.Constant) and keyword.value.value is False:
                    return False
    return True


def _describe(node: FunctionNode, scope: ModuleScope, decorators: list[tuple[ast.expr, str]],
              enclosing: list[FunctionNode], site: RegionSite, owner: ast.ClassDef | None = None) -> Region:
    pure = any(target == PURE for _, target in decorators)
    level = DEFAULT_LEVEL
    problems: list[tuple[ast.AST, str]] = []
    for decorator, target in decorators:
        if target == OPT:
            level, problem = _level(decorator)
            if problem:
                problems.append((decorator, problem))
        elif isinstance(decorator, ast.Call):
            problems.append((decorator, m.DECORATOR_PURE_ARGUMENTS))
    params = []
    arguments = node.args
    self_name = _instance_parameter(node, scope) if owner is not None else None
    for arg in arguments.posonlyargs + arguments.args + arguments.kwonlyargs:
        if arg.arg == self_name and arg is (arguments.posonlyargs + arguments.args)[0]:
            continue
        if arg.annotation is None:
            params.append(Param(arg.arg, arg, None, None))
            continue
        try:
            params.append(Param(arg.arg, arg, parse_annotation(arg.annotation, scope.resolve_type), None))
        except AnnotationError as error:
            params.append(Param(arg.arg, arg, None, str(error)))
    returns, returns_problem = None, None
    if node.returns is not None:
        try:
            returns = parse_annotation(node.returns, scope.resolve_type, is_return=True)
        except AnnotationError as error:
            returns_problem = str(error)
    region = Region(node.name, node, scope, pure, level, params, returns, returns_problem, problems, enclosing, site)
    region.compiles = _compiles(decorators)
    region.owner, region.self_name = (owner, self_name) if self_name is not None else (None, None)
    return region


def _instance_parameter(node: FunctionNode, scope: ModuleScope) -> str | None:
    """The first parameter of a method, which Python binds to the instance (none for a static method)."""
    positional = node.args.posonlyargs + node.args.args
    if not positional:
        return None
    for decorator in node.decorator_list:
        if scope.resolve(decorator) in ("builtins.staticmethod", "builtins.classmethod"):
            return None
    return positional[0].arg


def first_line(node: FunctionNode) -> int:
    """The line Python reports as the function's first (``co_firstlineno``): its first decorator's."""
    return node.decorator_list[0].lineno if node.decorator_list else node.lineno


def describe_function(node: FunctionNode, scope: ModuleScope, path: str) -> Region:
    """A helper a region calls, described like a region, so that the structural rules can read its syntax."""
    return _describe(node, scope, [], [], RegionSite(path, node.name, first_line(node)))


def find_regions(module: ast.Module, scope: ModuleScope, lines: list[str] | None = None,
                 path: str = "<string>") -> list[Region]:
    regions: list[Region] = []
    _visit(module.body, [], "", scope, lines, path, regions)
    return regions


def _visit(statements: list[ast.stmt], enclosing: list[FunctionNode], prefix: str, scope: ModuleScope,
           lines: list[str] | None, path: str, regions: list[Region], owner: ast.ClassDef | None = None) -> None:
    # A module-level function, not a closure: a closure that calls itself is a reference cycle, which would keep
    # the module's tree and every region's model alive until the cyclic collector finds them.
    for statement in statements:
        for child in _direct_definitions(statement):
            qualname = prefix + child.name
            if isinstance(child, ast.ClassDef):
                # A class inside a function is made at each call: its methods are no module region's.
                _visit(child.body, enclosing, qualname + ".", scope, lines, path, regions, None if enclosing else child)
                continue
            decorators = [(d, t) for d in child.decorator_list if (t := decorator_target(d, scope))]
            if decorators:
                site = RegionSite(path, qualname, first_line(child))
                region = _describe(child, scope, decorators, enclosing, site, owner)
                if lines is not None and child.body:
                    region.text = "\n".join(lines[child.body[0].lineno - 1: child.end_lineno])
                regions.append(region)
            _visit(child.body, enclosing + [child], qualname + ".<locals>.", scope, lines, path, regions)


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
