"""torch's Python checks whose f-string messages format run-time floats, tuples and sizes: each region's samples
run, and tests/compiler/test_library_messages.py makes the calls that raise, holding each message to Python's."""

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
    yield r(2, 3, 4, 4, device=device), 0.25
    yield r(2, 3, 4, 4, device=device), 1


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
    return F.affine_grid(theta, size, align_corners=False)  # type: ignore[arg-type]


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


@ppy.opt(1)
def norms(x: Tensor, p: float) -> Tensor:
    # Tensor.norm is torch/_tensor.py's, as in Python: torch.norm, then linalg.vector_norm, with their messages (an
    # int tensor's), not the builtin norm.ScalarOpt_dim's; F.normalize calls it too.
    return x.norm() + x.norm(p, dim=-1).sum() + F.normalize(x).sum()  # type: ignore[no-any-return]


@norms.samples
def _(device: str) -> Iterator[tuple[Tensor, float]]:
    yield r(2, 3, device=device), 2.0
    yield r(2, 4, device=device), 3


@ppy.opt(1)
def spectrum(x: Tensor) -> Tensor:
    # Tensor.stft is torch.stft, which pads a centred input in Python before the builtin sees it.
    return x.stft(4, return_complex=True).abs()  # type: ignore[no-any-return]


@spectrum.samples
def _(device: str) -> Iterator[tuple[Tensor]]:
    yield (r(16, device=device),)
    yield (r(2, 16, device=device),)


@ppy.opt(1)
def norm_forms(x: Tensor, p: float, n: int, d: int, sizes: tuple[int, ...]) -> Tensor:
    # The spellings of Tensor.norm, split and unflatten, each run through torch/_tensor.py as Python runs them.
    y = x.norm() + x.norm(2) + x.norm(p) + x.norm(dim=-1).sum() + x.norm(2, -1, keepdim=True).sum()
    y = y + x.norm(float("inf")) + x.norm("fro") + x.norm(p, d, True, dtype=torch.float64).sum()
    y = y + x.norm(p=1, dim=(0, 1)) + x.norm("nuc") + x.norm(dim=(0, 1)) + x.norm(p, dim=(0,))[0]
    parts = x.split(n, d)  # type: ignore[no-untyped-call]
    other = x.split(sizes)  # type: ignore[no-untyped-call]
    return y + parts[0].sum() + other[0].sum() + x.unflatten(0, sizes).sum()  # type: ignore[no-any-return, no-untyped-call]


@norm_forms.samples
def _(device: str) -> Iterator[tuple[Tensor, float, int, int, tuple[int, ...]]]:
    yield r(4, 6, device=device), 3.0, 2, 1, (2, 2)
    yield r(4, 6, device=device), 2, 3, 0, (2, 2)
