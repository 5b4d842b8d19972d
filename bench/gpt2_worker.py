"""One path of bench/gpt2_compare.py, in a process of its own: prints one JSON line.

    python bench/gpt2_worker.py PATH ROWS_JSON [--first-call-only]

PATH is eager, compile, reduce-overhead, ppy or ppy+compile. The model is the
example's (examples/gpt2/gpt2.py) on the same seed, so every path computes the
same numbers; eager and torch.compile run the regions' Python bodies, and
ppy+compile is torch.compile of the model whose blocks are regions: the glue
between them compiled, each region call one operator in the graph.

The result so far is printed again after every row, so a worker stopped at
its time limit still reports the rows it finished (the last line is the
newest). The spec's optional "backend" (default "inductor") is torch.compile's
backend: the CPU dry run of bench/gpu_run.py uses "eager", which traces with
Dynamo but generates no kernels, so it proves the paths run in seconds.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import time
from pathlib import Path
from collections.abc import Callable
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def load_model_module(path: str) -> Any:
    spec = importlib.util.spec_from_file_location("gpt2_example", ROOT / "examples" / "gpt2" / "gpt2.py")
    assert spec is not None and spec.loader is not None  # a .py file's path always has a loader
    module: Any = importlib.util.module_from_spec(spec)  # the example's names are read from it
    sys.modules["gpt2_example"] = module
    spec.loader.exec_module(module)
    if path not in ("ppy", "ppy+compile"):
        # Plain PyTorch: the Model calls the module globals, so it calls the Python bodies.
        module.block, module.step = module.block.python, module.step.python
    return module


def report(result: dict[str, Any]) -> None:
    """The result so far, one JSON line, flushed: the parent keeps the last one it reads."""
    print(json.dumps(result), flush=True)


def on_device(gpt2: Any) -> None:
    """Draw the random weights on the device itself: GPT-2 XL's 1.5 billion drawn on the CPU and copied
    take tens of seconds a process. Every path draws them the same way from the same seed, so they all
    hold the same weights (though not the CPU draw's)."""
    import torch

    def scaled(rows: int, columns: int, spread: float, device: str) -> torch.Tensor:
        return torch.mul(torch.randn(rows, columns, device=device), spread)

    gpt2.scaled = scaled


def sync(device: str) -> None:
    import torch

    if device == "cuda":
        torch.cuda.synchronize()


def best_ms(work: Callable[[], Any], rounds: int, device: str) -> float:
    """The best of at least ``rounds`` passes, and of about a second's worth for fast rows:
    on a shared machine a handful of 30 ms samples can all land in a busy spell."""
    best = float("inf")
    started = time.perf_counter()
    done = 0
    while done < rounds or (time.perf_counter() - started < 1.0 and done < 50):
        done += 1
        sync(device)
        start = time.perf_counter()
        work()
        sync(device)
        best = min(best, (time.perf_counter() - start) * 1000.0)
    return best


def main() -> None:
    import torch

    path, spec = sys.argv[1], json.loads(sys.argv[2])
    first_call_only = "--first-call-only" in sys.argv
    device = spec["device"]
    dtype = getattr(torch, spec["dtype"])
    gpt2 = load_model_module(path)
    if device != "cpu":
        on_device(gpt2)
    torch.manual_seed(0)
    model = gpt2.Model(spec["layers"], spec["heads"], 64, spec["vocab"], device)
    if dtype != torch.float32:
        for name, value in list(vars(model).items()):
            if isinstance(value, torch.Tensor):
                setattr(model, name, value.to(dtype))
        for layer in model.blocks:
            for name, value in list(vars(layer).items()):
                setattr(layer, name, value.to(dtype))

    forward, runner = model.forward, model.run
    mark: Callable[[], None] | None = None
    clone_caches = False
    backend = spec.get("backend", "inductor")
    if path in ("compile", "ppy+compile"):
        forward, runner = torch.compile(model.forward, backend=backend), torch.compile(model.run, backend=backend)
    elif path == "reduce-overhead":
        # A mode is Inductor's alone: another backend (the dry run's) compiles without one.
        mode = {"mode": "reduce-overhead"} if backend == "inductor" else {"backend": backend}
        forward = torch.compile(model.forward, **mode)
        runner = torch.compile(model.run, **mode)
        mark = torch.compiler.cudagraph_mark_step_begin
        # With a KV cache, what reduce-overhead's own error message asks for: a step begun before each
        # invocation, and its outputs cloned before the next replay reuses their memory. The seed's torch
        # had a switch for the cloning; where it is gone (2.11 and 2.13 have none), it is done here.
        import torch._inductor.config

        triton_config = torch._inductor.config.triton
        if hasattr(triton_config, "cudagraph_trees_generation_cloning"):
            triton_config.cudagraph_trees_generation_cloning = "user_visible"
        else:
            clone_caches = True

    def advance(*arguments: Any) -> Any:
        if mark is not None:
            mark()
        out = runner(*arguments)
        if clone_caches:
            model.ks = [k.clone() for k in model.ks]
            model.vs = [v.clone() for v in model.vs]
            out = out.clone()
        return out

    def ids_for(batch: int, length: int) -> torch.Tensor:
        return torch.remainder(torch.arange(batch * length).reshape((batch, length)), spec["vocab"]).to(device)

    result: dict[str, Any] = {"path": path, "rows": {}, "answers": {}}
    first = spec["forward"][0]
    ids = ids_for(*first)
    sync(device)
    start = time.perf_counter()
    with torch.no_grad():
        forward(ids, *first)
    sync(device)
    result["first_call_s"] = time.perf_counter() - start
    report(result)
    if first_call_only:
        return

    rounds = spec["rounds"]
    with torch.no_grad():
        for batch, length in spec["forward"]:
            ids = ids_for(batch, length)
            for _ in range(2):
                forward(ids, batch, length)
            label = f"forward b{batch} s{length}"
            result["answers"][label] = gpt2.answer(forward(ids, batch, length))
            # B023 is wrong here: the lambda is timed in this iteration, on its ids.
            result["rows"][label] = best_ms(lambda: forward(ids, batch, length), rounds, device)  # noqa: B023
            report(result)

        prompt, steps = spec["decode"]
        ids = ids_for(1, prompt + steps)

        def decode() -> Any:
            model.reset(1, device)
            if dtype != torch.float32:
                model.ks = [k.to(dtype) for k in model.ks]
                model.vs = [v.to(dtype) for v in model.vs]
            advance(ids[:, 0:prompt], 1, prompt, True)
            sync(device)
            started = time.perf_counter()
            last = None
            for offset in range(steps):
                at = prompt + offset
                last = advance(ids[:, at:at + 1], 1, 1, False)
            sync(device)
            return (time.perf_counter() - started) * 1000.0, last

        decode()
        timings = [decode() for _ in range(rounds)]
        label = f"decode {steps} tokens"
        result["rows"][label] = min(t for t, _ in timings)
        result["answers"][label] = gpt2.answer(timings[-1][1])
        report(result)

    batch, length = spec["train"]
    ids = ids_for(batch, length)
    for layer in model.blocks:
        layer.fc_w.requires_grad_(True)
        layer.proj_w.requires_grad_(True)

    def training_step() -> torch.Tensor:
        for layer in model.blocks:
            layer.fc_w.grad = None
            layer.proj_w.grad = None
        logits: torch.Tensor = forward(ids, batch, length)  # the example's forward, untyped here
        logits.sum().backward()
        return logits

    training_step()
    label = f"training step b{batch} s{length}"
    result["rows"][label] = best_ms(training_step, rounds, device)
    result["answers"][label] = training_answer(gpt2, training_step(), model.blocks)
    result["done"] = True
    report(result)


def training_answer(gpt2: Any, logits: Any, blocks: list[Any]) -> str:
    """What a training step computed: its forward's aggregates, as every row prints them, and the
    gradients it left on the weights. Their absolute mean and root mean square sum magnitudes, with
    no cancellation to blow the paths' rounding up, so three significant digits must agree."""
    import torch

    grads = torch.cat([w.grad.float().flatten() for layer in blocks for w in (layer.fc_w, layer.proj_w)])
    return (f"{gpt2.answer(logits.detach())} grad_absmean={float(grads.abs().mean()):.3g} "
            f"grad_rms={float(grads.pow(2).mean().sqrt()):.3g}")


if __name__ == "__main__":
    main()
