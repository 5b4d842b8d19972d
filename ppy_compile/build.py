"""Build, or find in the cache, the compiled regions of one Python source file.

A warm start reads the file, hashes it with the versions that matter, finds
the index entry and loads the shared object: no parsing at all. Only a miss
builds each region's model (the checker's own), prints the file's regions as
one translation unit and compiles it; no torch or torchgen is consulted to
decide what the C++ says.
"""

from __future__ import annotations

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
from ppy_compile.cache import Cache
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


def _load_bridge(cache: Cache, key: str) -> Any:
    """The bridge, loaded once per process: its C++ for the region modules, its Python side for the runtime."""
    manifest = cache.valid(key)
    if manifest is None:
        raise FileNotFoundError(key)
    path = cache.build_dir(key) / manifest["artifact"]
    if path not in _bridges:
        # Global symbols: the region modules resolve the bridge's functions against it.
        ctypes.CDLL(str(path), mode=os.RTLD_NOW | os.RTLD_GLOBAL)
        _bridges[path] = _load_module(path, "ppy_bridge")
    return _bridges[path]


_bridges: dict[Path, Any] = {}


def _load_module(path: Path, name: str = MODULE_NAME) -> Any:
    loader = importlib.machinery.ExtensionFileLoader(name, str(path))
    spec = importlib.util.spec_from_file_location(name, str(path), loader=loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def _ensure_shared(cache: Cache, kind: str, source_name: str, source: str, output: str, level: int,
                   libraries: list[str], description: str, hashed: bool = True) -> str:
    """A build every module shares (the bridge, the precompiled header), made once under a lock."""
    from ppy_compile.toolchain import run_ninja, toolchain, write_ninja

    tool = toolchain()
    key = _sha(kind, BUILD_FORMAT, source, tool.identity, str(level))
    if cache.valid(key) is not None:
        return key
    with cache.locked(key):
        if cache.valid(key) is not None:
            return key
        with building(description), cache.staging(key) as folder:
            (folder / source_name).write_text(source, encoding="utf-8")
            write_ninja(folder, tool, source_name, output, level, libraries)
            run_ninja(folder, tool)
            cache.publish(key, folder, output, {"kind": kind, "torch": tool.torch_version, "level": level}, hashed=hashed)
    return key


def _ensure_bridge(cache: Cache) -> str:
    return _ensure_shared(cache, "bridge", "bridge.cpp", BRIDGE_SOURCE, "ppy_bridge.so", 2,
                          ["c10", "torch_cpu", "torch", "torch_python"],
                          "ppy: building the bridge to torch (once per torch version)")


def use_pch() -> bool:
    return os.environ.get("PPY_PCH", "1") not in ("0", "")


# GCC uses a header precompiled at one -O level for any other level above
# -O0 (it checks `__OPTIMIZE__`), so one artifact serves -O1 to -O3; -O0
# modules, a debugging aid, parse the headers themselves.
PCH_LEVEL = 2


def pch_for(level: int) -> bool:
    return use_pch() and level > 0


def _ensure_pch(cache: Cache) -> str:
    """The precompiled header for optimised module builds (too big to hash on every use)."""
    return _ensure_shared(cache, "pch", "ppy_pch.h", PCH_HEADER, "ppy_pch.h.gch", PCH_LEVEL, [],
                          "ppy: precompiling torch's headers (once per torch version)", hashed=False)


def _diagnostics_json(diagnostics: list[Diagnostic]) -> list[dict[str, Any]]:
    return [d.as_json() for d in diagnostics]


def _model_all(text: str, origin: str) -> tuple[list[UnitRegion], dict[str, list[Diagnostic]], dict[str, int]]:
    """Every region's model, or its findings: the checker's own analysis, built once."""
    from ppy_check.engine import analyse, check_region
    from ppy_check.module import ModuleRegions
    from ppy_compile.unit import UnitRegion

    module = ModuleRegions.load(origin, text)
    if module.syntax_error is not None:
        raise BuildError(f"{origin}: {module.syntax_error.message}")
    regions: list[UnitRegion] = []
    errors: dict[str, list[Diagnostic]] = {}
    levels: dict[str, int] = {}
    for region in module.regions:
        key = region.site.key
        levels[key] = region.level
        diagnostics = check_region(region, origin, module.lines)
        model = analyse(region).model
        if diagnostics or model is None:
            errors[key] = diagnostics
            continue
        regions.append(UnitRegion(model, region.site.cpp_symbol))
    return regions, errors, levels


def build_module(origin: str, text: str, cache: Cache | None = None, options: BuildOptions = BuildOptions()) -> BuiltModule:
    """The compiled regions of one file, from the cache when it has them."""
    cache = cache or Cache.open()
    source_key = _sha("source", light_identity(options), origin, text)
    index = cache.read_index(source_key)
    if index is not None:
        try:
            return _from_index(cache, index)
        except (FileNotFoundError, ImportError, OSError, KeyError):
            pass  # a broken or missing entry: build again
    return _build(cache, source_key, origin, text, options)


def _from_index(cache: Cache, index: dict[str, Any]) -> BuiltModule:
    result = BuiltModule(
        errors={rid: [Diagnostic(**d) for d in found] for rid, found in index["errors"].items()},
        symbols=dict(index["symbols"]),
        fallbacks=dict(index.get("fallbacks", {})),
        effects=dict(index.get("effects", {})),
    )
    if index["build"] is None:
        return result
    result.bridge = _load_bridge(cache, index["bridge"])
    manifest = cache.valid(index["build"])
    if manifest is None:
        raise FileNotFoundError(index["build"])
    folder = cache.build_dir(index["build"])
    module = _load_module(folder / manifest["artifact"])
    result.functions = {rid: getattr(module, name) for rid, name in result.symbols.items()}
    result.cpp_source = folder / "module.cpp"
    return result


def _build(cache: Cache, source_key: str, origin: str, text: str, options: BuildOptions) -> BuiltModule:
    from ppy_compile.toolchain import toolchain

    started = time.perf_counter()
    with building(f"ppy: modelling the regions of {Path(origin).name}"):
        regions, errors, levels = _model_all(text, origin)
    symbols = {r.model.site.key: r.symbol for r in regions}
    effects = {r.model.site.key: {"writes": sorted({w.param for w in r.model.writes}), "random": r.model.random}
               for r in regions}
    index: dict[str, Any] = {
        "origin": origin, "build": None, "bridge": None, "symbols": symbols, "fallbacks": {}, "effects": effects,
        "errors": {key: _diagnostics_json(found) for key, found in errors.items()},
    }
    result = BuiltModule(errors=errors, symbols=symbols, built=True, fallbacks=index["fallbacks"], effects=effects)
    if regions:
        tool = toolchain()
        bridge_key = _ensure_bridge(cache)
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
