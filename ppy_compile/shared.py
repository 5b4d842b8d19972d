"""The builds every module shares, made once per torch and toolchain: the bridge to torch and the precompiled
header. Each is built under its key's lock. A module build waits for the bridge (3 s), never for the header
(17 s): a module compiles without it until it is made (ppy_compile/compile_units.py)."""

from __future__ import annotations

import contextlib
import functools
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ppy_check import log
from ppy_compile.at_once import at_once, start_thread
from ppy_compile.build_env import compile_jobs, use_pch
from ppy_compile.cache import Cache
from ppy_compile.keys import BUILD_FORMAT, sha
from ppy_compile.progress import building
from ppy_compile import cpp_files
from ppy_compile import toolchain as toolchains  # called through the module: tests stand in a toolchain
from ppy_compile.toolchain import CompileError, CompilerCrash, SilentStop, Toolchain, run_ninja, write_ninja


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

    def key(self, tool: Toolchain) -> str:
        return sha(self.kind, BUILD_FORMAT, cpp_files.digest([self.source]), tool.identity, str(self.level),
                   "soname" if self.output.endswith(".so") else "")


BRIDGE = SharedBuild("bridge", "bridge.cpp", cpp_files.BRIDGE, "ppy_bridge.so", 2,
                     ("c10", "torch_cpu", "torch", "torch_python"), "building the bridge to torch")
# GCC uses a header precompiled at one -O level for any other level above
# -O0 (it checks `__OPTIMIZE__`), so one artifact serves -O1 to -O3; -O0
# modules, a debugging aid, parse the headers themselves.
PCH_LEVEL = 2
PCH = SharedBuild("pch", "ppy_pch.h", cpp_files.PRECOMPILED, "ppy_pch.h.gch", PCH_LEVEL, (),
                  "precompiling torch's headers")


def ensure_shared(cache: Cache, shared: SharedBuild, progress: bool = True) -> str:
    """One shared build, made once under a lock (``progress``: show it as a step of its own)."""
    tool = toolchains.toolchain()
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
            logged_ninja(folder, tool, f"the shared {shared.kind}", f"built the shared {shared.kind} "
                                                                     f"({shared.description})")
            extra: dict[str, Any] = {"kind": shared.kind, "torch": tool.torch_version, "level": shared.level}
            if shared_object:
                extra["soname"] = soname
            cache.publish(key, folder, shared.output, extra)
    return key


def logged_ninja(folder: Path, tool: Toolchain, subject: str, done: str, targets: tuple[str, ...] = ()) -> None:
    """Run a build (its ``targets``, else all of it), and say for PPY_LOG=build that it failed (``subject``: what,
    with its log) or how long it took (``done``: what it built)."""
    started = time.perf_counter()
    try:
        run_ninja(folder, tool, targets)
    except CompileError as error:
        log.emit("build", f"{subject} failed: {log_of(error)}")
        raise
    log.emit("build", f"{done} in {time.perf_counter() - started:.2f}s")


def log_of(error: CompileError) -> str:
    """Where a failed build's full log was kept, as its message says: one line for PPY_LOG=build."""
    text = str(error)
    start = text.find("(full log: ")
    return text[start:text.index(")", start) + 1] if start >= 0 else "no log kept"


def ensure_all_shared(cache: Cache, with_pch: bool) -> tuple[str, str | None]:
    """The bridge, and the precompiled header where asked, both made now (what the benches start from).

    On an empty cache both are missing, and neither needs the other: they build
    at the same time (two compilers, one step shown).
    """
    tool = toolchains.toolchain()
    wanted = [BRIDGE, PCH] if with_pch else [BRIDGE]
    missing = [shared for shared in wanted if cache.valid(shared.key(tool)) is None]
    if len(missing) > 1 and compile_jobs() > 1:
        description = " and ".join(shared.description for shared in missing)
        with building(f"ppy: {description} (once per torch version)"):
            at_once([functools.partial(ensure_shared, cache, shared, False) for shared in missing])
    keys = [ensure_shared(cache, shared) for shared in wanted]
    return keys[0], keys[1] if with_pch else None


def ready_key(cache: Cache, shared: SharedBuild) -> str | None:
    """The key of a shared build already in the cache, or None where it is not (nothing is built)."""
    key = shared.key(toolchains.toolchain())
    return key if cache.valid(key) is not None else None


def ensure_bridge(cache: Cache) -> str:
    return ensure_shared(cache, BRIDGE)


class BridgeBuild:
    """The bridge a build's modules link against: its key at once, the bridge itself by the time a module links.

    Where the cache lacks it, it is built in a thread of its own while the modules compile (they need it only
    to link), which on an empty cache takes its few seconds off the first compiled result.
    """

    def __init__(self, cache: Cache) -> None:
        self.key = BRIDGE.key(toolchains.toolchain())
        self._failed: BaseException | None = None
        self._thread: threading.Thread | None = None
        if cache.valid(self.key) is None:
            thread = threading.Thread(target=self._build, args=(cache,), name="ppy bridge", daemon=True)
            if start_thread(thread):
                self._thread = thread
            else:  # in the wait at exit: built here, first
                self._build(cache)

    @property
    def building(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _build(self, cache: Cache) -> None:
        try:
            ensure_shared(cache, BRIDGE, progress=False)  # said as part of the modules' step
        except BaseException as error:  # raised again where the bridge is needed
            self._failed = error

    def failed_with(self, error: BaseException) -> bool:
        """Whether ``error`` is what stopped the bridge's build (raised again by ``ready``)."""
        return error is self._failed

    def ready(self) -> str:
        """The bridge's key, once it is in the cache; what stopped its build, raised."""
        if self._thread is not None:
            self._thread.join()
        if self._failed is not None:
            raise self._failed
        return self.key


def ensure_pch(cache: Cache, progress: bool = True) -> str:
    """The precompiled header for optimised module builds (its digest is checked once per process)."""
    return ensure_shared(cache, PCH, progress)


def pch_crashes(cache: Cache) -> bool:
    """After a compiler crash: whether the precompiled header alone crashes it (then it is removed, to be rebuilt).

    Its digest vouches for its bytes, not for the compiler reading them: one
    written by a faulty machine, or one this compiler cannot read, passes the
    digest and crashes every module build. An empty unit that includes it tells.
    """
    key = ready_key(cache, PCH) if use_pch() else None
    if key is None:
        return False  # no header to blame: the crash was the compiler's own
    tool = toolchains.toolchain()
    with cache.locked(key), cache.staging(key) as folder:
        (folder / "probe.cpp").write_text('#include "ppy_pch.h"\n', encoding="utf-8")
        write_ninja(folder, tool, "probe.cpp", "probe.so", PCH_LEVEL, ["c10", "torch_cpu"],
                    extra_compile=[f"-I{cache.build_dir(key)}"])
        try:
            run_ninja(folder, tool)
        except (CompilerCrash, SilentStop):  # an empty unit fails only on the header it reads
            cache.discard(key)
            return True
        except CompileError:
            return False
    return False


def check_shared(cache: Cache) -> None:
    """Check the shared builds' digests now (hashing releases the GIL), so that the build finds them checked."""
    try:
        tool = toolchains.toolchain()
        for shared in (BRIDGE, PCH) if use_pch() else (BRIDGE,):
            cache.valid(shared.key(tool))
    except Exception:  # pylint: disable=broad-except
        pass  # the build checks them again, and says what is wrong
