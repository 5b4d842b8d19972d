"""A region holds no loops: no `for`, `while`, comprehension or generator expression.

**What.** `for` and `while` statements (and their `async` forms), list, set and
dict comprehensions, and generator expressions inside a region.

**Why.** A region compiles to one straight line of `at::` calls whose shape
does not depend on the data. A loop is either a fixed unrolling (write it out)
or control the caller owns; the caller keeps its loop and calls the region
once an iteration, which is how GPT-2's forty-eight blocks run.

**Example.**

    @ppy.opt(3)
    def stack(xs: tuple[torch.Tensor, ...]) -> torch.Tensor:
        return torch.stack([x * 2 for x in xs])     # a comprehension

**Fix.** Use the tensor op that takes the whole sequence
(`torch.stack(xs) * 2`), or loop in the caller and call the region per item.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ppy_check import messages as m, written
from ppy_check.model.builder import Analysis
from ppy_check.region import Region
from ppy_check.finding import Finding

CODE = m.LOOP
SUMMARY = "a loop or comprehension inside a region"

_COMPREHENSIONS = {
    ast.ListComp: "list comprehension",
    ast.SetComp: "set comprehension",
    ast.DictComp: "dict comprehension",
    ast.GeneratorExp: "generator expression",
}


def check(region: Region, analysis: Analysis) -> Iterator[Finding]:
    for node in region.nodes:
        if isinstance(node, (ast.For, ast.AsyncFor)):
            yield Finding(CODE, node, m.message(m.LOOP_FOR, region=region.name, target=written.unparse(node.target),
                                                iterable=written.unparse(node.iter)))
        elif isinstance(node, ast.While):
            yield Finding(CODE, node, m.message(m.LOOP_WHILE, region=region.name, test=written.unparse(node.test)))
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            iterables = ", ".join(f"`{written.unparse(g.iter)}` as `{written.unparse(g.target)}`"
                                  for g in node.generators)
            yield Finding(CODE, node, m.message(m.LOOP_COMPREHENSION, region=region.name,
                                                kind=_COMPREHENSIONS[type(node)], iterables=iterables))
