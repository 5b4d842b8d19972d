"""What a method region's compiled code takes from its instance at each call, and the checks before it.

A method region's build reads attributes through ``self`` (``self.attn.c_proj.weight``, ``self.eps``,
``self.training``): each is an input of the compiled function, taken from the object at every call, so one
build serves every instance and nothing is baked in. The build also assumed the class of each object it
inlined code from (the instance, each submodule called): another class there (a LoRA wrapper swapped in, a
subclass) or a forward hook on one of them has other Python behaviour than the inlined code, so that call runs
the Python body, with one warning naming the attribute. A value of another kind than the build assumed (a
tensor attribute set to a float, a tensor subclass) is declined by the compiled entry itself; ``declined``
then says which attribute it was.
"""

from __future__ import annotations

import ctypes
import dataclasses
import operator
import os
import sys
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

# Module.__call__ runs these around forward; inlined code would skip them.
HOOK_DICTS = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks")
# What `module.compile()` sets on the instance (None otherwise): Module.__call__ then runs that instead.
COMPILED_CALL = "_compiled_call_impl"
# What a module's call looks up on its instance on the way to `forward`: an instance attribute of one of these
# names (accelerate's `module.forward = partial(new_forward, module)`) is what Python runs.
CALL_NAMES = ("forward", "_call_impl")
# What the reads and the inlined code found on each class the build read: patched on the class or a base since
# (`Attention.forward = ...`, a property added), the class runs other code.
CLASS_NAMES = ("__call__", "_wrapped_call_impl", "_call_impl", "forward", "__getattr__", "__getattribute__")
# A class that defines one of these reads its attributes its own way: no read of it is the reader's own lookup.
_OWN_LOOKUP = ("__getattr__", "__getattribute__")


# Hooks every module's call runs (``register_module_forward_hook`` and friends): dicts torch changes in place.
_GLOBAL_HOOKS = ("_global_forward_hooks", "_global_forward_pre_hooks", "_global_backward_hooks",
                 "_global_backward_pre_hooks")


def global_hook_dicts() -> tuple[Any, ...]:
    """The dicts of hooks every module's call runs; torch changes them in place, so they are the same objects."""
    from torch.nn.modules import module

    return tuple(getattr(module, name) for name in _GLOBAL_HOOKS)


def _global_hooks() -> bool:
    return any(global_hook_dicts())


@dataclass(frozen=True)
class Mismatch:
    """Why this call of a method region runs its Python body: the attribute, and what is not as built."""

    path: str
    why: str


@dataclass(frozen=True)
class InstanceReader:
    """The reads and checks of one method region, resolved once when its compiled form is settled."""

    name: str  # the instance's parameter, as the messages name paths (`self.attn`)
    reads: tuple[str, ...]  # attribute paths from the instance, in the order of the compiled inputs
    types: tuple[str, ...]  # the type the build assumed of each, for messages
    checks: tuple[tuple[str, type], ...]  # (path, exact class), the instance itself at ""
    # The instance's reads and checks as one C function (`read_program`): the tuple of values, or None when a check
    # fails (then `arguments` says which).
    read_all: Callable[[Any], tuple[Any, ...] | None]
    # The compiled function's entry, which takes the region's arguments and then the reads (see `taking`).
    raw: Callable[..., Any] = lambda *values: NotImplemented

    # The names a subclass of the instance's class must not define to run the same code (see `accept`), and the
    # subclasses accepted so far, each with its class's version tag then (`version`, the bridge's `type_version`),
    # which the generated reader takes as it takes the class itself while the tag holds.
    names: frozenset[str] = frozenset()
    accepted: dict[type, int] = dataclasses.field(default_factory=dict)
    version: Callable[[type], int] = lambda kind: 0
    # (path, count) of each container whose number of items the build used (ppy_check.model.ir.InstanceReads).
    lengths: tuple[tuple[str, int], ...] = ()
    # What the program assumed, read again for the message where it refuses a call: each checked path's names its
    # instance must not hold, and each class's names with what they found (`read_program`).
    absent: tuple[tuple[str, tuple[str, ...]], ...] = ()
    ordered: tuple[str, ...] = ()
    table: ClassTable | None = None

    @classmethod
    def of(cls, name: str, reads: Sequence[Sequence[str]], classes: Sequence[Sequence[str]],
           namespace: dict[str, Any], methods: Sequence[tuple[str, str]], make_reader: Callable[[tuple[Any, ...]], Any],
           lengths: Sequence[tuple[str, int]] = (), version: Callable[[type], int] = lambda kind: 0,
           ) -> InstanceReader:
        """Resolve the classes the build read (``classes``: [path, name]) in the region's module (``namespace``) or
        torch.nn, raising LookupError naming one that is not there; ``methods`` are the (path, name) the build
        ran; ``make_reader`` is the bridge's ``instance_reader``, which makes the reads one C function
        (`read_program`), and ``version`` its ``type_version``."""
        checks = tuple((path, _resolve_class(class_name, namespace)) for path, class_name in classes)
        paths = tuple(path for path, _ in reads)
        run: dict[str, set[str]] = {}
        for path, method in methods:
            run.setdefault(path, set()).add(method)
        names = frozenset(run.get("", set())) | {p.split(".")[0] for p in paths} | \
            {p.split(".")[0] for p, _ in checks if p} | set(_OWN_LOOKUP)
        accepted: dict[type, int] = {}
        sizes = tuple((path, count) for path, count in lengths)
        program = read_program(paths, dict(checks), accepted, dict(sizes), run)
        steps = program[0]
        where = {index: path for path, index in _paths_of(program).items()}
        return cls(name, paths, tuple(kind for _, kind in reads), checks, make_reader(program), names=names,
                   accepted=accepted, version=version, lengths=sizes,
                   absent=tuple((where[i], step[6]) for i, step in enumerate(steps) if step[6]),
                   ordered=tuple(where[i] for i, step in enumerate(steps) if step[7]),
                   table=program[9].__self__)

    def accept(self, instance: Any) -> bool:
        """Whether the instance's class, a subclass of the one the build read, runs the same code: it defines
        nothing the region reads or runs through the instance, nor a lookup of its own (FSDP2's `FSDP<Class>`,
        a subclass adding methods of its own). Then it is taken from now on, while the class is unchanged."""
        expected = dict(self.checks).get("")
        kind = type(instance)
        if expected is None or kind is expected or not issubclass(kind, expected):
            return False
        if self.redefined(kind) is not None:
            return False
        tag = self.version(kind)
        if not tag:
            return False
        self.accepted[kind] = tag
        return True

    def redefined(self, kind: type) -> str | None:
        """A name the region reads or runs through the instance that ``kind``, a subclass of the instance's class
        the build read, defines: Python then runs other code than the build inlined; None where there is none."""
        expected = dict(self.checks)[""]
        extra = [c for c in kind.__mro__ if c not in expected.__mro__]
        return next((name for c in extra for name in sorted(self.names) if name in vars(c)), None)

    def namespaces(self) -> dict[str, dict[str, Any]]:
        """The namespace of the module of each checked class that is not torch's, by the real path of its file:
        where the methods the build inlined from it read their names."""
        found: dict[str, dict[str, Any]] = {}
        for _, kind in self.checks:
            module = sys.modules.get(kind.__module__)
            file = getattr(module, "__file__", None)
            if module is not None and isinstance(file, str) and not kind.__module__.startswith("torch."):
                found[os.path.realpath(file)] = vars(module)
        return found

    def taking(self, raw: Callable[..., Any]) -> InstanceReader:
        return dataclasses.replace(self, raw=raw)

    def entry(self, instance: Any, *arguments: Any) -> Any:
        """The compiled region as a function of the instance and the region's arguments, all positional (what
        verify and torch's operator call): NotImplemented where the instance is not as built."""
        taken = self.arguments(instance)
        if not isinstance(taken, tuple):
            return NotImplemented
        return self.raw(*arguments, *taken)

    def arguments(self, instance: Any) -> tuple[Any, ...] | Mismatch:
        """The compiled function's inputs read from ``instance``, or what makes this call Python's."""
        try:
            values = self.read_all(instance)
            if values is None and self.accept(instance):
                values = self.read_all(instance)
        except (AttributeError, KeyError):
            values = None
        return values if values is not None else self.mismatch(instance)

    def mismatch(self, instance: Any) -> Mismatch:
        """Why ``read_all`` refused the instance: the first check that fails, read the slow way."""
        for path, expected in self.checks:
            try:
                found = operator.attrgetter(path)(instance) if path else instance
            except AttributeError as error:
                return Mismatch(self.shown(path), f"reading it failed ({error})")
            kind = type(found)
            # A subclass of the instance's class that defines what the region reads or runs (or came to since it
            # was taken for it, `accept`).
            defined = self.redefined(kind) if not path and kind is not expected and issubclass(kind, expected) else None
            if defined is not None:
                return Mismatch(self.shown(path), f"it is a {_class_name(kind)}, which defines `{defined}`, and the "
                                                   f"build inlined the code of {_class_name(expected)}")
            if kind is not expected and not (not path and kind in self.accepted):
                return Mismatch(self.shown(path), f"it is a {_class_name(kind)}, and the build inlined the code "
                                                   f"of {_class_name(expected)}")
            if path and isinstance(found, torch.nn.Module) and any(getattr(found, hooks, None) for hooks in HOOK_DICTS):
                return Mismatch(self.shown(path), "it has a hook, which its call would run and the inlined code skips")
            if path and isinstance(found, torch.nn.Module) and getattr(found, COMPILED_CALL, None) is not None:
                return Mismatch(self.shown(path), "it was compiled (`.compile()`), and its call runs what torch "
                                                   "compiled, not the inlined code")
            own = [name for name in dict(self.absent).get(path, ()) if name in getattr(found, "__dict__", {})]
            if own:
                return Mismatch(self.shown(path), f"it holds its own `{own[0]}`, which Python runs instead of the "
                                                   f"method of {_class_name(expected)} the build inlined")
            if path in self.ordered and list(found._modules) != [str(i) for i in range(len(found._modules))]:
                return Mismatch(self.shown(path), "its items are not numbered 0, 1, ... in order, and it calls and "
                                                   "indexes them by position")
            count = dict(self.lengths).get(path)
            if count is not None and len(found) != count:  # a Sequential's, a ModuleList's length: its _modules
                return Mismatch(self.shown(path), f"it holds {len(found)} items, and the build used the {count} its "
                                                   "construction makes")
        if _global_hooks():
            return Mismatch(self.name, "a global module hook is registered, which every module's call runs")
        for function, *parts in self.table.functions if self.table is not None else []:
            if any(now is not then for now, then in zip(_function_parts(function), parts)):
                return Mismatch(self.name, f"the code of `{function.__qualname__}` changed in place since the build "
                                           "read it (a reload), so Python runs other code than the build inlined")
        for index in range(len(self.table.entries) if self.table is not None else 0):
            assert self.table is not None  # the range is empty without one
            why = self.table.changed(index)
            if why is not None:
                return Mismatch(self.name, f"{why}, so Python runs other code than the build inlined")
        for path in self.reads:
            try:
                operator.attrgetter(path)(instance)
            except AttributeError as error:
                return Mismatch(self.shown(path), f"reading it failed ({error})")
        return Mismatch(self.name, "its attributes are not as the build read them")

    def declined(self, values: Sequence[Any]) -> Mismatch:
        """Which attribute made the compiled entry decline a call: its value is not what the build assumed."""
        for path, kind, value in zip(self.reads, self.types, values):
            if not _fits(kind, value):
                return Mismatch(self.shown(path), f"it holds a {_class_name(type(value))}, and the build assumed "
                                                  f"{kind}")
            if type(value) is int and not -(1 << 63) <= value < 1 << 63:
                return Mismatch(self.shown(path), f"it holds {value}, which does not fit the 64-bit int the "
                                                  "compiled code computes with")
        if torch._C._is_torch_function_mode_enabled():  # pylint: disable=protected-access
            return Mismatch(self.name, "a torch function mode is active, whose calls the compiled code would skip")
        return Mismatch(self.name, "an argument or attribute is not exactly its type")

    def shown(self, path: str) -> str:
        return f"{self.name}.{path}" if path else self.name


def read_program(reads: tuple[str, ...], classes: dict[str, type], accepted: dict[type, int],
                 lengths: dict[str, int] | None = None, run: dict[str, set[str]] | None = None) -> tuple[Any, ...]:
    """What the bridge's reader (``instance_reader`` in bridge.cpp) runs: each object on the paths read once, each
    checked object's exact class, hooks and own attributes checked, the reads in order.

    nn.Module keeps parameters, buffers and submodules in dicts that ``Module.__getattr__`` searches after Python's
    own lookup fails; the reader reads those dicts itself, in the same order (the instance's ``__dict__``, then
    ``_parameters``, ``_buffers``, ``_modules``). That is Python's answer only where the class defines nothing of
    that name (a property, a class-level default) and no lookup of its own (``__getattr__``): such a step is a
    plain ``getattr``. Each checked class is exact (or a subclass ``accept`` took, which defines none of the
    names), and what its MRO defines of the names the reads and the inlined code used (``run``: the methods the
    build ran on each path) is compared again whenever the class has changed since (CPython's version tag of the
    class says so), and the code of each function the build inlined at every call (a reload swaps it in place),
    so what runs is what the build inlined."""
    sizes = lengths or {}
    ran = run or {}
    # (source, name, plain, exact class, hooks checked, number of items or None, names its dict must not hold,
    # items numbered in order): see bridge.cpp's read_instance.
    steps: list[tuple[int, str, bool, type | None, bool, int | None, tuple[str, ...], bool]] = [
        (0, "", False, classes.get(""), False, sizes.get(""), _absent(classes.get(""), ran.get("", set()), False),
         False)]
    index = {"": 0}
    used: dict[type, set[str]] = {}  # each class's names the reads and the inlined code took from it

    def step(parent: str, name: str) -> int:
        path = f"{parent}.{name}" if parent else name
        if path in index:
            return index[path]
        kind = classes.get(parent)
        plain = kind is not None and issubclass(kind, torch.nn.Module) and _reads_own_dicts(kind) and \
            not any(name in vars(base) for base in kind.__mro__)
        if plain and kind is not None:
            used.setdefault(kind, set()).add(name)
        cls = classes.get(path)
        # The instance's own hooks ran in its Module.__call__ before the region did; an inlined one's would not.
        hooks = cls is not None and issubclass(cls, torch.nn.Module)
        index[path] = len(steps)
        # Interned, as attribute names in __dict__ are: each lookup then matches by identity.
        steps.append((index[parent], sys.intern(name), plain, cls, hooks, sizes.get(path),
                      _absent(cls, ran.get(path, set()), True), False))
        return index[path]

    def walk(path: str) -> int:
        parent, found = "", 0
        for name in path.split(".") if path else []:
            found = step(parent, name)
            parent = f"{parent}.{name}" if parent else name
        return found

    for path in sorted(classes, key=lambda p: p.count(".")):
        walk(path)
    leaves = tuple(walk(path) for path in reads)
    # A Sequential indexes and calls its items by position, the reader reads them by key: where the build read
    # numbered items of one (or of a ModuleList, which iterates by position), they must be numbered in order.
    numbered = {source for source, name, *_ in steps[1:] if name.isdigit()}
    for at in numbered:
        cls = steps[at][3]
        if cls is not None and issubclass(cls, (torch.nn.Sequential, torch.nn.ModuleList)):
            steps[at] = (*steps[at][:7], True)
    for path, kind in classes.items():
        used.setdefault(kind, set()).update(ran.get(path, set()))
    table = ClassTable(used)
    globals_ = global_hook_dicts() if classes else ()
    return (tuple(steps), leaves, globals_, accepted, (*HOOK_DICTS, COMPILED_CALL),
            ("_parameters", "_buffers", "_modules"), tuple(kind for kind, _, _ in table.entries),
            bytearray(len(table.entries) * _TAG_BYTES), table.functions, table.verify)


# A CPython version tag is an unsigned int (PyTypeObject.tp_version_tag).
_TAG_BYTES = ctypes.sizeof(ctypes.c_uint)


def _paths_of(program: tuple[Any, ...]) -> dict[str, int]:
    """Each step's attribute path from the instance, by its index."""
    paths: dict[str, int] = {}
    for index, (source, name, *_) in enumerate(program[0]):
        if index:
            parent = next(path for path, at in paths.items() if at == source)
            paths[f"{parent}.{name}" if parent else name] = index
        else:
            paths[""] = 0
    return paths


def _absent(kind: type | None, ran: set[str], inlined: bool) -> tuple[str, ...]:
    """What the instance dict of an object of class ``kind`` must not hold: the methods the build ran on it (an
    instance attribute of that name is what Python calls), and for an inlined module what its call looks up on
    the way to them (the instance's own call ran before the region). Special methods are looked up on the class."""
    if kind is None:
        return ()
    names = {name for name in ran if not (name.startswith("__") and name.endswith("__"))}
    if inlined and issubclass(kind, torch.nn.Module):
        names.update(CALL_NAMES)
    return tuple(sys.intern(name) for name in sorted(names))


def _reads_own_dicts(kind: type) -> bool:
    """Whether Python's lookup of an attribute on an instance of ``kind`` is nn.Module's: no class of its MRO but
    nn.Module and object defines a lookup of its own."""
    return not any(name in vars(base) for base in kind.__mro__ if base not in (torch.nn.Module, object)
                   for name in _OWN_LOOKUP)


class ClassTable:
    """What each class the build read (and each base below nn.Module, where `super().forward` finds its code) holds
    under the names the reads and the inlined code used, compared again whenever CPython's version tag of a class
    says it changed (the reader asks ``verify``). A function there must be the one the class's own statement
    defines, since the build inlined that source: a patch made before the first call is seen as one made after.
    Anything else must be the object it was (nn.Module's own methods among them), and a name absent stays absent.
    ``functions`` holds each inlined function's code and defaults, which the reader compares at every call (a
    reload swaps them in place, which changes no class)."""

    def __init__(self, used: dict[type, set[str]]) -> None:
        names_of: dict[type, set[str]] = {}
        for kind, names in used.items():
            wanted = names | set(_OWN_LOOKUP) | (set(CLASS_NAMES) if issubclass(kind, torch.nn.Module) else set())
            for base in kind.__mro__:
                if base not in (torch.nn.Module, object):
                    names_of.setdefault(base, set()).update(wanted)
        # (class, names, [(the class of its MRO that defines each, or None, and what it holds)])
        self.entries: list[tuple[type, tuple[str, ...], list[tuple[type | None, Any]]]] = []
        for kind, names in names_of.items():
            ordered = tuple(sys.intern(name) for name in sorted(names))
            self.entries.append((kind, ordered, [defining_class(kind, name) for name in ordered]))
        self.functions: list[tuple[Any, ...]] = []
        self._first_seen: dict[int, tuple[Any, ...]] = {}  # by id; each entry holds its function, whose id it keeps
        self._refresh()

    def changed(self, index: int) -> str | None:
        """Why the class at ``index`` does not hold what the build read, or None; an own function found again (a
        patch undone) is taken as what it holds."""
        kind, names, found = self.entries[index]
        for at, name in enumerate(names):
            owner, value = defining_class(kind, name)
            was_owner, was_value = found[at]
            function = _function_of(value) if owner is not None else None
            if owner is not was_owner:
                return f"{_class_name(kind)} {'no longer defines' if owner is None else 'defines'} `{name}` " \
                       f"{'' if owner is None else f'in {_class_name(owner)} '}since the build read it"
            if owner is None:
                continue
            if function is not None and owner not in (torch.nn.Module, object):
                if not _own(owner, name, function):
                    return f"`{_class_name(owner)}.{name}` is not the function its class statement defines"
                found[at] = (owner, value)
            elif value is not was_value:
                return f"{_class_name(kind)} holds another `{name}` since the build read it"
        return None

    def verify(self, index: int) -> bool:
        """What the reader asks where the class at ``index`` has changed since it last held."""
        if self.changed(index) is not None:
            return False
        self._refresh()
        return True

    def _refresh(self) -> None:
        """The functions the classes hold now, each with its code and defaults as they were when it was first
        seen (the build's, for all but one restored since): a swap in place is never taken as the new normal."""
        current: dict[int, types.FunctionType] = {}
        for _, _, found in self.entries:
            for owner, value in found:
                function = _function_of(value) if owner is not None else None
                if function is not None:
                    current[id(function)] = function
        for key, function in current.items():
            self._first_seen.setdefault(key, (function, *_function_parts(function)))
        self.functions[:] = [self._first_seen[key] for key in current]


def defining_class(kind: type, name: str) -> tuple[type | None, Any]:
    """The class of ``kind``'s MRO that defines ``name``, and what it holds; (None, None) where none does."""
    for base in kind.__mro__:
        if name in vars(base):
            return base, vars(base)[name]
    return None, None


def _own(owner: type, name: str, function: types.FunctionType) -> bool:
    """Whether ``function`` is the one ``owner``'s class statement defines as ``name``: of that name and class, from
    that class's file (not a function set on the class since, nor another's code swapped in)."""
    module = sys.modules.get(owner.__module__)
    file = getattr(module, "__file__", None)
    code = function.__code__
    return function.__qualname__ == f"{owner.__qualname__}.{name}" and code.co_name == name and \
        function.__module__ == owner.__module__ and \
        (not isinstance(file, str) or os.path.realpath(code.co_filename) == os.path.realpath(file))


def _function_of(value: Any) -> types.FunctionType | None:
    """The Python function a class attribute runs (a method's, a static or class method's), or None."""
    inner = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
    return inner if isinstance(inner, types.FunctionType) else None


def _function_parts(function: types.FunctionType) -> tuple[Any, ...]:
    """What a reload changes in place in a function: its code and its defaults."""
    return function.__code__, function.__defaults__, function.__kwdefaults__


def _resolve_class(name: str, namespace: dict[str, Any]) -> type:
    if "::" in name:  # a class of another file of the project, by that file's path
        path, _, name = name.rpartition("::")
        namespace = _module_of_file(path)
    if name.startswith("torch.nn."):
        found: Any = torch.nn
        parts = name.split(".")[2:]
    else:
        parts = name.split(".")
        if parts[0] not in namespace:
            raise LookupError(f"the class `{name}` the build read is not defined in the region's module")
        found = namespace[parts[0]]
        parts = parts[1:]
    for part in parts:
        found = getattr(found, part, None)
    if not isinstance(found, type):
        raise LookupError(f"`{name}`, which the build read as a class, is not one")
    return found


def _module_of_file(path: str) -> dict[str, Any]:
    """The namespace of the loaded module defined by the file ``path`` (the region's module imported it)."""
    wanted = os.path.realpath(path)
    for module in list(sys.modules.values()):
        file = getattr(module, "__file__", None)
        if isinstance(file, str) and os.path.realpath(file) == wanted:
            return vars(module)
    raise LookupError(f"no loaded module is defined by {os.path.basename(path)}, whose class the build read")


def _class_name(kind: type) -> str:
    return kind.__qualname__ if kind.__module__ in ("builtins", "__main__") else f"{kind.__module__}.{kind.__qualname__}"


# The types the build's index names a read's type by (``ppy_check.model.types``' spelling), as Python's classes.
NAMED_TYPES: dict[str, type] = {"torch.Tensor": torch.Tensor, "int": int, "float": float, "bool": bool, "str": str,
                                "torch.dtype": torch.dtype, "torch.device": torch.device}
# Where a class accepts others as Python does: a Parameter is a tensor, an int a float (PEP 484).
_ALSO_ACCEPTED: dict[type, tuple[type, ...]] = {torch.Tensor: (torch.nn.Parameter,), float: (int,)}


def accepted_types(kind: str) -> tuple[type, ...] | None:
    """The exact classes a value read through the instance may have where the build assumed ``kind`` (as the
    index writes it: ``float``, ``torch.Tensor | None``, ``tuple[int, ...]``), as the compiled entry takes them;
    None where ppy does not say (the entry itself decides)."""
    if kind.endswith(" | None"):
        inner = accepted_types(kind[: -len(" | None")])
        return None if inner is None else (*inner, type(None))
    if kind.startswith("tuple["):
        return (tuple, torch.Size)
    named = NAMED_TYPES.get(kind)
    return None if named is None else (named, *_ALSO_ACCEPTED.get(named, ()))


def fits(types: tuple[type, ...], value: Any) -> bool:
    """Whether ``value`` is of one of ``types`` (``accepted_types``): exactly, or a tensor of torch's own tracing
    (a fake or functional tensor: torch.export reads the attributes as those) where a tensor is accepted."""
    kind = type(value)
    if kind in types:
        return True
    return torch.Tensor in types and isinstance(value, torch.Tensor) and kind.__module__.startswith("torch._subclasses.")


def _fits(kind: str, value: Any) -> bool:
    """A test of a value against the type the build assumed (for the message)."""
    types = accepted_types(kind)
    return types is None or fits(types, value)


def stand_in(reader: InstanceReader, values: Sequence[Any]) -> Any:
    """An object of the instance's class holding ``values`` at the paths the build read, for running the Python
    body where there is no instance: the fake kernel of a method region's torch operator, which gets the reads as
    its arguments. Each object the build inlined code from is made of its exact class without its ``__init__``
    (nn.Module's own ``__init__`` gives a module its dicts); the read values are set on them. A ModuleList or
    Sequential gets placeholders where the build read no item, so that its length (and a ``[-1]``) is the real one
    wherever the build indexed from the end or iterated it."""
    objects: dict[str, Any] = {}
    for path, kind in sorted(reader.checks, key=lambda check: _depth_then_index(check[0])):
        made = typing.cast(Any, kind).__new__(kind)
        if isinstance(made, torch.nn.Module):
            torch.nn.Module.__init__(made)
            # Its repr must not read what it does not hold (Linear's `in_features`): torch 2.11's make_fx takes
            # str() of a module called in a fake kernel, which is no submodule of what it traces.
            vars(made)["extra_repr"] = _stand_in_repr
        objects[path] = made
        if path:
            _place(objects, path, made)
    for path, value in zip(reader.reads, values):
        _place(objects, path, value)
    return objects[""]


def _stand_in_repr() -> str:
    return "a stand-in of ppy's"


def properties_read(reader: InstanceReader) -> list[str]:
    """The reads a stand-in cannot hold: an attribute its owner's class defines as a data descriptor (a property),
    which would compute its value from attributes the build did not read."""
    classes = dict(reader.checks)
    found = []
    for path in reader.reads:
        parent, _, name = path.rpartition(".")
        owner = classes.get(parent)
        if owner is None:
            continue
        defined = next((vars(base)[name] for base in owner.__mro__ if name in vars(base)), None)
        if defined is not None and (hasattr(type(defined), "__set__") or hasattr(type(defined), "__delete__")):
            found.append(reader.shown(path))
    return found


def _depth_then_index(path: str) -> tuple[int, str, int]:
    parent, _, name = path.rpartition(".")
    return (path.count(".") + bool(path), parent, int(name) if name.isdigit() else -1)


def _place(objects: dict[str, Any], path: str, value: Any) -> None:
    parent_path, _, name = path.rpartition(".")
    parent = objects.get(parent_path)
    if parent is None:  # an object the build read through but inlined nothing of: a plain holder of attributes
        parent = objects[parent_path] = _Holder()
        _place(objects, parent_path, parent)
    if isinstance(parent, torch.nn.Module) and isinstance(value, torch.nn.Module):
        if name.isdigit():
            for missing in range(len(parent._modules), int(name)):  # pylint: disable=protected-access
                parent._modules.setdefault(str(missing), torch.nn.Module())  # pylint: disable=protected-access
        parent._modules[name] = value  # pylint: disable=protected-access
    else:
        # The instance's own dict comes first in Python's lookup, before nn.Module's dicts and the class's
        # non-data attributes (which properties_read excludes).
        vars(parent)[name] = value


class _Holder:
    """A stand-in for an object the region only reads values through (a config object of no class the build read)."""


class _Missing:
    """What `lookup` finds where a path's object is gone. A class rather than an ``object()``: Dynamo traces the
    tests against it, and torch 2.11's Dynamo cannot trace ``is`` against a plain object instance."""


MISSING: type = _Missing


def lookup(value: Any, names: tuple[str, ...]) -> Any:
    """The object at the attribute path ``names`` from ``value``, or MISSING where one step is not there: the traced
    caller of a method region's operator tests what it finds, where a failed read would stop torch.compile."""
    for name in names:
        value = getattr(value, name, MISSING)
        if value is MISSING:
            break
    return value
