"""`ppy.verify.compare_call` on hand-made regions: a Python stand-in plays the compiled side, so nothing is built."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest

torch = pytest.importorskip("torch")

import ppy  # noqa: E402
from ppy.decorators import Compiled  # noqa: E402
from ppy.verify import compare_call  # noqa: E402


def region(python: Callable[..., Any], compiled: Callable[..., Any], pure: bool = False,
           method: bool = False) -> ppy.Region:
    made = ppy.Region(python, level=1, pure=pure)
    # What a build would install: every parameter positional; a method region's reads through its instance (any
    # object: compare_call only asks whether there are some, the stand-in reads the instance itself).
    made.settle_compiled(Compiled(entry=compiled, signature=inspect.signature(python),
                                  instance=object() if method else None))
    return made


def clean(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x * y


def writes_x(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return x.mul_(y)  # y is all ones: the values stay, only the version counter moves


def test_pure_region_whose_compiled_call_writes_names_the_parameter() -> None:
    outcome = compare_call(region(clean, writes_x, pure=True), ppy.Call(torch.randn(3), torch.ones(3)))
    assert [(m.what, m.verb, m.detail) for m in outcome.mismatches] == [
        ("parameter `x`", "was written",
         "the region is @ppy.pure, but the compiled call wrote `x` (its version counter moved from 0 to 1)")]


def test_pure_region_whose_python_body_writes_names_the_parameter() -> None:
    outcome = compare_call(region(writes_x, clean, pure=True), ppy.Call(torch.randn(3), y=torch.ones(3)))
    assert [m.detail for m in outcome.mismatches if m.verb == "was written"] == [
        "the region is @ppy.pure, but the Python body wrote `x` (its version counter moved from 0 to 1)"]


def test_a_write_in_a_tuple_argument_is_named_by_its_index() -> None:
    def python(xs: tuple[torch.Tensor, ...]) -> torch.Tensor:
        return xs[0] + xs[1]

    def compiled(xs: tuple[torch.Tensor, ...]) -> torch.Tensor:
        return xs[0] + xs[1].add_(0)

    outcome = compare_call(region(python, compiled, pure=True), ppy.Call((torch.ones(2), torch.ones(2))))
    assert [m.what for m in outcome.mismatches] == ["parameter `xs[1]`"]


def test_writes_of_a_region_that_is_not_pure_are_compared_by_value_only() -> None:
    outcome = compare_call(region(writes_x, writes_x), ppy.Call(torch.randn(3), torch.ones(3)))
    assert outcome.mismatches == ()


def test_the_tolerance_reported_is_the_outputs_not_the_gradients() -> None:
    def python(x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x) * 3

    outcome = compare_call(region(python, python), ppy.Call(torch.randn(4)))
    # float32's (rtol, atol); gradients are compared at 4x that, which must not show here.
    assert outcome.mismatches == () and outcome.tolerance == (1.3e-6, 1e-5)


def test_both_sides_raising_alike_is_no_mismatch_but_is_reported() -> None:
    """Both raise the same type: no mismatch, but nothing was compared, and the outcome says so (a sample must run)."""
    outcome = compare_call(region(clean, clean), ppy.Call(torch.randn(3), torch.randn(4)))
    assert not outcome.mismatches and isinstance(outcome.raised, RuntimeError)
    assert compare_call(region(clean, clean), ppy.Call(torch.randn(3), torch.randn(3))).raised is None


def test_a_result_built_as_another_class_is_a_mismatch() -> None:
    # The values are equal; a torch.Size returned as a plain tuple (or a torch.return_types.max as one) is not.
    def python(x: torch.Tensor) -> Any:
        return x.shape, torch.max(x, 0)

    def compiled(x: torch.Tensor) -> Any:
        return tuple(x.shape), torch.max(x, 0)

    outcome = compare_call(region(python, compiled), ppy.Call(torch.randn(3, 2)))
    assert [m.what for m in outcome.mismatches] == ["output"]
    assert "torch.Size" in outcome.mismatches[0].detail and "builtins.tuple" in outcome.mismatches[0].detail


def test_complex32_results_are_compared() -> None:
    def python(x: torch.Tensor) -> torch.Tensor:
        return x.chalf()

    def compiled(x: torch.Tensor) -> torch.Tensor:
        return (x + 1).chalf()

    assert compare_call(region(python, python), ppy.Call(torch.randn(3))).mismatches == ()
    assert [m.what for m in compare_call(region(python, compiled), ppy.Call(torch.randn(3))).mismatches] == ["output"]


def test_arguments_the_compiled_code_does_not_take_are_declined_not_compared() -> None:
    """The compiled code answers NotImplemented to an argument it does not take (an int beyond 64 bits, an int
    for a bool): a call of the region gives it to the Python body, so there is nothing to compare, and the
    outcome says so rather than reporting NotImplemented as the compiled answer."""
    def python(x: torch.Tensor, n: int) -> torch.Tensor:
        return x * n

    def compiled(x: torch.Tensor, n: int) -> Any:
        return NotImplemented if not -2**63 <= n < 2**63 else x * n

    declined = compare_call(region(python, compiled), ppy.Call(torch.ones(2), 2**70))
    assert declined.declined and declined.mismatches == ()
    taken = compare_call(region(python, compiled), ppy.Call(torch.ones(2), 3))
    assert not taken.declined and taken.mismatches == ()


def test_comparing_a_call_leaves_the_callers_random_numbers_as_they_were() -> None:
    """--ppy-verify compares a session's calls on the way (with gradients): the test's next draws must be the ones
    it would have drawn without it."""
    import tiny
    from ppy.decorators import Call

    assert tiny.scale_shift.build()
    x = torch.randn(3, requires_grad=True)
    torch.manual_seed(7)
    expected = torch.rand(4)
    torch.manual_seed(7)
    compare_call(tiny.scale_shift, Call(x, 2.0, 1))
    assert torch.equal(torch.rand(4), expected)


def normed(self: torch.nn.BatchNorm1d, x: torch.Tensor) -> torch.Tensor:
    return self(x)


def normed_without_the_update(self: torch.nn.BatchNorm1d, x: torch.Tensor) -> torch.Tensor:
    # Training's output (the batch's statistics), the running ones left as they were: a missed write.
    return torch.nn.functional.batch_norm(x, None, None, self.weight, self.bias, True, 0.0, self.eps)


def test_a_method_regions_runs_write_copies_of_the_instance_each_starting_from_the_callers() -> None:
    """Each side (and each gradient run) gets a copy of the instance: the caller's module is left for its own call
    to write once, and the compiled side does not start from the state the Python body left."""
    torch.manual_seed(0)
    bn = torch.nn.BatchNorm1d(3).train()
    outcome = compare_call(region(normed, normed, method=True), ppy.Call(bn, torch.randn(4, 3)))
    assert outcome.mismatches == ()
    assert torch.equal(bn.running_mean, torch.zeros(3)) and int(bn.num_batches_tracked) == 0


def test_an_instance_buffer_the_compiled_side_does_not_write_is_a_mismatch_naming_it() -> None:
    torch.manual_seed(0)
    outcome = compare_call(region(normed, normed_without_the_update, method=True),
                           ppy.Call(torch.nn.BatchNorm1d(3).train(), torch.randn(4, 3)))
    assert [m.what for m in outcome.mismatches] == ["attribute `self.running_mean`", "attribute `self.running_var`",
                                                    "attribute `self.num_batches_tracked`"]
