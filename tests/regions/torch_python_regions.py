"""Regions calling torch's Python-level functions (losses, pooling, padding, meshgrid...): ppy inlines
torch's own source for them, folding the tests on literal arguments; each is checked against its Python body."""

from __future__ import annotations

from collections.abc import Iterator

import ppy
import torch
import torch.nn.functional as F
from torch import Tensor


def r(*shape: int, device: str = "cpu") -> Tensor:
    return torch.randn(*shape).to(device)


@ppy.opt(2)
def losses(x: Tensor, y: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    return (F.smooth_l1_loss(x, y), F.huber_loss(x, y, delta=0.5), F.l1_loss(x, y, reduction="sum"),
            F.kl_div(x.log_softmax(-1), y.softmax(-1), reduction="sum"),
            F.binary_cross_entropy_with_logits(x, y.sigmoid()))


@losses.samples
def _(device: str) -> Iterator[tuple[Tensor, Tensor]]:
    yield r(4, 5, device=device), r(4, 5, device=device)
    yield r(3, device=device), r(3, device=device)


@ppy.opt(2)
def classification(logits: Tensor, target: Tensor, probabilities: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    return (F.cross_entropy(logits, target), F.cross_entropy(logits, target, label_smoothing=0.1, ignore_index=2),
            F.nll_loss(logits.log_softmax(-1), target, reduction="sum"),
            F.binary_cross_entropy(probabilities, probabilities.detach().round()))


@classification.samples
def _(device: str) -> Iterator[tuple[Tensor, Tensor, Tensor]]:
    yield r(6, 4, device=device), torch.randint(0, 4, (6,)).to(device), torch.rand(6).to(device)


@ppy.opt(2)
def margins(a: Tensor, p: Tensor, n: Tensor, sign: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor, Tensor]:
    return (F.margin_ranking_loss(a[:, 0], p[:, 0], sign), F.triplet_margin_loss(a, p, n),
            F.soft_margin_loss(a, sign[:, None].expand_as(a)), F.hinge_embedding_loss(a, sign[:, None].expand_as(a)),
            F.cosine_embedding_loss(a, p, sign))


@margins.samples
def _(device: str) -> Iterator[tuple[Tensor, Tensor, Tensor, Tensor]]:
    yield r(5, 3, device=device), r(5, 3, device=device), r(5, 3, device=device), r(5, device=device).sign()


@ppy.opt(2)
def multi(x: Tensor, labels: Tensor, classes: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    return F.multilabel_soft_margin_loss(x, labels), F.multi_margin_loss(x, classes), F.poisson_nll_loss(x, labels)


@multi.samples
def _(device: str) -> Iterator[tuple[Tensor, Tensor, Tensor]]:
    yield r(4, 3, device=device), torch.randint(0, 2, (4, 3)).float().to(device), torch.randint(0, 3, (4,)).to(device)


@ppy.opt(2)
def activations(x: Tensor) -> tuple[Tensor, ...]:
    return (F.glu(x), F.hardtanh(x), F.relu6(x), F.elu(x), F.selu(x), F.celu(x), F.leaky_relu(x, 0.2),
            F.threshold(x, 0.1, 2.0), F.softsign(x), F.tanhshrink(x), F.softmin(x, dim=-1), F.mish(x),
            F.hardswish(x), F.hardsigmoid(x), F.normalize(x, dim=-1), F.dropout(x, 0.5, training=False))


@activations.samples
def _(device: str) -> Iterator[tuple[Tensor]]:
    yield (r(3, 4, device=device),)


@ppy.opt(2)
def images(x: Tensor, w: Tensor, b: Tensor) -> tuple[Tensor, ...]:
    columns = F.unfold(x, kernel_size=2)
    return (F.pad(x, (1, 2)), F.pad(x, (1, 1, 2, 2), mode="reflect"), columns,
            F.fold(columns, output_size=(6, 6), kernel_size=2), F.max_pool2d(x, 2), F.adaptive_avg_pool2d(x, (2, 2)),
            F.adaptive_max_pool2d(x, 3), F.group_norm(x, 2, w, b))


@images.samples
def _(device: str) -> Iterator[tuple[Tensor, Tensor, Tensor]]:
    yield r(2, 4, 6, 6, device=device), r(4, device=device), r(4, device=device)


@ppy.opt(2)
def torch_level(x: Tensor, y: Tensor, i: Tensor, j: Tensor) -> tuple[Tensor, ...]:
    rows, columns = torch.meshgrid(i, j, indexing="ij")
    at_least = torch.atleast_2d(i)  # type: ignore[no-untyped-call]  # torch's own annotations lack it
    diagonal = torch.block_diag(x, y)  # type: ignore[no-untyped-call]
    return (at_least, torch.cdist(x, y), torch.einsum("ij,kj->ik", x, y),
            torch.tensordot(x, y, dims=([1], [1])), diagonal, rows, columns, *torch.split(x, 2))


@torch_level.samples
def _(device: str) -> Iterator[tuple[Tensor, Tensor, Tensor, Tensor]]:
    yield r(5, 3, device=device), r(4, 3, device=device), r(3, device=device), r(2, device=device)


@ppy.opt(2)
def embeddings(indices: Tensor, table: Tensor, mean: Tensor, var: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    return (F.embedding(indices, table), F.embedding(indices, table, padding_idx=0),
            F.batch_norm(table, mean, var, training=False))


@embeddings.samples
def _(device: str) -> Iterator[tuple[Tensor, Tensor, Tensor, Tensor]]:
    yield torch.randint(0, 5, (2, 3)).to(device), r(5, 4, device=device), r(4, device=device), r(4, device=device).abs()


@ppy.opt(2)
def settings_at_run_time(x: Tensor, w: Tensor, tokens: Tensor, padding: int | None, scale: float, p: float,
                         dim: int | None) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Settings torch's code tests that are parameters, not literals: an optional narrowed on the way its `is None`
    test proves it set, a float where torch takes a list of floats, a norm's order."""
    return (F.embedding(tokens, w, padding_idx=padding), F.interpolate(x, scale_factor=scale),
            torch.norm(x, p), F.softmax(x, dim))


@settings_at_run_time.samples
def _(device: str) -> Iterator[tuple[Tensor, Tensor, Tensor, int | None, float, float, int | None]]:
    tokens = torch.tensor([[0, 2, 1]], device=device)
    yield r(1, 2, 4, 4, device=device), r(4, 3, device=device), tokens, 1, 2.0, 3.0, 1
    yield r(1, 2, 4, 4, device=device), r(4, 3, device=device), tokens, None, 2, 2, -1


@ppy.opt(2)
def selective_scan_prologue(delta: Tensor, B: Tensor, u: Tensor) -> Tensor:
    # mamba's: three operands, so torch asks opt_einsum (where installed and enabled) which two to multiply first.
    return torch.einsum("bdl,bnl,bdl->bdln", delta, B, u)


@selective_scan_prologue.samples
def _(device: str) -> Iterator[tuple[Tensor, Tensor, Tensor]]:
    yield r(2, 3, 5, device=device), r(2, 4, 5, device=device), r(2, 3, 5, device=device)


@ppy.opt(2)
def chain(a: Tensor, b: Tensor, c: Tensor, d: Tensor) -> Tensor:
    # A contraction whose best order depends on the sizes: opt_einsum multiplies b and c first for thin a and c.
    return torch.einsum("ij,jk,kl,lm->im", a, b, c, d)


@chain.samples
def _(device: str) -> Iterator[tuple[Tensor, Tensor, Tensor, Tensor]]:
    yield r(30, 2, device=device), r(2, 30, device=device), r(30, 2, device=device), r(2, 3, device=device)
    yield r(2, 30, device=device), r(30, 2, device=device), r(2, 30, device=device), r(30, 3, device=device)


@ppy.opt(2)
def sublists(x: Tensor, y: Tensor, z: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    # einsum's other spelling: each operand followed by its subscripts as numbers (0-25 "A"-"Z", 26-51 "a"-"z").
    return (torch.einsum(x, [0, 1], y, [1, 2], [0, 2]), torch.einsum(x, [0, Ellipsis], z, [1, Ellipsis], [0, 1]),
            torch.einsum(x, [27, 1], y, [1, 40], z, [27, 1]))


@sublists.samples
def _(device: str) -> Iterator[tuple[Tensor, Tensor, Tensor]]:
    yield r(3, 4, device=device), r(4, 5, device=device), r(3, 4, device=device)
