"""Methods of nn.Module classes as regions: attributes read at each call, submodules inlined, checks that fall back."""

from __future__ import annotations

import copy
import warnings

import pytest
import torch

import ppy
from ppy.runtime import RegionDeclinedWarning
from ppy.verify import compare_call

import module_regions as mr


@pytest.fixture(scope="module", autouse=True)
def built() -> None:
    for region in (mr.Block.forward, mr.Block.twice, mr.Mlp.forward, mr.Scaled.scaled, mr.Embedder.forward,
                   mr.ScaledNorm.forward, mr.Stack.forward, mr.Configured.forward, mr.WithActivation.forward,
                   mr.TorchZoo.forward, mr.Normed.forward):
        assert region.build(), region.fallback_reason


def _python(region: ppy.Region, module: torch.nn.Module, *args: object) -> object:
    return region.python(module, *args)


def test_a_module_region_matches_eager_in_eval_and_in_training() -> None:
    torch.manual_seed(0)
    block = mr.Block(8).eval()
    x = torch.randn(2, 3, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RegionDeclinedWarning)
        assert torch.equal(block(x), _python(mr.Block.forward, block, x))
        block.train()  # dropout reads `self.training` at the call: no rebuild, eager's draws
        torch.manual_seed(5)
        compiled = block(x)
        torch.manual_seed(5)
        assert torch.equal(compiled, _python(mr.Block.forward, block, x))
        assert not torch.equal(compiled, block.eval()(x))


def test_parameter_gradients_equal_eagers() -> None:
    torch.manual_seed(0)
    block = mr.Block(8).eval()
    twin = copy.deepcopy(block)
    x = torch.randn(2, 3, 8)
    block(x).square().sum().backward()
    _python(mr.Block.forward, twin, x).square().sum().backward()  # type: ignore[union-attr]
    for (name, mine), (_, theirs) in zip(block.named_parameters(), twin.named_parameters()):
        assert mine.grad is not None and torch.equal(mine.grad, theirs.grad), name


def test_twelve_instances_share_one_build_whatever_their_weights_and_config() -> None:
    torch.manual_seed(0)
    blocks = [mr.Block(4 + i, dropout=0.05 * i).eval() for i in range(12)]
    entry = mr.Block.forward.compiled
    with ppy.profile(print_on_exit=False) as profile, warnings.catch_warnings():
        warnings.simplefilter("error", RegionDeclinedWarning)
        for block in blocks:
            x = torch.randn(3, block.ln.normalized_shape[0])
            assert torch.equal(block(x), _python(mr.Block.forward, block, x))
    assert mr.Block.forward.compiled is entry
    row = next(r for r in profile.rows() if r.region == "Block.forward")
    assert (row.calls, row.compiled) == (12, 12)


def test_a_swapped_submodule_runs_python_with_one_warning_naming_it() -> None:
    class Doubled(torch.nn.Module):
        def __init__(self, inner: torch.nn.Module):
            super().__init__()
            self.inner = inner

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.inner(x) * 2

    torch.manual_seed(0)
    block = mr.Block(8).eval()
    block.mlp.fc = Doubled(block.mlp.fc)
    x = torch.randn(2, 8)
    with pytest.warns(RegionDeclinedWarning, match=r"`self\.mlp\.fc`: it is a .*Doubled") as caught:
        assert torch.equal(block(x), _python(mr.Block.forward, block, x))
        block(x)
    mine = [w for w in caught if "`Block.forward`" in str(w.message)]
    assert len(mine) == 1 and mine[0].filename == __file__  # once, at the user's line, not inside torch or ppy


def test_a_forward_hook_is_run_as_python_would() -> None:
    torch.manual_seed(0)
    block = mr.Block(8).eval()
    x = torch.randn(2, 8)
    handle = block.ln.register_forward_hook(lambda module, args, out: out * 0)
    try:
        with pytest.warns(RegionDeclinedWarning, match=r"`self\.ln`: it has a hook"):
            assert torch.equal(block(x), _python(mr.Block.forward, block, x))
    finally:
        handle.remove()
    # A hook on the region's own module runs in its Module.__call__, before the region: the call stays compiled.
    handle = block.register_forward_pre_hook(lambda module, args: (args[0] * 2,))
    try:
        with warnings.catch_warnings(), ppy.profile(print_on_exit=False) as profile:
            warnings.simplefilter("error", RegionDeclinedWarning)
            assert torch.equal(block(x), _python(mr.Block.forward, block, x * 2))
        assert [(r.calls, r.compiled) for r in profile.rows() if r.region == "Block.forward"] == [(1, 1)]
    finally:
        handle.remove()


def test_values_replaced_between_calls_are_read_at_the_next_call() -> None:
    torch.manual_seed(0)
    block = mr.Block(8).eval()
    x = torch.randn(2, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RegionDeclinedWarning)
        block.mlp.gain = torch.nn.Parameter(torch.full((8,), 3.0))
        block.mlp.eps = 2  # an int where the class assigned a float: Python's int arithmetic
        block.ln.eps = 0.5
        assert torch.equal(block(x), _python(mr.Block.forward, block, x))
        block.double()
        assert torch.equal(block(x.double()), _python(mr.Block.forward, block, x.double()))
    del block.mlp.gain
    block.mlp.gain = 3.0  # a float where a tensor was built: declined, and the message names it
    with pytest.warns(RegionDeclinedWarning, match=r"`self\.mlp\.gain`: it holds a float"):
        assert torch.equal(block(x.double()), _python(mr.Block.forward, block, x.double()))


def test_methods_inherited_init_and_optional_weights() -> None:
    torch.manual_seed(0)
    scaled = mr.Scaled(8).eval()
    embedder = mr.Embedder(11, 8)
    x = torch.randn(2, 8)
    tokens = torch.randint(0, 11, (2, 5))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RegionDeclinedWarning)
        assert torch.equal(scaled.scaled(x, 1.5), _python(mr.Scaled.scaled, scaled, x, 1.5))
        assert torch.equal(embedder(tokens), _python(mr.Embedder.forward, embedder, tokens))
        block = mr.Block(8).eval()
        assert torch.equal(block.twice(x), _python(mr.Block.twice, block, x))
        # Scaled inherits Block.forward and overrides nothing it runs or reads: the same code, compiled.
        with ppy.profile(print_on_exit=False) as profile:
            assert torch.equal(scaled(x), _python(mr.Block.forward, scaled, x))
        assert [(r.calls, r.compiled) for r in profile.rows() if r.region == "Block.forward"] == [(1, 1)]

    class Overriding(mr.Block):
        def forward(self, x: torch.Tensor) -> torch.Tensor:  # what Block.twice runs through `self`
            return x * 3

    overriding = Overriding(8).eval()
    with pytest.warns(RegionDeclinedWarning, match=r"`self`: it is a .*Overriding"):
        assert torch.equal(overriding.twice(x), _python(mr.Block.twice, overriding, x))


def test_the_model_reads_each_path_once_in_order() -> None:
    from ppy_check.engine import analyse
    from ppy_check.module import ModuleRegions

    with open(mr.__file__, encoding="utf-8") as source:
        module = ModuleRegions.load(mr.__file__, source.read())
    region = next(r for r in module.regions if r.site.qualname == "Block.forward")
    model = analyse(region).model
    assert model is not None and model.instance is not None
    reads = [path for path, _ in model.instance.reads]
    assert reads[:4] == ["ln.normalized_shape", "ln.weight", "ln.bias", "ln.eps"]
    assert len(reads) == len(set(reads))
    assert dict(model.instance.classes) == {"": "Block", "ln": "torch.nn.LayerNorm", "mlp": "Mlp",
                                            "mlp.fc": "torch.nn.Linear", "mlp.proj": "torch.nn.Linear",
                                            "drop": "torch.nn.Dropout", "act": "torch.nn.ReLU"}


def test_torch_compile_of_a_model_of_module_regions_has_no_graph_break() -> None:
    torch.manual_seed(0)
    model = torch.nn.Sequential(mr.Block(8), mr.Block(8)).eval()
    x = torch.randn(2, 8)
    compiled = torch.compile(model, fullgraph=True, backend="eager")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # Block may draw (its Dropout): with gradients on, its body is traced
        assert torch.equal(compiled(x), model(x))


def test_subclasses_of_torch_nn_containers_and_config_objects() -> None:
    torch.manual_seed(0)
    x = torch.randn(3, 6)
    norm = mr.ScaledNorm(6, 0.5)
    stack = mr.Stack(6, depth=3).eval()
    configured = mr.Configured(mr.Config(6, 1e-3))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RegionDeclinedWarning)
        assert torch.equal(norm(x), _python(mr.ScaledNorm.forward, norm, x))
        assert torch.equal(stack(x), _python(mr.Stack.forward, stack, x))
        assert torch.equal(configured(x), _python(mr.Configured.forward, configured, x))
        configured.config.eps = 0.25  # a config value changed in place is read at the next call
        assert torch.equal(configured(x), _python(mr.Configured.forward, configured, x))
    stack.net[1] = torch.nn.ReLU()  # another class in the Sequential than the build inlined
    with pytest.warns(RegionDeclinedWarning, match=r"`self\.net\.1`: it is a .*ReLU"):
        assert torch.equal(stack(x), _python(mr.Stack.forward, stack, x))


def test_a_submodule_class_from_another_file_of_the_project(tmp_path) -> None:
    """`from layers import Attention as Attn`: read from its file, its names proved in its module, and an edit
    there rebuilds the region (the file is a dependency, as a helper's is)."""
    import subprocess
    import sys
    import textwrap

    (tmp_path / "layers.py").write_text(textwrap.dedent("""
        import torch
        import torch.nn as nn
        import torch.nn.functional as F

        SCALE = 2.0


        class Attention(nn.Module):
            def __init__(self, width: int):
                super().__init__()
                self.qkv = nn.Linear(width, 3 * width)

            def forward(self, x: torch.Tensor) -> torch.Tensor:
                q, k, v = self.qkv(x).chunk(3, -1)
                return F.scaled_dot_product_attention(q, k, v) * SCALE
        """))
    (tmp_path / "model.py").write_text(textwrap.dedent("""
        import ppy
        import torch
        import torch.nn as nn
        from layers import Attention as Attn


        class Block(nn.Module):
            def __init__(self, width: int):
                super().__init__()
                self.attn = Attn(width)
                self.norm = nn.LayerNorm(width)

            @ppy.opt(3)
            def forward(self, x: torch.Tensor) -> torch.Tensor:
                return x + self.attn(self.norm(x))
        """))
    program = textwrap.dedent("""
        import warnings
        from ppy.runtime import RegionDeclinedWarning, RegionFallbackWarning
        warnings.simplefilter("error", RegionDeclinedWarning)
        warnings.simplefilter("error", RegionFallbackWarning)
        import torch, model
        torch.manual_seed(0)
        block, x = model.Block(8).eval(), torch.randn(2, 5, 8)
        assert model.Block.forward.build(), model.Block.forward.fallback_reason
        print(torch.equal(block(x), model.Block.forward.python(block, x)), float(block(x).sum()))
        """)
    def run() -> str:
        done = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, done.stderr
        return done.stdout.split()
    first = run()
    (tmp_path / "layers.py").write_text((tmp_path / "layers.py").read_text().replace("SCALE = 2.0", "SCALE = 3.0"))
    second = run()
    assert first[0] == second[0] == "True" and first[1] != second[1]


def test_a_class_passed_to_the_constructor_and_functional_call() -> None:
    torch.manual_seed(0)
    x = torch.randn(3, 6)
    default = mr.WithActivation(6)
    other = mr.WithActivation(6, act_layer=torch.nn.Tanh)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RegionDeclinedWarning)
        assert torch.equal(default(x), _python(mr.WithActivation.forward, default, x))
        # torch.func.functional_call swaps the parameters for the call: they are what the region reads.
        swapped = {name: torch.randn_like(value) for name, value in default.named_parameters()}
        with ppy.profile(print_on_exit=False) as profile:
            found = torch.func.functional_call(default, swapped, (x,))
        eager = torch.nn.functional.gelu(torch.nn.functional.linear(x, swapped["fc.weight"], swapped["fc.bias"]))
        assert torch.equal(found, eager)
        assert [(r.calls, r.compiled) for r in profile.rows()] == [(1, 1)]
    with pytest.warns(RegionDeclinedWarning, match=r"`self\.act`: it is a .*Tanh"):
        assert torch.equal(other(x), _python(mr.WithActivation.forward, other, x))


def test_torch_nn_classes_inlined_from_their_own_forward_match_eager_with_gradients() -> None:
    torch.manual_seed(0)
    zoo = mr.TorchZoo()
    twin = copy.deepcopy(zoo)
    x, tokens = torch.randn(2, 3, 6, 6), torch.randint(0, 10, (2, 3))
    with warnings.catch_warnings(), ppy.profile(print_on_exit=False) as profile:
        warnings.simplefilter("error", RegionDeclinedWarning)
        found = zoo(x, tokens)
    expected = _python(mr.TorchZoo.forward, twin, x, tokens)
    assert torch.equal(found, expected)
    assert [(r.calls, r.compiled) for r in profile.rows()] == [(1, 1)]
    found.backward()
    expected.backward()  # type: ignore[union-attr]
    for (name, mine), (_, theirs) in zip(zoo.named_parameters(), twin.named_parameters()):
        assert mine.grad is not None and torch.equal(mine.grad, theirs.grad), name


@pytest.mark.parametrize(("momentum", "track"), [(0.1, True), (None, True), (0.1, False)])
def test_batch_norm_in_training_and_eval_updates_the_running_statistics_as_eager(momentum: float | None,
                                                                               track: bool) -> None:
    """BatchNorm2d's own forward, inlined: the running statistics and `num_batches_tracked` move as eager's, with
    `momentum=None`'s cumulative average reading `float(self.num_batches_tracked)` at the call."""
    torch.manual_seed(0)
    net = mr.Normed(3, momentum=momentum, track_running_stats=track)
    twin = copy.deepcopy(net)
    with warnings.catch_warnings(), ppy.profile(print_on_exit=False) as profile:
        warnings.simplefilter("error", RegionDeclinedWarning)
        for mode in ("train", "train", "eval", "train"):
            getattr(net, mode)()
            getattr(twin, mode)()
            x = torch.randn(2, 3, 5, 5)
            found, expected = net(x), _python(mr.Normed.forward, twin, x)
            assert torch.equal(found, expected), mode
            found.square().sum().backward()
            expected.square().sum().backward()  # type: ignore[union-attr]
            for (name, mine), (_, theirs) in zip(net.named_parameters(), twin.named_parameters()):
                assert mine.grad is not None and torch.allclose(mine.grad, theirs.grad), name
            for (name, mine), (_, theirs) in zip(net.named_buffers(), twin.named_buffers()):
                assert torch.equal(mine, theirs), f"{name} after {mode}: {mine.tolist()} != {theirs.tolist()}"
    assert [(r.calls, r.compiled) for r in profile.rows()] == [(4, 4)]
    if track:
        assert int(net.bn.num_batches_tracked) == 3


def test_comparing_a_training_call_writes_copies_of_the_module_not_the_module() -> None:
    """`--ppy-verify` compares each call a test makes before the call itself runs (Verifier.observe): its four runs
    (both sides, then both again for the gradients) write copies of the instance. On the module itself they would
    move BatchNorm's running statistics five times a training call, the test's own call the fifth."""
    torch.manual_seed(0)
    net = mr.Normed(3).train()
    before = {name: buffer.clone() for name, buffer in net.named_buffers()}
    outcome = compare_call(mr.Normed.forward, ppy.Call(net, torch.randn(2, 3, 5, 5)))
    assert outcome.mismatches == ()
    for name, buffer in net.named_buffers():
        assert torch.equal(buffer, before[name]), f"{name}: {before[name].tolist()} -> {buffer.tolist()}"


def test_a_container_with_an_item_appended_or_deleted_runs_python_with_one_warning() -> None:
    """A Sequential called, or a ModuleList indexed from the end, runs the items the construction makes: with one
    appended or deleted since, the compiled code would run the old model (the last item was the old one)."""
    torch.manual_seed(0)
    x = torch.randn(3, 6)
    for change, path, count in ((lambda s: s.net.append(torch.nn.Identity()), "net", 4),
                                (lambda s: s.pair.append(torch.nn.ReLU()), "pair", 3),
                                (lambda s: s.net.__delitem__(1), "net", 2)):
        stack = mr.Stack(6, depth=2).eval()
        with warnings.catch_warnings():
            warnings.simplefilter("error", RegionDeclinedWarning)
            assert torch.equal(stack(x), _python(mr.Stack.forward, stack, x))
        change(stack)
        with pytest.warns(RegionDeclinedWarning, match=rf"`self\.{path}`: it holds {count} items, and the build used"):
            assert torch.equal(stack(x), _python(mr.Stack.forward, stack, x))
