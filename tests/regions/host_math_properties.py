"""Host arithmetic on ints, floats and bools, one region per operation: each returns Python's exact answer.

tests/compiler/test_host_math_properties.py calls every region here on many inputs biased toward the edges (0, -0.0,
int64's bounds, 2**53 + 1, nan, inf, subnormals, .5 fractions) and holds each to Python's own result, type and
exception. A `float` parameter also takes ints there, as Python lets it. The samples below are the plain cases.
"""

from __future__ import annotations

import math

import ppy


@ppy.opt(2)
def add_int_int(a: int, b: int) -> int:
    return a + b


@add_int_int.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 7, 3


@ppy.opt(2)
def add_int_float(a: int, b: float) -> float:
    return a + b


@add_int_float.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 7, 1.5


@ppy.opt(2)
def add_float_int(a: float, b: int) -> float:
    return a + b


@add_float_int.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 2.5, 3


@ppy.opt(2)
def add_float_float(a: float, b: float) -> float:
    return a + b


@add_float_float.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 2.5, 1.5


@ppy.opt(2)
def sub_int_int(a: int, b: int) -> int:
    return a - b


@sub_int_int.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 7, 3


@ppy.opt(2)
def sub_int_float(a: int, b: float) -> float:
    return a - b


@sub_int_float.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 7, 1.5


@ppy.opt(2)
def sub_float_int(a: float, b: int) -> float:
    return a - b


@sub_float_int.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 2.5, 3


@ppy.opt(2)
def sub_float_float(a: float, b: float) -> float:
    return a - b


@sub_float_float.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 2.5, 1.5


@ppy.opt(2)
def mul_int_int(a: int, b: int) -> int:
    return a * b


@mul_int_int.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 7, 3


@ppy.opt(2)
def mul_int_float(a: int, b: float) -> float:
    return a * b


@mul_int_float.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 7, 1.5


@ppy.opt(2)
def mul_float_int(a: float, b: int) -> float:
    return a * b


@mul_float_int.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 2.5, 3


@ppy.opt(2)
def mul_float_float(a: float, b: float) -> float:
    return a * b


@mul_float_float.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 2.5, 1.5


@ppy.opt(2)
def truediv_int_int(a: int, b: int) -> float:
    return a / b


@truediv_int_int.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 7, 3


@ppy.opt(2)
def truediv_int_float(a: int, b: float) -> float:
    return a / b


@truediv_int_float.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 7, 1.5


@ppy.opt(2)
def truediv_float_int(a: float, b: int) -> float:
    return a / b


@truediv_float_int.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 2.5, 3


@ppy.opt(2)
def truediv_float_float(a: float, b: float) -> float:
    return a / b


@truediv_float_float.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 2.5, 1.5


@ppy.opt(2)
def floordiv_int_int(a: int, b: int) -> int:
    return a // b


@floordiv_int_int.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 7, 3


@ppy.opt(2)
def floordiv_int_float(a: int, b: float) -> float:
    return a // b


@floordiv_int_float.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 7, 1.5


@ppy.opt(2)
def floordiv_float_int(a: float, b: int) -> float:
    return a // b


@floordiv_float_int.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 2.5, 3


@ppy.opt(2)
def floordiv_float_float(a: float, b: float) -> float:
    return a // b


@floordiv_float_float.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 2.5, 1.5


@ppy.opt(2)
def mod_int_int(a: int, b: int) -> int:
    return a % b


@mod_int_int.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 7, 3


@ppy.opt(2)
def mod_int_float(a: int, b: float) -> float:
    return a % b


@mod_int_float.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 7, 1.5


@ppy.opt(2)
def mod_float_int(a: float, b: int) -> float:
    return a % b


@mod_float_int.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 2.5, 3


@ppy.opt(2)
def mod_float_float(a: float, b: float) -> float:
    return a % b


@mod_float_float.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 2.5, 1.5


@ppy.opt(2)
def pow_int_int(a: int, b: int) -> float:
    power: float = a ** b  # typeshed's `**` of these is Any
    return power


@pow_int_int.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 7, 3


@ppy.opt(2)
def pow_int_float(a: int, b: float) -> float:
    power: float = a ** b  # typeshed's `**` of these is Any
    return power


@pow_int_float.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 7, 1.5


@ppy.opt(2)
def pow_float_int(a: float, b: int) -> float:
    power: float = a ** b  # typeshed's `**` of these is Any
    return power


@pow_float_int.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 2.5, 3


@ppy.opt(2)
def pow_float_float(a: float, b: float) -> float:
    power: float = a ** b  # typeshed's `**` of these is Any
    return power


@pow_float_float.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 2.5, 1.5


@ppy.opt(2)
def compare_int_int(a: int, b: int) -> tuple[bool, bool, bool, bool, bool, bool]:
    return a == b, a != b, a < b, a <= b, a > b, a >= b


@compare_int_int.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 7, 3


@ppy.opt(2)
def compare_int_float(a: int, b: float) -> tuple[bool, bool, bool, bool, bool, bool]:
    return a == b, a != b, a < b, a <= b, a > b, a >= b


@compare_int_float.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 7, 1.5


@ppy.opt(2)
def compare_float_int(a: float, b: int) -> tuple[bool, bool, bool, bool, bool, bool]:
    return a == b, a != b, a < b, a <= b, a > b, a >= b


@compare_float_int.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 2.5, 3


@ppy.opt(2)
def compare_float_float(a: float, b: float) -> tuple[bool, bool, bool, bool, bool, bool]:
    return a == b, a != b, a < b, a <= b, a > b, a >= b


@compare_float_float.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 2.5, 1.5


@ppy.opt(2)
def chained_compare(a: int, b: float, c: int) -> tuple[bool, bool]:
    return a < b <= c, a == b == c


@chained_compare.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 1, 2.5, 3


@ppy.opt(2)
def neg_int(a: int) -> int:
    return -a


@neg_int.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 7


@ppy.opt(2)
def pos_int(a: int) -> int:
    return +a


@pos_int.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 7


@ppy.opt(2)
def abs_int(a: int) -> int:
    return abs(a)


@abs_int.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 7


@ppy.opt(2)
def not_int(a: int) -> bool:
    return not a


@not_int.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 7


@ppy.opt(2)
def int_of_int(a: int) -> int:
    return int(a)


@int_of_int.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 7


@ppy.opt(2)
def float_of_int(a: int) -> float:
    return float(a)


@float_of_int.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 7


@ppy.opt(2)
def bool_of_int(a: int) -> bool:
    return bool(a)


@bool_of_int.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 7


@ppy.opt(2)
def round_int(a: int) -> int:
    return round(a)


@round_int.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 7


@ppy.opt(2)
def round_digits_int(a: int, digits: int) -> int:
    return round(a, digits)


@round_digits_int.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 7, 1


@ppy.opt(2)
def neg_float(a: float) -> float:
    return -a


@neg_float.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 2.5


@ppy.opt(2)
def pos_float(a: float) -> float:
    return +a


@pos_float.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 2.5


@ppy.opt(2)
def abs_float(a: float) -> float:
    return abs(a)


@abs_float.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 2.5


@ppy.opt(2)
def not_float(a: float) -> bool:
    return not a


@not_float.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 2.5


@ppy.opt(2)
def int_of_float(a: float) -> int:
    return int(a)


@int_of_float.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 2.5


@ppy.opt(2)
def float_of_float(a: float) -> float:
    return float(a)


@float_of_float.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 2.5


@ppy.opt(2)
def bool_of_float(a: float) -> bool:
    return bool(a)


@bool_of_float.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 2.5


@ppy.opt(2)
def round_float(a: float) -> int:
    return round(a)


@round_float.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 2.5


@ppy.opt(2)
def round_digits_float(a: float, digits: int) -> float:
    return round(a, digits)


@round_digits_float.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 2.5, 1


@ppy.opt(2)
def min_int_int(a: int, b: int) -> int:
    return min(a, b)


@min_int_int.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 7, 3


@ppy.opt(2)
def max_int_int(a: int, b: int) -> int:
    return max(a, b)


@max_int_int.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 7, 3


@ppy.opt(2)
def min_int_float(a: int, b: float) -> float:
    return min(a, b)


@min_int_float.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 7, 1.5


@ppy.opt(2)
def max_int_float(a: int, b: float) -> float:
    return max(a, b)


@max_int_float.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 7, 1.5


@ppy.opt(2)
def min_float_int(a: float, b: int) -> float:
    return min(a, b)


@min_float_int.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 2.5, 3


@ppy.opt(2)
def max_float_int(a: float, b: int) -> float:
    return max(a, b)


@max_float_int.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 2.5, 3


@ppy.opt(2)
def min_float_float(a: float, b: float) -> float:
    return min(a, b)


@min_float_float.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 2.5, 1.5


@ppy.opt(2)
def max_float_float(a: float, b: float) -> float:
    return max(a, b)


@max_float_float.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 2.5, 1.5


@ppy.opt(2)
def min_of_three(a: int, b: float, c: int) -> float:
    return min(a, b, c)


@min_of_three.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 1, 2.5, 3


@ppy.opt(2)
def max_of_three(a: float, b: int, c: float) -> float:
    return max(a, b, c)


@max_of_three.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 1.5, 2, 0.5


@ppy.opt(2)
def math_sqrt(x: float) -> float:
    return math.sqrt(x)


@math_sqrt.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 0.5


@ppy.opt(2)
def math_exp(x: float) -> float:
    return math.exp(x)


@math_exp.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 0.5


@ppy.opt(2)
def math_expm1(x: float) -> float:
    return math.expm1(x)


@math_expm1.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 0.5


@ppy.opt(2)
def math_log(x: float) -> float:
    return math.log(x)


@math_log.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 0.5


@ppy.opt(2)
def math_log2(x: float) -> float:
    return math.log2(x)


@math_log2.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 0.5


@ppy.opt(2)
def math_log10(x: float) -> float:
    return math.log10(x)


@math_log10.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 0.5


@ppy.opt(2)
def math_log1p(x: float) -> float:
    return math.log1p(x)


@math_log1p.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 0.5


@ppy.opt(2)
def math_sin(x: float) -> float:
    return math.sin(x)


@math_sin.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 0.5


@ppy.opt(2)
def math_cos(x: float) -> float:
    return math.cos(x)


@math_cos.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 0.5


@ppy.opt(2)
def math_tan(x: float) -> float:
    return math.tan(x)


@math_tan.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 0.5


@ppy.opt(2)
def math_asin(x: float) -> float:
    return math.asin(x)


@math_asin.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 0.5


@ppy.opt(2)
def math_acos(x: float) -> float:
    return math.acos(x)


@math_acos.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 0.5


@ppy.opt(2)
def math_atan(x: float) -> float:
    return math.atan(x)


@math_atan.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 0.5


@ppy.opt(2)
def math_sinh(x: float) -> float:
    return math.sinh(x)


@math_sinh.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 0.5


@ppy.opt(2)
def math_cosh(x: float) -> float:
    return math.cosh(x)


@math_cosh.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 0.5


@ppy.opt(2)
def math_tanh(x: float) -> float:
    return math.tanh(x)


@math_tanh.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 0.5


@ppy.opt(2)
def math_asinh(x: float) -> float:
    return math.asinh(x)


@math_asinh.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 0.5


@ppy.opt(2)
def math_acosh(x: float) -> float:
    return math.acosh(x)


@math_acosh.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 2.0


@ppy.opt(2)
def math_atanh(x: float) -> float:
    return math.atanh(x)


@math_atanh.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 0.5


@ppy.opt(2)
def math_erf(x: float) -> float:
    return math.erf(x)


@math_erf.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 0.5


@ppy.opt(2)
def math_erfc(x: float) -> float:
    return math.erfc(x)


@math_erfc.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 0.5


@ppy.opt(2)
def math_gamma(x: float) -> float:
    return math.gamma(x)


@math_gamma.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 0.5


@ppy.opt(2)
def math_lgamma(x: float) -> float:
    return math.lgamma(x)


@math_lgamma.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 0.5


@ppy.opt(2)
def math_fabs(x: float) -> float:
    return math.fabs(x)


@math_fabs.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 0.5


@ppy.opt(2)
def math_degrees(x: float) -> float:
    return math.degrees(x)


@math_degrees.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 0.5


@ppy.opt(2)
def math_radians(x: float) -> float:
    return math.radians(x)


@math_radians.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 0.5


@ppy.opt(2)
def math_ceil(x: float) -> int:
    return math.ceil(x)


@math_ceil.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 2.5


@ppy.opt(2)
def math_ceil_int(n: int) -> int:
    return math.ceil(n)


@math_ceil_int.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 7


@ppy.opt(2)
def math_floor(x: float) -> int:
    return math.floor(x)


@math_floor.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 2.5


@ppy.opt(2)
def math_floor_int(n: int) -> int:
    return math.floor(n)


@math_floor_int.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 7


@ppy.opt(2)
def math_trunc(x: float) -> int:
    return math.trunc(x)


@math_trunc.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 2.5


@ppy.opt(2)
def math_trunc_int(n: int) -> int:
    return math.trunc(n)


@math_trunc_int.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 7


@ppy.opt(2)
def math_isfinite(x: float) -> bool:
    return math.isfinite(x)


@math_isfinite.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 2.5


@ppy.opt(2)
def math_isinf(x: float) -> bool:
    return math.isinf(x)


@math_isinf.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 2.5


@ppy.opt(2)
def math_isnan(x: float) -> bool:
    return math.isnan(x)


@math_isnan.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 2.5


@ppy.opt(2)
def math_sqrt_int(n: int) -> float:
    return math.sqrt(n)


@math_sqrt_int.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 16


@ppy.opt(2)
def math_log_int(n: int) -> float:
    return math.log(n)


@math_log_int.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 16


@ppy.opt(2)
def math_atan2(x: float, y: float) -> float:
    return math.atan2(x, y)


@math_atan2.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 0.5, 1.5


@ppy.opt(2)
def math_hypot(x: float, y: float) -> float:
    return math.hypot(x, y)


@math_hypot.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 0.5, 1.5


@ppy.opt(2)
def math_pow(x: float, y: float) -> float:
    return math.pow(x, y)


@math_pow.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 0.5, 1.5


@ppy.opt(2)
def math_fmod(x: float, y: float) -> float:
    return math.fmod(x, y)


@math_fmod.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 0.5, 1.5


@ppy.opt(2)
def math_copysign(x: float, y: float) -> float:
    return math.copysign(x, y)


@math_copysign.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 0.5, 1.5


@ppy.opt(2)
def math_log_base(x: float, base: float) -> float:
    return math.log(x, base)


@math_log_base.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 8.0, 2.0


@ppy.opt(2)
def math_gcd(a: int, b: int) -> int:
    return math.gcd(a, b)


@math_gcd.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 12, 18


@ppy.opt(2)
def math_lcm(a: int, b: int) -> int:
    return math.lcm(a, b)


@math_lcm.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 12, 18


@ppy.opt(2)
def math_constants(x: float) -> tuple[float, float, float, float, float]:
    return x * math.pi, x + math.e, x - math.tau, x * math.inf, x + math.nan


@math_constants.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield 0.5


@ppy.opt(2)
def bool_int_arithmetic(p: bool, n: int) -> tuple[int, int, int, int, int]:
    return p + n, n - p, p * n, p + p, -p


@bool_int_arithmetic.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield True, 3


@ppy.opt(2)
def bool_float_arithmetic(p: bool, x: float) -> tuple[float, float, float]:
    return p + x, x * p, x / p


@bool_float_arithmetic.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield True, 2.5


@ppy.opt(2)
def bool_min_max(p: bool, n: int) -> tuple[int, int, int]:
    return min(int(p), n), max(n, int(p)), abs(p)


@bool_min_max.samples
def _(device: str):  # type: ignore[no-untyped-def]
    yield True, 3
