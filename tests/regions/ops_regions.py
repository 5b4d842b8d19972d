# mypy: allow-redefinition
# (`reassigned` binds one name to a value of another type, as a region may.)
"""A broad set of regions, one translation unit: well over a hundred ops, overloads and argument forms.

Every region registers samples; tests/compiler/test_compile_ops.py builds this file
once and checks each region against its own Python body.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Optional

import ppy
import torch
import torch.nn.functional as F

EPS: float = 1e-5
SHAPE = (2, 3, 4)


def r(*shape: int, device: str = "cpu", dtype: torch.dtype = torch.float32) -> torch.Tensor:
    return torch.randn(*shape, dtype=dtype).to(device)


def pos(*shape: int, device: str = "cpu") -> torch.Tensor:
    return (torch.rand(*shape) + 0.5).to(device)


# --- operators and elementwise math --------------------------------------------------


@ppy.opt(2)
def operators(x: torch.Tensor, y: torch.Tensor, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    a = x + y - x * y / (y.abs() + 1) + x // 2 + x % 3 + x ** 2
    b = 2 - x + 3 * y + 1.5 / (x.abs() + 1) + 2 ** x + (-x) + (+y)
    c = x @ w
    return a, b, c


@operators.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    yield r(3, 4, device=device), r(3, 4, device=device), r(4, 5, device=device)


@ppy.opt(2)
def comparisons(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    gt = x > 0
    le = x <= y
    mirrored = 0.5 < y
    mixed = (gt & le) | (mirrored ^ ~gt)
    return mixed, x == y, torch.ne(x, y)


@comparisons.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    x = r(4, 4, device=device)
    yield x, torch.where(x > 0, x, r(4, 4, device=device))


@ppy.opt(3)
def unary_math(x: torch.Tensor, p: torch.Tensor) -> torch.Tensor:
    a = torch.abs(x) + torch.exp(x) + torch.log(p) + torch.sqrt(p) + torch.rsqrt(p)
    b = torch.sin(x) + torch.cos(x) + torch.tanh(x) + torch.sigmoid(x) + torch.relu(x) + torch.erf(x)
    c = torch.floor(x) + torch.ceil(x) + torch.round(x) + torch.sign(x) + torch.reciprocal(p) + torch.neg(x)
    d = torch.exp2(x) + torch.log1p(p) + torch.expm1(x) + torch.square(x) + torch.clamp(x, -0.5, 0.5)
    e = torch.clamp_min(x, 0.1) + torch.clamp(x, max=0.2) + x.clamp(min=-0.3) + torch.trunc(x) + torch.frac(x)
    f = torch.atan2(x, p) + torch.lerp(x, p, 0.25) + torch.hypot(x, p) + torch.log2(p) + torch.log10(p)
    return a + b + c + d + e + f + torch.nan_to_num(torch.log(x), nan=0.0, neginf=-1.0)


@unary_math.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    yield r(5, 6, device=device), pos(5, 6, device=device)


@ppy.opt(3)
def methods_chain(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    z = x.mul(2).add(y, alpha=0.5).sub(1.0).div(3).pow(2).sqrt().exp().log()
    return z.addcmul(x, y, value=0.1).addcdiv(x, y.abs() + 1, value=0.2).maximum(x).minimum(y + 3)


@methods_chain.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    yield r(3, 3, device=device), r(3, 3, device=device)


# --- reductions ------------------------------------------------------------------------------


@ppy.opt(3)
def reductions(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    a = x.sum() + x.sum(1).sum() + x.sum((0, 1), keepdim=True).sum() + x.mean(-1).sum() + torch.mean(x)
    b = x.amax(0) + x.amin(dim=0) + torch.prod(x, 0) + x.std(0) + x.var(0, correction=0) + torch.logsumexp(x, 0)
    c = torch.cumsum(x, 1) + torch.cumprod(x, dim=1) + x.norm(2, 1, True) + x.norm()
    values = torch.max(x, 1).values + torch.min(x, dim=1).values
    indices = torch.argmax(x, 1) + torch.argmin(x, dim=1) + torch.max(x, 1).indices
    counts = torch.count_nonzero(x > 0, 1) + (x > 0).all(1).long() + (x > 0).any(1).long()
    return a + b.sum() + c.sum(), values, indices, counts


@reductions.samples
def _(device: str) -> Iterator[torch.Tensor]:
    yield r(4, 5, device=device)


@ppy.opt(2)
def multi_output(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    top, where = torch.topk(x, 2)
    ordered = torch.sort(x, 1, descending=True)
    std, mean = torch.std_mean(x, 1)
    low, high = torch.aminmax(x)
    smallest, at = x.min(0)
    return top + ordered.values[:, :2], where + ordered.indices[:, :2], std + mean, low + high + smallest.sum(), at


@multi_output.samples
def _(device: str) -> Iterator[torch.Tensor]:
    yield r(4, 6, device=device)


# --- shapes, views and joins --------------------------------------------------------------


@ppy.opt(2)
def shapes(x: torch.Tensor, b: int, l: int, d: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    v = x.view(b, l, d).transpose(1, 2).contiguous().view((b, d * l))
    w = x.reshape(b, l, d).permute(0, 2, 1).reshape(b, -1) + x.reshape((b, l, d)).permute((0, 2, 1)).flatten(1)
    u = x.view(b, l, d).unsqueeze(1).squeeze(1).flatten().unflatten(0, (b, l * d))  # type: ignore[no-untyped-call]
    e = x.view(b, l, d)[:, :1, :].expand(b, l, d) + x.view(b, l, d)[:, :1, :].expand_as(x.view(b, l, d))
    return v + w, u, e.repeat(1, 2, 1), torch.movedim(e, 0, 2).flip(0).roll(1, 1)


@shapes.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, int, int, int]]:
    yield r(2, 12, device=device), 2, 3, 4
    yield r(6, 10, device=device), 6, 5, 2


@ppy.opt(2)
def joins(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, tuple[torch.Tensor, ...]]:
    both = torch.cat((x, y), 0)
    listed = torch.cat([x, y], dim=1)
    stacked = torch.stack((x, y), 2)
    first, second = torch.chunk(both, 2)
    a, b, c = torch.split(x, 1, 0)
    parts = x.split([1, 2], 0)  # type: ignore[no-untyped-call]
    rows = torch.unbind(y, 1)
    return first + second + a.sum() + b.sum() + c.sum(), listed + rows[0].sum(), stacked + parts[1].sum(), torch.split(y, 2, 1)


@joins.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    yield r(3, 4, device=device), r(3, 4, device=device)


@ppy.opt(2)
def views(x: torch.Tensor, n: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    t = x.t() + x.T + x.mT.mT.t()
    narrowed = torch.narrow(x, 1, 1, n) + x.narrow(0, 0, 1).select(0, 0).sum()
    band = torch.tril(x) + torch.triu(x, 1) + torch.diagonal(x).sum() + x.diag_embed().sum()
    return t, narrowed, band, x.diagonal(0, 0, 1)


@views.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, int]]:
    yield r(4, 4, device=device), 2


@ppy.opt(2)
def indexing(x: torch.Tensor, i: int, n: int, idx: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    last = x[:, -1] + x[..., :n].sum(-1) + x[i][0]
    strided = x[1:3, ::2] + x[-2:, 1::2]
    grown = x[None] + x[:, None, :].sum(1, keepdim=True)
    gathered = x[idx] + torch.index_select(x, 0, idx) + x.gather(1, idx.view(-1, 1).expand(-1, 2))[:, :1]
    masked = x.masked_fill(x > 0, 0.0) + torch.where(x > 0, x, 0.0) + torch.where(x < 0, 1.0, x)
    return last, strided, grown, gathered, masked


@indexing.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, int, int, torch.Tensor]]:
    yield r(4, 4, device=device), 1, 2, torch.tensor([3, 0, 1, 1]).to(device)


# --- creation, dtypes and devices -------------------------------------------------------


@ppy.opt(1)
def creation(x: torch.Tensor, n: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    z = torch.zeros(n, 3, dtype=x.dtype, device=x.device) + torch.ones((n, 3), device=x.device)
    f = torch.full((n, 3), 1.5, device=x.device) + torch.zeros_like(x) + torch.ones_like(x, dtype=torch.float64).float()
    a = torch.arange(n, device=x.device) + torch.arange(1, 2 * n + 1, 2, device=x.device) * torch.arange(0.0, float(n), 1.0, device=x.device)
    e = torch.eye(n, device=x.device) + torch.linspace(0, 1, n, device=x.device) + torch.full_like(x, 2.0)[:, :n]
    return z + f, a, e, torch.tril(torch.ones(n, n, dtype=torch.bool, device=x.device))


@creation.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, int]]:
    yield r(3, 3, device=device), 3


@ppy.opt(2)
def dtypes(x: torch.Tensor, dtype: torch.dtype, i: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    wide = x.to(torch.float64) + x.double()
    narrow = x.to(dtype) + x.half().float().to(dtype)
    ints = i.long() + i.int().long() + x.long() + i.to(dtype=torch.int64)
    same = x.type_as(wide) + x.bfloat16().float().to(x.dtype).double()
    return wide, narrow, ints, same


@dtypes.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, torch.dtype, torch.Tensor]]:
    yield r(3, 3, device=device), torch.float32, torch.arange(9).view(3, 3).to(device)
    yield r(3, 3, device=device), torch.float64, torch.arange(9).view(3, 3).to(device)


# --- nn ------------------------------------------------------------------------------------------


@ppy.opt(3)
def activations(x: torch.Tensor) -> torch.Tensor:
    a = F.relu(x) + F.gelu(x) + F.gelu(x, approximate="tanh") + F.silu(x) + F.mish(x) + F.hardswish(x)
    b = F.leaky_relu(x, 0.2) + F.elu(x) + F.celu(x) + F.selu(x) + F.hardtanh(x) + F.relu6(x) + F.hardsigmoid(x)
    c = F.softplus(x) + F.logsigmoid(x) + F.softsign(x) + F.tanhshrink(x) + F.sigmoid(x) + F.tanh(x)
    d = F.softmax(x, dim=-1) + F.log_softmax(x, -1) + F.softmin(x, 1) + F.glu(x, -1).repeat(1, 2) + F.threshold(x, 0.1, 2.0)
    return a + b + c + d + F.hardshrink(x) + F.softshrink(x, 0.3)


@activations.samples
def _(device: str) -> Iterator[torch.Tensor]:
    yield r(4, 6, device=device)


@ppy.opt(3)
def norms(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, width: int, groups: int) -> torch.Tensor:
    a = F.layer_norm(x, (width,), w, b, EPS) + torch.layer_norm(x, [width], w, b) + F.layer_norm(x, (width,))
    c = F.rms_norm(x, (width,), w) + F.group_norm(x.unsqueeze(-1), groups, w, b).squeeze(-1)
    return a + c + F.normalize(x, dim=-1) + F.normalize(x, p=1.0, dim=0)


@norms.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, torch.Tensor, torch.Tensor, int, int]]:
    yield r(3, 8, device=device), r(8, device=device), r(8, device=device), 8, 2


@ppy.opt(3)
def linear_layers(x: torch.Tensor, w: torch.Tensor, b: Optional[torch.Tensor], m: torch.Tensor) -> torch.Tensor:
    y = F.linear(x, w, b) + F.linear(x, w) + torch.nn.functional.linear(x, w, bias=b)
    z = torch.matmul(x, w.t()) + torch.mm(x, w.T) + torch.addmm(y, x, w.t(), beta=0.5, alpha=2.0)
    batch = torch.bmm(m, m.transpose(1, 2)) + torch.baddbmm(m @ m.mT, m, m.mT)
    return y + z + batch.sum() + torch.outer(x[0], x[1]).sum() + torch.dot(x[0], x[1]) + torch.einsum("ij,kj->ik", x, w)


@linear_layers.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, torch.Tensor, Optional[torch.Tensor], torch.Tensor]]:
    yield r(3, 4, device=device), r(5, 4, device=device), r(5, device=device), r(2, 3, 3, device=device)
    yield r(3, 4, device=device), r(5, 4, device=device), None, r(2, 3, 3, device=device)


@ppy.opt(3)
def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool, scale: float) -> torch.Tensor:
    a = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    b = F.scaled_dot_product_attention(q, k, v, scale=scale)
    weights = torch.softmax(q @ k.transpose(-2, -1) * scale, dim=-1)
    return a + b + weights @ v


@attention.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, torch.Tensor, torch.Tensor, bool, float]]:
    yield r(1, 2, 5, 8, device=device), r(1, 2, 5, 8, device=device), r(1, 2, 5, 8, device=device), True, 0.125
    yield r(2, 2, 3, 4, device=device), r(2, 2, 3, 4, device=device), r(2, 2, 3, 4, device=device), False, 0.5


@ppy.opt(3)
def convolutions(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, s: torch.Tensor, ws: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    y = F.conv2d(x, w, b, stride=1, padding=1) + F.conv2d(x, w, b, padding=(1, 1))
    pooled = F.max_pool2d(y, 2) + F.avg_pool2d(y, 2, 2) + F.max_pool2d(y, (2, 2), stride=2)
    adaptive = F.adaptive_avg_pool2d(y, 1) + F.adaptive_avg_pool2d(y, (1, 1))
    seq = F.conv1d(s, ws, padding=1) + F.pad(s, (1, 1))[:, :, 1:-1].sum(1, keepdim=True)
    return pooled, adaptive.flatten(1), seq


@convolutions.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]]:
    yield (r(1, 2, 6, 6, device=device), r(3, 2, 3, 3, device=device), r(3, device=device),
           r(2, 3, 7, device=device), r(1, 3, 3, device=device))


@ppy.opt(3)
def embeddings_and_losses(ids: torch.Tensor, table: torch.Tensor, logits: torch.Tensor, target: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    e = F.embedding(ids, table) + F.embedding(ids, table, padding_idx=0) + table[ids]
    ce = F.cross_entropy(logits, target) + F.cross_entropy(logits, target, reduction="sum", label_smoothing=0.1)
    nll = F.nll_loss(F.log_softmax(logits, -1), target) + F.mse_loss(logits, logits.flip(0)) + F.l1_loss(logits, logits * 2)
    one_hot = F.one_hot(target, 5).float().sum()
    return e, ce + nll + one_hot


@embeddings_and_losses.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]]:
    yield (torch.tensor([[0, 2, 1], [3, 3, 0]]).to(device), r(4, 6, device=device), r(3, 5, device=device),
           torch.tensor([1, 0, 4]).to(device))


@ppy.opt(3)
def distances(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return F.cosine_similarity(x, y) + F.pairwise_distance(x, y) + torch.cdist(x, y).sum(1) + torch.dist(x, y)


@distances.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
    yield r(4, 3, device=device), r(4, 3, device=device)


@ppy.opt(2)
def special_linalg_fft(x: torch.Tensor, p: torch.Tensor, sq: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    s = torch.special.erf(x) + torch.special.expit(x) + torch.special.logit(p * 0.4) + torch.special.gammaln(p) + torch.special.xlogy(p, p)
    n = torch.linalg.norm(x) + torch.linalg.vector_norm(x, 3.0) + torch.linalg.matrix_norm(sq) + torch.linalg.det(sq)
    f = torch.fft.rfft(x).abs() + torch.fft.fft(x, dim=-1).real[..., : x.shape[-1] // 2 + 1]
    return s, n + torch.linalg.inv(sq @ sq.mT + torch.eye(3, device=sq.device)).sum(), f


@special_linalg_fft.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    yield r(3, 8, device=device, dtype=torch.float64), pos(3, 8, device=device).double(), r(3, 3, device=device, dtype=torch.float64)


# --- Python numbers, tuples, optionals and literals -------------------------------------


@ppy.opt(1)
def integers(x: torch.Tensor, n: int, m: int) -> tuple[int, int, int, float, int, bool]:
    rows = x.shape[0]
    cols = x.size(-1)
    last = x.shape[-1] + x.dim() + x.ndim + x.numel()
    floor = (-n) // m + n % m + (-n) % m + n ** 2 + m * 3 - 1
    ratio = n / m + float(n) * math.pi + EPS
    return rows * cols, last, floor, ratio, int(ratio) + (n << 2) + (n & m) + (n | 1), n > m


@integers.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, int, int]]:
    yield r(3, 5, device=device), 7, 3
    yield r(2, 2, device=device), -7, 4


@ppy.opt(2)
def optionals(x: torch.Tensor, bias: torch.Tensor | None, mode: str, inf: float) -> tuple[torch.Tensor, float]:
    y = F.gelu(x, approximate=mode)
    return F.layer_norm(y, (x.shape[-1],), None, bias) + torch.clamp(x, max=inf), float("inf") - inf


@optionals.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, torch.Tensor | None, str, float]]:
    yield r(2, 4, device=device), r(4, device=device), "tanh", 1.0
    yield r(2, 4, device=device), None, "none", float("inf")


@ppy.opt(2)
def optional_dims(x: torch.Tensor, dim: int | None, dims: tuple[int, int] | None,
                  many: tuple[int, ...] | None) -> tuple[torch.Tensor, ...]:
    # An optional int, fixed tuple or sequence into `int[1]?`/`int[]?`: the C++ view must see storage that outlives
    # the call (a lambda once returned an OptionalIntArrayRef into its own local vector).
    return (x.sum(dim), x.mean(dim=dim), torch.std(x, dim), torch.linalg.vector_norm(x, 2.0, dim=dim),
            x.var(dims, keepdim=True), x.sum(dims), x.sum(many))


@optional_dims.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, int | None, tuple[int, int] | None, tuple[int, ...] | None]]:
    yield r(2, 3, 4, device=device), 1, (0, 2), (2, 1)
    yield r(2, 3, 4, device=device), -1, (-1, 1), (0,)
    yield r(2, 3, 4, device=device), None, None, None


@ppy.opt(2)
def optional_sizes(x: torch.Tensor, n: int | None, size: tuple[int, int] | None) -> tuple[torch.Tensor, torch.Tensor]:
    # F.interpolate's run-time `if` on `size`: a value None on every way that returns needs no C++ variable.
    return F.interpolate(x, size=n), F.interpolate(x, size=size, mode="bilinear")


@optional_sizes.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, int | None, tuple[int, int] | None]]:
    yield r(1, 2, 4, 4, device=device), 3, (3, 5)
    yield r(1, 2, 4, 4, device=device), 8, (8, 2)


@ppy.opt(2)
def optional_devices(x: torch.Tensor, device: torch.device | None, pair: tuple[torch.device, int] | None,
                     devices: tuple[torch.device, ...]
                     ) -> tuple[torch.Tensor, torch.Tensor, torch.device | None, tuple[torch.device, int] | None, int]:
    # at::Device has no default constructor: an optional one, a tuple of one, a sequence of them are taken alike.
    return torch.zeros(3, device=device) + x, x.to(device), device, pair, len(devices)


@optional_devices.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, torch.device | None, tuple[torch.device, int] | None,
                                     tuple[torch.device, ...]]]:
    here = torch.device(device)
    yield r(3, device=device), here, (here, 1), (here, here)
    yield r(3, device="cpu"), None, None, ()


@ppy.opt(2)
def tuples(x: torch.Tensor, shape: tuple[int, ...], pair: tuple[torch.Tensor, int]) -> tuple[torch.Tensor, tuple[int, int], tuple[torch.Tensor, ...]]:
    y = x.view(shape) + pair[0].sum() * pair[1]
    grown = shape + (1,)
    return y.view(grown).squeeze(-1), (shape[0], pair[1]), (y, y * 2)


@tuples.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, tuple[int, ...], tuple[torch.Tensor, int]]]:
    yield r(2, 6, device=device), (3, 4), (r(2, device=device), 3)


@ppy.opt(2)
def reassigned(x: torch.Tensor, n: int) -> torch.Tensor:
    y = x * 2
    y = y.sum(0)
    n = n + 1
    y = y * n
    shape = x.shape
    shape = shape[0]
    return y + shape


@reassigned.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, int]]:
    yield r(3, 2, device=device), 4


# --- writes to parameters (not pure) -------------------------------------------------------


@ppy.opt(2)
def slot_cache(cache: torch.Tensor, k: torch.Tensor, position: int, length: int) -> torch.Tensor:
    torch.narrow(cache, 2, position, length).copy_(k)
    return torch.narrow(cache, 2, 0, position + length).sum(2)


@slot_cache.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, torch.Tensor, int, int]]:
    yield torch.zeros(1, 2, 8, 4).to(device), r(1, 2, 3, 4, device=device), 2, 3


@ppy.opt(2)
def stores(x: torch.Tensor, y: torch.Tensor, out: torch.Tensor, i: int) -> None:
    x[i] = y[0]
    x[:, 1] = 0.5
    x += y
    x.add_(y, alpha=2)
    y.mul_(3).clamp_(-1.0, 1.0)
    torch.add(x, y, out=out)
    out[0, 0] += 1.0


@stores.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, torch.Tensor, torch.Tensor, int]]:
    yield r(3, 4, device=device), r(3, 4, device=device), torch.zeros(3, 4).to(device), 2


@ppy.opt(2)
def random_in_order(x: torch.Tensor, p: float) -> tuple[torch.Tensor, torch.Tensor]:
    a = torch.randn(x.shape, device=x.device) + torch.rand_like(x) * F.dropout(x, p, training=True)
    b = torch.dropout(x, p, True) + torch.bernoulli(torch.full_like(x, 0.5)) - torch.randn_like(x)
    return a, b


@random_in_order.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, float]]:
    yield r(4, 4, device=device), 0.5


@ppy.pure
@ppy.opt(3)
def fresh_writes(x: torch.Tensor) -> torch.Tensor:
    y = x.clone()
    y.mul_(2)
    y[0] = 0.0
    z = torch.zeros(3, device=x.device)
    z += 1
    return y + z.sum()


@fresh_writes.samples
def _(device: str) -> Iterator[torch.Tensor]:
    yield r(2, 3, device=device)
