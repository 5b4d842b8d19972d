"""torch's Python code deciding on a run-time value (a rank, an empty input), compiled as C++ `if`s: each
sample takes a different way, and each is checked against the Python body."""

from __future__ import annotations

from collections.abc import Iterator

import ppy
import torch
import torch.nn.functional as F
from torch import Tensor


def r(*shape: int, device: str = "cpu") -> Tensor:
    return torch.randn(*shape).to(device)


@ppy.opt(2)
def response_norm(x: Tensor) -> Tensor:
    # `if input.numel() == 0: return input`, then `if dim == 3: ... else: ...` on the rank.
    return F.local_response_norm(x, 2)


@response_norm.samples
def _(device: str) -> Iterator[tuple[Tensor]]:
    yield (r(2, 4, 5, device=device),)
    yield (r(2, 4, 3, 3, device=device),)
    yield (r(1, 3, 2, 2, 2, device=device),)
    yield (r(0, 3, 4, device=device),)


@ppy.opt(2)
def batch_mean_divergence(x: Tensor, y: Tensor) -> Tensor:
    # Divides by the batch size only when the input is not 0-d.
    return F.kl_div(x.log_softmax(-1), y.softmax(-1), reduction="batchmean")


@batch_mean_divergence.samples
def _(device: str) -> Iterator[tuple[Tensor, Tensor]]:
    yield r(4, 5, device=device), r(4, 5, device=device)
    yield r(7, device=device), r(7, device=device)


@ppy.opt(2)
def implicit_dim(x: Tensor) -> Tensor:
    # Without `dim`, softmax picks one from the rank (0 for 0-, 1- and 3-d inputs, else 1), warning in Python.
    return F.softmax(x, dtype=torch.float64)


@implicit_dim.samples
def _(device: str) -> Iterator[tuple[Tensor]]:
    for shape in ((5,), (2, 3), (2, 3, 4), (2, 3, 4, 5)):
        yield (r(*shape, device=device),)


@ppy.opt(2)
def maybe_in_place(x: Tensor, in_place: bool) -> Tensor:
    # `inplace` is a run-time flag here: torch's `if inplace:` picks relu_ (writing x) or relu.
    return F.relu(x, inplace=in_place) * 2


@maybe_in_place.samples
def _(device: str) -> Iterator[tuple[Tensor, bool]]:
    yield r(4, device=device), True
    yield r(4, device=device), False


@ppy.opt(2)
def norms(x: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    # Tensor.norm's builtin takes no `dim=` without `p`: torch's Python method does, and torch.norm decides
    # between linalg.vector_norm and the older kernels on the tensor's layout and device type.
    return x.norm(), x.norm(dim=-1, keepdim=True), torch.norm(x, p=1, dim=1)


@norms.samples
def _(device: str) -> Iterator[tuple[Tensor]]:
    yield (r(3, 4, device=device),)


@ppy.opt(2)
def resized(x: Tensor) -> tuple[Tensor, Tensor]:
    # F.interpolate picks the upsampling kernel by the input's rank, at run time.
    return F.interpolate(x, scale_factor=2.0), F.interpolate(x, size=7, mode="nearest")


@resized.samples
def _(device: str) -> Iterator[tuple[Tensor]]:
    yield (r(2, 3, 5, device=device),)
    yield (r(2, 3, 4, 5, device=device),)
    yield (r(1, 2, 3, 4, 5, device=device),)
    yield (r(5, device=device),)  # a rank no kernel takes: NotImplementedError in both


@ppy.opt(2)
def resized_bilinear(x: Tensor) -> Tensor:
    return F.interpolate(x, size=(6, 9), mode="bilinear", align_corners=False)


@resized_bilinear.samples
def _(device: str) -> Iterator[tuple[Tensor]]:
    yield (r(2, 3, 4, 5, device=device),)
