"""Idioms real model code writes, compiled: each is checked against its Python body on its samples
(``pytest --ppy-verify``; tests/compiler/test_idioms.py builds this module and compares values and gradients)."""

from __future__ import annotations

import functools
import operator
from collections.abc import Iterator, Sequence
from functools import partial, reduce

import ppy
import torch
import torch.nn.functional as F
from torch import Tensor


def r(*shape: int, device: str = "cpu", dtype: torch.dtype = torch.float32) -> Tensor:
    return torch.randn(*shape, dtype=dtype).to(device)


def apply(function, x):  # type: ignore[no-untyped-def]  # a helper a function is passed to
    return function(x)


@ppy.opt(2)
def promoted_sum(a: Tensor, b: Tensor) -> Tensor:
    # The dtype both promote to, folded where the region is built into one torch.promote_types call.
    dtype = reduce(torch.promote_types, (a.dtype, b.dtype))
    return a.to(dtype) + b.to(dtype)


@promoted_sum.samples
def _(device: str) -> Iterator[tuple[Tensor, Tensor]]:
    yield r(3, 4, device=device), r(3, 4, device=device, dtype=torch.float64)
    yield r(3, 4, device=device, dtype=torch.float16), r(4, device=device)


@ppy.opt(2)
def partial_activations(x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    act = partial(F.gelu, approximate="tanh")
    softmax = functools.partial(torch.softmax, dim=-1)
    # A partial called directly, passed to a helper, and with its keyword overridden by the call's.
    return act(x), apply(act, x), softmax(x, dim=0)  # type: ignore[no-untyped-call]


@partial_activations.samples
def _(device: str) -> Iterator[tuple[Tensor]]:
    yield (r(3, 4, device=device),)


@ppy.opt(2)
def reduced(a: Tensor, b: Tensor, c: Tensor, n: int) -> tuple[Tensor, Tensor, int]:
    # Python's order: the running value, then each item; with an initial value, it comes first. (typeshed types
    # the second as the initial value's float.)
    return (functools.reduce(torch.add, (a, b, c)), reduce(operator.mul, [a, b], 2.0),
            reduce(operator.mul, (a.shape[0], a.shape[1]), n))  # type: ignore[return-value]


@reduced.samples
def _(device: str) -> Iterator[tuple[Tensor, Tensor, Tensor, int]]:
    yield r(3, 4, device=device), r(3, 4, device=device), r(3, 4, device=device), 3


def append_dims(x, target_dims):  # type: ignore[no-untyped-def]
    # k-diffusion's, less its check of a negative count (a raise on a run-time value)
    dims_to_append = target_dims - x.ndim
    return x[(...,) + (None,) * dims_to_append]


@ppy.opt(2)
def appended_dims(x: Tensor, sigma: Tensor, n: int) -> tuple[Tensor, Tensor, Tensor]:
    # The count known only at run time (a rank, an int parameter); a negative one adds none, as Python's repeat.
    scaled = x * append_dims(sigma, x.ndim)  # type: ignore[no-untyped-call]
    return scaled, sigma[(None,) * n + (..., None)], x[(slice(None), None) + n * (None,)]


@appended_dims.samples
def _(device: str) -> Iterator[tuple[Tensor, Tensor, int]]:
    yield r(2, 3, 4, device=device), r(2, device=device), 2
    yield r(2, 3, device=device), r(2, 3, device=device), -1
    yield r(2, device=device), r(2, device=device), 0


@ppy.opt(2)
def ranges(x: Tensor) -> tuple[Tensor, Tensor, tuple[int, ...]]:
    # range() taken whole over a rank known only at run time.
    return (x.permute(tuple(range(len(x.shape)))[::-1]), x.sum(dim=tuple(range(1, len(x.shape)))),
            tuple(range(x.ndim - 1, -1, -1)))


@ranges.samples
def _(device: str) -> Iterator[tuple[Tensor]]:
    yield (r(2, 3, 4, device=device),)
    yield (r(5, device=device),)


@ppy.opt(2)
def shape_extremes(x: Tensor) -> tuple[int, int, int]:
    # Python's ValueError for an empty one (a 0-d tensor's shape): tests/compiler/test_idioms.py.
    return min(x.shape), max(x.shape[1:] + (1,)), max((x.shape[0], 3))


@shape_extremes.samples
def _(device: str) -> Iterator[tuple[Tensor]]:
    yield (r(4, 2, 5, device=device),)
    yield (r(7, device=device),)


@ppy.opt(2)
def number_tensors(x: Tensor, f: float) -> Tensor:
    # A `float` parameter may hold an int: int64 then, as eager infers, else the default dtype.
    return x + torch.tensor(f)


@number_tensors.samples
def _(device: str) -> Iterator[tuple[Tensor, float]]:
    yield r(3, device=device), 2.5
    yield r(3, device=device), 2
    yield torch.arange(3).to(device), 2


@ppy.opt(2)
def texts(n: int, flag: bool) -> tuple[str, str, str]:
    return "ab" * n, n * "-", "x" * flag


@texts.samples
def _() -> Iterator[tuple[int, bool]]:
    yield 3, True
    yield -2, False
    yield 0, True


@ppy.opt(2)
def contracted(a: Tensor, b: Tensor, n: int) -> Tensor:
    # `dims` an int known only at run time: torch's checks on it run then (a negative one, one past a rank:
    # tests/compiler/test_idioms.py).
    return torch.tensordot(a, b, dims=n)  # type: ignore[no-any-return]


@contracted.samples
def _(device: str) -> Iterator[tuple[Tensor, Tensor, int]]:
    yield r(2, 3, 4, device=device), r(3, 4, 5, device=device), 2
    yield r(2, 3, device=device), r(4, 5, device=device), 0


def doubled_unless(x: Tensor, flag: bool) -> Tensor:
    if not flag:
        return x
    return x * 2


def activation(x: Tensor, name: str = "gelu", slope: float = 0.0) -> Tensor:
    if name == "gelu":
        return F.gelu(x)
    elif name == "leaky" and slope:
        y = F.leaky_relu(x, slope)
    elif name == "leaky":
        y = F.relu(x)
    else:
        raise ValueError(f"unknown activation {name}")
    return y if slope < 0.5 else -y


def biased(x: Tensor, bias: Tensor | None, scale: float) -> Tensor:
    if bias is not None:
        x = x + bias
    return x * scale if scale != 1.0 else x


def through(x: Tensor, flag: bool) -> Tensor:
    return doubled_unless(x, flag)


@ppy.opt(2)
def helper_flags(x: Tensor, b: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    # Each test of the helpers is on a literal argument (or a default, or None for an Optional): it picks its way
    # where the region is built, and the way not taken (its `raise` too) is not compiled.
    return (doubled_unless(x, True) + doubled_unless(x, False), activation(x) + activation(x, "leaky", 0.1),
            activation(x, "leaky", 0.75) + activation(x, name="leaky"), biased(x, None, 2.0) + biased(x, b, 1.0)
            + through(x, True))


@helper_flags.samples
def _(device: str) -> Iterator[tuple[Tensor, Tensor]]:
    yield r(3, 4, device=device), r(4, device=device)


@ppy.opt(2)
def resized(x: Tensor, size: tuple[int, int]) -> tuple[Tensor, Tensor]:
    # A size of the parameter's type: each item an int, as torch's Python code asks of it item by item.
    return F.interpolate(x, size=size, mode="bilinear", align_corners=False), F.interpolate(x, size=size)


@resized.samples
def _(device: str) -> Iterator[tuple[Tensor, tuple[int, int]]]:
    yield r(2, 3, 4, 5, device=device), (6, 7)
    yield r(1, 2, 8, 8, device=device), (3, 5)


@ppy.opt(2)
def resized_by_mode(x: Tensor, size: tuple[int, int], mode: str) -> Tensor:
    # The mode known only at run time: torch's choice of operator by rank and mode, compiled as C++ `if`s (a mode
    # that takes no `align_corners`, "nearest", raises Python's ValueError: tests/compiler/test_idioms.py).
    return F.interpolate(x, size=size, mode=mode, align_corners=False)


@resized_by_mode.samples
def _(device: str) -> Iterator[tuple[Tensor, tuple[int, int], str]]:
    yield r(2, 3, 4, 5, device=device), (6, 7), "bilinear"
    yield r(2, 3, 4, 5, device=device), (3, 9), "bicubic"


@ppy.opt(2)
def shifted_by_tensor(x: Tensor, n: int) -> tuple[Tensor, Tensor]:
    # An int shifted by a tensor's values: torch's Tensor.__rlshift__ and __rrshift__.
    return (1 << x) + (n << x), (256 >> x) - (n >> x)


@shifted_by_tensor.samples
def _(device: str) -> Iterator[tuple[Tensor, int]]:
    yield torch.arange(6).to(device), 3


@ppy.opt(2)
def sublist_einsum(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    # The sublist form (operand, its dims, ..., the output's dims), and an equation with its operands in a list.
    return torch.einsum(a, [0, 1], b, [1, 2], [0, 2]), torch.einsum("ij,jk->ik", [a, b])


@sublist_einsum.samples
def _(device: str) -> Iterator[tuple[Tensor, Tensor]]:
    yield r(2, 3, device=device), r(3, 4, device=device)


@ppy.opt(2)
def weighted_bce(p: Tensor, y: Tensor, w: Tensor) -> Tensor:
    # A weight broadcast to the target's shape, as torch's Python code does.
    return F.binary_cross_entropy(p, y, weight=w)


@weighted_bce.samples
def _(device: str) -> Iterator[tuple[Tensor, Tensor, Tensor]]:
    yield torch.rand(2, 4).to(device), torch.rand(2, 4).to(device), torch.rand(4).to(device)


@ppy.opt(2)
def counted(x: Tensor) -> tuple[int, int, bool]:
    # torch.numel, a builtin with no operator behind it, is what x.numel() asks.
    return torch.numel(x), torch.numel(x[1:]), torch.numel(x) == 0


@counted.samples
def _(device: str) -> Iterator[tuple[Tensor]]:
    yield (r(3, 4, device=device),)
    yield (r(0, 2, device=device),)


@ppy.opt(2)
def joined_texts(s: str, n: int) -> tuple[str, str]:
    # A str parameter repeated by an int parameter, and text known only at run time joined.
    return s * n, s * n + "-" + s


@joined_texts.samples
def _() -> Iterator[tuple[str, int]]:
    yield "ab", 3
    yield "", 2
    yield "x", -1


@ppy.opt(2)
def sized(a: Tensor, t: Tensor, x_shape: torch.Size) -> tuple[Tensor, tuple[int, ...], tuple[int, ...]]:
    # A torch.Size parameter, a tuple of ints: its slices and sums, and itself returned, are torch.Size as in
    # Python (a plain tuple passed runs the Python body, whose answer would be tuples).
    out = a.gather(-1, t)
    return out.reshape(t.shape[0], *((1,) * (len(x_shape) - 1))), x_shape[1:] + (1,), x_shape


@sized.samples
def _(device: str) -> Iterator[tuple[Tensor, Tensor, torch.Size]]:
    yield r(20, device=device), torch.tensor([3, 0, 19], device=device), torch.Size((3, 4, 5, 5))


@ppy.opt(2)
def read_sequences(x: Tensor, shape: Sequence[int], scales: Sequence[float],
                   extra: Sequence[int] | None = None) -> Tensor:
    # Read-only sequences, each a list or a tuple: indexed, measured, unpacked and passed to torch alike.
    rows, cols = shape
    return x.reshape(shape) * scales[0] + len(scales) + rows * cols


@read_sequences.samples
def _(device: str) -> Iterator[tuple[Tensor, Sequence[int], Sequence[float], Sequence[int] | None]]:
    yield r(6, device=device), [2, 3], [1.5, 2.0], None
    yield r(6, device=device), (3, 2), (0.5,), [1]
