"""Python's own number semantics in a compiled region: exact results and Python's exception types and messages.

`--ppy-verify` holds floats to a relative tolerance and exceptions to their type; here the host arithmetic of
tests/regions/constructs.py is held to Python's exact answer and message.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

torch = pytest.importorskip("torch")

import constructs  # noqa: E402
import ppy  # noqa: E402
from ppy.decorators import Call  # noqa: E402
from ppy.verify import compare_call  # noqa: E402
from tests.support.outcomes import outcome  # noqa: E402


def same_as_python(region: ppy.Region[..., Any], cases: list[tuple[Any, ...]]) -> None:
    assert region.build(), f"{region.__name__} did not compile"
    for args in cases:
        assert outcome(region, *args) == outcome(region.python, *args), args


def test_int_to_a_negative_power_is_a_float() -> None:
    same_as_python(constructs.int_power_of_run_time_sign, [(2, 10), (2, -1), (-3, -3), (0, -1), (0, 0), (-1, -2**62)])


def test_ints_compare_with_floats_exactly() -> None:
    region = constructs.ints_against_floats
    same_as_python(region, [(2**53 + 1, 2.0**53), (2**63 - 1, 2.0**63), (-2**63, -2.0**63), (3, float("nan")),
                            (5, 5.5), (-5, -5.5), (2**62 + 1, 2.0**62), (7, float("inf")), (-7, float("-inf"))])


def test_int_true_division_is_correctly_rounded() -> None:
    generator = random.Random(0)
    cases = [(generator.randrange(-2**63, 2**63), generator.choice([generator.randrange(1, 2**40), generator.randrange(-2**63, -1)]))
             for _ in range(2000)]
    cases += [(2**63 - 1, 1), (-2**63, 1), (-2**63, -1), (-2**63, 3), (2**53 + 1, 2), (0, -7), (1, 2**63 - 1), (7, 0)]
    same_as_python(constructs.int_true_division, cases)


def test_messages_are_pythons() -> None:
    rows = torch.randn(1, 2)
    same_as_python(constructs.starred_unpack_of_run_time_length, [(torch.randn(4, 2),), (rows,)])
    region = constructs.loss_of_run_time_reduction
    assert region.build()
    x, y = torch.randn(3), torch.randn(3)
    assert outcome(region, x, y, "bad") == outcome(region.python, x, y, "bad") == (
        "ValueError", "bad is not a valid value for reduction")


@pytest.mark.parametrize("name", ["optional_slice_bounds", "optional_sequence_slice_bounds"])
def test_an_optional_slice_bound_may_be_none(name: str) -> None:
    region = getattr(constructs, name)
    assert region.build()
    calls = region.sample_calls("cpu")
    # A zero step raises Python's ValueError on both sides (a registered sample must run, so it is made here).
    args = list(calls[-1].args)
    args[4 if name == "optional_sequence_slice_bounds" else 3] = 0
    zero_step = Call(*args)
    for call in [*calls, zero_step]:
        outcome_ = compare_call(region, call)
        assert not outcome_.mismatches, outcome_.mismatches
    assert outcome(region, *zero_step.args) == outcome(region.python, *zero_step.args) == (
        "ValueError", "slice step cannot be zero")
