"""torch.nn's module classes as the checker reads them: where each one's source ships, what each attribute holds.

(Placeholder of the interface; the full table and its drift tests land with the nnclasses branch.)
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ppy_check.model import types as t


@dataclass(frozen=True)
class TorchClass:
    """One of torch.nn's module classes: where its source ships and what each attribute it reads holds."""

    name: str
    module: str
    fields: tuple[tuple[str, t.Type], ...]
    submodules: tuple[tuple[str, str], ...] = ()


_OPTIONAL_TENSOR = t.OptionalT(t.TENSOR)
TORCH_CLASSES: Mapping[str, TorchClass] = {f"torch.nn.{c.name}": c for c in (
    TorchClass("Linear", "torch.nn.modules.linear", (("weight", t.TENSOR), ("bias", _OPTIONAL_TENSOR),
                                                      ("in_features", t.INT), ("out_features", t.INT),
                                                      ("training", t.BOOL))),
    TorchClass("Identity", "torch.nn.modules.linear", (("training", t.BOOL),)),
    TorchClass("LayerNorm", "torch.nn.modules.normalization", (("weight", _OPTIONAL_TENSOR), ("bias", _OPTIONAL_TENSOR),
                                                                ("normalized_shape", t.SeqT(t.INT)), ("eps", t.FLOAT),
                                                                ("elementwise_affine", t.BOOL), ("training", t.BOOL))),
    TorchClass("GELU", "torch.nn.modules.activation", (("approximate", t.STR), ("training", t.BOOL))),
    TorchClass("ReLU", "torch.nn.modules.activation", (("inplace", t.BOOL), ("training", t.BOOL))),
    TorchClass("SiLU", "torch.nn.modules.activation", (("inplace", t.BOOL), ("training", t.BOOL))),
    TorchClass("Tanh", "torch.nn.modules.activation", (("training", t.BOOL),)),
    TorchClass("Dropout", "torch.nn.modules.dropout", (("p", t.FLOAT), ("inplace", t.BOOL), ("training", t.BOOL))),
    TorchClass("Embedding", "torch.nn.modules.sparse", (("weight", t.TENSOR), ("padding_idx", t.OptionalT(t.INT)),
                                                        ("max_norm", t.OptionalT(t.FLOAT)), ("norm_type", t.FLOAT),
                                                        ("scale_grad_by_freq", t.BOOL), ("sparse", t.BOOL),
                                                        ("training", t.BOOL))),
)}


def torch_class(dotted: str) -> TorchClass | None:
    if dotted in TORCH_CLASSES:
        return TORCH_CLASSES[dotted]
    module, _, name = dotted.rpartition(".")
    found = TORCH_CLASSES.get(f"torch.nn.{name}")
    return found if found is not None and found.module == module else None
