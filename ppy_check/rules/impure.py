"""A `@ppy.pure` region writes no memory its caller can see.

**What.** In a region marked `@ppy.pure`: an in-place op on a parameter
(`x.add_(y)`, `torch.relu_(x)`, `x.copy_(y)`), an `out=` argument, a store
(`x[i] = y`, `x += y` on a tensor), and any of these through a view of a
parameter (`torch.narrow(k_cache, 2, pos, n).copy_(k)`, `x.view(-1).zero_()`).
Which ops write and which return views comes from torch's own schemas
(`Tensor(a!)` and `Tensor(a)`), not a hand list, and from running each op
where its schema says nothing (`torch.batch_norm(..., training=True, ...)`
updates its running statistics; `x.type_as(y)` may hand back `x` itself). A
write into a tensor the region allocated itself (`x.clone().mul_(2)`) is
invisible to the caller and allowed. `pytest --ppy-verify` also checks the
promise at run time: a tensor argument whose version counter moved fails.

**Why.** `@ppy.pure` is a promise callers and tools rely on: the region can be
reordered, cached, run twice or traced, and its inputs stay as they were.
A hidden write breaks all of that, and autograd rejects some of them late.

**Example.**

    @ppy.pure
    @ppy.opt(3)
    def fill(cache: torch.Tensor, k: torch.Tensor, pos: int) -> torch.Tensor:
        torch.narrow(cache, 0, pos, 1).copy_(k)    # writes `cache` through a view
        return cache

**Fix.** Return a new tensor instead (`torch.cat((cache, k), 0)`), or drop
`@ppy.pure`: a region may write its parameters, it just cannot promise not to.
"""

from __future__ import annotations

from collections.abc import Iterator

from ppy_check import messages as m
from ppy_check.model.builder import Analysis
from ppy_check.model.ir import WriteKind
from ppy_check.region import Region
from ppy_check.rules import Finding

CODE = m.IMPURE
SUMMARY = "a @ppy.pure region writes memory its caller can see"


def check(region: Region, analysis: Analysis) -> Iterator[Finding]:
    if not region.pure:
        return
    for write in analysis.writes:
        if write.kind is WriteKind.STORE:
            message = m.message(m.IMPURE_STORE, region=region.name, text=write.text, param=write.param)
        elif write.kind is WriteKind.OUT:
            message = m.message(m.IMPURE_OUT, region=region.name, op=write.text, param=write.param)
        else:
            message = m.message(m.IMPURE_WRITE, region=region.name, op=write.text, param=write.param)
        yield Finding(CODE, write.span, message)
