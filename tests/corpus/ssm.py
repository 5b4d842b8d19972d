"""State-space model pieces as first written, in the manner of Mamba's reference code: one decoding
step of the selective scan, the full scan as a loop, the causal depthwise conv's state update, the
input projection's split, a gated RMS norm, and the segment sum of the chunked scan."""

from __future__ import annotations

import ppy
import torch
import torch.nn.functional as F
from einops import rearrange, repeat

KIND = {
    "selective_scan": "by-design",  # a for loop over the sequence
}


@ppy.opt(3)
def selective_state_update(state: torch.Tensor, x: torch.Tensor, dt: torch.Tensor, A: torch.Tensor, B: torch.Tensor,
                           C: torch.Tensor, D: torch.Tensor, z: torch.Tensor, dt_bias: torch.Tensor) -> torch.Tensor:
    dt = F.softplus(dt + dt_bias)
    dA = torch.exp(rearrange(dt, "b d -> b d 1") * A)
    dB = rearrange(dt, "b d -> b d 1") * rearrange(B, "b n -> b 1 n")
    state.copy_(state * dA + dB * rearrange(x, "b d -> b d 1"))
    out = torch.einsum("bdn,bn->bd", state.to(C.dtype), C)
    out = out + x * D
    return out * F.silu(z)


def _step_inputs(device, batch=2, dim=6, dstate=4):
    g = torch.Generator().manual_seed(0)

    def r(*shape):
        return torch.randn(*shape, generator=g).to(device)

    return (r(batch, dim, dstate), r(batch, dim), r(batch, dim), -torch.rand(dim, dstate, generator=g).to(device),
            r(batch, dstate), r(batch, dstate), r(dim), r(batch, dim), r(dim))


@selective_state_update.samples
def _(device):
    yield _step_inputs(device)


@ppy.opt(3)
def selective_state_step(state: torch.Tensor, x: torch.Tensor, dt: torch.Tensor, A: torch.Tensor, B: torch.Tensor,
                         C: torch.Tensor, D: torch.Tensor, z: torch.Tensor, dt_bias: torch.Tensor) -> torch.Tensor:
    dt = F.softplus(dt + dt_bias)
    dA = torch.exp(dt.unsqueeze(-1) * A)
    dB = dt.unsqueeze(-1) * B.unsqueeze(1)
    state.copy_(state * dA + dB * x.unsqueeze(-1))
    out = torch.einsum("bdn,bn->bd", state, C)
    out = out + x * D
    return out * F.silu(z)


@selective_state_step.samples
def _(device):
    yield _step_inputs(device)


@ppy.opt(3)
def selective_scan(u: torch.Tensor, delta: torch.Tensor, A: torch.Tensor, B: torch.Tensor, C: torch.Tensor,
                   D: torch.Tensor) -> torch.Tensor:
    batch, dim, dstate = u.shape[0], A.shape[0], A.shape[1]
    deltaA = torch.exp(torch.einsum("bdl,dn->bdln", delta, A))
    deltaB_u = torch.einsum("bdl,bnl,bdl->bdln", delta, B, u)
    x = A.new_zeros((batch, dim, dstate))
    ys = []
    for i in range(u.shape[2]):
        x = deltaA[:, :, i] * x + deltaB_u[:, :, i]
        ys.append(torch.einsum("bdn,bn->bd", x, C[:, :, i]))
    y = torch.stack(ys, dim=2)
    return y + u * rearrange(D, "d -> d 1")


@selective_scan.samples
def _(device):
    yield (torch.randn(2, 3, 5, device=device), torch.rand(2, 3, 5, device=device), -torch.rand(3, 4, device=device),
           torch.randn(2, 4, 5, device=device), torch.randn(2, 4, 5, device=device), torch.randn(3, device=device))


@ppy.opt(3)
def causal_conv1d_update(x: torch.Tensor, conv_state: torch.Tensor, weight: torch.Tensor,
                         bias: torch.Tensor) -> torch.Tensor:
    conv_state.copy_(torch.roll(conv_state, shifts=-1, dims=-1))
    conv_state[:, :, -1] = x
    x = torch.sum(conv_state * weight, dim=-1)
    x = x + bias
    return F.silu(x)


@causal_conv1d_update.samples
def _(device):
    yield torch.randn(2, 6, device=device), torch.randn(2, 6, 4, device=device), torch.randn(6, 4, device=device), torch.randn(6, device=device)


@ppy.opt(3)
def in_proj_split(hidden_states: torch.Tensor, in_proj_w: torch.Tensor, x_proj_w: torch.Tensor, dt_rank: int,
                  d_state: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    xz = F.linear(hidden_states, in_proj_w)
    x, z = xz.chunk(2, dim=-1)
    x_dbl = F.linear(x, x_proj_w)
    dt, B, C = torch.split(x_dbl, [dt_rank, d_state, d_state], dim=-1)
    return x, z, dt, B, C


@in_proj_split.samples
def _(device):
    yield torch.randn(2, 5, 8, device=device), torch.randn(32, 8, device=device), torch.randn(2 + 2 * 4, 16, device=device), 2, 4


@ppy.opt(3)
def rms_norm_gated(x: torch.Tensor, z: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    x = x * F.silu(z)
    rstd = 1 / torch.sqrt(x.square().mean(dim=-1, keepdim=True) + eps)
    return x * rstd * weight


@rms_norm_gated.samples
def _(device):
    yield torch.randn(2, 5, 8, device=device), torch.randn(2, 5, 8, device=device), torch.rand(8, device=device) + 0.5, 1e-5


@ppy.opt(3)
def segsum(x: torch.Tensor) -> torch.Tensor:
    T = x.size(-1)
    x = repeat(x, "... d -> ... d e", e=T)
    mask = torch.tril(torch.ones(T, T, device=x.device, dtype=bool), diagonal=-1)
    x = x.masked_fill(~mask, 0)
    x_segsum = torch.cumsum(x, dim=-2)
    mask = torch.tril(torch.ones(T, T, device=x.device, dtype=bool), diagonal=0)
    return x_segsum.masked_fill(~mask, -torch.inf)


@segsum.samples
def _(device):
    yield torch.randn(2, 3, 5, device=device)
