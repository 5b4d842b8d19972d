"""Building a planned file's regions into modules: a region whose C++ some module in the cache already holds
is not rebuilt; the others are compiled in as many units as there are cores, at once, and a region the
compiler rejects is set aside alone."""

from __future__ import annotations

import contextlib
import functools
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ppy_compile import cpp_files
from ppy_compile.at_once import at_once
from ppy_compile.build_env import compile_jobs, pch_for
from ppy_compile.cache import Cache
from ppy_compile.keys import light_identity, sha
from ppy_compile.plan import Plan
from ppy_compile.progress import building
from ppy_compile.shared import PCH, BridgeBuild, logged_ninja, ready_key
from ppy_compile.toolchain import BuildInterrupted, CompileError, CompilerCrash, Toolchain, write_ninja
from ppy_compile.unit import PrintedRegion, Unit, Unprintable, print_region, translation_unit


class CacheCleared(BuildInterrupted):
    """`ppy cache clear` removed a build this one uses while it ran: the build is made again, once."""


@dataclass(frozen=True)
class _RegionBuild:
    """One region's C++ and how it compiles; ``digest`` names exactly that, whichever module holds it."""

    printed: PrintedRegion
    level: int
    pch_key: str | None
    digest: str

    @property
    def site_key(self) -> str:
        return self.printed.region.model.site.key


def build_regions(plan: Plan, tool: Toolchain, bridge: BridgeBuild, fallbacks: dict[str, str],
                  symbols: dict[str, str], precompile_next: list[str]) -> dict[str, str]:
    """The module holding each region (site key -> build key): a region whose C++ some module already
    holds is not rebuilt; the others are compiled, in as many units as there are cores, at once.
    ``precompile_next`` gets the regions compiled without the precompiled header because it was missing.

    A region whose C++ ppy cannot print, or which does not compile, is a ppy bug: it runs as Python, with
    why, and the others are unaffected.
    """
    cache = plan.cache

    def set_aside(key: str, why: str, detail: str) -> None:
        del symbols[key]
        fallbacks[key] = f"{why} (line {key.rsplit(':', 1)[1]}), a ppy bug worth reporting: {detail}"

    identity = light_identity(plan.options)
    ready_pch = ready_key(cache, PCH)
    wanted: list[_RegionBuild] = []
    for region in plan.regions:
        level = plan.levels[region.model.site.key]
        try:
            printed = print_region(region, plan.options)
        except Unprintable as error:
            set_aside(region.model.site.key, "ppy could not lower it to C++", str(error))
            continue
        # A missing precompiled header is not waited for: it takes longer to make (17 s here) than a module
        # takes without it (7 s for a small one, against 3 s with it), so the first build on a new machine
        # compiles without it, and the header is made after (BuiltModule.precompile_next).
        pch_key = ready_pch if pch_for(level) else None
        # Not keyed by the header: a module compiled with it and one compiled without are the same code.
        digest = sha("region", identity, printed.text, *sorted(printed.headers), tool.identity, str(level), bridge.key)
        wanted.append(_RegionBuild(printed, level, pch_key, digest))

    holders = {build.digest: holder(cache, build.digest) for build in wanted}  # digest -> module, or None
    failures: dict[str, str] = {}
    with contextlib.ExitStack() as locks:
        # Every missing region's lock, in one order (no two builders deadlock), then what is still missing:
        # a process that waited here finds the others' builds and prints nothing.
        missing = {build.digest: build for build in wanted if holders[build.digest] is None}
        for digest in sorted(missing):
            locks.enter_context(cache.locked(digest))
            holders[digest] = holder(cache, digest)
        missing = {digest: build for digest, build in missing.items() if holders[digest] is None}
        if ready_pch is None:
            precompile_next += [build.site_key for build in missing.values() if pch_for(build.level)]
        if missing:
            count, kept = len(missing), len({build.digest for build in wanted}) - len(missing)
            levels = "/".join(str(level) for level in sorted({build.level for build in missing.values()}))
            what = f"{count} region{'s' if count != 1 else ''} of {Path(plan.origin).name} (-O{levels}" + \
                (f"; {kept} unchanged)" if kept else ")") + \
                (" and the bridge to torch (once per torch version)" if bridge.building else "")
            groups = _groups(list(missing.values()), compile_jobs())
            with building(f"ppy: building {what}"):
                for built, failed in at_once([functools.partial(_compile_group, plan, tool, bridge, group)
                                              for group in groups]):
                    holders.update(built)
                    failures.update(failed)
    builds = {}
    for build in wanted:
        found = holders[build.digest]
        if found is None:
            set_aside(build.site_key, "the C++ ppy generated for it does not compile",
                      failures.get(build.digest, "its build is missing"))
            continue
        builds[build.site_key] = found
    return builds


def holder(cache: Cache, digest: str) -> str | None:
    """The valid module that holds the region of this digest, if one does."""
    key = cache.read_holder(digest)
    manifest = cache.valid(key) if key is not None else None
    # The module's own manifest must list the region: a stale or stray record names nothing.
    return key if manifest is not None and digest in manifest.get("digests", ()) else None


def _groups(builds: list[_RegionBuild], cores: int) -> list[list[_RegionBuild]]:
    """The missing regions as units to compile at once: one optimization level and distinct symbols in each,
    as many units as cores, balanced by the length of their C++ (each unit pays once for torch's headers)."""
    groups: list[list[_RegionBuild]] = []
    for level in sorted({build.level for build in builds}):
        at_level = sorted((b for b in builds if b.level == level), key=lambda b: -len(b.printed.text))
        mine: list[list[_RegionBuild]] = [[] for _ in range(min(cores, len(at_level)))]
        for build in at_level:
            free = [g for g in mine if all(b.printed.region.symbol != build.printed.region.symbol for b in g)]
            if not free:
                free = [[]]
                mine.append(free[0])
            min(free, key=lambda g: sum(len(b.printed.text) for b in g)).append(build)
        groups += [g for g in mine if g]
    return groups


def _compile_group(plan: Plan, tool: Toolchain, bridge: BridgeBuild,
                   group: list[_RegionBuild]) -> tuple[dict[str, str], dict[str, str]]:
    """Build one unit of regions (their locks held) and point each region at it; a region the compiler
    rejects is left out and the rest built again. The module each built region is in, and what each
    rejected region's error was, by digest.

    An error that names no line a region owns (one reported inside a header, at a template the region
    instantiated) does not say whose it is: each region of the unit is then built alone, so that only
    the one that fails alone is set aside."""
    built: dict[str, str] = {}
    failures: dict[str, str] = {}
    pending = [list(group)]
    while pending:
        group = pending.pop()
        unit = translation_unit([b.printed for b in group], plan.origin, plan.options,
                                precompiled=group[0].pch_key is not None)
        try:
            key = _compile_unit(plan, tool, bridge, group, unit)
        except CompilerCrash:
            raise  # not a region's fault: the pipeline rebuilds the precompiled header and tries again
        except CompileError as error:
            if bridge.failed_with(error):
                raise  # the bridge's own build, which a module waited for to link: no region's verdict
            culprits = {symbol: message for line, message in error.errors for symbol, (first, last) in unit.owned.items()
                        if first <= line <= last}
            rejected = [b for b in group if b.printed.region.symbol in culprits]
            if not rejected and len(group) > 1:
                pending += [[build] for build in group]
                continue
            rejected = rejected or group
            for build in rejected:
                failures[build.digest] = culprits.get(build.printed.region.symbol, str(error))
            if len(rejected) < len(group):
                pending.append([b for b in group if b not in rejected])
            continue
        for build in group:
            plan.cache.write_holder(build.digest, key)
            built[build.digest] = key
    return built, failures


def _compile_unit(plan: Plan, tool: Toolchain, bridge: BridgeBuild, group: list[_RegionBuild], unit: Unit) -> str:
    """The key of the module that holds ``unit`` (``group``'s regions), built unless the cache has it."""
    cache = plan.cache
    level, pch_key = group[0].level, group[0].pch_key
    key = sha("module", unit.source, tool.identity, str(level), bridge.key, pch_key or "", *(b.digest for b in group))
    if cache.valid(key) is not None:
        return key
    names = ", ".join(b.printed.region.model.site.qualname for b in group)
    subject = f"module of {Path(plan.origin).name} ({names})"
    with cache.locked(key), _using_shared(cache, [pch_key] if pch_key else []), cache.staging(key) as folder:
        (folder / "module.cpp").write_text(unit.source, encoding="utf-8")
        cpp_files.write_into(folder, unit.shipped)
        linked = cache.build_dir(bridge.key) / "ppy_bridge.so"
        write_ninja(folder, tool, "module.cpp", "module.so", level, ["c10", "torch_cpu"],
                    extra_link=[str(linked), f"-Wl,-rpath,{linked.parent}"],
                    extra_compile=[f"-I{cache.build_dir(pch_key)}"] if pch_key else [])
        if bridge.building:  # compiled meanwhile: only the link needs the bridge
            logged_ninja(folder, tool, subject, f"compiled a module of {Path(plan.origin).name} while the bridge "
                                                f"built (-O{level}: {names})", targets=("module.so.o",))
        bridge.ready()
        with _using_shared(cache, [bridge.key]):
            logged_ninja(folder, tool, subject, f"compiled a module of {Path(plan.origin).name} (-O{level}: {names})")
        cache.publish(key, folder, "module.so", {
            "kind": "module", "origin": plan.origin,
            "regions": [b.printed.region.model.site.qualname for b in group],
            "digests": [b.digest for b in group],
            "seconds": round(time.perf_counter() - plan.started, 2)})
    return key


@contextlib.contextmanager
def _using_shared(cache: Cache, keys: list[str]) -> Iterator[None]:
    """The bridge or header a module compiles against, held so that `ppy cache clear --all` keeps them until
    the module is built; and there still (a clear before the hold removed them: the build starts over)."""
    with contextlib.ExitStack() as held:
        for key in keys:
            held.enter_context(cache.locked(key, shared=True))
            if cache.valid(key) is None:
                raise CacheCleared("the bridge or precompiled header it compiles against was removed while it built "
                                   "(ppy cache clear --all)")
        yield
