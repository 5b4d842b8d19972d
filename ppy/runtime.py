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
becomes one whose ``__call__`` is the compiled entry itself (``_entry_class``),
which binds and converts the arguments in C and comes back to ``call`` only
for a call it cannot bind, or while an observer watches.
"""

from __future__ import annotations

import errno
import inspect
import os
import sys
import sysconfig
import threading
import types
import warnings
from pathlib import Path
from typing import Any, Callable

from ppy.decorators import Region, source_path
from ppy.errors import BuildError, RegionError
from ppy.loaded import stale_helper
from ppy_check.site import RegionSite
from ppy_check.source import SourceError, read_source

_modules: dict[str, Any] = {}  # source path -> BuiltModule (or the BuildError that stopped it)
_built_from: dict[str, str] = {}  # source path -> the digest of the text its entry in _modules was built from
_lock = threading.RLock()
_prepared: list[Region] = []
# `pytest --ppy-verify` watches every call: it runs the Python body beside the compiled one.
_observer: Callable[[Region, tuple[Any, ...], dict[str, Any]], None] | None = None


def set_observer(observer: Callable[[Region, tuple[Any, ...], dict[str, Any]], None] | None) -> None:
    """Route every compiled call through ``observer`` first (None: back to the compiled entry)."""
    global _observer
    _observer = observer
    for region in _prepared:
        _route(region)


def _route(region: Region) -> None:
    """Calls of the region reach its compiled entry straight from the caller's frame, or, while an observer
    watches, ``Region.__call__`` (the runtime's path, which shows the observer every call)."""
    entry_class = region._entry_class
    region.__class__ = entry_class.__base__ if _observer is not None else entry_class


def _entry_class(region: Region, entry: Any) -> type:
    """A class of this region's own whose ``__call__`` is ``entry``, the compiled C function bound to the
    region's context: CPython's call slot runs it with no Python frame of ppy's between the caller and the
    compiled code. It adds nothing else, so the object's layout, attributes and behaviour stay Region's."""
    import torch  # a compiled region means torch is loaded

    from ppy import dynamo_hooks

    # Dynamo cannot trace a C function: while torch compiles, it traces Region.__call__ in the entry's
    # place, which hands the call to the region's torch operator (ppy.torch_op). torch keeps the entry
    # (it knows it by id) for the life of the process.
    dynamo_hooks.when_loaded(lambda: torch.compiler.substitute_in_graph(entry, skip_signature_check=True)(Region.__call__))
    base = type(region)
    namespace = {"__call__": entry, "__slots__": (), "__module__": base.__module__, "__qualname__": base.__qualname__,
                 "__doc__": base.__doc__}
    return type(base.__name__, (base,), namespace)


def _context(region: Region, signature: inspect.Signature, binds: bool) -> tuple[Any, ...]:
    """What the compiled entry needs (the layout is ppy_bridge's `Context`): the region's code, for the frame
    of a statement that raised; and, for the region object's own entry (``binds``), how to bind a call as
    Python would and where to hand what it does not take."""
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
    )


class RegionFallbackWarning(RuntimeWarning):
    """A region runs its Python body because its compiled form could not be built."""


def strict() -> bool:
    return os.environ.get("PPY_STRICT", "") not in ("", "0")


def _source(region: Region) -> tuple[str, str, str]:
    """The region's file: its path, its text as Python decodes it, and the digest of the bytes read (one read)."""
    path = source_path(region.python)
    if path is None:
        raise BuildError("its source file cannot be found (regions must be defined in a .py file)")
    try:
        source = read_source(path)
    except SourceError as error:
        raise BuildError(f"{Path(path).name}, line {error.line}: {error.message}") from None
    return path, source.text, source.digest


def build_options() -> Any:
    """The build options this process asks for: ppy's own tests set PPY_TESTING_MUTATION to miscompile on purpose."""
    from ppy_compile.options import BuildOptions

    return BuildOptions.parse_mutation(os.environ.get("PPY_TESTING_MUTATION", ""))


class Pending:
    """A file's build running in a thread; its regions run as Python until ``done`` is set."""

    def __init__(self, plan: Any) -> None:
        self.plan = plan  # the regions' findings are known already: a region that breaks the rules still raises
        self.result: Any = None
        self.done = threading.Event()
        if not os.environ.get("PPY_QUIET"):
            print(f"ppy: compiling the regions of {Path(plan.origin).name} in the background; until it is done they "
                  "run as Python", file=sys.stderr, flush=True)
        # Not a daemon: a program that ends first waits for the build, so its next run starts compiled.
        self.thread = threading.Thread(target=self._run, name=f"ppy build of {Path(plan.origin).name}")
        self.thread.start()

    def _run(self) -> None:
        try:
            self.result = _guarded(lambda: _compile_plan(self.plan), self.plan.origin)
        finally:
            self.done.set()
        if isinstance(self.result, BuildError) and not threading.main_thread().is_alive():
            # The program ended first: no later call will warn, so the reason is said here.
            print(f"ppy: the background build of {Path(self.plan.origin).name} failed: {self.result}",
                  file=sys.stderr, flush=True)


def _compile_plan(plan: Any) -> Any:
    from ppy_compile.build import compile_plan

    return compile_plan(plan)


def background() -> bool:
    """Whether a cache miss builds in the background (PPY_BUILD=background, the default) or is waited for."""
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
    from ppy_compile.build import BuiltModule, dependencies_changed, plan_module

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


def prepare(region: Region, wait: bool = True) -> None:
    """Give the region its compiled implementation, or settle it on its Python body (without ``wait``, a build
    that has to start runs in the background, and the region stays unprepared until it is done)."""
    if region._prepared:
        return
    region._prepared = True
    if not region.compile_enabled():
        return
    try:
        path, text, digest = _source(region)
    except (BuildError, OSError, TypeError) as error:
        _fallback(region, str(error))
        return
    if region._defined_from not in (None, (path, digest)):
        # Python runs the text the module was imported from; the C++ would be built from the file's new text.
        _fallback(region, f"{Path(path).name} changed since it was imported, so its compiled code would not be "
                          "the Python that is loaded; import it again (importlib.reload) to compile the new text")
        return
    built = _built(path, text, digest, wait)
    rid = RegionSite.of_function(region.python).key
    if isinstance(built, Pending):
        if rid in built.plan.errors:
            region._prepared = False  # the error repeats on every call, as the rules are still broken
            raise RegionError(region.__qualname__, built.plan.errors[rid])
        if rid in built.plan.silenced:
            _fallback(region, built.plan.silenced[rid])
            return
        region._prepared = False  # each call looks again, until the build is done
        return
    if isinstance(built, BuildError):
        _fallback(region, str(built))
        return
    if rid in built.errors:
        region._prepared = False  # the error repeats on every call, as the rules are still broken
        raise RegionError(region.__qualname__, built.errors[rid])
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
    # Both are the module's function bound to a context: `_compiled` takes every parameter positionally
    # and answers NotImplemented to what it does not take (the runtime, verify and torch's operator call
    # it); the region object's own entry binds as Python does.
    entry = built.bridge.bound_entry
    signature = inspect.signature(region.python)
    region._compiled = entry(function, _context(region, signature, binds=False))
    region._cpp_source_path = built.cpp_sources.get(rid)
    region._cpp_symbol = built.symbols.get(rid)
    region._effects = built.effects.get(rid, {})
    region._signature = signature
    region._entry_class = _entry_class(region, entry(function, _context(region, signature, binds=True)))
    _prepared.append(region)
    _route(region)


def _fallback(region: Region, reason: str) -> None:
    region.fallback_reason = reason
    message = f"ppy: region `{region.__qualname__}` runs as Python: {reason}"
    if strict():
        region._prepared = False  # strict raises on every call, not just the first
        raise BuildError(message)
    filename, line = _caller()
    # Once per region (it is prepared once), at the user's line rather than ppy's own.
    warnings.warn_explicit(message, RegionFallbackWarning, filename, line)


_PPY_FOLDERS = tuple(str(Path(__file__).resolve().parent.parent / package) for package in ("ppy", "ppy_check", "ppy_compile"))
_STDLIB = sysconfig.get_paths()["stdlib"]


def _caller() -> tuple[str, int]:
    """The user's line that reached the region: the first frame outside ppy and the standard library."""
    frame = inspect.currentframe()
    while frame is not None:
        filename = frame.f_code.co_filename
        ours = filename.startswith(_PPY_FOLDERS) or filename.startswith("<frozen")
        stdlib = filename.startswith(_STDLIB) and "site-packages" not in filename
        if not ours and not stdlib:
            return filename, frame.f_lineno
        frame = frame.f_back
    return "<unknown>", 0


def call(region: Region, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    prepare(region, wait=False)
    compiled = region._compiled
    if compiled is None:
        return region.python(*args, **kwargs)
    if _observer is not None:
        _observer(region, args, kwargs)
    bound = region._signature.bind(*args, **kwargs)
    bound.apply_defaults()
    # The compiled function takes every parameter positionally, keyword-only ones included.
    result = compiled(*bound.arguments.values())
    if result is NotImplemented:
        # An argument is not exactly its annotated type (an int for a bool, a list for a tuple,
        # a tensor subclass): only the Python body gives Python's answer.
        return region.python(*args, **kwargs)
    return result
