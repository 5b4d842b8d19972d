"""Build, or find in the cache, the compiled regions of one Python source file.

A warm start reads the file, hashes its tokens (comments aside) with the
versions that matter, finds the index entry and loads the shared objects it
names: no parsing at all. Only a miss builds each region's model (the
checker's own) and prints each region's C++, whose digest says whether a
module in the cache already holds it: only the regions none holds are
compiled, in one unit per core, at once. No torch or torchgen is consulted to
decide what the C++ says.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import hashlib
import importlib.machinery
import importlib.util
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ppy_check.errors import BuildError
from ppy_check.diagnostic import Diagnostic
from ppy_check.source import file_digest
from ppy_check.version import full_version
from ppy_compile.cache import Artifact, Cache, CacheError
from ppy_compile.progress import building
from ppy_compile.toolchain import BuildInterrupted
from ppy_compile.options import MODULE_NAME, BuildOptions
from ppy_compile import cpp_files

if TYPE_CHECKING:
    from ppy_compile.unit import PrintedRegion, Unit, UnitRegion

BUILD_FORMAT = "3"  # bump when the generated code or the layout changes meaning


def light_identity(options: BuildOptions) -> str:
    """What changes a build and is cheap to read on every warm start (no compiler run, no cpp_extension)."""
    import torch

    from ppy_compile.toolchain import compiler_identity, torch_library_identity

    parts = [BUILD_FORMAT, full_version(), str(torch.__version__), str(torch.version.cuda), torch_library_identity(),
             sys.version, compiler_identity(), os.environ.get("CXXFLAGS", ""), options.key(), str(use_pch()),
             cpp_files.every_digest()]  # the shipped C++ a module includes: read from files, not part of its text
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
    cpp_sources: dict[str, Path] = field(default_factory=dict)  # site key -> the unit that holds it
    symbols: dict[str, str] = field(default_factory=dict)  # site key -> C++ symbol
    fallbacks: dict[str, str] = field(default_factory=dict)  # site key -> why it runs as Python
    # site key -> what the region does besides its result: {"writes": [parameter...], "random": bool}
    effects: dict[str, dict[str, Any]] = field(default_factory=dict)
    built: bool = False  # False when it came from the cache
    bridge: Any = None  # the bridge's Python module, when the regions are compiled
    dependencies: dict[str, str] = field(default_factory=dict)  # other files the regions reached -> their sha256
    # site key -> the names from outside its body the build took as fixed: [namespace, name, assumed, expected]
    # (ppy_check.model.ir.Assumption), which the runtime proves before it runs the compiled code (ppy/guard.py).
    assumptions: dict[str, list[list[str]]] = field(default_factory=dict)


# What this process loaded, by build key. A shared object is loaded through
# the descriptor its digest was checked through (`Artifact.path`, a
# /proc/self/fd path naming that open inode), so nothing can be swapped in
# between the check and the load. The descriptor stays open for good: the
# dynamic loader and Python know a library by its path, and a reused number
# would name another file.
_loaded: dict[str, tuple[Artifact, Any]] = {}


# Loading is checked and recorded under one lock: two threads (a background build finishing while the
# program prepares another file) would otherwise each load their own copy, and a second copy of the bridge
# registers its pybind11 types twice.
_loading = threading.RLock()


def _new_loading_lock_in_child() -> None:
    """A forked child has no thread that could release a hold its parent's threads had at the fork."""
    global _loading
    _loading = threading.RLock()


os.register_at_fork(after_in_child=_new_loading_lock_in_child)


def _load_bridge(cache: Cache, key: str) -> None:
    with _loading:
        _load_bridge_locked(cache, key)


def _load_bridge_locked(cache: Cache, key: str) -> None:
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
    with _loading:
        if key not in _bridge_modules:
            _bridge_modules[key] = _import(_loaded[key][0].path, "ppy_bridge")
        return _bridge_modules[key]


_bridge_modules: dict[str, Any] = {}


def _load_module(cache: Cache, key: str) -> Any:
    with _loading:
        return _load_module_locked(cache, key)


def _load_module_locked(cache: Cache, key: str) -> Any:
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
    source_name: str  # what the shipped ``source`` is called in the build's folder
    source: str  # the shipped file (cpp_files) it compiles, with the shipped files it includes
    output: str
    level: int
    libraries: tuple[str, ...]
    description: str

    def key(self, tool: Any) -> str:
        return _sha(self.kind, BUILD_FORMAT, cpp_files.digest([self.source]), tool.identity, str(self.level),
                    "soname" if self.output.endswith(".so") else "")


BRIDGE = SharedBuild("bridge", "bridge.cpp", cpp_files.BRIDGE, "ppy_bridge.so", 2,
                     ("c10", "torch_cpu", "torch", "torch_python"), "building the bridge to torch")
# GCC uses a header precompiled at one -O level for any other level above
# -O0 (it checks `__OPTIMIZE__`), so one artifact serves -O1 to -O3; -O0
# modules, a debugging aid, parse the headers themselves.
PCH_LEVEL = 2
PCH = SharedBuild("pch", "ppy_pch.h", cpp_files.PRECOMPILED, "ppy_pch.h.gch", PCH_LEVEL, (),
                  "precompiling torch's headers")


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
            cpp_files.write_into(folder, [shared.source], renamed={shared.source: shared.source_name})
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
    if len(missing) > 1 and compile_jobs() > 1:
        description = " and ".join(shared.description for shared in missing)
        with building(f"ppy: {description} (once per torch version)"):
            _at_once([functools.partial(_ensure_shared, cache, shared, False) for shared in missing])
    keys = [_ensure_shared(cache, shared) for shared in wanted]
    return keys[0], keys[1] if with_pch else None


T = TypeVar("T")


def _at_once(calls: list[Callable[[], T]]) -> list[T]:
    """Each call's result, the calls run at the same time in threads of their own; the first error raised.

    Plain threads, not a pool: a pool refuses work once the interpreter is shutting down, which is when the
    background build of a program that already ended goes on.
    """
    results: list[Any] = [None] * len(calls)
    errors: list[BaseException | None] = [None] * len(calls)

    def run(index: int) -> None:
        try:
            results[index] = calls[index]()
        except BaseException as error:  # handed to the caller's thread below
            errors[index] = error

    threads = [threading.Thread(target=run, args=(index,), name="ppy build") for index in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for error in errors:
        if error is not None:
            raise error
    return results


def _ensure_bridge(cache: Cache) -> str:
    return _ensure_shared(cache, BRIDGE)


def compile_jobs() -> int:
    """How many compilers a build runs at once: ``$PPY_JOBS`` (``ppy build -j``), else one per core."""
    text = os.environ.get("PPY_JOBS", "").strip()
    if text:
        try:
            return max(1, int(text))
        except ValueError:
            raise BuildError(f"PPY_JOBS={text!r} is not a number of compilers") from None
    return os.cpu_count() or 1


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


def index_key(origin: str, text: str, options: BuildOptions) -> str:
    """The index entry's key: the file's tokens and where each stands, less its comments other than
    suppressions (which change what runs compiled), so rewording a comment stays a cache hit."""
    return _sha("source", light_identity(options), origin, _code_of(text))


def _code_of(text: str) -> str:
    import io
    import tokenize

    from ppy_check.suppression import directives

    kept = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in (tokenize.COMMENT, tokenize.NL) and not any(directives(token.string)):
                continue  # a comment, or the end of a line that holds no code
            if token.type in (tokenize.NEWLINE, tokenize.DEDENT, tokenize.ENDMARKER):
                kept.append(f"{token.type}")  # where they stand moves with the comments before them
                continue
            kept.append(f"{token.type} {token.start[0]} {token.start[1]} {token.string}")
    except (tokenize.TokenError, SyntaxError):
        return "text\0" + text  # not tokenizable: the text as it is
    return "tokens\0" + "\n".join(kept)


def cached_module(origin: str, text: str, cache: Cache | None = None,
                  options: BuildOptions = BuildOptions()) -> BuiltModule | None:
    """The compiled regions of one file when the cache has them (a warm start: no parsing), else None."""
    cache = cache or Cache.open()
    source_key = index_key(origin, text, options)
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
    # Checking the shared builds' digests (hundreds of MB) while the regions were modelled: joined before use.
    shared_checked: threading.Thread | None = None


def plan_module(origin: str, text: str, cache: Cache | None = None,
                options: BuildOptions = BuildOptions()) -> BuiltModule | Plan:
    """The cached build of a file, or what building it takes: the quick part of a build, which can raise
    a region's findings before the slow part (compile_plan) runs, possibly in the background."""
    from ppy_check.imports import one_read
    from ppy_compile.drift import warn_once

    cache = cache or Cache.open()
    found = cached_module(origin, text, cache, options)
    if found is not None:
        return found
    warn_once()
    started = time.perf_counter()
    _import_what_the_build_needs()
    checking = threading.Thread(target=_check_shared, args=(cache,), name="ppy cache check", daemon=True)
    checking.start()
    with one_read():  # every region inlines one text of each helper file: the text whose digest is recorded
        regions, errors, levels, silenced = _model_all(text, origin)
    source_key = index_key(origin, text, options)
    return Plan(cache, source_key, origin, options, regions, errors, levels, silenced, started, checking)


def _import_what_the_build_needs() -> None:
    """The build's imports made here, in the caller's thread, before any build thread starts: a fork while a
    thread held an import's lock (torch's cpp_extension takes a while) leaves the child waiting on it for good."""
    import ppy_compile.unit  # noqa: F401  (the printer, and the lowering it imports)
    from ppy_compile.toolchain import toolchain

    with contextlib.suppress(BuildError, ImportError):  # no compiler, or no torch: the build itself says so
        toolchain()


def _check_shared(cache: Cache) -> None:
    """Check the shared builds' digests now (hashing releases the GIL), so that the build finds them checked."""
    try:
        from ppy_compile.toolchain import toolchain

        tool = toolchain()
        for shared in (BRIDGE, PCH) if use_pch() else (BRIDGE,):
            cache.valid(shared.key(tool))
    except Exception:  # pylint: disable=broad-except
        pass  # the build checks them again, and says what is wrong


def compile_plan(plan: Plan) -> BuiltModule:
    """The slow part of a build: the C++ of a planned file, built and loaded (and the cache's index written)."""
    from ppy_compile.toolchain import CompilerCrash

    try:
        return _build_once_more_if_cleared(plan)
    except CompilerCrash:
        if not _pch_crashes(plan.cache):
            raise
        return _build_once_more_if_cleared(plan)  # with a precompiled header built anew


def _build_once_more_if_cleared(plan: Plan) -> BuiltModule:
    """A build that `ppy cache clear` undercut while it ran (it removed what the build made or uses) is made
    again, once: the second build finds nothing and builds it all."""
    try:
        return _build(plan)
    except CacheCleared:
        return _build(plan)


def build_module(origin: str, text: str, cache: Cache | None = None, options: BuildOptions = BuildOptions()) -> BuiltModule:
    """The compiled regions of one file, from the cache when it has them."""
    planned = plan_module(origin, text, cache, options)
    return planned if isinstance(planned, BuiltModule) else compile_plan(planned)


def _dependencies_changed(index: dict[str, Any]) -> bool:
    """Whether a file holding a helper the regions call changed since the build (then it is built again)."""
    return dependencies_changed(index.get("dependencies", {}))


def dependencies_changed(dependencies: Any) -> bool:
    """Whether any of these files (path -> the sha256 a build compiled) reads differently now."""
    if not isinstance(dependencies, dict):
        return True
    for path, digest in dependencies.items():
        try:
            if file_digest(path) != digest:
                return True
        except (OSError, TypeError):
            return True
    return False


def _assumptions_json(found: Any) -> dict[str, list[list[str]]]:
    """An index's assumptions, checked for shape: a region's list of [namespace, name, assumed, expected] strings."""
    if not isinstance(found, dict) or not all(
            isinstance(key, str) and isinstance(rows, list) and all(
                isinstance(row, list) and len(row) == 4 and all(isinstance(part, str) for part in row) for row in rows)
            for key, rows in found.items()):
        raise ValueError("an index whose assumptions are not lists of four strings")
    return found


def _from_index(cache: Cache, index: dict[str, Any]) -> BuiltModule:
    result = BuiltModule(
        errors={rid: [Diagnostic.from_json(d) for d in found] for rid, found in index["errors"].items()},
        symbols=dict(index["symbols"]),
        fallbacks=dict(index.get("fallbacks", {})),
        effects=dict(index.get("effects", {})),
        dependencies=dict(index.get("dependencies", {})),
        assumptions=_assumptions_json(index["assumptions"]),
    )
    builds = index["builds"]
    if not isinstance(builds, dict) or set(builds) != set(result.symbols):
        raise ValueError("an index whose builds are not its regions'")
    if not builds:
        return result
    _load_bridge(cache, index["bridge"])
    result.bridge = _bridge_module(index["bridge"])
    for rid, build_key in builds.items():
        result.functions[rid] = getattr(_load_module(cache, build_key), result.symbols[rid])
        result.cpp_sources[rid] = cache.build_dir(build_key) / "module.cpp"
    return result


def _build(plan: Plan) -> BuiltModule:
    from ppy_compile.toolchain import toolchain

    cache, regions, levels = plan.cache, plan.regions, plan.levels
    symbols = {r.model.site.key: r.symbol for r in regions}
    effects = {r.model.site.key: {"writes": sorted({w.param for w in r.model.writes}), "random": r.model.random}
               for r in regions}
    dependencies = {path: digest for r in regions for path, digest in r.model.dependencies.items()}
    assumptions = {r.model.site.key: [[a.namespace, a.name, a.assumed.value, a.expected] for a in r.model.assumptions]
                   for r in regions}
    index: dict[str, Any] = {
        "origin": plan.origin, "builds": {}, "bridge": None, "symbols": symbols, "fallbacks": dict(plan.silenced),
        "effects": effects, "dependencies": dependencies, "assumptions": assumptions,
        "errors": {key: _diagnostics_json(found) for key, found in plan.errors.items()},
    }
    result = BuiltModule(errors=plan.errors, symbols=symbols, built=True, fallbacks=index["fallbacks"], effects=effects,
                         dependencies=dependencies, assumptions=assumptions)
    if plan.shared_checked is not None:
        plan.shared_checked.join()
    if regions:
        tool = toolchain()
        bridge_key, _ = _ensure_all_shared(cache, with_pch=any(pch_for(levels[r.model.site.key]) for r in regions))
        builds = _build_regions(plan, tool, bridge_key, index["fallbacks"], symbols)
        if builds:
            index["builds"], index["bridge"] = builds, bridge_key
            cache.write_index(plan.source_key, index)
            try:
                loaded = _from_index(cache, index)
            except FileNotFoundError as gone:  # a module built or found a moment ago: removed since
                cache.discard_index(plan.source_key)
                raise CacheCleared(f"a module it built was removed before it was loaded (ppy cache clear): {gone}") \
                    from None
            loaded.built = True
            return loaded
    cache.write_index(plan.source_key, index)
    return result


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


def _build_regions(plan: Plan, tool: Any, bridge_key: str, fallbacks: dict[str, str],
                   symbols: dict[str, str]) -> dict[str, str]:
    """The module holding each region (site key -> build key): a region whose C++ some module already
    holds is not rebuilt; the others are compiled, in as many units as there are cores, at once.

    A region whose C++ ppy cannot print, or which does not compile, is a ppy bug: it runs as Python, with
    why, and the others are unaffected.
    """
    from ppy_compile.unit import Unprintable, print_region

    cache = plan.cache

    def set_aside(key: str, why: str, detail: str) -> None:
        del symbols[key]
        fallbacks[key] = f"{why} (line {key.rsplit(':', 1)[1]}), a ppy bug worth reporting: {detail}"

    identity = light_identity(plan.options)
    wanted: list[_RegionBuild] = []
    for region in plan.regions:
        level = plan.levels[region.model.site.key]
        pch_key = _ensure_pch(cache) if pch_for(level) else None
        try:
            printed = print_region(region, plan.options)
        except Unprintable as error:
            set_aside(region.model.site.key, "ppy could not lower it to C++", str(error))
            continue
        digest = _sha("region", identity, printed.text, *sorted(printed.headers), tool.identity,
                      str(level), bridge_key, pch_key or "")
        wanted.append(_RegionBuild(printed, level, pch_key, digest))

    holders = {build.digest: _holder(cache, build.digest) for build in wanted}  # digest -> module, or None
    failures: dict[str, str] = {}
    with contextlib.ExitStack() as locks:
        # Every missing region's lock, in one order (no two builders deadlock), then what is still missing:
        # a process that waited here finds the others' builds and prints nothing.
        missing = {build.digest: build for build in wanted if holders[build.digest] is None}
        for digest in sorted(missing):
            locks.enter_context(cache.locked(digest))
            holders[digest] = _holder(cache, digest)
        missing = {digest: build for digest, build in missing.items() if holders[digest] is None}
        if missing:
            count, kept = len(missing), len({build.digest for build in wanted}) - len(missing)
            levels = "/".join(str(level) for level in sorted({build.level for build in missing.values()}))
            what = f"{count} region{'s' if count != 1 else ''} of {Path(plan.origin).name} (-O{levels}" + \
                (f"; {kept} unchanged)" if kept else ")")
            groups = _groups(list(missing.values()), compile_jobs())
            with building(f"ppy: building {what}"):
                for built, failed in _at_once([functools.partial(_compile_group, plan, tool, bridge_key, group)
                                               for group in groups]):
                    holders.update(built)
                    failures.update(failed)
    builds = {}
    for build in wanted:
        holder = holders[build.digest]
        if holder is None:
            set_aside(build.site_key, "the C++ ppy generated for it does not compile",
                      failures.get(build.digest, "its build is missing"))
            continue
        builds[build.site_key] = holder
    return builds


def _holder(cache: Cache, digest: str) -> str | None:
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


def _compile_group(plan: Plan, tool: Any, bridge_key: str,
                   group: list[_RegionBuild]) -> tuple[dict[str, str], dict[str, str]]:
    """Build one unit of regions (their locks held) and point each region at it; a region the compiler
    rejects is left out and the rest built again. The module each built region is in, and what each
    rejected region's error was, by digest.

    An error that names no line a region owns (one reported inside a header, at a template the region
    instantiated) does not say whose it is: each region of the unit is then built alone, so that only
    the one that fails alone is set aside."""
    from ppy_compile.toolchain import CompileError, CompilerCrash
    from ppy_compile.unit import translation_unit

    built: dict[str, str] = {}
    failures: dict[str, str] = {}
    pending = [list(group)]
    while pending:
        group = pending.pop()
        unit = translation_unit([b.printed for b in group], plan.origin, plan.options,
                                precompiled=group[0].pch_key is not None)
        try:
            key = _compile_unit(plan, tool, bridge_key, group, unit)
        except CompilerCrash:
            raise  # not a region's fault: compile_plan rebuilds the precompiled header and tries again
        except CompileError as error:
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


def _compile_unit(plan: Plan, tool: Any, bridge_key: str, group: list[_RegionBuild], unit: Unit) -> str:
    """The key of the module that holds ``unit`` (``group``'s regions), built unless the cache has it."""
    from ppy_compile.toolchain import run_ninja, write_ninja

    cache = plan.cache
    level, pch_key = group[0].level, group[0].pch_key
    key = _sha("module", unit.source, tool.identity, str(level), bridge_key, pch_key or "", *(b.digest for b in group))
    if cache.valid(key) is not None:
        return key
    with cache.locked(key), _using_shared(cache, bridge_key, pch_key), cache.staging(key) as folder:
        (folder / "module.cpp").write_text(unit.source, encoding="utf-8")
        cpp_files.write_into(folder, unit.shipped)
        bridge = cache.build_dir(bridge_key) / "ppy_bridge.so"
        write_ninja(folder, tool, "module.cpp", "module.so", level, ["c10", "torch_cpu"],
                    extra_link=[str(bridge), f"-Wl,-rpath,{bridge.parent}"],
                    extra_compile=[f"-I{cache.build_dir(pch_key)}"] if pch_key else [])
        run_ninja(folder, tool)
        cache.publish(key, folder, "module.so", {
            "kind": "module", "origin": plan.origin,
            "regions": [b.printed.region.model.site.qualname for b in group],
            "digests": [b.digest for b in group],
            "seconds": round(time.perf_counter() - plan.started, 2)})
    return key


class CacheCleared(BuildInterrupted):
    """`ppy cache clear` removed a build this one uses while it ran: the build is made again, once."""


@contextlib.contextmanager
def _using_shared(cache: Cache, bridge_key: str, pch_key: str | None) -> Iterator[None]:
    """The bridge and header a module compiles against, held so that `ppy cache clear --all` keeps them until
    the module is built; and there still (a clear before the hold removed them: the build starts over)."""
    keys = [bridge_key, *([pch_key] if pch_key else [])]
    with contextlib.ExitStack() as held:
        for key in keys:
            held.enter_context(cache.locked(key, shared=True))
            if cache.valid(key) is None:
                raise CacheCleared("the bridge or precompiled header it compiles against was removed while it built "
                                   "(ppy cache clear --all)")
        yield
