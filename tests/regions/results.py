"""A region's result is built as Python builds it: torch.Size stays a Size, a multi-output op's result its
torch.return_types class (also inside a tuple), `tuple(...)` of either a plain tuple; `dim=None` is no list."""

from __future__ import annotations

from collections.abc import Iterator

import ppy
import torch
from torch import Tensor


def r(*shape: int, device: str = "cpu") -> Tensor:
    return torch.randn(*shape).to(device)


@ppy.opt(2)
def shapes(x: Tensor) -> tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...], tuple[int, ...]]:
    return x.shape, x.shape[1:] + (3,), (2,) + x.size(), tuple(x.shape)


@ppy.opt(2)
def named_results(x: Tensor) -> tuple[torch.Tensor, ...]:
    return torch.max(x, 1)


@ppy.opt(2)
def named_results_inside(x: Tensor) -> tuple[tuple[Tensor, Tensor], Tensor, tuple[Tensor, ...]]:
    top = x.topk(2)
    return top, x.sum(dim=None), tuple(torch.sort(x))


@shapes.samples
def _(device: str) -> Iterator[tuple[Tensor]]:
    yield (r(2, 3, 4, device=device),)


@named_results.samples
def _(device: str) -> Iterator[tuple[Tensor]]:
    yield (r(3, 5, device=device),)


@named_results_inside.samples
def _(device: str) -> Iterator[tuple[Tensor]]:
    yield (r(3, 5, device=device),)


@ppy.opt(2)
def unpacked(x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    # Python iterates a tensor along its first dimension (`iter(x.unbind(0))`).
    first, *rest, last = x
    return first, rest[0], last


@unpacked.samples
def _(device: str) -> Iterator[tuple[Tensor]]:
    yield (r(3, 2, device=device),)
    yield (r(5, device=device),)
