"""Functional metrics as first written, from torchmetrics: the mean squared error's update (with its
shape check), cosine similarity's compute (a dict of reductions), binary stat scores, the safe
division used by the classification metrics, PSNR's compute (with the shared ``reduce``), and SSIM's
Gaussian kernel.

Changed from the project's code: ``import ppy``, ``@ppy.opt(3)`` and parameter annotations only
(torchmetrics annotates its functions itself). The helpers ``_check_same_shape``, ``reduce`` and
``_gaussian`` are the project's, called as it calls them.
"""

from typing import Optional, Sequence, Tuple

import ppy
import torch
from torch import Tensor, tensor

KIND: dict[str, str] = {}


def _check_same_shape(preds: Tensor, target: Tensor) -> None:
    """Check that predictions and target have the same shape, else raise error."""
    if preds.shape != target.shape:
        raise RuntimeError(
            f"Predictions and targets are expected to have the same shape, but got {preds.shape} and {target.shape}."
        )


def reduce(x: Tensor, reduction: Optional[str]) -> Tensor:
    """Reduces a given tensor by a given reduction method."""
    if reduction == "elementwise_mean":
        return torch.mean(x)
    if reduction == "none" or reduction is None:
        return x
    if reduction == "sum":
        return torch.sum(x)
    raise ValueError("Reduction parameter unknown.")


@ppy.opt(3)
def _mean_squared_error_update(preds: Tensor, target: Tensor, num_outputs: int) -> Tuple[Tensor, int]:
    """Update and returns variables required to compute Mean Squared Error."""
    _check_same_shape(preds, target)
    if num_outputs == 1:
        preds = preds.view(-1)
        target = target.view(-1)
    diff = preds - target
    sum_squared_error = torch.sum(diff * diff, dim=0)
    return sum_squared_error, target.shape[0]


@_mean_squared_error_update.samples
def _(device):
    yield torch.randn(10, device=device), torch.randn(10, device=device), 1
    yield torch.randn(6, 3, device=device), torch.randn(6, 3, device=device), 3


@ppy.opt(3)
def _cosine_similarity_compute(preds: Tensor, target: Tensor, reduction: Optional[str] = "sum") -> Tensor:
    """Compute Cosine Similarity."""
    dot_product = (preds * target).sum(dim=-1)
    preds_norm = preds.norm(dim=-1)
    target_norm = target.norm(dim=-1)
    similarity = dot_product / (preds_norm * target_norm)
    reduction_mapping = {
        "sum": torch.sum,
        "mean": torch.mean,
        "none": lambda x: x,
        None: lambda x: x,
    }
    return reduction_mapping[reduction](similarity)  # type: ignore[operator]


@_cosine_similarity_compute.samples
def _(device):
    yield torch.randn(5, 8, device=device), torch.randn(5, 8, device=device)
    yield torch.randn(5, 8, device=device), torch.randn(5, 8, device=device), "mean"


@ppy.opt(3)
def _binary_stat_scores_update(
    preds: Tensor,
    target: Tensor,
    multidim_average: str = "global",
) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
    """Compute the statistics."""
    sum_dim = [0, 1] if multidim_average == "global" else [1]
    tp = ((target == preds) & (target == 1)).sum(sum_dim).squeeze()
    fn = ((target != preds) & (target == 1)).sum(sum_dim).squeeze()
    fp = ((target != preds) & (target == 0)).sum(sum_dim).squeeze()
    tn = ((target == preds) & (target == 0)).sum(sum_dim).squeeze()
    return tp, fp, tn, fn


@_binary_stat_scores_update.samples
def _(device):
    preds, target = torch.randint(0, 2, (4, 9), device=device), torch.randint(0, 2, (4, 9), device=device)
    yield preds, target
    yield preds, target, "samplewise"


@ppy.opt(3)
def _safe_divide(num: Tensor, denom: Tensor, zero_division: float = 0.0) -> Tensor:
    """Safe division, by preventing division by zero.

    Function will cast to float if input is not already to secure backwards compatibility.
    """
    num = num if num.is_floating_point() else num.float()
    denom = denom if denom.is_floating_point() else denom.float()
    zero_division = torch.tensor(zero_division).float().to(num.device)
    return torch.where(denom != 0, num / denom, zero_division)


@_safe_divide.samples
def _(device):
    yield torch.tensor([1, 2, 3, 0], device=device), torch.tensor([2, 0, 3, 0], device=device)
    yield torch.rand(5, device=device), torch.tensor([1.0, 0.0, 2.0, 0.0, 4.0], device=device), 1.0


@ppy.opt(3)
def _psnr_compute(
    sum_squared_error: Tensor,
    num_obs: Tensor,
    data_range: Tensor,
    base: float = 10.0,
    reduction: Optional[str] = "elementwise_mean",
) -> Tensor:
    """Compute peak signal-to-noise ratio."""
    psnr_base_e = 2 * torch.log(data_range) - torch.log(sum_squared_error / num_obs)
    psnr_vals = psnr_base_e * (10 / torch.log(tensor(base)))
    return reduce(psnr_vals, reduction=reduction)


@_psnr_compute.samples
def _(device):
    yield torch.rand(4, device=device) * 10 + 1, torch.tensor(64.0, device=device), torch.tensor(1.0, device=device)
    yield (torch.rand(4, device=device) * 10 + 1, torch.tensor(64.0, device=device), torch.tensor(255.0, device=device),
           10.0, "none")


def _gaussian(kernel_size: int, sigma: float, dtype: torch.dtype, device: torch.device) -> Tensor:
    """Compute 1D gaussian kernel."""
    dist = torch.arange(start=(1 - kernel_size) / 2, end=(1 + kernel_size) / 2, step=1, dtype=dtype, device=device)
    gauss = torch.exp(-torch.pow(dist / sigma, 2) / 2)
    return (gauss / gauss.sum()).unsqueeze(dim=0)  # (1, kernel_size)


@ppy.opt(3)
def _gaussian_kernel_2d(
    channel: int,
    kernel_size: Sequence[int],
    sigma: Sequence[float],
    dtype: torch.dtype,
    device: torch.device,
) -> Tensor:
    """Compute 2D gaussian kernel."""
    gaussian_kernel_x = _gaussian(kernel_size[0], sigma[0], dtype, device)
    gaussian_kernel_y = _gaussian(kernel_size[1], sigma[1], dtype, device)
    kernel = torch.matmul(gaussian_kernel_x.t(), gaussian_kernel_y)  # (kernel_size, 1) * (1, kernel_size)

    return kernel.expand(channel, 1, kernel_size[0], kernel_size[1])


@_gaussian_kernel_2d.samples
def _(device):
    yield 3, [11, 11], [1.5, 1.5], torch.float32, torch.device(device)
    yield 1, [5, 7], [1.0, 2.0], torch.float64, torch.device(device)
