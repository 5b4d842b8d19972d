"""torch's Python checks whose f-string messages format run-time floats, tuples and sizes: each region's samples
run, and tests/test_library_messages.py makes the calls that raise, holding each message to Python's."""

from __future__ import annotations

from collections.abc import Iterator

import ppy
import torch
import torch.nn.functional as F
from torch import Tensor


def r(*shape: int, device: str = "cpu") -> Tensor:
    return torch.randn(*shape).to(device)


@ppy.opt(1)
def dropout_p(x: Tensor, p: float) -> Tensor:
    # `{p}` of a float parameter, which may hold an int: Python prints 1.5, 2, 1e+300, inf.
    return F.dropout(x, p, False) + F.dropout2d(x, p, False) + F.alpha_dropout(x, p, False)


@dropout_p.samples
def _(device: str) -> Iterator[tuple[Tensor, float]]:
    yield r(2, 3, 4, device=device), 0.25
    yield r(2, 3, 4, device=device), 1


@ppy.opt(1)
def batch_norm_training(x: Tensor, mean: Tensor, var: Tensor, eps: float) -> Tensor:
    # `{size}` of `input.size()`, a torch.Size of run-time length; `{eps}`, a float.
    return F.batch_norm(x, mean.clone(), var.clone(), training=True, eps=eps)


@batch_norm_training.samples
def _(device: str) -> Iterator[tuple[Tensor, Tensor, Tensor, float]]:
    yield r(4, 3, device=device), r(3, device=device), r(3, device=device).abs(), 1e-5


@ppy.opt(1)
def instance_norm_training(x: Tensor) -> Tensor:
    return F.instance_norm(x, use_input_stats=True)


@instance_norm_training.samples
def _(device: str) -> Iterator[tuple[Tensor]]:
    yield (r(2, 3, 5, device=device),)


@ppy.opt(1)
def ranking(x1: Tensor, x2: Tensor, target: Tensor, margin: float) -> Tensor:
    # Three torch.Sizes in one message.
    return F.margin_ranking_loss(x1, x2, target, margin)


@ranking.samples
def _(device: str) -> Iterator[tuple[Tensor, Tensor, Tensor, float]]:
    yield r(5, device=device), r(5, device=device), r(5, device=device).sign(), 0.5


@ppy.opt(1)
def triplet(a: Tensor, p: Tensor, n: Tensor, margin: float) -> Tensor:
    return F.triplet_margin_loss(a, p, n, margin=margin)


@triplet.samples
def _(device: str) -> Iterator[tuple[Tensor, Tensor, Tensor, float]]:
    yield r(3, 4, device=device), r(3, 4, device=device), r(3, 4, device=device), 1.0


@ppy.opt(1)
def affine(theta: Tensor, size: tuple[int, int, int, int]) -> Tensor:
    # `{size}`, a tuple of known length, and `{theta.shape}`.
    return F.affine_grid(theta, size, align_corners=False)


@affine.samples
def _(device: str) -> Iterator[tuple[Tensor, tuple[int, int, int, int]]]:
    yield r(1, 2, 3, device=device), (1, 1, 2, 2)



@ppy.opt(1)
def resized(x: Tensor) -> Tensor:
    # `{list(input.shape[2:])}`: a list made of a slice of a torch.Size.
    return F.interpolate(x, size=(4, 4))


@resized.samples
def _(device: str) -> Iterator[tuple[Tensor]]:
    yield (r(1, 2, 3, 3, device=device),)


@ppy.opt(1)
def masked_total(x: Tensor, mask: Tensor, dim: int) -> Tensor:
    # `[{-ndim}, {ndim - 1}]`: arithmetic on a rank.
    return torch.masked.sum(x, dim, mask=mask)


@masked_total.samples
def _(device: str) -> Iterator[tuple[Tensor, Tensor, int]]:
    yield r(2, 3, device=device), r(2, 3, device=device) > 0, 1
