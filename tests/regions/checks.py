"""A region's own checks: `assert`s and `if ...: raise` on shapes, ranks, numbers and dtypes, compiled as checks
that raise Python's exception with Python's message. Each region's samples pass its checks (`--ppy-verify`);
tests/compiler/test_checks.py makes the calls that fail them, holding each exception to Python's, and runs the
asserts under `python -O`, which skips them.

PYTEST_DONT_REWRITE: named on pytest's command line this file is imported as a test module, and pytest's rewritten
asserts would add their own explanation to the messages the tests hold to Python's."""

from __future__ import annotations

from collections.abc import Iterator

import ppy
import torch
import torch.nn.functional as F
from torch import Tensor, nn


def r(*shape: int, device: str = "cpu") -> Tensor:
    return torch.randn(*shape).to(device)


@ppy.opt(3)
def last_dim(x: Tensor, dim: int) -> Tensor:
    assert x.shape[-1] == dim
    return x * 2


@last_dim.samples
def _(device: str) -> Iterator[tuple[Tensor, int]]:
    yield r(2, 3, device=device), 3


@ppy.opt(3)
def rank_four(q: Tensor) -> Tensor:
    assert q.ndim == 4, "expected (batch, heads, seq, dim)"
    return q.transpose(1, 2)


@rank_four.samples
def _(device: str) -> Iterator[tuple[Tensor]]:
    yield (r(2, 3, 4, 5, device=device),)


@ppy.opt(3)
def image_input(x: Tensor, scale: float) -> Tensor:
    if x.dim() != 4:
        raise ValueError(f"expected 4D input, got {x.dim()}D input of shape {x.shape}")
    if scale <= 0:
        raise ValueError(f"scale must be positive, got {scale}")
    return F.avg_pool2d(x, 2) * scale


@image_input.samples
def _(device: str) -> Iterator[tuple[Tensor, float]]:
    yield r(1, 2, 4, 4, device=device), 0.5
    yield r(2, 1, 6, 6, device=device), 3


@ppy.opt(3)
def heads_divide(x: Tensor, heads: int, causal: bool) -> Tensor:
    # `and`/`or`/`not` of host tests; the second test reads `x.shape[2]` only where Python would.
    assert heads > 0 and x.shape[-1] % heads == 0, f"{x.shape[-1]} features do not split into {heads} heads"
    if not (x.ndim == 3 or x.ndim == 4 and x.shape[1] == 1):
        raise RuntimeError("expected (batch, seq, features) or (batch, 1, seq, features)")
    if causal and x.shape[-2] > 1024:
        raise NotImplementedError(f"causal attention over {x.shape[-2]} positions")
    return x.unflatten(-1, (heads, -1)).softmax(-1).flatten(-2)  # type: ignore[no-untyped-call, no-any-return]


@heads_divide.samples
def _(device: str) -> Iterator[tuple[Tensor, int, bool]]:
    yield r(2, 5, 8, device=device), 2, True
    yield r(2, 1, 5, 6, device=device), 3, False


@ppy.opt(3)
def float_only(x: Tensor, w: Tensor) -> Tensor:
    # Type tests the parameters' types answer, and dtype and device tests of run-time values.
    assert torch.is_tensor(x) and isinstance(w, torch.Tensor)
    if not torch.is_tensor(w):
        raise TypeError("w must be a tensor")
    if not x.is_floating_point() or x.dtype != w.dtype:
        raise TypeError(f"expected two floating tensors of one dtype, got {x.dtype} and {w.dtype}")
    assert x.device == w.device, "x and w are on different devices"
    return x @ w


@float_only.samples
def _(device: str) -> Iterator[tuple[Tensor, Tensor]]:
    yield r(2, 3, device=device), r(3, 4, device=device)


def _check_pair(a: Tensor, b: Tensor) -> None:
    # A helper's checks are the region's.
    if a.shape != b.shape:
        raise ValueError(f"shapes differ: {a.shape} and {b.shape}")


@ppy.opt(3)
def through_helper(a: Tensor, b: Tensor) -> Tensor:
    _check_pair(a, b)
    return (a - b).square().mean()


@through_helper.samples
def _(device: str) -> Iterator[tuple[Tensor, Tensor]]:
    yield r(3, 4, device=device).requires_grad_(), r(3, 4, device=device).requires_grad_()


class Scale(nn.Module):
    """A module whose forward checks its input against an attribute."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim
        self.weight = nn.Parameter(torch.ones(dim))

    @ppy.opt(3)
    def forward(self, x: Tensor) -> Tensor:
        assert x.shape[-1] == self.dim, f"expected {self.dim} features, got {x.shape[-1]}"
        return x * self.weight


@Scale.forward.samples
def _(device: str) -> Iterator[tuple[Scale, Tensor]]:
    yield Scale(4).to(device), r(2, 4, device=device)


@ppy.opt(3)
def optional_given(x: Tensor, mask: Tensor | None, p: float) -> Tensor:
    # `is not None` of an Optional and a float's range are host tests.
    assert mask is not None, "this region takes a mask"
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be in [0, 1], got {p}")
    return x * p


@optional_given.samples
def _(device: str) -> Iterator[tuple[Tensor, Tensor | None, float]]:
    yield r(3, device=device), r(3, device=device), 0.5
    yield r(3, device=device), r(3, device=device), 1


def _matrix(t: Tensor, name: str) -> None:
    assert t.ndim == 2, f"{name} must be a matrix, not {t.ndim}-D"


@ppy.opt(3)
def two_matrices(a: Tensor, b: Tensor) -> Tensor:
    # One helper's assert, called twice (its model reused for the second call).
    _matrix(a, "a")
    _matrix(b, "b")
    return a @ b


@two_matrices.samples
def _(device: str) -> Iterator[tuple[Tensor, Tensor]]:
    yield r(2, 3, device=device), r(3, 4, device=device)


@ppy.opt(3)
def named_value(x: Tensor, name: str, reduction: str) -> Tensor:
    # A run-time str in a message: all of it, a NUL included (a C string would end there), and torch's own
    # check of `reduction` in F.mse_loss's Python code, whose message formats it too.
    if x.ndim != 2:
        raise ValueError(f"got {name}!")
    return F.mse_loss(x, x, reduction=reduction)


@named_value.samples
def _(device: str) -> Iterator[tuple[Tensor, str, str]]:
    yield r(2, 3, device=device), "a\x00b", "mean"


@ppy.opt(3)
def shown_dtype(x: Tensor) -> Tensor:
    # A dtype known only at run time, formatted as Python's str() does (`torch.float8_e4m3fn`, not the C++ name).
    if x.ndim != 0:
        raise TypeError(f"unsupported dtype {x.dtype}")
    return x


@shown_dtype.samples
def _(device: str) -> Iterator[tuple[Tensor]]:
    yield (torch.tensor(0.5, device=device),)


@ppy.opt(3)
def echoed(x: Tensor, text: str) -> tuple[str, int]:
    # A str with a lone surrogate has no UTF-8 the C++ could hold: the Python body takes that call.
    return text, x.ndim


@echoed.samples
def _(device: str) -> Iterator[tuple[Tensor, str]]:
    yield r(2, device=device), "a\u00e9"
