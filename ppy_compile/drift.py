"""How the installed torch differs from the torch the op data in use was made from.

The checker and the compiler read torch's operators from ``opdata.json``
and torch's Python functions from ``torch_python/``. Where torch is another
release than the shipped files', both are made for it once, into the cache
(``ppy_check/installed_opdata.py``), and there is no drift. Where that
failed (no PyYAML, a cache refused), the shipped files serve: an operator
the data knows may be gone (a region calling it fails to compile, and runs
as Python with a warning saying why), new operators are unknown to the
checker, and a compiled call into one of torch's Python modules whose
installed source differs computes, checks and raises as the shipped
release's does. This says which, and why no data was made, once per
process, instead of letting a region fail mysteriously.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass


@dataclass(frozen=True)
class Drift:
    shipped: str  # the torch version the op data comes from
    installed: str
    missing: tuple[str, ...]  # overloads the op data knows and this torch lacks
    unknown: tuple[str, ...]  # aten overloads this torch has and the op data does not know
    sources: tuple[str, ...] = ()  # torch's Python modules ppy inlines whose source here is not the copy read
    data: str = ""  # which op data is in use, and why (installed_opdata.InUse.describe)

    @property
    def same(self) -> bool:
        return self.shipped == self.installed.split("+")[0]

    def summary(self) -> str:
        if self.same:
            return f"torch {self.installed} ({self.data or 'the op data of its release'})"
        return (f"torch {self.installed}, but ppy's op data comes from torch {self.shipped}: {len(self.missing)} "
                f"operator overloads it knows are missing here (regions calling them run as Python), "
                f"{len(self.unknown)} of this torch are unknown to ppy-check" + self._sources()
                + (f"; in use: {self.data}" if self.data else ""))

    def _sources(self) -> str:
        if not self.sources:
            return ""
        return (f"; {len(self.sources)} of torch's Python modules regions inline differ here from torch "
                f"{self.shipped}'s ({', '.join(self.sources)}): compiled calls into them behave as in torch "
                f"{self.shipped} (install it for exact agreement)")


class TorchVersionWarning(UserWarning):
    """The installed torch is not the one ppy's op data was made from."""


@functools.lru_cache(maxsize=1)
def warn_once() -> None:
    """Say it once per process, at the first build, when the torch differs."""
    import warnings

    found = drift()
    if not found.same:
        warnings.warn(f"ppy: {found.summary()}", TorchVersionWarning, stacklevel=2)


@functools.lru_cache(maxsize=1)
def drift() -> Drift:
    import torch

    from ppy_check.installed_opdata import in_use
    from ppy_check.schema import opdata

    data = opdata()
    installed = {name.removeprefix("aten::") for name in torch._C._dispatch_get_all_op_names() if name.startswith("aten::")}
    known = set(data.raw["natives"])
    return Drift(
        shipped=data.torch_version,
        installed=str(torch.__version__),
        missing=tuple(sorted(known - installed)),
        unknown=tuple(sorted(n for n in installed - known if not n.startswith("_"))),
        sources=differing_sources(),
        data=in_use().describe(),
    )


def differing_sources() -> tuple[str, ...]:
    """The modules of torch's Python source ppy reads whose installed file reads otherwise."""
    from ppy_check import torch_python

    found = []
    for path in sorted(torch_python.sources().glob("*.py.txt")):
        dotted = path.name.removesuffix(".py.txt")
        installed = torch_python.installed_module_file(dotted)
        if installed is not None and installed.read_bytes() != path.read_bytes():
            found.append(dotted)
    return tuple(found)
