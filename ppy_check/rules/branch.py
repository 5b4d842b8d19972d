"""A region holds no branches: no `if`, conditional expression, `match`, `and`/`or`, `try`, or `raise` outside a check.

**What.** A branch is any construct that picks which code runs from a value:
`if` statements and `x if c else y`, `match`, the short-circuiting `and`/`or`,
`try`, a `raise` outside a check, and a chained comparison of tensors (`0 < x
< 1` is `(0 < x) and (x < 1)`). A chained comparison of numbers (`0 < n < 4`)
is plain arithmetic and allowed.

A check is not a branch: an `assert test[, message]`, or an `if test:` whose
body is only a `raise` (no `elif`, no `else`). It stops the call or lets it go
on, so the region stays one straight line, and it compiles: where `test` is
built from host values (ints, floats, bools, shapes, ranks, dtypes, devices,
`x is None` of an Optional, `isinstance(x, ...)` and `torch.is_tensor(x)`,
which the types answer, and `and`/`or`/`not` of these, short-circuiting as
Python's do), the compiled region raises Python's exception (`ValueError`,
`TypeError`, `RuntimeError`, `IndexError`, `KeyError`, `AssertionError`,
`NotImplementedError`) with Python's message (a string, or an f-string of
ints, floats, bools, strings, dtypes and shapes, computed only when the check
fails). Asserts are skipped under `python -O`, as Python skips them. A check
is reported here when it cannot compile: its test reads a tensor's value
(`assert (x >= 0).all()`), it raises another exception (a class of your own),
or its message is one ppy cannot build as Python does (a format spec, `!r`).

Nor is an `if` or `x if c else y` inside a helper the region calls whose test
is known where the region is built: a literal argument (`helper(x, True)`, a
default), a value folded from literals, None passed for an Optional. It picks
its way then, as torch's own Python code is folded, and the compiled region
holds that way alone. The same test on a value known only at run time (a
`bool` parameter of the region passed on to the helper) is a branch, on
every call that passes it.

**Why.** One build serves every call, so the code cannot depend on values
known only at run time. Reading a tensor's value to decide also forces a
device sync: a check on one would copy the value back and wait for it on
every call. Data-dependent choices belong in tensor ops (`torch.where`,
masks) and configuration choices in the caller, or in a parameter that an op
takes (`is_causal=causal`).

**Example.**

    @ppy.opt(3)
    def act(x: torch.Tensor, fast: bool) -> torch.Tensor:
        if fast:                       # a branch
            return F.relu(x)
        return F.gelu(x)

    @ppy.opt(3)
    def attend(attn: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        if mask is not None:           # a branch on an Optional
            attn = attn + mask
        return attn.softmax(-1)

    @ppy.opt(3)
    def norm(x: torch.Tensor, dim: int) -> torch.Tensor:
        assert x.shape[-1] == dim      # a check: compiles
        assert (x > 0).all()           # a check on a tensor's value: reported
        return x / x.sum(-1, keepdim=True)

**Fix.** Write two regions and let the caller choose, or pass the choice to
an op that takes it (`F.gelu(x, approximate=mode)`), or select with
`torch.where(mask, a, b)`. Move a check on a tensor's value to the caller
(or test a shape, rank or dtype instead), and raise a builtin exception. A
branch on whether an argument is None (`x is None`, `x is not None`, an
Optional parameter tested as a truth value, a helper like `exists(x)` that
returns `x is not None`, or `a if mask is None else b`) is no choice
`torch.where` can make: write two regions, one taking the argument and one
without it, and call the one that fits from the caller's branch, or pass a
neutral default instead of None (a zero mask, a zero bias), which leaves the
result as it was.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from typing import Any

from ppy_check import messages as m
from ppy_check import written
from ppy_check.compat import TRY_STATEMENTS
from ppy_check.finding import Finding
from ppy_check.model import types as t
from ppy_check.model.builder import Analysis
from ppy_check.region import Region, check_parts, is_check
from ppy_check.scope import BindingKind

CODE = m.BRANCH
SUMMARY = "a branch (if, conditional expression, match, and/or, try, raise outside a check) inside a region"


def _short(node: ast.AST) -> str:
    text = written.unparse(node)
    return text if len(text) <= 50 else text[:47] + "..."


def _if(region: Region, node: ast.If) -> m.Message:
    name = _none_tested(region, node.test)
    if name is not None:
        return m.message(m.BRANCH_OPTIONAL, region=region.name, construct="`if`", test=_short(node.test), name=name)
    return m.message(m.BRANCH_STATEMENT, region=region.name, keyword="if", test=_short(node.test))


def _if_expression(region: Region, node: ast.IfExp) -> m.Message:
    name = _none_tested(region, node.test)
    if name is not None:
        return m.message(m.BRANCH_OPTIONAL, region=region.name, construct="conditional expression",
                         test=_short(node.test), name=name)
    return m.message(m.BRANCH_EXPRESSION, region=region.name, test=_short(node.test))


def _none_tested(region: Region, test: ast.expr) -> str | None:
    """The name a test asks "is it None?" of, where it does: `x is None`, `x is not None`, `not x`, `x` for an
    Optional parameter, or a module-level helper that returns `arg is (not) None` (`exists(x)`). torch.where
    selects between two tensors; it cannot stand in for an argument that may be missing."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _none_tested(region, test.operand)
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], (ast.Is, ast.IsNot)):
        left, right = test.left, test.comparators[0]
        # A name, or an attribute path (`self.gamma is not None`: an Optional weight of a module region).
        if _is_none(right) and isinstance(left, (ast.Name, ast.Attribute)):
            return ast.unparse(left)
        if _is_none(left) and isinstance(right, (ast.Name, ast.Attribute)):
            return ast.unparse(right)
        return None
    if isinstance(test, ast.Name):
        optional = any(p.name == test.id and isinstance(p.type, t.OptionalT) for p in region.params)
        return test.id if optional else None
    if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and len(test.args) == 1 and \
            not test.keywords and isinstance(test.args[0], ast.Name) and _tests_none(region, test.func.id):
        return test.args[0].id
    return None


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _tests_none(region: Region, helper: str) -> bool:
    """Whether the module-level function ``helper`` only returns whether its one parameter is None."""
    binding = region.scope.bindings.get(helper)
    function = binding.node if binding is not None and binding.kind is BindingKind.FUNCTION else None
    if not isinstance(function, ast.FunctionDef) or len(function.args.args) != 1:
        return False
    body = [statement for statement in function.body if not _is_docstring(statement)]
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        return False
    returned = body[0].value
    parameter = function.args.args[0].arg
    return isinstance(returned, ast.Compare) and len(returned.ops) == 1 and \
        isinstance(returned.ops[0], (ast.Is, ast.IsNot)) and _is_none(returned.comparators[0]) and \
        isinstance(returned.left, ast.Name) and returned.left.id == parameter


def _is_docstring(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) and \
        isinstance(statement.value.value, str)


def _bool_op(region: Region, node: ast.BoolOp) -> m.Message:
    op = "and" if isinstance(node.op, ast.And) else "or"
    return m.message(m.BRANCH_BOOLOP, region=region.name, op=op, text=_short(node))


def _match(region: Region, node: ast.Match) -> m.Message:
    return m.message(m.BRANCH_MATCH, region=region.name, subject=_short(node.subject))


def _try(region: Region, node: ast.AST) -> m.Message:
    return m.message(m.BRANCH_TRY, region=region.name)


def _raise(region: Region, node: ast.Raise) -> m.Message:
    text = f"raise {_short(node.exc)}" if node.exc is not None else "raise"
    return m.message(m.BRANCH_RAISE, region=region.name, text=text)


_MESSAGES: dict[type, Callable[[Region, Any], m.Message]] = {
    ast.If: _if, ast.IfExp: _if_expression, ast.BoolOp: _bool_op, ast.Match: _match,
    ast.Raise: _raise, **{statement: _try for statement in TRY_STATEMENTS},
}


def check(region: Region, analysis: Analysis) -> Iterator[Finding]:
    # A check is no branch: the builder compiles it (or says, through analysis.problems, why it cannot).
    checks = [node for node in region.nodes if isinstance(node, (ast.Assert, ast.If)) and is_check(node)]
    own = {id(node) for check in checks for node in (check, *check_parts(check))}
    # Nor is an `if` of a helper whose test the builder knew (a literal argument): it picked its way at build time.
    own.update(node for node, _, _ in analysis.decided)
    for node in region.nodes:
        message = _MESSAGES.get(type(node))
        if message is not None and id(node) not in own:
            yield Finding(CODE, node, message(region, node))
    for span, text in analysis.problems.branches:
        yield Finding(CODE, span, text)
