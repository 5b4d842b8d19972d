"""ppy: straight-line PyTorch regions, checked statically and compiled to one ATen C++ function.

``import ppy`` is light: it pulls in neither torch nor mypy.
"""

from __future__ import annotations

from ppy.decorators import Call, Region, opt, pure
from ppy.errors import BuildError, RegionError
from ppy_check.version import __version__


def plugin(version: str) -> type:
    """The mypy plugin (`[tool.mypy] plugins = ["ppy"]`); mypy is imported only here."""
    from mypy_plugin import plugin as mypy_plugin

    return mypy_plugin(version)
__all__ = ["BuildError", "Call", "Region", "RegionError", "opt", "plugin", "pure", "__version__"]
