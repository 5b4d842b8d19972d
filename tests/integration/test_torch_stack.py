"""Regions inside the rest of the PyTorch stack: each is a torch custom operator under torch.compile and torch.export.

`torch.library.opcheck` passes for every region of examples/ and tests/regions
(and this file's own) that an operator stands for, and the others say why; a model calling regions compiles with `fullgraph=True`,
one operator node per call, with the values and gradients of eager, and a new
sequence length reuses its graph; `torch.export` keeps each call as one node;
two ranks train GPT-2 through regions with DDP and FSDP2 to the weights eager
DDP reaches, sharing one build; a decode step through regions that write a
preallocated KV cache is captured in a CUDA graph and replayed.
"""

from __future__ import annotations

import collections
import functools
import importlib
import inspect
import copy
import json
import os
import shutil
import subprocess
import sys
import textwrap
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from torch import nn

import ppy
from tests.support.distributed_worker import HEAD_DIM, HEADS, WIDTH, TinyGPT, example, module_example, weights
from tests.support.distributed_worker import layer_weights as _layer
from ppy import decorators, torch_op
from ppy.verify import compare_values

HERE = Path(__file__).resolve().parents[1]
ROOT = HERE.parent


gpt2 = example()

# --- regions of this file: a static-cache decode step (a tensor position, so one CUDA graph serves every
# token) and a region whose signature torch.library cannot express --------------------------------


@ppy.opt(3)
def decode_static(
    x: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    position: torch.Tensor,
    ln1_w: torch.Tensor,
    ln1_b: torch.Tensor,
    q_w: torch.Tensor,
    q_b: torch.Tensor,
    k_w: torch.Tensor,
    k_b: torch.Tensor,
    v_w: torch.Tensor,
    v_b: torch.Tensor,
    o_w: torch.Tensor,
    o_b: torch.Tensor,
    ln2_w: torch.Tensor,
    ln2_b: torch.Tensor,
    fc_w: torch.Tensor,
    fc_b: torch.Tensor,
    proj_w: torch.Tensor,
    proj_b: torch.Tensor,
    heads: int,
    head_dim: int,
    width: int,
    eps: float,
) -> torch.Tensor:
    """One token of GPT-2's block over a cache of fixed capacity: the slot and the mask come from a tensor."""
    # pylint: disable=too-many-arguments,too-many-positional-arguments,too-many-locals
    batch = x.shape[0]
    h = torch.layer_norm(x, (width,), ln1_w, ln1_b, eps)
    q = F.linear(h, q_w, q_b).reshape((batch, 1, heads, head_dim)).transpose(1, 2)
    k = F.linear(h, k_w, k_b).reshape((batch, 1, heads, head_dim)).transpose(1, 2)
    v = F.linear(h, v_w, v_b).reshape((batch, 1, heads, head_dim)).transpose(1, 2)
    k_cache.index_copy_(2, position, k)
    v_cache.index_copy_(2, position, v)
    seen = (torch.arange(k_cache.shape[2], device=x.device) <= position).reshape((1, 1, 1, -1))
    a = F.scaled_dot_product_attention(q, k_cache, v_cache, attn_mask=seen)
    merged = a.transpose(1, 2).reshape((batch, 1, width))
    attended = torch.add(x, F.linear(merged, o_w, o_b))
    n = torch.layer_norm(attended, (width,), ln2_w, ln2_b, eps)
    f = F.gelu(F.linear(n, fc_w, fc_b), approximate="tanh")
    return torch.add(attended, F.linear(f, proj_w, proj_b))


@decode_static.samples
def _(device: str) -> Iterator[tuple[Any, ...]]:
    layer = _layer(device)
    cache = torch.randn(1, HEADS, 6, HEAD_DIM).to(device)
    yield (torch.randn(1, 1, WIDTH).to(device), cache, cache.clone(), torch.tensor([2]).to(device), *weights(layer),
           HEADS, HEAD_DIM, WIDTH, 1e-5)


@ppy.opt(2)
def first_of(x: torch.Tensor, kinds: tuple[torch.dtype, ...]) -> torch.Tensor:
    return x.to(kinds[0])


@first_of.samples
def _(device: str) -> Iterator[tuple[Any, ...]]:
    yield torch.randn(3).to(device), (torch.float64, torch.float16)


# --- every region of the project is an operator that torch.library.opcheck accepts ----------------------------


def _gpt2_calls() -> dict[str, list[ppy.Call]]:
    """GPT-2's regions have no samples of their own (its test runs whole models): small calls of each."""
    layer = _layer("cpu")
    x = torch.randn(1, 5, WIDTH)
    empty = torch.randn(1, HEADS, 3, HEAD_DIM)
    slots = torch.randn(1, HEADS, 8, HEAD_DIM)
    return {
        "block": [ppy.Call(x, *weights(layer), 1, 5, HEADS, HEAD_DIM, WIDTH, 1e-5)],
        "step": [ppy.Call(x, empty, empty.clone(), *weights(layer), 1, 5, HEADS, HEAD_DIM, WIDTH, 1e-5, True)],
        "step_into": [ppy.Call(x, slots, slots.clone(), *weights(layer), 1, 2, 5, HEADS, HEAD_DIM, WIDTH, 1e-5, True)],
    }


# Method regions: an operator takes the instance's reads after the region's own arguments, which only the build
# knows, so whether one can be an operator is asked after building it (test_method_regions_...).
METHODS: dict[str, ppy.Region[Any, Any]] = {}


def _project_regions() -> dict[str, ppy.Region[Any, Any]]:
    found = {}
    modules = [importlib.import_module(path.stem) for path in sorted((HERE / "regions").glob("*.py"))]
    for module in [*modules, gpt2]:
        for name, value in vars(module).items():
            if isinstance(value, ppy.Region):
                found[f"{module.__name__}.{name}"] = value
            elif isinstance(value, type) and value.__module__ == module.__name__:
                METHODS.update((f"{module.__name__}.{value.__qualname__}.{method}", region)
                               for method, region in vars(value).items() if isinstance(region, ppy.Region))
    found[f"{__name__}.decode_static"] = decode_static
    return found


REGIONS = _project_regions()


def _why_not_an_operator(region: ppy.Region[Any, Any]) -> str | None:
    try:
        torch_op.Layout.of(region)
    except torch_op.TorchOpError as error:
        return str(error)
    return None


# The project's regions no torch operator can stand for (each traced as its body under torch.compile), by why:
# the results an operator cannot give back as the region does. The host-math regions return a lone number.
NOT_OPERATORS = {name: why for name, region in REGIONS.items() if (why := _why_not_an_operator(region)) is not None}
WHY_NOT = ("Dynamo takes no lone number from an operator", "Dynamo takes no str from an operator",
           "torch.library has no optional form of tuple[torch.device, int]")
EXPRESSIBLE = sorted(name for name in REGIONS if name not in NOT_OPERATORS)


def test_the_regions_no_operator_stands_for_say_why() -> None:
    assert NOT_OPERATORS["idioms.texts"] == "the return is tuple[str, str, str]: Dynamo takes no str from an operator"
    assert "the return is int: Dynamo takes no lone number" in NOT_OPERATORS["host_math_properties.add_int_int"]
    unexplained = {name: why for name, why in NOT_OPERATORS.items() if not any(w in why for w in WHY_NOT)}
    assert not unexplained, unexplained
    assert len(EXPRESSIBLE) > 100  # the rest: every other region of the project, checked by opcheck below
    with pytest.raises(torch_op.TorchOpError, match="Dynamo takes no str from an operator"):
        torch_op.op(REGIONS["idioms.texts"])


def _clone(value: Any, grad: bool = False) -> Any:
    if isinstance(value, torch.Tensor):
        copy = value.detach().clone()
        return copy.requires_grad_() if grad and copy.is_floating_point() else copy
    if isinstance(value, (tuple, list)):
        return type(value)(_clone(item, grad) for item in value)
    return value


def _leaves(value: Any) -> list[Any]:
    if isinstance(value, (tuple, list)):
        return [leaf for item in value for leaf in _leaves(item)]
    return [value]


def _same(expected: Any, actual: Any, what: str) -> None:
    assert len(_leaves(expected)) == len(_leaves(actual)), what
    for index, (e, a) in enumerate(zip(_leaves(expected), _leaves(actual))):
        mismatch, _, _ = compare_values(f"{what} {index}", e, a)
        assert mismatch is None, f"{mismatch.what}: {mismatch.detail}"


# Regions whose Python body (the fake kernel) torch itself cannot run on symbolic shapes before a release: torch
# 2.11's F.binary_cross_entropy with a weight calls torch._C._infer_size, which takes no SymInt (2.13's calls
# torch.broadcast_shapes). opcheck's dynamic-shape test is torch's own failure there; the others still run.
SYMBOLIC_BODY_FROM = {"idioms.weighted_bce": (2, 13)}


def _torch_release() -> tuple[int, ...]:
    return tuple(int(part) for part in torch.__version__.split("+")[0].split(".")[:2])


# A method region's fake kernel runs the body, whose submodule regions see what make_fx patched onto nn.Module
# while it traces: their Python bodies are what it records, with no warning.
@pytest.mark.filterwarnings("error::ppy.runtime.RegionDeclinedWarning")
@pytest.mark.parametrize("name", [*EXPRESSIBLE, *sorted(METHODS)])
def test_every_region_is_an_operator_opcheck_accepts(name: str) -> None:
    region = REGIONS.get(name) or METHODS[name]
    operator = torch_op.op(region)
    assert operator.namespace == "ppy"
    calls = _gpt2_calls()[name.split(".")[1]] if name.startswith("gpt2_example.") else region.sample_calls("cpu")
    assert calls, f"{name} has no calls to check"
    entry = region._ppy_torch_op  # type: ignore[attr-defined]
    for call in calls:
        flat = torch_op.flat_arguments(region, call.args, call.kwargs)
        try:
            torch.manual_seed(0)
            expected_args = _clone(call.args)
            expected = region.python(*expected_args, **call.kwargs)
        except Exception as error:  # a sample that fails on purpose: the operator fails alike
            with pytest.raises(type(error)):
                operator(*_clone(flat))
            continue
        # The operator through the region's own signature: the values, and the writes, of the Python body.
        torch.manual_seed(0)
        actual_args = _clone(call.args)
        actual = entry.call(*actual_args, **call.kwargs)
        if not entry.random:
            _same(expected, actual, "output")
            _same(expected_args, actual_args, "argument")
        # assert_close holds a NaN float result unequal to itself: that call's eager-against-AOT comparison is skipped.
        nan = any(isinstance(v, float) and v != v for v in _leaves(expected))
        aot = [] if nan or _torch_release() < SYMBOLIC_BODY_FROM.get(name, ()) else ["test_aot_dispatch_dynamic"]
        torch.library.opcheck(operator, _clone(flat), test_utils=["test_schema", "test_autograd_registration",
                                                                  "test_faketensor", *aot])
        if not entry.mutates and not entry.random and _gradients_agree(region, entry, call):
            # With gradients: autograd is registered, and AOTAutograd's backward agrees with eager's.
            torch.library.opcheck(operator, _clone(flat, grad=True), test_utils=["test_autograd_registration", *aot])


def _gradients_agree(region: ppy.Region[Any, Any], entry: Any, call: ppy.Call) -> bool:
    """The operator's gradients are the Python body's (one random cotangent); False where there are none to take."""

    def gradients(function: Any) -> list[Any]:
        args = _clone(call.args, grad=True)
        leaves = [v for v in _leaves(args) if isinstance(v, torch.Tensor) and v.requires_grad]
        outputs = [v for v in _leaves(function(*args, **call.kwargs)) if isinstance(v, torch.Tensor) and v.requires_grad]
        if not leaves or not outputs:
            return []
        generator = torch.Generator().manual_seed(7)
        cotangents = [torch.randn(o.shape, generator=generator, dtype=o.dtype) for o in outputs]
        return list(torch.autograd.grad(outputs, leaves, cotangents, allow_unused=True))

    try:
        expected = gradients(region.python)
    except RuntimeError:  # the body does not differentiate (floor_divide, say): neither does its operator
        with pytest.raises(RuntimeError):
            gradients(entry.call)
        return False
    actual = gradients(entry.call)
    if not expected:
        # No output of the body needs a gradient (a region under @torch.no_grad()): the operator's are all None.
        assert all(a is None for a in actual), "the operator has gradients the Python body does not"
        return False
    assert len(expected) == len(actual)
    for index, (e, a) in enumerate(zip(expected, actual)):
        assert (e is None) == (a is None), f"gradient {index}: one side has none"
        if e is not None:
            mismatch, _, _ = compare_values(f"gradient {index}", e, a, scale=4)
            assert mismatch is None, f"{mismatch.what}: {mismatch.detail}"
    return bool(expected)


def test_schemas_follow_signatures_and_effects() -> None:
    assert str(torch_op.op(gpt2.block)._schema).endswith(
        "SymInt batch, SymInt length, SymInt heads, SymInt head_dim, SymInt width, Scalar eps) -> Tensor")
    step_into = str(torch_op.op(gpt2.step_into)._schema)
    assert "Tensor(a0!) k_cache, Tensor(a1!) v_cache" in step_into, step_into
    ops_regions = importlib.import_module("ops_regions")
    tuples = str(torch_op.op(ops_regions.tuples)._schema)
    assert "(Tensor x, SymInt[] shape, Tensor pair_0, SymInt pair_1) -> (Tensor, SymInt, SymInt, Tensor[])" in tuples
    assert "!" not in str(torch_op.op(ops_regions.fresh_writes)._schema)  # @ppy.pure: writes only its own tensors
    assert torch.Tag.nondeterministic_seeded in torch_op.op(ops_regions.random_in_order).tags


def test_a_signature_torch_library_cannot_express_is_refused_clearly() -> None:
    with pytest.raises(torch_op.TorchOpError, match=r"region `first_of` cannot be a torch operator: parameter `kinds` "
                                                    r"is tuple\[torch.dtype, \.\.\.\]: torch.library has no list of"):
        torch_op.op(first_of)

    def cast(x: torch.Tensor) -> torch.Tensor:
        return first_of(x, (torch.float64,)) * 2

    # Under torch.compile such a region is traced as its Python body, and says so once.
    with pytest.warns(torch_op.TorchOpFallbackWarning, match="traced as its Python body"):
        compiled = torch.compile(cast, fullgraph=True, backend="eager")
        result = compiled(torch.ones(2))
    assert result.dtype == torch.float64 and result.tolist() == [2.0, 2.0]


@ppy.opt(2)
def typed_like(x: torch.Tensor, n: int) -> tuple[torch.Tensor, torch.dtype, str]:
    return x * n, x.dtype, "ab" * n


@ppy.opt(2)
def placed(x: torch.Tensor) -> tuple[torch.Tensor, torch.device]:
    return x + 1, x.device


@ppy.opt(2)
def counted(x: torch.Tensor) -> int:
    return x.shape[0] + 1


# The tests below call these only under torch.compile, which traces their bodies: `--ppy-verify` runs them here.
@typed_like.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, int]]:
    yield torch.ones(2, dtype=torch.float64, device=device), 3


@placed.samples
def _(device: str) -> Iterator[tuple[torch.Tensor]]:
    yield (torch.ones(2, device=device),)


@counted.samples
def _(device: str) -> Iterator[tuple[torch.Tensor]]:
    yield (torch.ones(4, 2, device=device),)


def test_a_dtype_str_device_or_lone_number_result_is_the_bodys_under_compile() -> None:
    """An operator hands a dtype back as its number (torch.float32 as 6), and Dynamo takes no str or device from
    one: such a region is traced as its body, so the caller gets what eager gives."""
    assert typed_like.build()
    with pytest.raises(torch_op.TorchOpError, match="torch.library's operators return a dtype as its number"):
        torch_op.op(typed_like)

    def caller(x: torch.Tensor, n: int) -> tuple[torch.Tensor, torch.dtype, str]:
        return typed_like(x, n)

    with pytest.warns(torch_op.TorchOpFallbackWarning, match="traced as its Python body"):
        y, dtype, text = torch.compile(caller, fullgraph=True, backend="eager")(torch.ones(2, dtype=torch.float64), 3)
    assert (y.tolist(), dtype, text) == ([3.0, 3.0], torch.float64, "ababab")
    with pytest.raises(torch_op.TorchOpError, match="Dynamo takes no device from an operator"):
        torch_op.op(placed)
    with pytest.warns(torch_op.TorchOpFallbackWarning, match="traced as its Python body"):
        moved, device = torch.compile(lambda x: placed(x), fullgraph=True, backend="eager")(torch.ones(2))
    assert (moved.tolist(), device) == ([2.0, 2.0], torch.device("cpu"))
    # A lone number: Dynamo stops at an operator returning one ("torch.* op returned non-Tensor").
    with pytest.warns(torch_op.TorchOpFallbackWarning, match="Dynamo takes no lone number from an operator"):
        assert torch.compile(lambda x: counted(x), fullgraph=True, backend="eager")(torch.ones(3)) == 4


def test_eager_calls_never_reach_the_operator(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_: Any) -> Any:
        raise AssertionError("an eager call went through the torch operator")

    tiny = importlib.import_module("tiny")
    assert tiny.scale_shift.build()
    monkeypatch.setattr(decorators, "_traced_call", refuse)
    x = torch.randn(3)
    assert torch.equal(tiny.scale_shift(x, 0.5, 2), x * 0.5 + 2)


# --- torch.compile and torch.export of a model calling regions -------------------------------------------------


def _gradients(model: nn.Module, run: Any, ids: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor]]:
    model.zero_grad()
    with warnings.catch_warnings():
        # sdpa with dropout_p 0 draws nothing, and its region must not say it may (it said so, every one).
        warnings.simplefilter("error", torch_op.TorchOpRandomWarning)
        logits = run(ids)
        (logits * torch.linspace(-1, 1, logits.shape[-1])).sum().backward()
    return logits.detach(), [p.grad.clone() for p in model.parameters()]


def test_compile_fullgraph_one_node_per_region_values_gradients_and_new_lengths() -> None:
    from functorch.compile import make_boxed_func
    from torch._dynamo.backends.common import aot_autograd
    from torch._dynamo.testing import CompileCounterWithBackend

    assert gpt2.block.build()
    model = TinyGPT()
    forward_graphs: list[torch.fx.GraphModule] = []

    def keep(graph: torch.fx.GraphModule, _: Any) -> Any:
        forward_graphs.append(graph)
        return make_boxed_func(graph)

    counter = CompileCounterWithBackend(aot_autograd(fw_compiler=keep, bw_compiler=lambda g, _: make_boxed_func(g)))
    compiled = torch.compile(model, fullgraph=True, dynamic=True, backend=counter)
    operator = torch_op.op(gpt2.block)
    for length in (8, 11, 16):
        ids = torch.randint(0, 64, (2, length), generator=torch.Generator().manual_seed(length))
        expected, expected_grads = _gradients(model, model, ids)
        actual, actual_grads = _gradients(model, compiled, ids)
        _same(expected, actual, f"logits at length {length}")
        for index, (e, a) in enumerate(zip(expected_grads, actual_grads)):
            mismatch, _, _ = compare_values(f"gradient {index} at length {length}", e, a, scale=4)
            assert mismatch is None, f"{mismatch.what}: {mismatch.detail}"
    # One graph for every length: `length` is a SymInt of the operator, nothing recompiled.
    assert counter.frame_count == 1, counter.frame_count
    dynamo_graph = counter.graphs[0]
    calls = [n for n in dynamo_graph.graph.nodes if n.op == "call_function" and n.target is operator]
    assert len(calls) == 2, dynamo_graph.code
    # After AOTAutograd too: the block's body stays inside its node, not spilled into the graph.
    targets = [str(n.target) for n in forward_graphs[0].graph.nodes if n.op == "call_function"]
    assert targets.count(str(operator)) == 2, targets
    assert not [t for t in targets if "layer_norm" in t or "attention" in t or "gelu" in t], targets


def test_compile_with_inductor_keeps_the_region() -> None:
    model = TinyGPT(layers=1)
    ids = torch.randint(0, 64, (1, 12), generator=torch.Generator().manual_seed(1))
    compiled = torch.compile(model, fullgraph=True)
    with torch.no_grad():
        _same(model(ids), compiled(ids), "logits")


def test_compiled_writes_reach_the_callers_tensors() -> None:
    ops_regions = importlib.import_module("ops_regions")

    def fill(cache: torch.Tensor, k: torch.Tensor, position: int) -> torch.Tensor:
        return ops_regions.slot_cache(cache, k * 2, position, 3) + 1

    compiled = torch.compile(fill, fullgraph=True, backend="aot_eager")
    cache, k = torch.zeros(1, 2, 8, 4), torch.randn(1, 2, 3, 4)
    expected_cache = cache.clone()
    expected = fill(expected_cache, k, 2)
    actual = compiled(cache, k, 2)
    _same(expected, actual, "result")
    _same(expected_cache, cache, "cache")


# --- method regions: one operator node per call, the instance's reads among its inputs ------------------------


def _operator_calls(graph: torch.fx.GraphModule, region: ppy.Region[Any, Any]) -> int:
    operator = torch_op.op(region)
    return sum(1 for n in graph.graph.nodes if n.op == "call_function" and n.target is operator)


def test_module_regions_are_one_node_each_under_compile_with_eagers_gradients() -> None:
    from torch._dynamo.testing import CompileCounterWithBackend

    mr = importlib.import_module("module_regions")
    torch.manual_seed(0)
    model = nn.Sequential(mr.Mlp(8, 16, eps=0.25), nn.ReLU(), mr.Mlp(8, 16))
    twin = copy.deepcopy(model)
    counter = CompileCounterWithBackend("aot_eager")
    compiled = torch.compile(model, fullgraph=True, backend=counter)
    for rows in (4, 7):
        x = torch.randn(rows, 8)
        actual, expected = compiled(x), mr.Mlp.forward.python(twin[2], twin[1](mr.Mlp.forward.python(twin[0], x)))
        _same(expected, actual, f"output at {rows} rows")
        actual.square().sum().backward()
        expected.square().sum().backward()
        for (name, mine), (_, theirs) in zip(model.named_parameters(), twin.named_parameters()):
            _same(theirs.grad, mine.grad, f"{name}.grad at {rows} rows")
    # Each call is one node whatever the instance's weights and eps: both instances share the operator.
    assert _operator_calls(counter.graphs[0], mr.Mlp.forward) == 2, counter.graphs[0].code
    assert not [n for n in counter.graphs[0].graph.nodes if n.op == "call_function" and n.target is F.gelu]


def test_a_module_region_whose_instance_is_not_as_built_is_traced_as_its_body_under_compile() -> None:
    """The operator's checks are the compiled entry's, traced by Dynamo as guards: another class where the build
    inlined one, a value of another kind than it read (a tensor for a float), an object gone (an item deleted from
    a Sequential), a hook (guarded where Dynamo guards hooks, as for any module it compiles): each traced again as
    the Python body, eager's answer, no failure under fullgraph=True."""
    from torch._dynamo.testing import CompileCounterWithBackend

    mr = importlib.import_module("module_regions")
    torch.manual_seed(0)
    x = torch.randn(3, 8)

    def swapped(model: nn.Module) -> None:
        model[0].fc = nn.Sequential(model[0].fc)

    def another_kind(model: nn.Module) -> None:
        model[0].eps = torch.tensor(0.5)  # where the build read `eps: float`

    def hooked(model: nn.Module) -> None:
        model[1].proj.register_forward_hook(lambda module, args, out: out * 2)

    def own_forward(model: nn.Module) -> None:  # accelerate's hooks replace an instance's forward
        fc = model[0].fc
        fc.forward = functools.partial(lambda module, t: nn.Linear.forward(module, t) * 3, fc)

    for change in (swapped, another_kind, hooked, own_forward):
        model = nn.Sequential(mr.Mlp(8, 16), mr.Mlp(8, 16))
        counter = CompileCounterWithBackend("eager")
        compiled = torch.compile(model, fullgraph=True, backend=counter)
        with torch.no_grad(), torch._dynamo.config.patch(skip_nnmodule_hook_guards=False):
            _same(model(x), compiled(x), "output")
            change(model)
            expected = mr.Mlp.forward.python(model[1], mr.Mlp.forward.python(model[0], x))
            _same(expected, compiled(x), f"output, {change.__name__}")
        assert [_operator_calls(graph, mr.Mlp.forward) for graph in counter.graphs] == [2, 1], change.__name__
    stack = mr.Stack(8, depth=2)
    compiled = torch.compile(stack, fullgraph=True, backend="eager")
    with torch.no_grad():
        _same(stack(x), compiled(x), "stack")
        del stack.net[1]  # the GELU: `net.1` is now a Linear, and `net.2`, which the build inlined, is gone
        _same(mr.Stack.forward.python(stack, x), compiled(x), "stack, an item deleted")
        stack = mr.Stack(8, depth=2)
        compiled = torch.compile(stack, fullgraph=True, backend="eager")
        _same(stack(x), compiled(x), "stack")
        stack.pair.append(nn.ReLU())  # `self.pair[-1]` is now the ReLU: another item than the build's
        _same(mr.Stack.forward.python(stack, x), compiled(x), "stack, an item appended")
        stack = mr.Stack(8, depth=2)
        compiled = torch.compile(stack, fullgraph=True, backend="eager")
        _same(stack(x), compiled(x), "stack")
        first, act, last = stack.net
        stack.net = nn.Sequential(collections.OrderedDict([("1", first), ("0", act), ("2", last)]))
        _same(mr.Stack.forward.python(stack, x), compiled(x), "stack, its items out of order")
    def static_replaced(model: nn.Module) -> None:
        type(model).squash = staticmethod(lambda t: t * 10)

    def static_shadowed(model: nn.Module) -> None:
        model.squash = lambda t: t * 0

    def method_shadowed(model: nn.Module) -> None:
        model.shift = lambda t: t - 5

    original_squash = mr.Stepped.__dict__["squash"]
    for change in (static_replaced, static_shadowed, method_shadowed):
        stepped = mr.Stepped(8)
        compiled = torch.compile(stepped, fullgraph=True, backend="eager")
        try:
            with torch.no_grad():
                _same(stepped(x), compiled(x), "stepped")
                change(stepped)
                _same(mr.Stepped.forward.python(stepped, x), compiled(x), f"stepped, {change.__name__}")
        finally:
            mr.Stepped.squash = original_squash
    model = mr.Mlp(8, 16)
    compiled = torch.compile(model, fullgraph=True, backend="eager")
    with torch.no_grad():
        _same(model(x), compiled(x), "mlp")
        original = nn.Linear.forward
        nn.Linear.forward = lambda module, t: F.linear(t, module.weight) * 2  # a class patched after compiling
        try:
            _same(mr.Mlp.forward.python(model, x), compiled(x), "mlp, Linear.forward patched")
        finally:
            nn.Linear.forward = original


def test_a_constant_rebound_after_compiling_is_guarded_gradients_included(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """A region reading a module constant (`SCALE`): the operator's kernel proves it again at each call, but the
    backward pass AOTAutograd traced from the body at compile time held the value of then, so after `SCALE = 7`
    the gradients were those of `SCALE = 2`, silently. The traced caller tests the names the build proved: a
    change is Dynamo's guard failing, and the trace is made again."""
    (tmp_path / "constant_region.py").write_text(textwrap.dedent("""
        import ppy
        import torch

        SCALE = 2.0


        @ppy.opt(3)
        def scaled(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
            return torch.tanh(x @ w) * SCALE
        """))
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("constant_region")
    assert module.scaled.build()
    x, w = torch.randn(3, 4), torch.randn(4, 4)
    compiled = torch.compile(lambda x, w: module.scaled(x, w), fullgraph=True, backend="aot_eager")
    for scale in (2.0, 7.0):
        module.SCALE = scale
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the rebinding: the region runs as Python from now on, saying so once
            mine, theirs = x.clone().requires_grad_(), x.clone().requires_grad_()
            actual, expected = compiled(mine, w), module.scaled.python(theirs, w)
        _same(expected, actual, f"SCALE={scale}")
        actual.sum().backward()
        expected.sum().backward()
        _same(theirs.grad, mine.grad, f"gradient, SCALE={scale}")


def test_a_module_region_reloaded_is_compiled_as_its_new_code(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reloaded after an edit (a notebook's cycle), a method region keeps its operator (same schema); the caller
    torch traces is the new region's, whose class and body it tests and falls back to. It held the old ones, so
    a new instance failed the old class's test and torch traced the old body: the old value, silently."""
    from torch._dynamo.testing import CompileCounterWithBackend

    source = textwrap.dedent("""
        import ppy
        import torch
        import torch.nn as nn


        class Scaled(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.fc = nn.Linear(4, 4)

            @ppy.opt(3)
            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return self.fc(x) * FACTOR
        """)
    (tmp_path / "reloaded_module.py").write_text(source.replace("FACTOR", "2.0"))
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("reloaded_module")
    torch.manual_seed(0)
    x = torch.randn(3, 4)
    with torch.no_grad():
        first = module.Scaled()
        _same(module.Scaled.forward.python(first, x), torch.compile(first, fullgraph=True, backend="eager")(x), "v1")
        (tmp_path / "reloaded_module.py").write_text(source.replace("FACTOR", "5.0"))
        module = importlib.reload(module)
        second = module.Scaled()
        second.load_state_dict(first.state_dict())
        counter = CompileCounterWithBackend("eager")
        _same(second.fc(x) * 5.0, torch.compile(second, fullgraph=True, backend=counter)(x), "v2, after reload")
    assert _operator_calls(counter.graphs[0], module.Scaled.forward) == 1


def test_a_module_region_that_may_draw_random_numbers_is_an_operator_without_gradients() -> None:
    """Block has a Dropout: its operator's backward would run it again and draw again, so with gradients on it is
    traced as its body (exact gradients); under no_grad it is one node."""
    from torch._dynamo.testing import CompileCounterWithBackend

    mr = importlib.import_module("module_regions")
    torch.manual_seed(0)
    model = nn.Sequential(mr.Block(8), mr.Block(8)).eval()
    x = torch.randn(2, 8)
    counter = CompileCounterWithBackend("eager")
    compiled = torch.compile(model, fullgraph=True, backend=counter)
    with torch.no_grad():
        _same(model(x), compiled(x), "output, no grad")
    _same(model(x), compiled(x), "output, grad")
    assert [_operator_calls(graph, mr.Block.forward) for graph in counter.graphs] == [2, 0]


def test_a_training_batch_norm_under_compile_updates_its_statistics_as_eager() -> None:
    """A region that may write an attribute (BatchNorm's running statistics in training): under no_grad one node,
    the statistics its `mutates_args`; with gradients its body (torch.library differentiates no operator that
    writes). Both update the statistics, and give the values and gradients, as eager does."""
    from torch._dynamo.testing import CompileCounterWithBackend

    mr = importlib.import_module("module_regions")
    torch.manual_seed(0)
    model = mr.Normed(3).train()
    twin = copy.deepcopy(model)
    counter = CompileCounterWithBackend("aot_eager")
    compiled = torch.compile(model, fullgraph=True, backend=counter)
    operator = torch_op.op(mr.Normed.forward)
    assert "Tensor(a0!)? self_bn_num_batches_tracked" in str(operator._schema), operator._schema
    for grad in (False, True, False):
        x = torch.randn(2, 3, 5, 5)
        with torch.set_grad_enabled(grad):
            actual, expected = compiled(x), mr.Normed.forward.python(twin, x)
            _same(expected, actual, f"output, grad {grad}")
        if grad:
            actual.square().sum().backward()
            expected.square().sum().backward()
            for (name, mine), (_, theirs) in zip(model.named_parameters(), twin.named_parameters()):
                _same(theirs.grad, mine.grad, f"{name}.grad")
        for (name, mine), (_, theirs) in zip(model.named_buffers(), twin.named_buffers()):
            _same(theirs, mine, f"{name} after a call with grad {grad}")
    assert int(model.bn.num_batches_tracked) == 3
    assert sorted(_operator_calls(graph, mr.Normed.forward) for graph in counter.graphs) == [0, 1]


def test_export_keeps_a_module_region_one_node() -> None:
    mr = importlib.import_module("module_regions")
    torch.manual_seed(0)
    model = nn.Sequential(mr.Mlp(8, 16), mr.Stack(8, depth=2))
    x = torch.randn(5, 8)
    rows = torch.export.Dim("rows", min=2, max=64)
    program = torch.export.export(model, (x,), dynamic_shapes={"input": {0: rows}})
    assert _operator_calls(program, mr.Mlp.forward) == 1, program.graph
    assert _operator_calls(program, mr.Stack.forward) == 1, program.graph
    with torch.no_grad():
        for size in (5, 9):
            y = torch.randn(size, 8)
            _same(model(y), program.module()(y), f"exported output at {size} rows")
    # The region itself exported, its dynamic shapes named by its parameter: the bound method has its signature.
    mlp = model[0]
    assert list(inspect.signature(mlp.forward).parameters) == ["x"]
    alone = torch.export.export(mlp, (x,), dynamic_shapes={"x": {0: rows}})
    assert _operator_calls(alone, mr.Mlp.forward) == 1, alone.graph


def test_gpt2_of_module_regions_compiles_to_one_node_per_block_for_every_length() -> None:
    """The example's GPT-2 as nn.Modules (examples/gpt2/gpt2_modules.py): under torch.compile with AOTAutograd each
    block's call is one node, its weights and caches among the inputs; logits and every parameter's gradient are
    eager's; a new length reuses the graph."""
    from functorch.compile import make_boxed_func
    from torch._dynamo.backends.common import aot_autograd
    from torch._dynamo.testing import CompileCounterWithBackend

    modules = module_example()
    torch.manual_seed(0)
    model = modules.GPT2(2, HEADS, HEAD_DIM, 64).eval()
    twin = copy.deepcopy(model)
    counter = CompileCounterWithBackend(aot_autograd(fw_compiler=lambda g, _: make_boxed_func(g),
                                                     bw_compiler=lambda g, _: make_boxed_func(g)))
    compiled = torch.compile(model, fullgraph=True, dynamic=True, backend=counter)
    frames = []
    for length in (6, 9):
        ids = torch.randint(0, 64, (2, length), generator=torch.Generator().manual_seed(length))
        actual, expected = compiled(ids), twin(ids)
        frames.append(counter.frame_count)
        _same(expected, actual, f"logits at length {length}")
        actual.square().mean().backward()
        expected.square().mean().backward()
        for (name, mine), (_, theirs) in zip(model.named_parameters(), twin.named_parameters()):
            mismatch, _, _ = compare_values(f"{name}.grad at length {length}", theirs.grad, mine.grad, scale=4)
            assert mismatch is None, f"{mismatch.what}: {mismatch.detail}"
    # Nothing compiled for the second length (Dynamo's first trace may restart once to specialise the floats).
    assert frames[0] == frames[1], frames
    assert _operator_calls(counter.graphs[-1], modules.Block.forward) == 2, counter.graphs[-1].code


def test_module_regions_compiled_one_after_another_are_each_an_operator() -> None:
    """Compiled one after another, module regions start Dynamo's frame at their bound method. Two faults showed:
    every method region's bound method had one code, and Dynamo stops recompiling a code after eight
    (`recompile_limit`), so the ninth class compiled failed; and the region's serial, an int differing between
    two compiles of one frame, became symbolic, so the second stopped at `_ready` ("assume_constant_result
    argument conversion failed"). Nine classes, some built before, some not."""
    from torch._dynamo.testing import CompileCounterWithBackend

    mr = importlib.import_module("module_regions")
    torch.manual_seed(0)
    x, image, tokens = torch.randn(2, 6), torch.randn(2, 3, 6, 6), torch.randint(0, 10, (2, 3))
    calls: list[tuple[nn.Module, tuple[Any, ...]]] = [
        (mr.Mlp(6, 12), (x,)), (mr.Configured(mr.Config(6, 1e-3)), (x,)), (mr.WithActivation(6), (x,)),
        (mr.ScaledNorm(6, 0.5), (x,)), (mr.Stack(6, 2), (x,)), (mr.Embedder(10, 6), (tokens,)),
        (mr.Block(6).eval(), (x,)), (mr.Normed(3).eval(), (image,)), (mr.TorchZoo(), (image, tokens))]
    assert mr.Mlp.forward.build() and mr.Stack.forward.build()
    for module, args in calls:
        region = type(module).forward
        counter = CompileCounterWithBackend("eager")
        with torch.no_grad():
            _same(module(*args), torch.compile(module, fullgraph=True, backend=counter)(*args), region.__qualname__)
        assert _operator_calls(counter.graphs[0], region) == 1, region.__qualname__


def test_compiling_a_module_region_before_its_first_call_builds_it_in_the_trace(tmp_path: Path) -> None:
    """Dynamo read the region's eager fast path (None before the build the trace itself starts) and guarded on it:
    the guard then failed to build ("Unexpected type <class 'function'>")."""
    (tmp_path / "fresh_module.py").write_text(textwrap.dedent("""
        import ppy
        import torch
        import torch.nn as nn


        class Scale(nn.Module):
            def __init__(self, width: int) -> None:
                super().__init__()
                self.gain = nn.Parameter(torch.full((width,), 2.0))

            @ppy.opt(3)
            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return torch.tanh(x) * self.gain
        """))
    program = textwrap.dedent("""
        import torch, fresh_module
        from ppy import torch_op
        model = torch.nn.Sequential(fresh_module.Scale(4), fresh_module.Scale(4))
        compiled = torch.compile(model, fullgraph=True, backend="eager")
        x = torch.randn(3, 4)
        with torch.no_grad():
            assert torch.equal(compiled(x), fresh_module.Scale.forward.python(model[1], torch.tanh(x) * 2))
        print(fresh_module.Scale.forward.build(), torch_op.op(fresh_module.Scale.forward).name())
        """)
    done = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "ppy::fresh_module__Scale__forward"]


def test_export_keeps_each_region_one_node() -> None:
    model = TinyGPT()
    ids = torch.randint(0, 64, (2, 10), generator=torch.Generator().manual_seed(2))
    length = torch.export.Dim("length", min=2, max=64)
    program = torch.export.export(model, (ids,), dynamic_shapes={"ids": {1: length}})
    operator = torch_op.op(gpt2.block)
    calls = [n for n in program.graph.nodes if n.op == "call_function" and n.target is operator]
    assert len(calls) == 2, program.graph
    runnable = program.module()
    for size in (10, 13):
        ids = torch.randint(0, 64, (2, size), generator=torch.Generator().manual_seed(size))
        with torch.no_grad():
            _same(model(ids), runnable(ids), f"exported logits at length {size}")


# --- CUDA graphs: a decode step through regions writing a preallocated KV cache, captured and replayed ---------


def _decode_inputs(device: str, capacity: int = 8) -> tuple[Any, torch.Tensor, torch.Tensor, torch.Tensor]:
    layer = _layer(device)
    torch.manual_seed(5)
    tokens = torch.randn(capacity, 1, 1, WIDTH).to(device)
    cache = torch.zeros(1, HEADS, capacity, HEAD_DIM).to(device)
    return layer, tokens, cache, cache.clone()


def _decode_reference(layer: Any, tokens: torch.Tensor, count: int) -> tuple[list[torch.Tensor], torch.Tensor, torch.Tensor]:
    """The same tokens through the example's `step_into` in eager PyTorch (int positions, a growing view)."""
    capacity = tokens.shape[0]
    ks = torch.zeros(1, HEADS, capacity, HEAD_DIM).to(tokens.device)
    vs = ks.clone()
    outputs = [gpt2.step_into.python(tokens[i], ks, vs, *weights(layer), 1, i, 1, HEADS, HEAD_DIM, WIDTH, 1e-5, False)
               for i in range(count)]
    return outputs, ks, vs


def test_static_cache_decode_matches_the_examples_step_into() -> None:
    layer, tokens, ks, vs = _decode_inputs("cpu")
    expected, expected_ks, expected_vs = _decode_reference(layer, tokens, 5)
    assert decode_static.build()
    for i in range(5):
        out = decode_static(tokens[i], ks, vs, torch.tensor([i]), *weights(layer), HEADS, HEAD_DIM, WIDTH, 1e-5)
        _same(expected[i], out, f"token {i}")
    _same(expected_ks, ks, "key cache")
    _same(expected_vs, vs, "value cache")


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_graph_replays_a_decode_step_writing_the_kv_cache() -> None:
    """reduce-overhead's failure in the seed (pytorch#156520): the graph's writes must land in the caller's cache."""
    assert decode_static.build()
    layer, tokens, ks, vs = _decode_inputs("cuda")
    expected, expected_ks, expected_vs = _decode_reference(layer, tokens, 6)
    token = torch.zeros_like(tokens[0])
    position = torch.zeros(1, dtype=torch.long, device="cuda")
    args = (token, ks, vs, position, *weights(layer), HEADS, HEAD_DIM, WIDTH, 1e-5)
    warm, scratch = torch.cuda.Stream(), (ks.clone(), vs.clone())
    warm.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(warm):  # warm up on side caches: the capture must not see first-call allocations
        decode_static(token, *scratch, position, *weights(layer), HEADS, HEAD_DIM, WIDTH, 1e-5)
    torch.cuda.current_stream().wait_stream(warm)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = decode_static(*args)
    assert decode_static.__ppy_region__
    for i in range(6):
        token.copy_(tokens[i])
        position.fill_(i)
        graph.replay()
        torch.cuda.synchronize()
        _same(expected[i], out.clone(), f"replayed token {i}")
    _same(expected_ks, ks, "key cache after the replays")
    _same(expected_vs, vs, "value cache after the replays")


# --- distributed: two ranks, gloo, CPU -------------------------------------------------------------------------


def test_two_ranks_train_gpt2_through_regions_like_eager_ddp_sharing_one_build(tmp_path: Path,
                                                                               toolchain_entries: list[str]) -> None:
    from tests.support.session_cache import SESSION_CACHE

    cache = tmp_path / "cache"
    (cache / "builds").mkdir(parents=True)
    os.chmod(cache, 0o700)
    for key in toolchain_entries:  # the once-per-torch builds only: the GPT-2 module is built by the ranks
        shutil.copytree(SESSION_CACHE / "builds" / key, cache / "builds" / key, copy_function=os.link)
    report = tmp_path / "report"
    env = {**os.environ, "PPY_CACHE_DIR": str(cache), "PPY_QUIET": "1", "OMP_NUM_THREADS": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), str(HERE)])}
    result = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
         str(HERE / "support" / "distributed_worker.py"), str(report)],
        capture_output=True, text=True, env=env, timeout=240, cwd=tmp_path)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-6000:]
    ranks = [json.loads((report.with_suffix(f".{rank}.json")).read_text()) for rank in (0, 1)]
    for rank in ranks:
        assert rank["region_active"], rank
        assert rank["ddp_max_difference"] <= 1e-5, rank
        assert rank["ddp_steps"] >= 3 and rank["ddp_loss_fell"], rank
    # One rank compiled the regions (in a unit per core); the other waited on the cache's locks and loaded them.
    counts = sorted(r["compiled"] for r in ranks)
    assert counts[0] == 0 and counts[1] >= 1, ranks
    builder, loader = sorted(ranks, key=lambda r: -r["compiled"])
    assert builder["build_key"] == loader["build_key"]
    assert loader["prepare_s"] >= 0.5 * builder["prepare_s"], ranks
    # FSDP2 (fully_shard) on CPU with gloo: the same weights through regions as through the Python bodies, and as DDP.
    for rank in ranks:
        assert rank["fsdp"] == "matches", rank
        assert rank["fsdp_max_difference"] <= 1e-5 and rank["fsdp_vs_ddp_max_difference"] <= 1e-5, rank
    # The module form (region forwards reading their weights through `self`): eager's weights, every call compiled.
    for rank in ranks:
        assert rank["module_ddp_max_difference"] <= 1e-5, rank
        assert rank["module_fsdp_max_difference"] <= 1e-5, rank
        for calls in (rank["module_ddp_calls"], rank["module_fsdp_calls"]):
            assert len(calls) == 1 and calls[0][0] == calls[0][1] > 0, rank


def test_dynamo_is_loaded_only_by_a_program_that_compiles() -> None:
    """A program that only calls regions never imports torch._dynamo (over a second of start-up); one that
    loads it later still gets each region as one node, registered as Dynamo loads."""
    script = f"""
import sys
sys.path.insert(0, {str(HERE / "regions")!r})
import torch
import tiny
x = torch.randn(3, 4)
assert torch.equal(tiny.scale_shift(x, 0.5, 2), x * 0.5 + 2) and tiny.scale_shift.__ppy_region__
assert "torch._dynamo" not in sys.modules, "calling a compiled region loaded Dynamo"
compiled = torch.compile(lambda t: tiny.scale_shift(t, 0.5, 2) * 3, fullgraph=True, backend="eager")
assert torch.equal(compiled(x), (x * 0.5 + 2) * 3)
print("ok")
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=300,
                            env={**os.environ, "PPY_BUILD": "wait"})
    assert result.returncode == 0 and result.stdout.strip() == "ok", result.stderr[-3000:]
