"""Python constructs the checker accepts: each compiles and computes what its Python body computes.

Every region here was once accepted by ppy-check and then refused at its
first call, or compiled to a different answer. `pytest --ppy-verify` checks
each against its Python body on its samples; tests/compiler/test_compile_ops.py
asserts each compiled.
"""

from __future__ import annotations

import math
from typing import Optional

import ppy
import torch
import torch.nn.functional as F

SCALE = 0.5


def r(*shape: int, device: str = "cpu") -> torch.Tensor:
    return torch.randn(*shape).to(device)


@ppy.opt(2)
def starred_shape(x: torch.Tensor, n: int) -> torch.Tensor:
    halves = x.reshape(*x.shape[:-1], -1, 2)
    grown = x.view(*(n, -1))
    return halves.sum(-1) + grown.sum(0).sum()


@starred_shape.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield r(2, 3, 4, device=device), 2


@ppy.opt(2)
def to_device_of(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return y.to(x.device), y.to(device=x.device, dtype=torch.float64), y.to(x)


@to_device_of.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield r(3, device=device), r(3, device=device)


@ppy.opt(2)
def repeated_tuple(x: torch.Tensor, n: int) -> torch.Tensor:
    shape = (n,) + (1,) * (x.ndim - 1)
    return x * torch.ones(shape, device=x.device)


@repeated_tuple.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield r(3, 4, 2, device=device), 3


@ppy.opt(2)
def list_indices(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return x[:, [-1], :], x[[0, 1]], x[[True, False, True]]


@list_indices.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield (r(3, 4, 5, device=device),)


@ppy.opt(2)
def chained_ints(n: int, k: int) -> tuple[bool, bool, bool]:
    return 0 < n < 4, 0 <= n <= k < 10, n not in (1, 2, 3)


@chained_ints.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 2, 5
    yield 7, 3
    yield 1, 20


@ppy.opt(2)
def optional_tests(x: torch.Tensor, b: Optional[torch.Tensor]) -> tuple[torch.Tensor, bool, bool]:
    return F.linear(x, x, b), b is None, b is not None


@optional_tests.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield r(3, 3, device=device), r(3, device=device)
    yield r(3, 3, device=device), None


@ppy.opt(2)
def unpack_star(x: torch.Tensor, dims: tuple[int, ...]) -> tuple[torch.Tensor, int]:
    first, *rest = torch.split(x, 1)
    head, *tail = dims
    return first + torch.cat(rest).sum(0), head + len(tail)


@unpack_star.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield r(4, 2, device=device), (3, 1, 2)


@ppy.opt(2)
def dict_keywords(x: torch.Tensor, out: torch.Tensor) -> torch.Tensor:
    torch.add(x, 1.0, **{"out": out})
    return out * 2


@dict_keywords.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield r(3, device=device), torch.zeros(3).to(device)


@ppy.opt(2)
def queries(x: torch.Tensor) -> tuple[int, int, int, int, bool]:
    return x.ndimension(), x.dim(), x.numel(), x.size(-1), x.is_contiguous()


@queries.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield (r(2, 3, device=device),)


@ppy.opt(2)
def int_arithmetic(x: torch.Tensor, n: int) -> tuple[torch.Tensor, int, int, int, float]:
    # n ** 2 is an int: the tensor stays int64, as in Python.
    return torch.arange(3, device=x.device) + n ** 2, -7 // n, -7 % n, abs(-n) * max(n, 3), n / 2


@int_arithmetic.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield r(1, device=device), 3
    yield r(1, device=device), -2


@ppy.opt(2)
def float_parameter(x: torch.Tensor, factor: float) -> tuple[torch.Tensor, float, torch.Tensor]:
    # An int passed for `factor` stays an int, as Python keeps it: the result stays an integer tensor.
    return x * factor, factor * 2 + 1, torch.full((2,), factor, device=x.device)


@float_parameter.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield torch.arange(3).to(device), 2
    yield torch.arange(3).to(device), 2.5
    yield r(3, device=device), -1


@ppy.opt(2)
def host_math(x: torch.Tensor, n: int, eps: float) -> tuple[torch.Tensor, float, int, int, float]:
    scale = 1.0 / math.sqrt(n)
    return x * scale * math.pi + eps, math.log(n) + math.exp(1.0), round(2.5), math.floor(-1.5), round(2.675, 2)


@host_math.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield r(3, device=device), 16, 1e-5


@ppy.opt(2)
def properties(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return x.mT, x.T, x.mT @ x


@properties.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield (r(3, 4, device=device),)


@ppy.opt(2)
def constant_strings(x: torch.Tensor) -> torch.Tensor:
    mode = f"{'tan'}h"
    return F.gelu(x, approximate=mode) * SCALE


@constant_strings.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield (r(4, device=device),)


@ppy.opt(2)
@torch.no_grad()
def without_grad(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return x @ w


@without_grad.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield r(2, 3, device=device).requires_grad_(), r(3, 2, device=device).requires_grad_()


@ppy.opt(2)
def writes_in_order(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    z = x.clone()
    z[0] += y[0]
    z[1:] *= 2
    return torch.stack((z, x.add_(y)))


@writes_in_order.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield r(3, 2, device=device), r(3, 2, device=device)


@ppy.opt(2)
def random_in_python_order(x: torch.Tensor, p: float) -> torch.Tensor:
    # Both draws are arguments of one call: Python draws the first before the second.
    return torch.add(torch.rand_like(x), torch.randn_like(x) * p)


@random_in_python_order.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield r(5, device=device), 0.5


# A sample registered with `.samples` must run, so the raising calls of the regions below (0 ** -1, 7 / 0, too
# few rows, a bad reduction, a zero slice step) are made by tests/compiler/test_host_numbers.py, against Python's message.
@ppy.opt(2)
def int_power_of_run_time_sign(a: int, b: int) -> float:
    # An int to an int power whose sign is known only at run time: `2 ** -1` is 0.5, `0 ** -1` ZeroDivisionError.
    power: float = a ** b  # typeshed's int.__pow__ of an int of unknown sign is Any
    return power


@int_power_of_run_time_sign.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 2, 10
    yield 2, -1
    yield -3, -3


@ppy.opt(2)
def ints_against_floats(a: int, b: float) -> tuple[bool, bool, bool, bool, float, float]:
    # Python compares an int with a float exactly: 2**53 + 1 is not 2.0**53.
    return a == b, a < b, b <= a, a != b, min(a, b), max(b, a)


@ints_against_floats.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 2**53 + 1, 2.0**53
    yield 2**63 - 1, 2.0**63
    yield -2**63, -2.0**63
    yield 3, math.nan
    yield -5, -5.5


@ppy.opt(2)
def int_true_division(a: int, b: int) -> float:
    # The exact quotient rounded once, as Python divides two ints; "division by zero" for b == 0.
    return a / b


@int_true_division.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield -5998386531187854997, 752350910014
    yield 2**63 - 1, -(2**62) - 3
    yield 0, -5


@ppy.opt(2)
def starred_unpack_of_run_time_length(x: torch.Tensor) -> tuple[torch.Tensor, int]:
    # Too few rows: "not enough values to unpack (expected at least 2, got 1)", as Python says it.
    first, *middle, last = x.unbind(0)
    return first + last, len(middle)


@starred_unpack_of_run_time_length.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield (r(4, 2, device=device),)


@ppy.opt(2)
def loss_of_run_time_reduction(x: torch.Tensor, y: torch.Tensor, reduction: str) -> torch.Tensor:
    # torch's own f-string message names the str: "bad is not a valid value for reduction".
    return F.mse_loss(x, y, reduction=reduction)


@loss_of_run_time_reduction.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield r(3, device=device), r(3, device=device), "sum"


@ppy.opt(2)
def optional_slice_bounds(x: torch.Tensor, a: Optional[int], b: Optional[int], s: Optional[int], v: float) -> torch.Tensor:
    # A None bound is the bound's default, as in Python (it raised TypeError compiled): read and written.
    x[a:b:s, a:] = v
    return x[:b, ::s]


@optional_slice_bounds.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield r(6, 6, device=device), None, 4, 2, 1.0
    yield r(6, 6, device=device), 1, None, None, 1.0


@ppy.opt(2)
def optional_sequence_slice_bounds(t: tuple[int, ...], x: torch.Tensor, a: Optional[int], b: Optional[int],
                                   s: Optional[int]) -> tuple[tuple[int, ...], tuple[int, ...], torch.Tensor]:
    # Slices of tuples and shapes by `int | None` bounds (once refused: "slice bounds must be ints").
    return t[a:b:s], tuple(x.shape[a:b]), x.reshape(x.shape[a:b:s] + (-1,))


@optional_sequence_slice_bounds.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield (1, 2, 3, 4), r(2, 3, 4, device=device), None, None, None
    yield (1, 2, 3, 4), r(2, 3, 4, device=device), 1, None, -1
