"""Idioms real model code writes, compiled: each is checked against its Python body on its samples
(``pytest --ppy-verify``; tests/compiler/test_idioms.py builds this module and compares values and gradients)."""

from __future__ import annotations

import functools
import operator
from collections.abc import Iterator
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
    return act(x), apply(act, x), softmax(x, dim=0)


@partial_activations.samples
def _(device: str) -> Iterator[tuple[Tensor]]:
    yield (r(3, 4, device=device),)


@ppy.opt(2)
def reduced(a: Tensor, b: Tensor, c: Tensor, n: int) -> tuple[Tensor, Tensor, int]:
    # Python's order: the running value, then each item; with an initial value, it comes first.
    return (functools.reduce(torch.add, (a, b, c)), reduce(operator.mul, [a, b], 2.0),
            reduce(operator.mul, (a.shape[0], a.shape[1]), n))


@reduced.samples
def _(device: str) -> Iterator[tuple[Tensor, Tensor, Tensor, int]]:
    yield r(3, 4, device=device), r(3, 4, device=device), r(3, 4, device=device), 3
