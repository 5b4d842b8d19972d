"""What the names of one module refer to, read from its statements without running them.

A region may only read its parameters, its own locals, modules and literal
constants. To tell those apart without importing anything, this records every
import (with the dotted name it binds) and every other module-level binding.
A module-level name is *stable* only when exactly one statement binds it and
no function declares it ``global``: a constant that a setter rebinds, or that
a later import or ``def`` replaces, is no constant, and a region that reads it
captures it.
"""

from __future__ import annotations

import ast
import builtins
import enum
from collections.abc import Iterator
from dataclasses import dataclass, field

from ppy_check.compat import is_try
from ppy_check.nodes import all_nodes

BUILTIN_NAMES = frozenset(dir(builtins))


class BindingKind(enum.Enum):
    CONSTANT = "constant"  # bound once, to a literal
    FUNCTION = "function"
    CLASS = "class"
    VALUE = "value"  # anything else: a tensor, a call's result, a name bound more than once


@dataclass(frozen=True)
class Binding:
    """A module-level name that is not a stable import."""

    name: str
    line: int
    kind: BindingKind
    value: ast.expr | None = None  # what a name bound once is bound to (a literal, for a constant)
    node: ast.AST | None = None  # the def or class statement, for functions and classes
    rebound: Rebinding | None = None  # a statement that rebinds it behind its assignments' back


@dataclass(frozen=True)
class Rebinding:
    """A statement that rebinds module-level names without assigning them: ``globals()["SCALE"] = 3``,
    ``exec("SCALE = 3")``, ``from settings import *`` (which may rebind any name bound before it)."""

    line: int
    how: str  # the statement as a reader would name it: "globals()[...]", "exec", "from settings import *"
    star: str | None = None  # the module of a star import


@dataclass
class ModuleScope:
    imports: dict[str, str] = field(default_factory=dict)  # local name -> dotted target (stable imports only)
    modules: set[str] = field(default_factory=set)  # the local names bound by `import x`
    bindings: dict[str, Binding] = field(default_factory=dict)
    # The module's `from m import *` statements: any builtin a region calls may be one of the names they bind.
    star_imports: list[Rebinding] = field(default_factory=list)
    # Attributes of imported modules the module itself assigns (`F.gelu = my_gelu`, `builtins.max = min`,
    # `setattr(torch, "add", ...)`), by dotted name: a region reading one does not call what ppy would lower.
    patched: dict[str, Rebinding] = field(default_factory=dict)

    def resolve(self, node: ast.expr) -> str | None:
        """The dotted name an expression refers to through imports, or None.

        ``F.linear`` with ``import torch.nn.functional as F`` is
        ``torch.nn.functional.linear``; a bare builtin is ``builtins.<name>``.
        """
        if isinstance(node, ast.Name):
            if node.id in self.imports:
                return self.imports[node.id]
            if node.id in self.bindings:
                return None
            if node.id in BUILTIN_NAMES:
                return f"builtins.{node.id}"
            return None
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            return f"{base}.{node.attr}" if base is not None and not base.startswith("builtins.") else None
        return None

    def resolve_type(self, node: ast.expr, depth: int = 0) -> str | None:
        """Like resolve, also through a module-level alias bound once (``Tensor = torch.Tensor``), as in annotations."""
        if isinstance(node, ast.Name) and node.id in self.bindings and depth < 8:
            value = self.bindings[node.id].value
            if self.bindings[node.id].kind is BindingKind.VALUE and isinstance(value, (ast.Name, ast.Attribute)):
                return self.resolve_type(value, depth + 1)
        return self.resolve(node)


def _top_level(statements: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Module statements, including those under a module-level ``if``/``try``/``with``/loop."""
    for statement in statements:
        yield statement
        if isinstance(statement, (ast.If, ast.For, ast.AsyncFor, ast.While)):
            yield from _top_level(statement.body)
            yield from _top_level(statement.orelse)
        elif is_try(statement):
            yield from _top_level(statement.body)
            for handler in statement.handlers:
                yield from _top_level(handler.body)
            yield from _top_level(statement.orelse)
            yield from _top_level(statement.finalbody)
        elif isinstance(statement, (ast.With, ast.AsyncWith)):
            yield from _top_level(statement.body)
        elif isinstance(statement, ast.Match):
            for case in statement.cases:
                yield from _top_level(case.body)


def is_literal(node: ast.expr) -> bool:
    """A value a region may read as a constant: numbers, strings, bools, None, tuples of those."""
    if isinstance(node, ast.Constant):
        return not isinstance(node.value, (bytes, complex))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return isinstance(node.operand, ast.Constant) and type(node.operand.value) in (int, float)
    if isinstance(node, ast.Tuple):
        return all(is_literal(item) for item in node.elts)
    return False


def target_names(target: ast.expr) -> Iterator[ast.Name]:
    if isinstance(target, ast.Name):
        yield target
    elif isinstance(target, (ast.Tuple, ast.List)):
        for item in target.elts:
            yield from target_names(item)
    elif isinstance(target, ast.Starred):
        yield from target_names(target.value)


def _global_declarations(module: ast.Module) -> set[str]:
    """Names some function of the module declares ``global``: any call of it may rebind them."""
    names: set[str] = set()
    # `global` is a statement: the statements' bodies are walked, not every expression in them.
    pending: list[ast.AST] = list(module.body)
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Global):
            names.update(node.names)
            continue
        for child_field in ("body", "orelse", "finalbody", "handlers", "cases"):
            pending.extend(getattr(node, child_field, ()))
    return names


def _is_globals(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "globals" \
        and not node.args and not node.keywords


def _literal_keys(node: ast.expr) -> Iterator[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        yield node.value


def _dynamic_rebinds(module: ast.Module, nodes: list[ast.AST]) -> Iterator[tuple[str, Rebinding]]:
    """Names the module rebinds without assigning them, wherever that is written: ``globals()["NAME"] = ...``
    (also ``+=``, ``del``, ``globals().update(NAME=...)``) and the bindings of ``exec("NAME = ...")`` run in the
    module's namespace (at module level, or with ``globals()`` as its namespace). A key or code known only when
    it runs is the runtime's to catch (ppy/guard.py). ``nodes`` is ``ast.walk(module)``, walked once for all."""
    for node in nodes:
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            for target in targets:
                if isinstance(target, ast.Subscript) and _is_globals(target.value):
                    for key in _literal_keys(target.slice):
                        yield key, Rebinding(node.lineno, "globals()[...]")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _is_globals(node.func.value) \
                and node.func.attr in ("update", "setdefault", "__setitem__", "pop", "__delitem__"):
            for keyword in node.keywords:
                if keyword.arg is not None:
                    yield keyword.arg, Rebinding(node.lineno, f"globals().{node.func.attr}(...)")
            for argument in node.args[:1]:
                keys = argument.keys if isinstance(argument, ast.Dict) else [argument]
                for written in keys:
                    if written is not None:
                        for name in _literal_keys(written):
                            yield name, Rebinding(node.lineno, f"globals().{node.func.attr}(...)")
    for statement in _top_level(module.body):
        for node in ast.walk(statement) if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                                        ast.ClassDef)) else ():
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "exec" and \
                    len(node.args) == 1 and not node.keywords:
                yield from _exec_bindings(node)
    for node in nodes:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "exec" and \
                len(node.args) >= 2 and _is_globals(node.args[1]):
            yield from _exec_bindings(node)


def _patches(nodes: list[ast.AST], scope: ModuleScope) -> Iterator[tuple[str, Rebinding]]:
    """Attributes of imported modules assigned (or deleted) anywhere in the module (``nodes``: all of its nodes),
    by dotted name."""
    for node in nodes:
        targets: list[ast.expr] = []
        if isinstance(node, (ast.Assign, ast.Delete)):
            targets = node.targets
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id in ("setattr", "delattr") and len(node.args) >= 2:
            owner = scope.resolve(node.args[0])
            for attribute in _literal_keys(node.args[1]):
                if owner is not None:
                    yield f"{owner}.{attribute}", Rebinding(node.lineno, f"{node.func.id}(...)")
        for target in targets:
            assert isinstance(node, ast.stmt)  # only assignments and deletions have targets
            for item in target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target]:
                dotted = scope.resolve(item) if isinstance(item, ast.Attribute) else None
                if dotted is not None:
                    yield dotted, Rebinding(node.lineno, f"{ast.unparse(item)} = ...")


def _exec_bindings(call: ast.Call) -> Iterator[tuple[str, Rebinding]]:
    """The names ``exec`` of literal code binds in the namespace it runs in."""
    code = call.args[0]
    if not (isinstance(code, ast.Constant) and isinstance(code.value, str)):
        return
    try:
        tree = ast.parse(code.value)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return  # exec raises where this code runs; it binds nothing
    for statement in _top_level(tree.body):
        for name, _ in _bindings_of(statement):
            yield name, Rebinding(call.lineno, "exec(...)")
    for name in _global_declarations(tree):
        yield name, Rebinding(call.lineno, "exec(...)")


@dataclass
class _Bound:
    line: int
    kind: BindingKind
    value: ast.expr | None = None
    node: ast.AST | None = None
    import_target: str | None = None
    is_module: bool = False


def _bindings_of(statement: ast.stmt) -> Iterator[tuple[str, _Bound]]:
    line = statement.lineno
    if isinstance(statement, ast.Import):
        for alias in statement.names:
            if alias.asname:
                yield alias.asname, _Bound(line, BindingKind.VALUE, import_target=alias.name, is_module=True)
            else:
                head = alias.name.split(".")[0]
                yield head, _Bound(line, BindingKind.VALUE, import_target=head, is_module=True)
    elif isinstance(statement, ast.ImportFrom):
        for alias in statement.names:
            if alias.name == "*":
                continue
            # A relative import keeps its leading dots: imports.py finds the file from the importer.
            module = "." * statement.level + (statement.module or "")
            imported = f"{module}.{alias.name}" if statement.module else f"{module}{alias.name}"
            yield alias.asname or alias.name, _Bound(line, BindingKind.VALUE, import_target=imported)
    elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
        yield statement.name, _Bound(line, BindingKind.FUNCTION, node=statement)
    elif isinstance(statement, ast.ClassDef):
        yield statement.name, _Bound(line, BindingKind.CLASS, node=statement)
    elif isinstance(statement, ast.Assign):
        for target in statement.targets:
            single = isinstance(target, ast.Name)
            for name in target_names(target):
                yield name.id, _Bound(line, BindingKind.VALUE, statement.value if single else None)
    elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
        if statement.value is not None:
            yield statement.target.id, _Bound(line, BindingKind.VALUE, statement.value)
    elif isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
        yield statement.target.id, _Bound(line, BindingKind.VALUE)
    elif isinstance(statement, (ast.For, ast.AsyncFor)):
        for name in target_names(statement.target):
            yield name.id, _Bound(line, BindingKind.VALUE)
    elif isinstance(statement, (ast.With, ast.AsyncWith)):
        for item in statement.items:
            if item.optional_vars is not None:
                for name in target_names(item.optional_vars):
                    yield name.id, _Bound(line, BindingKind.VALUE)
    elif isinstance(statement, ast.Delete):
        for target in statement.targets:
            for name in target_names(target):
                yield name.id, _Bound(line, BindingKind.VALUE)
    elif is_try(statement):
        for handler in statement.handlers:
            if handler.name:
                yield handler.name, _Bound(handler.lineno, BindingKind.VALUE)
    # Walrus targets at module level bind too (in any expression of the statement).
    if not isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        for node in ast.walk(statement):
            if isinstance(node, ast.NamedExpr):
                yield node.target.id, _Bound(line, BindingKind.VALUE)


def build_scope(module: ast.Module, nodes: list[ast.AST] | None = None) -> ModuleScope:
    """The module's scope; ``nodes``: all of its nodes (``nodes.all_nodes``), where the caller has walked it
    already."""
    scope = ModuleScope()
    bound: dict[str, list[_Bound]] = {}
    for statement in _top_level(module.body):
        for name, binding in _bindings_of(statement):
            bound.setdefault(name, []).append(binding)
    rebound = _global_declarations(module)
    dynamic: dict[str, Rebinding] = {}
    # One walk of a big file costs more than the rest of its scope: the three questions below share it.
    if nodes is None:
        nodes = all_nodes(module)
    for name, rebinding in _dynamic_rebinds(module, nodes):
        dynamic.setdefault(name, rebinding)
    scope.star_imports = [Rebinding(s.lineno, f"from {'.' * s.level}{s.module or ''} import *",
                                    "." * s.level + (s.module or "")) for s in _top_level(module.body)
                          if isinstance(s, ast.ImportFrom) and any(alias.name == "*" for alias in s.names)]
    for name, bindings in bound.items():
        # A star import after a name's binding may bind it again (one before it is undone by the binding).
        star = next((r for r in scope.star_imports if r.line > bindings[0].line), None)
        if star is not None:
            dynamic.setdefault(name, star)
    for name, rebinding in dynamic.items():
        if name not in bound:
            scope.bindings[name] = Binding(name, rebinding.line, BindingKind.VALUE, rebound=rebinding)
    for name, bindings in bound.items():
        first = bindings[0]
        targets = {(b.import_target, b.is_module) for b in bindings}
        same_import = first.import_target is not None and len(targets) == 1
        stable = name not in rebound and name not in dynamic and (len(bindings) == 1 or same_import)
        if stable and first.import_target is not None:
            scope.imports[name] = first.import_target
            if first.is_module:
                scope.modules.add(name)
            continue
        if stable and first.kind in (BindingKind.FUNCTION, BindingKind.CLASS):
            scope.bindings[name] = Binding(name, first.line, first.kind, node=first.node)
            continue
        constant = stable and first.import_target is None and first.value is not None and is_literal(first.value)
        kind = BindingKind.CONSTANT if constant else BindingKind.VALUE
        # A value bound once keeps its expression: torch's own modules alias builtins this way (torch_python.py).
        scope.bindings[name] = Binding(name, first.line, kind, first.value if stable else None,
                                       rebound=dynamic.get(name))
    for dotted, rebinding in _patches(nodes, scope):
        scope.patched.setdefault(dotted, rebinding)
    return scope
