"""A module of regions at each kind of site, the `--ppy-verify` tests' shared project file."""

from __future__ import annotations

import textwrap

# A module-level region, a method of the same name, a nested region: three items with records of their own.
SITES = textwrap.dedent(
    '''
    import ppy
    import torch


    @ppy.opt(1)
    def twice(x: torch.Tensor) -> torch.Tensor:
        return x * 2


    class A:
        @staticmethod
        @ppy.opt(1)
        def twice(x: torch.Tensor) -> torch.Tensor:
            return x * 3


    def outer(x: torch.Tensor) -> torch.Tensor:
        @ppy.opt(1)
        def inner(y: torch.Tensor) -> torch.Tensor:
            return y + 1

        return inner(x)
    '''
)
