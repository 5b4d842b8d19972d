"""A region computes with values of the types Python and torch take.

**What.** A call no torch overload accepts (wrong arity, a missing or
unexpected keyword, a `str` where a tensor goes), an operator torch refuses
for its operands, a name used before it is assigned, a return that does not
match the annotation, an int literal beyond the 64 bits torch takes, an
operation on literals that always raises, a method called where torch has a
property (`x.mT()`).

**Why.** The Python body would raise a TypeError, a ValueError or an
UnboundLocalError when it runs. ppy resolves every call against torch's own
overloads, in the order torch's argument parser tries them, before anything
is compiled; a call that matches none has no C++ to become.

Under mypy, a call of a function mypy checks whose arguments do not bind
(`F.softmax(x, axis=-1)`) is mypy's own `[call-arg]` error alone; the plugin
does not say it again.

**Example.**

    @ppy.opt(3)
    def scale(x: torch.Tensor, n: int) -> torch.Tensor:
        return x.reshape(n, "rows")          # no overload takes a str here

**Fix.** Pass what the operator takes (the message lists torch's overloads),
or fix the annotation. For a property called as a method, `ppy-check --fix
--unsafe-fixes` removes the call (unsafe: the Python body raised a TypeError
there, and now it goes on).
"""

from __future__ import annotations

from collections.abc import Iterator

from ppy_check import messages as m
from ppy_check.model.builder import Analysis
from ppy_check.region import Region
from ppy_check.finding import Finding

CODE = m.TYPE
SUMMARY = "a call, operator or return whose types Python or torch would refuse"


def check(region: Region, analysis: Analysis) -> Iterator[Finding]:
    for problem in analysis.problems.types:
        message = m.message(m.TYPE_PROBLEM, region=region.name, subject=problem.subject, why=problem.why)
        yield Finding(CODE, problem.span, message.in_helper(problem.context), problem.fix)
