"""Vision blocks as first written: conv-batchnorm-ReLU, folding a batch norm into a conv, "same" padding,
a ViT's patch embedding, stochastic depth, a ConvNeXt block, Swin's window partition and reverse, a
ResNet basic block, position-embedding resampling and a channels-last norm with einops."""

import math
from typing import Optional

import ppy
import torch
import torch.nn.functional as F
from einops import rearrange

KIND = {
    "drop_path": "by-design",  # `if drop_prob == 0.0 or not training: return x`
    "basic_block": "by-design",  # `if downsample_w is not None`
}


def _w(device, *shape, scale=0.3):
    return torch.randn(*shape, device=device) * scale


@ppy.opt(3)
def conv_bn_relu(x: torch.Tensor, conv_w: torch.Tensor, bn_w: torch.Tensor, bn_b: torch.Tensor,
                 running_mean: torch.Tensor, running_var: torch.Tensor, eps: float = 1e-5) -> torch.Tensor:
    x = F.conv2d(x, conv_w, None, stride=1, padding=1)
    x = F.batch_norm(x, running_mean, running_var, bn_w, bn_b, False, 0.1, eps)
    return F.relu(x)


@conv_bn_relu.samples
def _(device):
    yield (torch.randn(2, 3, 5, 5, device=device), _w(device, 4, 3, 3, 3), 1 + _w(device, 4), _w(device, 4),
           _w(device, 4), torch.rand(4, device=device) + 0.5)


@ppy.opt(3)
def fuse_conv_bn_weights(conv_w: torch.Tensor, conv_b: torch.Tensor, bn_rm: torch.Tensor, bn_rv: torch.Tensor,
                         bn_eps: float, bn_w: torch.Tensor, bn_b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    bn_var_rsqrt = torch.rsqrt(bn_rv + bn_eps)
    fused_conv_w = (conv_w * (bn_w * bn_var_rsqrt).reshape([-1] + [1] * (len(conv_w.shape) - 1))).to(dtype=conv_w.dtype)
    fused_conv_b = ((conv_b - bn_rm) * bn_var_rsqrt * bn_w + bn_b).to(dtype=conv_b.dtype)
    return fused_conv_w, fused_conv_b


@fuse_conv_bn_weights.samples
def _(device):
    yield (_w(device, 4, 3, 3, 3), _w(device, 4), _w(device, 4), torch.rand(4, device=device) + 0.5, 1e-5,
           1 + _w(device, 4), _w(device, 4))


@ppy.opt(3)
def conv2d_same(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, stride: int, dilation: int) -> torch.Tensor:
    ih, iw = x.size()[-2:]
    kh, kw = weight.size()[-2:]
    pad_h = max((math.ceil(ih / stride) - 1) * stride + (kh - 1) * dilation + 1 - ih, 0)
    pad_w = max((math.ceil(iw / stride) - 1) * stride + (kw - 1) * dilation + 1 - iw, 0)
    x = F.pad(x, [pad_w // 2, pad_w - pad_w // 2, pad_h // 2, pad_h - pad_h // 2], value=0.0)
    return F.conv2d(x, weight, bias, stride, 0, dilation)


@conv2d_same.samples
def _(device):
    yield torch.randn(2, 3, 7, 6, device=device), _w(device, 4, 3, 3, 3), _w(device, 4), 2, 1
    yield torch.randn(1, 3, 5, 5, device=device), _w(device, 4, 3, 3, 3), _w(device, 4), 1, 2


@ppy.opt(3)
def patch_embed(x: torch.Tensor, proj_w: torch.Tensor, proj_b: torch.Tensor, patch_size: int) -> torch.Tensor:
    x = F.conv2d(x, proj_w, proj_b, stride=patch_size)
    return x.flatten(2).transpose(1, 2)


@patch_embed.samples
def _(device):
    yield torch.randn(2, 3, 8, 8, device=device), _w(device, 16, 3, 4, 4), _w(device, 16), 4


@ppy.opt(3)
def drop_path(x: torch.Tensor, drop_prob: float = 0.0, training: bool = False, scale_by_keep: bool = True) -> torch.Tensor:
    if drop_prob == 0.0 or not training:
        return x
    keep_prob = 1 - drop_prob
    shape = (x.shape[0],) + (1,) * (x.ndim - 1)
    random_tensor = x.new_empty(shape).bernoulli_(keep_prob)
    if keep_prob > 0.0 and scale_by_keep:
        random_tensor.div_(keep_prob)
    return x * random_tensor


@drop_path.samples
def _(device):
    yield torch.randn(4, 3, 5, device=device), 0.0, True
    yield torch.randn(4, 3, 5, device=device), 0.5, True


@ppy.opt(3)
def drop_path_train(x: torch.Tensor, drop_prob: float) -> torch.Tensor:
    keep_prob = 1 - drop_prob
    shape = (x.shape[0],) + (1,) * (x.ndim - 1)
    random_tensor = x.new_empty(shape).bernoulli_(keep_prob)
    random_tensor.div_(keep_prob)
    return x * random_tensor


@drop_path_train.samples
def _(device):
    yield torch.randn(8, 3, 5, device=device), 0.25


@ppy.opt(3)
def convnext_block(x: torch.Tensor, dw_w: torch.Tensor, dw_b: torch.Tensor, ln_w: torch.Tensor, ln_b: torch.Tensor,
                   pw1_w: torch.Tensor, pw1_b: torch.Tensor, pw2_w: torch.Tensor, pw2_b: torch.Tensor,
                   gamma: torch.Tensor) -> torch.Tensor:
    shortcut = x
    x = F.conv2d(x, dw_w, dw_b, padding=3, groups=x.shape[1])
    x = x.permute(0, 2, 3, 1)
    x = F.layer_norm(x, (x.shape[-1],), ln_w, ln_b, 1e-6)
    x = F.linear(x, pw1_w, pw1_b)
    x = F.gelu(x)
    x = F.linear(x, pw2_w, pw2_b)
    x = gamma * x
    x = x.permute(0, 3, 1, 2)
    return shortcut + x


@convnext_block.samples
def _(device):
    c = 4
    yield (torch.randn(2, c, 6, 6, device=device), _w(device, c, 1, 7, 7), _w(device, c), 1 + _w(device, c),
           _w(device, c), _w(device, 4 * c, c), _w(device, 4 * c), _w(device, c, 4 * c), _w(device, c), _w(device, c))


@ppy.opt(3)
def window_partition(x: torch.Tensor, window_size: int) -> torch.Tensor:
    B, H, W, C = x.shape
    x = x.view(B, H // window_size, window_size, W // window_size, window_size, C)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(-1, window_size, window_size, C)


@window_partition.samples
def _(device):
    yield torch.randn(2, 6, 4, 3, device=device), 2


@ppy.opt(3)
def window_reverse(windows: torch.Tensor, window_size: int, H: int, W: int) -> torch.Tensor:
    B = int(windows.shape[0] / (H * W / window_size / window_size))
    x = windows.view(B, H // window_size, W // window_size, window_size, window_size, -1)
    return x.permute(0, 1, 3, 2, 4, 5).contiguous().view(B, H, W, -1)


@window_reverse.samples
def _(device):
    yield torch.randn(12, 2, 2, 3, device=device), 2, 6, 4


@ppy.opt(3)
def basic_block(x: torch.Tensor, conv1_w: torch.Tensor, conv2_w: torch.Tensor,
                downsample_w: Optional[torch.Tensor] = None) -> torch.Tensor:
    identity = x
    out = F.relu(F.conv2d(x, conv1_w, padding=1))
    out = F.conv2d(out, conv2_w, padding=1)
    if downsample_w is not None:
        identity = F.conv2d(x, downsample_w)
    return F.relu(out + identity)


@basic_block.samples
def _(device):
    yield torch.randn(2, 4, 5, 5, device=device), _w(device, 4, 4, 3, 3), _w(device, 4, 4, 3, 3)
    yield torch.randn(2, 4, 5, 5, device=device), _w(device, 8, 4, 3, 3), _w(device, 8, 8, 3, 3), _w(device, 8, 4, 1, 1)


@ppy.opt(3)
def resample_pos_embed(posemb: torch.Tensor, old_size: int, new_size: int) -> torch.Tensor:
    embed_dim = posemb.shape[-1]
    posemb = posemb.reshape(1, old_size, old_size, -1).permute(0, 3, 1, 2)
    posemb = F.interpolate(posemb, size=(new_size, new_size), mode="bicubic", antialias=True, align_corners=False)
    return posemb.permute(0, 2, 3, 1).reshape(1, -1, embed_dim)


@resample_pos_embed.samples
def _(device):
    yield torch.randn(1, 16, 8, device=device), 4, 6


@ppy.opt(3)
def channels_last_norm(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, eps: float) -> torch.Tensor:
    x = rearrange(x, "b c h w -> b h w c")
    x = F.layer_norm(x, weight.shape, weight, bias, eps)
    return rearrange(x, "b h w c -> b c h w")


@channels_last_norm.samples
def _(device):
    yield torch.randn(2, 6, 3, 4, device=device), 1 + _w(device, 6), _w(device, 6), 1e-6
