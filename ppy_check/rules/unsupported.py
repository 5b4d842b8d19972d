"""Every call in a region lowers to an ATen operator.

**What.** A call with no `at::` lowering: Python builtins other than the
number ones (`print`, `range`, `tuple`), `.item()`, `.tolist()`, `.numpy()`,
numpy and other non-torch libraries, helpers ppy cannot see through (a
decorated function, a class), and torch's Python-level functions whose own
code does what a region cannot (reads a tensor's value back into Python,
loops to a length known only at run time, seeds the global generator).
Also attribute reads that have no C++ form (`x.grad`), complex literals,
dicts and sets. What does lower: every torch operator (from torch's own
schemas, shipped as `opdata.json`), the rest of torch's Python-level
functions, inlined from torch's own source (`F.cross_entropy`, `F.pad`,
`torch.split`, `torch.masked.sum`), `math.*` and
`abs`/`min`/`max`/`round`/`int`/`float`/`bool`/`len` on numbers, a dtype's
`torch.finfo(...).min` and `torch.iinfo(...).max`, `x.data`, and any
function of the project a region calls (it is inlined, and checked by the
same rules).

**Why.** The region becomes C++ that calls the dispatcher directly; there is
no interpreter left to run Python, and a value read back to the host
(`.item()`) would stall the device between every op.

**Example.**

    @ppy.opt(3)
    def norm(x: torch.Tensor) -> torch.Tensor:
        print(x.shape)                 # a Python builtin
        return x / x.abs().max().item()

**Fix.** Keep host-side work in the caller, and use tensor ops throughout
(`x / x.abs().max()`). Torch code factored into a plain helper function, or
into another region, can be called from a region as it is.
"""

from __future__ import annotations

from collections.abc import Iterator

from ppy_check import messages as m
from ppy_check.model.budgets import Budget
from ppy_check.model.builder import Analysis
from ppy_check.region import Region
from ppy_check.rules import Finding

CODE = m.UNSUPPORTED
SUMMARY = "a call or attribute in a region has no ATen lowering"


BUDGETS = {
    Budget.INT_BITS: m.BUDGET_INT_BITS, Budget.ITEMS: m.BUDGET_ITEMS, Budget.TEXT: m.BUDGET_TEXT,
    Budget.STEPS: m.BUDGET_STEPS, Budget.TIME: m.BUDGET_TIME, Budget.DEPTH: m.BUDGET_DEPTH,
    Budget.MEMORY: m.BUDGET_MEMORY,
}


def check(region: Region, analysis: Analysis) -> Iterator[Finding]:
    for item in analysis.problems.unsupported:
        template = m.UNSUPPORTED_ATTRIBUTE if item.attribute else m.UNSUPPORTED_CALL
        message = m.message(template, region=region.name, name=item.name, text=item.name, why=item.why)
        yield Finding(CODE, item.span, message.in_helper(item.context))
    for over in analysis.problems.budgets:
        if over.exceeded is None:
            message = m.message(m.BUILDER_FAILED, region=region.name, subject=over.subject, error=over.error)
        else:
            message = m.message(BUDGETS[over.exceeded.budget], region=region.name, subject=over.subject,
                                limit=over.exceeded.limit)
        yield Finding(CODE, over.span, message.in_helper(over.context))
