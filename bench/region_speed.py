"""Per-call speed of a ppy region against eager, torch.compile and TorchScript, and what each costs to start.

    python bench/region_speed.py [--rounds 30] [--threads 1] [--skip-compile] [--skip-startup]

One process measures every path side by side on the seed document's GPT-2
`block` and `step` regions (examples/gpt2/gpt2.py):

- a dispatch-bound step: width 64, 4 heads, one new token on a 16-token cache;
- GPT-2 small (width 768, 12 heads): one token on a 128-token cache, and a 128-token forward.

Columns: median and min microseconds per call over rounds, and the median's ratio
to eager. "C++ floor" is the same generated function called in a loop from C++
(no Python between calls). Then, each in a fresh process: the cold build of
the GPT-2 module (empty cache; the once-per-torch bridge reported apart), the
warm start (cache full: time from after `import torch` to the first result),
and torch.compile's first call cold and warm (its own cache, empty then full).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "gpt2" / "gpt2.py"


def load_example() -> Any:
    spec = importlib.util.spec_from_file_location("gpt2_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules["gpt2_example"] = module
    spec.loader.exec_module(module)
    return module


def timed(function: Callable[[], Any], rounds: int, inner: int) -> tuple[float, float]:
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(inner):
            function()
        samples.append((time.perf_counter() - start) / inner * 1e6)
    return statistics.median(samples), min(samples)


def weights(gpt2: Any, width: int) -> list[Any]:
    layer = gpt2.Block(width, "cpu")
    return [getattr(layer, n) for n in ("ln1_w", "ln1_b", "q_w", "q_b", "k_w", "k_b", "v_w", "v_b", "o_w", "o_b",
                                        "ln2_w", "ln2_b", "fc_w", "fc_b", "proj_w", "proj_b")]


def cases(gpt2: Any) -> list[tuple[str, Any, tuple[Any, ...]]]:
    import torch

    torch.manual_seed(0)
    out = []
    for name, heads, cached in (("step w64 h4, 1 token, 16 cached", 4, 16),
                                ("GPT-2 small step, 1 token, 128 cached", 12, 128)):
        head_dim = 64 // 4 if heads == 4 else 64
        width = heads * head_dim
        x = torch.randn(1, 1, width)
        cache = torch.randn(1, heads, cached, head_dim)
        out.append((name, gpt2.step, (x, cache, cache.clone(), *weights(gpt2, width), 1, 1, heads, head_dim, width, 1e-5, False)))
    x = torch.randn(1, 128, 768)
    out.append(("GPT-2 small forward, 128 tokens", gpt2.block, (x, *weights(gpt2, 768), 1, 128, 12, 64, 768, 1e-5)))
    return out


def per_call_rows(args: argparse.Namespace) -> list[dict[str, Any]]:
    import torch

    gpt2 = load_example()
    for region in (gpt2.block, gpt2.step):
        if not region.build():
            raise SystemExit(f"region {region.__name__} did not compile; see the warnings above")
    measured: dict[tuple[str, str], tuple[float, float]] = {}
    plan = cases(gpt2)

    def settings(name: str) -> tuple[int, int]:
        heavy = "GPT-2" in name
        return (3 if heavy else 200), max(5, args.rounds // (3 if heavy else 1))

    with torch.no_grad():
        for name, region, call in plan:
            python, compiled = region.python, region._compiled
            repeat = getattr(compiled.__self__, f"__ppy_repeat_{region._cpp_symbol}")
            paths: dict[str, Callable[[], Any]] = {"eager": lambda: python(*call), "ppy region": lambda: region(*call)}
            try:
                scripted = torch.jit.script(python)
                paths["torch.jit.script"] = lambda: scripted(*call)
            except Exception as error:  # scripting is not guaranteed for every op
                print(f"# torch.jit.script failed on {region.__name__}: {type(error).__name__}", file=sys.stderr)
            inner, rounds = settings(name)
            for label, path in paths.items():
                for _ in range(3):
                    path()
                measured[(name, label)] = timed(path, rounds, inner)
            floor = []
            for _ in range(rounds):
                start = time.perf_counter()
                repeat(inner, *call)
                floor.append((time.perf_counter() - start) / inner * 1e6)
            measured[(name, "C++ floor")] = (statistics.median(floor), min(floor))
        # torch.compile last: its machinery, once loaded, slows everything else in the process.
        if not args.skip_compile:
            for name, region, call in plan:
                compiled_fn = torch.compile(region.python)
                inner, rounds = settings(name)
                for _ in range(3):
                    compiled_fn(*call)
                measured[(name, "torch.compile")] = timed(lambda: compiled_fn(*call), rounds, inner)
    rows = []
    order = ["eager", "ppy region", "C++ floor", "torch.jit.script", "torch.compile"]
    for name, _, _ in plan:
        eager = measured[(name, "eager")][0]
        for label in order:
            if (name, label) in measured:
                median, best = measured[(name, label)]
                rows.append({"case": name, "path": label, "median_us": median, "min_us": best, "ratio": median / eager})
    return rows


def _python(code: str, env: dict[str, str]) -> str:
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                            env={**os.environ, **env, "PYTHONPATH": str(ROOT)}, cwd=ROOT)
    if result.returncode != 0:
        raise SystemExit(f"startup measurement failed:\n{result.stderr}")
    return result.stdout.strip().splitlines()[-1]


BUILD = """
    import time, importlib.util, sys
    spec = importlib.util.spec_from_file_location("gpt2_example", {path!r})
    gpt2 = importlib.util.module_from_spec(spec); spec.loader.exec_module(gpt2)
    start = time.perf_counter()
    assert gpt2.block.build()
    print(time.perf_counter() - start)
"""

TOOLCHAIN = """
    import time
    from ppy_compile.build import _ensure_bridge, _ensure_pch
    from ppy_compile.cache import Cache
    cache = Cache.open()
    start = time.perf_counter(); _ensure_bridge(cache); bridge = time.perf_counter() - start
    start = time.perf_counter(); _ensure_pch(cache); print(bridge, time.perf_counter() - start)
"""

FIRST_RESULT = """
    import time, importlib.util, sys
    import torch
    start = time.perf_counter()
    spec = importlib.util.spec_from_file_location("gpt2_example", {path!r})
    gpt2 = importlib.util.module_from_spec(spec); spec.loader.exec_module(gpt2)
    torch.manual_seed(0)
    layer = gpt2.Block(64, "cpu")
    names = ("ln1_w", "ln1_b", "q_w", "q_b", "k_w", "k_b", "v_w", "v_b", "o_w", "o_b", "ln2_w", "ln2_b", "fc_w", "fc_b", "proj_w", "proj_b")
    block = {target}
    block(torch.randn(1, 16, 64), *[getattr(layer, n) for n in names], 1, 16, 4, 16, 64, 1e-5)
    print(time.perf_counter() - start)
"""


def startup_rows(args: argparse.Namespace) -> list[tuple[str, float]]:
    rows = []
    with tempfile.TemporaryDirectory() as empty:
        bridge, header = (float(v) for v in _python(TOOLCHAIN, {"PPY_CACHE_DIR": empty, "PPY_QUIET": "1"}).split())
        # The module alone: a cache that holds only what every module shares, as after any first use of ppy.
        cold = float(_python(BUILD.format(path=str(EXAMPLE)), {"PPY_CACHE_DIR": empty, "PPY_QUIET": "1"}))
        rows.append(("ppy: cold build of the GPT-2 module (3 regions, -O3)", cold))
        rows.append(("ppy: one-time bridge build (per torch version and compiler)", bridge))
        rows.append(("ppy: one-time precompiled header (per torch version and compiler)", header))
        warm = [float(_python(FIRST_RESULT.format(path=str(EXAMPLE), target="gpt2.block"), {"PPY_CACHE_DIR": empty}))
                for _ in range(3)]
        rows.append(("ppy: warm start, new process (after import torch, to first result)", min(warm)))
    if not args.skip_compile:
        with tempfile.TemporaryDirectory() as inductor:
            env = {"TORCHINDUCTOR_CACHE_DIR": inductor, "TRITON_CACHE_DIR": inductor}
            target = "torch.compile(gpt2.block.python)"
            rows.append(("torch.compile: first call, cold cache", float(_python(FIRST_RESULT.format(path=str(EXAMPLE), target=target), env))))
            rows.append(("torch.compile: first call, warm cache", float(_python(FIRST_RESULT.format(path=str(EXAMPLE), target=target), env))))
    return rows


def main() -> None:
    # Inductor compiles in this process rather than a pool of workers that stay behind.
    os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads (default 1: less noise)")
    parser.add_argument("--skip-compile", action="store_true", help="leave torch.compile out (it takes minutes)")
    parser.add_argument("--skip-startup", action="store_true", help="leave out the fresh-process build and start timings")
    args = parser.parse_args()

    import torch
    from rich.console import Console
    from rich.table import Table

    torch.set_num_threads(args.threads)
    console = Console()
    console.print(f"ppy region speed: {platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}, "
                  f"Python {platform.python_version()}, {args.threads} thread(s)")
    rows = per_call_rows(args)
    table = Table("case", "path", "median µs", "min µs", "× eager")
    for row in rows:
        table.add_row(row["case"], row["path"], f"{row['median_us']:.1f}", f"{row['min_us']:.1f}", f"{row['ratio']:.2f}")
    console.print(table)
    if not args.skip_startup:
        startup = Table("start-up", "seconds")
        for label, seconds in startup_rows(args):
            startup.add_row(label, f"{seconds:.2f}")
        console.print(startup)


if __name__ == "__main__":
    main()
