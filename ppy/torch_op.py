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
"""

from __future__ import annotations

import hashlib
import inspect
import keyword
import re
import threading
import types
import typing
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from ppy import decorators, dynamo_hooks
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
    inner = _optional_inner(annotation)
    if inner is not None:
        node = _node(inner, what)
        if isinstance(node, Leaf) and not node.sequence:
            return Leaf(node.schema + "?")
        if isinstance(node, Leaf) and node.schema in _OPTIONAL_LISTS:
            return Leaf(_OPTIONAL_LISTS[node.schema], sequence=True)
        raise TorchOpError(f"{what} is {_shown(annotation)}: torch.library has no optional form of "
                           f"{_shown(inner)} (a fixed tuple cannot be flattened around a None)")
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
        return f"(None if {name} is None else tuple({name}))" if node.schema.endswith("?") else f"tuple({name})"
    parts = [_rebuilt(item, names, at) for item in node.items]
    return "(" + "".join(f"{part}, " for part in parts) + ")"


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

    parameters: list[Parameter]
    returns: Node | None  # None: the region returns None
    arguments: list[tuple[str, Leaf]]  # the flat schema arguments, named
    results: list[Leaf]

    @classmethod
    def of(cls, region: Region[Any, Any]) -> Layout:
        form = region.compiled_form
        if form is not None and form.instance is not None:
            # Its fake kernel would need the instance the inputs were read from, which an operator cannot take.
            raise TorchOpError("it is a method region, whose inputs are read through `self`; it is not an operator "
                               "yet, and Dynamo traces its Python body, reading the module as it reads any")
        function = inspect.unwrap(region.python)
        try:
            hints = typing.get_type_hints(function)
        except Exception as error:  # an annotation that does not evaluate where the function lives
            raise TorchOpError(f"its annotations do not evaluate ({type(error).__name__}: {error})") from None
        parameters = []
        for declared in inspect.signature(function).parameters.values():
            if declared.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.VAR_KEYWORD):
                raise TorchOpError(f"parameter `{declared.name}` is variadic")
            if declared.name not in hints:
                raise TorchOpError(f"parameter `{declared.name}` has no annotation")
            node = _node(hints[declared.name], f"parameter `{declared.name}`")
            parameters.append(Parameter(declared.name, node, declared.kind, declared.default))
        returned = hints.get("return", type(None))
        returns = None if returned is type(None) else _node(returned, "the return")
        taken = {p.name for p in parameters}
        arguments = []
        for parameter in parameters:
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
        return cls(parameters, returns, arguments, results)

    def schema(self, writes: Sequence[str]) -> str:
        """The schema, written parameters marked ``Tensor(aN!)``."""
        written = set(writes)
        entries = []
        alias = 0
        for parameter in self.parameters:
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
        for other in self.parameters:
            count = len(_leaves(other.node, ""))
            if other is parameter:
                return self.arguments[start:start + count]
            start += count
        raise KeyError(parameter.name)

    def mutated(self, writes: Sequence[str]) -> list[str]:
        """The schema arguments a write to ``writes`` reaches: every tensor entry of each written parameter."""
        return [name for parameter in self.parameters if parameter.name in writes
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
    flat = []
    for parameter in layout.parameters:
        value = bound.arguments[parameter.name]
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
    writes = [] if region.pure else list(effects.get("writes", []))
    random = bool(effects.get("random", False))
    schema = layout.schema(writes)
    name = op_name(region)
    existing = _by_name.get(name)
    if existing is not None and (existing.schema != schema or existing.region.site.qualname != region.site.qualname
                                 or existing.region.site.path != region.site.path):
        # Another region of the same module and name, or this one edited and reloaded: a name of its own.
        name = f"{name}_{hashlib.sha256((region.site.path + region.site.key + schema).encode()).hexdigest()[:8]}"
        existing = _by_name.get(name)
    if existing is not None:
        existing.region = region
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
    entry.call = _caller(region, layout, entry.op)
    # The definition owns the dispatcher registrations: it lives as long as the process.
    _definitions.append(definition)
    _by_name[name] = entry
    return entry


_definitions: list[Any] = []


def _caller(region: Region[Any, Any], layout: Layout, operator: Any) -> Callable[..., Any]:
    """A function with the region's own signature that calls its operator: what Dynamo and export trace.

    Generated straight-line code, so that Dynamo inlines it without a guess:
    Python binds the arguments, fixed tuples are read item by item and the
    results are put back into the region's shape.
    """
    namespace: dict[str, Any] = {"_op": operator}
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
    call = f"_op({', '.join(flat)})"
    if layout.returns is None:
        body = f"    {call}\n    return None\n"
    else:
        names = ["_result"] if len(layout.results) == 1 else [f"_result[{i}]" for i in range(len(layout.results))]
        body = f"    _result = {call}\n    return {_rebuilt(layout.returns, names, [0])}\n"
    source = f"def {region.__name__}({', '.join(parameters)}):\n{body}"
    exec(compile(source, f"<ppy torch op {region.__qualname__}>", "exec"), namespace)  # pylint: disable=exec-used
    function: Callable[..., Any] = namespace[region.__name__]
    function.__qualname__ = region.__qualname__
    return function


def _values_function(layout: Layout) -> Callable[..., list[Any]]:
    """Flat operator arguments back into the region's arguments: fixed tuples reassembled, lists made tuples."""
    names = [name for name, _ in layout.arguments]
    at = [0]
    rebuilt = [_rebuilt(parameter.node, names, at) for parameter in layout.parameters]
    namespace: dict[str, Any] = {}
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
    """The region on its values in signature order: the compiled function where it takes them, else the body."""
    function = region.compiled if compiled else None
    if function is not None:
        result = function(*values)  # every parameter positionally, keyword-only ones too
        if result is not NotImplemented:
            return result
    positional = [v for p, v in zip(layout.parameters, values) if p.kind != inspect.Parameter.KEYWORD_ONLY]
    keywords = {p.name: v for p, v in zip(layout.parameters, values) if p.kind == inspect.Parameter.KEYWORD_ONLY}
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


def _ready(serial: int) -> bool:
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
                warnings.warn(f"{error}; under torch.compile and torch.export it is traced as its Python body",
                              TorchOpFallbackWarning, stacklevel=2)
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


def install() -> None:
    """Route region calls here while torch compiles or exports (``Region.__call__`` asks once per call)."""
    decorators.attach_tracer(compiling, call)
    dynamo_hooks.when_loaded(_teach_dynamo)
