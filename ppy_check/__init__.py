"""ppy-check: the static rule engine for ppy regions. Needs neither torch nor mypy.

The package itself imports nothing heavy: a warm start of a compiled region
reads only ``ppy_check.site`` and ``ppy_check.version``, never the model
builder or the op data.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ppy_check import records
from ppy_check.version import __version__

records.install()  # before any of ppy's classes is made: their methods come compiled (records.py)

if TYPE_CHECKING:
    from ppy_check.diagnostic import Diagnostic
    from ppy_check.engine import check_source

__all__ = ["Diagnostic", "check_source", "__version__"]


def __getattr__(name: str) -> Any:
    if name == "check_source":
        from ppy_check.engine import check_source

        return check_source
    if name == "Diagnostic":
        from ppy_check.diagnostic import Diagnostic

        return Diagnostic
    raise AttributeError(name)
