"""Which regions draw random numbers, as the model says: a dropout draws its mask only when it can drop something.

The model's `random` decides the torch operator's `nondeterministic_seeded` tag and the warning that its backward
pass draws again (`ppy/torch_op.py`): a region calling scaled_dot_product_attention with `dropout_p` 0 (its
default) warned under torch.compile that it "may draw random numbers"."""

from __future__ import annotations

import textwrap

import pytest

from ppy_check.engine import analyse
from ppy_check.module import ModuleRegions

HEADER = "import ppy\nimport torch\nimport torch.nn.functional as F\n\n\n"
ATTEND = "@ppy.opt(1)\ndef f(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor{extra}) -> torch.Tensor:\n    return {body}\n"
ONE = "@ppy.opt(1)\ndef f(x: torch.Tensor{extra}) -> torch.Tensor:\n    return {body}\n"


def _random(template: str, body: str, extra: str = "") -> bool:
    module = ModuleRegions.load("m.py", HEADER + textwrap.dedent(template.format(body=body, extra=extra)))
    model = analyse(module.regions[0]).model
    assert model is not None, analyse(module.regions[0]).problems
    return model.random


@pytest.mark.parametrize("body, extra, draws", [
    ("F.scaled_dot_product_attention(q, k, v, is_causal=True)", "", False),  # dropout_p's default, 0.0
    ("F.scaled_dot_product_attention(q, k, v, dropout_p=0.0)", "", False),
    ("F.scaled_dot_product_attention(q, k, v, None, 0)", "", False),
    ("F.scaled_dot_product_attention(q, k, v, dropout_p=0.1)", "", True),
    ("F.scaled_dot_product_attention(q, k, v, dropout_p=p)", ", p: float", True),  # not known where it is built
])
def test_attention_draws_only_with_dropout(body: str, extra: str, draws: bool) -> None:
    assert _random(ATTEND, body, extra) is draws


@pytest.mark.parametrize("body, extra, draws", [
    ("F.dropout(x, 0.5, training=False)", "", False),
    ("F.dropout(x, 0.0)", "", False),
    ("F.dropout(x, 0.5)", "", True),
    ("F.dropout(x, 0.5, training=t)", ", t: bool", True),
    ("torch.bernoulli(x, 0.0)", "", True),  # bernoulli's `p` is no dropout probability: it draws at 0 too
    ("torch.rand_like(x)", "", True),
    ("x * 2", "", False),
])
def test_dropout_draws_only_when_it_can_drop(body: str, extra: str, draws: bool) -> None:
    assert _random(ONE, body, extra) is draws
