"""What a build may do beyond compiling the regions as written; part of every cache key."""

from __future__ import annotations

import enum
from dataclasses import dataclass

# The extension module name every generated unit initialises.
MODULE_NAME = "ppy_region_module"


class Mutation(enum.Enum):
    """A deliberate miscompilation, for ppy's own tests of the verifier: never use it otherwise."""

    SWAP = "swap"  # call operator B where the region calls A
    DROP_WRITES = "drop-writes"  # leave out every in-place write
    DETACH = "detach"  # cut the returned tensors from autograd


@dataclass(frozen=True)
class BuildOptions:
    mutation: Mutation | None = None
    swap: tuple[str, str] = ("", "")  # (from, to) operator names for Mutation.SWAP
    repeat_entry: bool = False  # `__ppy_repeat_<symbol>(n, *args)`: the region run n times in C++ (benchmarks)

    def key(self) -> str:
        return f"{self.mutation.value if self.mutation else ''}:{':'.join(self.swap)}:{int(self.repeat_entry)}"
