"""Every Python-level function of torch a region may call, classified, and the lowered ones against eager.

torch's Python layer (``torch.nn.functional``, the Python functions of
``torch``, ``torch.masked``, ``torch.linalg`` and ``torch.signal.windows``, the methods of
``torch/_tensor.py``) is enumerated from the installed torch; each is one of

- LOWERED: ppy inlines torch's own source for it (or binds the builtin it is);
  every sample becomes a region calling it the way a user would (tensors as
  parameters, literals as literals), all of them build as one module, and each
  is checked against its own Python body, which is the eager call: values,
  exceptions, writes to parameters and gradients;
- REFUSED: ppy-check refuses a sample call with a finding that names the
  call, says why and, where there is one, what to write instead;
- NOT_A_COMPUTATION: it computes no tensor (seeds, saves, compiles, hooks...);
  calling it inside a region is refused.

A torch upgrade that adds one fails ``test_every_function_is_classified``
until it is classified here.
"""

from __future__ import annotations

import ast
import copy
import inspect
import re
import types as pytypes
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from tests.support.generated import load_module, write_source

import ppy
from ppy.verify import compare_call
from ppy_check import torch_python
from ppy_check.engine import check_source
from ppy_check.gen_opdata import HAND_BOUND, python_functions
from ppy_check.model import types
from ppy_check.model.builder import build_model
from ppy_check.model.ir import Branch, Require, Return, Stmt
from ppy_check.module import ModuleRegions

Sample = tuple[tuple[Any, ...], dict[str, Any]]


def s(*args: Any, **kwargs: Any) -> Sample:
    return args, kwargs


def t(*shape: int) -> torch.Tensor:
    return torch.randn(*shape)


def p(*shape: int) -> torch.Tensor:
    """Probabilities in (0, 1)."""
    return torch.rand(*shape) * 0.9 + 0.05


def ints(high: int, *shape: int) -> torch.Tensor:
    return torch.randint(0, high, shape)


def m(*shape: int) -> torch.Tensor:
    """A random mask for torch.masked: about half its elements True."""
    return torch.randn(*shape) > 0


torch.manual_seed(0)
ids = torch.tensor([[0, 2], [1, 0]])
target = torch.tensor([1, 0, 2])
sign = torch.tensor([1.0, -1.0, 1.0])
ctc = (t(6, 2, 4).log_softmax(2), torch.tensor([[1, 2, 3], [3, 1, 0]]), torch.tensor([6, 5]), torch.tensor([3, 2]))
pooled, pool_indices = F.max_pool2d(t(1, 2, 4, 4), 2, return_indices=True)
pooled1, pool_indices1 = F.max_pool1d(t(1, 2, 4), 2, return_indices=True)
pooled3, pool_indices3 = F.max_pool3d(t(1, 1, 4, 4, 4), 2, return_indices=True)
square = t(3, 3) + 3 * torch.eye(3)

# name -> sample calls, each checked against eager.
LOWERED: dict[str, list[Sample]] = {
    # torch.nn.functional
    "F.adaptive_avg_pool2d": [s(t(1, 2, 6, 6), 2), s(t(1, 2, 6, 6), (3, 1))],
    "F.adaptive_avg_pool3d": [s(t(1, 2, 4, 4, 4), 2)],
    "F.adaptive_max_pool1d": [s(t(1, 2, 6), 3), s(t(1, 2, 6), 3, return_indices=True)],
    "F.adaptive_max_pool1d_with_indices": [s(t(1, 2, 6), 2)],
    "F.adaptive_max_pool2d": [s(t(1, 2, 6, 6), (3, 2)), s(t(1, 2, 6, 6), 2, True)],
    "F.adaptive_max_pool2d_with_indices": [s(t(1, 2, 6, 6), 3)],
    "F.adaptive_max_pool3d": [s(t(1, 2, 4, 4, 4), 2)],
    "F.adaptive_max_pool3d_with_indices": [s(t(1, 2, 4, 4, 4), 2)],
    "F.affine_grid": [s(t(2, 2, 3), (2, 1, 4, 4), align_corners=False)],
    "F.assert_int_or_pair": [s(2, "kernel_size", "{} must be an int or a pair"), s((2, 3), "stride", "{}")],
    "F.alpha_dropout": [s(t(5), 0.2), s(t(5), 0.2, True)],
    "F.batch_norm": [s(t(3, 4), t(4), p(4), training=False), s(t(3, 4), t(4), p(4), t(4), t(4), True, 0.2)],
    # a weight: torch broadcasts the shapes (torch._refs._broadcast_shapes), computed when the region runs
    "F.binary_cross_entropy": [s(p(4), p(4)), s(p(4), p(4), reduction="sum"), s(p(2, 4), p(2, 4), p(4)),
                               s(p(2, 4), p(2, 4), p(3))],
    "F.binary_cross_entropy_with_logits": [s(t(4), p(4)), s(t(4), p(4), pos_weight=p(4))],
    "F.celu": [s(t(5), alpha=2.0)],
    "F.cosine_embedding_loss": [s(t(3, 4), t(3, 4), sign)],
    "F.cross_entropy": [s(t(3, 4), target), s(t(3, 4), target, label_smoothing=0.1, reduction="sum")],
    "F.ctc_loss": [s(*ctc), s(*ctc, reduction="sum", zero_infinity=True)],
    "F.dropout": [s(t(5), training=False), s(t(5), 0.3)],
    "F.dropout1d": [s(t(2, 3, 4), 0.5), s(t(3, 4), 0.5), s(t(3, 4), training=False)],
    "F.dropout2d": [s(t(2, 3, 4, 4), 0.5), s(t(2, 3, 4, 4), training=False)],
    "F.dropout3d": [s(t(2, 3, 2, 2, 2), 0.5), s(t(3, 2, 2, 2), 0.5)],
    "F.elu": [s(t(5), 0.5)],
    "F.embedding": [s(ids, t(3, 4)), s(ids, t(3, 4), padding_idx=0)],
    "F.feature_alpha_dropout": [s(t(2, 3, 4), 0.5), s(t(2, 3, 4), 0.5, True)],
    "F.fold": [s(t(1, 8, 9), (4, 4), 2)],
    # without `_random_samples`, torch draws them (for a batch of run-time size) from the global generator
    "F.fractional_max_pool2d": [s(t(1, 2, 8, 8), 2, output_size=4, _random_samples=p(1, 2, 2)),
                                s(t(1, 2, 8, 8), 2, output_size=4), s(t(2, 8, 8), 2, output_size=4)],
    "F.fractional_max_pool2d_with_indices": [s(t(1, 2, 8, 8), (2, 2), output_ratio=(0.5, 0.5),
                                               _random_samples=p(1, 2, 2))],
    "F.fractional_max_pool3d": [s(t(1, 2, 4, 4, 4), 2, output_size=2, _random_samples=p(1, 2, 3), return_indices=True)],
    "F.fractional_max_pool3d_with_indices": [s(t(1, 2, 4, 4, 4), 2, output_size=(2, 2, 2), _random_samples=p(1, 2, 3)),
                                             s(t(1, 2, 4, 4, 4), 2, output_size=2)],
    "F.glu": [s(t(4, 6)), s(t(4, 6), 0)],
    "F.grid_sample": [s(t(1, 1, 4, 4), t(1, 3, 3, 2).tanh(), align_corners=False)],
    "F.group_norm": [s(t(2, 4, 3), 2, t(4), t(4))],
    "F.grouped_mm": [s(t(2, 4, 8), t(2, 8, 4))],
    "F.gumbel_softmax": [s(t(3, 4)), s(t(3, 4), 0.5, True)],
    "F.hardsigmoid": [s(t(5))],
    "F.hardswish": [s(t(5))],
    "F.hardtanh": [s(t(5), -0.5, 0.5)],
    "F.hinge_embedding_loss": [s(t(3), sign)],
    "F.huber_loss": [s(t(3), t(3), delta=0.5)],
    "F.interpolate": [s(t(1, 2, 4, 4), size=(6, 8), mode="bilinear", align_corners=False),
                      s(t(1, 2, 4, 4), scale_factor=(2.0, 1.5)), s(t(1, 2, 5), scale_factor=2.0),
                      s(t(1, 2, 5), size=(3,), mode="linear"),
                      s(t(1, 1, 2, 3, 4), size=(4, 4, 4), mode="trilinear", align_corners=True),
                      s(t(1, 2, 4, 4), size=(2, 2), mode="area"), s(t(1, 2, 4, 4), size=(3, 5), mode="bicubic"),
                      s(t(1, 2, 4, 4), size=(6, 6), mode="bilinear", antialias=True),
                      s(t(1, 2, 4, 4), size=(5, 7), mode="nearest-exact"), s(t(1, 2, 4, 4), size=(2, 2, 2))],
    "F.instance_norm": [s(t(2, 3, 4)), s(t(2, 3, 4), weight=t(3), bias=t(3))],
    "F.kl_div": [s(t(3, 4).log_softmax(-1), p(3, 4), reduction="sum"), s(t(3, 4), t(3, 4), log_target=True),
                 s(t(3, 4).log_softmax(-1), p(3, 4), reduction="batchmean")],
    "F.l1_loss": [s(t(3), t(3), reduction="none")],
    "F.layer_norm": [s(t(2, 4), (4,), t(4), t(4)), s(t(2, 4), (4,), eps=1e-3)],
    "F.leaky_relu": [s(t(5), 0.2), s(t(5), inplace=True)],
    "F.local_response_norm": [s(t(1, 4, 3, 3), 2), s(t(2, 4, 5), 3)],
    "F.log_softmax": [s(t(3, 4), -1)],
    "F.lp_pool1d": [s(t(1, 2, 6), 2.0, 2)],
    "F.lp_pool2d": [s(t(1, 2, 4, 4), 2.0, 2), s(t(1, 2, 4, 4), 3, (2, 1), stride=1)],
    "F.lp_pool3d": [s(t(1, 1, 4, 4, 4), 2.0, 2)],
    "F.margin_ranking_loss": [s(t(3), t(3), sign)],
    "F.max_pool1d": [s(t(1, 2, 6), 2), s(t(1, 2, 6), 2, return_indices=True)],
    "F.max_pool1d_with_indices": [s(t(1, 2, 6), 3)],
    "F.max_pool2d": [s(t(1, 2, 6, 6), 2), s(t(1, 2, 6, 6), (3, 3), stride=1, padding=1)],
    "F.max_pool2d_with_indices": [s(t(1, 2, 6, 6), 2)],
    "F.max_pool3d": [s(t(1, 1, 4, 4, 4), 2)],
    "F.max_pool3d_with_indices": [s(t(1, 1, 4, 4, 4), 2)],
    "F.max_unpool1d": [s(pooled1, pool_indices1, 2)],
    "F.max_unpool2d": [s(pooled, pool_indices, 2), s(pooled, pool_indices, 2, output_size=(4, 4))],
    "F.max_unpool3d": [s(pooled3, pool_indices3, 2)],
    "F.mish": [s(t(5)), s(t(5), inplace=True)],
    "F.mse_loss": [s(t(3), t(3)), s(t(3), t(3), reduction="sum")],
    "F.multi_margin_loss": [s(t(3, 4), target)],
    "F.multilabel_margin_loss": [s(t(2, 4), torch.tensor([[3, 0, -1, 1], [1, 2, 3, -1]]))],
    "F.multilabel_soft_margin_loss": [s(t(3, 4), ints(2, 3, 4).float())],
    "F.nll_loss": [s(t(3, 4).log_softmax(1), target), s(t(3, 4).log_softmax(1), target, ignore_index=0)],
    "F.normalize": [s(t(3, 4)), s(t(3, 4), p=1.0, dim=0)],
    "F.pad": [s(t(2, 3), (1, 2)), s(t(2, 3), (1, 1), value=3.0), s(t(1, 2, 4), (1, 2), mode="reflect")],
    "F.poisson_nll_loss": [s(t(4), p(4)), s(p(4), p(4), log_input=False, full=True)],
    "F.relu": [s(t(5)), s(t(5), inplace=True)],
    "F.relu6": [s(t(5) * 8), s(t(5) * 8, inplace=True)],
    "F.rms_norm": [s(t(2, 4), (4,), t(4)), s(t(2, 4), (4,), eps=1e-3)],
    "F.rrelu": [s(t(5)), s(t(5), training=True)],
    "F.selu": [s(t(5))],
    "F.sigmoid": [s(t(5))],
    "F.silu": [s(t(5)), s(t(5), inplace=True)],
    "F.smooth_l1_loss": [s(t(3), t(3), beta=0.5)],
    "F.soft_margin_loss": [s(t(3), sign)],
    "F.softmax": [s(t(3, 4), 1), s(t(3, 4), dim=0, dtype=torch.float64), s(t(2, 3, 4))],
    "F.softmin": [s(t(3, 4), 1)],
    "F.softsign": [s(t(5))],
    "F.tanh": [s(t(5))],
    "F.tanhshrink": [s(t(5))],
    "F.threshold": [s(t(5), 0.1, 2.0)],
    "F.triplet_margin_loss": [s(t(3, 4), t(3, 4), t(3, 4)), s(t(3, 4), t(3, 4), t(3, 4), swap=True)],
    "F.triplet_margin_with_distance_loss": [s(t(3, 4), t(3, 4), t(3, 4), margin=0.5)],
    "F.unfold": [s(t(1, 2, 4, 4), 2)],
    "F.upsample": [s(t(1, 2, 4, 4), size=(6, 8), mode="bilinear")],
    "F.upsample_bilinear": [s(t(1, 2, 4, 4), size=(6, 8))],
    "F.upsample_nearest": [s(t(1, 2, 4, 4), scale_factor=2.0)],
    # torch
    "torch.atleast_1d": [s(torch.tensor(1.0)), s(t(2), t(3, 1))],
    "torch.atleast_2d": [s(t(3))],
    "torch.atleast_3d": [s(t(3))],
    "torch.block_diag": [s(t(2, 2), t(1, 3))],
    "torch.broadcast_tensors": [s(t(3, 1), t(1, 4))],
    "torch.cartesian_prod": [s(t(2), t(3))],
    "torch.cdist": [s(t(3, 2), t(4, 2)), s(t(3, 2), t(4, 2), 1.0)],
    "torch.chain_matmul": [s(t(2, 3), t(3, 4), t(4, 2))],
    # the operands as one sequence: torch's einsum calls itself on them spread
    "torch.einsum": [s("ij,jk->ik", t(2, 3), t(3, 4)), s("ij,jk->ik", (t(2, 3), t(3, 4)))],
    # Answered from the parameter's type, at build time (ppy_check/model/builder/region_dialect.py).
    "torch.is_tensor": [s(t(2))],
    "torch.lu": [s(square), s(square, get_infos=True)],
    "torch.meshgrid": [s(t(2), t(3), indexing="ij"), s(t(2), t(3), indexing="xy")],
    "torch.norm": [s(t(3, 4)), s(t(3, 4), 1, 1), s(t(3, 4), "nuc", (0, 1)), s(t(3, 4), dim=(0, 1), keepdim=True),
                   s(t(3, 4), "nuc")],
    "torch.split": [s(t(5, 2), 2), s(t(5, 2), [1, 4], dim=0)],
    "torch.stft": [s(t(16), 8, window=torch.hann_window(8), return_complex=True)],
    "torch.broadcast_shapes": [s((3, 1), (1, 4)), s(2, (3, 1)), s((2, 3), (4,))],
    "torch.tensordot": [s(t(2, 3), t(3, 4), 1), s(t(2, 3), t(4, 3), ([1], [1]))],
    "torch.unique": [s(torch.tensor([3, 1, 3, 2])), s(torch.tensor([3, 1, 3, 2]), return_inverse=True, return_counts=True)],
    "torch.unique_consecutive": [s(torch.tensor([1, 1, 2, 2, 1])), s(torch.tensor([1, 1, 2]), return_counts=True)],
    # torch.masked on strided tensors: without a mask, with one (of the input's shape or broadcast to it), keepdim,
    # dtype, and integer inputs (whose identities come from torch.iinfo, or which raise)
    "torch.masked.sum": [s(t(3, 4)), s(t(3, 4), 1, mask=m(3, 4)), s(t(3, 4), 0, keepdim=True, mask=m(4)),
                         s(ints(5, 3, 4), 1, mask=m(3, 4)), s(t(3, 4), -1, dtype=torch.float64, mask=m(3, 4))],
    "torch.masked.prod": [s(t(3, 4), 1, mask=m(3, 4)), s(t(3, 4), 0, keepdim=True), s(ints(3, 3, 4), 0, mask=m(3, 4))],
    "torch.masked.amax": [s(t(3, 4)), s(t(3, 4), 1, mask=m(3, 4)), s(ints(9, 3, 4), 0, keepdim=True, mask=m(3, 4)),
                          s(t(2, 3, 4), -1, dtype=torch.float64, mask=m(3, 4))],
    "torch.masked.amin": [s(t(3, 4)), s(t(3, 4), 1, mask=m(3, 4)), s(ints(9, 3, 4), 0, keepdim=True, mask=m(3, 4))],
    "torch.masked.argmax": [s(t(3, 4)), s(t(3, 4), 1, mask=m(3, 4)), s(ints(9, 3, 4), 0, keepdim=True, mask=m(4))],
    "torch.masked.argmin": [s(t(3, 4)), s(t(3, 4), 1, mask=m(3, 4)), s(ints(9, 3, 4), 0, mask=m(3, 4))],
    "torch.masked.mean": [s(t(3, 4)), s(t(3, 4), 1, keepdim=True, mask=m(3, 4)), s(ints(5, 3, 4), dtype=torch.float64),
                          s(ints(5, 3, 4))],
    "torch.masked.cumsum": [s(t(3, 4), 1), s(t(3, 4), 0, mask=m(3, 4)), s(t(3, 4), -1, dtype=torch.float64, mask=m(4))],
    "torch.masked.cumprod": [s(t(3, 4), 1), s(t(3, 4), 0, mask=m(3, 4))],
    "torch.masked.softmax": [s(t(3, 4), 1), s(t(3, 4), 0, mask=m(3, 4)), s(t(3, 4), -1, dtype=torch.float64, mask=m(4))],
    "torch.masked.log_softmax": [s(t(3, 4), 1), s(t(3, 4), 0, mask=m(3, 4))],
    "torch.masked.softmin": [s(t(3, 4), 1), s(t(3, 4), 0, mask=m(3, 4))],
    "torch.masked.normalize": [s(t(3, 4), 2.0, 1), s(t(3, 4), 1.0, 0, mask=m(3, 4)), s(t(3, 4), 3.0, -1, eps=0.5)],
    "torch.masked.norm": [s(t(3, 4)), s(t(3, 4), 2.0, 1, mask=m(3, 4)), s(t(3, 4), 1.0, 0, keepdim=True, mask=m(4))],
    "torch.masked.logaddexp": [s(t(3), t(3)), s(t(3), t(3), input_mask=m(3), other_mask=m(3)),
                               s(t(3), t(3), dtype=torch.float64, other_mask=m(3))],
    "torch.masked.logsumexp": [s(t(3, 4)), s(t(3, 4), 1, keepdim=True)],
    # var and std take the real dtype of a complex input at run time (ppy's corresponding_real_dtype)
    **{f"torch.masked.{name}": [s(t(3, 4), 1, mask=m(3, 4)), s(t(3, 4), 0, keepdim=True), s(t(3, 4), 1, unbiased=False),
                                s(torch.randn(3, 4, dtype=torch.complex64), 1, mask=m(3, 4)), s(ints(5, 3, 4), 0)]
       for name in ("std", "var")},
    # torch.signal.windows: a sample without `dtype` reads torch's default dtype when the region runs
    "torch.signal.windows.bartlett": [s(7), s(6, sym=False, dtype=torch.float64), s(1, dtype=torch.float32)],
    "torch.signal.windows.blackman": [s(8), s(5, sym=False, dtype=torch.float64)],
    "torch.signal.windows.cosine": [s(8), s(0, dtype=torch.float64), s(5, sym=False)],
    "torch.signal.windows.exponential": [s(8), s(6, sym=False, center=2.0, tau=0.5)],
    "torch.signal.windows.gaussian": [s(8), s(5, sym=False, std=0.9, dtype=torch.float64)],
    "torch.signal.windows.general_cosine": [s(8, a=(0.46, 0.23, 0.31)), s(5, a=[0.5, 0.5], sym=False)],
    "torch.signal.windows.general_hamming": [s(8), s(6, alpha=0.5, sym=False)],
    "torch.signal.windows.hamming": [s(8), s(1), s(7, sym=False, dtype=torch.float64)],
    "torch.signal.windows.hann": [s(8), s(6, sym=False)],
    "torch.signal.windows.kaiser": [s(8), s(5, beta=3.0, sym=False, dtype=torch.float64), s(1)],
    "torch.signal.windows.nuttall": [s(8), s(6, sym=False)],
    # torch.Tensor's Python-level methods
    "Tensor.__floordiv__": [s(t(4) * 5, 2)],
    "Tensor.__rfloordiv__": [s(t(4).abs() + 1, 7)],
    "Tensor.__pow__": [s(t(4).abs(), 2)],
    "Tensor.__rpow__": [s(t(4), 2.0)],
    "Tensor.__rdiv__": [s(t(4), 2.0)],
    "Tensor.__rtruediv__": [s(t(4), 2.0)],
    "Tensor.__rsub__": [s(t(4), 2.0)],
    "Tensor.__rmod__": [s(t(4).abs() + 1, 5.0)],
    "Tensor.__rmatmul__": [s(t(3, 2), t(4, 3))],
    "Tensor.__rlshift__": [s(ints(3, 4), 5)],
    "Tensor.__rrshift__": [s(ints(3, 4), 40)],
    "Tensor.__ipow__": [s(t(4).abs(), 2)],
    "Tensor.__len__": [s(t(3, 2)), s(torch.tensor(1.0))],  # TypeError for a 0-d tensor, compiled too
    "Tensor.__reversed__": [s(t(3, 2)), s(torch.tensor(1.0))],
    "Tensor.istft": [s(torch.stft(t(16), 8, window=torch.hann_window(8), return_complex=True), 8,
                       window=torch.hann_window(8))],
    "Tensor.lu": [s(square)],
    "Tensor.norm": [s(t(3, 4)), s(t(3, 4), 1, 1, True), s(t(3, 4), dim=-1)],
    "Tensor.split": [s(t(5, 2), 2), s(t(5, 2), (1, 4))],
    "Tensor.stft": [s(t(16), 8, window=torch.hann_window(8), return_complex=True)],
    "Tensor.to_sparse_coo": [s(t(3))],
    "Tensor.unflatten": [s(t(2, 6), 1, (2, 3))],
    "Tensor.unique": [s(torch.tensor([3, 1, 3, 2]), return_counts=True)],
    "Tensor.unique_consecutive": [s(torch.tensor([1, 1, 2, 2, 1]), return_inverse=True)],
}

# name -> (a sample call, what the finding refusing it says: why and, where there is one, the alternative)
_MASKED = "instead, fill what the mask hides with the operation's identity and call the plain operation"
REFUSED: dict[str, tuple[Sample, str]] = {
    "F.embedding_bag": (s(torch.tensor([0, 2, 1, 0]), t(3, 4), torch.tensor([0, 2])),
                        "at `type`: `type()` asks for an object's Python class, which compiled code does not hold "
                        "(torch's Python code may show it in an error message); instead, "
                        "`torch.embedding_bag(weight, input, offsets"),
    "F.gaussian_nll_loss": (s(t(3), t(3), p(3)), "checks `torch.any(var < 0)`, which reads a tensor's value back into "
                                                 "Python; instead, check `var` in the caller"),
    "F.linear_cross_entropy": (s(t(3, 4), t(5, 4), target), "instead, `F.cross_entropy(F.linear(input, linear_weight"),
    "F.multi_head_attention_forward": (
        s(t(2, 1, 4), t(2, 1, 4), t(2, 1, 4), 4, 2, t(12, 4), t(12), None, None, False, 0.0, t(4, 4), t(4)),
        "tests `k is v`, the identity of Python objects, which ppy cannot tell here; instead, write the "
        "projections with `F.linear` and the attention with `F.scaled_dot_product_attention`"),
    "F.scaled_grouped_mm": (s(t(2, 3, 4), t(2, 4, 5), t(2), 0, t(2), 0), "instead, `torch._scaled_grouped_mm`"),
    "F.scaled_mm": (s(t(3, 4), t(4, 5), t(1), 0, t(1), 0), "instead, `torch._scaled_mm`"),
    "Tensor.__contains__": (s(t(3), 1.0), "instead, `(input == element).any()`"),
    "Tensor.__iter__": (s(t(3)), "instead, `input.unbind(0)`"),
    "Tensor.eig": (s(square), "torch removed it (calling it raises RuntimeError); instead, `torch.linalg.eig`"),
    "Tensor.index": (s(t(3), (0,), (0,)), "first-class dimensions are Python objects"),
    "Tensor.lstsq": (s(square, square), "torch removed it (calling it raises RuntimeError); instead, `torch.linalg.lstsq`"),
    "Tensor.reinforce": (s(t(3), t(3)), "instead, sample with `torch.distributions`"),
    "Tensor.resize": (s(t(6), 2, 3), "it runs an autograd Function written in Python; instead, `input.reshape(sizes)`"),
    "Tensor.resize_as": (s(t(6), t(2, 3)), "instead, `input.reshape_as(other)`"),
    "Tensor.solve": (s(square, square), "torch removed it (calling it raises RuntimeError); instead, `torch.linalg.solve`"),
    "Tensor.symeig": (s(square), "torch removed it (calling it raises RuntimeError); instead, `torch.linalg.eigh`"),
    "torch.eig": (s(square), "torch removed it (calling it raises RuntimeError); instead, `torch.linalg.eig`"),
    "torch.lobpcg": (s(square @ square.T, 1), "it iterates until it converges, a loop of run-time length; instead, "
                                              "`torch.linalg.eigh`"),
    "torch.lstsq": (s(square, square), "torch removed it (calling it raises RuntimeError); instead, `torch.linalg.lstsq`"),
    "torch.matrix_rank": (s(square), "torch removed it (calling it raises RuntimeError); instead, "
                                     "`torch.linalg.matrix_rank`"),
    "torch.pca_lowrank": (s(t(5, 4)), "it draws a random projection and iterates a loop; instead, `torch.linalg.svd`"),
    "torch.solve": (s(square, square), "torch removed it (calling it raises RuntimeError); instead, `torch.linalg.solve`"),
    "torch.svd_lowrank": (s(t(5, 4)), "it draws a random projection and iterates a loop; instead, `torch.linalg.svd`"),
    "torch.symeig": (s(square), "torch removed it (calling it raises RuntimeError); instead, `torch.linalg.eigh`"),
    "torch.unravel_index": (s(torch.tensor([4, 1, 5]), (2, 3)), "instead, divide by each dimension's stride"),
    "torch.masked.median": (s(t(3, 4), 1, mask=m(3, 4)), "`not` reads the tensor's value back into Python"),
}
# Calls of LOWERED functions in forms ppy refuses: (name, sample, what the finding says).
REFUSED_FORMS: list[tuple[str, Sample, str]] = [
    # A tuple of dims, counted from the rank: their sorted order is known only at run time.
    ("torch.masked.sum", s(t(3, 4), (0, 1)), "sorts values known only at run time"),
    # All dims: torch reduces them one by one, in a loop over the rank.
    ("torch.masked.prod", s(t(3, 4), mask=m(3, 4)), "takes `reversed` of a sequence whose length is known only at run "
                                                   "time (a tensor's rank, say); " + _MASKED),
    # The identity of a masked logsumexp has a complex way (`-inf + 0j`), which no region value holds.
    ("torch.masked.logsumexp", s(t(3, 4), 1, mask=m(3, 4)), "complex numbers have no region type; " + _MASKED),
]

# name -> why it is not a tensor computation a region could lower.
NOT_A_COMPUTATION: dict[str, str] = {
    "F.boolean_dispatch": "makes a function that picks one of two by a bool argument; torch uses it to define others",
    "F.handle_torch_function": "dispatches to `__torch_function__` overrides, which plain tensors do not have",
    "torch.are_deterministic_algorithms_enabled": "reads a global switch",
    "torch.classproperty": "a decorator for classes",
    "torch.compile": "compiles a function; a region is already compiled",
    "torch.compiled_with_cxx11_abi": "reads how torch was built",
    "torch.cond": "higher-order control flow for torch.compile; a region is straight-line (use torch.where)",
    "torch.from_dlpack": "imports another library's tensor",
    "torch.get_default_device": "reads a global setting",
    "torch.get_deterministic_debug_mode": "reads a global setting",
    "torch.get_file_path": "builds a file path",
    "torch.get_float32_matmul_precision": "reads a global setting",
    "torch.get_rng_state": "reads the global generator's state",
    "torch.initial_seed": "reads the global generator's seed",
    "torch.is_deterministic_algorithms_warn_only_enabled": "reads a global setting",
    "torch.is_storage": "a type test on a Python object",
    "torch.is_warn_always_enabled": "reads a global setting",
    "torch.load": "reads a file",
    "torch.manual_seed": "seeds the global generator",
    "torch.prepare_multiprocessing_environment": "sets up processes",
    "torch.profiler_allow_cudagraph_cupti_lazy_reinit_cuda12": "configures the profiler",
    "torch.save": "writes a file",
    "torch.seed": "seeds the global generator",
    "torch.set_default_device": "changes a global setting",
    "torch.set_default_dtype": "changes a global setting",
    "torch.set_default_tensor_type": "changes a global setting",
    "torch.set_deterministic_debug_mode": "changes a global setting",
    "torch.set_float32_matmul_precision": "changes a global setting",
    "torch.set_printoptions": "changes how tensors print",
    "torch.set_rng_state": "changes the global generator's state",
    "torch.set_warn_always": "changes a global setting",
    "torch.sym_float": "a symbolic-shape helper of torch.compile; on plain numbers write float()",
    "torch.sym_fresh_size": "a symbolic-shape helper of torch.compile",
    "torch.sym_int": "a symbolic-shape helper of torch.compile; on plain numbers write int()",
    "torch.sym_ite": "a symbolic-shape helper of torch.compile",
    "torch.sym_max": "a symbolic-shape helper of torch.compile; on plain numbers write max()",
    "torch.sym_min": "a symbolic-shape helper of torch.compile; on plain numbers write min()",
    "torch.sym_not": "a symbolic-shape helper of torch.compile; on plain numbers write `not`",
    "torch.sym_sqrt": "a symbolic-shape helper of torch.compile; on plain numbers write math.sqrt()",
    "torch.sym_sum": "a symbolic-shape helper of torch.compile",
    "torch.thread_safe_generator": "reads the generator of the current thread",
    "torch.typename": "names a Python object's type",
    "torch.use_deterministic_algorithms": "changes a global setting",
    "torch.vmap": "transforms a function; a region is a function already",
    "torch.while_loop": "higher-order control flow for torch.compile; a region is straight-line",
    "torch.masked.as_masked_tensor": "builds a MaskedTensor, a tensor subclass regions do not take",
    "torch.masked.is_masked_tensor": "a type test on a Python object",
    "torch.masked.masked_tensor": "builds a MaskedTensor, a tensor subclass regions do not take",
    "Tensor.__array__": "hands the data to numpy",
    "Tensor.__array_wrap__": "numpy's protocol",
    "Tensor.__deepcopy__": "copies the Python object",
    "Tensor.__dir__": "lists the Python object's attributes",
    "Tensor.__dlpack__": "hands the data to another library",
    "Tensor.__dlpack_device__": "hands the data to another library",
    "Tensor.__format__": "formats the tensor as text",
    "Tensor.__hash__": "the Python object's identity",
    "Tensor.__reduce_ex__": "pickles the tensor",
    "Tensor.__repr__": "formats the tensor as text",
    "Tensor.__setstate__": "unpickles the tensor",
    "Tensor.backward": "runs autograd, which runs outside the region",
    "Tensor.dim_order": "reads the memory layout into Python",
    "Tensor.is_shared": "reads where the storage lives",
    "Tensor.module_load": "loads a state dict into a module",
    "Tensor.register_hook": "hooks are Python callbacks of autograd",
    "Tensor.register_post_accumulate_grad_hook": "hooks are Python callbacks of autograd",
    "Tensor.share_memory_": "moves the storage to shared memory",
    "Tensor.storage": "hands out the storage object",
    "Tensor.storage_type": "names the storage's Python class",
}

# What a sample does with the result before returning it (the comparison takes strided tensors).
THEN = {"Tensor.to_sparse_coo": ".to_dense()"}

# Tensor methods torch binds by hand (ppy_check/gen_opdata.py's HAND_BOUND), one sample per signature.
HAND_BOUND_SAMPLES: dict[str, list[Sample]] = {
    "to": [s(t(2), "cpu"), s(t(2), "cpu", torch.float64), s(t(2), torch.int32), s(t(2), t(3).double()),
           s(t(2), dtype=torch.float16, copy=True)],
    "copy_": [s(t(3), t(3)), s(t(3), t(1).double(), non_blocking=False)],
    "type": [s(t(2), torch.float64)],
    "cpu": [s(t(2))],
    **{method: [s(t(2) * 10)] for method in ("float", "double", "half", "bfloat16", "long", "int", "short", "char",
                                             "bool", "cfloat", "cdouble")},
    "byte": [s(t(2).abs() * 10)],
}

# How a region spells each enumerated namespace.
SPELLED = {"torch.nn.functional": "F", "torch": "torch", "torch.masked": "torch.masked", "torch.linalg": "torch.linalg",
           "torch.signal.windows": "torch.signal.windows", "torch.Tensor": "Tensor"}


def enumerated() -> set[str]:
    """The Python-level functions of the installed torch, as this file names them."""
    return {f"{SPELLED[namespace]}.{name}" for namespace, names in python_functions().items() for name in names}


@pytest.mark.opdata_torch  # which functions are Python-level changes by release (2.14 made torch.qr one)
def test_every_function_is_classified() -> None:
    kinds = {"LOWERED": set(LOWERED), "REFUSED": set(REFUSED), "NOT_A_COMPUTATION": set(NOT_A_COMPUTATION)}
    twice = [f"{name} ({a}, {b})" for a in kinds for b in kinds if a < b for name in sorted(kinds[a] & kinds[b])]
    assert not twice, f"classified twice: {', '.join(twice)}"
    found = enumerated()
    classified = set().union(*kinds.values())
    unclassified, gone = sorted(found - classified), sorted(classified - found)
    assert not unclassified and not gone, (
        f"torch {torch.__version__}: classify each of these as LOWERED (with samples), REFUSED (with the finding) or "
        f"NOT_A_COMPUTATION in tests/compiler/test_torch_python.py: {', '.join(unclassified) or 'none'}; "
        f"classified here but no longer Python-level functions of torch: {', '.join(gone) or 'none'}")


def test_every_hand_bound_method_has_samples() -> None:
    assert set(HAND_BOUND_SAMPLES) == set(HAND_BOUND)


def _literal(value: Any) -> str | None:
    """A sample argument as region source text, when it is a literal a region writes as one."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return repr(value)
    if isinstance(value, torch.dtype):
        return str(value)
    if isinstance(value, (tuple, list)) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return repr(tuple(value))
    return None


def _callee(name: str) -> tuple[str, bool]:
    """How a region calls ``name``, and whether it is a method of its first argument."""
    if name.startswith("Tensor."):
        return name.removeprefix("Tensor."), True
    return name, False


def _annotation(value: Any) -> str:
    if isinstance(value, torch.Tensor):
        return "torch.Tensor"
    if value is None:
        return "None"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, (tuple, list)) and all(isinstance(v, int) for v in value):
        return "tuple[int, ...]"
    return "tuple[torch.Tensor, ...]"


def _region(region: str, name: str, sample: Sample, probe: bool = True) -> tuple[str, list[Any]]:
    """One sample as a region's source, and the tensors it takes as parameters; its return annotation is what the
    eager call returns (a sample that raises: what the function's other samples return)."""
    args, kwargs = sample
    callee, method = _callee(name)
    params: list[Any] = []

    def spell(value: Any) -> str:
        literal = _literal(value)
        if literal is not None:
            return literal
        if isinstance(value, (tuple, list)):
            return "(" + "".join(spell(v) + ", " for v in value) + ")"
        assert isinstance(value, torch.Tensor), value
        params.append(value)
        return f"t{len(params) - 1}"

    spelled = [spell(a) for a in args] + [f"{key}={spell(value)}" for key, value in kwargs.items()]
    call = f"{spelled[0]}.{callee}({', '.join(spelled[1:])})" if method else f"{callee}({', '.join(spelled)})"
    call += THEN.get(name, "")
    returns = "torch.Tensor"
    if probe:
        returns = _returns(name, sample) or next(
            filter(None, (_returns(name, other) for other in LOWERED.get(name, []))), "torch.Tensor")
    signature = ", ".join(f"t{i}: torch.Tensor" for i in range(len(params)))
    return f"@ppy.opt(1)\ndef {region}({signature}) -> {returns}:\n    return {call}\n", params


def _returns(name: str, sample: Sample) -> str | None:
    """The annotation of what the eager call returns; None when it raises (the compiled region must raise alike)."""
    args, kwargs = sample
    callee, method = _callee(name)
    try:
        result = (getattr(args[0].clone(), callee)(*[_clone(a) for a in args[1:]], **kwargs) if method
                  else eval(callee, {"torch": torch, "F": F})(*[_clone(a) for a in args], **kwargs))
    except (ValueError, RuntimeError, TypeError, IndexError):
        return None
    if name in THEN:
        result = eval(f"result{THEN[name]}")
    return _annotation(result)


def _clone(value: Any) -> Any:
    return value.clone() if isinstance(value, torch.Tensor) else value


HEADER = "import ppy\nimport torch\nimport torch.masked\nimport torch.nn.functional as F\nimport torch.signal.windows\n\n\n"


def _cases() -> list[tuple[str, Sample]]:
    cases = [(name, sample) for name, samples in LOWERED.items() for sample in samples]
    cases += [(f"Tensor.{name}", sample) for name, samples in HAND_BOUND_SAMPLES.items() for sample in samples]
    return cases


CASES = _cases()


@pytest.fixture(scope="module")
def compiled() -> list[tuple[str, ppy.Region, list[Any]]]:
    torch.manual_seed(0)
    sources, params = [], []
    for index, (name, sample) in enumerate(CASES):
        source, tensors = _region(f"sample_{index}", name, sample)
        sources.append(source)
        params.append(tensors)
    text = HEADER + "\n\n".join(sources)
    # A call handing back a tuple of known length returns it as one (`tuple[torch.Tensor, torch.Tensor]`); a named
    # one (`torch.return_types.max`) as a plain tuple, which is what ppy compiles a region's return to.
    for region in ModuleRegions.load("torch_python_samples.py", text).regions:
        model = build_model(region).model
        returned = next((s.value for s in (model.body if model else []) if isinstance(s, Return)), None)
        if returned is not None and isinstance(returned.type, types.TupleT):
            index = int(region.name.removeprefix("sample_"))
            fixed = f"tuple[{', '.join(str(item) for item in returned.type.items)}]"
            head, _, call = sources[index].rpartition("    return ")
            call = f"tuple({call.strip()})\n" if returned.type.names else call
            sources[index] = head.replace("-> tuple[torch.Tensor, ...]:", f"-> {fixed}:") + "    return " + call
    text = HEADER + "\n\n".join(sources)
    path = write_source("torch_python_samples", text)
    findings = check_source(text, str(path))
    assert not findings, "\n".join(d.concise() for d in findings)
    module = load_module(path, "torch_python_samples")
    return [(CASES[i][0], getattr(module, f"sample_{i}"), params[i]) for i in range(len(CASES))]


def _statements(body: tuple[Stmt, ...]) -> list[Stmt]:
    found: list[Stmt] = []
    for statement in body:
        found.append(statement)
        if isinstance(statement, Branch):
            found += _statements(statement.then_body) + _statements(statement.else_body)
    return found


def test_no_compiled_check_prints_an_f_string_template() -> None:
    """Every check torch's Python code keeps on a run-time value, in every sample's model, prints what its f-string
    formats (a float, a tuple, a torch.Size, arithmetic on a rank), never the template's `{...}`: Python would print
    the value, so a compiled raise must too (tests/compiler/test_library_messages.py holds the printed text to Python's)."""
    text = HEADER + "\n\n".join(_region(f"sample_{i}", name, sample, probe=False)[0]
                                 for i, (name, sample) in enumerate(CASES))
    left = set()
    for region in ModuleRegions.load("torch_python_samples.py", text).regions:
        model = build_model(region).model
        for statement in _statements(model.body if model else ()):
            if isinstance(statement, Require):
                left |= {(CASES[int(region.name.removeprefix("sample_"))][0], piece) for piece in statement.message
                         if isinstance(piece, str) and re.search(r"\{[^{}]+\}", piece)}
    assert not left, sorted(left)


def _python_level_methods() -> list[str]:
    """The methods of the installed torch.Tensor defined in Python, in torch/_tensor.py, that the samples call:
    several shadow a builtin of TensorBase of the same name (norm, split, stft, istft, unflatten)."""
    defined = {name: inspect.unwrap(value) for name, value in vars(torch.Tensor).items() if callable(value)}
    # A builtin wrapped in Python (`__pow__ = _handle_..._not_implemented(TensorBase.pow)`) is the builtin's.
    return sorted(name for name in (key.removeprefix("Tensor.") for key in LOWERED if key.startswith("Tensor."))
                  if isinstance(defined.get(name), pytypes.FunctionType) and defined[name].__module__ == "torch._tensor")


MARK = "the method torch/_tensor.py defines ran"


@pytest.mark.parametrize("name", _python_level_methods())
def test_a_method_python_implements_in_tensor_py_is_what_a_region_runs(name: str, monkeypatch: pytest.MonkeyPatch,
                                                                        ) -> None:
    """Python runs torch/_tensor.py's method, never the builtin it shadows (`x.norm()` is torch.norm, then
    linalg.vector_norm, with their checks and messages): with that method's body made to raise, a region calling
    it must see the raise, whatever the builtin would have taken."""
    found = torch_python.tensor_method(name)
    assert isinstance(found, tuple), f"ppy does not read Tensor.{name} from torch/_tensor.py"
    node, module = found
    marked = copy.copy(node)
    marked.body = ast.parse(f"raise ValueError({MARK!r})").body
    original = torch_python.tensor_method
    monkeypatch.setattr(torch_python, "tensor_method", lambda wanted: (marked, module) if wanted == name
                        else original(wanted))
    source, _ = _region(f"probe_{name}", f"Tensor.{name}", LOWERED[f"Tensor.{name}"][0], probe=False)
    messages = [d.message for d in check_source(HEADER + source, f"probe_{name}.py")]
    assert any(MARK in message for message in messages), messages


@pytest.mark.parametrize("index", range(len(CASES)), ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_compiled_matches_eager(compiled: list[tuple[str, ppy.Region, list[Any]]], index: int) -> None:
    name, region, params = compiled[index]
    assert region.build(), f"{name} did not compile"
    outcome = compare_call(region, ppy.Call(*params))
    assert not outcome.mismatches, "\n".join(f"{m.what}: {m.detail}" for m in outcome.mismatches)


def _findings(regions: dict[str, str]) -> dict[str, list[str]]:
    """Check every region source in one module: each region's finding messages."""
    text = HEADER
    lines: list[tuple[int, str]] = []
    for region, source in regions.items():
        lines.append((text.count("\n") + 1, region))
        text += source + "\n\n"
    found: dict[str, list[str]] = {region: [] for region in regions}
    for finding in check_source(text, "torch_python_refused.py"):
        region = [r for line, r in lines if line <= finding.line][-1]
        found[region].append(finding.message)
    return found


def test_refused_say_why() -> None:
    """Each refusal is one finding naming the user's call, with why and (where there is one) the alternative."""
    cases = [(name, sample, expected) for name, (sample, expected) in sorted(REFUSED.items())] + REFUSED_FORMS
    found = _findings({f"refused_{i}": _region(f"refused_{i}", name, sample, probe=False)[0]
                       for i, (name, sample, _) in enumerate(cases)})
    wrong = []
    for i, (name, _, expected) in enumerate(cases):
        shown = re.escape(_callee(name)[0])
        messages = found[f"refused_{i}"]
        if not any(re.search(rf"`(t\d+\.)?{shown}` has no ATen lowering \(", m) and expected in m for m in messages):
            wrong.append(f"{name}: expected a finding naming the call with {expected!r}; got {messages}")
    assert not wrong, "\n".join(wrong)


def test_unsupported_forms_say_why() -> None:
    source = ("import ppy, torch\nimport torch.nn.functional as F\n\n@ppy.opt\ndef f(x: torch.Tensor, v: torch.Tensor) "
              "-> torch.Tensor:\n    return F.pixel_unshuffle(x, 2) + F.gaussian_nll_loss(x, x, v)\n")
    messages = [d.message for d in check_source(source, "f.py")]
    assert any("`F.gaussian_nll_loss` has no ATen lowering (torch's Python code checks `torch.any(var < 0)`, which "
               "reads a tensor's value back into Python" in m for m in messages), messages


def test_not_a_computation_is_refused() -> None:
    names = sorted(NOT_A_COMPUTATION)
    regions = {}
    for i, name in enumerate(names):
        callee, method = _callee(name)
        call = f"x.{callee}()" if method else f"{callee}(x)"
        regions[f"other_{i}"] = f"@ppy.opt(1)\ndef other_{i}(x: torch.Tensor) -> torch.Tensor:\n    return {call}\n"
    found = _findings(regions)
    accepted = [f"{name}: {found[f'other_{i}']}" for i, name in enumerate(names)
                if not any(f"{_callee(name)[0]}` has no ATen lowering (" in m for m in found[f"other_{i}"])]
    assert not accepted, "not refused, or the finding does not name the call:\n" + "\n".join(accepted)


@pytest.mark.parametrize("shape", [(5,), (2, 3, 4, 5, 6, 7)], ids=["1d", "6d"])
def test_a_way_of_torchs_code_that_raises_raises_compiled(shape: tuple[int, ...]) -> None:
    """F.interpolate raises NotImplementedError for a rank no kernel takes: the compiled `if` chain's last way."""
    from torch_decisions import resized

    assert resized.build(), "resized did not compile"
    outcome = compare_call(resized, ppy.Call(torch.randn(*shape)))
    assert not outcome.mismatches, "\n".join(f"{m.what}: {m.detail}" for m in outcome.mismatches)
    assert isinstance(outcome.raised, NotImplementedError), outcome.raised
    with pytest.raises(NotImplementedError) as compiled_error:
        resized(torch.randn(*shape))
    assert str(compiled_error.value) == str(outcome.raised)  # the f-string's run-time rank formatted alike


WINDOWS = """@ppy.opt(1)
def window(m: int, beta: float) -> tuple[torch.Tensor, torch.Tensor]:
    return (torch.signal.windows.kaiser(m, beta=beta, sym=False),
            torch.signal.windows.general_cosine(m, a=(0.5, 0.3, beta)))
"""


def _compared_under_default(name: str, source: str, call: ppy.Call, default: torch.dtype) -> Any:
    """The region ``name`` of ``source`` (checked clean and compiled) against its Python body, with torch's default
    dtype set to ``default`` for the call only; the outcome, which must show no mismatch."""
    text = HEADER + source
    path = write_source(f"torch_python_{name}", text)
    findings = check_source(text, str(path))
    assert not findings, "\n".join(d.concise() for d in findings)
    region = getattr(load_module(path, f"torch_python_{name}"), name)
    assert region.build(), f"{name} did not compile"
    before = torch.get_default_dtype()
    torch.set_default_dtype(default)
    try:
        outcome = compare_call(region, call)
    finally:
        torch.set_default_dtype(before)
    assert not outcome.mismatches, "\n".join(f"{m.what}: {m.detail}" for m in outcome.mismatches)
    return outcome


@pytest.mark.parametrize(("m", "beta", "default"), [
    (0, 1.0, torch.float32), (1, 1.0, torch.float32), (5, 2.0, torch.float32), (6, 0.5, torch.float64),
    (-1, 1.0, torch.float32), (4, -1.0, torch.float32), (4, 1.0, torch.float16)])
def test_windows_decide_at_run_time(m: int, beta: float, default: torch.dtype) -> None:
    """A window's length and coefficients known only at run time, and torch's default dtype read when the region
    runs (never folded where it is built): each way of torch's checks, and the raises, as eager."""
    outcome = _compared_under_default("window", WINDOWS, ppy.Call(m, beta), default)
    if m < 0 or beta < 0 or default == torch.float16:
        assert isinstance(outcome.raised, ValueError), outcome.raised


NUMBERS = """@ppy.opt(1)
def numbers(x: torch.Tensor, n: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    return (x + torch.tensor(1), torch.tensor(0.5) * x, torch.tensor((1, 2.5)), torch.tensor((True, False)),
            torch.tensor((n, True)))
"""


@pytest.mark.parametrize("default", [torch.float32, torch.float64])
def test_tensor_of_numbers_infers_dtype_as_eager(default: torch.dtype) -> None:
    """`torch.tensor` of numbers without `dtype`: int64, bool, or for a float the default dtype read at run time."""
    _compared_under_default("numbers", NUMBERS, ppy.Call(torch.randn(3), 7), default)


LAYOUT = """@ppy.opt(1)
def dense(x: torch.Tensor) -> tuple[bool, bool]:
    return x.layout == torch.strided, x.is_sparse
"""


def test_a_parameters_layout_is_strided_in_compiled_code() -> None:
    """The model folds a parameter's layout to torch.strided (so torch.masked's sparse ways drop out); the compiled
    entry runs the Python body for a sparse tensor, which answers as eager does."""
    text = HEADER + LAYOUT
    path = write_source("torch_python_layout", text)
    findings = check_source(text, str(path))
    assert not findings, "\n".join(d.concise() for d in findings)
    dense = load_module(path, "torch_python_layout").dense
    assert dense.build(), "dense did not compile"
    assert dense(torch.randn(3)) == (True, False)
    assert dense(torch.randn(3).to_sparse()) == (False, True)


LIMITS = """@ppy.opt(1)
def limits(x: torch.Tensor) -> tuple[torch.Tensor, float, float, float, float, float, float, int, float]:
    info = (torch.finfo(x.dtype).min, torch.finfo(x.dtype).max, torch.finfo(x.dtype).eps, torch.finfo(x.dtype).tiny,
            torch.finfo(x.dtype).smallest_normal, torch.finfo(x.dtype).resolution, torch.finfo(x.dtype).bits,
            torch.finfo().eps)
    return (x.masked_fill(x > 0, torch.finfo(x.dtype).min), *info)


@ppy.opt(1)
def attributes(x: torch.Tensor) -> tuple[float, float, float, float, float, float, int, float]:
    return (torch.finfo(x.dtype).min, torch.finfo(x.dtype).max, torch.finfo(x.dtype).eps, torch.finfo(x.dtype).tiny,
            torch.finfo(x.dtype).smallest_normal, torch.finfo(x.dtype).resolution, torch.finfo(x.dtype).bits,
            torch.finfo().eps)


@ppy.opt(1)
def bounds(x: torch.Tensor) -> tuple[int, int]:
    return torch.iinfo(x.dtype).min, torch.iinfo(x.dtype).max
"""
FLOATING = [torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex32, torch.complex64, torch.complex128]
EIGHT_BITS = [getattr(torch, name) for name in ("float8_e5m2", "float8_e4m3fn", "float8_e5m2fnuz", "float8_e4m3fnuz",
                                                "float8_e8m0fnu") if hasattr(torch, name)]


@pytest.mark.parametrize("dtype", FLOATING + [torch.int32, torch.bool], ids=str)
def test_finfo_is_read_for_the_dtype_the_region_runs_on(dtype: torch.dtype) -> None:
    """`torch.finfo(x.dtype).<attribute>` is read when the region runs, for the tensor it is given (no argument: the
    default dtype): each attribute as eager, and TypeError with Python's message for a dtype that is not floating."""
    x = torch.randn(4).to(dtype) if dtype not in (torch.complex32,) else torch.randn(4, dtype=torch.complex64).to(dtype)
    outcome = _compared_under_default("limits", LIMITS, ppy.Call(x), torch.float64)
    if not (dtype.is_floating_point or dtype.is_complex):
        assert isinstance(outcome.raised, TypeError), outcome.raised


@pytest.mark.parametrize("dtype", EIGHT_BITS, ids=str)
def test_finfo_of_eight_bit_floats_is_torchs(dtype: torch.dtype) -> None:
    """The float8 dtypes, which no kernel here fills: each attribute of the compiled `torch.finfo` is eager's."""
    region = _limits_region("attributes")
    expected = torch.finfo(dtype)
    got = region(torch.zeros(4, dtype=dtype))
    assert got == (expected.min, expected.max, expected.eps, expected.tiny, expected.smallest_normal,
                   expected.resolution, expected.bits, torch.finfo().eps)


@pytest.mark.parametrize("dtype", [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.float32],
                         ids=str)
def test_iinfo_is_read_for_the_dtype_the_region_runs_on(dtype: torch.dtype) -> None:
    outcome = _compared_under_default("bounds", LIMITS, ppy.Call(torch.zeros(2, dtype=dtype)), torch.float32)
    if dtype.is_floating_point:
        assert isinstance(outcome.raised, TypeError), outcome.raised


def _limits_region(name: str) -> Any:
    text = HEADER + LIMITS
    region = getattr(load_module(write_source(f"torch_python_{name}", text), f"torch_python_{name}"), name)
    assert region.build() and region.__ppy_region__, f"{name} did not compile"
    return region
