"""What a type checker can tell the rule engine that the syntax alone cannot.

ppy-check works from the syntax: an annotation it cannot resolve (an alias of
``torch.Tensor`` defined elsewhere) is refused, and an attribute of another
module is not known to be a variable. The mypy front-end knows both, and
passes them in through this interface; the rules stay the same.
"""

from __future__ import annotations

import dataclasses
from typing import Protocol

from ppy_check.region import Region
from ppy_check.model.types import Type as RegionType


class Oracle(Protocol):
    def param_type(self, name: str) -> RegionType | None:
        """The region type a parameter's annotation resolves to, or None when unknown."""

    def return_type(self) -> RegionType | None:
        """The region type the return annotation resolves to, or None when unknown."""

    def module_variable(self, dotted: str) -> bool:
        """Whether ``dotted`` (``config.W``) is a variable of another module, rather than a function or class."""


def informed(region: Region, oracle: Oracle) -> Region:
    """The region with the annotations the syntax could not resolve filled in from the oracle."""
    params = []
    for param in region.params:
        if param.type is None and param.node.annotation is not None:
            known = oracle.param_type(param.name)
            if known is not None:
                param = dataclasses.replace(param, type=known, problem=None)
        params.append(param)
    returns, problem = region.returns, region.returns_problem
    if returns is None and region.node.returns is not None:
        known = oracle.return_type()
        if known is not None:
            returns, problem = known, None
    updated = dataclasses.replace(region, params=params, returns=returns, returns_problem=problem)
    updated.oracle = oracle
    return updated
