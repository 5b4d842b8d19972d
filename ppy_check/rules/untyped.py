"""Every parameter and the return of a region carry a type a region can take.

**What.** A parameter or the return without an annotation, or annotated with a
type outside the region types: `torch.Tensor`, `int`, `float`, `bool`, `str`,
`torch.dtype`, `torch.device`, `X | None` (or `Optional[X]`) of these, and
tuples of these (`tuple[torch.Tensor, int]`, `tuple[int, ...]`). A return may
also be `None`. `*args` and `**kwargs` are refused. (Helpers a region calls
need no annotations: their parameters take the types of the arguments.)

**Why.** The compiler turns each parameter into one C++ argument
(`const at::Tensor&`, `int64_t`, `at::Scalar` for a `float`, which Python
lets be an `int`, `std::optional<...>`) and the return into an `at::Tensor`
or a `std::tuple`. Without the type there is no signature to build, and one
build must serve every call. A call whose arguments are not exactly of their
annotated types (a `bool` for an `int`, a list for a tuple, a tensor
subclass) runs the Python body, so the answer is always Python's.

**Example.**

    @ppy.opt(3)
    def scale(x, factor: float):          # `x` has no annotation
        return x * factor

**Fix.** Annotate it: `def scale(x: torch.Tensor, factor: float) -> torch.Tensor:`.
"""

from __future__ import annotations

from collections.abc import Iterator

from ppy_check import messages as m
from ppy_check.model.builder import Analysis
from ppy_check.region import Region
from ppy_check.rules import Finding

CODE = m.UNTYPED
SUMMARY = "a parameter or the return lacks a type a region can take"


def check(region: Region, analysis: Analysis) -> Iterator[Finding]:
    for param in region.params:
        if param.node.annotation is None:
            yield Finding(CODE, param.node, m.message(m.PARAM_UNANNOTATED, region=region.name, name=param.name))
        elif param.problem is not None:
            annotation = _text(param.node.annotation)
            yield Finding(CODE, param.node, m.message(m.PARAM_BAD_TYPE, 
                region=region.name, name=param.name, annotation=annotation, why=param.problem))
    arguments = region.node.args
    for star, arg in (("*", arguments.vararg), ("**", arguments.kwarg)):
        if arg is not None:
            yield Finding(CODE, arg, m.message(m.VARIADIC, region=region.name, star=star, name=arg.arg))
    if region.node.returns is None:
        yield Finding(CODE, region.node, m.message(m.RETURN_UNANNOTATED, region=region.name))
    elif region.returns_problem is not None:
        yield Finding(CODE, region.node.returns, m.message(m.RETURN_BAD_TYPE, 
            region=region.name, annotation=_text(region.node.returns), why=region.returns_problem))


def _text(node: object) -> str:
    import ast

    assert isinstance(node, ast.expr)
    return ast.unparse(node)
