"""Rewrite a call of a Python-level torch wrapper into the native calls it makes.

The result is an ordinary expression tree placed at the call's source
position, so every later pass (rules, alias tracking, the compiler) sees plain
native calls and reports problems at the line the user wrote.
"""

from __future__ import annotations

import ast
import copy
from collections.abc import Callable
from dataclasses import dataclass

from ppy_check.wrappers import REDUCTIONS, Wrapper

# Names an expansion uses for "the native function" and "the torch module";
# no user code spells them, so they can never be shadowed.
ATEN = "__aten__"
TORCH = "__torch__"


def dotted_name(node: ast.expr, imports: dict[str, str], is_local: Callable[[str], bool]) -> str | None:
    """The dotted name a module attribute chain refers to (``F.linear`` is ``torch.nn.functional.linear``).

    None when the chain starts from a local name or anything but an import.
    An expansion's own ``aten.X``/``torch.X`` come back as ``__aten__.X``/``__torch__.X``.
    """
    parts = []
    root = node
    while isinstance(root, ast.Attribute):
        parts.append(root.attr)
        root = root.value
    if not isinstance(root, ast.Name):
        return None
    name = root.id
    if name in (ATEN, TORCH):
        head: str | None = name
    elif is_local(name):
        return None
    else:
        head = imports.get(name)
        if head is None:
            return None
    parts.append(head)
    return ".".join(reversed(parts))


def normalise_dotted(dotted: str) -> str:
    """One spelling per function: ``__torch__.X`` and ``torch.functional.X`` are ``torch.X``."""
    if dotted.startswith(TORCH + "."):
        dotted = "torch." + dotted[len(TORCH) + 1:]
    if dotted.startswith("torch.functional."):
        dotted = "torch." + dotted[len("torch.functional."):]
    return dotted


@dataclass(frozen=True)
class Unsupported:
    why: str


def bind(wrapper: Wrapper, call: ast.Call, receiver: ast.expr | None) -> dict[str, ast.expr] | Unsupported:
    """Match the call's arguments to the wrapper's signature, as Python would."""
    spec = wrapper.arguments
    positional = [a.arg for a in spec.posonlyargs + spec.args]
    defaults = dict(zip(positional[len(positional) - len(spec.defaults):], spec.defaults))
    for argument, default in zip(spec.kwonlyargs, spec.kw_defaults):
        if default is not None:
            defaults[argument.arg] = default
    given = ([receiver] if receiver is not None else []) + list(call.args)
    if any(isinstance(a, ast.Starred) for a in given) or any(k.arg is None for k in call.keywords):
        return Unsupported("`*` and `**` unpacking in a call")
    bound: dict[str, ast.expr] = {}
    for name, value in zip(positional, given):
        bound[name] = value
    extra = given[len(positional):]
    if spec.vararg is not None:
        bound[spec.vararg.arg] = ast.Tuple(elts=list(extra), ctx=ast.Load())
    elif extra:
        return Unsupported(f"takes at most {len(positional)} positional arguments")
    allowed = set(positional) | {a.arg for a in spec.kwonlyargs}
    for keyword in call.keywords:
        assert keyword.arg is not None
        if keyword.arg not in allowed:
            return Unsupported(f"no parameter named `{keyword.arg}`")
        if keyword.arg in bound:
            return Unsupported(f"`{keyword.arg}` is given twice")
        bound[keyword.arg] = keyword.value
    for name in list(positional) + [a.arg for a in spec.kwonlyargs]:
        if name not in bound:
            if name not in defaults:
                return Unsupported(f"missing argument `{name}`")
            bound[name] = defaults[name]
    return bound


class _Folder(ast.NodeTransformer):
    """Substitute bound arguments and fold the tests on literal arguments."""

    def __init__(self, bound: dict[str, ast.expr]):
        self.bound = bound
        self.problem: str | None = None

    def _literal(self, name: str) -> ast.Constant | None:
        value = self.bound.get(name)
        if isinstance(value, ast.Constant):
            return value
        if isinstance(value, ast.UnaryOp) and isinstance(value.operand, ast.Constant):
            return ast.Constant(value=0)  # a signed number: neither None nor false
        if isinstance(value, ast.Tuple):
            return ast.Constant(value=(1,))
        return None

    def _truth(self, test: ast.expr) -> bool | None:
        if isinstance(test, ast.Name):
            literal = self._literal(test.id)
            if literal is None:
                self.problem = f"`{test.id}` must be a literal here"
                return None
            return bool(literal.value)
        if (
            isinstance(test, ast.Compare)
            and isinstance(test.left, ast.Name)
            and len(test.ops) == 1
            and isinstance(test.ops[0], (ast.Is, ast.IsNot))
        ):
            literal = self._literal(test.left.id)
            if literal is None:
                self.problem = f"`{test.left.id}` must be a literal here"
                return None
            is_none = literal.value is None
            return is_none if isinstance(test.ops[0], ast.Is) else not is_none
        raise AssertionError(f"wrapper test not foldable: {ast.unparse(test)}")

    def visit_IfExp(self, node: ast.IfExp) -> ast.AST:
        truth = self._truth(node.test)
        if truth is None:
            return node
        return self.visit(node.body if truth else node.orelse)

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in ("aten", "torch"):
            return ast.copy_location(ast.Name(id=ATEN if node.id == "aten" else TORCH, ctx=ast.Load()), node)
        if node.id in self.bound:
            return copy.deepcopy(self.bound[node.id])
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        if isinstance(node.func, ast.Name) and node.func.id == "unsupported":
            assert isinstance(node.args[0], ast.Constant)
            self.problem = str(node.args[0].value)
            return node
        if isinstance(node.func, ast.Name) and node.func.id == "aten_reduction":
            literal = self._literal(node.args[0].id) if isinstance(node.args[0], ast.Name) else None
            if literal is None or literal.value not in REDUCTIONS:
                self.problem = "`reduction` must be the literal 'none', 'mean' or 'sum'"
                return node
            return ast.copy_location(ast.Constant(value=REDUCTIONS[literal.value]), node)
        return self.generic_visit(node)


def expand(wrapper: Wrapper, call: ast.Call, receiver: ast.expr | None = None) -> ast.expr | Unsupported:
    bound = bind(wrapper, call, receiver)
    if isinstance(bound, Unsupported):
        return bound
    template = copy.deepcopy(wrapper.template)
    for node in ast.walk(template):
        ast.copy_location(node, call)
    folder = _Folder(bound)
    result = folder.visit(template)
    if folder.problem is not None:
        return Unsupported(folder.problem)
    return ast.fix_missing_locations(result)
