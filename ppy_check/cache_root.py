"""Where ppy's cache lives: ``PPY_CACHE_DIR``, else ``$XDG_CACHE_HOME/ppy``, else ``~/.cache/ppy``.

Here rather than in the compiler's cache because the checker keeps something
there too (the op data made for an installed torch, ``installed_opdata.py``)
and may not import the compiler.
"""

from __future__ import annotations

import os
from pathlib import Path


def default_root() -> Path:
    configured = os.environ.get("PPY_CACHE_DIR")
    if configured:
        return Path(configured).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "ppy"
