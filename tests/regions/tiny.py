"""A one-region module: small enough to build from scratch in a test."""

from collections.abc import Iterator

import ppy
import torch


@ppy.opt(1)
def scale_shift(x: torch.Tensor, scale: float, shift: int) -> torch.Tensor:
    return x * scale + shift


@scale_shift.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, float, int]]:
    yield torch.randn(3, 4, device=device), 0.5, 2
