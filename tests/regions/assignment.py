"""Assignments that bind one value to several names: each compiles and computes what its Python body computes.

Each region here was once accepted by ppy-check and then failed to build: a
temporary took the first name's variable while another name still read it
(`'ppy_t2' was not declared`). `pytest --ppy-verify` checks each against its
Python body on its samples.
"""

from __future__ import annotations

import ppy
import torch


def r(*shape: int, device: str = "cpu") -> torch.Tensor:
    return torch.randn(*shape).to(device)


@ppy.opt(2)
def chained_shape_element(x: torch.Tensor, n: int) -> torch.Tensor:
    h = w = x.shape[1]
    return x.reshape(n, h, w) * w


@chained_shape_element.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield r(2, 3, 3, device=device), 2


@ppy.opt(2)
def chained_tuple_targets(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    a, b = c, d = x.sum(), x.mean()
    return a, b, c, d


@chained_tuple_targets.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield (r(3, 4, device=device),)


@ppy.opt(2)
def augmented_chained_name(x: torch.Tensor) -> torch.Tensor:
    h = w = x.shape[0]
    h += 1
    return x.new_zeros(h, w) + w


@augmented_chained_name.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield (r(3, device=device),)


@ppy.opt(2)
def shape_element_in_several_ops(x: torch.Tensor) -> torch.Tensor:
    rows = x.shape[0]
    y = x.reshape(rows, -1) * rows
    return y.sum(0) / rows + x.new_ones(rows).sum()


@shape_element_in_several_ops.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield (r(2, 3, 2, device=device),)


@ppy.opt(2)
def chained_tensors_written_in_place(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    a = b = x.clone()
    a.mul_(2)
    b += 1
    return a + b, b


@chained_tensors_written_in_place.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield (r(3, device=device),)


@ppy.opt(2)
def tuple_item_read_later(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    t = (x.sum(), 3)
    u = t[0]
    return t[0] * t[1], u


@tuple_item_read_later.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield (r(3, device=device),)


@ppy.opt(2)
def one_temporary_unpacked_twice(x: torch.Tensor) -> torch.Tensor:
    p, q = (x.sum(),) * 2
    return p - q * 2


@one_temporary_unpacked_twice.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield (r(3, device=device),)


@ppy.opt(2)
def chained_store_and_name(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    y = x.clone()
    y[0] = z = x[1].sum()
    return y, z


@chained_store_and_name.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield (r(3, 2, device=device),)
