"""Per-call cost of a module region (`@ppy.opt` on `nn.Module.forward`) against the free-function region.

    python bench/module_speed.py [--rounds 30] [--update-readme]

The dispatch-bound GPT-2 step (width 64, 4 heads, one new token on a 16-token
cache, no grad, one thread): `gpt2.step` called with its seventeen weights and
six dimensions (directly; from an nn.Module's `forward` that holds them in
Python variables; and from one that reads them through `self`, as a model of
nn.Modules calls a free-function region), beside `gpt2_modules.Block.forward` (called as the module, and as
`block.forward(...)`, which skips nn.Module's `__call__`), the same block as
nn.Modules, which reads the same tensors and settings through `self` at each
call and checks the class of each submodule it inlined. Eager is the module's
own Python body. The paths take turns within each round; every path's result is
checked equal to eager's first.

Writes bench/results/module_speed.json and .md; --update-readme puts the table
into README.md between its module-speed markers.
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from publish import command, cpu, publish, table, today

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "gpt2"
HEADS, HEAD_DIM, CACHED = 4, 16, 16
WIDTH = HEADS * HEAD_DIM


def _load(name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None  # a .py file's path always has a loader
    module: Any = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def paths() -> dict[str, Callable[[], Any]]:
    import torch

    gpt2 = _load("gpt2")
    modules = _load("gpt2_modules")
    for region in (gpt2.step, modules.Block.forward):
        if not region.build():
            raise SystemExit(f"module_speed: {region.__qualname__} did not compile: {region.fallback_reason}")
    torch.manual_seed(0)
    functions = gpt2.Model(1, HEADS, HEAD_DIM, 64, "cpu")
    block = modules.GPT2(1, HEADS, HEAD_DIM, 64).load(functions).blocks[0].eval()
    layer = functions.blocks[0]
    x = torch.randn(1, 1, WIDTH)
    cache = torch.randn(1, HEADS, CACHED, HEAD_DIM)
    weights = [getattr(layer, name) for name in ("ln1_w", "ln1_b", "q_w", "q_b", "k_w", "k_b", "v_w", "v_b", "o_w",
                                                 "o_b", "ln2_w", "ln2_b", "fc_w", "fc_b", "proj_w", "proj_b")]
    step_args = (x, cache, cache, *weights, 1, 1, HEADS, HEAD_DIM, WIDTH, gpt2.EPS, False)
    python = modules.Block.forward.python

    class Wrapper(torch.nn.Module):
        """How a model used the free-function region before: a forward passing its weights and dims."""

        def forward(self, x: Any, k: Any, v: Any) -> Any:
            return gpt2.step(x, k, v, *weights, 1, 1, HEADS, HEAD_DIM, WIDTH, gpt2.EPS, False)

    class Reading(torch.nn.Module):
        """How a model of nn.Modules calls the free-function region: its forward reads the weights through
        `self` (nn.Module's __getattr__), as the module region's C reader does."""

        def __init__(self, block: Any) -> None:
            super().__init__()
            self.block = block

        def forward(self, x: Any, k: Any, v: Any) -> Any:
            b = self.block
            ln1, attn, ln2, mlp = b.ln1, b.attn, b.ln2, b.mlp
            return gpt2.step(x, k, v, ln1.weight, ln1.bias, attn.q.weight, attn.q.bias, attn.k.weight, attn.k.bias,
                             attn.v.weight, attn.v.bias, attn.o.weight, attn.o.bias, ln2.weight, ln2.bias,
                             mlp.fc.weight, mlp.fc.bias, mlp.proj.weight, mlp.proj.bias, 1, 1, attn.heads,
                             attn.head_dim, attn.width, ln1.eps, False)

    wrapper, reading = Wrapper(), Reading(block)
    return {
        "eager module": lambda: python(block, x, cache, cache, False),
        "ppy free-function region": lambda: gpt2.step(*step_args),
        "ppy free-function region, in a module's forward": lambda: wrapper(x, cache, cache),
        "ppy free-function region, in a module's forward reading its weights through self":
            lambda: reading(x, cache, cache),
        "ppy module region": lambda: block(x, cache, cache, False),
        "ppy module region, forward called": lambda: block.forward(x, cache, cache, False),
    }


def measure(routes: dict[str, Callable[[], Any]], rounds: int, inner: int = 50) -> dict[str, list[float]]:
    import torch

    samples: dict[str, list[float]] = {label: [] for label in routes}
    with torch.no_grad():
        expected = routes["eager module"]()
        for label, route in routes.items():
            found = route()
            if not all(torch.equal(a, b) for a, b in zip(found, expected)):
                raise SystemExit(f"module_speed: `{label}` computes another result than eager")
        for _ in range(rounds):
            for label, route in routes.items():
                start = time.perf_counter()
                for _ in range(inner):
                    route()
                samples[label].append((time.perf_counter() - start) / inner * 1e6)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--update-readme", action="store_true")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    samples = measure(paths(), args.rounds)
    free = statistics.median(samples["ppy free-function region"])
    rows, report = [], []
    for label, values in samples.items():
        median = statistics.median(values)
        rows.append([label, f"{median:.1f}", f"{min(values):.1f}", f"{median / free:.2f}x"])
        report.append({"path": label, "median_us": median, "min_us": min(values), "ratio_to_free": median / free})
    intro = (f"Module region against free-function region, GPT-2 step w64 h4 (1 token, {CACHED} cached), no grad, "
             f"one thread; {cpu()}, torch {torch.__version__}, {today()}; `{command()}`. Results are checked equal "
             "to eager's before timing.")
    markdown = table(intro, ["path", "median us/call", "min us/call", "vs free function"], rows, 1)
    print(markdown)
    publish("module_speed", "module-speed", {"date": today(), "machine": cpu(), "torch": torch.__version__,
                                             "rows": report}, markdown, args.update_readme)


if __name__ == "__main__":
    main()
