"""What ``isinstance`` in torch's Python code answers for each kind of value a region holds (facts.py): decided from
the model's type where Python's answer cannot depend on the run, refused (None) where it can."""

from __future__ import annotations

import pytest

from ppy_check.model import types as t
from ppy_check.model.builder.facts import _isinstance_answer

KINDS = [t.TENSOR, t.INT, t.FLOAT, t.NUMBER, t.BOOL, t.STR, t.DTYPE, t.DEVICE, t.NONE, t.TupleT((t.INT, t.INT)),
         t.SeqT(t.INT), t.OptionalT(t.TENSOR), t.OptionalT(t.INT)]


@pytest.mark.parametrize("kind", KINDS, ids=str)
@pytest.mark.parametrize("mapping", ["collections.OrderedDict", "typing.OrderedDict", "builtins.dict"])
def test_no_value_a_region_holds_is_a_mapping(kind: t.Type, mapping: str) -> None:
    # torch 2.11's Tensor.unflatten asks `isinstance(sizes, OrderedDict)` of a tuple of ints.
    assert _isinstance_answer(kind, frozenset({mapping})) is False


@pytest.mark.parametrize("kind, classes, answer", [
    (t.TupleT((t.INT,)), {"builtins.tuple", "builtins.list"}, True),
    (t.TupleT((t.INT,)), {"builtins.tuple"}, None),  # a region's sequence may have been passed as a list
    (t.SeqT(t.INT, passed="sequence"), {"builtins.list"}, None),
    (t.NUMBER, {"builtins.int"}, None),  # an int or a float: only the run knows
    (t.NUMBER, {"builtins.int", "builtins.float"}, True),
    (t.BOOL, {"builtins.int"}, True),
    (t.TENSOR, {"torch.Tensor", "collections.OrderedDict"}, True),
    (t.OptionalT(t.TENSOR), {"torch.Tensor"}, None),  # None or a tensor: only the run knows
    (t.TENSOR, {"some.OtherClass"}, None),  # a class the model does not know
])
def test_answers_where_the_type_decides_and_only_there(kind: t.Type, classes: set[str], answer: bool | None) -> None:
    assert _isinstance_answer(kind, frozenset(classes)) is answer
