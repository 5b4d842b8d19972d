"""Losses as first written: a language model's cross entropy, label smoothing by hand,
sigmoid focal loss, smooth L1 two ways, distillation KL, a CLIP-style contrastive loss, a masked token loss."""

from __future__ import annotations

import ppy
import torch
import torch.nn.functional as F

KIND = {
    "focal_loss_reduction": "by-design",  # `if reduction == "mean"` picks the reduction
    "loss_or_zero": "by-design",  # branches on whether any target is valid
}


@ppy.opt(3)
def lm_cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    return F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1), ignore_index=-1)


@lm_cross_entropy.samples
def _(device):
    targets = torch.randint(0, 11, (2, 6), device=device)
    targets[0, 0] = -1
    yield torch.randn(2, 6, 11, device=device), targets


@ppy.opt(3)
def label_smoothing_cross_entropy(x: torch.Tensor, target: torch.Tensor, smoothing: float = 0.1) -> torch.Tensor:
    confidence = 1.0 - smoothing
    logprobs = F.log_softmax(x, dim=-1)
    nll_loss = -logprobs.gather(dim=-1, index=target.unsqueeze(1))
    nll_loss = nll_loss.squeeze(1)
    smooth_loss = -logprobs.mean(dim=-1)
    loss = confidence * nll_loss + smoothing * smooth_loss
    return loss.mean()


@label_smoothing_cross_entropy.samples
def _(device):
    yield torch.randn(8, 5, device=device), torch.randint(0, 5, (8,), device=device)
    yield torch.randn(4, 3, device=device), torch.randint(0, 3, (4,), device=device), 0.2


@ppy.opt(3)
def sigmoid_focal_loss(inputs: torch.Tensor, targets: torch.Tensor, alpha: float = 0.25, gamma: float = 2) -> torch.Tensor:
    p = torch.sigmoid(inputs)
    ce_loss = F.binary_cross_entropy_with_logits(inputs, targets, reduction="none")
    p_t = p * targets + (1 - p) * (1 - targets)
    loss = ce_loss * ((1 - p_t) ** gamma)
    alpha_t = alpha * targets + (1 - alpha) * (1 - targets)
    loss = alpha_t * loss
    return loss.mean()


@sigmoid_focal_loss.samples
def _(device):
    yield torch.randn(6, 3, device=device), (torch.rand(6, 3, device=device) > 0.5).float()


@ppy.opt(3)
def focal_loss_reduction(inputs: torch.Tensor, targets: torch.Tensor, gamma: float, reduction: str) -> torch.Tensor:
    ce_loss = F.binary_cross_entropy_with_logits(inputs, targets, reduction="none")
    p_t = torch.exp(-ce_loss)
    loss = ce_loss * ((1 - p_t) ** gamma)
    if reduction == "mean":
        loss = loss.mean()
    elif reduction == "sum":
        loss = loss.sum()
    return loss


@focal_loss_reduction.samples
def _(device):
    yield torch.randn(6, 3, device=device), (torch.rand(6, 3, device=device) > 0.5).float(), 2.0, "mean"
    yield torch.randn(6, 3, device=device), (torch.rand(6, 3, device=device) > 0.5).float(), 1.5, "none"


@ppy.opt(3)
def smooth_l1(input: torch.Tensor, target: torch.Tensor, beta: float) -> torch.Tensor:
    return F.smooth_l1_loss(input, target, reduction="sum", beta=beta)


@smooth_l1.samples
def _(device):
    yield torch.randn(5, 4, device=device), torch.randn(5, 4, device=device), 1.0 / 9


@ppy.opt(3)
def smooth_l1_by_hand(input: torch.Tensor, target: torch.Tensor, beta: float) -> torch.Tensor:
    n = torch.abs(input - target)
    loss = torch.where(n < beta, 0.5 * n**2 / beta, n - 0.5 * beta)
    return loss.sum()


@smooth_l1_by_hand.samples
def _(device):
    yield torch.randn(5, 4, device=device), torch.randn(5, 4, device=device), 1.0 / 9


@ppy.opt(3)
def distillation_kl(student_logits: torch.Tensor, teacher_logits: torch.Tensor, temperature: float) -> torch.Tensor:
    soft_targets = F.softmax(teacher_logits / temperature, dim=-1)
    soft_prob = F.log_softmax(student_logits / temperature, dim=-1)
    return F.kl_div(soft_prob, soft_targets, reduction="batchmean") * (temperature**2)


@distillation_kl.samples
def _(device):
    yield torch.randn(4, 10, device=device), torch.randn(4, 10, device=device), 2.0


@ppy.opt(3)
def clip_loss(image_features: torch.Tensor, text_features: torch.Tensor, logit_scale: torch.Tensor) -> torch.Tensor:
    image_features = image_features / image_features.norm(dim=-1, keepdim=True)
    text_features = text_features / text_features.norm(dim=-1, keepdim=True)
    logits_per_image = logit_scale.exp() * image_features @ text_features.t()
    logits_per_text = logits_per_image.t()
    labels = torch.arange(logits_per_image.shape[0], device=image_features.device, dtype=torch.long)
    return (F.cross_entropy(logits_per_image, labels) + F.cross_entropy(logits_per_text, labels)) / 2


@clip_loss.samples
def _(device):
    yield torch.randn(6, 8, device=device), torch.randn(6, 8, device=device), torch.tensor(2.659, device=device)


@ppy.opt(3)
def masked_token_loss(logits: torch.Tensor, labels: torch.Tensor, loss_mask: torch.Tensor) -> torch.Tensor:
    losses = F.cross_entropy(logits.transpose(1, 2), labels, reduction="none")
    return (losses * loss_mask).sum() / loss_mask.sum()


@masked_token_loss.samples
def _(device):
    mask = (torch.rand(2, 6, device=device) > 0.3).float()
    mask[0, 0] = 1.0
    yield torch.randn(2, 6, 9, device=device), torch.randint(0, 9, (2, 6), device=device), mask


@ppy.opt(3)
def loss_or_zero(logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    valid = target != -100
    if valid.sum() == 0:
        return logits.sum() * 0.0
    return F.cross_entropy(logits[valid], target[valid])


@loss_or_zero.samples
def _(device):
    target = torch.randint(0, 4, (6,), device=device)
    target[1] = -100
    yield torch.randn(6, 4, device=device), target
    yield torch.randn(6, 4, device=device), torch.full((6,), -100, device=device)
