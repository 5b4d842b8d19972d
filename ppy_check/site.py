"""One region's identity: the file it is defined in, its qualified name, and its first line.

Every part of ppy names a region by this one record: the runtime (from the
function object), the build index and the C++ symbol (from the syntax), the
pytest node id and the mypy plugin. The first line is the line Python reports
in ``co_firstlineno``: the first decorator's, so both sides compute the same.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True, order=True)
class RegionSite:
    path: str
    qualname: str  # Python's __qualname__: `A.twice`, `outer.<locals>.inner`
    line: int

    @property
    def key(self) -> str:
        """The site within its file: what the build index and the runtime agree on."""
        return f"{self.qualname}:{self.line}"

    @property
    def name(self) -> str:
        """The function's own name, as messages name the region."""
        return self.qualname.rsplit(".", 1)[-1]

    @property
    def cpp_symbol(self) -> str:
        """The region's C++ function name: a valid identifier, free of the region's line.

        Regions have internal linkage, and a unit never holds two of one name,
        so the name needs no line; without one, a region that only moved (a
        line added above it) prints the same C++ and is not rebuilt.
        The readable part keeps only identifier characters; the digest of the
        qualified name keeps `A.f` and `A_f` apart in messages.
        """
        readable = re.sub(r"[^A-Za-z0-9_]", "_", self.qualname.replace(".<locals>.", "__"))[:60]
        digest = hashlib.sha256(self.qualname.encode("utf-8")).hexdigest()[:8]
        return f"ppy_{readable}_{digest}"

    def node_id(self, relative_path: str) -> str:
        """pytest's spelling: ``path::Class.method``."""
        return f"{relative_path}::{self.qualname}"

    @classmethod
    def of_function(cls, function: Any) -> RegionSite:
        """The site of a live function (decorators ppy does not own are looked through)."""
        import inspect  # the runtime's question only: the checker never holds a live function

        inner = inspect.unwrap(function)
        code = inner.__code__
        return cls(str(Path(code.co_filename)), inner.__qualname__, code.co_firstlineno)
