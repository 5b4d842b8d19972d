"""Per-call speed of a ppy region against eager, torch.compile and TorchScript, and what each costs to start.

    python bench/region_speed.py [--rounds 30] [--threads 1] [--skip-compile] [--skip-startup] [--update-readme]

One process measures every path side by side on the seed document's GPT-2
`block` and `step` regions (examples/gpt2/gpt2.py):

- a dispatch-bound step: width 64, 4 heads, one new token on a 16-token cache;
- GPT-2 small (width 768, 12 heads): one token on a 128-token cache, and a 128-token forward.

Each case runs twice: with grad (the weights require grad and grad mode is on,
so every path records a graph, as in training) and with no grad (the same
tensors under `torch.no_grad()`, as in decoding), plus eager under
`torch.inference_mode()`. Columns: median and min microseconds per call over
rounds, and the median's ratio to eager in the same mode. The paths take turns
within each round, so a busy spell of this shared machine lands on all of them.
"C++ floor" is the same generated function called in a loop from C++ through
the full dispatcher (no Python between calls).

Then "what a no-grad call is made of": the dispatch-bound step's call taken
apart (its body looped in C++ below autograd, the entry around an empty body,
taking the arguments, by ppy and by pybind11, wrapping results, the dispatcher
per op), each part timed on its own.

Then, each in a fresh process: the cold build of the GPT-2 module (empty cache;
the once-per-torch bridge reported apart), for comparison a module binding a
region's parameters with pybind11,
the warm start (cache full: time from after `import torch` to the first
result), and torch.compile's first call cold and warm (its own cache, empty
then full).

Writes bench/results/region_speed.json and .md; --update-readme puts the
Markdown into README.md between its region-speed markers.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path
from collections.abc import Callable
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from publish import command, cpu, publish, table, today

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "gpt2" / "gpt2.py"
WEIGHTS = ("ln1_w", "ln1_b", "q_w", "q_b", "k_w", "k_b", "v_w", "v_b", "o_w", "o_b",
           "ln2_w", "ln2_b", "fc_w", "fc_b", "proj_w", "proj_b")
STEP_W64 = "step w64 h4, 1 token, 16 cached"
GPT2_STEP = "GPT-2 small step, 1 token, 128 cached"
GPT2_FORWARD = "GPT-2 small forward, 128 tokens"


def load_example() -> Any:
    spec = importlib.util.spec_from_file_location("gpt2_example", EXAMPLE)
    assert spec is not None and spec.loader is not None  # a .py file's path always has a loader
    module: Any = importlib.util.module_from_spec(spec)  # the example's names are read from it
    sys.modules["gpt2_example"] = module
    spec.loader.exec_module(module)
    return module


def weights(gpt2: Any, width: int) -> list[Any]:
    layer = gpt2.Block(width, "cpu")
    return [getattr(layer, n).requires_grad_(True) for n in WEIGHTS]


def cases(gpt2: Any) -> list[tuple[str, Any, tuple[Any, ...]]]:
    """Each case's region and arguments; the weights require grad, as a model's parameters do."""
    import torch

    torch.manual_seed(0)
    out = []
    for name, heads, cached in ((STEP_W64, 4, 16), (GPT2_STEP, 12, 128)):
        head_dim = 64 // 4 if heads == 4 else 64
        width = heads * head_dim
        x = torch.randn(1, 1, width)
        cache = torch.randn(1, heads, cached, head_dim)
        out.append((name, gpt2.step, (x, cache, cache.clone(), *weights(gpt2, width), 1, 1, heads, head_dim, width, 1e-5, False)))
    x = torch.randn(1, 128, 768)
    out.append((GPT2_FORWARD, gpt2.block, (x, *weights(gpt2, 768), 1, 128, 12, 64, 768, 1e-5)))
    return out


def bench_modules() -> dict[str, Any]:
    """The example's regions built with the benchmark entries (`__ppy_repeat_<symbol>`), beside the runtime's own:
    each region's module, by its site key."""
    from ppy_compile.pipeline import build_module
    from ppy_compile.options import BuildOptions

    built = build_module(str(EXAMPLE), EXAMPLE.read_text(encoding="utf-8"), options=BuildOptions(repeat_entry=True))
    # pybind11 binds each function to its module object, which the Callable type does not say.
    return {key: function.__self__ for key, function in built.functions.items()}  # type: ignore[attr-defined]


def settings(name: str, rounds: int) -> tuple[int, int]:
    """Calls per sample and samples. Short samples, many of them: on a machine others share, a sample
    shorter than a scheduler time slice mostly runs undisturbed, so the median stays the quiet speed."""
    if name == STEP_W64:
        return 20, rounds * 10
    return 1, (rounds * 3 if name == GPT2_STEP else max(5, rounds))


@dataclass(frozen=True)
class Route:
    """One way to make the call: ``run(n)`` makes it ``n`` times, in ``mode`` (a grad-mode context manager)."""

    run: Callable[[int], Any]
    mode: Callable[[], Any]
    grad: bool  # compared with eager in the same mode: with grad, or not


def python_loop(function: Callable[[], Any]) -> Callable[[int], Any]:
    def run(count: int) -> None:
        for _ in range(count):
            function()
    return run


def interleaved(paths: dict[str, Route], rounds: int, inner: int) -> dict[str, list[float]]:
    """Microseconds per call of each path, one sample per path per round, the paths taking turns."""
    samples: dict[str, list[float]] = {label: [] for label in paths}
    for path in paths.values():
        with path.mode():
            path.run(3)
    for _ in range(rounds):
        for label, path in paths.items():
            with path.mode():
                start = time.perf_counter()
                path.run(inner)
                samples[label].append((time.perf_counter() - start) / inner * 1e6)
    return samples


def path_table(region: Any, call: tuple[Any, ...], module: Any) -> dict[str, Route]:
    """Every path but torch.compile, by label."""
    import torch

    python = region.python
    repeat = getattr(module, f"__ppy_repeat_{region.cpp_symbol}")
    # The C++ floor loops in C++: one Python call makes every call of a sample.
    floor = lambda count: repeat(count, *call)  # noqa: E731
    with_grad, no_grad = contextlib.nullcontext, torch.no_grad
    paths = {
        "eager": Route(python_loop(lambda: python(*call)), with_grad, True),
        "ppy region": Route(python_loop(lambda: region(*call)), with_grad, True),
        "C++ floor": Route(floor, with_grad, True),
        "eager, no grad": Route(python_loop(lambda: python(*call)), no_grad, False),
        "eager, inference_mode": Route(python_loop(lambda: python(*call)), torch.inference_mode, False),
        "ppy region, no grad": Route(python_loop(lambda: region(*call)), no_grad, False),
        "C++ floor, no grad": Route(floor, no_grad, False),
    }
    try:
        scripted = torch.jit.script(python)
        paths["torch.jit.script"] = Route(python_loop(lambda: scripted(*call)), with_grad, True)
        paths["torch.jit.script, no grad"] = Route(python_loop(lambda: scripted(*call)), no_grad, False)
    except Exception as error:  # scripting is not guaranteed for every op
        print(f"# torch.jit.script failed on {region.__name__}: {type(error).__name__}", file=sys.stderr)
    return paths


ORDER = ["eager", "ppy region", "C++ floor", "torch.jit.script", "torch.compile",
         "eager, no grad", "eager, inference_mode", "ppy region, no grad", "C++ floor, no grad",
         "torch.jit.script, no grad", "torch.compile, no grad"]


def per_call_rows(args: argparse.Namespace, modules: dict[str, Any], plan: list[tuple[str, Any, tuple[Any, ...]]]) -> list[dict[str, Any]]:
    import torch

    samples: dict[tuple[str, str], list[float]] = {}
    grad: dict[str, bool] = {}
    for name, region, call in plan:
        inner, rounds = settings(name, args.rounds)
        paths = path_table(region, call, modules[region.site.key])
        grad.update((label, path.grad) for label, path in paths.items())
        for label, values in interleaved(paths, rounds, inner).items():
            samples[(name, label)] = values
    # torch.compile last: its machinery, once loaded, slows everything else in the process.
    if not args.skip_compile:
        for name, region, call in plan:
            inner, rounds = settings(name, args.rounds)
            compiled: Callable[..., Any] = torch.compile(region.python)
            # B023 is wrong here: the loops run in this iteration (interleaved below), on its compiled and call.
            paths = {"torch.compile": Route(python_loop(lambda: compiled(*call)), contextlib.nullcontext, True),  # noqa: B023
                     "torch.compile, no grad": Route(python_loop(lambda: compiled(*call)), torch.no_grad, False)}  # noqa: B023
            grad.update((label, path.grad) for label, path in paths.items())
            for label, values in interleaved(paths, rounds, inner).items():
                samples[(name, label)] = values
    rows = []
    for name, _, _ in plan:
        for label in ORDER:
            measured = samples.get((name, label))
            if measured is None:
                continue
            median = statistics.median(measured)
            low, _, high = statistics.quantiles(measured, n=4)
            eager = statistics.median(samples[(name, "eager" if grad[label] else "eager, no grad")])
            rows.append({"case": name, "path": label, "grad": grad[label], "median_us": median, "min_us": min(measured),
                         "iqr_pct": (high - low) / median * 100, "samples": len(measured), "ratio": median / eager})
    return rows


PYBIND_TYPES = {"Tensor": "const at::Tensor&", "int": "int64_t", "float": "double", "bool": "bool"}


def pybind_probe_source(region: Any) -> str:
    """A pybind11 module whose `convert` takes the region's parameters as pybind11 and torch's casters do,
    and runs nothing: the per-call price of binding a region's entry with pybind11."""
    import inspect

    parameters = inspect.signature(region.python).parameters.values()
    declared = ", ".join(f"{PYBIND_TYPES[getattr(p.annotation, '__name__', str(p.annotation))]} {p.name}"
                         for p in parameters)
    return (f"#include <torch/extension.h>\n"
            f"PYBIND11_MODULE(ppy_pybind_probe, module) {{\n"
            f"    module.def(\"convert\", []({declared}) {{}});\n"
            f"}}\n")


def build_pybind_probe(region: Any) -> Any:
    """Built once into the ppy cache (it takes torch's Python headers: the cold build is a start-up row)."""
    from ppy_compile.cache import Cache
    from ppy_compile.load import import_extension
    from ppy_compile.shared import BRIDGE, SharedBuild, ensure_shared

    cache = Cache.open()
    probe = SharedBuild("bench-pybind-probe", "probe.cpp", pybind_probe_source(region), "probe.so", 2, BRIDGE.libraries,
                        "building the pybind11 probe (bench/region_speed.py)")
    key = ensure_shared(cache, probe)
    artifact = cache.open_artifact(key)
    if artifact is None:
        raise SystemExit("the pybind11 probe was built but its cache entry does not check out")
    return import_extension(artifact.path, "ppy_pybind_probe")


def op_count(region: Any) -> int:
    """The dispatcher calls the region's C++ function makes, as written in it."""
    source = region.cpp_source
    start = source.index(f" {region.cpp_symbol}(")
    count: int = source[start:source.index("\n}\n", start)].count("at::_ops::")  # cpp_source is a str
    return count


def empty_region(region: Any) -> Any:
    """A region with ``region``'s parameters that hands back three of its tensor arguments and runs nothing:
    what the entry around a body costs. Written under .ppy-cache at a path that stays the same, so its
    build is a cache hit from one run to the next."""
    import inspect

    def spelled(annotation: Any) -> str:
        return "torch.Tensor" if annotation.__name__ == "Tensor" else annotation.__name__

    parameters = inspect.signature(region.python).parameters.values()
    tensors = [p.name for p in parameters if p.annotation.__name__ == "Tensor"][:3]
    declared = ", ".join(f"{p.name}: {spelled(p.annotation)}" for p in parameters)
    text = (f"import ppy\nimport torch\n\n\n@ppy.opt(3)\ndef empty({declared}) -> "
            f"tuple[torch.Tensor, torch.Tensor, torch.Tensor]:\n    return {', '.join(tensors)}\n")
    path = ROOT / ".ppy-cache" / "bench" / "empty_region.py"
    if not path.exists() or path.read_text() != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    spec = importlib.util.spec_from_file_location("ppy_bench_empty_region", path)
    assert spec is not None and spec.loader is not None  # a .py file's path always has a loader
    module: Any = importlib.util.module_from_spec(spec)  # the region is read from it
    spec.loader.exec_module(module)
    if not module.empty.build():
        raise SystemExit("the empty region did not compile; see the warnings above")
    return module.empty


def remains_rows(args: argparse.Namespace, modules: dict[str, Any], plan: list[tuple[str, Any, tuple[Any, ...]]]) -> list[dict[str, Any]]:
    """What a no-grad call of the dispatch-bound step is made of, each part timed on its own."""
    import torch

    name, region, call = plan[0]
    assert name == STEP_W64
    module = modules[region.site.key]
    symbol = region.cpp_symbol
    below = getattr(module, f"__ppy_repeat_below_{symbol}")
    floor = getattr(module, f"__ppy_repeat_{symbol}")
    convert = getattr(module, f"__ppy_convert_{symbol}")
    pybind = build_pybind_probe(region).convert
    probe, tensor = module.__ppy_probe, call[0]
    inner, rounds = settings(name, args.rounds)
    no_grad = torch.no_grad
    empty = empty_region(region)
    paths = {
        "region": Route(python_loop(lambda: region(*call)), no_grad, False),
        "floor": Route(lambda count: floor(count, *call), no_grad, False),
        "body below autograd": Route(lambda count: below(count, *call), no_grad, False),
        "empty": Route(python_loop(lambda: empty(*call)), no_grad, False),
        "convert": Route(python_loop(lambda: convert(*call)), no_grad, False),
        "pybind11 convert": Route(python_loop(lambda: pybind(*call)), no_grad, False),
    }
    ops = 1000  # per probe sample: each probe's work is some tens of nanoseconds
    def probe_run(which: int) -> Callable[[int], Any]:
        return lambda count: probe(which, count * ops, tensor)

    paths.update({f"probe {which}": Route(probe_run(which), no_grad, False) for which in range(5)})
    # Each part's fastest sample: these are differences of a few microseconds, which a busy spell of this
    # shared machine swamps in a median, and the minimum of many short samples is the undisturbed cost.
    measured = {label: min(values) for label, values in interleaved(paths, rounds, inner).items()}
    per_op = {which: measured[f"probe {which}"] / ops * 1000 for which in range(5)}  # ns
    outputs = len(region.python.__annotations__["return"].__args__)
    wrap = (per_op[4] - per_op[3]) / 1000
    count = op_count(region)
    rest = measured["region"] - measured["body below autograd"] - measured["empty"] - outputs * wrap
    rows = [
        ("ppy region, no grad: the whole call", measured["region"]),
        ("its body alone, in a C++ loop, below autograd", measured["body below autograd"]),
        ("the same body through the full dispatcher (the C++ floor, no grad)", measured["floor"]),
        ("what the fast path skips: autograd and ADInplaceOrView (floor − body below)",
         measured["floor"] - measured["body below autograd"]),
        (f"the entry around an empty body: binding, taking the {len(call)} arguments, the checks, the GIL, "
         f"returning {outputs} of its arguments", measured["empty"]),
        (f"of it, taking the {len(call)} arguments (an entry that only takes them, called from Python)",
         measured["convert"]),
        (f"the same {len(call)} arguments taken by pybind11 and torch's casters", measured["pybind11 convert"]),
        (f"wrapping {outputs} new result tensors as Python objects, and dropping them ({outputs} × "
         f"{wrap * 1000:.0f} ns)", outputs * wrap),
        ("the rest: the body run between Python calls rather than in a tight loop, freeing the results "
         "(call − body − entry − wrapping)", rest),
        (f"the dispatcher alone, per op (size.int: {per_op[1] - per_op[0]:.0f} ns) × the body's {count} ops",
         count * (per_op[1] - per_op[0]) / 1000),
        (f"autograd and ADInplaceOrView on one view op (alias: {per_op[2]:.0f} ns against {per_op[3]:.0f} ns "
         "below them)", (per_op[2] - per_op[3]) / 1000),
    ]
    return [{"part": part, "us": value} for part, value in rows]


def gpt2_parts_rows(args: argparse.Namespace, modules: dict[str, Any],
                    plan: list[tuple[str, Any, tuple[Any, ...]]]) -> list[dict[str, Any]]:
    """What a no-grad GPT-2 step is made of: its six matrix products, which read the layer's weights from
    memory, against everything else, so the table shows how much of eager's time a region can remove at all."""
    import inspect

    import torch
    import torch.nn.functional as F

    name, region, call = plan[1]
    assert name == GPT2_STEP
    module = modules[region.site.key]
    below = getattr(module, f"__ppy_repeat_below_{region.cpp_symbol}")
    named = dict(zip(inspect.signature(region.python).parameters, call))
    width = named["width"]
    token, hidden = torch.randn(1, 1, width), torch.randn(1, 1, named["fc_w"].shape[0])
    layers = [(token, named[f"{which}_w"], named[f"{which}_b"]) for which in ("q", "k", "v", "o", "fc")]
    layers.append((hidden, named["proj_w"], named["proj_b"]))

    def linears(count: int) -> None:
        for _ in range(count):
            for x, weight, bias in layers:
                F.linear(x, weight, bias)

    inner, rounds = settings(name, args.rounds)
    no_grad = torch.no_grad
    paths = {
        "region": Route(python_loop(lambda: region(*call)), no_grad, False),
        "eager": Route(python_loop(lambda: region.python(*call)), no_grad, False),
        "body below autograd": Route(lambda count: below(count, *call), no_grad, False),
        "linears": Route(linears, no_grad, False),
    }
    measured = {label: statistics.median(values) for label, values in interleaved(paths, rounds, inner).items()}
    weights = sum(weight.numel() * weight.element_size() for _, weight, _ in layers) / 2**20
    products = measured["linears"]
    rows = [
        ("eager, no grad: the whole call", measured["eager"]),
        ("ppy region, no grad: the whole call", measured["region"]),
        ("its body alone, in a C++ loop, below autograd", measured["body below autograd"]),
        (f"its six linear layers alone (`F.linear` from Python: one token times {weights:.0f} MiB of weights)",
         products),
        ("the rest of the body: attention, the cache's two `cat`s, two layer norms, GELU, two adds (body − linear "
         "layers)", measured["body below autograd"] - products),
        ("eager's time beyond the linear layers (eager − linear layers)", measured["eager"] - products),
        ("the region's time beyond the linear layers (region − linear layers)", measured["region"] - products),
        ("what 0.92 × eager leaves beyond the linear layers (0.92 × eager − linear layers)",
         0.92 * measured["eager"] - products),
    ]
    return [{"part": part, "us": value} for part, value in rows]


def _python(code: str, env: dict[str, str]) -> str:
    result = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                            env={**os.environ, **env, "PYTHONPATH": str(ROOT)}, cwd=ROOT)
    if result.returncode != 0:
        raise SystemExit(f"startup measurement failed:\n{result.stderr}")
    return result.stdout.strip().splitlines()[-1]


# Each build script prints its wall seconds and the CPU seconds of the compilers it ran (children's user
# and system time): on this shared machine the wall time of one build swings with the load, its CPU time
# much less, so the build comparisons read the CPU column.
TIMED = """
    import resource, time
    def clock():
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        return time.perf_counter(), used.ru_utime + used.ru_stime
    def timed(build):
        wall, cpu = clock()
        build()
        after = clock()
        print(after[0] - wall, after[1] - cpu, end=" ")
"""

BUILD = TIMED + """
    import importlib.util
    spec = importlib.util.spec_from_file_location("gpt2_example", {path!r})
    gpt2 = importlib.util.module_from_spec(spec); spec.loader.exec_module(gpt2)
    timed(lambda: gpt2.block.build() or exit("the GPT-2 module did not build"))
"""

TOOLCHAIN = TIMED + """
    from ppy_compile.cache import Cache
    from ppy_compile.shared import ensure_bridge, ensure_pch
    cache = Cache.open()
    timed(lambda: ensure_bridge(cache))
    timed(lambda: ensure_pch(cache))
"""

PYBIND_PROBE = TIMED + """
    import sys
    sys.path.insert(0, "bench")
    from region_speed import build_pybind_probe, load_example
    gpt2 = load_example()
    timed(lambda: build_pybind_probe(gpt2.step))
"""

FIRST_RESULT = """
    import time, importlib.util, sys
    import torch
    start = time.perf_counter()
    spec = importlib.util.spec_from_file_location("gpt2_example", {path!r})
    gpt2 = importlib.util.module_from_spec(spec); spec.loader.exec_module(gpt2)
    torch.manual_seed(0)
    layer = gpt2.Block(64, "cpu")
    names = {names!r}
    block = {target}
    block(torch.randn(1, 16, 64), *[getattr(layer, n) for n in names], 1, 16, 4, 16, 64, 1e-5)
    print(time.perf_counter() - start)
"""


def startup_rows(args: argparse.Namespace) -> list[tuple[str, float, float | None]]:
    """(what, wall seconds, compiler CPU seconds or None)."""
    rows: list[tuple[str, float, float | None]] = []
    quiet = {"PPY_QUIET": "1"}

    def timings(code: str, env: dict[str, str]) -> list[float]:
        return [float(v) for v in _python(code, {**env, **quiet}).split()]

    with tempfile.TemporaryDirectory() as empty:
        bridge_wall, bridge_cpu, header_wall, header_cpu = timings(TOOLCHAIN, {"PPY_CACHE_DIR": empty})
        # The module alone: a cache that holds only what every module shares, as after any first use of ppy.
        cold_wall, cold_cpu = timings(BUILD.format(path=str(EXAMPLE)), {"PPY_CACHE_DIR": empty})
        rows.append(("ppy: cold build of the GPT-2 module (3 regions, -O3; bridge and header already built)",
                     cold_wall, cold_cpu))
        rows.append(("ppy: one-time bridge build (per torch version and compiler)", bridge_wall, bridge_cpu))
        rows.append(("ppy: one-time precompiled header (per torch version and compiler)", header_wall, header_cpu))
        probe_wall, probe_cpu = timings(PYBIND_PROBE, {"PPY_CACHE_DIR": empty})
        rows.append(("for comparison: a module binding one region's parameters with pybind11 (torch/extension.h)",
                     probe_wall, probe_cpu))
        first = FIRST_RESULT.format(path=str(EXAMPLE), names=WEIGHTS, target="gpt2.block")
        warm = [float(_python(first, {"PPY_CACHE_DIR": empty})) for _ in range(3)]
        rows.append(("ppy: warm start (after `import torch`, to the first result)", min(warm), None))
    with tempfile.TemporaryDirectory() as empty:
        seconds = float(_python(first, {"PPY_CACHE_DIR": empty, "PPY_BUILD": "background"}))
        rows.append(("ppy: empty cache, first result (the Python body answers while the regions build; "
                     "bench/start_speed.py has the rest)", seconds, None))
    if not args.skip_compile:
        with tempfile.TemporaryDirectory() as inductor:
            env = {"TORCHINDUCTOR_CACHE_DIR": inductor, "TRITON_CACHE_DIR": inductor}
            first = FIRST_RESULT.format(path=str(EXAMPLE), names=WEIGHTS, target="torch.compile(gpt2.block.python)")
            rows.append(("torch.compile: first call, cold cache", float(_python(first, env)), None))
            rows.append(("torch.compile: first call, warm cache", float(_python(first, env)), None))
    return rows


def verdicts(rows: list[dict[str, Any]], gpt2_parts: list[dict[str, Any]]) -> list[str]:
    """Issue 14's targets, as this run measured them; ratios to three places, so one that rounds to its target
    does not read as met."""
    found = {(row["case"], row["path"]): row for row in rows}

    def judged(value: str, met: bool, target: str) -> str:
        return f"{value} (target {target}: {'met' if met else 'not met'})"

    region, floor = found[(STEP_W64, "ppy region, no grad")], found[(STEP_W64, "C++ floor, no grad")]
    under = 1 - region["median_us"] / floor["median_us"]
    gpt2 = found[(GPT2_STEP, "ppy region, no grad")]
    return [
        f"- {STEP_W64}, no grad: the region is "
        + judged(f"{region['ratio']:.2f} × eager", region["ratio"] <= 0.62, "at most 0.62")
        + ", " + judged(f"{under:.0%} under the C++ floor", under >= 0.10, "at least 10%") + ".",
        f"- {GPT2_STEP}, no grad: " + judged(f"{gpt2['ratio']:.3f} × eager", gpt2["ratio"] <= 0.92, "at most 0.92")
        + (f"; {_parts_ratio(gpt2_parts):.3f} in the breakdown's own turns below" if gpt2_parts else "") + ".",
    ]


def _parts_ratio(parts: list[dict[str, Any]]) -> float:
    """The region's whole call over eager's, as the GPT-2 breakdown timed them (its first two rows)."""
    return float(parts[1]["us"] / parts[0]["us"])


def markdown(report: dict[str, Any]) -> str:
    intro = (f"`{report['command']}` on {report['machine']}, torch {report['torch']}, Python {report['python']}, "
             f"{report['threads']} intra-op thread(s), {report['date']}; load average {report['load'][0]:.1f} before "
             f"and {report['load'][1]:.1f} after (other work shares this machine). Per call, on the seed's `block` and "
             "`step`; with grad, the weights require grad and every path records a graph; × eager is against eager "
             "in the same mode; IQR is the spread of the samples.")
    rows, previous = [], None
    for row in report["rows"]:
        rows.append([row["case"] if row["case"] != previous else "", row["path"], f"{row['median_us']:.1f}",
                     f"{row['min_us']:.1f}", f"{row['iqr_pct']:.0f}%", f"{row['ratio']:.2f}"])
        previous = row["case"]
    text = table(intro, ["case", "path", "median µs", "min µs", "IQR", "× eager"], rows, numeric_from=2)
    text += "\nAgainst issue 14's targets:\n\n" + "\n".join(verdicts(report["rows"], report["gpt2_parts"])) + "\n"
    parts = [[row["part"], f"{row['us']:.2f}"] for row in report["remains"]]
    intro = (f"What a no-grad call of {STEP_W64} is made of (each part's fastest sample, timed apart; the parts "
             "are estimates and need not add up exactly):")
    text += "\n" + table(intro, ["part", "µs per call"], parts, numeric_from=1)
    parts = [[row["part"], f"{row['us']:.1f}"] for row in report["gpt2_parts"]]
    intro = (f"What a no-grad call of {GPT2_STEP} is made of (medians, each part timed apart, the paths taking "
             "turns as in the table above):")
    text += "\n" + table(intro, ["part", "µs per call"], parts, numeric_from=1)
    if report["startup"]:
        startup = [[label, f"{wall:.2f}", "" if cpu is None else f"{cpu:.1f}"] for label, wall, cpu in report["startup"]]
        text += "\n" + table("Start-up, each in a fresh process (compiler CPU seconds: the compilers' user and "
                             "system time, which the machine's load moves much less than the wall time):",
                             ["start-up", "seconds", "compiler CPU s"], startup, numeric_from=1)
    return text


def main() -> None:
    # Inductor compiles in this process rather than a pool of workers that stay behind.
    os.environ.setdefault("TORCHINDUCTOR_COMPILE_THREADS", "1")
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads (default 1: less noise)")
    parser.add_argument("--skip-compile", action="store_true", help="leave torch.compile out (it takes minutes)")
    parser.add_argument("--skip-startup", action="store_true", help="leave out the fresh-process build and start timings")
    parser.add_argument("--update-readme", action="store_true", help="refresh the table in README.md")
    args = parser.parse_args()

    import torch
    from rich.console import Console
    from rich.table import Table

    torch.set_num_threads(args.threads)
    console = Console(width=max(Console().width, 132))
    load_before = os.getloadavg()[0]
    console.print(f"ppy region speed: {cpu()}, torch {torch.__version__}, Python {platform.python_version()}, "
                  f"{args.threads} thread(s), load {load_before:.1f}")
    gpt2 = load_example()
    for region in (gpt2.block, gpt2.step):
        if not region.build():
            raise SystemExit(f"region {region.__name__} did not compile; see the warnings above")
    modules = bench_modules()
    plan = cases(gpt2)
    rows = per_call_rows(args, modules, plan)
    remains = remains_rows(args, modules, plan)
    gpt2_parts = gpt2_parts_rows(args, modules, plan)
    load_after = os.getloadavg()[0]
    shown = Table("case", "path", "median µs", "min µs", "IQR", "× eager")
    for row in rows:
        shown.add_row(row["case"], row["path"], f"{row['median_us']:.1f}", f"{row['min_us']:.1f}",
                      f"{row['iqr_pct']:.0f}%", f"{row['ratio']:.2f}")
    console.print(shown)
    shown = Table(f"what a no-grad call of {STEP_W64} is made of", "µs per call")
    for row in remains:
        shown.add_row(row["part"], f"{row['us']:.2f}")
    console.print(shown)
    shown = Table(f"what a no-grad call of {GPT2_STEP} is made of", "µs per call")
    for row in gpt2_parts:
        shown.add_row(row["part"], f"{row['us']:.1f}")
    console.print(shown)
    startup = [] if args.skip_startup else startup_rows(args)
    if startup:
        shown = Table("start-up", "seconds", "compiler CPU s")
        for label, wall, cpu_seconds in startup:
            shown.add_row(label, f"{wall:.2f}", "" if cpu_seconds is None else f"{cpu_seconds:.1f}")
        console.print(shown)
    report = {"command": command(), "machine": cpu(), "torch": torch.__version__, "python": platform.python_version(),
              "threads": args.threads, "date": today(), "load": [load_before, load_after], "rows": rows, "remains": remains,
              "gpt2_parts": gpt2_parts, "startup": startup}
    publish("region_speed", "region-speed", report, markdown(report), args.update_readme)


if __name__ == "__main__":
    main()
