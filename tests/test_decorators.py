"""The decorators at run time: stacking, levels, errors, and the Python body until compiled."""

from __future__ import annotations

import pytest

import ppy


def double(x: int) -> int:
    return x * 2


def test_stack_in_either_order() -> None:
    a = ppy.pure(ppy.opt(2)(double))
    b = ppy.opt(1)(ppy.pure(double))
    assert (a.level, a.pure) == (2, True)
    assert (b.level, b.pure) == (1, True)
    assert a.python is double and a.__name__ == "double"


def test_bare_opt_is_level_three() -> None:
    assert ppy.opt(double).level == 3


@pytest.mark.parametrize("level", [-1, 4, 10])
def test_bad_level_is_a_clear_error(level: int) -> None:
    with pytest.raises(ValueError, match="level must be 0, 1, 2 or 3"):
        ppy.opt(level)


def test_non_int_level() -> None:
    with pytest.raises(TypeError, match="must be an int"):
        ppy.opt("3")  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="must be an int"):
        ppy.opt(True)
