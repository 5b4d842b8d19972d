"""fairseq's utilities as first written: ``make_positions``, the label-smoothed NLL loss, the tanh
GELU (``gelu_accurate``, which caches its constant on the function), the sinusoidal positional
embedding's table (``SinusoidalPositionalEmbedding.get_embedding``, a static method) and the ONNX-aware
``softmax``.

Changed from the project's code: ``import ppy``, ``@ppy.opt(3)`` and parameter annotations only.
"""

import math
from typing import Optional

import ppy
import torch
import torch.nn.functional as F

KIND: dict[str, str] = {}


@ppy.opt(3)
def make_positions(tensor: torch.Tensor, padding_idx: int, onnx_trace: bool = False) -> torch.Tensor:
    """Replace non-padding symbols with their position numbers.

    Position numbers begin at padding_idx+1. Padding symbols are ignored.
    """
    # The series of casts and type-conversions here are carefully
    # balanced to both work with ONNX export and XLA. In particular XLA
    # prefers ints, cumsum defaults to output longs, and ONNX doesn't know
    # how to handle the dtype kwarg in cumsum.
    mask = tensor.ne(padding_idx).int()
    return (torch.cumsum(mask, dim=1).type_as(mask) * mask).long() + padding_idx


@make_positions.samples
def _(device):
    tokens = torch.randint(2, 20, (3, 7), device=device)
    tokens[0, 5:] = 1
    tokens[2, 3:] = 1
    yield tokens, 1


@ppy.opt(3)
def label_smoothed_nll_loss(lprobs: torch.Tensor, target: torch.Tensor, epsilon: float,
                            ignore_index: Optional[int] = None, reduce: bool = True) -> tuple[torch.Tensor, torch.Tensor]:
    if target.dim() == lprobs.dim() - 1:
        target = target.unsqueeze(-1)
    nll_loss = -lprobs.gather(dim=-1, index=target)
    smooth_loss = -lprobs.sum(dim=-1, keepdim=True)
    if ignore_index is not None:
        pad_mask = target.eq(ignore_index)
        nll_loss.masked_fill_(pad_mask, 0.0)
        smooth_loss.masked_fill_(pad_mask, 0.0)
    else:
        nll_loss = nll_loss.squeeze(-1)
        smooth_loss = smooth_loss.squeeze(-1)
    if reduce:
        nll_loss = nll_loss.sum()
        smooth_loss = smooth_loss.sum()
    eps_i = epsilon / (lprobs.size(-1) - 1)
    loss = (1.0 - epsilon - eps_i) * nll_loss + eps_i * smooth_loss
    return loss, nll_loss


@label_smoothed_nll_loss.samples
def _(device):
    lprobs = torch.log_softmax(torch.randn(12, 9, device=device), dim=-1)
    target = torch.randint(0, 9, (12,), device=device)
    target[3] = 1
    yield lprobs, target, 0.1
    yield lprobs, target, 0.1, 1
    yield lprobs, target, 0.2, None, False


@ppy.opt(3)
def gelu_accurate(x: torch.Tensor) -> torch.Tensor:
    if not hasattr(gelu_accurate, "_a"):
        gelu_accurate._a = math.sqrt(2 / math.pi)
    return (
        0.5 * x * (1 + torch.tanh(gelu_accurate._a * (x + 0.044715 * torch.pow(x, 3))))
    )


@gelu_accurate.samples
def _(device):
    yield torch.randn(4, 10, device=device),


@ppy.opt(3)
def get_embedding(num_embeddings: int, embedding_dim: int, padding_idx: Optional[int] = None) -> torch.Tensor:
    """Build sinusoidal embeddings.

    This matches the implementation in tensor2tensor, but differs slightly
    from the description in Section 3.5 of "Attention Is All You Need".
    """
    half_dim = embedding_dim // 2
    emb = math.log(10000) / (half_dim - 1)
    emb = torch.exp(torch.arange(half_dim, dtype=torch.float) * -emb)
    emb = torch.arange(num_embeddings, dtype=torch.float).unsqueeze(
        1
    ) * emb.unsqueeze(0)
    emb = torch.cat([torch.sin(emb), torch.cos(emb)], dim=1).view(
        num_embeddings, -1
    )
    if embedding_dim % 2 == 1:
        # zero pad
        emb = torch.cat([emb, torch.zeros(num_embeddings, 1)], dim=1)
    if padding_idx is not None:
        emb[padding_idx, :] = 0
    return emb


@get_embedding.samples
def _(device):
    yield 10, 8, 1
    yield 6, 7


@ppy.opt(3)
def softmax(x: torch.Tensor, dim: int, onnx_trace: bool = False) -> torch.Tensor:
    if onnx_trace:
        return F.softmax(x.float(), dim=dim)
    else:
        return F.softmax(x, dim=dim, dtype=torch.float32)


@softmax.samples
def _(device):
    yield torch.randn(3, 7, device=device), -1
    yield torch.randn(3, 7, device=device, dtype=torch.float64), 0, True
