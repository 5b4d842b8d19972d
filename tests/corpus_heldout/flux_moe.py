"""Flux's transformer maths and MoE router losses as first written: Black Forest Labs' Flux
(``rope``, ``apply_rope``, ``attention``, the sampler's ``time_shift`` and latent ``unpack``) and the
Switch Transformer's router losses as its PyTorch port writes them (``router_z_loss_func``,
``load_balancing_loss_func``).

Changed from the projects' code: ``import ppy``, ``@ppy.opt(3)`` and parameter annotations only
(Flux annotates its functions itself).
"""

import math

import ppy
import torch
from einops import rearrange
from torch import Tensor

KIND: dict[str, str] = {}


@ppy.opt(3)
def rope(pos: Tensor, dim: int, theta: int) -> Tensor:
    assert dim % 2 == 0
    scale = torch.arange(0, dim, 2, dtype=torch.float64, device=pos.device) / dim
    omega = 1.0 / (theta**scale)
    out = torch.einsum("...n,d->...nd", pos, omega)
    out = torch.stack([torch.cos(out), -torch.sin(out), torch.sin(out), torch.cos(out)], dim=-1)
    out = rearrange(out, "b n d (i j) -> b n d i j", i=2, j=2)
    return out.float()


@rope.samples
def _(device):
    yield torch.arange(6, dtype=torch.float64, device=device).repeat(2, 1), 8, 10000


@ppy.opt(3)
def apply_rope(xq: Tensor, xk: Tensor, freqs_cis: Tensor) -> tuple[Tensor, Tensor]:
    xq_ = xq.float().reshape(*xq.shape[:-1], -1, 1, 2)
    xk_ = xk.float().reshape(*xk.shape[:-1], -1, 1, 2)
    xq_out = freqs_cis[..., 0] * xq_[..., 0] + freqs_cis[..., 1] * xq_[..., 1]
    xk_out = freqs_cis[..., 0] * xk_[..., 0] + freqs_cis[..., 1] * xk_[..., 1]
    return xq_out.reshape(*xq.shape).type_as(xq), xk_out.reshape(*xk.shape).type_as(xk)


def _pe(device, length=6, dim=8):
    pos = torch.arange(length, dtype=torch.float64, device=device)[None]
    return rope.python(pos, dim, 10000).unsqueeze(1)


@apply_rope.samples
def _(device):
    yield torch.randn(1, 2, 6, 8, device=device), torch.randn(1, 2, 6, 8, device=device), _pe(device)


@ppy.opt(3)
def attention(q: Tensor, k: Tensor, v: Tensor, pe: Tensor) -> Tensor:
    q, k = apply_rope(q, k, pe)

    x = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    x = rearrange(x, "B H L D -> B L (H D)")

    return x


@attention.samples
def _(device):
    q, k, v = (torch.randn(1, 2, 6, 8, device=device) for _ in range(3))
    yield q, k, v, _pe(device)


@ppy.opt(3)
def time_shift(mu: float, sigma: float, t: Tensor) -> Tensor:
    return math.exp(mu) / (math.exp(mu) + (1 / t - 1) ** sigma)


@time_shift.samples
def _(device):
    yield 0.8, 1.0, torch.linspace(1, 0, 11, device=device)[:-1]


@ppy.opt(3)
def unpack(x: Tensor, height: int, width: int) -> Tensor:
    return rearrange(
        x,
        "b (h w) (c ph pw) -> b c (h ph) (w pw)",
        h=math.ceil(height / 16),
        w=math.ceil(width / 16),
        ph=2,
        pw=2,
    )


@unpack.samples
def _(device):
    yield torch.randn(2, 3 * 4, 4 * 4, device=device), 48, 64


@ppy.opt(3)
def router_z_loss_func(router_logits: torch.Tensor) -> torch.Tensor:
    r"""
    Compute the router z-loss implemented in PyTorch.

    The router z-loss was introduced in [Designing Effective Sparse Expert Models](https://arxiv.org/abs/2202.08906).
    It encourages router logits to remain small in an effort to improve stability.
    """
    num_groups, tokens_per_group, _ = router_logits.shape
    log_z = torch.logsumexp(router_logits, dim=-1)
    z_loss = log_z**2
    return torch.sum(z_loss) / (num_groups * tokens_per_group)


@router_z_loss_func.samples
def _(device):
    yield torch.randn(2, 7, 4, device=device),


@ppy.opt(3)
def load_balancing_loss_func(router_probs: torch.Tensor, expert_indices: torch.Tensor) -> torch.Tensor:
    r"""
    Computes auxiliary load balancing loss as in Switch Transformer - implemented in Pytorch.

    See Switch Transformer (https://arxiv.org/abs/2101.03961) for more details. This function implements the loss
    function presented in equations (4) - (6) of the paper. It aims at penalizing cases where the routing between
    experts is too unbalanced.
    """
    num_experts = router_probs.shape[-1]

    # cast the expert indices to int64, otherwise one-hot encoding will fail
    if expert_indices.dtype != torch.int64:
        expert_indices = expert_indices.to(torch.int64)

    if len(expert_indices.shape) == 2:
        expert_indices = expert_indices.unsqueeze(2)

    expert_mask = torch.nn.functional.one_hot(expert_indices, num_experts)

    # For a given token, determine if it was routed to a given expert.
    expert_mask = torch.max(expert_mask, axis=-2).values

    # cast to float32 otherwise mean will fail
    expert_mask = expert_mask.to(torch.float32)
    tokens_per_group_and_expert = torch.mean(expert_mask, axis=-2)

    router_prob_per_group_and_expert = torch.mean(router_probs, axis=-2)
    return torch.mean(tokens_per_group_and_expert * router_prob_per_group_and_expert) * (num_experts**2)


@load_balancing_loss_func.samples
def _(device):
    probs = torch.softmax(torch.randn(2, 7, 4, device=device), dim=-1)
    yield probs, probs.argmax(-1)
    yield probs, probs.argmax(-1).to(torch.int32)
