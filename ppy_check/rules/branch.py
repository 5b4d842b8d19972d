"""A region holds no branches: no `if`, conditional expression, `match`, `and`/`or`, `try`, `assert` or `raise`.

**What.** Any construct whose path depends on a value: `if` statements and
`x if c else y`, `match`, the short-circuiting `and`/`or`, `try`, and
`assert`/`raise` (each a hidden `if`).

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
from collections.abc import Iterator

from ppy_check import messages as m
from ppy_check.analysis import RegionFacts
from ppy_check.region import Region, walk_body
from ppy_check.rules import Finding

CODE = m.BRANCH
SUMMARY = "a branch (if, conditional expression, match, and/or, try, assert, raise) inside a region"


def _short(node: ast.AST) -> str:
    text = ast.unparse(node)
    return text if len(text) <= 50 else text[:47] + "..."


def check(region: Region, facts: RegionFacts) -> Iterator[Finding]:
    name = region.name
    for node in walk_body(region.node.body):
        if isinstance(node, ast.If):
            yield Finding(CODE, node, m.BRANCH_STATEMENT.format(region=name, keyword="if", test=_short(node.test)))
        elif isinstance(node, ast.IfExp):
            yield Finding(CODE, node, m.BRANCH_EXPRESSION.format(region=name, test=_short(node.test)))
        elif isinstance(node, ast.BoolOp):
            op = "and" if isinstance(node.op, ast.And) else "or"
            yield Finding(CODE, node, m.BRANCH_BOOLOP.format(region=name, op=op, text=_short(node)))
        elif isinstance(node, ast.Match):
            yield Finding(CODE, node, m.BRANCH_MATCH.format(region=name, subject=_short(node.subject)))
        elif isinstance(node, (ast.Try, ast.TryStar)):
            yield Finding(CODE, node, m.BRANCH_TRY.format(region=name))
        elif isinstance(node, ast.Assert):
            yield Finding(CODE, node, m.BRANCH_ASSERT.format(region=name, test=_short(node.test)))
        elif isinstance(node, ast.Raise):
            text = f"raise {_short(node.exc)}" if node.exc is not None else "raise"
            yield Finding(CODE, node, m.BRANCH_RAISE.format(region=name, text=text))
