"""One rank of tests/integration/test_torch_stack.py's distributed test, and the small GPT-2 module it trains.

    python -m torch.distributed.run --standalone --nproc-per-node 2 tests/support/distributed_worker.py REPORT

Each rank asks for the GPT-2 example's build at the same moment (the cache's
lock lets one compile while the other waits and loads), then trains the same
model twice under DDP, gloo on CPU, for a few steps: once through the `block`
region, once through its Python body (eager DDP); then the same with FSDP2's
`fully_shard` where torch supports it on CPU. It writes REPORT.<rank>.json.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[2]
HEADS, HEAD_DIM = 2, 4
WIDTH = HEADS * HEAD_DIM
VOCAB = 64


def example() -> Any:
    """examples/gpt2/gpt2.py, loaded as tests/compiler/test_gpt2.py loads it (one module name, one build)."""
    found = sys.modules.get("gpt2_example")
    if found is None:
        spec = importlib.util.spec_from_file_location("gpt2_example", ROOT / "examples" / "gpt2" / "gpt2.py")
        assert spec is not None and spec.loader is not None
        found = importlib.util.module_from_spec(spec)
        sys.modules["gpt2_example"] = found
        spec.loader.exec_module(found)
    return found


def layer_weights(device: str = "cpu") -> Any:
    """One block's weights, biases and norms moved off their trivial values so that every one of them counts."""
    torch.manual_seed(3)
    layer = example().Block(WIDTH, device)
    for name, value in vars(layer).items():
        setattr(layer, name, value + 0.05 * torch.randn(value.shape).to(device))
    return layer


def weights(layer: Any) -> tuple[torch.Tensor, ...]:
    return (layer.ln1_w, layer.ln1_b, layer.q_w, layer.q_b, layer.k_w, layer.k_b, layer.v_w, layer.v_b, layer.o_w,
            layer.o_b, layer.ln2_w, layer.ln2_b, layer.fc_w, layer.fc_b, layer.proj_w, layer.proj_b)


class Layer(nn.Module):
    """One block's weights, and the call of the region on them (FSDP2 gathers a module's weights around its forward)."""

    def __init__(self, block: Any) -> None:
        super().__init__()
        self.block = block
        for name, value in vars(layer_weights()).items():
            self.register_parameter(name, nn.Parameter(value + 0.02 * torch.randn(value.shape)))

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        batch, length = h.shape[0], h.shape[1]
        return self.block(h, self.ln1_w, self.ln1_b, self.q_w, self.q_b, self.k_w, self.k_b, self.v_w, self.v_b,
                          self.o_w, self.o_b, self.ln2_w, self.ln2_b, self.fc_w, self.fc_b, self.proj_w, self.proj_b,
                          batch, length, HEADS, HEAD_DIM, WIDTH, 1e-5)


class TinyGPT(nn.Module):
    """GPT-2's shape as an nn.Module whose blocks are the example's `block` region (or its Python body)."""

    def __init__(self, layers: int = 2, regions: bool = True) -> None:
        super().__init__()
        torch.manual_seed(0)
        gpt2 = example()
        self.wte = nn.Parameter(torch.randn(VOCAB, WIDTH) * 0.02)
        self.wpe = nn.Parameter(torch.randn(64, WIDTH) * 0.01)
        self.blocks = nn.ModuleList(Layer(gpt2.block if regions else gpt2.block.python) for _ in range(layers))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        h = self.wte[ids] + self.wpe[:ids.shape[1]]
        for layer in self.blocks:
            h = layer(h)
        return torch.matmul(h, self.wte.t())


def module_example() -> Any:
    """examples/gpt2/gpt2_modules.py: the same blocks as nn.Modules whose `forward` is a region."""
    found = sys.modules.get("gpt2_modules_example")
    if found is None:
        sys.modules.setdefault("gpt2", example())  # it imports the free-function form by its own name
        spec = importlib.util.spec_from_file_location("gpt2_modules_example",
                                                      ROOT / "examples" / "gpt2" / "gpt2_modules.py")
        assert spec is not None and spec.loader is not None
        found = importlib.util.module_from_spec(spec)
        sys.modules["gpt2_modules_example"] = found
        spec.loader.exec_module(found)
    return found


class ModuleGPT(nn.Module):
    """TinyGPT with the module form's blocks: region `forward`s reading their weights through `self`."""

    def __init__(self, layers: int = 2, regions: bool = True) -> None:
        super().__init__()
        torch.manual_seed(0)
        modules = module_example()

        class EagerBlock(modules.Block):  # type: ignore[misc, name-defined]
            """The same block whose `forward` is the region's Python body."""

            def forward(self, *args: Any) -> Any:
                return modules.Block.forward.python(self, *args)

        self.wte = nn.Parameter(torch.randn(VOCAB, WIDTH) * 0.02)
        self.wpe = nn.Parameter(torch.randn(64, WIDTH) * 0.01)
        self.blocks = nn.ModuleList((modules.Block if regions else EagerBlock)(WIDTH, HEADS) for _ in range(layers))

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        h = self.wte[ids] + self.wpe[:ids.shape[1]]
        empty = torch.zeros(ids.shape[0], HEADS, 0, HEAD_DIM)
        for layer in self.blocks:
            h, _, _ = layer(h, empty, empty, True)  # through the module's call: its hooks run, FSDP2's among them
        return torch.matmul(h, self.wte.t())


STEPS = 3


def train(model: nn.Module, wrapped: nn.Module, rank: int) -> list[float]:
    """A few SGD steps of next-token prediction on this rank's own batch (one batch, so the loss must fall)."""
    optimizer = torch.optim.SGD(model.parameters(), lr=0.5)
    ids = torch.randint(0, VOCAB, (2, 9), generator=torch.Generator().manual_seed(100 + rank))
    losses = []
    for _ in range(STEPS + 1):
        logits = wrapped(ids[:, :-1])
        loss = nn.functional.cross_entropy(logits.reshape(-1, VOCAB), ids[:, 1:].reshape(-1))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    return losses


def largest_difference(a: list[torch.Tensor], b: list[torch.Tensor]) -> float:
    return max(float((x - y).abs().max()) for x, y in zip(a, b))


def main() -> None:
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    from ppy import runtime
    from ppy_compile import toolchain

    report = Path(sys.argv[1])
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    gpt2 = example()
    result: dict[str, Any] = {"rank": rank}
    compiles = []
    run_ninja = toolchain.run_ninja

    def counted(*args: Any, **kwargs: Any) -> Any:
        compiles.append(args)
        return run_ninja(*args, **kwargs)

    toolchain.run_ninja = counted  # a compiler run is what tells the rank that built from the one that loaded
    dist.barrier()  # both ranks ask for the build at once
    started = time.perf_counter()
    result["region_active"] = gpt2.block.build()
    result["prepare_s"] = time.perf_counter() - started
    result["compiled"] = len(compiles)
    built = runtime._modules[str(Path(gpt2.__file__).resolve())]
    result["build_key"] = sorted(path.parent.name for path in built.cpp_sources.values()) or None

    trained = {}
    for regions in (True, False):
        model = TinyGPT(regions=regions)
        losses = train(model, DistributedDataParallel(model), rank)
        trained[regions] = [p.detach().clone() for p in model.parameters()]
        if regions:
            result["ddp_steps"] = STEPS
            result["ddp_loss_fell"] = losses[-1] < losses[0]
    result["ddp_max_difference"] = largest_difference(trained[True], trained[False])

    import ppy

    # The module form under DDP: every block call compiled (its weights read at the call), eager's weights.
    with ppy.profile(print_on_exit=False) as profile:
        module_trained = {}
        for regions in (True, False):
            model = ModuleGPT(regions=regions)
            train(model, DistributedDataParallel(model), rank)
            module_trained[regions] = [p.detach().clone() for p in model.parameters()]
    result["module_ddp_max_difference"] = largest_difference(module_trained[True], module_trained[False])
    result["module_ddp_calls"] = [(r.calls, r.compiled) for r in profile.rows() if r.region == "Block.forward"]

    try:
        from torch.distributed.device_mesh import init_device_mesh
        from torch.distributed.fsdp import fully_shard

        mesh = init_device_mesh("cpu", (dist.get_world_size(),))
        sharded = {}
        for regions in (True, False):
            model = TinyGPT(regions=regions)
            for block in model.blocks:
                fully_shard(block, mesh=mesh)
            fully_shard(model, mesh=mesh)
            train(model, model, rank)
            sharded[regions] = [p.full_tensor().detach().clone() for p in model.parameters()]
        result["fsdp"] = "matches"
        result["fsdp_max_difference"] = largest_difference(sharded[True], sharded[False])
        result["fsdp_vs_ddp_max_difference"] = largest_difference(sharded[True], trained[True])
        with ppy.profile(print_on_exit=False) as profile:
            module_sharded = {}
            for regions in (True, False):
                model = ModuleGPT(regions=regions)
                for block in model.blocks:
                    fully_shard(block, mesh=mesh)  # swaps the parameters for DTensors: read at each call
                fully_shard(model, mesh=mesh)
                train(model, model, rank)
                module_sharded[regions] = [p.full_tensor().detach().clone() for p in model.parameters()]
        result["module_fsdp_max_difference"] = largest_difference(module_sharded[True], module_sharded[False])
        result["module_fsdp_calls"] = [(r.calls, r.compiled) for r in profile.rows() if r.region == "Block.forward"]
    except (NotImplementedError, RuntimeError, ValueError, ImportError) as error:  # a torch without FSDP2 on CPU
        result["fsdp"] = f"unsupported: {type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}"
    report.with_suffix(f".{rank}.json").write_text(json.dumps(result), encoding="utf-8")
    # With gloo, a rank that reaches destroy_process_group while the other still works can abort it.
    dist.barrier()
    dist.destroy_process_group()
    # Gloo's worker threads can still hold tensors when the interpreter is torn down, and freeing one then aborts
    # the process ("terminate called without an active exception", 1 clean run in 4 here; pytorch/pytorch#179291).
    # Everything this rank reports is written: end it without the teardown.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
