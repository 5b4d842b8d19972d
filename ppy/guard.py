"""Whether the names a region's build took as fixed are still what Python would read.

A build bakes in what a region reads from outside its body: a module constant
(``SCALE = 2``), a module (``F``), torch's function behind a name
(``F.gelu``), a helper it inlined, a builtin (``max``). Python reads every one
of them again at each call, and any can be rebound: ``mod.SCALE = 5`` from a
caller, ``globals()["SCALE"] = 3``, ``exec``, ``from settings import *``,
``F.gelu = my_gelu``, ``builtins.max = min``. So when a region is prepared,
in the live process and with its real module, each assumption the model
recorded (``ppy_check.model.ir.Assumption``) is proved against the objects
Python holds; one that fails names the name and what changed, and the region
runs as Python. What was proved becomes the entry's guards: each call checks,
in C, that every namespace still holds the same object under each name
(``ppy_bridge::names_current``), a few dict lookups.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import os
import sys
import types
from collections.abc import Mapping
from typing import Any

from ppy.decorators import Region
from ppy_check.model.assumptions import Assumed

Guard = tuple[Any, ...]  # (namespace dict, name, the object proved), or (namespace dict, name): must stay unbound
_ABSENT = object()
# torch names some builtins after their ATen function (`torch.special.erf` is `special_erf`).
_PREFIXES = ("", "special", "linalg", "fft", "nested", "sparse")
_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made at run time (a class statement), not one of C's static types


class Rebound(Exception):
    """An assumption of the build that does not hold: the message names the name and what it is now."""


def prove(region: Region[..., Any], rows: list[list[str]], helpers: dict[str, types.CodeType],
          lent: Mapping[str, dict[str, Any]] | None = None) -> list[Guard]:
    """The guards holding every assumption the region's build made, in the live process; Rebound when one fails.
    ``helpers`` holds the code of each helper as first proved (the build's, loaded.py made sure): proved again,
    a helper must have equal code (``importlib.reload`` of its file after an edit is not the build's)."""
    body = inspect.unwrap(region.python)
    # ``lent``: the namespaces of other files a method region's classes come from, by real path.
    spaces: dict[str, dict[str, Any]] = {**(lent or {}), _real(body.__code__.co_filename): body.__globals__}
    guards: list[Guard] = []
    for namespace, name, assumed, expected in rows:
        space = _namespace(namespace, spaces)
        if space is None:
            raise Rebound(f"the module `{_shown(namespace)}` that `{name}` is read from is not loaded as the build assumed")
        value = space.get(name, _ABSENT)
        shown = name if not namespace.startswith("module:") else f"{namespace[len('module:'):]}.{name}"
        try:
            kind = Assumed(assumed)
            if kind is Assumed.BUILTIN:
                guards += _builtin(space, name, value)
                continue
            if value is _ABSENT:
                raise Rebound(f"`{shown}` is no longer defined")
            why = _check(kind, expected, value, spaces, helpers)
        except (ValueError, SyntaxError, TypeError, RecursionError, MemoryError) as error:
            # Not a record ppy writes (the index is checked only for shape): nothing is proved, so nothing runs.
            raise Rebound(f"the build's record of what `{shown}` is cannot be read ({type(error).__name__})") from None
        if why is not None:
            raise Rebound(f"`{shown}` {why}")
        if type(space) is dict:  # a class's namespace (torch._C._VariableFunctions) is proved once, not guarded
            guards.append((space, sys.intern(name), value))
    return guards


def _check(kind: Assumed, expected: str, value: Any, spaces: dict[str, dict[str, Any]],
           helpers: dict[str, types.CodeType]) -> str | None:
    """Why ``value`` is not what the build assumed (None: it is); a module or helper lends its namespace."""
    if kind is Assumed.LITERAL:
        assumed = ast.literal_eval(expected)
        return None if _same_literal(value, assumed) else f"is {_brief(value)} now, not the {expected} the build baked in"
    if kind is Assumed.MODULE:
        return None if value is _library(expected) and value is not None else \
            f"is {_brief(value)} now, not the module `{expected}` the build assumed"
    if kind is Assumed.PROJECT_MODULE:
        if isinstance(value, types.ModuleType) and _real(getattr(value, "__file__", None) or "") == _real(expected):
            spaces.setdefault(_real(expected), vars(value))
            return None
        return f"is {_brief(value)} now, not the module of {os.path.basename(expected)} the build assumed"
    if kind is Assumed.HELPER:
        path, _, qualname = expected.rpartition("::")
        function = value.python if isinstance(value, Region) else value
        code = getattr(function, "__code__", None)
        if isinstance(function, types.FunctionType) and isinstance(code, types.CodeType) and \
                _real(code.co_filename) == _real(path) and code.co_qualname == qualname:
            if helpers.setdefault(expected, code) != code:
                return f"is a function `{qualname}` of other code now (its file imported again after an edit)"
            spaces.setdefault(_real(path), function.__globals__)
            return None
        return f"is {_brief(value)} now, not the function `{qualname}` of {os.path.basename(path)} the build inlined"
    return _library_check(kind, expected, value)


def _library_check(kind: Assumed, expected: str, value: Any) -> str | None:
    """Why ``value`` is not torch's (or math's) own object the build lowered: a function by that name, or a
    value (``torch.float32``, ``math.pi``) that Python writes as the build's model does."""
    dotted, _, written = expected.partition(" ")
    module, _, attribute = dotted.rpartition(".")
    if value is not _library(dotted):
        return f"is {_brief(value)} now, not `{dotted}`, which the build assumed"
    if isinstance(value, types.ModuleType):  # a submodule on the way to a function (torch.signal.windows)
        return None
    if kind is Assumed.LIBRARY_VALUE:
        same = repr(value) == written and (type(value) is float or type(value).__module__ == "torch")
        return None if same else f"is {_brief(value)} now, not the {written} the build baked in"
    if not _own(value, module.split(".")[0], attribute):
        return f"was replaced by {_brief(value)}, not torch's own function the build lowered"
    return None


def _own(value: Any, root: str, attribute: str) -> bool:
    """Whether ``value`` is a function (or class) of ``root`` (torch, math, einops) by that name, not one put in its
    place."""
    name = str(getattr(value, "__name__", "")).replace("_", "")
    wanted = attribute.replace("_", "")
    if name not in {prefix + wanted for prefix in _PREFIXES}:
        return False
    if isinstance(value, types.BuiltinFunctionType):
        owner = getattr(value, "__self__", None)
        owner_name = owner.__name__ if isinstance(owner, types.ModuleType) else getattr(owner, "__module__", "")
        return root in (str(getattr(value, "__module__", None) or "").split(".")[0], str(owner_name or "").split(".")[0])
    if isinstance(value, types.FunctionType):
        package = sys.modules.get(root)
        folder = os.path.dirname(_real(getattr(package, "__file__", None) or ""))
        return bool(folder) and _real(value.__code__.co_filename).startswith(folder + os.sep)
    if isinstance(value, type):
        # A class a region calls (torch.Size, torch.finfo) is one of torch's C types: a class written in Python
        # (a subclass patched in, a mock's) is a heap type, whatever ``__module__`` it claims.
        return not value.__flags__ & _HEAP_TYPE and str(value.__module__).split(".")[0] == root
    return False


def _builtin(space: Mapping[str, Any], name: str, value: Any) -> list[Guard]:
    """A builtin the region calls: the module must not bind the name, and builtins must hold Python's own."""
    if value is not _ABSENT:
        raise Rebound(f"`{name}` is {_brief(value)} in the module now, not the builtin the build assumed")
    table = space.get("__builtins__", builtins)
    table = vars(table) if isinstance(table, types.ModuleType) else table
    if not isinstance(table, dict):
        raise Rebound(f"the module's builtins are {_brief(table)}, not Python's")
    found = table.get(name, _ABSENT)
    kind = types.BuiltinFunctionType if not isinstance(found, type) else type
    genuine = isinstance(found, kind) and getattr(found, "__name__", None) == name and (
        getattr(found, "__self__", None) is builtins or getattr(found, "__module__", None) == "builtins")
    if not genuine:
        raise Rebound(f"`builtins.{name}` is {_brief(found)} now, not Python's own `{name}`")
    interned = sys.intern(name)
    return [(space, interned), (table, interned, found)] if type(space) is dict else [(table, interned, found)]


def _same_literal(value: Any, assumed: Any) -> bool:
    """Of exactly the same type all the way down, and the same value (``repr``: -0.0 and nan as themselves)."""
    if type(value) is not type(assumed):
        return False
    if isinstance(assumed, tuple):
        return len(value) == len(assumed) and all(_same_literal(v, a) for v, a in zip(value, assumed))
    return repr(value) == repr(assumed)


def _namespace(namespace: str, spaces: dict[str, dict[str, Any]]) -> Mapping[str, Any] | None:
    if namespace.startswith("module:"):
        found = _library(namespace[len("module:"):])
        return vars(found) if found is not None and hasattr(found, "__dict__") else None
    return spaces.get(_real(namespace))


def _library(dotted: str) -> Any:
    """The object of torch or math named ``dotted``, as its modules hold it now (None: there is none)."""
    found = sys.modules.get(dotted)
    if found is not None:
        return found
    parts = dotted.split(".")
    found = sys.modules.get(parts[0])
    for part in parts[1:]:
        found = getattr(found, part, None) if found is not None else None
    return found


def _shown(namespace: str) -> str:
    return namespace.removeprefix("module:")


def _brief(value: Any) -> str:
    if value is _ABSENT:
        return "undefined"
    if isinstance(value, (types.FunctionType, types.BuiltinFunctionType)):  # named in full: the name is the clue
        return f"`{getattr(value, '__module__', None) or '?'}.{getattr(value, '__qualname__', '?')}`"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _real(path: str) -> str:
    return os.path.realpath(path) if path else ""
