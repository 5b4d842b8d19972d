"""Observe what torch's operators do that their schemas do not say, by running them.

A schema annotates writes (``Tensor(a!)``) and views (``Tensor(a)``), but some
composite operators leave effects out: ``batch_norm`` updates its running
statistics when ``training`` is true, ``type_as`` and ``sum_to_size`` hand back
their input itself when nothing changes, ``unsafe_chunk`` and
``unsafe_split`` return views, ``broadcast_tensors`` may return its inputs,
and some draw random numbers. These matter: a ``@ppy.pure`` region that
calls them writes its caller's tensors.

This runs torch's own OpInfo samples (``torch.testing._internal``) with every
builtin of the shipped bindings wrapped, so each call of a native function,
direct or from inside a Python-level function, is seen with its real
arguments. For each call the native overload is resolved the way the model
resolves calls (``model/bind.py``), then:

- an argument tensor whose version counter moved, where the schema declares no
  write, is a hidden write; when every such call had a bool argument at one
  value and a call without the write had it at the other, the write is
  recorded as conditional on that argument;
- a returned tensor sharing storage with an argument, where the schema
  declares no alias, is a hidden alias;
- a call that changed the CPU generator's state, on an op not tagged
  ``nondeterministic_seeded``, is a hidden random draw.

Only ``gen_opdata`` calls this, with torch installed; the results ship in
``opdata.json`` under ``effects``.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import warnings
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ppy_check.model import hostmath
from ppy_check.model import types as t
from ppy_check.model.bind import Argument, Bound, resolve
from ppy_check.model.ir import Const, MakeTuple, Param, Span
from ppy_check.schema import OpData
from ppy_check.torch_namespaces import PREFIXED_NAMESPACES

_SPAN = Span(0, 0, 0, 0)
SAMPLES_PER_OP = 12
CHILD_SECONDS = 60  # beyond a second an op, a child of the synthesized probe is taken to hang


@dataclass
class _Observed:
    writes: dict[str, list[tuple[dict[str, bool], bool]]] = field(default_factory=lambda: defaultdict(list))
    aliases: set[tuple[int, str]] = field(default_factory=set)
    random: bool = False


def _static_type(value: Any) -> t.Type | None:
    """The model's type of a runtime argument, or None for one no region value can be."""
    import torch

    if isinstance(value, torch.Tensor):
        return t.TENSOR
    if isinstance(value, (bool, int, float, str)) or value is None:
        return hostmath.type_of_value(value)
    if isinstance(value, torch.dtype):
        return t.DTYPE
    if isinstance(value, torch.device):
        return t.DEVICE
    if isinstance(value, torch.memory_format):
        return t.MEMORY_FORMAT
    if isinstance(value, torch.layout):
        return t.LAYOUT
    if isinstance(value, (tuple, list)):
        items = [_static_type(v) for v in value]
        return None if any(i is None for i in items) else t.TupleT(tuple(items))  # type: ignore[arg-type]
    return None


class _Arguments:
    """Runtime arguments as model expressions, remembering which object each stands for."""

    def __init__(self) -> None:
        self.objects: list[Any] = []

    def expr(self, value: Any) -> Any:
        kind = _static_type(value)
        if kind is None:
            raise TypeError("not a region value")
        if isinstance(value, (tuple, list)):
            items = tuple(self.expr(v) for v in value)
            return MakeTuple(items, kind, _SPAN)
        if kind in (t.BOOL, t.INT, t.FLOAT, t.STR, t.NONE):
            return Const(value, kind, _SPAN)
        self.objects.append(value)
        return Param(f"a{len(self.objects) - 1}", len(self.objects) - 1, kind, _SPAN)

    def tensors(self, expr: Any) -> list[Any]:
        """The runtime tensors an expression stands for."""
        import torch

        if isinstance(expr, MakeTuple):
            return [x for item in expr.items for x in self.tensors(item)]
        if isinstance(expr, Param) and isinstance(self.objects[expr.index], torch.Tensor):
            return [self.objects[expr.index]]
        return []


def _flat_tensors(value: Any) -> list[Any]:
    import torch

    if isinstance(value, torch.Tensor):
        return [value]
    if isinstance(value, (tuple, list)):
        return [x for v in value for x in _flat_tensors(v)]
    return []


def _same(tensor: Any, copy: Any) -> bool:
    import torch

    try:
        return bool(torch.equal(tensor, copy)) or bool(torch.equal(torch.isnan(tensor), torch.isnan(copy))
                                                        and torch.equal(tensor.nan_to_num(), copy.nan_to_num()))
    except (RuntimeError, TypeError):
        return True


def _storage(tensor: Any) -> int | None:
    try:
        if tensor.numel() == 0:
            return None
        return int(tensor.untyped_storage().data_ptr()) or None
    except (RuntimeError, NotImplementedError):
        return None


class _Recorder:
    def __init__(self, data: OpData):
        self.data = data
        self.observed: dict[str, _Observed] = defaultdict(_Observed)
        self.depth = 0

    def overloads(self, namespace: str, name: str) -> tuple[Any, ...]:
        if namespace == "Tensor":
            return self.data.method(name)
        if namespace == "aten":
            return self.data.function(name)
        native = self.data.binding(namespace, name)
        return self.data.function(native) if native is not None else ()

    def wrap(self, namespace: str, name: str, original: Any) -> Any:
        recorder = self

        @functools.wraps(original)
        def recorded(*args: Any, **kwargs: Any) -> Any:
            if recorder.depth:
                return original(*args, **kwargs)  # only the outermost builtin call is this op's
            recorder.depth += 1
            try:
                return recorder.call(namespace, name, original, args, kwargs)
            finally:
                recorder.depth -= 1

        return recorded

    def call(self, namespace: str, name: str, original: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        import torch

        bound = self.resolve(namespace, name, args, kwargs)
        if bound is None:
            return original(*args, **kwargs)
        resolved, arguments = bound
        native = resolved.overload.out if resolved.out else resolved.overload.native
        assert native is not None  # a call resolves to an out= variant only where the overload has one
        values = dict(resolved.values)
        if namespace == "Tensor":
            values["self"] = Param("a0", 0, t.TENSOR, _SPAN)  # the receiver, the first object resolve() saw
        inputs = {key: arguments.tensors(expr) for key, expr in values.items()}
        versions = {key: [x._version for x in tensors] for key, tensors in inputs.items()}
        # Some kernels update a tensor without its version counter seeing it (batch_norm's running
        # statistics): compare the values too.
        copies = {key: [x.detach().clone() for x in tensors] for key, tensors in inputs.items()}
        storages = {key: {_storage(x) for x in tensors} - {None} for key, tensors in inputs.items()}
        state = torch.random.get_rng_state()
        result = original(*args, **kwargs)
        observed = self.observed[native.key]
        if not native.seeded and not torch.equal(state, torch.random.get_rng_state()):
            observed.random = True
        flags = self.bool_arguments(native, values)
        # An argument sharing storage with one the schema declares written (`x.copy_(x)`) is
        # written by that declared write, not by a hidden one.
        declared = set().union(*(storages[key] for key in storages if key in native.arg and native.arg[key].is_write))
        for key, tensors in inputs.items():
            arg = native.arg.get(key)
            if arg is None or arg.is_write or not tensors or storages[key] & declared:
                continue
            moved = any(x._version != before for x, before in zip(tensors, versions[key])) or any(
                not _same(x, copy) for x, copy in zip(tensors, copies[key]))
            observed.writes[key].append((flags, moved))
        outputs = result if isinstance(result, (tuple, list)) else (result,)
        declared_views = set().union(*(storages[key] for key in storages if key in native.arg and native.arg[key].alias))
        for index, output in enumerate(outputs[: len(native.returns)] if len(native.returns) > 1 else [result]):
            returned_alias = native.returns[min(index, len(native.returns) - 1)].alias if native.returns else None
            if returned_alias is not None:
                continue
            shared = {_storage(x) for x in _flat_tensors(output)} - {None}
            for key, stored in storages.items():
                arg = native.arg.get(key)
                if arg is not None and arg.alias is None and shared & stored and not stored & declared_views:
                    observed.aliases.add((index, key))
        return result

    def resolve(self, namespace: str, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Bound, _Arguments] | None:
        overloads = self.overloads(namespace, name)
        if not overloads:
            return None
        arguments = _Arguments()
        try:
            if namespace == "Tensor":
                arguments.expr(args[0])
                positional = args[1:]
            else:
                positional = args
            exprs = [Argument(arguments.expr(a)) for a in positional]
            keywords = {k: arguments.expr(v) for k, v in kwargs.items()}
        except TypeError:
            return None
        found = resolve(overloads, exprs, keywords)
        return None if found is None else (found, arguments)

    @staticmethod
    def bool_arguments(native: Any, values: dict[str, Any]) -> dict[str, bool]:
        flags = {}
        for arg in native.args:
            if str(arg.type) != "bool":
                continue
            value = values.get(arg.name)
            if isinstance(value, Const) and isinstance(value.value, bool):
                flags[arg.name] = value.value
            elif value is None and isinstance(arg.default, bool):
                flags[arg.name] = arg.default
        return flags


@contextlib.contextmanager
def _wrapped_builtins(recorder: _Recorder) -> Iterator[dict[int, Any]]:
    """Every builtin of the bindings (and every Tensor method) replaced by a recording wrapper, by identity."""
    import torch

    modules = {"torch": torch, "torch.nn.functional": importlib.import_module("torch.nn.functional"),
               "torch._C._nn": torch._C._nn, "torch._C._VariableFunctions": torch._VF}
    # torch's Python functions call natives through torch._VF, a module whose attributes can be set.
    extra_holders = {"torch": [torch._VF]}
    for namespace, (module_name, c_module_name, _) in PREFIXED_NAMESPACES.items():
        modules[namespace] = importlib.import_module(module_name)
        modules[c_module_name] = importlib.import_module(c_module_name)
    replaced: list[tuple[Any, str, Any]] = []
    by_identity: dict[int, Any] = {}
    for namespace, names in recorder.data.bindings.items():
        for name in names:
            holders = [modules[namespace], *extra_holders.get(namespace, [])]
            if namespace in PREFIXED_NAMESPACES:
                c_module = modules[PREFIXED_NAMESPACES[namespace][1]]
                holders.append(c_module)
            for holder in holders:
                prefixed = namespace in PREFIXED_NAMESPACES and holder is not modules[namespace]
                attribute = PREFIXED_NAMESPACES[namespace][2] + name if prefixed else name
                original = getattr(holder, attribute, None)
                if original is None or type(original).__name__ != "builtin_function_or_method":
                    continue
                wrapper = by_identity.get(id(original)) or recorder.wrap(namespace, name, original)
                by_identity[id(original)] = wrapper
                replaced.append((holder, attribute, original))
                setattr(holder, attribute, wrapper)
    # torch's Python-level functions (torch.atleast_1d, torch.broadcast_tensors) reach natives through
    # torch._VF, also under names no builtin of the bindings has.
    for name in recorder.data.raw["functions"]:
        original = getattr(torch._C._VariableFunctions, name, None)
        if original is None or name in vars(torch._VF):
            continue
        replaced.append((torch._VF, name, original))
        setattr(torch._VF, name, recorder.wrap("aten", name, original))
    for name in recorder.data.raw["methods"]:
        original = inspect.getattr_static(torch.Tensor, name, None)
        if original is None or name.startswith("__") or type(original).__name__ != "method_descriptor":
            continue
        replaced.append((torch.Tensor, name, original))
        setattr(torch.Tensor, name, recorder.wrap("Tensor", name, getattr(torch.Tensor, name)))
    try:
        yield by_identity
    finally:
        for holder, attribute, original in reversed(replaced):
            if holder is torch.Tensor or holder is torch._VF:
                delattr(holder, attribute)
            else:
                setattr(holder, attribute, original)


# Calls OpInfo's samples leave out that show an effect: an einsum equation that only permutes or takes a
# diagonal returns a view of its operand (`torch.einsum("ii->i", x).zero_()` writes `x`).
_EXTRA_SAMPLES: dict[str, tuple[tuple[str, tuple[int, ...]], ...]] = {
    "einsum": (("ii->i", (3, 3)), ("ij->ji", (3, 4)), ("ij", (3, 4)), ("...->...", (3, 4))),
}


def _run_extra_samples(by_identity: dict[int, Any], only: frozenset[str] | None) -> None:
    import torch

    for name, calls in _EXTRA_SAMPLES.items():
        if only is not None and name not in only:
            continue
        function = getattr(torch, name)
        call = by_identity.get(id(function), function)
        for equation, shape in calls:
            try:
                call(equation, torch.randn(*shape))
            except Exception:  # noqa: BLE001 - as for OpInfo's samples
                continue


def _run_samples(by_identity: dict[int, Any], only: frozenset[str] | None, by_any_name: bool = False) -> None:
    import torch
    from torch.testing._internal.common_methods_invocations import op_db

    _run_extra_samples(by_identity, only)

    for op in op_db:
        if only is not None and not ({op.name} if not by_any_name else _op_names(op)) & only:
            continue
        if not any(d == torch.float32 for d in op.supported_dtypes("cpu")):
            continue
        variants = [v for v in (op.op, op.method_variant) if v is not None]
        try:
            samples = list(op.sample_inputs("cpu", torch.float32, requires_grad=False))[:SAMPLES_PER_OP]
        except Exception:  # noqa: BLE001 - an OpInfo that cannot make samples here is skipped
            continue
        for sample in samples:
            for variant in variants:
                call = by_identity.get(id(variant), variant)
                torch.manual_seed(0)
                arguments = (sample.input, *sample.args)
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        call(*_clone(arguments), **_clone(sample.kwargs))
                except Exception:  # noqa: BLE001 - samples meant to fail, or not for this variant
                    continue


def _synthesized(kind: Any, x: Any) -> list[Any] | None:
    """Values for a parameter of schema type ``kind`` that make most ops an identity on ``x`` (3 x 4, float32)."""
    import torch

    from ppy_check.schema import Base, BaseType, ListType, OptionalType

    if isinstance(kind, OptionalType):
        return [None]
    if isinstance(kind, ListType):
        elem = kind.elem
        if isinstance(elem, BaseType) and elem.base in (Base.int, Base.SymInt):
            return [tuple(x.shape) if not kind.size else (1,) * kind.size]
        if elem == BaseType(Base.Tensor):
            return [[x, x]]
        return None
    base = kind.base
    values = {
        Base.Tensor: [x], Base.int: [1], Base.SymInt: [1], Base.float: [0.5], Base.Scalar: [1], Base.bool: [False, True],
        Base.ScalarType: [torch.float32], Base.Device: ["cpu"], Base.Layout: [torch.strided],
        Base.MemoryFormat: [torch.contiguous_format],
    }
    return values.get(base)


def _synthesized_targets(data: OpData, only: frozenset[str] | None) -> list[tuple[str, str]]:
    targets = [(namespace, name) for namespace, names in sorted(data.bindings.items()) for name in sorted(names)
               if name not in _DANGEROUS]
    targets += [("Tensor", name) for name in sorted(data.raw["methods"])
                if not name.startswith("__") and not name.endswith("_") and name not in _DANGEROUS
                and name not in data.properties]
    return [target for target in targets if only is None or target[1] in only]


def _run_synthesized(recorder: _Recorder, targets: list[tuple[str, str]]) -> None:
    """Every overload of ``targets`` called once with arguments that make it an identity where it can be one.

    OpInfo has no samples for many methods (``type_as``); this finds the ones
    that hand back their input when nothing changes.
    """
    import torch

    for namespace, name in targets:
        if namespace == "Tensor":
            for overload in recorder.data.method(name):
                receiver = torch.randn(3, 4)
                _call_synthesized(getattr(receiver, name, None), overload, receiver)
            continue
        function = getattr(importlib.import_module(namespace), name, None)
        for overload in recorder.overloads(namespace, name):
            _call_synthesized(function, overload, None)


def _synthesized_in_children(data: dict[str, Any], targets: list[tuple[str, str]]) -> list[dict[str, _Observed]]:
    """Run the synthesized calls in child processes: nonsense arguments crash or hang a few kernels.

    A child that dies or runs past its time is split in two and retried, down
    to the single op at fault, which is left out. Children are spawned, not
    forked: a fork of a process whose thread pool has run can hang.
    """
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    results: list[dict[str, _Observed]] = []  # what each child observed, by native
    pending = [targets]
    while pending:
        chunk = pending.pop()
        reader, writer = context.Pipe(duplex=False)
        child = context.Process(target=_child, args=(data, chunk, writer))
        child.start()
        writer.close()
        observed = None
        if reader.poll(CHILD_SECONDS + len(chunk)):
            try:
                observed = reader.recv()
            except EOFError:
                observed = None
        if observed is None:
            child.kill()
        child.join()
        if observed is not None and child.exitcode == 0:
            results.append(observed)
        elif len(chunk) > 1:
            pending += [chunk[: len(chunk) // 2], chunk[len(chunk) // 2:]]
    return results


def _child(data: dict[str, Any], targets: list[tuple[str, str]], writer: Any) -> None:
    import torch

    torch.set_num_threads(1)
    recorder = _Recorder(OpData(data))
    with _wrapped_builtins(recorder):
        _run_synthesized(recorder, targets)
    writer.send(dict(recorder.observed))
    writer.close()


# Ops whose synthesized call could allocate without bound or wait on something.
_DANGEROUS = frozenset({"empty_strided", "as_strided", "set_", "resize_", "from_file", "sleep", "normal", "poisson"})


def _call_synthesized(function: Any, overload: Any, receiver: Any) -> None:
    import torch

    if function is None:
        return
    x = receiver if receiver is not None else torch.randn(3, 4)
    positional: list[Any] = []
    keywords: dict[str, Any] = {}
    variants: list[tuple[str, Any]] = []
    for param in overload.params:
        if not param.required:
            if str(param.type) == "bool":
                variants.append((param.name, not param.default))
            continue
        values = _synthesized(param.type, x)
        if values is None:
            return
        if param.kwonly:
            keywords[param.name] = values[0]
        else:
            positional.append(values[0])
        if len(values) > 1:
            variants.append((param.name, values[1]))
    for changed in [None, *variants]:
        call_keywords = dict(keywords)
        call_positional = list(positional)
        if changed is not None:
            call_keywords[changed[0]] = changed[1]
            names = [p.name for p in overload.positional if p.required]
            if changed[0] in names:
                call_positional = call_positional[:names.index(changed[0])]
                for later in names[names.index(changed[0]):]:
                    call_keywords[later] = changed[1] if later == changed[0] else positional[names.index(later)]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                torch.manual_seed(0)
                function(*_clone(tuple(call_positional)), **_clone(call_keywords))
        except Exception:  # noqa: BLE001 - most synthesized calls are nonsense for the op; only what runs counts
            continue


def _clone(value: Any) -> Any:
    import torch

    if isinstance(value, torch.Tensor):
        return value.clone()
    if isinstance(value, tuple):
        return tuple(_clone(v) for v in value)
    if isinstance(value, list):
        return [_clone(v) for v in value]
    if isinstance(value, dict):
        return {k: _clone(v) for k, v in value.items()}
    return value


def _condition(calls: list[tuple[dict[str, bool], bool]]) -> list[Any] | None:
    """The bool argument (and value) every write happened under and some non-write did not, or None."""
    written = [flags for flags, moved in calls if moved]
    kept = [flags for flags, moved in calls if not moved]
    for name in sorted(written[0]):
        values = {flags.get(name) for flags in written}
        if len(values) == 1 and None not in values:
            value = values.pop()
            if any(flags.get(name) == (not value) for flags in kept):
                return [name, value]
    return None


def names_reaching(data: dict[str, Any], natives: frozenset[str]) -> frozenset[str]:
    """The names whose calls may reach the native overloads ``natives``: each one's own name, the Python
    functions and methods with an overload bound to one (or to its ``out=`` form), and the builtins bound to
    those functions in every namespace (``F.logsigmoid`` for ``log_sigmoid``)."""
    names = {key.split(".")[0] for key in natives}
    for section in ("functions", "methods"):
        for name, overloads in data[section].items():
            if any(entry["native"] in natives or entry.get("out") in natives for entry in overloads):
                names.add(name)
    for bound in data["bindings"].values():
        names |= {python for python, native in bound.items() if native in names}
    return frozenset(names)


def _op_names(op: Any) -> set[str]:
    """What an OpInfo answers to in ``only``: its name (``nn.functional.batch_norm``), that name's last part
    and its ATen name, so that a native's own name selects the OpInfos of its Python spellings."""
    return {op.name, op.name.rpartition(".")[2], str(getattr(op, "aten_name", "") or "")}


def probe_effects(data: dict[str, Any], only: frozenset[str] | None = None,
                  natives: frozenset[str] | None = None) -> dict[str, Any]:
    """The effects the schemas leave out, per native overload key, as stored in opdata.json.

    ``only`` restricts the run to OpInfos and names in it (a test's quick look). ``natives`` restricts it to
    what may reach those native overloads (``names_reaching``) and the result to their effects: what making
    op data for another torch probes, the overloads whose schemas are new or changed there (``gen_opdata``).
    """
    if natives is not None:
        only = names_reaching(data, natives) | (only or frozenset())
    recorder = _Recorder(OpData(data))
    with _wrapped_builtins(recorder) as by_identity:
        _run_samples(by_identity, only, by_any_name=natives is not None)
    for in_child in _synthesized_in_children(data, _synthesized_targets(recorder.data, only)):
        for key, seen in in_child.items():
            merged = recorder.observed[key]
            for name, calls in seen.writes.items():
                merged.writes[name].extend(calls)
            merged.aliases |= seen.aliases
            merged.random |= seen.random
    effects: dict[str, Any] = {}
    for key, observed in sorted(recorder.observed.items()):
        if natives is not None and key not in natives:
            continue  # seen on the way, but probed only in part: its effects are kept from the other data
        entry: dict[str, Any] = {}
        writes = [[name, _condition(calls)] for name, calls in sorted(observed.writes.items())
                  if any(moved for _, moved in calls)]
        if writes:
            entry["writes"] = writes
        if observed.aliases:
            entry["aliases"] = sorted([index, name] for index, name in observed.aliases)
        if observed.random:
            entry["random"] = True
        if entry:
            effects[key] = entry
    return effects
