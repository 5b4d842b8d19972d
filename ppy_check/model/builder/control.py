"""The exceptions that stop part of a build (a statement, a library call, the whole region)."""

from __future__ import annotations

import ast

from ppy_check.model.budgets import Exceeded


class _Abandon(Exception):
    """The current statement cannot be modelled any further (its problem is recorded)."""


# torch's own Python code calls itself on its arguments rearranged (`einsum(equation, *operands)` when handed
# one list of operands); folded on what is known, each level is a different call, so a few levels are
# followed before it counts as recursion.
LIBRARY_REENTRY = 4


class _LibraryRefused(Exception):
    """A call of torch's Python code cannot be followed: its first problem, recorded, stands for the whole call."""


class _OutOfBudget(Exception):
    """A budget of the whole region ran out (steps, time): building stops, and that is the region's one finding."""

    def __init__(self, exceeded: Exceeded):
        super().__init__(exceeded.budget.value)
        self.exceeded = exceeded


# How many expressions the builder evaluates between two looks at the clock.
CLOCK_EVERY = 64


class _Jump(Exception):
    """`break` or `continue` in a loop of torch's Python code that is being unrolled."""

    def __init__(self, node: ast.stmt):
        super().__init__()
        self.node = node
