"""What a region call runs: the compiled function once built, its Python body otherwise.

The first call of any region in a file builds (or loads from the cache) every
region of that file at once. A region that cannot be built warns once, naming
itself and the reason, and runs as Python; ``PPY_STRICT=1`` makes that an
error. A region that breaks the rules raises ``RegionError``.

On a cache miss the build runs in a background thread (``PPY_BUILD=background``,
the default): the file's regions run their Python bodies, Python's own answers,
until it is done, and the compiled code from the next call after. A new
machine's first result is then as quick as eager PyTorch's, and the one-time
work (the bridge, the precompiled header) happens beside the program instead
of before it. ``PPY_BUILD=wait``, ``PPY_STRICT``, ``region.build()`` and
``pytest --ppy-verify`` wait for the build instead.

Once built, a region object's calls no longer come through here: its class
becomes one whose ``__call__`` is the compiled entry itself (``Region.route``),
which binds and converts the arguments in C and comes back to ``call`` only
for a call it cannot bind, or while an observer watches.
"""

from __future__ import annotations

import atexit
import errno
import functools
import inspect
import os
import sys
import sysconfig
import threading
import time
import types
import weakref
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any
from collections.abc import Callable

from ppy import decorators
from ppy.decorators import STALE_BYTECODE, Compiled, Region, source_path
from ppy import log
from ppy import profiling as _profile
from ppy.errors import BuildError, RegionError
from ppy.guard import Guard, Rebound, prove
from ppy.loaded import stale_helper
from ppy_check.site import RegionSite
from ppy_check.source import SourceError, read_source

if TYPE_CHECKING:
    from ppy_compile.options import BuildOptions

_modules: dict[str, Any] = {}  # source path -> BuiltModule (or the BuildError that stopped it)
_built_from: dict[str, str] = {}  # source path -> the digest of the text its entry in _modules was built from
_lock = threading.RLock()
_prepared: list[Region[Any, Any]] = []
# `pytest --ppy-verify` watches every call: it runs the Python body beside the compiled one.
_observer: Callable[[Region[Any, Any], tuple[Any, ...], dict[str, Any]], None] | None = None


def set_observer(observer: Callable[[Region[Any, Any], tuple[Any, ...], dict[str, Any]], None] | None) -> None:
    """Route every compiled call through ``observer`` first (None: back to the compiled entry)."""
    global _observer
    _observer = observer
    for region in _prepared:
        _route(region)


def _route(region: Region[Any, Any]) -> None:
    """Calls of the region reach its compiled entry straight from the caller's frame, or, while an observer
    watches, ``Region.__call__`` (the runtime's path, which shows the observer every call)."""
    # PPY_LOG=calls wants every call seen, so it takes the runtime's path too (costly, only when asked).
    region.route(watched=_observer is not None or log.on("calls") or _profile.active is not None
                 or _dynamo_needs_python_call)


# Dynamo before torch 2.13 does not trace a call of an object whose class's __call__ is a C function, even one
# substituted (torch.compiler.substitute_in_graph): "does not know how to trace method `__call__` of class
# Region". There, once torch._dynamo is loaded, every region takes the runtime's path (Region.__call__, a
# Python frame of about 2 us a call), which Dynamo traces to the region's operator.
_dynamo_needs_python_call = False
_old_dynamo_hooked = False


def _old_dynamo_loaded() -> None:
    global _dynamo_needs_python_call
    _dynamo_needs_python_call = True
    for region in list(_prepared):
        _route(region)


def _dynamo_traces_c_calls() -> bool:
    import torch

    release = tuple(int(part) for part in str(torch.__version__).split("+")[0].split(".")[:2] if part.isdigit())
    return release >= (2, 13)


def _entry_class(region: Region[Any, Any], entry: Any) -> type:
    """The region's class whose ``__call__`` is ``entry`` (Region.entry_class), taught to Dynamo."""
    import torch  # a compiled region means torch is loaded

    from ppy import dynamo_hooks  # imports torch's hooks: only once a region is compiled

    # Dynamo cannot trace a C function: while torch compiles, it traces Region.__call__ in the entry's
    # place, which hands the call to the region's torch operator (ppy.torch_op). torch keeps the entry
    # (it knows it by id) for the life of the process.
    def teach_dynamo() -> None:
        torch.compiler.substitute_in_graph(entry, skip_signature_check=True)(Region.__call__)

    dynamo_hooks.when_loaded(teach_dynamo)
    global _old_dynamo_hooked
    if not _old_dynamo_hooked and not _dynamo_traces_c_calls():
        _old_dynamo_hooked = True
        dynamo_hooks.when_loaded(_old_dynamo_loaded)
    return region.entry_class(entry)


def _context(region: Region[Any, Any], signature: inspect.Signature, binds: bool, guards: list[Guard],
             rebound: Callable[[], bool]) -> tuple[Any, ...]:
    """What the compiled entry needs (the layout is ppy_bridge's `Context`): the region's code, for the frame
    of a statement that raised; for the region object's own entry (``binds``), how to bind a call as
    Python would and where to hand what it does not take; and the names the build assumed, which each call
    checks (``guards``, shared by both entries), with what to do when one was rebound."""
    parameters = list(signature.parameters.values())
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return (
        region.python,
        binds,
        types.MethodType(Region.__call__, region),  # the runtime's path: Python's answers, torch's operator
        tuple(sys.intern(p.name) for p in parameters),
        sum(p.kind in positional for p in parameters),
        sum(p.kind is inspect.Parameter.POSITIONAL_ONLY for p in parameters),
        tuple(p.default for p in parameters),
        inspect.Parameter.empty,  # the default of a parameter that has none
        guards,
        rebound,
    )


class RegionFallbackWarning(RuntimeWarning):
    """A region runs its Python body because its compiled form could not be built."""


def strict() -> bool:
    return os.environ.get("PPY_STRICT", "") not in ("", "0")


def _source(region: Region[Any, Any]) -> tuple[str, str, str]:
    """The region's file: its path, its text as Python decodes it, and the digest of the bytes read (one read)."""
    path = source_path(region.python)
    if path is None:
        raise BuildError("its source file cannot be found (regions must be defined in a .py file)")
    try:
        source = read_source(path)
    except SourceError as error:
        raise BuildError(f"{Path(path).name}, line {error.line}: {error.message}") from None
    return path, source.text, source.digest


# What every build of this process is asked for; None: the regions as written. Only ppy's own tests pass
# other options (a deliberate miscompilation, to prove the verifier catches it).
_build_options: BuildOptions | None = None


def set_build_options(options: BuildOptions | None) -> None:
    """Build every region of this process with ``options`` from now on (None: the default options again)."""
    global _build_options
    _build_options = options


def build_options() -> BuildOptions:
    """The options this process builds its regions with."""
    if _build_options is not None:
        return _build_options
    from ppy_compile.options import BuildOptions  # the compiler: only once a region is built

    return BuildOptions()


class Pending:
    """A file's build running in a thread; its regions run as Python until ``done`` is set."""

    def __init__(self, plan: Any) -> None:
        self.plan = plan  # the regions' findings are known already: a region that breaks the rules still raises
        self.result: Any = None
        self.done = threading.Event()
        if not os.environ.get("PPY_QUIET"):
            print(f"ppy: compiling the regions of {Path(plan.origin).name} in the background; until it is done they "
                  "run as Python", file=sys.stderr, flush=True)
        # A daemon, so that the interpreter's exit does not join it unasked: `_finish_at_exit` waits for it
        # instead, saying so, and Ctrl-C skips that wait.
        self.thread = threading.Thread(target=self._run, name=f"ppy build of {Path(plan.origin).name}", daemon=True)
        _finish_builds_at_exit()
        _start(self.thread, self._run)
        _started.append(self)  # once running: a thread that never started would be waited for at exit forever

    def _run(self) -> None:
        try:
            self.result = _guarded(lambda: _compile_plan(self.plan), self.plan.origin)
            if isinstance(self.result, BuildError) and not threading.main_thread().is_alive() \
                    and not _skipped.is_set():
                # The program ended first: no later call will warn, so the reason is said here, before the wait
                # at exit is let go (after it, the interpreter may end with the line unwritten).
                from ppy_compile.toolchain import BuildInterrupted

                verb = "stopped" if isinstance(self.result, BuildInterrupted) else "failed"
                print(f"ppy: the background build of {Path(self.plan.origin).name} {verb}: {self.result}",
                      file=sys.stderr, flush=True)
        finally:
            self.done.set()

    def interrupted_by_fork(self) -> None:
        """In a forked child, where no thread runs this build: done, with a result that records nothing."""
        from ppy_compile.toolchain import BuildInterrupted

        self.result = BuildInterrupted(f"the process forked while {Path(self.plan.origin).name} was building; "
                                       "the child builds it again or uses the parent's build")
        self.done = threading.Event()  # the parent's may have been held by a thread the child does not have
        self.done.set()


class Precompiling:
    """The precompiled header, made in a thread of its own after a build that compiled a module without it
    (``BuiltModule.precompile_next``): that build's regions run compiled meanwhile, and the builds after it use
    the header. One at a time; finished at exit as a background build is."""

    def __init__(self) -> None:
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, name="ppy precompiled header", daemon=True)
        _finish_builds_at_exit()
        _start(self.thread, self._run)
        _started.append(self)

    def _run(self) -> None:
        try:
            _precompile_now()
        finally:
            self.done.set()

    def interrupted_by_fork(self) -> None:
        self.done = threading.Event()
        self.done.set()


def _make_pch() -> None:
    from ppy_compile.cache import Cache
    from ppy_compile.shared import ensure_pch

    # No step shown: it runs beside the program's own output (a spinner would cut into it); the wait at exit
    # says it in its own line.
    ensure_pch(Cache.open(), progress=False)


def _precompile_now() -> None:
    """Make the header here; one that fails is said once and not tried again by this process."""
    from ppy_compile.toolchain import BuildInterrupted

    global _pch_failed
    failed = _guarded(_make_pch, "torch's headers")
    if isinstance(failed, BuildInterrupted):  # not made here (another process makes it, a signal): no failure
        return
    if isinstance(failed, BuildError):
        _pch_failed = True
        if not os.environ.get("PPY_QUIET") and not _skipped.is_set():
            print(f"ppy: precompiling torch's headers failed, and builds go on without them: {failed}",
                  file=sys.stderr, flush=True)


def _start(thread: threading.Thread, run: Callable[[], None]) -> None:
    """Start ``thread``, or, where no thread can start (at_once.start_thread), do its work here."""
    from ppy_compile.at_once import start_thread  # the compiler: only once a region is built

    if not start_thread(thread):
        run()


_precompiling: Precompiling | None = None
_pch_failed = False  # this process's header failed to build: builds go on without it, and it is not tried again
_pch_at_exit = False  # a build that finished while the program exited went without the header: made in that wait


def _precompile_after(result: Any) -> None:
    """Start the precompiled header where the build that made ``result`` went without it: in a thread while the
    program runs, in the wait at exit once it has ended (which then makes it, as it finishes the builds)."""
    global _precompiling, _pch_at_exit
    if not getattr(result, "precompile_next", False) or _pch_failed:
        return
    if not threading.main_thread().is_alive():
        _pch_at_exit = True
    elif _precompiling is None or _precompiling.done.is_set():
        _precompiling = Precompiling()


_started: list[Pending | Precompiling] = []  # every build this process started in a thread, to finish at exit
_skipped = threading.Event()  # Ctrl-C skipped the wait at exit: the builds left are not reported
_at_exit_registered = False


def _finish_builds_at_exit() -> None:
    global _at_exit_registered
    if not _at_exit_registered:
        _at_exit_registered = True
        atexit.register(_finish_at_exit)


def _finish_at_exit() -> None:
    """After the program's last output: let the background builds finish, so that the next run starts compiled,
    saying so in one line; never wait for another process's build; and let Ctrl-C skip the wait, leaving nothing
    that later reads as a failed build (a build stopped by a signal records nothing)."""
    from ppy_compile.cache import end_waits
    from ppy_compile.progress import hush, say

    global _pch_at_exit
    end_waits()  # a build waiting on another process's lock gives up now: that process finishes it
    settled = time.monotonic() + 0.3  # the time a build waiting on a lock takes to notice, and give up
    running = [pending for pending in _started if not pending.done.wait(max(0.0, settled - time.monotonic()))]
    if not running and not _pch_at_exit:
        return
    header_said = False
    try:  # a Ctrl-C may land while a line is printed, as well as during the wait
        if running and not all(isinstance(pending, Precompiling) for pending in running):
            count = len(running)
            say(f"ppy: finishing {count} build{'s' if count != 1 else ''} so the next run starts compiled "
                "(Ctrl-C skips)")
        while running or _pch_at_exit:
            for pending in running:
                if not header_said and isinstance(pending, Precompiling) and not pending.done.is_set():
                    header_said = _say_header()
                while not pending.done.wait(0.5):
                    pass
            if _pch_at_exit:  # a build that finished in this wait went without it: made here, no thread needed
                _pch_at_exit = False
                if not _pch_failed:
                    header_said = header_said or _say_header()
                    _precompile_now()
            running = [pending for pending in _started if not pending.done.is_set()]
    except KeyboardInterrupt:
        _skipped.set()
        hush("ppy: skipped; the next run builds them")  # the last line: no build's own after it


def _say_header() -> bool:
    from ppy_compile.progress import say

    say("ppy: finishing torch's precompiled header, so that later builds are faster (Ctrl-C skips)")
    return True


def _forget_builds_in_child() -> None:
    """A forked child has none of its parent's threads: the builds they ran will never be done here. The child
    gets fresh locks, and each unfinished build is settled as interrupted and forgotten, so that the child's
    next call of its regions finds the parent's build in the cache, or builds the file itself."""
    global _lock, _preparing, _preparing_guard
    _lock, _preparing, _preparing_guard = threading.RLock(), weakref.WeakKeyDictionary(), threading.Lock()
    for path, found in list(_modules.items()):
        if isinstance(found, Pending) and not found.done.is_set():
            found.interrupted_by_fork()
            del _modules[path]
            _built_from.pop(path, None)
    for pending in _started:
        if not pending.done.is_set():
            pending.interrupted_by_fork()
    _started.clear()


os.register_at_fork(after_in_child=_forget_builds_in_child)


def _compile_plan(plan: Any) -> Any:
    from ppy_compile.pipeline import compile_plan  # the compiler: only once a region is built

    built = compile_plan(plan)
    _precompile_after(built)
    return built


# A mode set by the program rather than its environment: `pytest --ppy-verify` must have every call compiled.
_build_mode: str | None = None


def set_build_mode(mode: str | None) -> None:
    """Build as ``mode`` ("wait" or "background") whatever PPY_BUILD says; None: as PPY_BUILD says again."""
    global _build_mode
    if mode not in (None, "wait", "background"):
        raise ValueError(f"build mode {mode!r} is neither 'background' nor 'wait'")
    _build_mode = mode


def background() -> bool:
    """Whether a cache miss builds in the background (PPY_BUILD=background, the default) or is waited for."""
    if _build_mode is not None:
        return _build_mode == "background" and not strict()
    mode = os.environ.get("PPY_BUILD", "background")
    if mode not in ("background", "wait"):
        warnings.warn(f"ppy: PPY_BUILD={mode!r} is neither 'background' nor 'wait'; waiting for builds", stacklevel=2)
        return False
    return mode == "background" and not strict()


# The machine, not ppy, stopped a build: disk full, quota, memory, descriptors, a read-only cache.
_MACHINE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.ENOMEM, errno.EMFILE, errno.ENFILE, errno.EROFS})


def _guarded(step: Callable[[], Any], path: str) -> Any:
    """A build step's result, or the BuildError that says why there is none."""
    try:
        return step()
    except ModuleNotFoundError as error:
        missing = error.name or "a package"
        return BuildError(f"{missing} is not installed: the compiler needs it (pip install 'ppy-regions[torch]')")
    except BuildError as error:
        return error
    except Exception as error:  # a ppy bug must not take the user's program down
        if isinstance(error, OSError) and error.errno in _MACHINE_ERRNOS:  # nor is a full disk a ppy bug
            from ppy_compile.toolchain import BuildInterrupted

            return BuildInterrupted(f"the build of {Path(path).name} stopped: {error.strerror}; the next process "
                                    "that runs its regions tries again")
        return BuildError(f"ppy failed while compiling {Path(path).name} ({type(error).__name__}: {error}); "
                          "this is a ppy bug worth reporting")


def _built(path: str, text: str, digest: str, wait: bool = True) -> Any:
    """A file's BuiltModule or BuildError (``digest``: its text's); without ``wait``, a Pending build where the
    cache misses. A file reloaded after an edit is built again: the regions defined since run its new text."""
    from ppy_compile.index import dependencies_changed  # the compiler: only once a region is built
    from ppy_compile.load import BuiltModule
    from ppy_compile.pipeline import plan_module

    with _lock:
        found: Any = _modules.get(path) if _built_from.get(path) == digest else None
        if isinstance(found, BuiltModule) and dependencies_changed(found.dependencies):
            found = None  # a helper's file was edited since: the regions imported from now on inline the edit
        if found is None:
            planned = _guarded(lambda: plan_module(path, text, options=build_options()), path)
            if isinstance(planned, (BuiltModule, BuildError)):
                found = planned
            elif wait or not background() or not planned.regions:
                found = _guarded(lambda: _compile_plan(planned), path)
            else:
                found = Pending(planned)
            _modules[path], _built_from[path] = found, digest
    if isinstance(found, Pending):
        if not wait and not found.done.is_set():
            return found
        found.done.wait()
        result = found.result
        with _lock:
            if _modules.get(path) is found:  # not replaced meanwhile by the build of a newer text
                _modules[path] = result
        found = result
    return found


# One lock per region, held while it is prepared: a thread that must have the compiled code (``wait``) waits
# for the thread preparing it; one that need not runs the Python body meanwhile.
_preparing: weakref.WeakKeyDictionary[Region[Any, Any], threading.RLock] = weakref.WeakKeyDictionary()
_preparing_guard = threading.Lock()


def prepare(region: Region[Any, Any], wait: bool = True) -> None:
    """Give the region its compiled implementation, or settle it on its Python body (without ``wait``, a build
    that has to start runs in the background, and the region stays unprepared until it is done)."""
    if region.prepared:
        return
    with _preparing_guard:
        preparing = _preparing.setdefault(region, threading.RLock())
    if not preparing.acquire(blocking=wait):
        return  # another thread prepares it: this call runs as Python
    try:
        if not region.prepared:
            _prepare(region, wait)
    finally:
        preparing.release()


def _prepare(region: Region[Any, Any], wait: bool) -> None:
    """As ``prepare``; the region is marked prepared only once settled (compiled, or on its Python body for
    good), so that a thread finding it marked finds its state complete."""
    if not region.compile_enabled():
        region.settle_python()
        return
    try:
        path, text, digest = _source(region)
    except (BuildError, OSError, TypeError) as error:
        _fallback(region, str(error))
        return
    if region.defined_from == (path, STALE_BYTECODE):
        _fallback(region, f"Python runs it from a bytecode cache of other text than {Path(path).name} holds (the "
                          "file was rewritten with its size and modification time put back); touch the file or "
                          "delete its __pycache__, then run again")
        return
    if region.defined_from not in (None, (path, digest)):
        # Python runs the text the module was imported from; the C++ would be built from the file's new text.
        _fallback(region, f"{Path(path).name} changed since it was imported, so its compiled code would not be "
                          "the Python that is loaded; import it again (importlib.reload) to compile the new text")
        return
    # A build started in the background before the mode became "wait" is waited for now, too.
    built = _built(path, text, digest, wait or not background())
    rid = RegionSite.of_function(region.python).key
    if isinstance(built, Pending):
        if rid in built.plan.errors:
            raise RegionError(region.__qualname__, built.plan.errors[rid])
        if rid in built.plan.silenced:
            _fallback(region, built.plan.silenced[rid])
            return
        return  # each call looks again, until the build is done
    if isinstance(built, BuildError):
        _fallback(region, str(built))
        return
    if rid in built.errors:
        raise RegionError(region.__qualname__, built.errors[rid])  # on every call: the rules are still broken
    if rid in built.fallbacks:
        _fallback(region, built.fallbacks[rid])
        return
    function = built.functions.get(rid)
    if function is None:
        _fallback(region, "it was not found among the regions of its file")
        return
    stale = stale_helper(region, built.dependencies)
    if stale is not None:
        _fallback(region, f"{Path(stale).name} changed since the functions the region calls from it were imported, "
                          "so its compiled code would not be the Python that is loaded; import that file again, then "
                          f"{Path(path).name} (importlib.reload)")
        return
    signature = inspect.signature(region.python)
    reads = built.instances.get(rid)
    reader = None
    if reads is not None:
        from ppy.instance import InstanceReader

        try:
            reader = InstanceReader.of(next(iter(signature.parameters)), reads["reads"], reads["classes"],
                                       region.python.__globals__, [(path, name) for path, name in reads.get("methods", [])],
                                       built.bridge.instance_reader,
                                       [(path, int(count)) for path, count in reads.get("lengths", [])],
                                       built.bridge.type_version)
        except LookupError as error:
            _fallback(region, str(error))
            return
    # The files of the classes a method region inlined lend their modules' names to the proof, as a helper's do.
    lent = reader.namespaces() if reader is not None else {}
    assumed = built.assumptions.get(rid)
    try:
        if assumed is None:
            raise Rebound("its build recorded no names it assumed, so none could be proved")
        helpers: dict[str, types.CodeType] = {}
        guards = prove(region, assumed, helpers, lent)
    except Rebound as why:
        _fallback(region, _rebound_reason(why))
        return
    # Both are the module's function bound to a context: `compiled` takes every parameter positionally
    # and answers NotImplemented to what it does not take (the runtime, verify and torch's operator call
    # it); the region object's own entry binds as Python does.
    entry = built.bridge.bound_entry
    rebound = _when_rebound(region, assumed, guards, helpers, lent)
    if reader is not None:
        # Every call goes through the runtime's path (Region.__call__): the instance's reads and checks are Python.
        reader = reader.taking(entry(function, _context(region, signature, False, guards, rebound)))
        region.settle_compiled(Compiled(
            entry=reader.entry, signature=signature,
            cpp_source_path=built.cpp_sources.get(rid), cpp_symbol=built.symbols.get(rid),
            effects=built.effects.get(rid, {}), instance=reader,
            method_call=_method_call(region, built.bridge.instance_caller(
                reader.read_all, reader.raw, len(signature.parameters) - 1)), guards=guards))
        _prepared.append(region)
        _route(region)
        return
    region.settle_compiled(Compiled(
        entry=entry(function, _context(region, signature, False, guards, rebound)),
        signature=signature,
        cpp_source_path=built.cpp_sources.get(rid),
        cpp_symbol=built.symbols.get(rid),
        effects=built.effects.get(rid, {}), guards=guards,
        entry_class=_entry_class(region, entry(function, _context(region, signature, True, guards, rebound)))))
    _prepared.append(region)
    _route(region)


def _method_call(region: Region[Any, Any], fast: Callable[..., Any]) -> Callable[..., Any]:
    """A method region's call from an instance, while nothing watches its calls: ``fast`` (the bridge's
    ``instance_caller``) reads the instance and calls the compiled entry in one C call. A call given by keyword,
    one torch traces, and one the reads or the entry decline take Region.__call__, the runtime's path, which says
    why."""
    slow = Region.__call__

    def call(instance: Any, *args: Any, **kwargs: Any) -> Any:
        if not kwargs and not decorators._compiling():  # the tracer attach_tracer set
            result = fast(instance, *args)
            if result is not NotImplemented:
                return result
        return slow(region, instance, *args, **kwargs)

    return decorators.own_code(call, region)


def _rebound_reason(why: Exception) -> str:
    return f"{why}; Python reads it at every call and the compiled code would not (pass a value that varies as a parameter)"


def _when_rebound(region: Region[..., Any], assumed: list[list[str]], guards: list[Guard],
                  helpers: dict[str, types.CodeType], lent: dict[str, dict[str, Any]]) -> Callable[[], bool]:
    """What the entry calls when a name it guards holds another object than was proved: the names are proved
    again, and where all still hold (``mod.EPS = 1e-5`` again, a new float of the same value) the compiled code
    goes on with the new objects; otherwise the region runs its Python body from now on, with one warning."""
    def rebound() -> bool:
        try:
            guards[:] = prove(region, assumed, helpers, lent)
            return True
        except Exception as why:  # pylint: disable=broad-except
            with _lock:
                if region.compiled is not None:
                    region.drop_compiled()
                    if region in _prepared:
                        _prepared.remove(region)
            _fallback(region, _rebound_reason(why))
            return False

    return rebound


def _fallback(region: Region[Any, Any], reason: str) -> None:
    region.fallback_reason = reason
    log.emit("fallback", f"region `{region.__qualname__}` runs as Python: {reason}")
    message = f"ppy: region `{region.__qualname__}` runs as Python: {reason}"
    if strict():
        raise BuildError(message)  # on every call, not just the first
    region.settle_python()
    filename, line = _caller()
    # Once per region (it is prepared once), at the user's line rather than ppy's own.
    warnings.warn_explicit(message, RegionFallbackWarning, filename, line)


_PPY_FOLDERS = tuple(str(Path(__file__).resolve().parent.parent / package) for package in ("ppy", "ppy_check", "ppy_compile"))


@functools.cache
def _stdlib() -> str:
    """Asked for only when a region falls back: sysconfig's paths take a while, and `import ppy` imports this."""
    return sysconfig.get_paths()["stdlib"]


def _caller() -> tuple[str, int]:
    """The user's line that reached the region: the first frame outside ppy, torch and the standard library."""
    frame = inspect.currentframe()
    torch_module = sys.modules.get("torch")
    # A module region is called through nn.Module.__call__: the user's line is the one that called the module.
    torch_folder = str(Path(torch_module.__file__).parent) if torch_module is not None and torch_module.__file__ else None
    while frame is not None:
        filename = frame.f_code.co_filename
        ours = filename.startswith(_PPY_FOLDERS) or filename.startswith("<frozen") or \
            (torch_folder is not None and filename.startswith(torch_folder))
        stdlib = filename.startswith(_stdlib()) and "site-packages" not in filename
        if not ours and not stdlib:
            return filename, frame.f_lineno
        frame = frame.f_back
    return "<unknown>", 0


def call(region: Region[Any, Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    recorder = _profile.active
    if recorder is not None:
        _declined.flag = False
        start = time.perf_counter()
        result = _call(region, args, kwargs)
        # Compiled when the region has compiled code and this call was not declined to the Python body.
        compiled = region.compiled is not None and not _declined.flag
        recorder.record(region.__qualname__, compiled, time.perf_counter() - start)
        return result
    return _call(region, args, kwargs)


_declined = threading.local()  # set by a declined call, read by the profile (only while one is active)


def _reroute() -> None:
    with _lock:
        for region in list(_prepared):
            _route(region)


_profile.reroute = _reroute


def _call(region: Region[Any, Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    prepare(region, wait=False)
    form = region.compiled_form
    if form is None:
        if log.enabled:
            log.emit("calls", f"{region.__qualname__}: python")
        if _observer is not None:
            _observer(region, args, kwargs)  # `--ppy-verify` counts a call the Python body answered unchecked
        return region.python(*args, **kwargs)
    if _observer is not None:
        _observer(region, args, kwargs)
    reader = form.instance
    if reader is not None and not kwargs and len(args) == len(form.signature.parameters):
        values = list(args)  # every parameter given positionally (what nn.Module's call makes): nothing to bind
    else:
        bound = form.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        # The compiled function takes every parameter positionally, keyword-only ones included.
        values = list(bound.arguments.values())
    if reader is not None:
        taken = reader.arguments(values.pop(0))
        if not isinstance(taken, tuple):
            # While torch traces (make_fx patches nn.Module's `__call__` around the body it records), the body is
            # what it records: no warning is due.
            if _traced(values):
                _declined.flag = True
            else:
                _instance_declined(region, taken)
            return region.python(*args, **kwargs)
        values.extend(taken)
        result = reader.raw(*values)
    else:
        result = form.entry(*values)
    if result is NotImplemented and reader is not None:
        if not _traced(values):
            _instance_declined(region, reader.declined(values[len(values) - len(reader.reads):]))
        else:
            _declined.flag = True
        return region.python(*args, **kwargs)
    if result is NotImplemented:
        # An argument is not exactly its annotated type (an int for a bool, a list for a tuple,
        # a tensor subclass): only the Python body gives Python's answer. The C entry hands such a call
        # here too, so this is where every per-call decline is seen.
        if log.enabled:
            kinds = ", ".join(type(value).__name__ for value in values)
            log.emit_once("fallback", f"{region.__qualname__}:{kinds}",
                          f"region `{region.__qualname__}` ran as Python for a call its compiled code declined "
                          f"(argument types {kinds}; an argument not exactly its annotated type)")
            log.emit("calls", f"{region.__qualname__}: python (declined)")
        _declined.flag = True
        return region.python(*args, **kwargs)
    if log.enabled:
        log.emit("calls", f"{region.__qualname__}: compiled")
    return result


def _traced(values: list[Any]) -> bool:
    """Whether torch is tracing this call: a value is one of torch's own tracing tensors (a fake tensor, a functional
    one), as when a method region's operator runs the body of another that it calls on a stand-in of its instance.
    Its Python body is then what torch traces, and no warning is due."""
    return any(type(value).__module__.startswith("torch._subclasses.") for value in values
               if isinstance(value, _torch_tensor()))


def _torch_tensor() -> type:
    import torch  # loaded already: a method region's instance is a module of it

    return torch.Tensor


class RegionDeclinedWarning(RuntimeWarning):
    """A method region's call runs its Python body: its instance is not what the build assumed."""


_declined_once: set[tuple[str, str, str]] = set()


def _instance_declined(region: Region[Any, Any], mismatch: Any) -> None:
    """One warning per region and reason (``mismatch``: ppy.instance.Mismatch); every such call is Python's."""
    _declined.flag = True
    message = f"ppy: region `{region.__qualname__}` ran as Python for this call: `{mismatch.path}`: {mismatch.why}"
    log.emit_once("fallback", f"{region.__qualname__}:{mismatch.path}:{mismatch.why}", message)
    if strict():
        raise BuildError(message)
    key = (region.__qualname__, mismatch.path, mismatch.why)
    with _lock:
        if key in _declined_once:
            return
        _declined_once.add(key)
    filename, line = _caller()
    warnings.warn_explicit(message, RegionDeclinedWarning, filename, line)


def created(region: Region[Any, Any]) -> None:
    """A region was made: once torch is loaded, its calls must see when torch compiles or exports."""
    if not decorators.tracer_attached() and "torch" in sys.modules:
        from ppy import torch_op  # imports torch: only for a program that loaded it

        torch_op.install()


decorators.attach_runtime(decorators.Runtime(call=call, prepare=prepare, created=created))
