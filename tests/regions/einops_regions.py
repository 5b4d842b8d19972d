"""einops with literal patterns, compiled: each region is checked against einops itself (its Python body)."""

from __future__ import annotations

from collections.abc import Iterator

import ppy
import torch
from einops import rearrange, reduce, repeat


def r(*shape: int, device: str = "cpu") -> torch.Tensor:
    return torch.randn(*shape).to(device)


@ppy.opt(2)
def split_heads(x: torch.Tensor, heads: int) -> tuple[torch.Tensor, torch.Tensor]:
    q = rearrange(x, "b n (h d) -> b h n d", h=heads)
    return q, rearrange(q, "b h n d -> b n (h d)")


@split_heads.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, int]]:
    yield r(2, 5, 12, device=device), 3


@ppy.opt(2)
def patches(image: torch.Tensor, p: int) -> torch.Tensor:
    return rearrange(image, "b c (h p1) (w p2) -> b (h w) (p1 p2 c)", p1=p, p2=p)


@patches.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, int]]:
    yield r(2, 3, 8, 12, device=device), 4


@ppy.opt(2)
def ellipsis_and_units(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    return (rearrange(x, "... (two d) -> ... two d", two=2), rearrange(x, "a ... -> ... a"),
            rearrange(x, "a b c -> a 1 b c 1"))


@ellipsis_and_units.samples
def _(device: str) -> Iterator[tuple[torch.Tensor]]:
    yield (r(3, 4, 6, device=device),)


@ppy.opt(2)
def repeats(x: torch.Tensor, n: int) -> tuple[torch.Tensor, torch.Tensor]:
    return repeat(x, "b d -> b r d", r=n), repeat(x, "b d -> (b r) d", r=2)


@repeats.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, int]]:
    yield r(3, 4, device=device), 5


@ppy.opt(2)
def reductions(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    return (reduce(x, "b n d -> b d", "mean"), reduce(x, "b (n two) d -> b n d", "max", two=2),
            reduce(x, "b n d -> d", "sum"), reduce(x, "b n d -> b", "prod"))


@reductions.samples
def _(device: str) -> Iterator[tuple[torch.Tensor]]:
    yield (r(2, 6, 3, device=device),)


# einops's own checks of the input's shape (tests/compiler/test_einops.py makes the calls that fail them).
@ppy.opt(2)
def given_lengths(x: torch.Tensor, b: int, h: int, d: int) -> torch.Tensor:
    return rearrange(x, "b (h d) -> b d h", b=b, h=h, d=d)


@given_lengths.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, int, int, int]]:
    yield r(2, 12, device=device), 2, 3, 4


@ppy.opt(2)
def unit_and_ellipsis(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return rearrange(x, "a 1 c -> c a"), rearrange(y, "a ... (c two) -> ... a c two", two=2)


@unit_and_ellipsis.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    yield r(2, 1, 3, device=device), r(2, 3, 4, device=device)


@ppy.opt(2)
def repeat_given(x: torch.Tensor, n: int, h: int) -> torch.Tensor:
    return repeat(x, "h (w two) -> h w two r", r=n, two=2, h=h)


@repeat_given.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, int, int]]:
    yield r(3, 4, device=device), 2, 3


@ppy.opt(2)
def averaged(x: torch.Tensor, two: int) -> torch.Tensor:
    return reduce(x, "b (n two) -> b n", "mean", two=two)


@averaged.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, int]]:
    yield r(3, 4, device=device), 2
