"""Regions for the no-grad fast path and the C-level entry (tests/compiler/test_fast_path.py).

Each stands for one choice the entry makes: a body that writes nothing in place and returns no view
runs below autograd and ADInplaceOrView; one that writes in place, or returns a view, only below
autograd; one that makes a tensor require grad never leaves autograd.
"""

from collections.abc import Iterator

import ppy
import torch
import torch.nn.functional as F


@ppy.opt(2)
def mlp(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, scale: float = 1.0, *, approximate: str = "tanh") -> torch.Tensor:
    h = F.linear(x, w, b).transpose(0, 1).reshape((-1,))
    return F.gelu(h * scale, approximate=approximate)


@ppy.opt(2)
def write_slot(cache: torch.Tensor, k: torch.Tensor, position: int) -> torch.Tensor:
    torch.narrow(cache, 0, position, 1).copy_(k)
    return cache.sum(0)


@ppy.opt(2)
def scale_in_place(x: torch.Tensor, by: float) -> torch.Tensor:
    x.mul_(by)
    x.add_(1.0)
    return x


@ppy.opt(2)
def windows(cache: torch.Tensor, start: int, length: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return torch.narrow(cache, 0, start, length), cache.t(), cache.detach()


@ppy.opt(2)
def written_temporary(x: torch.Tensor) -> torch.Tensor:
    y = x * 2.0
    y.add_(1.0)
    return y


@ppy.opt(2)
def makes_leaf(x: torch.Tensor, flag: bool) -> torch.Tensor:
    w = torch.ones_like(x, requires_grad=flag)
    return x * w


@ppy.opt(2)
def step_through_data(p: torch.Tensor, g: torch.Tensor, lr: float) -> torch.Tensor:
    """An optimizer's step as older code writes it: through `.data`, which autograd does not see."""
    p.data.add_(g, alpha=-lr)
    return p.data


# Samples, so that `pytest --ppy-verify` checks each against its Python body on its own.
@mlp.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    yield torch.randn(2, 4, device=device), torch.randn(3, 4, device=device), torch.randn(3, device=device)


@write_slot.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, torch.Tensor, int]]:
    yield torch.randn(3, 4, device=device), torch.randn(1, 4, device=device), 1


@scale_in_place.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, float]]:
    yield torch.randn(3, device=device), 2.0


@windows.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, int, int]]:
    yield torch.randn(4, 3, device=device), 1, 2


@written_temporary.samples
def _(device: str) -> Iterator[torch.Tensor]:
    yield torch.randn(3, device=device)


@makes_leaf.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, bool]]:
    yield torch.randn(3, device=device), True


@step_through_data.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, torch.Tensor, float]]:
    yield torch.randn(4, device=device), torch.randn(4, device=device), 0.1
