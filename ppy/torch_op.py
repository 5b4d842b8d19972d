"""A compiled region is also a torch custom operator, ``torch.ops.ppy.<name>``: what torch.compile and torch.export see.

An eager call never reaches the operator. ``Region.__call__`` routes here only
while torch is compiling or exporting (``torch.compiler.is_compiling()``), so
Dynamo records one node per region call, and AOTAutograd, Inductor and export
keep it whole instead of tracing ppy's call machinery or the region's body.

The operator is registered the first time a region is traced, or by
``op(region)`` (which a process that loads an exported program calls first):

- its schema comes from the region's annotations: ``int`` is ``SymInt`` (dims
  stay symbolic, so a new sequence length reuses the graph), ``float`` is
  ``Scalar`` (a region's float may hold an int, and Python keeps it one),
  ``tuple[X, ...]`` a list, and a fixed tuple is flattened into its items;
- ``mutates_args`` are the parameters the model says the region writes
  (``@ppy.pure`` regions write none), and a region that draws random numbers
  is tagged ``nondeterministic_seeded``;
- the kernel runs the compiled C++ function, the fake kernel the Python body
  on fake tensors (a region is torch ops only, so that is exact);
- autograd, for a region that writes nothing, saves the inputs and, in the
  backward pass, runs the region again under autograd and differentiates it:
  activation checkpointing, one region at a time.

A custom operator may not return its inputs or views of them, so an output
that aliases an input (``x.t()``, a written cache handed back) is a copy when
the region runs as its operator; values are the same, identity is not.

A method region's operator takes, after the region's own arguments, what its
build reads through the instance (``self.attn.c_proj.weight``, ``self.eps``,
``self.training``), never the instance: one operator serves every instance.
The traced caller first makes the compiled entry's checks (each inlined
object's exact class, no hooks on them, no global module hooks): under Dynamo
each is a guard, and an instance that fails one is traced as its Python body.
The fake kernel runs the body on a stand-in of the instance holding the
values (ppy.instance.stand_in). While gradients are on, a method region that
may write (a training BatchNorm's statistics: ``mutates_args``) is traced as
its body, since torch.library differentiates no operator that writes its
inputs, and so is one that may draw random numbers, whose backward would
draw again; under ``torch.no_grad()`` each is one node.
"""

from __future__ import annotations

import collections.abc
import hashlib
import inspect
import keyword
import re
import threading
import types
import typing
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from ppy import decorators, dynamo_hooks, instance
from ppy.decorators import Region

NAMESPACE = "ppy"


class TorchOpError(TypeError):
    """A region that torch.library cannot express as an operator; the message says which parameter and why."""


class TorchOpRandomWarning(RuntimeWarning):
    """A region that may draw random numbers is differentiated through its operator, which draws them again."""


class TorchOpFallbackWarning(RuntimeWarning):
    """Under torch.compile or torch.export a region is traced as its Python body, not as one operator."""


# --- the region's signature as schema types ------------------------------------------------


@dataclass(frozen=True)
class Leaf:
    """One schema argument or return: ``schema`` is its type, ``sequence`` when the region holds a tuple there."""

    schema: str
    sequence: bool = False
    # What rebuilds the region's value from the list the operator holds: `tuple`, or `_Size` for a torch.Size.
    made_by: str = "tuple"


@dataclass(frozen=True)
class Fixed:
    """A tuple of known length: flattened into one schema entry per item."""

    items: tuple[Node, ...]


Node = Leaf | Fixed

_SCALARS: dict[Any, str] = {
    torch.Tensor: "Tensor",
    int: "SymInt",
    # A region's float is a Python number, int or float (PEP 484); Scalar keeps which.
    float: "Scalar",
    bool: "bool",
    str: "str",
    torch.dtype: "ScalarType",
    torch.device: "Device",
}
# Results an operator cannot give back as the region does: a `ScalarType` result reaches the caller as its
# number (torch.float32 as 6) and Dynamo stops at a `str` or `Device` result ("torch.* op returned non-Tensor").
_UNRETURNABLE = {
    "ScalarType": "torch.library's operators return a dtype as its number (torch.float32 as 6)",
    "str": "Dynamo takes no str from an operator",
    "Device": "Dynamo takes no device from an operator",
}
# The lists torch's Python custom operators convert both ways, by item type.
_LISTS = {"Tensor": "Tensor[]", "Tensor?": "Tensor?[]", "SymInt": "SymInt[]", "Scalar": "Scalar[]", "bool": "bool[]"}
_OPTIONAL_LISTS = {"Tensor[]": "Tensor[]?", "SymInt[]": "SymInt[]?", "bool[]": "bool[]?"}


def _shown(annotation: Any) -> str:
    text = annotation.__name__ if isinstance(annotation, type) else str(annotation)
    return text.replace("typing.", "").replace("torch.Tensor", "Tensor").replace("NoneType", "None")


def _optional_inner(annotation: Any) -> Any | None:
    """X for ``X | None`` (or ``Optional[X]``), else None."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        if len(members) == 1 and len(typing.get_args(annotation)) == 2:
            return members[0]
    return None


def _node(annotation: Any, what: str) -> Node:
    """The schema form of one annotation; ``what`` names it in a refusal."""
    if annotation in _SCALARS:
        return Leaf(_SCALARS[annotation])
    if annotation is torch.Size:  # a tuple of ints whose value the region keeps a torch.Size
        return Leaf("SymInt[]", sequence=True, made_by="_Size")
    inner = _optional_inner(annotation)
    if inner is not None:
        node = _node(inner, what)
        if isinstance(node, Leaf) and not node.sequence:
            return Leaf(node.schema + "?")
        if isinstance(node, Leaf) and node.schema in _OPTIONAL_LISTS:
            return Leaf(_OPTIONAL_LISTS[node.schema], sequence=True, made_by=node.made_by)
        # A fixed tuple of one item type (`tuple[int, int] | None`): the optional list of that type, which the
        # region's caller fills from the tuple and the kernels read back as one.
        if isinstance(node, Fixed) and node.items and all(isinstance(i, Leaf) and not i.sequence for i in node.items):
            kinds = {i.schema for i in node.items if isinstance(i, Leaf)}
            listed = _LISTS.get(kinds.pop()) if len(kinds) == 1 else None
            if listed in _OPTIONAL_LISTS:
                return Leaf(_OPTIONAL_LISTS[listed], sequence=True)
        raise TorchOpError(f"{what} is {_shown(annotation)}: torch.library has no optional form of "
                           f"{_shown(inner)} (a fixed tuple cannot be flattened around a None)")
    if typing.get_origin(annotation) is collections.abc.Sequence and len(typing.get_args(annotation)) == 1:
        # Read alike whether a list or a tuple comes (the checker refuses what tells them apart): a list here.
        annotation = tuple[typing.get_args(annotation)[0], ...]  # type: ignore[misc]
    if typing.get_origin(annotation) is tuple:
        items = typing.get_args(annotation)
        if len(items) == 2 and items[1] is Ellipsis:
            item = _node(items[0], what)
            listed = _LISTS.get(item.schema) if isinstance(item, Leaf) and not item.sequence else None
            if listed is None:
                raise TorchOpError(f"{what} is {_shown(annotation)}: torch.library has no list of {_shown(items[0])}")
            return Leaf(listed, sequence=True)
        if items == ((),):
            return Fixed(())
        return Fixed(tuple(_node(item, f"{what} item {index}") for index, item in enumerate(items)))
    raise TorchOpError(f"{what} is {_shown(annotation)}, which is not a region type torch.library can take")


def _leaves(node: Node, expression: str) -> list[tuple[Leaf, str]]:
    """Each schema entry of ``node`` and the expression that reads it out of ``expression``."""
    if isinstance(node, Leaf):
        return [(node, expression)]
    found: list[tuple[Leaf, str]] = []
    for index, item in enumerate(node.items):
        found.extend(_leaves(item, f"{expression}[{index}]"))
    return found


def _rebuilt(node: Node, names: Sequence[str], at: list[int]) -> str:
    """The expression that rebuilds a value of ``node``'s shape from schema values named ``names``, from ``at[0]`` on."""
    if isinstance(node, Leaf):
        name = names[at[0]]
        at[0] += 1
        if not node.sequence:
            return name
        made = f"{node.made_by}({name})"
        return f"(None if {name} is None else {made})" if node.schema.endswith("?") else made
    parts = [_rebuilt(item, names, at) for item in node.items]
    return "(" + "".join(f"{part}, " for part in parts) + ")"


# --- a method region's attributes as schema parameters ----------------------------------------

def _annotation(text: str, what: str) -> Any:
    """The annotation a read's type (as the build's index writes it: ``tuple[int, ...]``, ``torch.Tensor | None``)
    stands for; parsed, not evaluated, since the index is a file of the cache."""
    text = text.strip()
    if text.endswith(" | None"):
        inner: Any = _annotation(text[: -len(" | None")], what)
        return inner | None
    if text.startswith("tuple[") and text.endswith("]"):
        items, depth, start, inner = [], 0, 0, text[len("tuple["):-1]
        for index, char in enumerate(inner + ","):
            depth += {"[": 1, "]": -1}.get(char, 0)
            if char == "," and depth == 0:
                items.append(inner[start:index].strip())
                start = index + 1
        if items == ["()"]:
            return tuple[()]
        if len(items) == 2 and items[1] == "...":
            return tuple[_annotation(items[0], what), ...]  # type: ignore[misc]
        return tuple[tuple(_annotation(item, what) for item in items)]  # type: ignore[misc]
    if text in instance.NAMED_TYPES:
        return instance.NAMED_TYPES[text]
    raise TorchOpError(f"{what} is {text}, which is not a type torch.library can take")


def _attributes(reader: Any, taken: set[str]) -> list[Parameter]:
    """A method region's reads as schema parameters, named after their paths (``self_attn_c_proj_weight``)."""
    properties = instance.properties_read(reader)
    if properties:
        raise TorchOpError(f"it reads `{properties[0]}`, a property, which its fake kernel could not stand in for")
    attributes = []
    for path, kind in zip(reader.reads, reader.types):
        shown = reader.shown(path)
        name = re.sub(r"\W", "_", shown)
        while name in taken:
            name += "_"
        taken.add(name)
        attributes.append(Parameter(name, _node(_annotation(kind, f"attribute `{shown}`"), f"attribute `{shown}`"),
                                    inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.empty))
    return attributes


def _access(base: str, path: str) -> str:
    """The expression reading ``path`` from ``base`` as Python's attribute lookup does (``getattr`` for a
    ModuleList's ``0``)."""
    for part in path.split(".") if path else []:
        base = f"{base}.{part}" if part.isidentifier() and not keyword.iskeyword(part) else f"getattr({base}, {part!r})"
    return base


# --- one region's operator -------------------------------------------------------------------


@dataclass
class Parameter:
    name: str
    node: Node
    kind: Any  # inspect.Parameter's kind
    default: Any


@dataclass
class Layout:
    """How one region's arguments and results map onto its operator's flat schema."""

    parameters: list[Parameter]  # the region's own, in signature order (a method's instance left out)
    returns: Node | None  # None: the region returns None
    arguments: list[tuple[str, Leaf]]  # the flat schema arguments, named
    results: list[Leaf]
    # A method region's reads through its instance (ppy.instance.InstanceReader), and those reads as schema
    # parameters after the region's own: the operator takes the values, never the instance.
    reader: Any = None
    attributes: list[Parameter] = field(default_factory=list)

    @property
    def every(self) -> list[Parameter]:
        """The schema's parameters in order: the region's own, then a method region's attributes."""
        return [*self.parameters, *self.attributes]

    @classmethod
    def of(cls, region: Region[Any, Any]) -> Layout:
        function = inspect.unwrap(region.python)
        try:
            hints = typing.get_type_hints(function)
        except Exception as error:  # an annotation that does not evaluate where the function lives
            raise TorchOpError(f"its annotations do not evaluate ({type(error).__name__}: {error})") from None
        form = region.compiled_form
        reader = form.instance if form is not None else None
        declared_parameters = list(inspect.signature(function).parameters.values())
        if reader is not None:
            declared_parameters = declared_parameters[1:]  # the instance: the operator takes its reads instead
        parameters = []
        for declared in declared_parameters:
            if declared.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
                raise TorchOpError(f"parameter `{declared.name}` is variadic")
            if declared.name not in hints:
                raise TorchOpError(f"parameter `{declared.name}` has no annotation")
            node = _node(hints[declared.name], f"parameter `{declared.name}`")
            parameters.append(Parameter(declared.name, node, declared.kind, declared.default))
        attributes = _attributes(reader, {p.name for p in parameters}) if reader is not None else []
        returned = hints.get("return", type(None))
        returns = None if returned is type(None) else _node(returned, "the return")
        taken = {p.name for p in parameters} | {a.name for a in attributes}
        arguments = []
        for parameter in [*parameters, *attributes]:
            for index, (leaf, _) in enumerate(_leaves(parameter.node, "")):
                name = parameter.name if isinstance(parameter.node, Leaf) else f"{parameter.name}_{index}"
                while name != parameter.name and name in taken:
                    name += "_"
                taken.add(name)
                arguments.append((name, leaf))
        results = [leaf for leaf, _ in _leaves(returns, "")] if returns is not None else []
        for kind in (leaf.schema.rstrip("?") for leaf in results):
            if kind in _UNRETURNABLE:
                raise TorchOpError(f"the return is {_shown(returned)}: {_UNRETURNABLE[kind]}")
        if isinstance(returns, Leaf) and not returns.sequence and not returns.schema.startswith("Tensor"):
            raise TorchOpError(f"the return is {_shown(returned)}: Dynamo takes no lone number from an operator "
                               "(\"torch.* op returned non-Tensor\"; in a tuple with a tensor it does)")
        return cls(parameters, returns, arguments, results, reader, attributes)

    def schema(self, writes: Sequence[str]) -> str:
        """The schema, written parameters marked ``Tensor(aN!)``."""
        written = set(writes)
        entries = []
        alias = 0
        for parameter in self.every:
            for name, leaf in self.arguments_of(parameter):
                kind = leaf.schema
                if parameter.name in written and kind.startswith("Tensor"):
                    kind = f"Tensor(a{alias}!){kind[len('Tensor'):]}"
                    alias += 1
                entries.append(f"{kind} {name}")
        returned = ", ".join(leaf.schema for leaf in self.results)
        result = returned if len(self.results) == 1 else f"({returned})"
        return f"({', '.join(entries)}) -> {result}"

    def arguments_of(self, parameter: Parameter) -> list[tuple[str, Leaf]]:
        start = 0
        for other in self.every:
            count = len(_leaves(other.node, ""))
            if other is parameter:
                return self.arguments[start:start + count]
            start += count
        raise KeyError(parameter.name)

    def mutated(self, writes: Sequence[str]) -> list[str]:
        """The schema arguments a write to ``writes`` reaches: every tensor entry of each written parameter."""
        return [name for parameter in self.every if parameter.name in writes
                for name, leaf in self.arguments_of(parameter) if leaf.schema.startswith("Tensor")]


@dataclass
class Registered:
    """A region's operator, and the region it runs now (a reloaded module's region takes over its operator)."""

    name: str
    schema: str
    region: Region[Any, Any]
    layout: Layout
    values: Callable[..., list[Any]]  # flat operator arguments -> the region's arguments, in signature order
    mutates: bool
    random: bool
    op: Any = None  # torch._ops.OpOverload
    call: Callable[..., Any] | None = None  # the region's signature, calling the operator


_lock = threading.RLock()
_by_name: dict[str, Registered] = {}


def op(region: Region[Any, Any]) -> Any:
    """The region's operator (``torch.ops.ppy.<name>.default``), registered now if it is not yet.

    Raises ``TorchOpError`` when the region does not compile (it then has no
    operator: under torch.compile its Python body is traced instead) or when
    torch.library cannot express its signature.
    """
    return _registered(region).op


def op_name(region: Region[Any, Any]) -> str:
    """The operator's name inside the ``ppy`` namespace: the module and qualified name, made an identifier."""
    parts = [*region.__module__.split("."), *region.__qualname__.replace("<locals>", "locals").split(".")]
    name = "__".join(re.sub(r"\W", "_", part) for part in parts).strip("_") or "region"
    return name if not keyword.iskeyword(name) else name + "_"


def flat_arguments(region: Region[Any, Any], args: Sequence[Any], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """A call's arguments as the operator takes them (fixed tuples flattened, defaults filled in)."""
    layout = _registered(region).layout
    bound = inspect.signature(inspect.unwrap(region.python)).bind(*args, **kwargs)
    bound.apply_defaults()
    values = [bound.arguments[parameter.name] for parameter in layout.parameters]
    if layout.reader is not None:
        read = layout.reader.arguments(args[0])
        if isinstance(read, instance.Mismatch):
            raise TorchOpError(f"ppy: `{read.path}` is not as the build of `{region.__qualname__}` read it: {read.why}")
        values.extend(read)
    flat = []
    for parameter, value in zip(layout.every, values):
        for _, path in _leaves(parameter.node, ""):
            flat.append(_dig(value, path))
    return tuple(flat)


def _dig(value: Any, path: str) -> Any:
    for index in re.findall(r"\[(\d+)\]", path):
        value = value[int(index)]
    return value


_CUSTOM_OP_TAGS = "tags" in inspect.signature(torch.library.custom_op).parameters


def _registered(region: Region[Any, Any]) -> Registered:
    found = getattr(region, "_ppy_torch_op", None)
    if found is not None:
        return found  # type: ignore[no-any-return]
    with _lock:
        found = getattr(region, "_ppy_torch_op", None)
        if found is None:
            found = _register(region)
            region._ppy_torch_op = found  # type: ignore[attr-defined]
        return found


def _register(region: Region[Any, Any]) -> Registered:
    region.build()
    if region.compiled is None:
        reason = region.fallback_reason or "it is not compiled"
        raise TorchOpError(f"ppy: region `{region.__qualname__}` has no torch operator: {reason}")
    try:
        layout = Layout.of(region)
    except TorchOpError as error:
        raise TorchOpError(f"ppy: region `{region.__qualname__}` cannot be a torch operator: {error}") from None
    effects = region.effects
    # A method region's writes name attribute paths (`self.bn.running_mean`): its schema names them as parameters.
    renamed = {instance_path: a.name for instance_path, a in zip(map(layout.reader.shown, layout.reader.reads),
                                                                 layout.attributes)} if layout.reader else {}
    writes = [] if region.pure else [renamed.get(w, w) for w in effects.get("writes", [])]
    random = bool(effects.get("random", False))
    schema = layout.schema(writes)
    name = op_name(region)
    existing = _by_name.get(name)
    if existing is not None and (existing.schema != schema or existing.region.site.qualname != region.site.qualname
                                 or existing.region.site.path != region.site.path or existing.random != random):
        # Another region of the same module and name, or this one edited and reloaded: a name of its own.
        name = f"{name}_{hashlib.sha256((region.site.path + region.site.key + schema).encode()).hexdigest()[:8]}"
        existing = _by_name.get(name)
    if existing is not None:
        # The same operator, the region reloaded: what its calls run and check is the new region's (a method
        # region's caller holds the classes and the body it tests and falls back to).
        existing.region, existing.layout, existing.values = region, layout, _values_function(layout)
        existing.call = _caller(region, layout, existing.op, random, existing.mutates)
        return existing
    entry = Registered(name, schema, region, layout, _values_function(layout), bool(writes), random)
    kernel, fake = _kernels(entry)
    # torch.library.custom_op takes tags from torch 2.7 on; before, an operator that draws random numbers has
    # none (compiled graphs may then reorder or merge its calls: README.md, "Install", says so).
    tagging: dict[str, Any] = {"tags": (torch.Tag.nondeterministic_seeded,) if random else ()} if _CUSTOM_OP_TAGS else {}
    try:
        definition = torch.library.custom_op(f"{NAMESPACE}::{name}", kernel, mutates_args=layout.mutated(writes),
                                             schema=schema, **tagging)
    except (RuntimeError, ValueError) as error:
        raise TorchOpError(f"ppy: region `{region.__qualname__}` cannot be a torch operator: torch.library refused "
                           f"the schema {schema}: {str(error).splitlines()[0]}") from None
    definition.register_fake(fake)
    if not entry.mutates:
        definition.register_autograd(_backward(entry), setup_context=_setup_context)
    else:
        # torch.library differentiates no operator that writes its inputs; say so in ppy's words when asked to.
        definition._backward_fn = _refuse_writes(entry)  # pylint: disable=protected-access
    entry.op = definition._opoverload  # pylint: disable=protected-access
    entry.call = _caller(region, layout, entry.op, random, entry.mutates)
    # The definition owns the dispatcher registrations: it lives as long as the process.
    _definitions.append(definition)
    _by_name[name] = entry
    return entry


_definitions: list[Any] = []


def _caller(region: Region[Any, Any], layout: Layout, operator: Any, random: bool,
            writes: bool) -> Callable[..., Any]:
    """A function with the region's own signature that calls its operator: what Dynamo and export trace.

    Generated straight-line code, so that Dynamo inlines it without a guess:
    Python binds the arguments, fixed tuples are read item by item and the
    results are put back into the region's shape.
    """
    namespace: dict[str, Any] = {"_op": operator, "_Size": torch.Size}
    parameters = []
    seen_keyword_only = False
    for index, parameter in enumerate(layout.parameters):
        text = parameter.name
        if parameter.default is not inspect.Parameter.empty:
            namespace[f"_default{index}"] = parameter.default
            text += f"=_default{index}"
        if parameter.kind == inspect.Parameter.KEYWORD_ONLY and not seen_keyword_only:
            parameters.append("*")
            seen_keyword_only = True
        parameters.append(text)
        if parameter.kind == inspect.Parameter.POSITIONAL_ONLY and (
                index + 1 == len(layout.parameters) or layout.parameters[index + 1].kind != inspect.Parameter.POSITIONAL_ONLY):
            parameters.append("/")
    flat = [expression for parameter in layout.parameters for _, expression in _leaves(parameter.node, parameter.name)]
    own = [p.name if p.kind != inspect.Parameter.KEYWORD_ONLY else f"{p.name}={p.name}" for p in layout.parameters]
    failing = _name_checks(region, namespace)
    if layout.reader is not None:
        owner = layout.reader.name
        parameters.insert(0, owner)
        own.insert(0, owner)
        flat += [expression for path, attribute in zip(layout.reader.reads, layout.attributes)
                 for _, expression in _leaves(attribute.node, _access(owner, path))]
        failing += _instance_checks(layout, namespace, owner, random, writes)
    body = ""
    if failing:
        namespace["_body"] = region.python
        body = f"    if {' or '.join(failing)}:\n        return _body({', '.join(own)})\n"
    call = f"_op({', '.join(flat)})"
    if layout.returns is None:
        body += f"    {call}\n    return None\n"
    else:
        names = ["_result"] if len(layout.results) == 1 else [f"_result[{i}]" for i in range(len(layout.results))]
        body += f"    _result = {call}\n    return {_rebuilt(layout.returns, names, [0])}\n"
    source = f"def {region.__name__}({', '.join(parameters)}):\n{body}"
    exec(compile(source, f"<ppy torch op {region.__qualname__}>", "exec"), namespace)  # pylint: disable=exec-used
    function: Callable[..., Any] = namespace[region.__name__]
    function.__qualname__ = region.__qualname__
    return function


_LITERALS = (int, float, bool, str, complex, type(None))


def _name_checks(region: Region[Any, Any], namespace: dict[str, Any]) -> list[str]:
    """Tests, in the caller torch traces, that the names the build took as fixed (a module constant, a helper,
    torch's function behind a name) are still what was proved: under Dynamo each is a guard. The operator's
    kernel proves them again at each call, but its backward pass is traced from the Python body once, at compile
    time, with the values of then: without the guard, `SCALE = 7` after compiling gave gradients of `SCALE = 2`.
    Traced again after a change, the region is its body (which reads the new value), or the operator again where
    the build's proof still holds."""
    form = region.compiled_form
    failing = []
    for index, guard in enumerate(form.guards if form is not None else ()):
        namespace[f"_names{index}"] = guard[0]
        name = guard[1]
        if len(guard) == 2:  # a name that must stay unbound
            failing.append(f"{name!r} in _names{index}")
            continue
        namespace[f"_proved{index}"] = guard[2]
        # A number (a str...) by value, as Python's rebinding to an equal one changes nothing; the rest by identity.
        test = "!=" if type(guard[2]) in _LITERALS else "is not"
        failing.append(f"_names{index}.get({name!r}, _MISSING) {test} _proved{index}")
    namespace["_MISSING"] = instance.MISSING
    return failing


def _instance_checks(layout: Layout, namespace: dict[str, Any], owner: str, random: bool,
                     writes: bool) -> list[str]:
    """The caller's tests for a method region, each sending the call to its Python body where the instance is not
    as the build read it, as the compiled entry's reader decides at an eager call (ppy.instance): each inlined
    object's class and hooks, each container's length, each value's kind, every object there. Traced by Dynamo,
    each test is a guard (a swapped submodule, a value of another kind: traced again, the other way), but for
    hooks, which Dynamo does not guard unless `torch._dynamo.config.skip_nnmodule_hook_guards` is off, as for any
    module it compiles."""
    namespace["_lookup"], namespace["_fits"] = instance.lookup, instance.fits
    failing = []
    for index, (path, kind) in enumerate(layout.reader.checks):
        namespace[f"_class{index}"] = kind
        found = f"_lookup({owner}, {tuple(path.split('.'))!r})" if path else owner
        failing.append(f"type({found}) is not _class{index}")
        if path and issubclass(kind, torch.nn.Module):  # after its class's test: there, it is there
            failing += [f"{_access(owner, path)}.{hooks}" for hooks in instance.HOOK_DICTS]
            failing.append(f"{_access(owner, path)}.{instance.COMPILED_CALL} is not None")
    failing += _own_method_tests(layout.reader, namespace, owner)
    for path in layout.reader.ordered:  # a Sequential's items by position: numbered in order
        items = f"{_access(owner, path)}._modules"
        failing.append(f"list({items}) != [str(i) for i in range(len({items}))]")
    failing += _class_tests(layout.reader, namespace)
    for path, count in layout.reader.lengths:  # after the container's class's test: there, it is there
        failing.append(f"len({_access(owner, path)}) != {count}")
    for index, (path, kind) in enumerate(zip(layout.reader.reads, layout.reader.types)):
        # A value of another kind (a tensor where the build read a float) is one the compiled entry declines.
        accepted = instance.accepted_types(kind)
        if accepted is not None:
            namespace[f"_kinds{index}"] = accepted
            failing.append(f"not _fits(_kinds{index}, _lookup({owner}, {tuple(path.split('.'))!r}))")
    for index, hooks in enumerate(instance.global_hook_dicts()):
        namespace[f"_global_hooks{index}"] = hooks
        failing.append(f"_global_hooks{index}")
    if random or writes:
        # With gradients on, its body: an operator's backward pass would run it again and draw again, and
        # torch.library differentiates no operator that writes its inputs (a training BatchNorm's statistics).
        # Under no_grad (inference, calibration), one node, its writes its `mutates_args`.
        namespace["_grad_enabled"] = torch.is_grad_enabled
        failing.append("_grad_enabled()")
    return failing


def _own_method_tests(reader: instance.InstanceReader, namespace: dict[str, Any], owner: str) -> list[str]:
    """That each inlined object's methods are its class's functions bound to it, not attributes of its own
    (accelerate's `module.forward = partial(...)`), as tests of what reading them gives: Dynamo guards an
    attribute it reads, where it does not guard a test of the instance's `__dict__`: a method is its function
    bound, a static method the function itself. Dynamo guards what else a class may hold (a region) itself."""
    namespace["_MethodType"] = types.MethodType
    classes, failing = dict(reader.checks), []
    for index, (path, names) in enumerate(reader.absent):
        for n, name in enumerate(names):
            defining, value = instance.defining_class(classes[path], name)
            if defining is None or not name.isidentifier():
                continue
            method, function = f"{_access(owner, path)}.{name}", f"_method{index}_{n}"
            if isinstance(value, staticmethod) and isinstance(value.__func__, types.FunctionType):
                namespace[function] = value.__func__
                failing.append(f"{method} is not {function}")
            elif isinstance(value, (types.FunctionType, classmethod)):
                namespace[function] = value.__func__ if isinstance(value, classmethod) else value
                failing.append(f"type({method}) is not _MethodType or {method}.__func__ is not {function}")
    return failing


def _class_tests(reader: instance.InstanceReader, namespace: dict[str, Any]) -> list[str]:
    """What each class the build read must still find for each name (ppy.instance's ClassTable), as tests of its
    bases' dicts in MRO order, which Dynamo guards: a class patched since compiling is traced again, and one not
    as the build read it when the caller is made (patched before) is its body on every call. nn.Module's own dict
    is left out: torch.export and torch.fx patch its `__call__` and `__getattr__` while they trace, routing calls
    through what they record (the compiled entry still checks it at an eager call)."""
    failing = []
    table = reader.table
    for index, (kind, names, found) in enumerate(table.entries if table is not None else []):
        assert table is not None  # there are entries only with one
        if table.changed(index) is not None:
            return ["True"]
        bases = [base for base in kind.__mro__ if base not in (torch.nn.Module, object)]
        for b, base in enumerate(bases):
            namespace[f"_base{index}_{b}"] = base
        for n, (name, (defining, value)) in enumerate(zip(names, found)):
            owner = bases.index(defining) if defining in bases else None
            # Found in nn.Module or object (or nothing): no class below may define it since.
            for b in range(len(bases) if owner is None else owner):
                failing.append(f"{name!r} in _base{index}_{b}.__dict__")
            if owner is not None:
                namespace[f"_was{index}_{n}"] = value
                held = f"_base{index}_{owner}.__dict__.get({name!r})"
                failing.append(f"{held} is not _was{index}_{n}")
                if isinstance(value, (staticmethod, classmethod)):
                    # Dynamo guards a static method in a class's dict by its type alone: its function by identity.
                    namespace[f"_wasfunc{index}_{n}"] = value.__func__
                    failing.append(f"{held}.__func__ is not _wasfunc{index}_{n}")
    return failing


def _values_function(layout: Layout) -> Callable[..., list[Any]]:
    """Flat operator arguments back into the region's arguments: fixed tuples reassembled, lists made tuples."""
    names = [name for name, _ in layout.arguments]
    at = [0]
    rebuilt = [_rebuilt(parameter.node, names, at) for parameter in layout.every]
    namespace: dict[str, Any] = {"_Size": torch.Size}
    exec(f"def _values({', '.join(names)}):\n    return [{', '.join(rebuilt)}]\n", namespace)  # pylint: disable=exec-used
    return namespace["_values"]  # type: ignore[no-any-return]


def _kernels(entry: Registered) -> tuple[Callable[..., Any], Callable[..., Any]]:
    """The operator's kernel (the compiled function) and fake kernel (the Python body), over flat arguments."""

    def kernel(*flat: Any) -> Any:
        return _fresh(_flat_results(entry.layout, _run(entry.region, entry.layout, entry.values(*flat), True)), flat)

    def fake(*flat: Any) -> Any:
        return _fresh(_flat_results(entry.layout, _run(entry.region, entry.layout, entry.values(*flat), False)), flat)

    return kernel, fake


def _run(region: Region[Any, Any], layout: Layout, values: list[Any], compiled: bool) -> Any:
    """The region on its values in schema order: the compiled function where it takes them, else the body (for a
    method region, on a stand-in of its instance holding the attribute values)."""
    if compiled:
        form = region.compiled_form
        # A method region's raw entry takes its own arguments, then the reads: the schema's order.
        function = form.instance.raw if form is not None and form.instance is not None else region.compiled
        if function is not None:
            result = function(*values)  # every parameter positionally, keyword-only ones too
            if result is not NotImplemented:
                return result
    own = values[:len(layout.parameters)]
    positional = [v for p, v in zip(layout.parameters, own) if p.kind != inspect.Parameter.KEYWORD_ONLY]
    keywords = {p.name: v for p, v in zip(layout.parameters, own) if p.kind == inspect.Parameter.KEYWORD_ONLY}
    if layout.reader is not None:
        positional.insert(0, instance.stand_in(layout.reader, values[len(layout.parameters):]))
    return region.python(*positional, **keywords)


def _flat_results(layout: Layout, result: Any) -> list[Any]:
    if layout.returns is None:
        return []
    return [list(value) if leaf.sequence and value is not None else value
            for leaf, value in ((leaf, _dig(result, path)) for leaf, path in _leaves(layout.returns, ""))]


def _storage(tensor: torch.Tensor) -> int:
    return tensor.untyped_storage()._cdata  # type: ignore[no-any-return]  # pylint: disable=protected-access


def _fresh(results: list[Any], inputs: Sequence[Any]) -> Any:
    """The results, each tensor that shares memory with an input or an earlier result copied (an operator's rule)."""
    taken = {_storage(t) for value in inputs for t in (value if isinstance(value, list) else [value])
             if isinstance(t, torch.Tensor)}

    def own(value: Any) -> Any:
        if isinstance(value, list):
            return [own(item) for item in value]
        if not isinstance(value, torch.Tensor):
            return value
        if _storage(value) in taken:
            value = value.clone()
        taken.add(_storage(value))
        return value

    owned = [own(value) for value in results]
    if not owned:
        return None
    return owned[0] if len(owned) == 1 else tuple(owned)


# --- autograd: recompute and differentiate ----------------------------------------------------


def _setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
    """Keep the inputs for the backward pass: tensors saved (so autograd checks their versions), the rest as they are."""
    tensors: list[torch.Tensor] = []
    layout: list[Any] = []
    for value in inputs:
        if isinstance(value, torch.Tensor):
            layout.append(("tensor", len(tensors)))
            tensors.append(value)
        elif isinstance(value, (list, tuple)) and any(isinstance(item, torch.Tensor) for item in value):
            slots: list[int | None] = []
            for item in value:
                if isinstance(item, torch.Tensor):
                    slots.append(len(tensors))
                    tensors.append(item)
                else:
                    slots.append(None)
            layout.append(("list", slots))
        else:
            layout.append(("value", value))
    ctx.save_for_backward(*tensors)
    ctx.ppy_layout = layout


def _differentiable(tensor: torch.Tensor) -> bool:
    return tensor.is_floating_point() or tensor.is_complex()


def _backward(entry: Registered) -> Callable[..., Any]:
    def backward(ctx: Any, *grads: Any) -> Any:
        if entry.random and entry.name not in _warned:
            _warned.add(entry.name)
            site = entry.region.site
            warnings.warn_explicit(
                f"ppy: region `{entry.region.__qualname__}` may draw random numbers (its model says so: a dropout "
                "whose probability is not known to be 0, such as scaled_dot_product_attention's dropout_p, or an "
                "op such as bernoulli or randn); its torch operator's backward "
                "pass runs it again, so where it really draws, the gradient is taken over new draws",
                TorchOpRandomWarning, site.path, site.line)
        saved = ctx.saved_tensors
        needs = ctx.needs_input_grad
        leaves: list[torch.Tensor] = []
        owners: list[tuple[int, int | None]] = []  # (flat argument, list item or None) of each leaf

        def prepared(tensor: torch.Tensor, wanted: bool, owner: tuple[int, int | None]) -> torch.Tensor:
            copy = tensor.detach()
            if wanted and _differentiable(copy):
                copy.requires_grad_(True)
                leaves.append(copy)
                owners.append(owner)
            return copy

        flat: list[Any] = []
        for index, (kind, slot) in enumerate(ctx.ppy_layout):
            if kind == "tensor":
                flat.append(prepared(saved[slot], needs[index], (index, None)))
            elif kind == "list":
                flat.append([None if s is None else prepared(saved[s], needs[index], (index, item))
                             for item, s in enumerate(slot)])
            else:
                flat.append(slot)
        answer: list[Any] = [None] * len(flat)
        for index, (kind, slot) in enumerate(ctx.ppy_layout):
            if kind == "list":
                answer[index] = [None] * len(slot)
        if not leaves:
            return tuple(answer)
        with torch.enable_grad():
            results = _flat_results(entry.layout, _run(entry.region, entry.layout, entry.values(*flat), True))
            outputs, cotangents = [], []
            for result, grad in zip(results, grads):
                if grad is None:
                    continue  # a result autograd hands nothing for: an int, a tuple of ints, an unused output
                pairs = zip(result, grad) if isinstance(result, list) else [(result, grad)]
                for tensor, cotangent in pairs:
                    if isinstance(tensor, torch.Tensor) and tensor.requires_grad and cotangent is not None:
                        outputs.append(tensor)
                        cotangents.append(cotangent)
            if not outputs:
                return tuple(answer)
            found = torch.autograd.grad(outputs, leaves, cotangents, allow_unused=True)
        for (index, item), grad in zip(owners, found):
            if item is None:
                answer[index] = grad
            else:
                answer[index][item] = grad
        return tuple(answer)

    return backward


def _refuse_writes(entry: Registered) -> Callable[..., Any]:
    def backward(ctx: Any, *grads: Any) -> Any:
        raise RuntimeError(
            f"ppy: region `{entry.region.__qualname__}` writes its parameters, and torch.library cannot differentiate "
            "an operator that writes its inputs; run it under torch.no_grad() inside torch.compile/export, "
            "or call it eagerly to train through it")

    return backward


# --- routing: what Region.__call__ does while torch compiles or exports ----------------------


def _ready(serial: str) -> bool:
    """Whether the region numbered ``serial`` runs as its operator; registers it on the way. Dynamo calls this,
    it does not trace it (see _teach_dynamo)."""
    region = decorators.region_of(serial)
    if region is None:
        return False
    try:
        _registered(region)
    except TorchOpError as error:
        if region.compiled is not None:
            # Compiled, but not expressible as an operator: traced as its body, which says why once.
            key = ("unexpressible", region.site)
            if key not in _warned:
                _warned.add(key)
                # At the region's own line: the caller's frame here is Dynamo's.
                warnings.warn_explicit(f"{error}; under torch.compile and torch.export it is traced as its Python "
                                       "body", TorchOpFallbackWarning, region.site.path, region.site.line)
        return False
    return True


_warned: set[Any] = set()


def call(region: Region[Any, Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """A region call made while torch compiles or exports: one operator call, or the body where it has none."""
    if _ready(region.serial):
        return region._ppy_torch_op.call(*args, **kwargs)  # type: ignore[attr-defined]
    return region.python(*args, **kwargs)


def compiling() -> bool:
    """``torch.compiler.is_compiling()`` at half the cost: Region.__call__ asks on every eager call.

    torch.export (non-strict) sets the flag while it runs the model; Dynamo,
    which never sets it for the code it traces, sees this function as a
    constant True (the substitute registered below), so no guard is installed.
    """
    return _compiler._is_compiling_flag  # pylint: disable=protected-access


_compiler = torch.compiler


def _compiling_in_dynamo() -> bool:
    return True


def _teach_dynamo() -> None:
    """What Dynamo must know of the routing: `compiling()` is True while it traces, and `_ready` is a constant
    to call rather than code to trace. Registered once torch._dynamo is loaded, since importing it to register
    them would add more than a second to every program that uses regions and never compiles."""
    torch.compiler.assume_constant_result(_ready)  # type: ignore[no-untyped-call]  # torch leaves it untyped
    torch.compiler.substitute_in_graph(compiling)(_compiling_in_dynamo)
    # torch.compile of a module looks its forward up in the compiled context: MethodRegion.__get__ (and `compiling`,
    # which it asks) would be the frame Dynamo compiles, one code for every method region, and Dynamo stops
    # recompiling a code after eight (`recompile_limit`). Run as Python there, __get__ binds the region's own
    # method, whose code is the region's. Traced inside a graph, both are still inlined.
    from torch._dynamo import eval_frame

    skip = getattr(eval_frame, "skip_code", None)
    if skip is not None:
        for function in (decorators.MethodRegion.__get__, compiling):
            skip(function.__code__)


def install() -> None:
    """Route region calls here while torch compiles or exports (``Region.__call__`` asks once per call)."""
    decorators.attach_tracer(compiling, call)
    dynamo_hooks.when_loaded(_teach_dynamo)
