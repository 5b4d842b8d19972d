"""Diffusion and ViT helpers as first written: lucidrains' denoising-diffusion-pytorch (``extract``, the
linear and sigmoid beta schedules), vit-pytorch's simple ViT position embedding
(``posemb_sincos_2d``), and the GAN and KL losses latent diffusion (CompVis' ldm) takes from
taming-transformers and guided-diffusion (``hinge_d_loss``, ``vanilla_d_loss``, ``normal_kl``).

Changed from the projects' code: ``import ppy``, ``@ppy.opt(3)`` and parameter annotations only.
"""

import ppy
import torch
import torch.nn.functional as F

KIND = {
    "normal_kl": "by-design",  # a for loop over its arguments looking for a tensor
}


@ppy.opt(3)
def extract(a: torch.Tensor, t: torch.Tensor, x_shape: torch.Size) -> torch.Tensor:
    b, *_ = t.shape
    out = a.gather(-1, t)
    return out.reshape(b, *((1,) * (len(x_shape) - 1)))


@extract.samples
def _(device):
    a = torch.linspace(0.9, 0.1, 20, device=device)
    yield a, torch.tensor([3, 0, 19], device=device), torch.Size((3, 4, 5, 5))


@ppy.opt(3)
def linear_beta_schedule(timesteps: int) -> torch.Tensor:
    """
    linear schedule, proposed in original ddpm paper
    """
    scale = 1000 / timesteps
    beta_start = scale * 0.0001
    beta_end = scale * 0.02
    return torch.linspace(beta_start, beta_end, timesteps, dtype = torch.float64)


@linear_beta_schedule.samples
def _(device):
    yield 1000
    yield 50


@ppy.opt(3)
def sigmoid_beta_schedule(timesteps: int, start: float = -3, end: float = 3, tau: float = 1,
                          clamp_min: float = 1e-5) -> torch.Tensor:
    """
    sigmoid schedule
    proposed in https://arxiv.org/abs/2212.11972 - Figure 8
    better for images > 64x64, when used during training
    """
    steps = timesteps + 1
    t = torch.linspace(0, timesteps, steps, dtype = torch.float64) / timesteps
    v_start = torch.tensor(start / tau).sigmoid()
    v_end = torch.tensor(end / tau).sigmoid()
    alphas_cumprod = (-((t * (end - start) + start) / tau).sigmoid() + v_end) / (v_end - v_start)
    alphas_cumprod = alphas_cumprod / alphas_cumprod[0]
    betas = 1 - (alphas_cumprod[1:] / alphas_cumprod[:-1])
    return torch.clip(betas, 0, 0.999)


@sigmoid_beta_schedule.samples
def _(device):
    yield 100
    yield 20, 0, 3, 1.1


@ppy.opt(3)
def posemb_sincos_2d(h: int, w: int, dim: int, temperature: int = 10000,
                     dtype: torch.dtype = torch.float32) -> torch.Tensor:
    y, x = torch.meshgrid(torch.arange(h), torch.arange(w), indexing="ij")
    assert (dim % 4) == 0, "feature dimension must be multiple of 4 for sincos emb"
    omega = torch.arange(dim // 4) / (dim // 4 - 1)
    omega = 1.0 / (temperature ** omega)

    y = y.flatten()[:, None] * omega[None, :]
    x = x.flatten()[:, None] * omega[None, :]
    pe = torch.cat((x.sin(), x.cos(), y.sin(), y.cos()), dim=1)
    return pe.type(dtype)


@posemb_sincos_2d.samples
def _(device):
    yield 4, 5, 16
    yield 3, 3, 8, 100, torch.float64


@ppy.opt(3)
def hinge_d_loss(logits_real: torch.Tensor, logits_fake: torch.Tensor) -> torch.Tensor:
    loss_real = torch.mean(F.relu(1. - logits_real))
    loss_fake = torch.mean(F.relu(1. + logits_fake))
    d_loss = 0.5 * (loss_real + loss_fake)
    return d_loss


@hinge_d_loss.samples
def _(device):
    yield torch.randn(2, 1, 6, 6, device=device), torch.randn(2, 1, 6, 6, device=device)


@ppy.opt(3)
def vanilla_d_loss(logits_real: torch.Tensor, logits_fake: torch.Tensor) -> torch.Tensor:
    d_loss = 0.5 * (
        torch.mean(torch.nn.functional.softplus(-logits_real)) +
        torch.mean(torch.nn.functional.softplus(logits_fake)))
    return d_loss


@vanilla_d_loss.samples
def _(device):
    yield torch.randn(2, 1, 6, 6, device=device), torch.randn(2, 1, 6, 6, device=device)


@ppy.opt(3)
def normal_kl(mean1: torch.Tensor, logvar1: torch.Tensor, mean2: torch.Tensor, logvar2: torch.Tensor) -> torch.Tensor:
    """
    Compute the KL divergence between two gaussians.
    Shapes are automatically broadcasted, so batches can be compared to
    scalars, among other use cases.
    """
    tensor = None
    for obj in (mean1, logvar1, mean2, logvar2):
        if isinstance(obj, torch.Tensor):
            tensor = obj
            break
    assert tensor is not None, "at least one argument must be a Tensor"

    # Force variances to be Tensors. Broadcasting helps convert scalars to
    # Tensors, but it does not work for torch.exp().
    logvar1, logvar2 = [
        x if isinstance(x, torch.Tensor) else torch.tensor(x).to(tensor)
        for x in (logvar1, logvar2)
    ]

    return 0.5 * (
        -1.0
        + logvar2
        - logvar1
        + torch.exp(logvar1 - logvar2)
        + ((mean1 - mean2) ** 2) * torch.exp(-logvar2)
    )


@normal_kl.samples
def _(device):
    yield tuple(torch.randn(2, 3, 4, device=device) for _ in range(4))
