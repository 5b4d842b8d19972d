"""torch.einsum of three operands or more, compiled, contracts in eager's order under every opt_einsum setting.

torch's Python ``einsum`` hands ATen a contraction path from opt_einsum when that
package is installed and ``torch.backends.opt_einsum.enabled`` is set (the
default then), with ``strategy`` choosing how it searches, and none otherwise
(left to right). The order changes the rounding, so a compiled region asks
the same question when it runs (``ppy.einsum.contract_path``): its values and
gradients are eager's to the bit, whatever the setting, and where opt_einsum
refuses the sizes it raises opt_einsum's error, as eager does. The sublist
spelling (``torch.einsum(x, [0, 1], y, [1, 2])``) is read into an equation
where the region is built, as torch's Python code reads it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

torch = pytest.importorskip("torch")
opt_einsum = pytest.importorskip("opt_einsum")  # a dev dependency (pyproject.toml): its paths are what this tests

import torch_python_regions as tp  # noqa: E402
from tests.support.outcomes import outcome  # noqa: E402

import ppy  # noqa: E402

SETTINGS = ["enabled", "disabled", "greedy", "unavailable"]


@contextmanager
def setting(name: str, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """torch.backends.opt_einsum as a user may leave it: the default (enabled, "auto"), disabled, another
    strategy, or opt_einsum not installed (torch then passes no path, whatever `enabled` says)."""
    backend = torch.backends.opt_einsum
    if name == "unavailable":
        monkeypatch.setattr(backend, "is_available", lambda: False)
        yield
    elif name == "disabled":
        with backend.flags(enabled=False):
            yield
    elif name == "greedy":
        with backend.flags(enabled=True, strategy="greedy"):
            yield
    else:
        assert backend.enabled and backend.strategy == "auto"
        yield


def cases() -> list[tuple[ppy.Region[..., Any], tuple[torch.Tensor, ...]]]:
    torch.manual_seed(0)
    return [(region, call.args) for region in (tp.selective_scan_prologue, tp.chain, tp.sublists)
            for call in region.sample_calls("cpu")]


def _leaves(args: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, ...]:
    return tuple(a.detach().clone().requires_grad_() for a in args)


def _run(function: Any, args: tuple[torch.Tensor, ...]) -> tuple[torch.Tensor, tuple[torch.Tensor, ...]]:
    leaves = _leaves(args)
    result = function(*leaves)
    results = result if isinstance(result, tuple) else (result,)
    torch.autograd.backward(results, [torch.ones_like(r) for r in results])
    return torch.cat([r.detach().flatten() for r in results]), tuple(leaf.grad for leaf in leaves)


@pytest.mark.parametrize("name", SETTINGS)
def test_values_and_gradients_are_eagers_to_the_bit(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for region, args in cases():
        assert region.build(), f"{region.__name__} did not compile"
        with setting(name, monkeypatch):
            compiled, compiled_grads = _run(region, args)
            python, python_grads = _run(region.python, args)
        assert torch.equal(compiled, python), (region.__name__, name)
        assert all(torch.equal(c, p) for c, p in zip(compiled_grads, python_grads)), (region.__name__, name)


def test_the_setting_changes_eagers_rounding(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the test above holds the compiled code to: each setting's order gives other bits somewhere, so a region
    contracting in one fixed order would fail it."""
    found: dict[str, list[torch.Tensor]] = {}
    for name in SETTINGS:
        with setting(name, monkeypatch):
            found[name] = [_run(region.python, args)[0] for region, args in cases()]
        monkeypatch.undo()
    differs = {name for name in ("enabled", "greedy")
               if any(not torch.equal(a, b) for a, b in zip(found[name], found["disabled"]))}
    assert differs == {"enabled", "greedy"}
    assert all(torch.equal(a, b) for a, b in zip(found["unavailable"], found["disabled"]))


@pytest.mark.parametrize("name", SETTINGS)
def test_sizes_that_do_not_match_raise_as_eager(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """opt_einsum checks the sizes first (ValueError); without it ATen does (RuntimeError): the same either way."""
    assert tp.selective_scan_prologue.build()
    args = (torch.randn(2, 3, 5), torch.randn(2, 4, 5), torch.randn(2, 3, 6))
    with setting(name, monkeypatch):
        compiled, python = outcome(tp.selective_scan_prologue, *args), outcome(tp.selective_scan_prologue.python, *args)
    assert compiled == python
    assert compiled[0] == ("RuntimeError" if name in ("disabled", "unavailable") else "ValueError"), compiled
