"""The README's block of regions calling regions and a helper: each compiles and matches its Python body."""

from __future__ import annotations

import math

import ppy
import torch
import torch.nn.functional as F


def rotate(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:  # a plain helper
    half = x.shape[-1] // 2
    a, b = x[..., :half], x[..., half:]
    return torch.cat((a * cos - b * sin, a * sin + b * cos), -1)


@ppy.opt(3)
def attention(x: torch.Tensor, qkv_w: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor, heads: int) -> torch.Tensor:
    q, k, v = F.linear(x, qkv_w).reshape(*x.shape[:-1], 3, heads, -1).transpose(1, 3).unbind(2)
    scale = 1.0 / math.sqrt(q.shape[-1])
    y = F.scaled_dot_product_attention(rotate(q, cos, sin), rotate(k, cos, sin), v, scale=scale, is_causal=True)
    return y.transpose(1, 2).reshape(*x.shape)


@ppy.opt(3)
def mlp(x: torch.Tensor, up: torch.Tensor, down: torch.Tensor) -> torch.Tensor:
    return F.linear(F.silu(F.linear(x, up)), down)


@ppy.opt(3)
def block(x: torch.Tensor, qkv_w: torch.Tensor, up: torch.Tensor, down: torch.Tensor,
          cos: torch.Tensor, sin: torch.Tensor, heads: int, eps: float) -> torch.Tensor:
    x = x + attention(F.rms_norm(x, x.shape[-1:], eps=eps), qkv_w, cos, sin, heads)
    return x + mlp(F.rms_norm(x, x.shape[-1:], eps=eps), up, down)


def _inputs(device: str) -> tuple[torch.Tensor, ...]:
    width, heads, length = 8, 2, 5
    angles = torch.rand(length, width // heads // 2)
    cos, sin = angles.cos(), angles.sin()
    return tuple(t.to(device) for t in (torch.randn(2, length, width), torch.randn(3 * width, width),
                                         torch.randn(16, width), torch.randn(width, 16), cos, sin))


@block.samples
def _(device: str):  # type: ignore[no-untyped-def]
    x, qkv_w, up, down, cos, sin = _inputs(device)
    yield x, qkv_w, up, down, cos, sin, 2, 1e-6


@attention.samples
def _(device: str):  # type: ignore[no-untyped-def]
    x, qkv_w, _, _, cos, sin = _inputs(device)
    yield x, qkv_w, cos, sin, 2


@mlp.samples
def _(device: str):  # type: ignore[no-untyped-def]
    x, _, up, down, _, _ = _inputs(device)
    yield x, up, down
