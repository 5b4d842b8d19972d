"""The contraction path ``torch.einsum`` takes for three or more operands, asked for when a compiled region runs.

torch's Python ``einsum`` hands ATen a path from opt_einsum when that package is
installed and ``torch.backends.opt_einsum.enabled`` is set, and none otherwise
(ATen then contracts left to right). The path changes the order of the
products, and so the rounding: a compiled region asks this function, at each
call, the question torch's code asks, with the same lines, so it contracts in
eager's order under every setting (``ppy_check/torch_python_overrides.py``'s
``einsum`` calls it; the C++ runtime's ``ppy::einsum_path``).
"""

from __future__ import annotations

import itertools

import torch


def contract_path(equation: str, *operands: torch.Tensor) -> list[int] | None:
    """The ``path`` torch's ``einsum`` passes to ``_VF.einsum`` for these operands: flat pairs of indices, or
    None."""
    import torch.backends.opt_einsum as opt_einsum

    # torch.functional.einsum's own lines, from its test of the setting to the path it passes.
    if len(operands) <= 2 or not opt_einsum.enabled:
        return None
    path = None
    if opt_einsum.is_available():
        _opt_einsum = opt_einsum.get_opt_einsum()
        tupled_path = _opt_einsum.contract_path(equation, *operands, optimize=opt_einsum.strategy)[0]
        path = [*itertools.chain.from_iterable(tupled_path)]
    return path
