"""A region holds only assignments, expressions and a return.

**What.** Constructs a region cannot hold: a nested `def` or `class`,
`lambda`, `global`/`nonlocal`, `with`, `del`, `import`, `yield`, `await`, the
walrus operator, an `async def` region, a bad `ppy.opt(...)` level or a
`compile=` that is not a literal bool. A file that does not parse is reported
here too, with the line of the error, and so is one whose bytes Python cannot
decode (not UTF-8, or not the encoding its coding comment declares). (A
decorator under `@ppy.opt` other than `@torch.no_grad()`,
`@torch.enable_grad()` or `@torch.inference_mode()` is `ppy-unsupported`: the
compiled code would leave it out.)

**Why.** A region is one straight line of tensor operations turned into one
C++ function. These constructs create scopes, manage resources, suspend or
rebind names outside the region, and have no meaning there.

**Example.**

    @ppy.opt(3)
    def apply(x: torch.Tensor) -> torch.Tensor:
        f = lambda t: t * 2            # a lambda
        return f(x)

**Fix.** Inline the code (`return x * 2`), or move it to the caller.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ppy_check import messages as m
from ppy_check.model.builder import Analysis
from ppy_check.region import Region
from ppy_check.rules import Finding

CODE = m.SYNTAX
SUMMARY = "a construct a region cannot hold, or a file that does not parse"

_CONSTRUCTS = {
    ast.FunctionDef: "a nested function `{name}`",
    ast.AsyncFunctionDef: "a nested function `{name}`",
    ast.ClassDef: "a class `{name}`",
    ast.Lambda: "a `lambda`",
    ast.Global: "`global {names}`",
    ast.Nonlocal: "`nonlocal {names}`",
    ast.With: "a `with` block",
    ast.AsyncWith: "an `async with` block",
    ast.Delete: "`del {targets}`",
    ast.Import: "an `import`",
    ast.ImportFrom: "an `import`",
    ast.Yield: "`yield`",
    ast.YieldFrom: "`yield from`",
    ast.Await: "`await`",
    ast.NamedExpr: "the walrus operator on `{target}`",
}


def check(region: Region, analysis: Analysis) -> Iterator[Finding]:
    for node, problem in region.decorator_problems:
        yield Finding(CODE, node, m.message(m.SYNTAX_DECORATOR, region=region.name, what=problem))
    if isinstance(region.node, ast.AsyncFunctionDef):
        yield Finding(CODE, region.node, m.message(m.SYNTAX_CONSTRUCT, region=region.name, what="`async def`"))
    for node in region.nodes:
        template = _CONSTRUCTS.get(type(node))
        if template is None:
            continue
        what = template.format(
            name=getattr(node, "name", ""),
            names=", ".join(getattr(node, "names", []) if isinstance(node, (ast.Global, ast.Nonlocal)) else []),
            targets=", ".join(ast.unparse(t) for t in getattr(node, "targets", [])),
            target=ast.unparse(node.target) if isinstance(node, ast.NamedExpr) else "",
        )
        yield Finding(CODE, node, m.message(m.SYNTAX_CONSTRUCT, region=region.name, what=what))
