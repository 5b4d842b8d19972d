# mypy: ignore-errors

"""Straight-line versions of the few private helpers of torch's Python code that loop or look a value up.

torch checks a batch norm's input by multiplying its sizes in a loop over the
rank, fills an adaptive pool's ``None`` output sizes in a comprehension, and
finds a complex dtype's real one in a dict; a region has no loops and no
dicts, so ppy follows these instead of torch's own (``torch_python.py``).
``einsum`` is torch's own up to where it asks opt_einsum for a contraction
path, a question on settings and sizes ppy asks when the region runs.
Each computes what torch's does, raises what torch's raises, and is checked
against eager through the functions that call it
(``tests/regions/torch_python_regions.py``, ``tests/compiler/test_torch_python.py``).
This module is read, never imported, by the checker: it is region syntax,
not a runtime dependency.
"""

import math

import torch
from torch import _VF
from torch.overrides import handle_torch_function, has_torch_function

from ppy.einsum import contract_path


def _verify_batch_size(size):
    if size[0] * math.prod(size[2:]) == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got input size {size}")


def _verify_spatial_size(size):
    if math.prod(size[2:]) == 1:
        raise ValueError(f"Expected more than 1 spatial element when training, got input size {size}")


def _list_with_default(out_size, defaults):
    if isinstance(out_size, int):
        return out_size
    if len(defaults) <= len(out_size):
        raise ValueError(f"Input dimension should be at least {len(out_size) + 1}")
    tail = defaults[-len(out_size):]
    # The output size's length is known when the region is built: one spelling per rank torch pools over.
    if len(out_size) == 1:
        return [_or_default(out_size[0], tail[0])]
    if len(out_size) == 2:
        return [_or_default(out_size[0], tail[0]), _or_default(out_size[1], tail[1])]
    if len(out_size) == 3:
        return [_or_default(out_size[0], tail[0]), _or_default(out_size[1], tail[1]), _or_default(out_size[2], tail[2])]
    raise NotImplementedError("an output size of more than three dimensions")


def _or_default(value, default):
    return value if value is not None else default


def corresponding_real_dtype(dtype):
    # torch's looks the dtype up in a dict; a dtype known only at run time is compared with each complex one.
    if dtype == torch.complex32:
        return torch.float16
    if dtype == torch.complex64:
        return torch.float32
    if dtype == torch.complex128:
        return torch.float64
    raise KeyError(f"{dtype}")  # torch's KeyError holds the dtype itself; this one its text


def einsum(*args):
    # torch.functional.einsum's lines, but for how it finds the contraction path of three operands or more: it reads
    # torch.backends.opt_einsum's settings and runs opt_einsum on the operands' sizes, in Python. The compiled
    # region asks ppy.einsum.contract_path (the same lines) when it runs, so it contracts in eager's order, and
    # rounds as eager does, whether opt_einsum is installed, enabled or neither.
    if len(args) < 2:
        raise ValueError(
            "einsum(): must specify the equation string and at least one operand, "
            "or at least one operand and its subscripts list"
        )

    equation = None
    operands = None

    if isinstance(args[0], torch.Tensor):
        def parse_subscript(n: int) -> str:
            if n == Ellipsis:
                return "..."
            if n >= 0 and n < 26:
                return chr(ord("A") + n)
            if n >= 26 and n < 52:
                return chr(ord("a") + n - 26)
            raise ValueError(
                "einsum(): subscript in subscript list is not within the valid range [0, 52)"
            )

        equation = ",".join("".join(parse_subscript(s) for s in sublist) for sublist in args[1::2])

        if len(args) % 2 == 1:
            equation += "->" + "".join(parse_subscript(s) for s in args[-1])
            operands = args[:-1:2]
        else:
            operands = args[::2]
    else:
        equation = args[0]
        operands = args[1:]

    if has_torch_function(operands):
        return handle_torch_function(einsum, operands, equation, *operands)

    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        _operands = operands[0]
        return einsum(equation, *_operands)

    if len(operands) <= 2:
        return _VF.einsum(equation, operands)
    return _VF.einsum(equation, operands, path=contract_path(equation, *operands))
