"""Build, or find in the cache, the compiled regions of one Python source file: the one module that runs the
build's steps, in order.

A warm start reads the file, hashes its tokens (comments aside) with the
versions that matter, finds the index entry and loads the shared objects it
names: no parsing at all. Only a miss plans the file (each region's model, the
checker's own) and prints each region's C++, whose digest says whether a
module in the cache already holds it: only the regions none holds are
compiled, in one unit per core, at once. No torch or torchgen is consulted to
decide what the C++ says.

The steps: ``index`` (the key, the warm start), ``load`` (the shared objects),
``plan`` (the models and findings), ``shared`` (the bridge and precompiled
header), ``compile_units`` (the modules). Planning and building import the
checker's model builder and the C++ printer, which a warm start never needs:
they are imported by the steps that use them, not here at the top.
"""

from __future__ import annotations

import contextlib
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ppy_check import log
from ppy_check.errors import BuildError
from ppy_compile.at_once import start_thread
from ppy_compile.cache import Cache, CacheError
from ppy_compile.index import changed_dependency, diagnostics_json, index_key, last_key, last_record, why_missed
from ppy_compile.load import BuiltModule, from_index
from ppy_compile.options import BuildOptions
from ppy_compile.shared import BridgeBuild, check_shared, pch_crashes
from ppy_compile import toolchain as toolchains  # called through the module: tests stand in a toolchain
from ppy_compile.toolchain import CompilerCrash, SilentStop

if TYPE_CHECKING:
    from ppy_compile.plan import Plan


def cached_module(origin: str, text: str, cache: Cache | None = None,
                  options: BuildOptions = BuildOptions()) -> BuiltModule | None:
    """The compiled regions of one file when the cache has them (a warm start: no parsing), else None."""
    cache = cache or Cache.open()
    source_key = index_key(origin, text, options)
    index = cache.read_index(source_key)
    name = Path(origin).name
    if index is None:
        if log.on("cache"):
            log.emit("cache", f"miss for {name}: {why_missed(cache.read_index(last_key(origin)), last_record(origin, text, options))}")
        return None
    changed = changed_dependency(index.get("dependencies"))
    if changed is not None:
        log.emit("cache", f"miss for {name}: a helper file changed: {changed}")
        return None
    try:
        found = from_index(cache, index)
    except (FileNotFoundError, ImportError, OSError) as error:
        log.emit("cache", f"miss for {name}: a build its entry names is missing or broken ({type(error).__name__})")
        return None  # build again
    except (CacheError, KeyError, TypeError, ValueError, AttributeError):
        log.emit("cache", f"miss for {name}: its entry is not one ppy wrote")
        cache.discard_index(source_key)  # build again
        return None
    symbols = index.get("symbols")
    count = len(symbols) if isinstance(symbols, dict) else 0
    log.emit("cache", f"{count} region{'s' if count != 1 else ''} of {name} from cache")
    return found


def _write_index(plan: Plan, index: dict[str, Any]) -> None:
    plan.cache.write_index(plan.source_key, index)
    if plan.last is not None:  # what the next miss is compared with: recorded only while the topic is on
        plan.cache.write_index(last_key(plan.origin), plan.last)


def plan_module(origin: str, text: str, cache: Cache | None = None,
                options: BuildOptions = BuildOptions()) -> BuiltModule | Plan:
    """The cached build of a file, or what building it takes: the quick part of a build, which can raise
    a region's findings before the slow part (compile_plan) runs, possibly in the background."""
    cache = cache or Cache.open()
    found = cached_module(origin, text, cache, options)
    if found is not None:
        return found
    # The planning steps, imported only now: a warm start (above) never loads the checker's model.
    from ppy_check.imports import one_read
    from ppy_compile.drift import warn_once
    from ppy_compile.plan import Plan, model_all

    warn_once()
    started = time.perf_counter()
    _import_what_the_build_needs()
    thread = threading.Thread(target=check_shared, args=(cache,), name="ppy cache check", daemon=True)
    checking = thread if start_thread(thread) else None  # else (at exit) the build checks them itself
    with one_read():  # every region inlines one text of each helper file: the text whose digest is recorded
        regions, errors, levels, silenced = model_all(text, origin)
    source_key = index_key(origin, text, options)
    last = last_record(origin, text, options) if log.on("cache") else None
    return Plan(cache, source_key, origin, options, regions, errors, levels, silenced, started, checking, last)


def _import_what_the_build_needs() -> None:
    """The build's imports made here, in the caller's thread, before any build thread starts: a fork while a
    thread held an import's lock (torch's cpp_extension takes a while) leaves the child waiting on it for good."""
    import ppy_compile.compile_units  # noqa: F401  (the printer, and the lowering it imports)

    with contextlib.suppress(BuildError, ImportError):  # no compiler, or no torch: the build itself says so
        toolchains.toolchain()


def compile_plan(plan: Plan) -> BuiltModule:
    """The slow part of a build: the C++ of a planned file, built and loaded (and the cache's index written)."""
    try:
        return _build_once_more_if_cleared(plan)
    except (CompilerCrash, SilentStop):
        if not pch_crashes(plan.cache):
            raise
        return _build_once_more_if_cleared(plan)  # with a precompiled header built anew


def _build_once_more_if_cleared(plan: Plan) -> BuiltModule:
    """A build that `ppy cache clear` undercut while it ran (it removed what the build made or uses) is made
    again, once: the second build finds nothing and builds it all."""
    from ppy_compile.compile_units import CacheCleared

    try:
        return _build(plan)
    except CacheCleared:
        return _build(plan)


def build_module(origin: str, text: str, cache: Cache | None = None, options: BuildOptions = BuildOptions()) -> BuiltModule:
    """The compiled regions of one file, from the cache when it has them."""
    planned = plan_module(origin, text, cache, options)
    return planned if isinstance(planned, BuiltModule) else compile_plan(planned)


def _build(plan: Plan) -> BuiltModule:
    """The steps after planning, in order: the shared builds, the modules, the index entry, the load."""
    from ppy_compile.compile_units import CacheCleared, build_regions

    cache, regions = plan.cache, plan.regions
    symbols = {r.model.site.key: r.symbol for r in regions}
    effects = {r.model.site.key: {"writes": sorted({w.param for w in r.model.writes}), "random": r.model.random}
               for r in regions}
    dependencies = {path: digest for r in regions for path, digest in r.model.dependencies.items()}
    assumptions = {r.model.site.key: [[a.namespace, a.name, a.assumed.value, a.expected] for a in r.model.assumptions]
                   for r in regions}
    instances = {r.model.site.key: {"reads": [[path, str(kind)] for path, kind in r.model.instance.reads],
                                    "classes": [[path, name] for path, name in r.model.instance.classes],
                                    "methods": [[path, name] for path, name in r.model.instance.methods],
                                    "lengths": [[path, str(count)] for path, count in r.model.instance.lengths]}
                 for r in regions if r.model.instance is not None}
    index: dict[str, Any] = {
        "origin": plan.origin, "builds": {}, "bridge": None, "symbols": symbols, "fallbacks": dict(plan.silenced),
        "effects": effects, "dependencies": dependencies, "assumptions": assumptions, "instances": instances,
        "errors": {key: diagnostics_json(found) for key, found in plan.errors.items()},
    }
    result = BuiltModule(errors=plan.errors, symbols=symbols, built=True, fallbacks=index["fallbacks"], effects=effects,
                         dependencies=dependencies, assumptions=assumptions, instances=instances)
    if plan.shared_checked is not None:
        plan.shared_checked.join()
    if regions:
        tool = toolchains.toolchain()
        bridge = BridgeBuild(cache)  # built meanwhile where it is missing
        precompile_next: list[str] = []
        builds = build_regions(plan, tool, bridge, index["fallbacks"], symbols, precompile_next)
        result.precompile_next = bool(precompile_next)
        bridge_key = bridge.ready()
        if builds:
            index["builds"], index["bridge"] = builds, bridge_key
            _write_index(plan, index)
            try:
                loaded = from_index(cache, index)
            except FileNotFoundError as gone:  # a module built or found a moment ago: removed since
                cache.discard_index(plan.source_key)
                raise CacheCleared(f"a module it built was removed before it was loaded (ppy cache clear): {gone}") \
                    from None
            loaded.built, loaded.precompile_next = True, result.precompile_next
            return loaded
    _write_index(plan, index)
    return result
