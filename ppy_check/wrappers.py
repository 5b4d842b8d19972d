"""Python-level torch functions, each written as the native calls it makes.

Most of ``torch.*`` is a builtin bound straight to one native function; those
come from ``opdata.json``. The rest (``F.softmax``, ``F.silu``, ``torch.split``,
``Tensor.unflatten``...) are Python wrappers, and this table says what each
becomes: a signature like the wrapper's own, and an expansion in region syntax
over its parameters. The model builder evaluates the expansion over the
call's arguments (each evaluated once, in Python's order). In an expansion
``aten.NAME`` is the native function ``NAME`` (never another wrapper) and
``unsupported("why")`` marks a form that has no lowering. A conditional
expression may only test a parameter that the call passes as a literal
(``inplace``, ``dim is None``); it folds at build time.

A test checks every entry against what eager PyTorch computes.
"""

from __future__ import annotations

import ast
import functools
from dataclasses import dataclass

_REDUCTIONS = 'aten_reduction(reduction)'


@dataclass(frozen=True)
class Wrapper:
    namespace: str
    name: str
    signature: str
    expansion: str

    @functools.cached_property
    def arguments(self) -> ast.arguments:
        return ast.parse(f"def _({self.signature}): pass").body[0].args  # type: ignore[attr-defined]

    @functools.cached_property
    def template(self) -> ast.expr:
        return ast.parse(self.expansion, mode="eval").body


def _table(namespace: str, entries: dict[str, tuple[str, str]]) -> dict[str, Wrapper]:
    return {name: Wrapper(namespace, name, sig, expansion) for name, (sig, expansion) in entries.items()}


_FUNCTIONAL = {
    "relu": ("input, inplace=False", "aten.relu_(input) if inplace else aten.relu(input)"),
    "relu6": ("input, inplace=False", "aten.hardtanh_(input, 0.0, 6.0) if inplace else aten.hardtanh(input, 0.0, 6.0)"),
    "silu": ("input, inplace=False", "aten.silu_(input) if inplace else aten.silu(input)"),
    "mish": ("input, inplace=False", "aten.mish_(input) if inplace else aten.mish(input)"),
    "hardswish": ("input, inplace=False", "aten.hardswish_(input) if inplace else aten.hardswish(input)"),
    "hardsigmoid": ("input, inplace=False", "aten.hardsigmoid_(input) if inplace else aten.hardsigmoid(input)"),
    "elu": ("input, alpha=1.0, inplace=False", "aten.elu_(input, alpha) if inplace else aten.elu(input, alpha)"),
    "celu": ("input, alpha=1.0, inplace=False", "aten.celu_(input, alpha) if inplace else aten.celu(input, alpha)"),
    "selu": ("input, inplace=False", "aten.selu_(input) if inplace else aten.selu(input)"),
    "leaky_relu": (
        "input, negative_slope=0.01, inplace=False",
        "aten.leaky_relu_(input, negative_slope) if inplace else aten.leaky_relu(input, negative_slope)",
    ),
    "hardtanh": (
        "input, min_val=-1.0, max_val=1.0, inplace=False",
        "aten.hardtanh_(input, min_val, max_val) if inplace else aten.hardtanh(input, min_val, max_val)",
    ),
    "threshold": (
        "input, threshold, value, inplace=False",
        "aten.threshold_(input, threshold, value) if inplace else aten.threshold(input, threshold, value)",
    ),
    "glu": ("input, dim=-1", "aten.glu(input, dim)"),
    "sigmoid": ("input", "aten.sigmoid(input)"),
    "tanh": ("input", "aten.tanh(input)"),
    "softsign": ("input", "aten.div(input, aten.add(aten.abs(input), 1))"),
    "tanhshrink": ("input", "aten.sub(input, aten.tanh(input))"),
    "softmax": (
        "input, dim=None, _stacklevel=3, dtype=None",
        'unsupported("pass `dim`") if dim is None else aten.softmax(input, dim, dtype=dtype)',
    ),
    "log_softmax": (
        "input, dim=None, _stacklevel=3, dtype=None",
        'unsupported("pass `dim`") if dim is None else aten.log_softmax(input, dim, dtype=dtype)',
    ),
    "softmin": (
        "input, dim=None, _stacklevel=3, dtype=None",
        'unsupported("pass `dim`") if dim is None else aten.softmax(aten.neg(input), dim, dtype=dtype)',
    ),
    "layer_norm": (
        "input, normalized_shape, weight=None, bias=None, eps=1e-05",
        "aten.layer_norm(input, normalized_shape, weight, bias, eps)",
    ),
    "rms_norm": (
        "input, normalized_shape, weight=None, eps=None",
        "aten.rms_norm(input, normalized_shape, weight, eps)",
    ),
    "group_norm": (
        "input, num_groups, weight=None, bias=None, eps=1e-05",
        "aten.group_norm(input, num_groups, weight, bias, eps)",
    ),
    "dropout": (
        "input, p=0.5, training=True, inplace=False",
        "aten.dropout_(input, p, training) if inplace else aten.dropout(input, p, training)",
    ),
    "embedding": (
        "input, weight, padding_idx=None, max_norm=None, norm_type=2.0, scale_grad_by_freq=False, sparse=False",
        'unsupported("`max_norm` renormalises the weight in place") if max_norm is not None else '
        "aten.embedding(weight, input, -1 if padding_idx is None else padding_idx, scale_grad_by_freq, sparse)",
    ),
    "pad": ("input, pad, mode='constant', value=None", "aten.pad(input, pad, mode, value)"),
    "normalize": (
        "input, p=2.0, dim=1, eps=1e-12, out=None",
        'unsupported("`out=` is not supported here") if out is not None else '
        "aten.div(input, aten.clamp_min(aten.norm(input, p, [dim], True), eps).expand_as(input))",
    ),
    "max_pool2d": (
        "input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False, return_indices=False",
        'unsupported("`return_indices=True` returns a pair") if return_indices else '
        "aten.max_pool2d(input, kernel_size, () if stride is None else stride, padding, dilation, ceil_mode)",
    ),
    "avg_pool2d": (
        "input, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True, divisor_override=None",
        "aten.avg_pool2d(input, kernel_size, () if stride is None else stride, padding, ceil_mode, count_include_pad, divisor_override)",
    ),
    "adaptive_avg_pool2d": ("input, output_size", "aten.adaptive_avg_pool2d(input, output_size)"),
    "mse_loss": (
        "input, target, size_average=None, reduce=None, reduction='mean'",
        "aten.mse_loss(input, target, " + _REDUCTIONS + ")",
    ),
    "l1_loss": (
        "input, target, size_average=None, reduce=None, reduction='mean'",
        "aten.l1_loss(input, target, " + _REDUCTIONS + ")",
    ),
    "cross_entropy": (
        "input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction='mean', label_smoothing=0.0",
        "aten.cross_entropy_loss(input, target, weight, " + _REDUCTIONS + ", ignore_index, label_smoothing)",
    ),
    "nll_loss": (
        "input, target, weight=None, size_average=None, ignore_index=-100, reduce=None, reduction='mean'",
        "aten.nll_loss_nd(input, target, weight, " + _REDUCTIONS + ", ignore_index)",
    ),
}

_TORCH = {
    "split": ("tensor, split_size_or_sections, dim=0", "tensor.split(split_size_or_sections, dim)"),
    "einsum": ("equation, *operands", "aten.einsum(equation, operands)"),
    "broadcast_tensors": ("*tensors", "aten.broadcast_tensors(tensors)"),
    "cdist": (
        "x1, x2, p=2.0, compute_mode=None",
        'unsupported("only the default `compute_mode`") if compute_mode is not None else aten.cdist(x1, x2, p, None)',
    ),
    "atleast_1d": ("tensor", "aten.atleast_1d(tensor)"),
    "atleast_2d": ("tensor", "aten.atleast_2d(tensor)"),
    "atleast_3d": ("tensor", "aten.atleast_3d(tensor)"),
    "block_diag": ("*tensors", "aten.block_diag(tensors)"),
    "cartesian_prod": ("*tensors", "aten.cartesian_prod(tensors)"),
}

WRAPPERS: dict[str, dict[str, Wrapper]] = {
    "torch.nn.functional": _table("torch.nn.functional", _FUNCTIONAL),
    "torch": _table("torch", _TORCH),
    "Tensor": _table("Tensor", {"unflatten": ("self, dim, sizes", "aten.unflatten(self, dim, sizes)")}),
}

# `reduction=` strings as the integers the native loss functions take.
REDUCTIONS = {"none": 0, "mean": 1, "sum": 2}


def lookup(namespace: str, name: str) -> Wrapper | None:
    return WRAPPERS.get(namespace, {}).get(name)
