"""What the names of one module refer to, read from its top-level statements.

A region may only read its parameters, its own locals, modules and literal
constants. To tell those apart without importing anything, this records every
import (with the dotted name it binds) and every other module-level binding
(with whether it is a literal constant, a function, a class or some value).
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterator
from dataclasses import dataclass, field

BUILTIN_NAMES = frozenset(dir(builtins))


@dataclass(frozen=True)
class Binding:
    """A module-level name that is not an import."""

    name: str
    line: int
    kind: str  # "constant", "function", "class" or "value"
    value: ast.expr | None = None


@dataclass
class ModuleScope:
    imports: dict[str, str] = field(default_factory=dict)  # local name -> dotted target
    modules: set[str] = field(default_factory=set)  # the local names bound by `import x`
    bindings: dict[str, Binding] = field(default_factory=dict)

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


def _top_level(statements: list[ast.stmt]) -> Iterator[ast.stmt]:
    """Module statements, including those under a module-level ``if``/``try``/``with``."""
    for statement in statements:
        yield statement
        if isinstance(statement, (ast.If, ast.For, ast.While)):
            yield from _top_level(statement.body)
            yield from _top_level(statement.orelse)
        elif isinstance(statement, ast.Try):
            yield from _top_level(statement.body)
            for handler in statement.handlers:
                yield from _top_level(handler.body)
            yield from _top_level(statement.orelse)
            yield from _top_level(statement.finalbody)
        elif isinstance(statement, ast.With):
            yield from _top_level(statement.body)


def is_literal(node: ast.expr) -> bool:
    """A value a region may read as a constant: numbers, strings, bools, None, tuples of those."""
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return isinstance(node.operand, ast.Constant) and isinstance(node.operand.value, (int, float))
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


def build_scope(module: ast.Module) -> ModuleScope:
    scope = ModuleScope()
    assigned: dict[str, list[tuple[int, ast.expr | None]]] = {}
    for statement in _top_level(module.body):
        if isinstance(statement, ast.Import):
            for alias in statement.names:
                if alias.asname:
                    scope.imports[alias.asname] = alias.name
                    scope.modules.add(alias.asname)
                else:
                    head = alias.name.split(".")[0]
                    scope.imports[head] = head
                    scope.modules.add(head)
        elif isinstance(statement, ast.ImportFrom) and statement.level == 0 and statement.module:
            for alias in statement.names:
                if alias.name != "*":
                    scope.imports[alias.asname or alias.name] = f"{statement.module}.{alias.name}"
        elif isinstance(statement, ast.ImportFrom):
            for alias in statement.names:
                if alias.name != "*":
                    name = alias.asname or alias.name
                    scope.bindings[name] = Binding(name, statement.lineno, "value")
        elif isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
            scope.bindings[statement.name] = Binding(statement.name, statement.lineno, "function")
        elif isinstance(statement, ast.ClassDef):
            scope.bindings[statement.name] = Binding(statement.name, statement.lineno, "class")
        elif isinstance(statement, ast.Assign):
            for target in statement.targets:
                single = isinstance(target, ast.Name)
                for name in target_names(target):
                    assigned.setdefault(name.id, []).append((statement.lineno, statement.value if single else None))
        elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            assigned.setdefault(statement.target.id, []).append((statement.lineno, statement.value))
        elif isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Name):
            assigned.setdefault(statement.target.id, []).append((statement.lineno, None))
        elif isinstance(statement, (ast.For, ast.With)):
            targets = [statement.target] if isinstance(statement, ast.For) else [
                item.optional_vars for item in statement.items if item.optional_vars is not None
            ]
            for target in targets:
                for name in target_names(target):
                    assigned.setdefault(name.id, []).append((statement.lineno, None))
    for name, assignments in assigned.items():
        line, value = assignments[0]
        constant = len(assignments) == 1 and value is not None and is_literal(value)
        scope.imports.pop(name, None)  # a later assignment shadows the import
        scope.bindings[name] = Binding(name, line, "constant" if constant else "value", value)
    return scope
