"""Optimizer steps as first written: one parameter's update, in place, the way the single-tensor paths
of common optimizers write it (SGD with momentum, Adam, AdamW with a tensor step, Lion),
an EMA of weights, gradient clipping, and learning-rate schedules."""

import math

import ppy
import torch

KIND = {
    "sgd_nesterov_flag": "by-design",  # `if nesterov` picks the update
    "clip_grad_norm": "by-design",  # loops over the gradients
    "lr_warmup_cosine": "by-design",  # `if it < warmup_iters`
}


def _state(device, *shape):
    g = torch.Generator().manual_seed(0)
    return tuple(torch.randn(*shape, generator=g).to(device) for _ in range(3))


@ppy.opt(3)
def sgd_momentum(param: torch.Tensor, grad: torch.Tensor, momentum_buffer: torch.Tensor, lr: float, momentum: float,
                 dampening: float, weight_decay: float) -> None:
    d_p = grad.add(param, alpha=weight_decay)
    momentum_buffer.mul_(momentum).add_(d_p, alpha=1 - dampening)
    param.add_(momentum_buffer, alpha=-lr)


@sgd_momentum.samples
def _(device):
    param, grad, buf = _state(device, 4, 3)
    yield param, grad, buf, 0.1, 0.9, 0.0, 1e-4


@ppy.opt(3)
def sgd_nesterov_flag(param: torch.Tensor, grad: torch.Tensor, buf: torch.Tensor, lr: float, momentum: float,
                      nesterov: bool) -> None:
    buf.mul_(momentum).add_(grad)
    if nesterov:
        grad = grad.add(buf, alpha=momentum)
    else:
        grad = buf
    param.add_(grad, alpha=-lr)


@sgd_nesterov_flag.samples
def _(device):
    param, grad, buf = _state(device, 4, 3)
    yield param, grad, buf, 0.1, 0.9, True


@ppy.opt(3)
def adam(param: torch.Tensor, grad: torch.Tensor, exp_avg: torch.Tensor, exp_avg_sq: torch.Tensor, step: int,
         lr: float, beta1: float, beta2: float, eps: float) -> None:
    exp_avg.lerp_(grad, 1 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad.conj(), value=1 - beta2)
    bias_correction1 = 1 - beta1**step
    bias_correction2 = 1 - beta2**step
    step_size = lr / bias_correction1
    bias_correction2_sqrt = math.sqrt(bias_correction2)
    denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
    param.addcdiv_(exp_avg, denom, value=-step_size)


@adam.samples
def _(device):
    param, grad, exp_avg = _state(device, 5, 2)
    yield param, grad, exp_avg, exp_avg.abs(), 3, 1e-3, 0.9, 0.999, 1e-8


@ppy.opt(3)
def adamw_tensor_step(param: torch.Tensor, grad: torch.Tensor, exp_avg: torch.Tensor, exp_avg_sq: torch.Tensor,
                      step_t: torch.Tensor, lr: float, beta1: float, beta2: float, eps: float,
                      weight_decay: float) -> None:
    step_t += 1
    param.mul_(1 - lr * weight_decay)
    exp_avg.lerp_(grad, 1 - beta1)
    exp_avg_sq.mul_(beta2).addcmul_(grad, grad, value=1 - beta2)
    bias_correction1 = 1 - torch.pow(beta1, step_t)
    bias_correction2 = 1 - torch.pow(beta2, step_t)
    step_size = lr / bias_correction1
    step_size_neg = step_size.neg()
    bias_correction2_sqrt = bias_correction2.sqrt()
    denom = (exp_avg_sq.sqrt() / (bias_correction2_sqrt * step_size_neg)).add_(eps / step_size_neg)
    param.addcdiv_(exp_avg, denom)


@adamw_tensor_step.samples
def _(device):
    param, grad, exp_avg = _state(device, 5, 2)
    yield param, grad, exp_avg, exp_avg.abs(), torch.tensor(4.0, device=device), 1e-3, 0.9, 0.95, 1e-8, 0.1


@ppy.opt(3)
def lion(p: torch.Tensor, grad: torch.Tensor, exp_avg: torch.Tensor, lr: float, wd: float, beta1: float,
         beta2: float) -> None:
    p.data.mul_(1 - lr * wd)
    update = exp_avg.clone().mul_(beta1).add(grad, alpha=1 - beta1).sign_()
    p.add_(update, alpha=-lr)
    exp_avg.mul_(beta2).add_(grad, alpha=1 - beta2)


@lion.samples
def _(device):
    param, grad, exp_avg = _state(device, 4, 4)
    yield param, grad, exp_avg, 1e-4, 0.01, 0.9, 0.99


@ppy.opt(3)
def ema_update(ema_v: torch.Tensor, model_v: torch.Tensor, decay: float) -> None:
    ema_v.copy_(ema_v * decay + (1.0 - decay) * model_v)


@ema_update.samples
def _(device):
    ema, model, _ = _state(device, 6)
    yield ema, model, 0.9998


@ppy.opt(3)
def clip_grad_norm(grads: tuple[torch.Tensor, ...], max_norm: float) -> torch.Tensor:
    total_norm = torch.norm(torch.stack([torch.norm(g.detach(), 2.0) for g in grads]), 2.0)
    clip_coef = max_norm / (total_norm + 1e-6)
    clip_coef_clamped = torch.clamp(clip_coef, max=1.0)
    for g in grads:
        g.mul_(clip_coef_clamped)
    return total_norm


@clip_grad_norm.samples
def _(device):
    a, b, c = _state(device, 3, 3)
    yield (a, b, c), 1.0


@ppy.opt(3)
def cosine_decay_lr(it: int, lr_decay_iters: int, learning_rate: float, min_lr: float) -> float:
    decay_ratio = it / lr_decay_iters
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    return min_lr + coeff * (learning_rate - min_lr)


@cosine_decay_lr.samples
def _():
    yield 100, 5000, 6e-4, 6e-5
    yield 5000, 5000, 6e-4, 6e-5


@ppy.opt(3)
def lr_warmup_cosine(it: int, warmup_iters: int, lr_decay_iters: int, learning_rate: float, min_lr: float) -> float:
    if it < warmup_iters:
        return learning_rate * (it + 1) / (warmup_iters + 1)
    if it > lr_decay_iters:
        return min_lr
    decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    return min_lr + coeff * (learning_rate - min_lr)


@lr_warmup_cosine.samples
def _():
    yield 10, 100, 5000, 6e-4, 6e-5
    yield 1000, 100, 5000, 6e-4, 6e-5
