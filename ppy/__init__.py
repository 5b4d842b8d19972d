"""ppy: straight-line PyTorch regions, checked statically and compiled to one ATen C++ function.

``import ppy`` is light: it pulls in neither torch nor mypy.
"""

from __future__ import annotations

from ppy import runtime as _runtime  # noqa: F401  (a region's calls go to it: it attaches itself to Region)
from ppy.decorators import Call, Region, opt, pure
from ppy.errors import BuildError, RegionError
from ppy.profiling import profile
from ppy_check.version import __version__


def plugin(version: str) -> type:
    """The mypy plugin (`[tool.mypy] plugins = ["ppy"]`); mypy is imported only here.

    The repository's ``mypy_plugin/`` folder installs as ``ppy_mypy``, so that a
    wheel claims no generic top-level name; a source checkout on ``sys.path``
    (``make venv``'s editable install) has it under its folder's name.
    """
    import importlib
    import importlib.util

    name = "ppy_mypy" if importlib.util.find_spec("ppy_mypy") is not None else "mypy_plugin"
    return importlib.import_module(name).plugin(version)  # type: ignore[no-any-return]
__all__ = ["BuildError", "Call", "Region", "RegionError", "opt", "plugin", "profile", "pure", "__version__"]
