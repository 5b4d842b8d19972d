"""What a region's build took the names it reads from outside its body to be: records the runtime proves.

Kept apart from the model's other records and importing nothing, so that a warm start (ppy.guard) reads them
without loading the model.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class Assumed(enum.Enum):
    """What a region's build took a name from outside its body to be (``Assumption.expected`` says which)."""

    LITERAL = "literal"  # a module-level literal constant: expected is its value's repr
    MODULE = "module"  # torch, math, einops or one of their submodules: its dotted name
    PROJECT_MODULE = "project module"  # a module of the project (``import layers``): its file
    LIBRARY = "library"  # a function of torch or math (``F.gelu``, ``math.sqrt``): its dotted name
    LIBRARY_VALUE = "library value"  # a value of torch or math (``torch.float32``, ``math.pi``): "<dotted> <repr>"
    HELPER = "helper"  # a function of the project the build inlined: ``<file>::<qualified name>``
    BUILTIN = "builtin"  # a builtin (``max``): its name, which the module itself must not bind


@dataclass(frozen=True)
class Assumption:
    """A name the compiled code does not read when it runs, because the build took it to be fixed: Python reads
    it at every call, so the runtime proves it is still what the build assumed (ppy/guard.py)."""

    # Where the name is read: a file (its module's globals) or ``module:<dotted>`` (an attribute of that module).
    namespace: str
    name: str
    assumed: Assumed
    expected: str
