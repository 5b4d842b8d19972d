"""The seed document's GPT-2 regions, compiled: forward, backward, and the two caches."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
import torch

import ppy
from ppy.verify import compare_call

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "gpt2" / "gpt2.py"
HEADS, HEAD_DIM, LAYERS, VOCAB = 2, 8, 2, 64
WIDTH = HEADS * HEAD_DIM


@pytest.fixture(scope="module")
def gpt2():
    spec = importlib.util.spec_from_file_location("gpt2_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules["gpt2_example"] = module
    spec.loader.exec_module(module)
    for region in (module.block, module.step, module.step_into):
        assert region.build(), f"{region.__name__} did not compile"
    return module


def weights(module) -> list[torch.Tensor]:
    torch.manual_seed(0)
    layer = module.Block(WIDTH, "cpu")
    for name in ("ln1_b", "q_b", "k_b", "v_b", "o_b", "ln2_b", "fc_b", "proj_b"):
        setattr(layer, name, torch.randn_like(getattr(layer, name)) * 0.1)
    return [getattr(layer, name) for name in (
        "ln1_w", "ln1_b", "q_w", "q_b", "k_w", "k_b", "v_w", "v_b", "o_w", "o_b",
        "ln2_w", "ln2_b", "fc_w", "fc_b", "proj_w", "proj_b")]


def test_block_forward_and_backward(gpt2) -> None:
    x = torch.randn(2, 5, WIDTH)
    call = ppy.Call(x, *weights(gpt2), 2, 5, HEADS, HEAD_DIM, WIDTH, 1e-5)
    outcome = compare_call(gpt2.block, call)
    assert not outcome.mismatches, outcome.mismatches


@pytest.mark.parametrize("causal, cached", [(True, 0), (False, 3)])
def test_step_forward_and_backward(gpt2, causal: bool, cached: int) -> None:
    x = torch.randn(1, 1 if cached else 4, WIDTH)
    length = x.shape[1]
    cache = torch.randn(1, HEADS, cached, HEAD_DIM)
    call = ppy.Call(x, cache, cache.clone(), *weights(gpt2), 1, length, HEADS, HEAD_DIM, WIDTH, 1e-5, causal)
    outcome = compare_call(gpt2.step, call)
    assert not outcome.mismatches, outcome.mismatches


def test_slot_cache_writes_reach_the_caller(gpt2) -> None:
    x = torch.randn(1, 3, WIDTH)
    ks, vs = torch.zeros(1, HEADS, 8, HEAD_DIM), torch.zeros(1, HEADS, 8, HEAD_DIM)
    call = ppy.Call(x, ks, vs, *weights(gpt2), 1, 2, 3, HEADS, HEAD_DIM, WIDTH, 1e-5, True)
    outcome = compare_call(gpt2.step_into, call)
    assert not outcome.mismatches, outcome.mismatches
    gpt2.step_into(*call.args)
    assert ks[:, :, 2:5].abs().sum() > 0 and ks[:, :, 5:].abs().sum() == 0


def test_prefill_then_decode_matches_a_whole_forward(gpt2) -> None:
    torch.manual_seed(0)
    model = gpt2.Model(LAYERS, HEADS, HEAD_DIM, VOCAB, "cpu")
    length = 9
    ids = torch.remainder(torch.arange(length).reshape(1, length), VOCAB)
    whole = model.forward(ids, 1, length)
    model.reset(1, "cpu")
    model.run(ids[:, : length - 1], 1, length - 1, True)
    stepped = model.run(ids[:, length - 1:], 1, 1, False)
    assert torch.allclose(stepped, whole[:, -1:], 1e-4, 1e-4)
    ks, vs = model.slots(1, length, "cpu")
    model.run_into(ids[:, : length - 1], 1, length - 1, True, ks, vs)
    slotted = model.run_into(ids[:, length - 1:], 1, 1, False, ks, vs)
    assert torch.allclose(slotted, whole[:, -1:], 1e-4, 1e-4)


def test_generated_block_is_the_seed_shape(gpt2) -> None:
    source = gpt2.block.cpp_source
    assert "int64_t batch, int64_t length, int64_t heads, int64_t head_dim, int64_t width, const at::Scalar& eps" in source
    assert "at::_ops::scaled_dot_product_attention::call(q, k, v, " in source
    assert 'at::_ops::gelu::call(ppy_t17, c10::string_view("tanh", 4))' in source


def test_the_nn_module_form_matches_the_free_functions_to_the_bit(gpt2) -> None:
    """examples/gpt2/gpt2_modules.py: the same blocks as nn.Modules with a region `forward`, six layers."""
    sys.modules.setdefault("gpt2", gpt2)  # the module form imports the free-function form by its own name
    spec = importlib.util.spec_from_file_location("gpt2_modules_example", EXAMPLE.with_name("gpt2_modules.py"))
    modules = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(modules)
    assert modules.Block.forward.build(), modules.Block.forward.fallback_reason
    torch.manual_seed(0)
    functions = gpt2.Model(6, HEADS, HEAD_DIM, VOCAB, "cpu")
    model = modules.GPT2(6, HEADS, HEAD_DIM, VOCAB).load(functions).eval()
    ids = torch.remainder(torch.arange(2 * 9).reshape((2, 9)), VOCAB)
    with ppy.profile(print_on_exit=False) as profile:
        assert torch.equal(model(ids), functions.forward(ids, 2, 9))
    calls = {row.region: (row.calls, row.compiled) for row in profile.rows()}
    assert calls["Block.forward"] == (6, 6) and calls["block"] == (6, 6)
