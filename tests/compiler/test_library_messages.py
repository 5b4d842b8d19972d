"""Messages torch's Python code builds with f-strings, compiled: exactly Python's.

A check of torch's Python code on a run-time value (``if p < 0.0 or p > 1.0: raise ValueError(f"... got {p}")``)
is a compiled check (tests/regions/library_messages.py); what its f-string formats is printed as Python's str()
would: a float's shortest repr (``1.5``, ``1e+300``, ``inf``), an int held by a float parameter as an int, a tuple
as ``(1, 1, 2, 2)``, a torch.Size as ``torch.Size([1, 3])``, never the template's ``{p}``.
"""

from __future__ import annotations

from typing import Any

import pytest

torch = pytest.importorskip("torch")

import library_messages as lm  # noqa: E402
from tests.support.outcomes import outcome  # noqa: E402

import ppy  # noqa: E402
from ppy.verify import compare_call  # noqa: E402


def same_as_python(region: ppy.Region[..., Any], cases: list[tuple[Any, ...]]) -> list[tuple[str, Any]]:
    """Each case's outcome, after holding the compiled one to the Python body's; each must raise."""
    assert region.build(), f"{region.__name__} did not compile"
    found = []
    for args in cases:
        compiled, python = outcome(region, *args), outcome(region.python, *args)
        assert compiled == python, args
        assert "{" not in str(python[1]), python  # a template left unformatted
        found.append(python)
    return found


def x(*shape: int) -> torch.Tensor:
    return torch.randn(shape)


def test_a_float_is_printed_as_python_prints_it() -> None:
    found = same_as_python(lm.dropout_p, [(x(2, 3), p) for p in (1.5, 2, -0.5, 1e300, float("inf"), -1e-7, 2**53)])
    assert found[0] == ("ValueError", "dropout probability has to be between 0 and 1, but got 1.5")
    assert [message.rsplit(" ", 1)[1] for _, message in found] == [
        "1.5", "2", "-0.5", "1e+300", "inf", "-1e-07", "9007199254740992"]
    found = same_as_python(lm.batch_norm_training, [(x(4, 3), x(3), x(3), eps) for eps in (0.0, -2, -0.25)])
    # The wording is the installed torch's (2.13 says "during training", 2.11 does not); the number is Python's.
    assert all(message.startswith("batch_norm eps must be positive") for _, message in found)
    assert [message.rsplit(" ", 1)[1] for _, message in found] == ["0.0", "-2", "-0.25"]
    found = same_as_python(lm.triplet, [(x(3, 4), x(3, 4), x(3, 4), -1.0)])
    assert found == [("ValueError", "margin must be greater than 0, got -1.0")]


def test_a_size_is_printed_as_python_prints_it() -> None:
    found = same_as_python(lm.batch_norm_training, [(x(1, 3), x(3), x(3), 1e-5), (x(1, 3, 1, 1), x(3), x(3), 1e-5)])
    assert found == [
        ("ValueError", "Expected more than 1 value per channel when training, got input size torch.Size([1, 3])"),
        ("ValueError", "Expected more than 1 value per channel when training, got input size torch.Size([1, 3, 1, 1])")]
    found = same_as_python(lm.instance_norm_training, [(x(2, 3, 1),)])
    assert found == [("ValueError", "Expected more than 1 spatial element when training, got input size "
                                    "torch.Size([2, 3, 1])")]
    found = same_as_python(lm.ranking, [(x(5), x(5, 1), x(5), 0.0), (x(), x(5), x(5), 0.0)])
    assert found[0] == ("RuntimeError", "margin_ranking_loss : All input tensors should have same dimension but got "
                                        "sizes: input1: torch.Size([5]), input2: torch.Size([5, 1]), target: "
                                        "torch.Size([5]) ")
    assert "input1: torch.Size([])," in found[1][1]


def test_a_tuple_is_printed_as_python_prints_it() -> None:
    found = same_as_python(lm.affine, [(x(1, 3, 3), (1, 1, 2, 2)), (x(1, 2, 3), (1, 1, 0, 2))])
    assert found == [
        ("ValueError", "Expected a batch of 2D affine matrices of shape Nx2x3 for size (1, 1, 2, 2). Got "
                       "torch.Size([1, 3, 3])."),
        ("ValueError", "Expected non-zero, positive output size. Got (1, 1, 0, 2)")]


def test_a_list_of_a_slice_and_arithmetic_on_a_rank_are_printed_as_python_prints_them() -> None:
    found = same_as_python(lm.resized, [(x(1, 2, 3),), (x(1, 2, 3, 3, 3),)])
    assert found[0][1].startswith("Input and output must have the same number of spatial dimensions, but got input "
                                  "with spatial dimensions of [3] and output size of (4, 4).")
    found = same_as_python(lm.masked_total, [(x(2, 3), x(2, 3) > 0, 3), (x(2, 3), x(2, 3) > 0, -3),
                                             (x(4), x(4) > 0, 1)])
    assert found[0] == ("IndexError", "Dimension out of range (expected to be in range of [-2, 1], but got 3)")
    assert found[2] == ("IndexError", "Dimension out of range (expected to be in range of [-1, 0], but got 1)")


def test_a_method_torch_implements_in_python_raises_as_python_does() -> None:
    # torch/_tensor.py's Tensor.norm and Tensor.stft, not the builtins of the same name, which word these otherwise.
    ints = torch.arange(6).reshape(2, 3)
    found = same_as_python(lm.norms, [(ints, 2.0), (ints[0], 3)])
    assert found[0] == ("RuntimeError", "linalg.vector_norm: Expected a floating point or complex tensor as input. "
                                        "Got Long")
    found = same_as_python(lm.spectrum, [(torch.arange(16),), (x(2, 2, 16),)])
    assert found[0][1].startswith("stft(torch.LongTensor[20], n_fft=4,")
    assert found[1][1].endswith("expected a 1D or 2D tensor")


@pytest.mark.parametrize("name", sorted(name for name, value in vars(lm).items() if isinstance(value, ppy.Region)))
def test_the_samples_match_python(name: str) -> None:
    region = getattr(lm, name)
    assert region.build(), f"{name} did not compile"
    for call in region.sample_calls("cpu"):
        found = compare_call(region, call)
        assert not found.mismatches and found.raised is None, (found.mismatches, found.raised)
