"""A region holds no branches: no `if`, conditional expression, `match`, `and`/`or`, `try`, `assert` or `raise`.

**What.** Any construct whose path depends on a value: `if` statements and
`x if c else y`, `match`, the short-circuiting `and`/`or`, `try`, and
`assert`/`raise` (each a hidden `if`), and a chained comparison of tensors
(`0 < x < 1` is `(0 < x) and (x < 1)`). A chained comparison of numbers
(`0 < n < 4`) is plain arithmetic and allowed.

**Why.** One build serves every call, so the code cannot depend on values
known only at run time. Reading a tensor's value to decide also forces a
device sync. Data-dependent choices belong in tensor ops (`torch.where`,
masks) and configuration choices in the caller, or in a parameter that an op
takes (`is_causal=causal`).

**Example.**

    @ppy.opt(3)
    def act(x: torch.Tensor, fast: bool) -> torch.Tensor:
        if fast:                       # a branch
            return F.relu(x)
        return F.gelu(x)

**Fix.** Write two regions and let the caller choose, or pass the choice to
an op that takes it (`F.gelu(x, approximate=mode)`), or select with
`torch.where(mask, a, b)`.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from typing import Any

from ppy_check import messages as m
from ppy_check.model.builder import Analysis
from ppy_check.region import Region
from ppy_check.rules import Finding

CODE = m.BRANCH
SUMMARY = "a branch (if, conditional expression, match, and/or, try, assert, raise) inside a region"


def _short(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 50 else text[:47] + "..."


def _if(name: str, node: ast.If) -> m.Message:
    return m.message(m.BRANCH_STATEMENT, region=name, keyword="if", test=_short(node.test))


def _if_expression(name: str, node: ast.IfExp) -> m.Message:
    return m.message(m.BRANCH_EXPRESSION, region=name, test=_short(node.test))


def _bool_op(name: str, node: ast.BoolOp) -> m.Message:
    op = "and" if isinstance(node.op, ast.And) else "or"
    return m.message(m.BRANCH_BOOLOP, region=name, op=op, text=_short(node))


def _match(name: str, node: ast.Match) -> m.Message:
    return m.message(m.BRANCH_MATCH, region=name, subject=_short(node.subject))


def _try(name: str, node: ast.AST) -> m.Message:
    return m.message(m.BRANCH_TRY, region=name)


def _assert(name: str, node: ast.Assert) -> m.Message:
    return m.message(m.BRANCH_ASSERT, region=name, test=_short(node.test))


def _raise(name: str, node: ast.Raise) -> m.Message:
    text = f"raise {_short(node.exc)}" if node.exc is not None else "raise"
    return m.message(m.BRANCH_RAISE, region=name, text=text)


_MESSAGES: dict[type, Callable[[str, Any], m.Message]] = {
    ast.If: _if, ast.IfExp: _if_expression, ast.BoolOp: _bool_op, ast.Match: _match,
    ast.Try: _try, ast.TryStar: _try, ast.Assert: _assert, ast.Raise: _raise,
}


def check(region: Region, analysis: Analysis) -> Iterator[Finding]:
    for node in region.nodes:
        message = _MESSAGES.get(type(node))
        if message is not None:
            yield Finding(CODE, node, message(region.name, node))
    for span, text in analysis.problems.branches:
        yield Finding(CODE, span, m.message(m.BRANCH_CHAINED, region=region.name, text=text))
