"""What a region call runs: the compiled function once built, its Python body otherwise.

The first call of any region in a file builds (or loads from the cache) every
region of that file at once. A region that cannot be built warns once, naming
itself and the reason, and runs as Python; ``PPY_STRICT=1`` makes that an
error. A region that breaks the rules raises ``RegionError``.
"""

from __future__ import annotations

import inspect
import os
import sysconfig
import threading
import warnings
from pathlib import Path
from typing import Any, Callable

from ppy.decorators import Region
from ppy.errors import BuildError, RegionError
from ppy_check.site import RegionSite

_modules: dict[str, Any] = {}  # source path -> BuiltModule (or the BuildError that stopped it)
_lock = threading.RLock()
_prepared: list[Region] = []
# `pytest --ppy-verify` watches every call: it runs the Python body beside the compiled one.
_observer: Callable[[Region, tuple[Any, ...], dict[str, Any]], None] | None = None


def set_observer(observer: Callable[[Region, tuple[Any, ...], dict[str, Any]], None] | None) -> None:
    """Route every compiled call through ``observer`` first (None: back to the fast path)."""
    global _observer
    _observer = observer
    for region in _prepared:
        region._fast = None if observer is not None else region._compiled


class RegionFallbackWarning(RuntimeWarning):
    """A region runs its Python body because its compiled form could not be built."""


def strict() -> bool:
    return os.environ.get("PPY_STRICT", "") not in ("", "0")


def _source(region: Region) -> tuple[str, str]:
    python = inspect.unwrap(region.python)
    path = inspect.getsourcefile(python)
    if path is None or not os.path.exists(path):
        raise BuildError("its source file cannot be found (regions must be defined in a .py file)")
    return path, Path(path).read_text(encoding="utf-8")


def build_options() -> Any:
    """The build options this process asks for: ppy's own tests set PPY_TESTING_MUTATION to miscompile on purpose."""
    from ppy_compile.options import BuildOptions

    return BuildOptions.parse_mutation(os.environ.get("PPY_TESTING_MUTATION", ""))


def _built(path: str, text: str) -> Any:
    from ppy_compile.build import build_module

    with _lock:
        found = _modules.get(path)
        if found is None:
            try:
                found = build_module(path, text, options=build_options())
            except ModuleNotFoundError as error:
                missing = error.name or "a package"
                found = BuildError(f"{missing} is not installed: the compiler needs it "
                                   f"(pip install 'ppy-regions[torch]')")
            except BuildError as error:
                found = error
            except Exception as error:  # a ppy bug must not take the user's program down
                found = BuildError(f"ppy failed while compiling {Path(path).name} ({type(error).__name__}: {error}); "
                                   "this is a ppy bug worth reporting")
            _modules[path] = found
        return found


def prepare(region: Region) -> None:
    """Give the region its compiled implementation, or settle it on its Python body."""
    if region._prepared:
        return
    region._prepared = True
    if not region.compile_enabled():
        return
    try:
        path, text = _source(region)
    except (BuildError, OSError, TypeError, UnicodeDecodeError) as error:
        _fallback(region, str(error))
        return
    built = _built(path, text)
    if isinstance(built, BuildError):
        _fallback(region, str(built))
        return
    rid = RegionSite.of_function(region.python).key
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
    region._compiled = function
    region._cpp_source_path = built.cpp_source
    region._cpp_symbol = built.symbols.get(rid)
    region._effects = built.effects.get(rid, {})
    region._signature = inspect.signature(region.python)
    # The fast path passes positional arguments straight through: only sound when
    # every parameter can be given positionally.
    kinds = {p.kind for p in region._signature.parameters.values()}
    positional = kinds <= {inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD}
    region._arity = len(region._signature.parameters) if positional else -1
    region._fast = function if _observer is None else None
    _prepared.append(region)


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
    prepare(region)
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
