"""Norms and MLPs as first written: RMSNorm two ways, LayerNorm from a weight's shape, GELU and SwiGLU
feed-forwards, the integer arithmetic of a hidden width, a diffusion transformer's adaLN modulation,
and a GPT block calling other regions."""

import math

import ppy
import torch
import torch.nn.functional as F

from .attention import causal_self_attention

KIND = {
    "mlp_by_name": "by-design",  # `if activation == "gelu"` picks the activation
    "mlp_stack": "by-design",  # a for loop over the layers' weights
}


def _norm(x, eps):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps)


@ppy.opt(3)
def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float = 1e-6) -> torch.Tensor:
    output = _norm(x.float(), eps).type_as(x)
    return output * weight


@rms_norm.samples
def _(device):
    yield torch.randn(2, 5, 16, device=device), torch.rand(16, device=device) + 0.5


@ppy.opt(3)
def rms_norm_upcast(hidden_states: torch.Tensor, weight: torch.Tensor, variance_epsilon: float) -> torch.Tensor:
    input_dtype = hidden_states.dtype
    hidden_states = hidden_states.to(torch.float32)
    variance = hidden_states.pow(2).mean(-1, keepdim=True)
    hidden_states = hidden_states * torch.rsqrt(variance + variance_epsilon)
    return weight * hidden_states.to(input_dtype)


@rms_norm_upcast.samples
def _(device):
    yield torch.randn(2, 5, 16, device=device), torch.rand(16, device=device) + 0.5, 1e-6
    yield torch.randn(3, 8, device=device, dtype=torch.float64), torch.rand(8, device=device, dtype=torch.float64), 1e-5


@ppy.opt(3)
def layer_norm(input: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return F.layer_norm(input, weight.shape, weight, bias, 1e-5)


@layer_norm.samples
def _(device):
    yield torch.randn(2, 5, 16, device=device), torch.rand(16, device=device) + 0.5, torch.randn(16, device=device)


@ppy.opt(3)
def layer_norm_fp32(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float) -> torch.Tensor:
    orig_type = x.dtype
    x = F.layer_norm(x.to(torch.float32), x.shape[-1:], weight, bias, eps)
    return x.to(orig_type)


@layer_norm_fp32.samples
def _(device):
    yield torch.randn(4, 12, device=device, dtype=torch.float64), torch.rand(12, device=device), torch.randn(12, device=device), 1e-5


@ppy.opt(3)
def new_gelu(x: torch.Tensor) -> torch.Tensor:
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


@new_gelu.samples
def _(device):
    yield torch.randn(3, 7, device=device)


@ppy.opt(3)
def mlp(x: torch.Tensor, c_fc_w: torch.Tensor, c_fc_b: torch.Tensor, c_proj_w: torch.Tensor, c_proj_b: torch.Tensor,
        dropout: float) -> torch.Tensor:
    x = F.linear(x, c_fc_w, c_fc_b)
    x = F.gelu(x)
    x = F.linear(x, c_proj_w, c_proj_b)
    return F.dropout(x, dropout, training=False)


@mlp.samples
def _(device):
    yield (torch.randn(2, 5, 8, device=device), torch.randn(32, 8, device=device) * 0.3, torch.randn(32, device=device),
           torch.randn(8, 32, device=device) * 0.2, torch.randn(8, device=device), 0.1)


@ppy.opt(3)
def swiglu(x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor, w3: torch.Tensor) -> torch.Tensor:
    return F.linear(F.silu(F.linear(x, w1)) * F.linear(x, w3), w2)


@swiglu.samples
def _(device):
    yield (torch.randn(2, 5, 8, device=device), torch.randn(24, 8, device=device) * 0.3,
           torch.randn(8, 24, device=device) * 0.2, torch.randn(24, 8, device=device) * 0.3)


@ppy.opt(3)
def ffn_hidden_dim(dim: int, multiple_of: int, ffn_dim_multiplier: float) -> int:
    hidden_dim = 4 * dim
    hidden_dim = int(2 * hidden_dim / 3)
    hidden_dim = int(ffn_dim_multiplier * hidden_dim)
    return multiple_of * ((hidden_dim + multiple_of - 1) // multiple_of)


@ffn_hidden_dim.samples
def _():
    yield 4096, 256, 1.3
    yield 512, 32, 1.0
    yield 100, 7, 0.5


def modulate(x, shift, scale):
    return x * (1 + scale.unsqueeze(1)) + shift.unsqueeze(1)


@ppy.opt(3)
def adaln_mlp_branch(x: torch.Tensor, c: torch.Tensor, ada_w: torch.Tensor, ada_b: torch.Tensor,
                     fc1_w: torch.Tensor, fc1_b: torch.Tensor, fc2_w: torch.Tensor, fc2_b: torch.Tensor) -> torch.Tensor:
    shift_msa, scale_msa, gate_msa, shift_mlp, scale_mlp, gate_mlp = F.linear(F.silu(c), ada_w, ada_b).chunk(6, dim=1)
    h = F.layer_norm(x, (x.shape[-1],), eps=1e-6)
    h = modulate(h, shift_mlp, scale_mlp)
    h = F.linear(F.gelu(F.linear(h, fc1_w, fc1_b), approximate="tanh"), fc2_w, fc2_b)
    return x + gate_mlp.unsqueeze(1) * h


@adaln_mlp_branch.samples
def _(device):
    d = 8
    yield (torch.randn(2, 5, d, device=device), torch.randn(2, d, device=device), torch.randn(6 * d, d, device=device) * 0.2,
           torch.randn(6 * d, device=device) * 0.1, torch.randn(4 * d, d, device=device) * 0.3,
           torch.randn(4 * d, device=device), torch.randn(d, 4 * d, device=device) * 0.2, torch.randn(d, device=device))


@ppy.opt(3)
def gpt_block(x: torch.Tensor, ln1_w: torch.Tensor, ln1_b: torch.Tensor, c_attn_w: torch.Tensor, c_attn_b: torch.Tensor,
              attn_proj_w: torch.Tensor, attn_proj_b: torch.Tensor, ln2_w: torch.Tensor, ln2_b: torch.Tensor,
              c_fc_w: torch.Tensor, c_fc_b: torch.Tensor, mlp_proj_w: torch.Tensor, mlp_proj_b: torch.Tensor,
              n_head: int) -> torch.Tensor:
    x = x + causal_self_attention(layer_norm(x, ln1_w, ln1_b), c_attn_w, c_attn_b, attn_proj_w, attn_proj_b, n_head)
    x = x + mlp(layer_norm(x, ln2_w, ln2_b), c_fc_w, c_fc_b, mlp_proj_w, mlp_proj_b, 0.0)
    return x


@gpt_block.samples
def _(device):
    C = 16

    def w(*shape):
        return torch.randn(*shape, device=device) * 0.2

    yield (torch.randn(2, 5, C, device=device), 1 + w(C), w(C), w(3 * C, C), w(3 * C), w(C, C), w(C), 1 + w(C), w(C),
           w(4 * C, C), w(4 * C), w(C, 4 * C), w(C), 4)


@ppy.opt(3)
def mlp_by_name(x: torch.Tensor, w1: torch.Tensor, w2: torch.Tensor, activation: str) -> torch.Tensor:
    h = x @ w1
    if activation == "gelu":
        h = F.gelu(h)
    elif activation == "relu":
        h = F.relu(h)
    else:
        h = F.silu(h)
    return h @ w2


@mlp_by_name.samples
def _(device):
    yield torch.randn(3, 8, device=device), torch.randn(8, 16, device=device), torch.randn(16, 8, device=device), "gelu"
    yield torch.randn(3, 8, device=device), torch.randn(8, 16, device=device), torch.randn(16, 8, device=device), "silu"


@ppy.opt(3)
def mlp_stack(x: torch.Tensor, weights: tuple[torch.Tensor, ...], biases: tuple[torch.Tensor, ...]) -> torch.Tensor:
    for w, b in zip(weights, biases):
        x = F.relu(F.linear(x, w, b))
    return x


@mlp_stack.samples
def _(device):
    yield (torch.randn(3, 8, device=device), (torch.randn(8, 8, device=device), torch.randn(8, 8, device=device)),
           (torch.randn(8, device=device), torch.randn(8, device=device)))
