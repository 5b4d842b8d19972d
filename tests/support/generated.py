"""Region modules that tests write at run time, at paths that stay the same between runs.

The generated C++ names its source file, so a module written to the same
path with the same text is a cache hit: the suite builds it once, not once
a run.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType

SOURCES = Path(__file__).resolve().parents[2] / ".ppy-cache" / "sources"


def write_source(name: str, text: str) -> Path:
    """``text`` at ``.ppy-cache/sources/<name>.py``, rewritten only when it changed (atomically)."""
    path = SOURCES / f"{name}.py"
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        staged = path.with_name(f"{path.name}.{os.getpid()}")
        staged.write_text(text, encoding="utf-8")
        staged.replace(path)
    return path


def load_module(path: Path, name: str) -> ModuleType:
    """A fresh module object for the file (fresh region objects too; the build is shared)."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
