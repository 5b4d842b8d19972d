"""The module corpus's classes whose only gap is a branch on configuration, with that branch resolved.

Each class is its corpus file's copy (same name, same `__init__`, same
`forward`) with the branch on a configuration value replaced by the way the
case's configuration goes, marked `# config resolved:`. Nothing else differs:
`tests/compiler/test_module_corpus.py` measures these beside the classes as
written, so the rate with configuration-only branches resolved is the issue's
measure, and the rate as written is the harder one.
"""

import ppy
import torch
import torch.nn as nn
import torch.nn.functional as F


class LlamaConfig:
    def __init__(self, hidden_size: int = 8, intermediate_size: int = 16, num_attention_heads: int = 2,
                 num_key_value_heads: int = 1, rms_norm_eps: float = 1e-6, attention_dropout: float = 0.0,
                 attention_bias: bool = False, mlp_bias: bool = False, hidden_act: str = "silu"):
        self.hidden_size = hidden_size
        self.intermediate_size = intermediate_size
        self.num_attention_heads = num_attention_heads
        self.num_key_value_heads = num_key_value_heads
        self.rms_norm_eps = rms_norm_eps
        self.attention_dropout = attention_dropout
        self.attention_bias = attention_bias
        self.mlp_bias = mlp_bias
        self.hidden_act = hidden_act


def repeat_kv(hidden_states: torch.Tensor, n_rep: int) -> torch.Tensor:
    """
    This is the equivalent of torch.repeat_interleave(x, dim=1, repeats=n_rep). The hidden states go from (batch,
    num_key_value_heads, seqlen, head_dim) to (batch, num_attention_heads, seqlen, head_dim)
    """
    batch, num_key_value_heads, slen, head_dim = hidden_states.shape
    # config resolved: n_rep == 1 is False (num_attention_heads=2, num_key_value_heads=1)
    hidden_states = hidden_states[:, :, None, :, :].expand(batch, num_key_value_heads, n_rep, slen, head_dim)
    return hidden_states.reshape(batch, num_key_value_heads * n_rep, slen, head_dim)


class LlamaAttention(nn.Module):
    """Multi-headed attention from 'Attention Is All You Need' paper (rotary embeddings and the cache left out)"""

    def __init__(self, config: LlamaConfig, layer_idx: int):
        super().__init__()
        self.config = config
        self.layer_idx = layer_idx
        self.head_dim = config.hidden_size // config.num_attention_heads
        self.num_key_value_groups = config.num_attention_heads // config.num_key_value_heads
        self.scaling = self.head_dim**-0.5
        self.attention_dropout = config.attention_dropout
        self.is_causal = True

        self.q_proj = nn.Linear(config.hidden_size, config.num_attention_heads * self.head_dim, bias=config.attention_bias)
        self.k_proj = nn.Linear(config.hidden_size, config.num_key_value_heads * self.head_dim, bias=config.attention_bias)
        self.v_proj = nn.Linear(config.hidden_size, config.num_key_value_heads * self.head_dim, bias=config.attention_bias)
        self.o_proj = nn.Linear(config.num_attention_heads * self.head_dim, config.hidden_size, bias=config.attention_bias)

    @ppy.opt(3)
    def forward(self, hidden_states: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        input_shape = hidden_states.shape[:-1]
        hidden_shape = (*input_shape, -1, self.head_dim)

        query_states = self.q_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        key_states = self.k_proj(hidden_states).view(hidden_shape).transpose(1, 2)
        value_states = self.v_proj(hidden_states).view(hidden_shape).transpose(1, 2)

        # eager_attention_forward, inlined as the "eager" attn_implementation runs it
        key_states = repeat_kv(key_states, self.num_key_value_groups)
        value_states = repeat_kv(value_states, self.num_key_value_groups)

        attn_weights = torch.matmul(query_states, key_states.transpose(2, 3)) * self.scaling
        causal_mask = attention_mask[:, :, :, : key_states.shape[-2]]
        attn_weights = attn_weights + causal_mask

        attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query_states.dtype)
        attn_weights = nn.functional.dropout(attn_weights, p=self.attention_dropout, training=self.training)
        attn_output = torch.matmul(attn_weights, value_states)
        attn_output = attn_output.transpose(1, 2).contiguous()

        attn_output = attn_output.reshape(*input_shape, -1).contiguous()
        attn_output = self.o_proj(attn_output)
        return attn_output


class T5LayerNorm(nn.Module):
    def __init__(self, hidden_size: int, eps: float = 1e-6):
        """
        Construct a layernorm module in the T5 style. No bias and no subtraction of mean.
        """
        super().__init__()
        self.weight = nn.Parameter(torch.ones(hidden_size))
        self.variance_epsilon = eps

    @ppy.opt(3)
    def forward(self, hidden_states: torch.Tensor) -> torch.Tensor:
        # T5 uses a layer_norm which only scales and doesn't shift, which is also known as Root Mean
        # Square Layer Normalization https://huggingface.co/papers/1910.07467 thus variance is calculated
        # w/o mean and there is no bias. Additionally we want to make sure that the accumulation for
        # half-precision inputs is done in fp32

        variance = hidden_states.to(torch.float32).pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)

        # convert into half-precision if necessary
        # config resolved: the weight is float32, so no conversion

        return self.weight * hidden_states


def conv3x3(in_planes: int, out_planes: int, stride: int = 1, groups: int = 1, dilation: int = 1) -> nn.Conv2d:
    """3x3 convolution with padding"""
    return nn.Conv2d(
        in_planes,
        out_planes,
        kernel_size=3,
        stride=stride,
        padding=dilation,
        groups=groups,
        bias=False,
        dilation=dilation,
    )


class BasicBlock(nn.Module):
    expansion: int = 1

    def __init__(self, inplanes: int, planes: int, stride: int = 1, downsample: nn.Sequential | None = None) -> None:
        super().__init__()
        norm_layer = nn.BatchNorm2d
        # Both self.conv1 and self.downsample layers downsample the input when stride != 1
        self.conv1 = conv3x3(inplanes, planes, stride)
        self.bn1 = norm_layer(planes)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = conv3x3(planes, planes)
        self.bn2 = norm_layer(planes)
        self.downsample = downsample
        self.stride = stride

    @ppy.opt(3)
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        identity = x

        out = self.conv1(x)
        out = self.bn1(out)
        out = self.relu(out)

        out = self.conv2(out)
        out = self.bn2(out)

        # config resolved: no downsample (stride 1, inplanes == planes)

        out += identity
        out = self.relu(out)

        return out


class LayerScale(nn.Module):
    def __init__(self, dim: int, init_values: float = 1e-5, inplace: bool = False):
        super().__init__()
        self.inplace = inplace
        self.gamma = nn.Parameter(init_values * torch.ones(dim))

    @ppy.opt(3)
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # config resolved: inplace=False
        return x * self.gamma


class ConvNeXtBlock(nn.Module):
    r""" ConvNeXt Block (the facebookresearch ConvNeXt repository's). There are two equivalent implementations:
    (1) DwConv -> LayerNorm (channels_first) -> 1x1 Conv -> GELU -> 1x1 Conv; all in (N, C, H, W)
    (2) DwConv -> Permute to (N, H, W, C); LayerNorm (channels_last) -> Linear -> GELU -> Linear; Permute back
    We use (2) as we find it slightly faster in PyTorch
    """
    # config resolved: drop_path=0. (nn.Identity); the original's channels_last LayerNorm is nn.LayerNorm
    def __init__(self, dim: int, drop_path: float = 0., layer_scale_init_value: float = 1e-6):
        super().__init__()
        self.dwconv = nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim) # depthwise conv
        self.norm = nn.LayerNorm(dim, eps=1e-6)
        self.pwconv1 = nn.Linear(dim, 4 * dim) # pointwise/1x1 convs, implemented with linear layers
        self.act = nn.GELU()
        self.pwconv2 = nn.Linear(4 * dim, dim)
        self.gamma = nn.Parameter(layer_scale_init_value * torch.ones((dim)),
                                    requires_grad=True) if layer_scale_init_value > 0 else None
        self.drop_path = nn.Identity()

    @ppy.opt(3)
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        input = x
        x = self.dwconv(x)
        x = x.permute(0, 2, 3, 1) # (N, C, H, W) -> (N, H, W, C)
        x = self.norm(x)
        x = self.pwconv1(x)
        x = self.act(x)
        x = self.pwconv2(x)
        # config resolved: layer_scale_init_value > 0, so self.gamma is a parameter
        x = self.gamma * x
        x = x.permute(0, 3, 1, 2) # (N, H, W, C) -> (N, C, H, W)

        x = input + self.drop_path(x)
        return x


def _causal_mask(t: int) -> torch.Tensor:
    return torch.full((t, t), float("-inf")).triu(1)[None, None]


# Each class here by the case as written that it resolves.
RESOLVES = {"LlamaAttention": "hf_transformers.LlamaAttention", "T5LayerNorm": "hf_transformers.T5LayerNorm",
            "LayerScale": "timm_vision.LayerScale", "ConvNeXtBlock": "timm_vision.ConvNeXtBlock",
            "BasicBlock": "convnets_diffusion.BasicBlock"}


def cases():
    config = LlamaConfig()
    return {
        "LlamaAttention": (lambda: LlamaAttention(config, 0), lambda: (torch.randn(2, 5, 8), _causal_mask(5))),
        "T5LayerNorm": (lambda: T5LayerNorm(8), lambda: (torch.randn(2, 5, 8),)),
        "LayerScale": (lambda: LayerScale(8, init_values=0.1), lambda: (torch.randn(2, 5, 8),)),
        "ConvNeXtBlock": (lambda: ConvNeXtBlock(4, layer_scale_init_value=0.5), lambda: (torch.randn(2, 4, 6, 6),)),
        "BasicBlock": (lambda: BasicBlock(4, 4), lambda: (torch.randn(2, 4, 6, 6),)),
    }
