"""Planning a file's build: each region modelled (the checker's own analysis, built once), the findings that
stop a region compiling known, and what runs as Python, and why, decided before any C++ is printed."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from ppy_check.diagnostic import Diagnostic
from ppy_check.engine import analyse, merged_by_region, region_findings
from ppy_check.errors import BuildError
from ppy_check.module import ModuleRegions
from ppy_check.standing import standing
from ppy_compile.cache import Cache
from ppy_compile.options import BuildOptions
from ppy_compile.unit import UnitRegion


@dataclass
class Plan:
    """A file's regions modelled (the checker's findings known), before any C++ is built."""

    cache: Cache
    source_key: str
    origin: str
    options: BuildOptions
    regions: list[UnitRegion]
    errors: dict[str, list[Diagnostic]]
    levels: dict[str, int]
    silenced: dict[str, str]  # site key -> why it runs as Python (suppressed findings, compile=False)
    started: float
    # Checking the shared builds' digests (hundreds of MB) while the regions were modelled: joined before use.
    shared_checked: threading.Thread | None = None
    # What this build is keyed by, recorded for PPY_LOG=cache to say why a later build missed (None: topic off).
    last: dict[str, str] | None = None


def model_all(text: str, origin: str) -> tuple[list[UnitRegion], dict[str, list[Diagnostic]], dict[str, int],
                                             dict[str, str]]:
    """Every region's model, or its findings: the checker's own analysis, built once.

    A region whose findings are all suppressed (`# ppy: ignore[...]`) is no
    error: it runs as Python, and the reason names the suppressed codes.
    """
    module = ModuleRegions.load(origin, text)
    if module.syntax_error is not None:
        raise BuildError(f"{origin}: {module.syntax_error.message}")
    regions: list[UnitRegion] = []
    errors: dict[str, list[Diagnostic]] = {}
    levels: dict[str, int] = {}
    silenced: dict[str, str] = {}
    # A finding in a helper that several regions inline is one finding, the same in each region's list.
    found = merged_by_region([region_findings(region, origin, module.lines) for region in module.regions])
    for region, diagnostics in zip(module.regions, found):
        key = region.site.key
        levels[key] = region.level
        model = analyse(region).model
        if not diagnostics and not region.compiles:
            silenced[key] = "it is marked `compile=False`"
            continue
        if not diagnostics and model is not None:
            regions.append(UnitRegion(model, region.site.cpp_symbol))
            continue
        stands = standing(diagnostics, module.lines)
        if stands or not diagnostics:
            errors[key] = stands or diagnostics
        else:
            codes = ", ".join(f"{d.code} (line {d.line})" for d in diagnostics)
            silenced[key] = f"its findings are suppressed, so it has no compiled form: {codes}"
    return regions, errors, levels, silenced
