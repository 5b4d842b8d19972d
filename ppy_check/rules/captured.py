"""A region reads only its parameters, its own locals, modules and literal constants.

**What.** A free name that is not a module (`torch`, `F`, `math`) and not a
module-level literal constant (`EPS = 1e-5`, `SHAPE = (2, 3)`): a module-level
tensor, a name imported from another module, a variable of an enclosing
function (a closure, even one that shadows a module constant), or an
attribute of a non-tensor parameter such as `self.weight`. A module-level
name is a constant only when nothing can rebind it: one assignment of a
literal, no `global` of it in any function, no later assignment, import or
`def` of the same name, no `globals()["NAME"] = ...` or `exec("NAME = ...")`
in the module, and no `from m import *` after it (which may also rebind any
builtin a region calls). What Python can still rebind at run time is guarded
when the region runs (README: "Names Python can rebind").

**Why.** A region's only inputs are its parameters. A captured tensor would
be baked into the build (every layer would need its own) or read behind the
compiler's back, and a captured value that changes would silently go stale.
This is the identity-guarding and recompiling that `torch.compile` does for
`self.weight`; ppy avoids it by making weights parameters.

**Example.**

    W = torch.randn(64, 64)

    @ppy.opt(3)
    def project(x: torch.Tensor) -> torch.Tensor:
        return x @ W                    # module-level tensor

**Fix.** Pass it in: `def project(x: torch.Tensor, w: torch.Tensor)` and call
`project(x, W)`.
"""

from __future__ import annotations

from collections.abc import Iterator

from ppy_check import messages as m
from ppy_check.model.builder import Analysis
from ppy_check.model.problems import CaptureOrigin
from ppy_check.region import Region
from ppy_check.rules import Finding

CODE = m.CAPTURED
SUMMARY = "a region reads a name that is not a parameter, a local, a module or a literal constant"


def check(region: Region, analysis: Analysis) -> Iterator[Finding]:
    name = region.name
    for capture in analysis.problems.captures:
        origin = capture.origin
        if origin is CaptureOrigin.GLOBAL:
            message = m.message(m.CAPTURED_GLOBAL, region=name, name=capture.name, line=capture.detail)
        elif origin is CaptureOrigin.IMPORTED:
            message = m.message(m.CAPTURED_IMPORTED, region=name, name=capture.name, origin=capture.detail)
        elif origin is CaptureOrigin.CLOSURE:
            message = m.message(m.CAPTURED_CLOSURE, region=name, name=capture.name, scope=capture.detail)
        elif origin is CaptureOrigin.ATTRIBUTE:
            message = m.message(m.CAPTURED_ATTRIBUTE,
                region=name, name=capture.name, attr=capture.detail, text=f"{capture.name}.{capture.detail}")
        elif origin is CaptureOrigin.REBOUND and capture.star is not None:
            message = m.message(m.CAPTURED_STAR, region=name, name=capture.name, module=capture.star, line=capture.detail)
        elif origin is CaptureOrigin.REBOUND:
            message = m.message(m.CAPTURED_REBOUND, region=name, name=capture.name, how=capture.how, line=capture.detail)
        else:
            message = m.message(m.CAPTURED_UNDEFINED, region=name, name=capture.name)
        yield Finding(CODE, capture.span, message.in_helper(capture.context))
