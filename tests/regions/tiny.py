"""A one-region module: small enough to build from scratch in a test."""

import ppy
import torch


@ppy.opt(0)
def scale_shift(x: torch.Tensor, scale: float, shift: int) -> torch.Tensor:
    return x * scale + shift
