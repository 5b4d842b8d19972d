"""Python's arithmetic on ints, floats and bools: the result type of each operation, and constant folding.

Python decides a result's type from its operands' types (``int + int`` is an
``int``, ``int / int`` a ``float``, ``int ** int`` an ``int`` unless the
exponent is negative), and torch then promotes a tensor by that type. The
model follows the same rules so that ``torch.arange(3) + n ** 2`` stays an
integer tensor when compiled, and folds operations on literals exactly as
Python would (big integers included) before anything reaches C++.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import Any

from ppy_check.model import budgets
from ppy_check.model import types as t
from ppy_check.model.ir import HostOp

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1

ARITHMETIC = {HostOp.ADD, HostOp.SUB, HostOp.MUL}
BITWISE = {HostOp.BITAND, HostOp.BITOR, HostOp.BITXOR, HostOp.LSHIFT, HostOp.RSHIFT}
COMPARISONS = {HostOp.EQ, HostOp.NE, HostOp.LT, HostOp.LE, HostOp.GT, HostOp.GE}

# math.<name>: the result type, and whether it takes ints only. Every entry
# is implemented in the C++ preamble with Python's domain and range errors.
MATH_FUNCTIONS: dict[str, tuple[t.Type, int]] = {
    **{name: (t.FLOAT, 1) for name in (
        "sqrt", "exp", "expm1", "log2", "log10", "log1p", "sin", "cos", "tan", "asin", "acos", "atan", "sinh",
        "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc", "gamma", "lgamma", "fabs", "degrees", "radians")},
    "log": (t.FLOAT, 1),
    **{name: (t.FLOAT, 2) for name in ("atan2", "hypot", "pow", "fmod", "copysign")},
    **{name: (t.INT, 1) for name in ("ceil", "floor", "trunc")},
    **{name: (t.BOOL, 1) for name in ("isfinite", "isinf", "isnan")},
    **{name: (t.INT, 2) for name in ("gcd", "lcm")},
}
MATH_CONSTANTS = {"pi": math.pi, "e": math.e, "tau": math.tau, "inf": math.inf, "nan": math.nan}


class HostTypeError(Exception):
    """Python would raise TypeError for these operands; the message says why."""


def _numeric(kind: t.Type, what: str) -> None:
    if not t.is_number(kind):
        raise HostTypeError(f"{what} is a {kind}, not a number")


def _integral(kind: t.Type) -> bool:
    return isinstance(kind, (t.IntT, t.BoolT))


def binary_type(op: HostOp, left: t.Type, right: t.Type, right_value: Any = None) -> t.Type:
    """The type Python gives ``left <op> right`` for numbers; HostTypeError when Python would refuse."""
    if op in COMPARISONS:
        if t.is_number(left) and t.is_number(right):
            return t.BOOL
        if op in (HostOp.EQ, HostOp.NE) and left == right and isinstance(left, (t.StrT, t.DtypeT, t.DeviceT)):
            return t.BOOL
        raise HostTypeError(f"cannot compare a {left} with a {right} here")
    _numeric(left, "the left operand")
    _numeric(right, "the right operand")
    floats = isinstance(left, t.FloatT) or isinstance(right, t.FloatT)
    numbers = isinstance(left, t.NumberT) or isinstance(right, t.NumberT)
    if op in BITWISE:
        if not (_integral(left) and _integral(right)):
            raise HostTypeError(f"`{op.value}` takes ints, not a {left} and a {right}")
        if op in (HostOp.BITAND, HostOp.BITOR, HostOp.BITXOR) and isinstance(left, t.BoolT) and isinstance(right, t.BoolT):
            return t.BOOL
        return t.INT
    if op is HostOp.TRUEDIV:
        return t.FLOAT
    if op is HostOp.POW:
        if floats:
            return t.FLOAT
        if _integral(left) and _integral(right) and isinstance(right_value, int) and right_value >= 0:
            return t.INT
        return t.NUMBER  # an int to a negative power is a float: known only at run time
    if op in ARITHMETIC or op in (HostOp.FLOORDIV, HostOp.MOD):
        if floats:
            return t.FLOAT
        if numbers:
            return t.NUMBER
        return t.INT
    raise HostTypeError(f"`{op.value}` is not an operation on numbers")


def unary_type(op: HostOp, operand: t.Type) -> t.Type:
    if op is HostOp.NOT:
        return t.BOOL
    _numeric(operand, "the operand")
    if op is HostOp.INVERT:
        if not _integral(operand):
            raise HostTypeError(f"`~` takes an int, not a {operand}")
        return t.INT
    return t.INT if isinstance(operand, t.BoolT) else operand


_FOLD_BINARY: dict[HostOp, Callable[[Any, Any], Any]] = {
    HostOp.ADD: operator.add, HostOp.SUB: operator.sub, HostOp.MUL: operator.mul, HostOp.TRUEDIV: operator.truediv,
    HostOp.FLOORDIV: operator.floordiv, HostOp.MOD: operator.mod, HostOp.POW: operator.pow,
    HostOp.LSHIFT: operator.lshift, HostOp.RSHIFT: operator.rshift, HostOp.BITAND: operator.and_,
    HostOp.BITOR: operator.or_, HostOp.BITXOR: operator.xor, HostOp.EQ: operator.eq, HostOp.NE: operator.ne,
    HostOp.LT: operator.lt, HostOp.LE: operator.le, HostOp.GT: operator.gt, HostOp.GE: operator.ge,
}
_FOLD_UNARY: dict[HostOp, Callable[[Any], Any]] = {
    HostOp.NEG: operator.neg, HostOp.POS: operator.pos, HostOp.INVERT: operator.invert, HostOp.NOT: operator.not_,
    HostOp.ABS: abs, HostOp.TO_INT: int, HostOp.TO_FLOAT: float, HostOp.TO_BOOL: bool, HostOp.ROUND: round,
}


def fold(op: HostOp, values: list[Any], function: str = "") -> Any:
    """Python's own result for constant operands; raises what Python would raise, and FoldTooLarge instead of
    computing an int over the budget (``10 ** 10 ** 8`` takes Python minutes)."""
    value = _fold(op, values, function)
    budgets.check_int(value)
    return value


def _fold(op: HostOp, values: list[Any], function: str) -> Any:
    if op is HostOp.POW:
        budgets.check_power(values[0], values[1])
    elif op is HostOp.LSHIFT:
        budgets.check_shift(values[0], values[1])
    elif op is HostOp.ROUND_DIGITS and _rounds_away(values[0], values[1]):
        # Python computes 10 ** -digits first (minutes for round(5, -10 ** 9)); every digit of the int is rounded
        # off, and so is half of the next power of ten: the answer is 0.
        return 0
    if op in _FOLD_BINARY:
        return _FOLD_BINARY[op](values[0], values[1])
    if op in _FOLD_UNARY:
        return _FOLD_UNARY[op](values[0])
    if op is HostOp.MIN:
        return min(values)
    if op is HostOp.MAX:
        return max(values)
    if op is HostOp.ROUND_DIGITS:
        return round(values[0], values[1])
    if op is HostOp.ALL:
        return all(values)
    if op is HostOp.MATH:
        return getattr(math, function)(*values)
    raise ValueError(f"cannot fold {op}")


def _rounds_away(value: Any, digits: Any) -> bool:
    """Whether ``round(value, digits)`` of an int rounds every digit off (``|value| < 10 ** -digits / 2``)."""
    return isinstance(value, int) and isinstance(digits, int) and not isinstance(digits, bool) and \
        digits < 0 and -digits > len(str(abs(value))) + 1


def type_of_value(value: Any) -> t.Type:
    """The static type of a Python constant."""
    if isinstance(value, bool):
        return t.BOOL
    if isinstance(value, int):
        return t.INT
    if isinstance(value, float):
        return t.FLOAT
    if isinstance(value, str):
        return t.STR
    if value is None:
        return t.NONE
    if value is Ellipsis:
        return t.ELLIPSIS
    raise TypeError(f"no static type for {value!r}")


def fits_int64(value: int) -> bool:
    return INT64_MIN <= value <= INT64_MAX
