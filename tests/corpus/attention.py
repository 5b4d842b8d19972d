"""Attention as first written: a GPT's causal self-attention, LLaMA-style rotary embeddings and KV cache,
a model hub's rotate_half, grouped-query heads and additive masks."""

import math
from typing import Optional

import ppy
import torch
import torch.nn.functional as F
from einops import rearrange

KIND = {
    "attention_optional_mask": "by-design",  # `if mask is not None`
    "attention_head_loop": "by-design",  # one head at a time in a for loop
}


@ppy.opt(3)
def causal_self_attention(x: torch.Tensor, c_attn_w: torch.Tensor, c_attn_b: torch.Tensor, c_proj_w: torch.Tensor,
                          c_proj_b: torch.Tensor, n_head: int) -> torch.Tensor:
    B, T, C = x.size()
    q, k, v = F.linear(x, c_attn_w, c_attn_b).split(C, dim=2)
    k = k.view(B, T, n_head, C // n_head).transpose(1, 2)
    q = q.view(B, T, n_head, C // n_head).transpose(1, 2)
    v = v.view(B, T, n_head, C // n_head).transpose(1, 2)
    y = F.scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=True)
    y = y.transpose(1, 2).contiguous().view(B, T, C)
    return F.linear(y, c_proj_w, c_proj_b)


@causal_self_attention.samples
def _(device):
    C = 16
    yield (torch.randn(2, 5, C, device=device), torch.randn(3 * C, C, device=device) * 0.2,
           torch.randn(3 * C, device=device), torch.randn(C, C, device=device) * 0.2, torch.randn(C, device=device), 4)


@ppy.opt(3)
def manual_causal_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    T = q.size(-2)
    att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
    att = att.masked_fill(bias[:, :, :T, :T] == 0, float("-inf"))
    att = F.softmax(att, dim=-1)
    return att @ v


@manual_causal_attention.samples
def _(device):
    bias = torch.tril(torch.ones(8, 8, device=device)).view(1, 1, 8, 8)
    yield (torch.randn(2, 3, 6, 4, device=device), torch.randn(2, 3, 6, 4, device=device),
           torch.randn(2, 3, 6, 4, device=device), bias)


@ppy.opt(3)
def precompute_freqs_cis(dim: int, end: int, theta: float = 10000.0) -> torch.Tensor:
    freqs = 1.0 / (theta ** (torch.arange(0, dim, 2)[: (dim // 2)].float() / dim))
    t = torch.arange(end, device=freqs.device)
    freqs = torch.outer(t, freqs).float()
    return torch.polar(torch.ones_like(freqs), freqs)


@precompute_freqs_cis.samples
def _(device):
    yield 8, 6
    yield 16, 4, 500000.0


def reshape_for_broadcast(freqs_cis, x):
    return freqs_cis.view(1, x.shape[1], 1, x.shape[-1])


@ppy.opt(3)
def apply_rotary_emb(xq: torch.Tensor, xk: torch.Tensor, freqs_cis: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    xq_ = torch.view_as_complex(xq.float().reshape(*xq.shape[:-1], -1, 2))
    xk_ = torch.view_as_complex(xk.float().reshape(*xk.shape[:-1], -1, 2))
    freqs_cis = reshape_for_broadcast(freqs_cis, xq_)
    xq_out = torch.view_as_real(xq_ * freqs_cis).flatten(3)
    xk_out = torch.view_as_real(xk_ * freqs_cis).flatten(3)
    return xq_out.type_as(xq), xk_out.type_as(xk)


def _freqs(head_dim, seqlen, device):
    freqs = 1.0 / (10000.0 ** (torch.arange(0, head_dim, 2).float() / head_dim))
    angles = torch.outer(torch.arange(seqlen).float(), freqs)
    return torch.polar(torch.ones_like(angles), angles).to(device)


@apply_rotary_emb.samples
def _(device):
    yield torch.randn(2, 5, 4, 8, device=device), torch.randn(2, 5, 2, 8, device=device), _freqs(8, 5, device)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


@ppy.opt(3)
def apply_rotary_pos_emb(q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor,
                         unsqueeze_dim: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    cos = cos.unsqueeze(unsqueeze_dim)
    sin = sin.unsqueeze(unsqueeze_dim)
    q_embed = (q * cos) + (rotate_half(q) * sin)
    k_embed = (k * cos) + (rotate_half(k) * sin)
    return q_embed, k_embed


@apply_rotary_pos_emb.samples
def _(device):
    angles = torch.randn(2, 5, 8, device=device)
    yield torch.randn(2, 4, 5, 8, device=device), torch.randn(2, 2, 5, 8, device=device), angles.cos(), angles.sin()


@ppy.opt(3)
def rotary_cos_sin(x: torch.Tensor, inv_freq: torch.Tensor, position_ids: torch.Tensor,
                   attention_scaling: float) -> tuple[torch.Tensor, torch.Tensor]:
    inv_freq_expanded = inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1).to(x.device)
    position_ids_expanded = position_ids[:, None, :].float()
    freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)
    emb = torch.cat((freqs, freqs), dim=-1)
    cos = emb.cos() * attention_scaling
    sin = emb.sin() * attention_scaling
    return cos.to(dtype=x.dtype), sin.to(dtype=x.dtype)


@rotary_cos_sin.samples
def _(device):
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, 8, 2, dtype=torch.int64).float() / 8))
    yield torch.randn(2, 5, 16, device=device), inv_freq.to(device), torch.arange(5, device=device).expand(2, 5), 1.0


@ppy.opt(3)
def repeat_kv(hidden_states: torch.Tensor, n_rep: int) -> torch.Tensor:
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


@repeat_kv.samples
def _(device):
    yield torch.randn(2, 2, 5, 8, device=device), 3


@ppy.opt(3)
def kv_cache_update(cache_k: torch.Tensor, cache_v: torch.Tensor, xk: torch.Tensor, xv: torch.Tensor,
                    start_pos: int) -> tuple[torch.Tensor, torch.Tensor]:
    bsz, seqlen, _, _ = xk.shape
    cache_k[:bsz, start_pos: start_pos + seqlen] = xk
    cache_v[:bsz, start_pos: start_pos + seqlen] = xv
    keys = cache_k[:bsz, : start_pos + seqlen]
    values = cache_v[:bsz, : start_pos + seqlen]
    return keys, values


@kv_cache_update.samples
def _(device):
    cache = torch.zeros(3, 10, 2, 4, device=device)
    yield cache.clone(), cache.clone(), torch.randn(2, 3, 2, 4, device=device), torch.randn(2, 3, 2, 4, device=device), 4


@ppy.opt(3)
def llama_attention(x: torch.Tensor, wq: torch.Tensor, wk: torch.Tensor, wv: torch.Tensor, wo: torch.Tensor,
                    cache_k: torch.Tensor, cache_v: torch.Tensor, freqs_cis: torch.Tensor, mask: torch.Tensor,
                    start_pos: int, n_heads: int, n_kv_heads: int, head_dim: int) -> torch.Tensor:
    bsz, seqlen, _ = x.shape
    xq, xk, xv = F.linear(x, wq), F.linear(x, wk), F.linear(x, wv)
    xq = xq.view(bsz, seqlen, n_heads, head_dim)
    xk = xk.view(bsz, seqlen, n_kv_heads, head_dim)
    xv = xv.view(bsz, seqlen, n_kv_heads, head_dim)
    xq, xk = apply_rotary_emb(xq, xk, freqs_cis)
    keys, values = kv_cache_update(cache_k, cache_v, xk, xv, start_pos)
    keys = repeat_kv(keys.transpose(1, 2), n_heads // n_kv_heads)
    values = repeat_kv(values.transpose(1, 2), n_heads // n_kv_heads)
    xq = xq.transpose(1, 2)
    scores = torch.matmul(xq, keys.transpose(2, 3)) / math.sqrt(head_dim)
    scores = scores + mask
    scores = F.softmax(scores.float(), dim=-1).type_as(xq)
    output = torch.matmul(scores, values)
    output = output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)
    return F.linear(output, wo)


@llama_attention.samples
def _(device):
    dim, heads, kv_heads, head_dim, start, seqlen = 16, 4, 2, 4, 3, 2
    cache = torch.randn(2, 8, kv_heads, head_dim, device=device)
    mask = torch.triu(torch.full((seqlen, seqlen), float("-inf"), device=device), diagonal=1)
    mask = torch.hstack([torch.zeros(seqlen, start, device=device), mask])
    yield (torch.randn(2, seqlen, dim, device=device), torch.randn(heads * head_dim, dim, device=device) * 0.3,
           torch.randn(kv_heads * head_dim, dim, device=device) * 0.3,
           torch.randn(kv_heads * head_dim, dim, device=device) * 0.3, torch.randn(dim, heads * head_dim, device=device) * 0.3,
           cache.clone(), cache.clone(), _freqs(head_dim, 8, device)[start: start + seqlen], mask,
           start, heads, kv_heads, head_dim)


@ppy.opt(3)
def sdpa_attention(hidden_states: torch.Tensor, q_w: torch.Tensor, k_w: torch.Tensor, v_w: torch.Tensor,
                   o_w: torch.Tensor, head_dim: int) -> torch.Tensor:
    input_shape = hidden_states.shape[:-1]
    hidden_shape = (*input_shape, -1, head_dim)
    query_states = F.linear(hidden_states, q_w).view(hidden_shape).transpose(1, 2)
    key_states = F.linear(hidden_states, k_w).view(hidden_shape).transpose(1, 2)
    value_states = F.linear(hidden_states, v_w).view(hidden_shape).transpose(1, 2)
    attn_output = F.scaled_dot_product_attention(query_states, key_states, value_states, is_causal=True)
    attn_output = attn_output.transpose(1, 2).reshape(*input_shape, -1).contiguous()
    return F.linear(attn_output, o_w)


@sdpa_attention.samples
def _(device):
    yield (torch.randn(2, 5, 16, device=device), torch.randn(16, 16, device=device) * 0.3,
           torch.randn(16, 16, device=device) * 0.3, torch.randn(16, 16, device=device) * 0.3,
           torch.randn(16, 16, device=device) * 0.3, 4)


@ppy.opt(3)
def attention_optional_mask(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                            mask: Optional[torch.Tensor] = None) -> torch.Tensor:
    scores = torch.matmul(query, key.transpose(-2, -1)) / math.sqrt(query.size(-1))
    if mask is not None:
        scores = scores.masked_fill(mask == 0, -1e9)
    p_attn = scores.softmax(dim=-1)
    return torch.matmul(p_attn, value)


@attention_optional_mask.samples
def _(device):
    q = torch.randn(2, 4, 5, 8, device=device)
    yield q, torch.randn(2, 4, 5, 8, device=device), torch.randn(2, 4, 5, 8, device=device)
    yield q, q, q, torch.tril(torch.ones(5, 5, device=device))


@ppy.opt(3)
def eager_attention(query: torch.Tensor, key: torch.Tensor, value: torch.Tensor, attention_mask: torch.Tensor,
                    scaling: float, dropout: float = 0.0) -> tuple[torch.Tensor, torch.Tensor]:
    attn_weights = torch.matmul(query, key.transpose(2, 3)) * scaling
    causal_mask = attention_mask[:, :, :, : key.shape[-2]]
    attn_weights = attn_weights + causal_mask
    attn_weights = F.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query.dtype)
    attn_weights = F.dropout(attn_weights, p=dropout, training=False)
    attn_output = torch.matmul(attn_weights, value)
    attn_output = attn_output.transpose(1, 2).contiguous()
    return attn_output, attn_weights


@eager_attention.samples
def _(device):
    mask = torch.triu(torch.full((6, 6), -1e9, device=device), diagonal=1).view(1, 1, 6, 6)
    yield (torch.randn(2, 3, 6, 8, device=device), torch.randn(2, 3, 6, 8, device=device),
           torch.randn(2, 3, 6, 8, device=device), mask, 8 ** -0.5)


@ppy.opt(3)
def causal_mask_min(attn_weights: torch.Tensor, seq_len: int) -> torch.Tensor:
    min_dtype = torch.finfo(attn_weights.dtype).min
    causal_mask = torch.full((seq_len, seq_len), fill_value=min_dtype, dtype=attn_weights.dtype,
                             device=attn_weights.device)
    causal_mask = torch.triu(causal_mask, diagonal=1)
    return F.softmax(attn_weights + causal_mask[None, None, :, :], dim=-1)


@causal_mask_min.samples
def _(device):
    yield torch.randn(2, 3, 5, 5, device=device), 5


@ppy.opt(3)
def qkv_heads_einops(x: torch.Tensor, w_qkv: torch.Tensor, w_out: torch.Tensor, heads: int) -> torch.Tensor:
    qkv = F.linear(x, w_qkv)
    q, k, v = rearrange(qkv, "b n (three h d) -> three b h n d", three=3, h=heads)
    out = F.scaled_dot_product_attention(q, k, v)
    out = rearrange(out, "b h n d -> b n (h d)")
    return F.linear(out, w_out)


@qkv_heads_einops.samples
def _(device):
    yield torch.randn(2, 5, 16, device=device), torch.randn(48, 16, device=device) * 0.3, torch.randn(16, 16, device=device), 4


@ppy.opt(3)
def attention_head_loop(x: torch.Tensor, wq: torch.Tensor, wk: torch.Tensor, wv: torch.Tensor, n_head: int) -> torch.Tensor:
    head_size = wq.shape[0] // n_head
    heads = []
    for h in range(n_head):
        q = x @ wq[h * head_size: (h + 1) * head_size].T
        k = x @ wk[h * head_size: (h + 1) * head_size].T
        v = x @ wv[h * head_size: (h + 1) * head_size].T
        wei = (q @ k.transpose(-2, -1)) * head_size ** -0.5
        heads.append(F.softmax(wei, dim=-1) @ v)
    return torch.cat(heads, dim=-1)


@attention_head_loop.samples
def _(device):
    yield (torch.randn(2, 5, 16, device=device), torch.randn(16, 16, device=device), torch.randn(16, 16, device=device),
           torch.randn(16, 16, device=device), 4)
