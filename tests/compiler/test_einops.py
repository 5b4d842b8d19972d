"""einops calls, compiled, check their input's shape as einops does: a call einops refuses raises einops's own
EinopsError with einops's message (never a value, nor torch's error from the reshape that would follow). The
regions are tests/regions/einops_regions.py; their samples (`--ppy-verify`) hold the values to einops's."""

from __future__ import annotations

from typing import Any

import pytest

torch = pytest.importorskip("torch")
einops = pytest.importorskip("einops")

import einops_regions as regions  # noqa: E402
import ppy  # noqa: E402
from tests.support.outcomes import outcome  # noqa: E402


def same_as_einops(region: ppy.Region[..., Any], cases: list[tuple[Any, ...]]) -> list[tuple[str, Any]]:
    """Each call's outcome, the compiled entry's (never the Python body's) equal to einops's own."""
    assert region.build(), f"{region.__name__} did not compile: {region.fallback_reason}"
    entry = region.compiled
    assert entry is not None
    found = []
    for args in cases:
        expected = outcome(region.python, *args)
        assert outcome(lambda *a: entry(*a), *args) == expected, args
        if expected[0] == "EinopsError":
            with pytest.raises(einops.EinopsError) as raised:
                entry(*args)
            assert type(raised.value) is einops.EinopsError  # the class itself: `except EinopsError` catches it
        found.append(expected)
    return found


def _info(function: str, pattern: str, shape: tuple[int, ...], given: str) -> str:
    return (f' Error while processing {function}-reduction pattern "{pattern}".\n Input tensor shape: '
            f"torch.Size({list(shape)}). Additional info: {{{given}}}.\n ")


def test_a_length_given_for_an_axis_is_checked_against_the_shape() -> None:
    x = torch.randn(2, 12)
    found = same_as_einops(regions.given_lengths, [(x, 2, 3, 4), (x, 3, 3, 4), (x, 2, 3, 5), (x, 2, 4, 3),
                                                   (torch.randn(2, 3, 4), 2, 3, 4), (torch.randn(12), 2, 3, 4)])
    assert [kind for kind, _ in found] == ["Tensor", "EinopsError", "EinopsError", "Tensor", "EinopsError",
                                           "EinopsError"]
    pattern = "b (h d) -> b d h"
    assert found[1][1] == _info("rearrange", pattern, (2, 12), "'b': 3, 'h': 3, 'd': 4") + "Shape mismatch, 2 != 3"
    assert found[2][1] == _info("rearrange", pattern, (2, 12), "'b': 2, 'h': 3, 'd': 5") + "Shape mismatch, 12 != 15"
    assert found[4][1].endswith("Wrong shape: expected 2 dims. Received 3-dim tensor.")
    assert found[5][1].endswith("Wrong shape: expected 2 dims. Received 1-dim tensor.")


def test_a_split_axis_must_divide_and_the_rank_must_fit() -> None:
    found = same_as_einops(regions.split_heads, [(torch.randn(2, 5, 12), 3), (torch.randn(2, 5, 12), 5),
                                                 (torch.randn(2, 5, 12), -5), (torch.randn(2, 5, 12), -3),
                                                 (torch.randn(2, 12), 3), (torch.randn(2, 5, 0), 3)])
    assert [kind for kind, _ in found] == ["tuple", "EinopsError", "EinopsError", "RuntimeError", "EinopsError",
                                           "tuple"]
    assert found[1][1] == _info("rearrange", "b n (h d) -> b h n d", (2, 5, 12), "'h': 5") + \
        "Shape mismatch, can't divide axis of length 12 in chunks of 5"
    assert found[4][1].endswith("Wrong shape: expected 3 dims. Received 2-dim tensor.")
    # No heads at all: einops's `length % 0`, Python's ZeroDivisionError, not an EinopsError.
    assert same_as_einops(regions.split_heads, [(torch.randn(2, 5, 12), 0)])[0] == \
        ("ZeroDivisionError", "integer modulo by zero")
    found = same_as_einops(regions.patches, [(torch.randn(2, 3, 8, 12), 4), (torch.randn(2, 3, 8, 10), 4),
                                             (torch.randn(2, 3, 6, 12), 4), (torch.randn(3, 8, 12), 4)])
    assert [kind for kind, _ in found] == ["Tensor", "EinopsError", "EinopsError", "EinopsError"]
    assert found[1][1].endswith("Shape mismatch, can't divide axis of length 10 in chunks of 4")


def test_a_unit_axis_and_an_ellipsis() -> None:
    y = torch.randn(2, 3, 4)
    found = same_as_einops(regions.unit_and_ellipsis, [(torch.randn(2, 1, 3), y), (torch.randn(2, 3, 3), y),
                                                       (torch.randn(2, 3), y), (torch.randn(2, 1, 3), torch.randn(4)),
                                                       (torch.randn(2, 1, 3), torch.randn(2, 5)),
                                                       (torch.randn(2, 1, 3), torch.randn(2, 4))])
    assert [kind for kind, _ in found] == ["tuple", "EinopsError", "EinopsError", "EinopsError", "EinopsError",
                                           "tuple"]
    assert found[1][1] == _info("rearrange", "a 1 c -> c a", (2, 3, 3), "") + "Shape mismatch, 3 != 1"
    assert found[3][1] == _info("rearrange", "a ... (c two) -> ... a c two", (4,), "'two': 2") + \
        "Wrong shape: expected >=2 dims. Received 1-dim tensor."
    found = same_as_einops(regions.ellipsis_and_units, [(torch.randn(3, 4, 6),), (torch.randn(3, 4, 5),),
                                                        (torch.randn(3, 4),)])
    assert [kind for kind, _ in found] == ["tuple", "EinopsError", "EinopsError"]


def test_repeat_checks_the_lengths_it_is_given() -> None:
    x = torch.randn(3, 4)
    found = same_as_einops(regions.repeat_given, [(x, 2, 3), (x, 2, 4), (torch.randn(3, 5), 2, 3),
                                                  (torch.randn(3, 4, 1), 2, 3), (x, 0, 3)])
    assert [kind for kind, _ in found] == ["Tensor", "EinopsError", "EinopsError", "EinopsError", "Tensor"]
    assert found[1][1] == _info("repeat", "h (w two) -> h w two r", (3, 4), "'r': 2, 'two': 2, 'h': 4") + \
        "Shape mismatch, 3 != 4"
    found = same_as_einops(regions.repeats, [(torch.randn(3, 4), 5), (torch.randn(3), 5)])
    assert found[1][0] == "EinopsError" and found[1][1].endswith("Wrong shape: expected 2 dims. Received 1-dim tensor.")


def test_reduce_checks_as_einops_does() -> None:
    found = same_as_einops(regions.averaged, [(torch.randn(3, 4), 2), (torch.randn(3, 5), 2), (torch.randn(3, 4), 3),
                                              (torch.randn(3, 4, 2), 2),
                                              (torch.ones(3, 4, dtype=torch.bfloat16), 2),
                                              (torch.ones(3, 4, dtype=torch.float64), 2),
                                              (torch.ones(3, 4, dtype=torch.long), 2),
                                              (torch.ones(3, 4, dtype=torch.complex64), 2)])
    assert [kind for kind, _ in found] == ["Tensor", "EinopsError", "EinopsError", "EinopsError", "Tensor", "Tensor",
                                           "NotImplementedError", "NotImplementedError"]
    assert found[1][1] == _info("mean", "b (n two) -> b n", (3, 5), "'two': 2") + \
        "Shape mismatch, can't divide axis of length 5 in chunks of 2"
    assert found[6][1] == "reduce_mean is not available for non-floating tensors"
    found = same_as_einops(regions.reductions, [(torch.randn(2, 6, 3),), (torch.randn(2, 5, 3),), (torch.randn(6, 3),)])
    assert [kind for kind, _ in found] == ["tuple", "EinopsError", "EinopsError"]
    assert found[1][1] == _info("max", "b (n two) d -> b n d", (2, 5, 3), "'two': 2") + \
        "Shape mismatch, can't divide axis of length 5 in chunks of 2"
    assert found[2][1].endswith("Wrong shape: expected 3 dims. Received 2-dim tensor.")  # the first reduce's
