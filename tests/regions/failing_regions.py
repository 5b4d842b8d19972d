"""Regions whose statements raise for some arguments (tests/compiler/test_tracebacks.py)."""

from collections.abc import Iterator

import ppy
import torch
import torch.nn.functional as F


@ppy.opt(1)
def project(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    h = torch.relu(x)
    y = torch.matmul(h, w)
    return y * 2.0


@ppy.opt(1)
def first_part(x: torch.Tensor, parts: int) -> torch.Tensor:
    size = x.shape[0] // parts
    return torch.narrow(x, 0, 0, size)


@ppy.opt(1)
def spread(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    y = torch.relu(
        x,
    ) + torch.matmul(
        x, w)
    return y


def scaled_product(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return torch.matmul(x, w) * 2.0


@ppy.opt(1)
def through_helpers(x: torch.Tensor, w: torch.Tensor, dim: int) -> torch.Tensor:
    p = F.softmax(x, dim=dim)
    return scaled_product(p, w)


@ppy.opt(1)
def looked_up(x: torch.Tensor, name: str) -> torch.Tensor:
    if name != "x":
        raise KeyError(name)
    return x


@project.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    yield torch.randn(2, 3, device=device), torch.randn(3, 4, device=device)


@first_part.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, int]]:
    yield torch.randn(6, device=device), 2


@spread.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    yield torch.randn(3, 3, device=device), torch.randn(3, 3, device=device)


@through_helpers.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, torch.Tensor, int]]:
    yield torch.randn(2, 3, device=device), torch.randn(3, 4, device=device), -1


@looked_up.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, str]]:
    yield torch.randn(2, device=device), "x"
