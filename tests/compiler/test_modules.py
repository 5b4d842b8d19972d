"""Methods of nn.Module classes as regions: attributes read at each call, submodules inlined, checks that fall back."""

from __future__ import annotations

import collections
import copy
import functools
import os
import warnings
from collections.abc import Callable
from typing import Any

import pytest
import torch
import torch.nn.functional as F

import ppy
from ppy import runtime
from ppy.runtime import RegionDeclinedWarning
from ppy.verify import compare_call
from tests.support.frames import python_frames

import module_regions as mr


@pytest.fixture(scope="module", autouse=True)
def built() -> None:
    for region in (mr.Block.forward, mr.Block.twice, mr.Mlp.forward, mr.Scaled.scaled, mr.Embedder.forward,
                   mr.ScaledNorm.forward, mr.Stack.forward, mr.Configured.forward, mr.WithActivation.forward,
                   mr.TorchZoo.forward, mr.Normed.forward, mr.Aliased.forward):
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


def _python_frames_of_ppy(call: Callable[[], object]) -> list[str]:
    """The Python functions of ppy's own package that ``call`` runs (`file:function`), but the descriptor that binds
    a method region."""
    folder = os.path.dirname(ppy.__file__)
    observer = runtime._observer
    runtime.set_observer(None)  # `--ppy-verify`'s observer sends every call the runtime's way while it watches
    try:
        frames = python_frames(call)
    finally:
        runtime.set_observer(observer)
    return [os.path.basename(frame) for frame in frames
            if os.path.dirname(frame.rpartition(":")[0]) == folder and not frame.endswith(":__get__")]


def test_the_one_c_call_from_an_instance_answers_what_python_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    """A method region's call from an instance is one C call (the reads, then the compiled entry); what it does
    not take is the runtime's path, which answers as Python does."""
    torch.manual_seed(0)
    configured = mr.Configured(mr.Config(8, 1e-5))
    x = torch.randn(2, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RegionDeclinedWarning)
        assert torch.equal(configured(x), _python(mr.Configured.forward, configured, x))
        # The one C call took it: neither the runtime's path (Region.__call__) nor the reads in Python.
        assert not [f for f in _python_frames_of_ppy(lambda: configured(x))
                    if f.startswith("instance.py") or f.endswith(":__call__")]
        with pytest.raises(TypeError, match="positional argument"):
            configured(x, x)  # one argument too many: Python's own message, not the entry's

        def unset(config: mr.Config) -> float:
            raise ValueError("eps is not set yet")

        # A read of the exact class the build read that raises: the error Python's body raises, from the C call.
        with monkeypatch.context() as patched:
            patched.setattr(mr.Config, "eps", property(unset), raising=False)
            for call in (configured, lambda x: _python(mr.Configured.forward, configured, x)):
                with pytest.raises(ValueError, match="eps is not set yet"):
                    call(x)
    del configured.config.eps  # a value gone: the call runs Python, which raises as it does, with the warning
    with pytest.warns(RegionDeclinedWarning, match=r"`self\.config\.eps`: reading it failed"), \
            pytest.raises(AttributeError, match="eps"):
        configured(x)


def _declined(call: Callable[[], torch.Tensor], python: Callable[[], object], match: str) -> None:
    """``call`` gives the Python body's answer, with the one warning (matching ``match``) that says why."""
    runtime._declined_once.clear()  # one warning per region and reason in a process: each case here is its own
    with pytest.warns(RegionDeclinedWarning, match=match):
        assert torch.equal(call(), python())  # type: ignore[arg-type]


def test_what_python_runs_instead_of_the_inlined_code_makes_the_call_pythons(monkeypatch: pytest.MonkeyPatch) -> None:
    """An instance's own `forward` (accelerate's hooks), an instance attribute over a method the region calls,
    `module.compile()`'s function, a class patched after the build, a Sequential's items out of order: each is
    other code than the build inlined, and each call runs the Python body, with the warning naming what."""
    torch.manual_seed(0)
    block, x = mr.Block(8).eval(), torch.randn(2, 8)
    fc = block.mlp.fc
    fc.forward = functools.partial(lambda module, t: torch.nn.Linear.forward(module, t) * 3, fc)
    _declined(lambda: block(x), lambda: _python(mr.Block.forward, block, x), r"`self\.mlp\.fc`: it holds its own `forward`")
    del fc.forward
    fc._compiled_call_impl = lambda t: torch.zeros(2, 32)  # what `fc.compile()` sets: Module.__call__ runs it
    _declined(lambda: block(x), lambda: _python(mr.Block.forward, block, x), r"`self\.mlp\.fc`: it was compiled")
    del fc._compiled_call_impl
    block.forward = lambda t: t * 0  # `twice` calls self.forward: the instance's, in Python
    _declined(lambda: mr.Block.twice(block, x), lambda: _python(mr.Block.twice, block, x),
              r"`self`: it holds its own `forward`")
    del block.forward
    with monkeypatch.context() as patched:
        patched.setattr(torch.nn.Linear, "forward", lambda module, t: F.linear(t, module.weight) * 2)
        _declined(lambda: block(x), lambda: _python(mr.Block.forward, block, x),
                  r"`self`: `torch\.nn\.modules\.linear\.Linear\.forward` is not the function its class statement "
                  r"defines")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RegionDeclinedWarning)
        # The class as it was: compiled again, by the one C call.
        assert torch.equal(block(x), _python(mr.Block.forward, block, x))
        assert not [f for f in _python_frames_of_ppy(lambda: block(x)) if f.endswith(":__call__")]
    stack = mr.Stack(4, 2)
    first, act, last = stack.net
    stack.net = torch.nn.Sequential(collections.OrderedDict([("1", first), ("0", act), ("2", last)]))
    y = torch.randn(3, 4)
    _declined(lambda: stack(y), lambda: _python(mr.Stack.forward, stack, y), r"`self\.net`: its items are not numbered")


def test_a_reload_in_place_is_seen_and_what_the_build_did_not_run_is_no_concern(monkeypatch: pytest.MonkeyPatch) -> None:
    """A function's code swapped in place (IPython's autoreload: `old.__code__ = new.__code__`) changes no class: its
    code is compared at each call. A method the region never runs patched (LLaVA's `disable_torch_init()` stubs
    `nn.Linear.reset_parameters`) leaves the call compiled. A Sequential's OrderedDict reordered by `move_to_end`
    keeps its keys but not its order."""
    torch.manual_seed(0)
    block, x = mr.Block(8).eval(), torch.randn(2, 8)
    with monkeypatch.context() as patched:
        patched.setattr(torch.nn.Linear.forward, "__code__", (lambda self, t: F.linear(t, self.weight) * 2).__code__)
        _declined(lambda: block(x), lambda: _python(mr.Block.forward, block, x),
                  r"`self`: the code of `Linear\.forward` changed in place")
    with warnings.catch_warnings(), monkeypatch.context() as patched:
        warnings.simplefilter("error", RegionDeclinedWarning)
        patched.setattr(torch.nn.Linear, "reset_parameters", lambda self: None)
        assert torch.equal(block(x), _python(mr.Block.forward, block, x))
        assert not [f for f in _python_frames_of_ppy(lambda: block(x)) if f.endswith(":__call__")]
    stack, y = mr.Stack(4, 2), torch.randn(3, 4)
    stack.net._modules = collections.OrderedDict(stack.net._modules)  # as a module saved by an older torch holds it
    with warnings.catch_warnings():
        warnings.simplefilter("error", RegionDeclinedWarning)
        assert torch.equal(stack(y), _python(mr.Stack.forward, stack, y))
    stack.net._modules.move_to_end("1")  # iterated 0, 2, 1: stored 0, 1, 2
    _declined(lambda: stack(y), lambda: _python(mr.Stack.forward, stack, y), r"`self\.net`: its items are not numbered")


def test_a_class_patched_before_the_first_call_is_python_until_it_is_undone(monkeypatch: pytest.MonkeyPatch) -> None:
    """The build inlined the class's source, so a class patched before the region's compiled form is settled (a
    library's monkeypatch at import, HF's `LlamaAttention.forward = ...`) is as patched as one patched after."""
    torch.manual_seed(0)
    stepped, x = mr.Stepped(4), torch.randn(2, 4)
    with monkeypatch.context() as patched:
        patched.setattr(torch.nn.Linear, "forward", lambda module, t: F.linear(t, module.weight) * 3)
        assert mr.Stepped.forward.build()
        _declined(lambda: stepped(x), lambda: _python(mr.Stepped.forward, stepped, x),
                  r"`self`: `torch\.nn\.modules\.linear\.Linear\.forward` is not the function its class statement")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RegionDeclinedWarning)
        assert torch.equal(stepped(x), _python(mr.Stepped.forward, stepped, x))
        assert not [f for f in _python_frames_of_ppy(lambda: stepped(x)) if f.endswith(":__call__")]


def test_a_class_with_a_lookup_of_its_own_is_read_through_it() -> None:
    """A class's own `__getattr__` answers the reads, compiled; a subclass that adds one is another class."""
    aliased, x = mr.Aliased(4), torch.randn(2, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RegionDeclinedWarning)
        assert torch.equal(aliased(x), x * 10)

    class Looked(mr.Mlp):
        def __getattr__(self, name: str) -> object:
            found = super().__getattr__(name)
            return found * 2 if name == "gain" else found

    class Plain(mr.Mlp):
        """A subclass that defines nothing the region reads: the compiled code, until it defines a property."""

    looked, plain = Looked(4, 8), Plain(4, 8)
    _declined(lambda: looked(x), lambda: _python(mr.Mlp.forward, looked, x), r"`self`: it is a .*Looked, which defines "
                                                                              r"`__getattr__`")
    with warnings.catch_warnings():
        warnings.simplefilter("error", RegionDeclinedWarning)
        assert torch.equal(plain(x), _python(mr.Mlp.forward, plain, x))
    Plain.gain = property(lambda self: torch.zeros(4))  # type: ignore[attr-defined]
    _declined(lambda: plain(x), lambda: _python(mr.Mlp.forward, plain, x), r"`self`: it is a .*Plain, which defines "
                                                                            r"`gain`")


def test_a_declined_call_says_what_the_entry_did_not_take() -> None:
    """The warning of a call the compiled entry declined names why: an int beyond 64 bits read through `self`, a
    torch function mode (whose calls the compiled code would skip)."""
    from torch.overrides import TorchFunctionMode

    class Passing(TorchFunctionMode):
        def __torch_function__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            return func(*args, **(kwargs or {}))

    configured, x = mr.Configured(mr.Config(8, 1e-5)), torch.randn(2, 8)
    with Passing():
        _declined(lambda: configured(x), lambda: _python(mr.Configured.forward, configured, x),
                  r"`self`: a torch function mode is active")
    configured.config.width = 1 << 70
    with pytest.raises(Exception) as python_error:
        _python(mr.Configured.forward, configured, x)
    with pytest.warns(RegionDeclinedWarning, match=r"`self\.config\.width`: it holds 1180591620717411303424, which "
                                                   r"does not fit"), pytest.raises(type(python_error.value)):
        configured(x)


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
