"""`@ppy.opt(level)` and `@ppy.pure`: mark a function as a region.

Both decorators return the same kind of object, a ``Region``, so they stack in
either order. A region behaves like the function it wraps; the compiler
(``ppy_compile``) replaces its body with the built C++ on first call.

``Region`` is generic over the wrapped function's parameters and return type
(``Region[P, R]``), so a type checker checks a call of a region as a call of
the function, and knows the region's own attributes (``samples``, ``build``,
``python``, ``cpp_source``, ``__ppy_region__``, ``site``).
"""

from __future__ import annotations

import functools
import inspect
import itertools
import os
import sys
import types
import weakref
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Concatenate, Generic, ParamSpec, TypeVar, overload

from ppy import bytecode
from ppy_check.source import digest_of, read_bytes

if TYPE_CHECKING:
    from ppy_check.site import RegionSite

P = ParamSpec("P")
R = TypeVar("R", covariant=True)
# A method's region, seen from an instance: the instance's type, and the parameters after it.
Self_ = TypeVar("Self_")
Rest = ParamSpec("Rest")
Samples = TypeVar("Samples", bound=Callable[..., Iterable[object]])
F = TypeVar("F", bound=Callable[..., Any])

LEVELS = (0, 1, 2, 3)
DEFAULT_LEVEL = 3
# The values of PPY_DISABLE that switch off every region rather than name one.
_EVERY_REGION = frozenset({"1", "all", "true", "yes", "on"})


def _disable_entries() -> frozenset[str]:
    value = os.environ.get("PPY_DISABLE", "").strip()
    if value in ("", "0"):
        return frozenset()
    return frozenset(entry.strip() for entry in value.split(",") if entry.strip())


def _every_region(entries: frozenset[str]) -> bool:
    return any(entry.lower() in _EVERY_REGION for entry in entries)


def disabled() -> bool:
    """`PPY_DISABLE=1` runs every region as plain Python."""
    return _every_region(_disable_entries())


def disabled_for(region: Region[Any, Any]) -> bool:
    """Whether `PPY_DISABLE` switches this region off: `1` for every region, or a comma-separated list of names.

    A name is the function's name (`block`), its qualified name (`Model.block`),
    its module and qualified name (`gpt2.block`), or a file and qualified name
    (`examples/gpt2/gpt2.py::block`, where any trailing part of the path will
    do: `gpt2.py::block`).
    """
    entries = _disable_entries()
    if not entries:
        return False
    if _every_region(entries):
        return True
    qualname = region.__qualname__
    names = {region.__name__, qualname, f"{region.__module__}.{qualname}"}
    for entry in entries:
        if entry in names:
            return True
        path, separator, wanted = entry.rpartition("::")
        if separator and wanted == qualname and _same_file(path, region.site.path):
            return True
    return False


def _same_file(given: str, actual: str) -> bool:
    """`given` names `actual`: the same file once resolved, or a trailing run of its path components."""
    if not given:
        return False
    resolved = os.path.realpath(actual)
    if os.path.realpath(given) == resolved:
        return True
    tail = given.replace(os.sep, "/").strip("/").split("/")
    return resolved.replace(os.sep, "/").split("/")[-len(tail):] == tail


def _not_compiling() -> bool:
    return False


# While torch compiles or exports, a region call is its torch operator: ppy/torch_op.py installs its
# check (torch.compiler's flag, a constant True to Dynamo) and its entry here once torch is loaded.
_compiling: Callable[[], bool] = _not_compiling
_traced_call: Callable[[Region[Any, Any], tuple[Any, ...], dict[str, Any]], Any] | None = None


def attach_tracer(compiling: Callable[[], bool],
                  traced_call: Callable[[Region[Any, Any], tuple[Any, ...], dict[str, Any]], Any]) -> None:
    """Route calls to ``traced_call`` while ``compiling()`` says torch compiles or exports (ppy.torch_op)."""
    global _compiling, _traced_call
    _compiling, _traced_call = compiling, traced_call


def tracer_attached() -> bool:
    return _traced_call is not None


@dataclass(frozen=True)
class Runtime:
    """Where a region's calls, builds and creation go: ppy.runtime, which sits above this module and attaches
    itself when ``import ppy`` imports it (this module cannot import it: the runtime works on regions)."""

    call: Callable[[Region[Any, Any], tuple[Any, ...], dict[str, Any]], Any]
    prepare: Callable[[Region[Any, Any]], None]
    created: Callable[[Region[Any, Any]], None]


_runtime: Runtime | None = None


def attach_runtime(runtime: Runtime) -> None:
    global _runtime
    _runtime = runtime


def _attached_runtime() -> Runtime:
    if _runtime is None:
        raise RuntimeError("ppy.runtime is not loaded: import ppy, not ppy.decorators alone")
    return _runtime


@dataclass(frozen=True)
class Compiled:
    """A region's compiled form, as the runtime settles it: one object, published whole."""

    # The module's function bound to a context: every parameter positional; NotImplemented for a call it
    # does not take (the runtime, verify and torch's operator call it).
    entry: Callable[..., Any]
    signature: inspect.Signature
    cpp_source_path: Path | None = None
    cpp_symbol: str | None = None
    # What the build's model says the region does besides its result: {"writes": [...], "random": bool}.
    effects: Mapping[str, Any] = field(default_factory=dict)
    # A subclass of the region's class whose __call__ is the compiled entry that binds as Python does
    # (see Region.route); None: every call goes through Region.__call__.
    entry_class: type | None = None
    # A method region's reads through its instance (ppy.instance.InstanceReader): the entry takes them after the
    # region's own arguments, and the instance itself is no argument of it. None for a function.
    instance: Any = None
    # A method region's call read from an instance (MethodRegion.__get__ binds it): the reads and the compiled entry in
    # one Python frame, handing anything else to Region.__call__ (see ppy.runtime._method_call).
    method_call: Callable[..., Any] | None = None
    # The names from outside the body the build took as fixed, as proved (ppy.guard.Guard: namespace dict, name,
    # object; or namespace, name where it must stay unbound): what torch's trace of the region must guard on.
    guards: Sequence[tuple[Any, ...]] = ()


class Call:
    """One call's arguments: a sample for a region."""

    def __init__(self, *args: Any, **kwargs: Any):
        self.args = args
        self.kwargs = kwargs

    def __repr__(self) -> str:
        return f"Call({len(self.args)} args, {sorted(self.kwargs)})"


def source_path(function: Callable[..., Any]) -> str | None:
    """The .py file ``function`` was defined in (decorators ppy does not own looked through), if there is one."""
    try:
        path = inspect.getsourcefile(inspect.unwrap(function))
    except TypeError:  # a builtin, or a function made without a file
        return None
    return path if path is not None and os.path.exists(path) else None


# Instead of a digest: Python runs the function from a .pyc of other text than the file's (ppy/bytecode.py).
STALE_BYTECODE = "stale bytecode"


def defined_from(function: Callable[..., Any]) -> tuple[str, str] | None:
    """(path, sha256) of the file ``function`` was defined in, read now, as its module runs; None when unreadable;
    (path, STALE_BYTECODE) when the code Python loaded was not compiled from those bytes.

    Read every time (a region's file is small, and a sha256 costs little): a digest kept by the file's stat
    would outlive an edit that put the stat back.
    """
    path = source_path(function)
    if path is None:
        return None
    try:
        data = read_bytes(path)
    except OSError:
        return None
    body = inspect.unwrap(function)
    if isinstance(body, types.FunctionType) and bytecode.stale(body, path, data):
        return path, STALE_BYTECODE
    return path, digest_of(data)


class Region(Generic[P, R]):
    """A function marked as a region. Call it like the function."""

    # Set by functools.update_wrapper; declared so that type checkers know them.
    __name__: str
    __qualname__: str
    __wrapped__: Callable[P, R]

    def __init__(self, python: Callable[P, R], level: int = DEFAULT_LEVEL, pure: bool = False,
                 compile: bool = True):  # pylint: disable=redefined-builtin
        functools.update_wrapper(self, python)
        self.python: Callable[P, R] = python
        self.level = level
        self.pure = pure
        # False: a region for the checkers, but every call runs the Python body.
        self.compile = compile
        # Settled: compiled, or on its Python body for good. Set only after `_compiled_form`, so that a thread
        # finding it set finds the compiled form complete.
        self._prepared = False
        self._compiled_form: Compiled | None = None
        # Why the region runs its Python body, once it was prepared and could not be compiled.
        self.fallback_reason: str | None = None
        self._samples: Callable[..., Iterable[object]] | None = None
        # What `__get__` binds to an instance while calls go straight to a method region's compiled code (route).
        self._method_call: Callable[..., Any] | None = None
        self._unbuilt_call: Callable[..., Any] | None = None
        self._site: RegionSite | None = None
        self._binder: Callable[..., None] | None = None
        # The file the body was compiled from, as it was then (path, sha256): the C++ must be built from
        # that text, not from an edit made since, which Python has not loaded.
        self.defined_from = defined_from(python)
        # What Dynamo hands ppy.torch_op's `_ready` in the region's place: a result it takes as constant must
        # come from constant arguments before torch 2.13 (which takes the object itself, guarded by its id).
        # A str, not an int: Dynamo makes an int that differs between two compiles of one frame (Region.__call__,
        # for a second region compiled) a symbolic one, which `_ready` then cannot take as a constant.
        self.serial = f"region-{next(_serials)}"
        _live.add(self)
        _by_serial[self.serial] = self
        _attached_runtime().created(self)

    # --- the compiled state: set by ppy.runtime through these methods alone -------------------

    @property
    def prepared(self) -> bool:
        """Settled: compiled, or running its Python body for good."""
        return self._prepared

    @property
    def compiled(self) -> Callable[..., Any] | None:
        """The compiled entry that takes every parameter positionally (NotImplemented for what it does not
        take), or None while the region runs its Python body."""
        form = self._compiled_form
        return form.entry if form is not None else None

    @property
    def compiled_form(self) -> Compiled | None:
        return self._compiled_form

    @property
    def cpp_symbol(self) -> str | None:
        form = self._compiled_form
        return form.cpp_symbol if form is not None else None

    @property
    def cpp_source_path(self) -> Path | None:
        """The generated C++ unit that holds the region, once compiled."""
        form = self._compiled_form
        return form.cpp_source_path if form is not None else None

    @property
    def effects(self) -> Mapping[str, Any]:
        form = self._compiled_form
        return form.effects if form is not None else {}

    def settle_python(self) -> None:
        """From now on the region runs its Python body (a fallback, or `compile=False`)."""
        self._prepared = True

    def settle_compiled(self, form: Compiled) -> None:
        """From now on calls run ``form``: published first, then marked prepared (see ``_prepared``)."""
        self._compiled_form = form
        self._prepared = True

    def drop_compiled(self) -> None:
        """Back to the Python body for good (a name the build assumed was rebound), its calls back through
        Region.__call__."""
        form, self._compiled_form = self._compiled_form, None
        self._method_call = None
        if form is not None and form.entry_class is not None:
            self.__class__ = form.entry_class.__base__  # type: ignore[assignment]

    def route(self, watched: bool) -> None:
        """Calls of a compiled region reach its compiled entry straight from the caller's frame, or, when
        ``watched`` (an observer, a log or a profile sees every call), Region.__call__, the runtime's path.

        The object's class is swapped, rather than Region.__call__ calling the entry: CPython's call slot
        then runs the compiled C function with no Python frame of ppy's between the caller and the compiled
        code. Measured with a C callable as ``__call__`` against a Python ``__call__`` that calls it (timeit,
        on the loaded 2-core dev machine): 1.4 us against 3.2 us a call, 1.3 us for the bare C call, so the
        Python frame would more than double a small region's call cost.
        """
        form = self._compiled_form
        if form is not None and form.method_call is not None:
            self._method_call = None if watched else form.method_call
        if form is None or form.entry_class is None:
            return
        self.__class__ = form.entry_class.__base__ if watched else form.entry_class  # type: ignore[assignment]

    def entry_class(self, entry: Callable[..., Any]) -> type:
        """A class of this region's own whose ``__call__`` is ``entry``, the compiled C function bound to the
        region's context (see ``route``). It adds nothing else, so the object's layout, attributes and
        behaviour stay Region's."""
        base = type(self)
        namespace = {"__call__": entry, "__slots__": (), "__module__": base.__module__,
                     "__qualname__": base.__qualname__, "__doc__": base.__doc__}
        return type(base.__name__, (base,), namespace)

    @property
    def site(self) -> RegionSite:
        """Where the region is defined: its file, qualified name and first line (ppy's one identity)."""
        if self._site is None:
            from ppy_check.site import RegionSite

            self._site = RegionSite.of_function(self.python)
        return self._site

    @property
    def __ppy_region__(self) -> bool:
        """True once the compiled code is what a call runs."""
        return self._compiled_form is not None

    def compile_enabled(self) -> bool:
        """Whether the region should be compiled at all: not with `compile=False`, nor when `PPY_DISABLE` names it."""
        return self.compile and not disabled_for(self)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R:
        # A compiled region's calls do not come here: its class's __call__ is then the compiled entry
        # itself (ppy.runtime), which comes back here only for what it does not take as it is.
        if _compiling():
            return _traced_call(self, args, kwargs)  # type: ignore[misc, no-any-return]
        try:
            return _attached_runtime().call(self, args, kwargs)  # type: ignore[no-any-return]
        except TypeError:
            # Diagnosed only after the fact, so that a call that binds pays nothing for it.
            unbindable = self._binding_error(args, kwargs)
            if unbindable is not None:
                raise unbindable from None
            raise

    def _binding_error(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> TypeError | None:
        """Python's own error for these arguments and the region's parameters (naming the region), if they do not bind."""
        if self._binder is None:
            try:
                self._binder = _parameters_only(self.python)
            except (TypeError, ValueError):  # no signature to read: the error that was raised stands
                return None
        try:
            self._binder(*args, **kwargs)
        except TypeError as error:
            return error.with_traceback(None)
        return None

    def build(self) -> bool:
        """Compile now rather than on the first call; True when the compiled code is in use."""
        _attached_runtime().prepare(self)
        return self.__ppy_region__

    @property
    def cpp_source(self) -> str | None:
        """The generated C++ of this region's file (built on demand), or None when it runs as Python."""
        self.build()
        form = self._compiled_form
        path = form.cpp_source_path if form is not None else None
        return path.read_text(encoding="utf-8") if path is not None else None

    def samples(self, fn: Samples) -> Samples:
        """Register sample arguments for verification (``pytest --ppy-verify``).

        ``fn`` takes the device name (``"cpu"``, ``"cuda"``) if it has a
        parameter, and yields argument tuples (or ``ppy.Call(*args, **kwargs)``)::

            @block.samples
            def _(device: str) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
                yield torch.randn(2, 8, device=device), torch.randn(8, 8, device=device)
        """
        self._samples = fn
        return fn

    def sample_calls(self, device: str) -> list[Call]:
        """The registered samples for ``device``, as calls; empty when there are none."""
        if self._samples is None:
            return []
        produced = self._samples(device) if inspect.signature(self._samples).parameters else self._samples()
        return [item if isinstance(item, Call) else Call(*(item if isinstance(item, tuple) else (item,)))
                for item in produced]

    if TYPE_CHECKING:
        # Read from an instance, a region defined in a class is a method: its first parameter is bound (at run
        # time, MethodRegion.__get__).
        @overload
        def __get__(self, instance: None, owner: type[Any] | None = None) -> Region[P, R]: ...
        @overload
        def __get__(self: Region[Concatenate[Self_, Rest], R], instance: Self_,
                    owner: type[Any] | None = None) -> Callable[Rest, R]: ...
        def __get__(self, instance: Any, owner: Any = None) -> Any: ...

    def __repr__(self) -> str:
        flags = ", pure" if self.pure else ""
        if not self.compile:
            flags += ", compile=False"
        state = "compiled" if self.__ppy_region__ else "python"
        return f"<ppy region {self.__qualname__} (opt {self.level}{flags}, {state})>"


class MethodRegion(Region[P, R]):
    """A region defined in a class body: read from an instance, a method, its first parameter bound.

    Only these are descriptors. A region held in an instance's attribute (``self.block = block``) is a function,
    as it is to Python, and torch 2.11's Dynamo takes any object whose class has a ``__get__`` there for a
    class attribute it cannot find."""

    def __get__(self, instance: Any, owner: Any = None) -> Any:
        if instance is None:
            return self
        # Asked first: Dynamo traces the partial's Region.__call__, which routes to torch. Read while it traces,
        # `_method_call` would be guarded as the None it is before the build that the trace itself starts.
        if _compiling():
            return functools.partial(self, instance)
        fast = self._method_call
        if fast is None:
            return types.MethodType(self._unbuilt_method(), instance)
        return types.MethodType(fast, instance)

    def _unbuilt_method(self) -> Callable[..., Any]:
        """The method an instance binds before the region is built: Region.__call__, from a frame of its own."""
        found = self._unbuilt_call
        if found is None:
            region = self

            def call(instance: Any, *args: Any, **kwargs: Any) -> Any:
                return region(instance, *args, **kwargs)

            found = self._unbuilt_call = own_code(call, self)
        return found


def _defined_in_class(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` was defined in a class body (``Block.forward``, not ``block`` or ``outer.<locals>.inner``)."""
    parts = getattr(fn, "__qualname__", "").split(".")
    return len(parts) > 1 and parts[-2] != "<locals>"


def _parameters_only(function: Callable[..., Any]) -> Callable[..., None]:
    """A function with ``function``'s parameters and qualified name and an empty body.

    Calling it binds arguments exactly as calling ``function`` would, with
    Python's own messages (``block() got an unexpected keyword argument
    'epsilon'``), and runs nothing of the region. Defaults only need to exist:
    their values never matter to binding.
    """
    signature = inspect.signature(function)
    empty = inspect.Parameter.empty
    parameters = [p.replace(annotation=empty, default=empty if p.default is empty else None)
                  for p in signature.parameters.values()]
    namespace: dict[str, Any] = {}
    exec(f"def binder{signature.replace(parameters=parameters, return_annotation=empty)}: pass", namespace)  # pylint: disable=exec-used
    binder: Callable[..., None] = namespace["binder"]
    binder.__name__, binder.__qualname__ = function.__name__, function.__qualname__
    return binder


# Every region object alive in the process: nested regions and methods are not
# reachable from their module's globals, so tools find them here by site.
_live: weakref.WeakSet[Region[Any, Any]] = weakref.WeakSet()
_by_serial: weakref.WeakValueDictionary[str, Region[Any, Any]] = weakref.WeakValueDictionary()
_serials = itertools.count()


def own_code(function: F, region: Region[Any, Any]) -> F:
    """``function`` with a code object of its own, named as the region, and the region's signature: what an
    instance binds as the region's method. torch.compile of a module keeps its graphs by the code of the frame
    it starts at, and stops recompiling one code after eight (``recompile_limit``): one code shared by every
    method region would allow eight classes."""
    code = function.__code__
    if sys.version_info >= (3, 11):
        code = code.replace(co_name=region.__name__, co_qualname=region.__qualname__)
    else:
        code = code.replace(co_name=region.__name__)
    function.__code__ = code
    # Its signature is the region's (inspect.signature of the bound method: what torch.export's dynamic_shapes
    # and a trainer's column filter read), not `(*args, **kwargs)`.
    function.__wrapped__ = region.python  # type: ignore[attr-defined]
    return function


def region_of(serial: str) -> Region[Any, Any] | None:
    """The live region whose ``serial`` this is."""
    return _by_serial.get(serial)


def live_regions(path: str | None = None) -> list[Region[Any, Any]]:
    """The region objects that exist now, optionally only those defined in ``path`` (compared resolved)."""
    found = list(_live)
    if path is None:
        return found
    wanted = os.path.realpath(path)
    return [r for r in found if os.path.realpath(r.site.path) == wanted]


def _check_level(level: object) -> int:
    if isinstance(level, bool) or not isinstance(level, int):
        raise TypeError(f"ppy.opt: the level must be an int 0 to 3, not {type(level).__name__} {level!r}")
    if level not in LEVELS:
        raise ValueError(f"ppy.opt: the level must be 0, 1, 2 or 3, not {level}")
    return level


def _check_compile(compile: object) -> bool:  # pylint: disable=redefined-builtin
    if not isinstance(compile, bool):
        raise TypeError(f"ppy.opt: compile must be True or False, not {type(compile).__name__} {compile!r}")
    return compile


def _as_region(fn: Callable[P, R]) -> Region[P, R]:
    if isinstance(fn, Region):
        return fn
    if not callable(fn):
        raise TypeError(f"ppy: can only decorate a function, not {type(fn).__name__}")
    return MethodRegion(fn) if _defined_in_class(fn) else Region(fn)


class Optimize:
    """What ``ppy.opt(level)`` returns: applied to a function, it makes the function a region.

    A class rather than a closure so that type checkers see one call site for
    the decoration (the mypy plugin hooks ``Optimize.__call__``).
    """

    def __init__(self, level: int, compile: bool = True):  # pylint: disable=redefined-builtin
        self.level = level
        self.compile = compile

    def __call__(self, fn: Callable[P, R]) -> Region[P, R]:
        region = _as_region(fn)
        region.level = self.level
        region.compile = self.compile
        return region


@overload
def opt(level: int = DEFAULT_LEVEL, *, compile: bool = True) -> Optimize: ...  # pylint: disable=redefined-builtin
@overload
def opt(level: Callable[P, R], /) -> Region[P, R]: ...
def opt(level: Any = DEFAULT_LEVEL, *, compile: Any = True) -> Any:  # pylint: disable=redefined-builtin
    """Mark a function as a region compiled at C++ optimisation level ``level`` (0 to 3).

    ``@ppy.opt`` alone means ``@ppy.opt(3)``. ``compile=False`` keeps the
    function a region (checked like any other) that always runs its Python body.
    """
    if callable(level) and not isinstance(level, int):
        region = _as_region(level)
        region.level = DEFAULT_LEVEL
        return region
    return Optimize(_check_level(level), _check_compile(compile))


def pure(fn: Callable[P, R]) -> Region[P, R]:
    """Declare that the region writes no memory its caller can see (checked as `ppy-impure`)."""
    region = _as_region(fn)
    region.pure = True
    return region
