"""How far the builder follows a region before it stops, with a finding, instead of running away.

The builder runs a region's body on static types, folding what is known where
the region is built; a few lines can ask for unbounded work there (`10 ** 10 **
8`, `(n,) * 10 ** 8`, helpers that each call the next twice). Each budget
bounds one kind of work, and running out of it is a ppy-unsupported finding
naming the region and the expression, never a hang, a MemoryError or an
internal error. The bounds are far above what model code needs (the largest
region of the test suite, torch's inlined Python included, evaluates under a
thousand expressions, and torch takes 64-bit ints), so only runaway code meets
them.
"""

from __future__ import annotations

import enum
import os
from dataclasses import dataclass

# An int folded where the region is built: torch takes 64 bits, and this many keeps every folded int printable
# (Python refuses str() of an int over 4,300 digits; 10,000 bits is about 3,000).
MAX_INT_BITS = 10_000
# Items of a tuple known where the region is built, nested tuples' items counted (`((1,) * 100,) * 100` holds
# 10,000), and characters of a string folded there.
MAX_ITEMS = 10_000
MAX_TEXT = 100_000
# Expressions the builder evaluates for one region, the helpers and torch's Python code it inlines included.
MAX_STEPS = 100_000
# Wall-clock seconds ppy-check spends on one file's regions; the regions it did not finish are refused, each
# with a finding. PPY_CHECK_FILE_SECONDS sets another budget.
FILE_SECONDS = 20.0
FILE_SECONDS_VARIABLE = "PPY_CHECK_FILE_SECONDS"


class Budget(enum.Enum):
    INT_BITS = "int bits"
    ITEMS = "items"
    TEXT = "text"
    STEPS = "steps"
    TIME = "time"
    DEPTH = "depth"
    MEMORY = "memory"


@dataclass(frozen=True)
class Exceeded:
    """Which budget ran out, and the limit it had (for the message)."""

    budget: Budget
    limit: float


class FoldTooLarge(Exception):
    """Folding these operands would make a value over a size budget; Python would compute it, slowly."""

    def __init__(self, exceeded: Exceeded):
        super().__init__(exceeded.budget.value)
        self.exceeded = exceeded


def file_seconds() -> float:
    """The time budget of one file: PPY_CHECK_FILE_SECONDS when it is a number, else FILE_SECONDS."""
    text = os.environ.get(FILE_SECONDS_VARIABLE, "")
    try:
        value = float(text)
    except ValueError:
        return FILE_SECONDS
    return value if value >= 0 else FILE_SECONDS


def check_int(value: object) -> None:
    if isinstance(value, int) and value.bit_length() > MAX_INT_BITS:
        raise FoldTooLarge(Exceeded(Budget.INT_BITS, MAX_INT_BITS))


def check_power(base: object, exponent: object) -> None:
    """``base ** exponent`` of ints, refused before it is computed when the result would be over the int budget."""
    if not (isinstance(base, int) and isinstance(exponent, int)) or exponent <= 0 or abs(base) <= 1:
        return
    if (abs(base).bit_length() - 1) * exponent > MAX_INT_BITS:
        raise FoldTooLarge(Exceeded(Budget.INT_BITS, MAX_INT_BITS))


def check_shift(value: object, count: object) -> None:
    """``value << count``, refused before it is computed when the result would be over the int budget."""
    if isinstance(value, int) and isinstance(count, int) and value and count > 0 and \
            value.bit_length() + count > MAX_INT_BITS:
        raise FoldTooLarge(Exceeded(Budget.INT_BITS, MAX_INT_BITS))


def check_items(count: int) -> None:
    if count > MAX_ITEMS:
        raise FoldTooLarge(Exceeded(Budget.ITEMS, MAX_ITEMS))


def check_text(length: int) -> None:
    if length > MAX_TEXT:
        raise FoldTooLarge(Exceeded(Budget.TEXT, MAX_TEXT))


def shown_int(value: int) -> str:
    """An int as a message shows it: its digits, or for a long one its ends and how many digits it has."""
    text = str(value)
    digits = len(text.lstrip("-"))
    return text if digits <= 30 else f"{text[:12]}...{text[-6:]} ({digits} digits)"
