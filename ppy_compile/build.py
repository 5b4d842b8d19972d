"""Build, or find in the cache, the compiled regions of one Python source file.

A warm start reads the file, hashes it with the versions that matter, finds
the index entry and loads the shared object: no parsing at all. Only a miss
builds each region's model (the checker's own), prints the file's regions as
one translation unit and compiles it; no torch or torchgen is consulted to
decide what the C++ says.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import ctypes
import hashlib
import importlib.machinery
import importlib.util
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ppy_check.errors import BuildError
from ppy_check.diagnostic import Diagnostic
from ppy_check.version import full_version
from ppy_compile.cache import Artifact, Cache, CacheError
from ppy_compile.progress import building
from ppy_compile.options import MODULE_NAME, BuildOptions
from ppy_compile.runtime_cpp import BRIDGE_SOURCE, PCH_HEADER

if TYPE_CHECKING:
    from ppy_compile.unit import Unit, UnitRegion

BUILD_FORMAT = "2"  # bump when the generated code or the layout changes meaning


def light_identity(options: BuildOptions) -> str:
    """What changes a build and is cheap to read on every warm start (no compiler run, no cpp_extension)."""
    import torch

    from ppy_compile.toolchain import compiler_identity

    parts = [BUILD_FORMAT, full_version(), str(torch.__version__), str(torch.version.cuda), sys.version, compiler_identity(),
             os.environ.get("CXXFLAGS", ""), options.key(), str(use_pch())]
    return "\n".join(parts)


def _sha(*parts: str) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()


@dataclass
class BuiltModule:
    functions: dict[str, Callable[..., Any]] = field(default_factory=dict)  # site key -> compiled entry
    errors: dict[str, list[Diagnostic]] = field(default_factory=dict)
    cpp_source: Path | None = None
    symbols: dict[str, str] = field(default_factory=dict)  # site key -> C++ symbol
    fallbacks: dict[str, str] = field(default_factory=dict)  # site key -> why it runs as Python
    # site key -> what the region does besides its result: {"writes": [parameter...], "random": bool}
    effects: dict[str, dict[str, Any]] = field(default_factory=dict)
    built: bool = False  # False when it came from the cache
    bridge: Any = None  # the bridge's Python module, when the regions are compiled


# What this process loaded, by build key. A shared object is loaded through
# the descriptor its digest was checked through (`Artifact.path`, a
# /proc/self/fd path naming that open inode), so nothing can be swapped in
# between the check and the load. The descriptor stays open for good: the
# dynamic loader and Python know a library by its path, and a reused number
# would name another file.
_loaded: dict[str, tuple[Artifact, Any]] = {}


def _load_bridge(cache: Cache, key: str) -> None:
    if key in _loaded:
        return
    artifact = cache.open_artifact(key)
    if artifact is None:
        raise FileNotFoundError(key)
    if "soname" not in artifact.manifest:
        # Built before bridges had a soname: modules linked to it name it by its path. Build anew.
        artifact.close()
        cache.discard(key)
        raise FileNotFoundError(key)
    try:
        # Global symbols: the region modules resolve the bridge's functions against it, and
        # their dependency on it by its soname, which matches this copy without opening a file.
        handle = ctypes.CDLL(artifact.path, mode=os.RTLD_NOW | os.RTLD_GLOBAL)
    except BaseException:
        artifact.close()
        raise
    _loaded[key] = (artifact, handle)


def _bridge_module(key: str) -> Any:
    """The bridge's Python side (its pybind11 module), imported from the very copy `_load_bridge` loaded."""
    if key not in _bridge_modules:
        _bridge_modules[key] = _import(_loaded[key][0].path, "ppy_bridge")
    return _bridge_modules[key]


_bridge_modules: dict[str, Any] = {}


def _load_module(cache: Cache, key: str) -> Any:
    if key in _loaded:
        return _loaded[key][1]
    artifact = cache.open_artifact(key)
    if artifact is None:
        raise FileNotFoundError(key)
    try:
        module = _import(artifact.path, MODULE_NAME)
    except BaseException:
        artifact.close()
        raise
    _loaded[key] = (artifact, module)
    return module


def _import(path: str, name: str) -> Any:
    """The extension module at ``path``, initialised as ``name`` (its PyInit_<name>)."""
    loader = importlib.machinery.ExtensionFileLoader(name, path)
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


@dataclass(frozen=True)
class SharedBuild:
    """A build every module shares (the bridge, the precompiled header): one per torch and toolchain."""

    kind: str
    source_name: str
    source: str
    output: str
    level: int
    libraries: tuple[str, ...]
    description: str

    def key(self, tool: Any) -> str:
        return _sha(self.kind, BUILD_FORMAT, self.source, tool.identity, str(self.level),
                    "soname" if self.output.endswith(".so") else "")


BRIDGE = SharedBuild("bridge", "bridge.cpp", BRIDGE_SOURCE, "ppy_bridge.so", 2, ("c10", "torch_cpu", "torch", "torch_python"),
                     "building the bridge to torch")
# GCC uses a header precompiled at one -O level for any other level above
# -O0 (it checks `__OPTIMIZE__`), so one artifact serves -O1 to -O3; -O0
# modules, a debugging aid, parse the headers themselves.
PCH_LEVEL = 2
PCH = SharedBuild("pch", "ppy_pch.h", PCH_HEADER, "ppy_pch.h.gch", PCH_LEVEL, (), "precompiling torch's headers")


def _ensure_shared(cache: Cache, shared: SharedBuild, progress: bool = True) -> str:
    """One shared build, made once under a lock (``progress``: show it as a step of its own)."""
    from ppy_compile.toolchain import run_ninja, toolchain, write_ninja

    tool = toolchain()
    key = shared.key(tool)
    # A shared object gets a soname: a module linked to it then depends on that
    # name, which the loader matches to the copy already loaded, instead of on a
    # path in the cache it would open itself.
    shared_object = shared.output.endswith(".so")
    soname = f"ppy_{shared.kind}_{key[:16]}.so"
    if cache.valid(key) is not None:
        return key
    with cache.locked(key):
        if cache.valid(key) is not None:
            return key
        step = building(f"ppy: {shared.description} (once per torch version)") if progress else contextlib.nullcontext()
        with step, cache.staging(key) as folder:
            (folder / shared.source_name).write_text(shared.source, encoding="utf-8")
            write_ninja(folder, tool, shared.source_name, shared.output, shared.level, list(shared.libraries),
                        extra_link=[f"-Wl,-soname,{soname}"] if shared_object else None)
            run_ninja(folder, tool)
            extra: dict[str, Any] = {"kind": shared.kind, "torch": tool.torch_version, "level": shared.level}
            if shared_object:
                extra["soname"] = soname
            cache.publish(key, folder, shared.output, extra)
    return key


def _ensure_all_shared(cache: Cache, with_pch: bool) -> tuple[str, str | None]:
    """The bridge, and the precompiled header when optimised modules need it.

    On an empty cache both are missing, and neither needs the other: they build
    at the same time (two compilers, one step shown), which halves the first
    build's wait on a machine with two cores or more.
    """
    from ppy_compile.toolchain import toolchain

    tool = toolchain()
    wanted = [BRIDGE, PCH] if with_pch else [BRIDGE]
    missing = [shared for shared in wanted if cache.valid(shared.key(tool)) is None]
    if len(missing) > 1:
        description = " and ".join(shared.description for shared in missing)
        with building(f"ppy: {description} (once per torch version)"), \
                concurrent.futures.ThreadPoolExecutor(len(missing)) as pool:
            for future in [pool.submit(_ensure_shared, cache, shared, False) for shared in missing]:
                future.result()
    keys = [_ensure_shared(cache, shared) for shared in wanted]
    return keys[0], keys[1] if with_pch else None


def _ensure_bridge(cache: Cache) -> str:
    return _ensure_shared(cache, BRIDGE)


def use_pch() -> bool:
    return os.environ.get("PPY_PCH", "1") not in ("0", "")


def pch_for(level: int) -> bool:
    return use_pch() and level > 0


def _ensure_pch(cache: Cache) -> str:
    """The precompiled header for optimised module builds (its digest is checked once per process)."""
    return _ensure_shared(cache, PCH)


def _pch_crashes(cache: Cache) -> bool:
    """After a compiler crash: whether the precompiled header alone crashes it (then it is removed, to be rebuilt).

    Its digest vouches for its bytes, not for the compiler reading them: one
    written by a faulty machine, or one this compiler cannot read, passes the
    digest and crashes every module build. An empty unit that includes it tells.
    """
    from ppy_compile.toolchain import CompileError, CompilerCrash, run_ninja, toolchain, write_ninja

    if not use_pch():
        return False
    tool = toolchain()
    key = _ensure_pch(cache)
    with cache.locked(key), cache.staging(key) as folder:
        (folder / "probe.cpp").write_text('#include "ppy_pch.h"\n', encoding="utf-8")
        write_ninja(folder, tool, "probe.cpp", "probe.so", PCH_LEVEL, ["c10", "torch_cpu"],
                    extra_compile=[f"-I{cache.build_dir(key)}"])
        try:
            run_ninja(folder, tool)
        except CompilerCrash:
            cache.discard(key)
            return True
        except CompileError:
            return False
    return False


def _diagnostics_json(diagnostics: list[Diagnostic]) -> list[dict[str, Any]]:
    return [d.as_json() for d in diagnostics]


def _model_all(text: str, origin: str) -> tuple[list[UnitRegion], dict[str, list[Diagnostic]], dict[str, int],
                                              dict[str, str]]:
    """Every region's model, or its findings: the checker's own analysis, built once.

    A region whose findings are all suppressed (`# ppy: ignore[...]`) is no
    error: it runs as Python, and the reason names the suppressed codes.
    """
    from ppy_check.engine import analyse, check_region, suppressed
    from ppy_check.module import ModuleRegions
    from ppy_compile.unit import UnitRegion

    module = ModuleRegions.load(origin, text)
    if module.syntax_error is not None:
        raise BuildError(f"{origin}: {module.syntax_error.message}")
    regions: list[UnitRegion] = []
    errors: dict[str, list[Diagnostic]] = {}
    levels: dict[str, int] = {}
    silenced: dict[str, str] = {}
    for region in module.regions:
        key = region.site.key
        levels[key] = region.level
        diagnostics = check_region(region, origin, module.lines)
        model = analyse(region).model
        if not diagnostics and not region.compiles:
            silenced[key] = "it is marked `compile=False`"
            continue
        if not diagnostics and model is not None:
            regions.append(UnitRegion(model, region.site.cpp_symbol))
            continue
        standing = [d for d in diagnostics
                    if not (0 < d.line <= len(module.lines) and suppressed(module.lines[d.line - 1], d.code))]
        if standing or not diagnostics:
            errors[key] = standing or diagnostics
        else:
            codes = ", ".join(f"{d.code} (line {d.line})" for d in diagnostics)
            silenced[key] = f"its findings are suppressed, so it has no compiled form: {codes}"
    return regions, errors, levels, silenced


def cached_module(origin: str, text: str, cache: Cache | None = None,
                  options: BuildOptions = BuildOptions()) -> BuiltModule | None:
    """The compiled regions of one file when the cache has them (a warm start: no parsing), else None."""
    cache = cache or Cache.open()
    source_key = _sha("source", light_identity(options), origin, text)
    index = cache.read_index(source_key)
    if index is not None and not _dependencies_changed(index):
        try:
            return _from_index(cache, index)
        except (FileNotFoundError, ImportError, OSError):
            pass  # an entry it names is missing or broken: build again
        except (CacheError, KeyError, TypeError, ValueError, AttributeError):
            cache.discard_index(source_key)  # not an index ppy wrote: build again
    return None


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


def plan_module(origin: str, text: str, cache: Cache | None = None,
                options: BuildOptions = BuildOptions()) -> BuiltModule | Plan:
    """The cached build of a file, or what building it takes: the quick part of a build, which can raise
    a region's findings before the slow part (compile_plan) runs, possibly in the background."""
    from ppy_compile.drift import warn_once

    cache = cache or Cache.open()
    found = cached_module(origin, text, cache, options)
    if found is not None:
        return found
    warn_once()
    started = time.perf_counter()
    regions, errors, levels, silenced = _model_all(text, origin)
    source_key = _sha("source", light_identity(options), origin, text)
    return Plan(cache, source_key, origin, options, regions, errors, levels, silenced, started)


def compile_plan(plan: Plan) -> BuiltModule:
    """The slow part of a build: the C++ of a planned file, built and loaded (and the cache's index written)."""
    from ppy_compile.toolchain import CompilerCrash

    try:
        return _build(plan)
    except CompilerCrash:
        if not _pch_crashes(plan.cache):
            raise
        return _build(plan)  # with a precompiled header built anew


def build_module(origin: str, text: str, cache: Cache | None = None, options: BuildOptions = BuildOptions()) -> BuiltModule:
    """The compiled regions of one file, from the cache when it has them."""
    planned = plan_module(origin, text, cache, options)
    return planned if isinstance(planned, BuiltModule) else compile_plan(planned)


def _dependencies_changed(index: dict[str, Any]) -> bool:
    """Whether a file holding a helper the regions call changed since the build (then it is built again)."""
    dependencies = index.get("dependencies", {})
    if not isinstance(dependencies, dict):
        return True
    for path, digest in dependencies.items():
        try:
            if hashlib.sha256(Path(path).read_bytes()).hexdigest() != digest:
                return True
        except (OSError, TypeError):
            return True
    return False


def _from_index(cache: Cache, index: dict[str, Any]) -> BuiltModule:
    result = BuiltModule(
        errors={rid: [Diagnostic(**d) for d in found] for rid, found in index["errors"].items()},
        symbols=dict(index["symbols"]),
        fallbacks=dict(index.get("fallbacks", {})),
        effects=dict(index.get("effects", {})),
    )
    if index["build"] is None:
        return result
    _load_bridge(cache, index["bridge"])
    result.bridge = _bridge_module(index["bridge"])
    module = _load_module(cache, index["build"])
    result.functions = {rid: getattr(module, name) for rid, name in result.symbols.items()}
    result.cpp_source = cache.build_dir(index["build"]) / "module.cpp"
    return result


def _build(plan: Plan) -> BuiltModule:
    from ppy_compile.toolchain import toolchain

    cache, source_key, origin, options = plan.cache, plan.source_key, plan.origin, plan.options
    regions, errors, levels, silenced, started = plan.regions, plan.errors, plan.levels, plan.silenced, plan.started
    symbols = {r.model.site.key: r.symbol for r in regions}
    effects = {r.model.site.key: {"writes": sorted({w.param for w in r.model.writes}), "random": r.model.random}
               for r in regions}
    dependencies = {path: digest for r in regions for path, digest in r.model.dependencies.items()}
    index: dict[str, Any] = {
        "origin": origin, "build": None, "bridge": None, "symbols": symbols, "fallbacks": dict(silenced), "effects": effects,
        "dependencies": dependencies,
        "errors": {key: _diagnostics_json(found) for key, found in errors.items()},
    }
    result = BuiltModule(errors=errors, symbols=symbols, built=True, fallbacks=index["fallbacks"], effects=effects)
    if regions:
        tool = toolchain()
        bridge_key, _ = _ensure_all_shared(cache, with_pch=pch_for(max(levels[r.model.site.key] for r in regions)))
        build_key = _build_unit(cache, tool, bridge_key, regions, index["fallbacks"], symbols, levels, origin, started,
                                options)
        if build_key is not None:
            index["build"], index["bridge"] = build_key, bridge_key
            cache.write_index(source_key, index)
            loaded = _from_index(cache, index)
            loaded.built = True
            return loaded
    cache.write_index(source_key, index)
    return result


def _build_unit(cache: Cache, tool: Any, bridge_key: str, regions: list[UnitRegion], fallbacks: dict[str, str],
                symbols: dict[str, str], levels: dict[str, int], origin: str, started: float,
                options: BuildOptions) -> str | None:
    """Build the unit; a region whose generated C++ does not compile is set aside (a ppy bug) and the rest rebuilt."""
    from ppy_compile.toolchain import CompileError, run_ninja, write_ninja
    from ppy_compile.unit import translation_unit

    regions = list(regions)
    while regions:
        level = max(levels[r.model.site.key] for r in regions)
        pch_key = _ensure_pch(cache) if pch_for(level) else None
        unit = translation_unit(regions, origin, options, precompiled=pch_key is not None)
        for region in [r for r in regions if r.symbol in unit.failed]:
            regions.remove(region)
            key = region.model.site.key
            del symbols[key]
            fallbacks[key] = (f"ppy could not lower it to C++ (line {region.model.site.line}), a ppy bug worth "
                              f"reporting: {unit.failed[region.symbol]}")
        if not regions:
            return None
        build_key = _sha("module", unit.source, tool.identity, str(level), bridge_key, pch_key or "")
        try:
            if cache.valid(build_key) is None:
                with cache.locked(build_key):
                    if cache.valid(build_key) is None:
                        count = len(regions)
                        description = f"ppy: building {count} region{'s' if count != 1 else ''} of {Path(origin).name} (-O{level})"
                        with building(description), cache.staging(build_key) as folder:
                            (folder / "module.cpp").write_text(unit.source, encoding="utf-8")
                            bridge = cache.build_dir(bridge_key) / "ppy_bridge.so"
                            write_ninja(folder, tool, "module.cpp", "module.so", level, ["c10", "torch_cpu"],
                                        extra_link=[str(bridge), f"-Wl,-rpath,{bridge.parent}"],
                                        extra_compile=[f"-I{cache.build_dir(pch_key)}"] if pch_key else [])
                            run_ninja(folder, tool)
                            cache.publish(build_key, folder, "module.so", {
                                "kind": "module", "origin": origin, "seconds": round(time.perf_counter() - started, 2)})
            return build_key
        except CompileError as error:
            culprits = _culprits(unit, error)
            if not culprits:
                raise
            for region in list(regions):
                message = culprits.get(region.symbol)
                if message is None:
                    continue
                regions.remove(region)
                key = region.model.site.key
                del symbols[key]
                fallbacks[key] = (f"the C++ ppy generated for it (line {region.model.site.line}) does not compile, "
                                  f"a ppy bug worth reporting: {message}")
    return None


def _culprits(unit: Unit, error: Any) -> dict[str, str]:
    """The region each compiler error falls in, by the unit lines each region owns."""
    return {
        symbol: message
        for line, message in error.errors
        for symbol, ranges in unit.owned.items()
        if any(first <= line <= last for first, last in ranges)
    }
