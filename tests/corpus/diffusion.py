"""Diffusion blocks as first written: sinusoidal timestep embeddings, a U-Net resnet block (group norm,
SiLU, a time embedding added per channel), upsampling, an autoencoder's spatial attention
with einops, and scheduler arithmetic (DDPM's posterior step, a cosine beta schedule, adding noise)."""

import math

import ppy
import torch
import torch.nn.functional as F
from einops import rearrange

KIND = {
    "timestep_embedding_padded": "by-design",  # `if dim % 2` pads an odd width
    "add_noise_broadcast": "by-design",  # a while loop unsqueezes to the sample's rank
}


@ppy.opt(3)
def timestep_embedding_padded(timesteps: torch.Tensor, dim: int, max_period: int = 10000) -> torch.Tensor:
    half = dim // 2
    freqs = torch.exp(-math.log(max_period) * torch.arange(start=0, end=half, dtype=torch.float32) / half).to(
        device=timesteps.device)
    args = timesteps[:, None].float() * freqs[None]
    embedding = torch.cat([torch.cos(args), torch.sin(args)], dim=-1)
    if dim % 2:
        embedding = torch.cat([embedding, torch.zeros_like(embedding[:, :1])], dim=-1)
    return embedding


@timestep_embedding_padded.samples
def _(device):
    yield torch.tensor([0, 10, 999], device=device), 9


@ppy.opt(3)
def get_timestep_embedding(timesteps: torch.Tensor, embedding_dim: int, downscale_freq_shift: float = 1,
                           scale: float = 1, max_period: int = 10000) -> torch.Tensor:
    half_dim = embedding_dim // 2
    exponent = -math.log(max_period) * torch.arange(start=0, end=half_dim, dtype=torch.float32, device=timesteps.device)
    exponent = exponent / (half_dim - downscale_freq_shift)
    emb = torch.exp(exponent)
    emb = timesteps[:, None].float() * emb[None, :]
    emb = scale * emb
    return torch.cat([torch.sin(emb), torch.cos(emb)], dim=-1)


@get_timestep_embedding.samples
def _(device):
    yield torch.tensor([1, 250, 999], device=device), 16
    yield torch.tensor([3.5, 7.0], device=device), 8, 0.0, 2.0


@ppy.opt(3)
def resnet_block(input_tensor: torch.Tensor, temb: torch.Tensor, norm1_w: torch.Tensor, norm1_b: torch.Tensor,
                 conv1_w: torch.Tensor, conv1_b: torch.Tensor, temb_w: torch.Tensor, temb_b: torch.Tensor,
                 norm2_w: torch.Tensor, norm2_b: torch.Tensor, conv2_w: torch.Tensor, conv2_b: torch.Tensor,
                 groups: int, eps: float, output_scale_factor: float = 1.0) -> torch.Tensor:
    hidden_states = F.group_norm(input_tensor, groups, norm1_w, norm1_b, eps)
    hidden_states = F.silu(hidden_states)
    hidden_states = F.conv2d(hidden_states, conv1_w, conv1_b, padding=1)
    temb = F.linear(F.silu(temb), temb_w, temb_b)[:, :, None, None]
    hidden_states = hidden_states + temb
    hidden_states = F.group_norm(hidden_states, groups, norm2_w, norm2_b, eps)
    hidden_states = F.silu(hidden_states)
    hidden_states = F.dropout(hidden_states, p=0.0, training=False)
    hidden_states = F.conv2d(hidden_states, conv2_w, conv2_b, padding=1)
    return (input_tensor + hidden_states) / output_scale_factor


@resnet_block.samples
def _(device):
    c, t = 8, 12

    def w(*shape):
        return torch.randn(*shape, device=device) * 0.2

    yield (torch.randn(2, c, 6, 6, device=device), torch.randn(2, t, device=device), 1 + w(c), w(c), w(c, c, 3, 3), w(c),
           w(c, t), w(c), 1 + w(c), w(c), w(c, c, 3, 3), w(c), 4, 1e-6)


@ppy.opt(3)
def upsample_nearest_conv(hidden_states: torch.Tensor, conv_w: torch.Tensor, conv_b: torch.Tensor) -> torch.Tensor:
    hidden_states = F.interpolate(hidden_states, scale_factor=2.0, mode="nearest")
    return F.conv2d(hidden_states, conv_w, conv_b, padding=1)


@upsample_nearest_conv.samples
def _(device):
    yield torch.randn(2, 4, 3, 3, device=device), torch.randn(4, 4, 3, 3, device=device) * 0.2, torch.randn(4, device=device)


@ppy.opt(3)
def vae_attn_block(x: torch.Tensor, norm_w: torch.Tensor, norm_b: torch.Tensor, q_w: torch.Tensor, q_b: torch.Tensor,
                   k_w: torch.Tensor, k_b: torch.Tensor, v_w: torch.Tensor, v_b: torch.Tensor, proj_w: torch.Tensor,
                   proj_b: torch.Tensor) -> torch.Tensor:
    h_ = F.group_norm(x, 2, norm_w, norm_b, 1e-6)
    q = F.conv2d(h_, q_w, q_b)
    k = F.conv2d(h_, k_w, k_b)
    v = F.conv2d(h_, v_w, v_b)
    b, c, h, w = q.shape
    q = rearrange(q, "b c h w -> b (h w) c")
    k = rearrange(k, "b c h w -> b c (h w)")
    w_ = torch.einsum("bij,bjk->bik", q, k)
    w_ = w_ * (int(c) ** (-0.5))
    w_ = F.softmax(w_, dim=2)
    v = rearrange(v, "b c h w -> b c (h w)")
    w_ = rearrange(w_, "b i j -> b j i")
    h_ = torch.einsum("bij,bjk->bik", v, w_)
    h_ = rearrange(h_, "b c (h w) -> b c h w", h=h)
    return x + F.conv2d(h_, proj_w, proj_b)


@vae_attn_block.samples
def _(device):
    c = 4

    def w(*shape):
        return torch.randn(*shape, device=device) * 0.3

    yield (torch.randn(2, c, 3, 4, device=device), 1 + w(c), w(c), w(c, c, 1, 1), w(c), w(c, c, 1, 1), w(c),
           w(c, c, 1, 1), w(c), w(c, c, 1, 1), w(c))


@ppy.opt(3)
def ddpm_step(model_output: torch.Tensor, sample: torch.Tensor, noise: torch.Tensor, alpha_prod_t: float,
              alpha_prod_t_prev: float) -> torch.Tensor:
    beta_prod_t = 1 - alpha_prod_t
    beta_prod_t_prev = 1 - alpha_prod_t_prev
    current_alpha_t = alpha_prod_t / alpha_prod_t_prev
    current_beta_t = 1 - current_alpha_t
    pred_original_sample = (sample - beta_prod_t ** (0.5) * model_output) / alpha_prod_t ** (0.5)
    pred_original_sample = pred_original_sample.clamp(-1.0, 1.0)
    pred_original_sample_coeff = (alpha_prod_t_prev ** (0.5) * current_beta_t) / beta_prod_t
    current_sample_coeff = current_alpha_t ** (0.5) * beta_prod_t_prev / beta_prod_t
    pred_prev_sample = pred_original_sample_coeff * pred_original_sample + current_sample_coeff * sample
    variance = (1 - alpha_prod_t_prev) / (1 - alpha_prod_t) * current_beta_t
    variance = max(variance, 1e-20)
    return pred_prev_sample + (variance ** 0.5) * noise


@ddpm_step.samples
def _(device):
    yield (torch.randn(2, 3, 4, 4, device=device), torch.randn(2, 3, 4, 4, device=device),
           torch.randn(2, 3, 4, 4, device=device), 0.5, 0.52)


@ppy.opt(3)
def cosine_beta_schedule(timesteps: int, s: float = 0.008) -> torch.Tensor:
    steps = timesteps + 1
    x = torch.linspace(0, timesteps, steps, dtype=torch.float64)
    alphas_cumprod = torch.cos(((x / timesteps) + s) / (1 + s) * math.pi * 0.5) ** 2
    alphas_cumprod = alphas_cumprod / alphas_cumprod[0]
    betas = 1 - (alphas_cumprod[1:] / alphas_cumprod[:-1])
    return torch.clip(betas, 0, 0.999)


@cosine_beta_schedule.samples
def _():
    yield 50
    yield 1000, 0.01


@ppy.opt(3)
def add_noise_broadcast(original_samples: torch.Tensor, noise: torch.Tensor, alphas_cumprod: torch.Tensor,
                        timesteps: torch.Tensor) -> torch.Tensor:
    alphas_cumprod = alphas_cumprod.to(device=original_samples.device, dtype=original_samples.dtype)
    sqrt_alpha_prod = alphas_cumprod[timesteps] ** 0.5
    sqrt_alpha_prod = sqrt_alpha_prod.flatten()
    while len(sqrt_alpha_prod.shape) < len(original_samples.shape):
        sqrt_alpha_prod = sqrt_alpha_prod.unsqueeze(-1)
    sqrt_one_minus_alpha_prod = (1 - alphas_cumprod[timesteps]) ** 0.5
    sqrt_one_minus_alpha_prod = sqrt_one_minus_alpha_prod.flatten()
    while len(sqrt_one_minus_alpha_prod.shape) < len(original_samples.shape):
        sqrt_one_minus_alpha_prod = sqrt_one_minus_alpha_prod.unsqueeze(-1)
    return sqrt_alpha_prod * original_samples + sqrt_one_minus_alpha_prod * noise


@add_noise_broadcast.samples
def _(device):
    alphas = torch.cumprod(1 - torch.linspace(1e-4, 0.02, 100, device=device), 0)
    yield (torch.randn(3, 2, 4, 4, device=device), torch.randn(3, 2, 4, 4, device=device), alphas,
           torch.tensor([0, 50, 99], device=device))


@ppy.opt(3)
def add_noise(original_samples: torch.Tensor, noise: torch.Tensor, alphas_cumprod: torch.Tensor,
              timesteps: torch.Tensor) -> torch.Tensor:
    alpha = alphas_cumprod[timesteps].view(-1, 1, 1, 1)
    return alpha.sqrt() * original_samples + (1 - alpha).sqrt() * noise


@add_noise.samples
def _(device):
    alphas = torch.cumprod(1 - torch.linspace(1e-4, 0.02, 100, device=device), 0)
    yield (torch.randn(3, 2, 4, 4, device=device), torch.randn(3, 2, 4, 4, device=device), alphas,
           torch.tensor([0, 50, 99], device=device))
