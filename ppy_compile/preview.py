"""What a file's regions compile to, worked out from their models alone: no compiler, no cache, no lock.

``ppy explain`` and ``ppy show`` answer from here. A build would first make
the bridge and the precompiled header (minutes on an empty cache, or a wait on
another process's lock) only to print a verdict or a function that the model
already decides: the C++ a region compiles to is printed from its model before
any compiler runs, and the build's digest is taken of exactly that text.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ppy_check.diagnostic import Diagnostic
from ppy_compile.options import BuildOptions


@dataclass(frozen=True)
class RegionPreview:
    """One region as a build would take it: ``errors`` (invalid), else ``fallback`` (runs as Python,
    and why), else ``function``, its C++ (compiled at ``level``)."""

    qualname: str
    key: str
    line: int
    level: int
    symbol: str
    errors: tuple[Diagnostic, ...] = ()
    fallback: str | None = None
    function: str | None = None
    # Each of the region's source lines with the C++ printed for it (``ppy show --annotate``).
    annotated: tuple[tuple[int, tuple[str, ...]], ...] = ()


def preview_module(origin: str, text: str, options: BuildOptions = BuildOptions()) -> list[RegionPreview]:
    """Each region of the file (``origin``, holding ``text``), in source order, as a build would take it.

    Raises BuildError for a file that does not parse, as a build does.
    """
    from ppy_check.module import ModuleRegions
    from ppy_compile.plan import model_all
    from ppy_compile.emit import Printer

    modelled, errors, levels, silenced = model_all(text, origin)
    models = {region.model.site.key: region for region in modelled}
    previews = []
    for region in ModuleRegions.load(origin, text).regions:
        site = region.site
        base = RegionPreview(site.qualname, site.key, site.line, levels.get(site.key, region.level), site.cpp_symbol)
        if site.key in errors:
            previews.append(replace(base, errors=tuple(errors[site.key])))
        elif site.key in silenced:
            previews.append(replace(base, fallback=silenced[site.key]))
        elif site.key in models:
            try:
                printer = Printer(models[site.key].model, models[site.key].symbol, options)
                function = printer.function()
                annotated = tuple((line, tuple(cpp)) for line, cpp in printer.annotated())
            except Exception as error:  # what a build sets aside as a ppy bug: the region runs as Python
                previews.append(replace(base, fallback=f"ppy could not lower it to C++ (line {site.line}), a ppy bug "
                                                       f"worth reporting: {type(error).__name__}: {error}"))
                continue
            previews.append(replace(base, function=function, annotated=annotated))
    return previews
