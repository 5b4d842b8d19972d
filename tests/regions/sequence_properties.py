"""Indexing, slicing, tuples, shapes and strings with run-time values, one region per construct: each returns what
its Python body returns.

tests/compiler/test_sequence_properties.py calls every region here on many seeded inputs biased toward the edges (negative
and out-of-range indices, None bounds, zero and negative steps, empty tuples) and holds each to Python's own result,
or exception type and message, and to the arguments' contents after the call. The samples below are plain cases.
"""

from __future__ import annotations

from typing import Optional

import torch

import ppy


def _t(*shape: int) -> torch.Tensor:
    return torch.arange(float(torch.Size(shape).numel())).reshape(shape)


@ppy.opt(2)
def index_int(x: torch.Tensor, i: int) -> torch.Tensor:
    return x[i]


@index_int.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield _t(3, 4), 1


@ppy.opt(2)
def index_two_ints(x: torch.Tensor, i: int, j: int) -> torch.Tensor:
    return x[i, j]


@index_two_ints.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield _t(3, 4), 1, -1


@ppy.opt(2)
def slice_bounds(x: torch.Tensor, a: int, b: int) -> torch.Tensor:
    return x[a:b]


@slice_bounds.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield _t(5, 2), 1, 3


@ppy.opt(2)
def slice_step(x: torch.Tensor, a: int, b: int, s: int) -> torch.Tensor:
    return x[a:b:s]


@slice_step.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield _t(7, 2), 1, 6, 2


@ppy.opt(2)
def slice_optional(x: torch.Tensor, a: Optional[int], b: Optional[int], s: Optional[int]) -> torch.Tensor:
    return x[a:b:s]


@slice_optional.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield _t(7, 2), None, 5, 2


@ppy.opt(2)
def slice_second_dim(x: torch.Tensor, a: Optional[int], b: Optional[int], s: Optional[int]) -> torch.Tensor:
    return x[:, a:b:s]


@slice_second_dim.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield _t(2, 7), 1, None, 3


@ppy.opt(2)
def ellipsis_index(x: torch.Tensor, i: int) -> torch.Tensor:
    return x[..., i]


@ellipsis_index.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield _t(2, 3, 4), -1


@ppy.opt(2)
def none_then_index(x: torch.Tensor, i: int) -> torch.Tensor:
    return x[None, i]


@none_then_index.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield _t(3, 4), 2


@ppy.opt(2)
def index_then_none(x: torch.Tensor, i: int) -> torch.Tensor:
    return x[:, None, i]


@index_then_none.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield _t(3, 4), 2


@ppy.opt(2)
def index_mix(x: torch.Tensor, i: int, a: Optional[int], b: Optional[int]) -> torch.Tensor:
    return x[i, None, a:b, ...]


@index_mix.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield _t(3, 4, 2), 0, 1, 3


@ppy.opt(2)
def index_ellipsis_slice(x: torch.Tensor, i: int, a: Optional[int], s: Optional[int]) -> torch.Tensor:
    return x[..., a::s, i]


@index_ellipsis_slice.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield _t(3, 4, 2), 0, 1, 2


@ppy.opt(2)
def write_slice_float(x: torch.Tensor, a: Optional[int], b: Optional[int], s: Optional[int], v: float) -> torch.Tensor:
    x[a:b:s] = v
    return x.clone()


@write_slice_float.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield _t(5, 2), 1, 4, 2, 9.5


@ppy.opt(2)
def write_slice_tensor(x: torch.Tensor, a: Optional[int], b: Optional[int], v: torch.Tensor) -> torch.Tensor:
    x[a:b] = v
    return x


@write_slice_tensor.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield _t(5, 2), 1, 3, torch.ones(2)


@ppy.opt(2)
def write_index(x: torch.Tensor, i: int, j: int, v: float) -> None:
    x[i, j] = v


@write_index.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield _t(3, 4), 1, -1, 2.5


@ppy.opt(2)
def write_index_add(x: torch.Tensor, i: int, v: float) -> None:
    x[..., i] += v


@write_index_add.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield _t(3, 4), 1, 2.5


@ppy.opt(2)
def tuple_index(t: tuple[int, ...], i: int) -> int:
    return t[i]


@tuple_index.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield (1, 2, 3), 1


@ppy.opt(2)
def tuple_slice(t: tuple[int, ...], a: Optional[int], b: Optional[int], s: Optional[int]) -> tuple[int, ...]:
    return t[a:b:s]


@tuple_slice.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield (1, 2, 3, 4), 0, None, 2


@ppy.opt(2)
def shape_index(x: torch.Tensor, i: int) -> int:
    return x.shape[i]


@shape_index.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield _t(2, 3), -1


@ppy.opt(2)
def shape_slice(x: torch.Tensor, a: Optional[int], b: Optional[int], s: Optional[int]) -> tuple[int, ...]:
    return tuple(x.shape[a:b:s])


@shape_slice.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield _t(2, 3, 4), None, None, -1


@ppy.opt(2)
def size_of_dim(x: torch.Tensor, i: int) -> int:
    return x.size(i)


@size_of_dim.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield _t(2, 3), -2


@ppy.opt(2)
def tuple_len(t: tuple[int, ...]) -> int:
    return len(t)


@tuple_len.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield (1, 2),


@ppy.opt(2)
def tuple_concat(t: tuple[int, ...], u: tuple[int, ...]) -> tuple[int, ...]:
    return t + u


@tuple_concat.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield (1, 2), (3,)


@ppy.opt(2)
def tuple_repeat(t: tuple[int, ...], n: int) -> tuple[int, ...]:
    return t * n


@tuple_repeat.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield (1, 2), 3


@ppy.opt(2)
def tuple_repeat_left(t: tuple[int, ...], n: int) -> tuple[int, ...]:
    return n * t


@tuple_repeat_left.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield (1, 2), 2


@ppy.opt(2)
def tuple_compare(t: tuple[int, ...], u: tuple[int, ...]) -> tuple[bool, bool, bool, bool, bool, bool]:
    return t < u, t <= u, t > u, t >= u, t == u, t != u


@tuple_compare.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield (1, 2), (1, 3)


@ppy.opt(2)
def unpack_first(t: tuple[int, ...]) -> tuple[int, tuple[int, ...]]:
    a, *rest = t
    return a, tuple(rest)


@unpack_first.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield (1, 5, 2),


@ppy.opt(2)
def unpack_ends(t: tuple[int, ...]) -> tuple[int, int, int]:
    a, *rest, b, c = t
    return a, b, c


@unpack_ends.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield (1, 5, 2),


@ppy.opt(2)
def unpack_exact(t: tuple[int, ...]) -> int:
    a, b = t
    return a - b


@unpack_exact.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield (1, 5),


@ppy.opt(2)
def reshape_star(x: torch.Tensor, t: tuple[int, ...]) -> torch.Tensor:
    return x.reshape(*t, -1)


@reshape_star.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield _t(2, 6), (3,)


@ppy.opt(2)
def view_tuple(x: torch.Tensor, t: tuple[int, ...]) -> torch.Tensor:
    return x.view(t)


@view_tuple.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield _t(2, 6), (3, 4)


@ppy.opt(2)
def permute_star(x: torch.Tensor, t: tuple[int, ...]) -> torch.Tensor:
    # An empty `t` calls `permute()`: Python's TypeError, raised by a compiled check.
    return x.permute(*t)


@permute_star.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield _t(2, 3, 4), (2, 0, 1)


@ppy.opt(2)
def shape_host_math(x: torch.Tensor, n: int, k: int) -> tuple[int, int, int]:
    return x.shape[0] // n, -(-x.shape[-1] // n), x.numel() % k


@shape_host_math.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield _t(6, 4), 4, 5


@ppy.opt(2)
def shape_concat(x: torch.Tensor, t: tuple[int, ...]) -> tuple[int, ...]:
    return x.shape[:-1] + t


@shape_concat.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield _t(6, 4), (2,)


@ppy.opt(2)
def shape_compare(x: torch.Tensor, t: tuple[int, ...]) -> tuple[bool, bool]:
    return x.shape == t, x.shape < t


@shape_compare.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield _t(6, 4), (6, 4)


@ppy.opt(2)
def string_equal(s: str) -> tuple[bool, bool, bool]:
    return s == "mean", s != "sum", s in ("sum", "mean")


@string_equal.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield "mean",
