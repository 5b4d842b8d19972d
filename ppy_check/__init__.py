"""ppy-check: the static rule engine for ppy regions. Needs neither torch nor mypy."""

from __future__ import annotations

from ppy_check.diagnostic import Diagnostic
from ppy_check.engine import check_source
from ppy_check.version import __version__
__all__ = ["Diagnostic", "check_source", "__version__"]
