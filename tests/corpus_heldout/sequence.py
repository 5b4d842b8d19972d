"""Sequence mixers as first written: Hyena's FFT long convolution (HazyResearch's safari,
``fftconv``), RetNet's rotation and parallel retention (Microsoft's torchscale: ``theta_shift`` with
its helper ``rotate_every_two``, ``duplicate_interleave``, ``parallel_retention``) and MPT's ALiBi
(MosaicML's llm-foundry: ``gen_slopes``, ``build_alibi_bias``).

Changed from the projects' code: ``import ppy``, ``@ppy.opt(3)`` and parameter annotations only.
``parallel_retention`` is the method ``MultiScaleRetention.parallel_forward``: ``self.num_heads``
and ``self.head_dim`` are the parameters ``num_heads`` and ``head_dim``.
"""

import math
from typing import Optional

import ppy
import torch

KIND: dict[str, str] = {}


@ppy.opt(3)
def fftconv(u: torch.Tensor, k: torch.Tensor, D: torch.Tensor) -> torch.Tensor:
    seqlen = u.shape[-1]
    fft_size = 2 * seqlen

    k_f = torch.fft.rfft(k, n=fft_size) / fft_size
    u_f = torch.fft.rfft(u.to(dtype=k.dtype), n=fft_size)

    if len(u.shape) > 3: k_f = k_f.unsqueeze(1)
    y = torch.fft.irfft(u_f * k_f, n=fft_size, norm="forward")[..., :seqlen]

    out = y + u * D.unsqueeze(-1)
    return out.to(dtype=u.dtype)


@fftconv.samples
def _(device):
    yield torch.randn(2, 4, 16, device=device), torch.randn(4, 16, device=device) * 0.1, torch.randn(4, device=device)


def rotate_every_two(x):
    x1 = x[:, :, :, ::2]
    x2 = x[:, :, :, 1::2]
    x = torch.stack((-x2, x1), dim=-1)
    return x.flatten(-2)  # in einsum notation: rearrange(x, '... d j -> ... (d j)')\


@ppy.opt(3)
def duplicate_interleave(m: torch.Tensor) -> torch.Tensor:
    """
    A simple version of `torch.repeat_interleave` for duplicating a matrix while interleaving the copy.
    """
    dim0 = m.shape[0]
    m = m.view(-1, 1)  # flatten the matrix
    m = m.repeat(1, 2)  # repeat all elements into the 2nd dimension
    m = m.view(dim0, -1)  # reshape into a matrix, interleaving the copy
    return m


@duplicate_interleave.samples
def _(device):
    yield torch.randn(5, 4, device=device),


@ppy.opt(3)
def theta_shift(x: torch.Tensor, sin: torch.Tensor, cos: torch.Tensor) -> torch.Tensor:
    return (x * cos) + (rotate_every_two(x) * sin)


@theta_shift.samples
def _(device):
    angle = torch.rand(6, 8, device=device)
    yield torch.randn(2, 3, 6, 8, device=device), torch.sin(angle), torch.cos(angle)


@ppy.opt(3)
def parallel_retention(qr: torch.Tensor, kr: torch.Tensor, v: torch.Tensor, mask: torch.Tensor, num_heads: int,
                       head_dim: int) -> torch.Tensor:
    bsz, tgt_len, embed_dim = v.size()
    vr = v.view(bsz, tgt_len, num_heads, head_dim).transpose(1, 2)

    qk_mat = qr @ kr.transpose(-1, -2)  # bsz * m * tgt_len * tgt_len
    qk_mat = qk_mat * mask
    # invariant after normalization
    qk_mat = qk_mat / qk_mat.detach().abs().sum(dim=-1, keepdim=True).clamp(min=1, max=5e4)
    output = torch.matmul(qk_mat, vr)
    output = output.transpose(1, 2)
    return output


@parallel_retention.samples
def _(device):
    decay = torch.log(1 - 2 ** (-5 - torch.arange(2, dtype=torch.float)))
    index = torch.arange(5).to(decay)
    mask = torch.tril(torch.ones(5, 5).to(decay))
    mask = torch.masked_fill(index[:, None] - index[None, :], ~mask.bool(), float("inf"))
    mask = torch.exp(mask * decay[:, None, None])
    mask = torch.nan_to_num(mask)
    mask = mask / mask.sum(dim=-1, keepdim=True).sqrt()
    yield (torch.randn(2, 2, 5, 4, device=device), torch.randn(2, 2, 5, 4, device=device),
           torch.randn(2, 5, 8, device=device), mask.to(device), 2, 4)


@ppy.opt(3)
def gen_slopes(n_heads: int, alibi_bias_max: int = 8, device: Optional[torch.device] = None,
               return_1d: bool = False) -> torch.Tensor:
    _n_heads = 2 ** math.ceil(math.log2(n_heads))
    m = torch.arange(1, _n_heads + 1, dtype=torch.float32, device=device)
    m = m.mul(alibi_bias_max / _n_heads)
    slopes = 1.0 / torch.pow(2, m)

    if _n_heads != n_heads:
        # if n_heads is not a power of two,
        # Huggingface and FasterTransformer calculate slopes normally,
        # then return this strided concatenation of slopes
        slopes = torch.concat([slopes[1::2], slopes[::2]])[:n_heads]

    if return_1d:
        return slopes
    return slopes.view(1, n_heads, 1, 1)


@gen_slopes.samples
def _(device):
    yield 8
    yield 6, 8, torch.device(device), True


@ppy.opt(3)
def build_alibi_bias(
    n_heads: int,
    seq_len: int,
    full: bool = False,
    alibi_bias_max: int = 8,
    device: Optional[torch.device] = None,
    dtype: Optional[torch.dtype] = None,
) -> torch.Tensor:
    alibi_bias = torch.arange(1 - seq_len, 1, dtype=torch.int32,
                              device=device).view(1, 1, 1, seq_len)
    if full:
        # generate 1 x Heads x SeqLen x SeqLen alibi bias mask
        # otherwise the mask is 1 x Heads x 1 x SeqLen (which is broadcast to the appropriate size)
        alibi_bias = alibi_bias - torch.arange(
            1 - seq_len,
            1,
            dtype=torch.int32,
            device=device,
        ).view(1, 1, seq_len, 1)
        alibi_bias = alibi_bias.abs().mul(-1)

    slopes = gen_slopes(n_heads, alibi_bias_max, device=device)
    alibi_bias = alibi_bias * slopes
    return alibi_bias.to(dtype=dtype)


@build_alibi_bias.samples
def _(device):
    yield 4, 6
    yield 6, 5, True, 8, torch.device(device), torch.float32
