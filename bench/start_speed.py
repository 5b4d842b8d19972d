"""How long ppy takes before a result, on an empty cache and after an edit, against torch.compile's first call.

    python bench/start_speed.py [--skip-compile] [--update-readme]

Each measurement runs in a fresh process, timed from just after `import torch`:

- the first result of the GPT-2 example's `block` on an empty cache, with the
  default background build (the Python body answers while the regions build)
  and with `PPY_BUILD=wait` (the first answer is compiled: the once-per-torch
  bridge and precompiled header, then the module);
- the same with the once-per-torch builds already done, and on a warm cache;
- torch.compile's first call of the same function, its cache empty, then full;
- a 14-region file (layer-sized regions at -O3): its cold build, then a rebuild
  after editing one region (the median of three edits), after adding lines
  above every region, and after rewording a comment. Each rebuilt region is
  checked against its Python body.

Wall seconds, and the compilers' CPU seconds (user and system time of child
processes), which this shared machine's load moves much less than wall time.
Writes bench/results/start_speed.json and .md; --update-readme puts the
Markdown into README.md between its start-speed markers.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import textwrap
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from publish import command, cpu, publish, table, today  # noqa: E402
from region_speed import EXAMPLE, WEIGHTS, _python  # noqa: E402

# Prints: seconds from after `import torch` to the first result, the compilers' CPU seconds, whether it was compiled.
FIRST_RESULT = """
    import importlib.util, resource, time
    import torch
    def children():
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        return used.ru_utime + used.ru_stime
    start, cpu = time.perf_counter(), children()
    spec = importlib.util.spec_from_file_location("gpt2_example", {path!r})
    gpt2 = importlib.util.module_from_spec(spec); spec.loader.exec_module(gpt2)
    torch.manual_seed(0)
    layer = gpt2.Block(64, "cpu")
    block = {target}
    block(torch.randn(1, 16, 64), *[getattr(layer, n) for n in {names!r}], 1, 16, 4, 16, 64, 1e-5)
    seconds = time.perf_counter() - start
    compiled = gpt2.block.compiled is not None
    print(seconds, children() - cpu, compiled)
"""

SHARED_ONLY = """
    from ppy_compile.cache import Cache
    from ppy_compile.shared import ensure_all_shared
    ensure_all_shared(Cache.open(), with_pch=True)
    print("done")
"""

# Prints: wall and compiler CPU seconds of one build of the file, and how many regions ppy modelled.
REBUILD = """
    import resource, time
    import torch
    from ppy_compile import pipeline, plan
    modelled = []
    original = plan.model_all
    plan.model_all = lambda *a: modelled.append(1) or original(*a)
    def children():
        used = resource.getrusage(resource.RUSAGE_CHILDREN)
        return used.ru_utime + used.ru_stime
    text = open({path!r}, encoding="utf-8").read()
    start, cpu = time.perf_counter(), children()
    built = pipeline.build_module({path!r}, text)
    seconds, compiler = time.perf_counter() - start, children() - cpu
    assert len(built.functions) == {count}, built.fallbacks
    import importlib.util
    spec = importlib.util.spec_from_file_location("layers_bench", {path!r})
    module = importlib.util.module_from_spec(spec); spec.loader.exec_module(module)
    x, w, b = torch.randn(4, 8, 64), torch.randn(64), torch.randn(64)
    for key, function in built.functions.items():
        region = getattr(module, key.split(":")[0])
        args = (x, w, b, 64, 1e-5)
        assert torch.allclose(function(*args), region.python(*args), rtol=1.3e-6, atol=1e-5), key
    print(seconds, compiler, len(modelled))
"""

REGIONS = 14
EDITED = 7  # the region an edit changes: one in the middle of the file


def layers_source(scale_of_edited: float = 1.0, lines_above: int = 0, comment: str = "the layer's scale") -> str:
    head = "import ppy\nimport torch\nimport torch.nn.functional as F\n" + "# added\n" * lines_above
    regions = []
    for index in range(REGIONS):
        scale = scale_of_edited if index == EDITED else 1.0 + index / 10
        regions.append(textwrap.dedent(f"""

            @ppy.opt(3)
            def layer_{index}(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, width: int, eps: float) -> torch.Tensor:
                h = F.layer_norm(x, (width,), w, b, eps)
                g = F.gelu(h * {scale!r}, approximate="tanh")  # {comment}
                return x + torch.softmax(g, dim=-1) * torch.sigmoid(h - {index})
            """))
    return head + "".join(regions)


def _measured(code: str, env: dict[str, str]) -> list[str]:
    """What the fresh process printed last, split; build progress kept quiet."""
    return _python(code, {"PPY_QUIET": "1", **env}).split()


def first_result(env: dict[str, str], target: str = "gpt2.block") -> tuple[float, float, bool]:
    seconds, compiler, compiled = _measured(FIRST_RESULT.format(path=str(EXAMPLE), names=list(WEIGHTS), target=target),
                                            env)
    return float(seconds), float(compiler), compiled == "True"


def rebuild(path: Path, env: dict[str, str]) -> tuple[float, float, int]:
    seconds, compiler, modelled = _measured(REBUILD.format(path=str(path), count=REGIONS), env)
    return float(seconds), float(compiler), int(modelled)


def rows(args: argparse.Namespace) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []

    def row(what: str, seconds: float, compiler: float | None, note: str = "") -> None:
        out.append({"what": what, "seconds": round(seconds, 2),
                    "compiler_cpu_s": None if compiler is None else round(compiler, 1), "note": note})
        print(f"{seconds:7.2f} s  {what} {note}", flush=True)

    with tempfile.TemporaryDirectory() as empty:
        seconds, _, compiled = first_result({"PPY_CACHE_DIR": empty, "PPY_BUILD": "background"})
        row("ppy, empty cache: first result (the Python body, while the regions build in the background)", seconds,
            None, "compiled" if compiled else "Python body")
    with tempfile.TemporaryDirectory() as empty:
        seconds, compiler, compiled = first_result({"PPY_CACHE_DIR": empty, "PPY_BUILD": "wait"})
        assert compiled, "PPY_BUILD=wait gave a first result that was not compiled"
        row("ppy, empty cache: first compiled result (the bridge and the module at once; torch's header after)",
            seconds, compiler)
        _measured(SHARED_ONLY, {"PPY_CACHE_DIR": empty})
        seconds, compiler, compiled = first_result({"PPY_CACHE_DIR": empty, "PPY_BUILD": "wait"})
        row("ppy, warm cache: first result", seconds, compiler, "compiled" if compiled else "Python body")
    with tempfile.TemporaryDirectory() as empty:
        _measured(SHARED_ONLY, {"PPY_CACHE_DIR": empty})
        seconds, compiler, compiled = first_result({"PPY_CACHE_DIR": empty, "PPY_BUILD": "wait"})
        assert compiled
        row("ppy, once-per-torch builds done: first compiled result (the module alone)", seconds, compiler)
    if not args.skip_compile:
        with tempfile.TemporaryDirectory() as inductor:
            env = {"TORCHINDUCTOR_CACHE_DIR": inductor, "TRITON_CACHE_DIR": inductor, "TORCHINDUCTOR_COMPILE_THREADS": "1"}
            seconds, compiler, _ = first_result(env, "torch.compile(gpt2.block.python)")
            row("torch.compile: first call, its cache empty", seconds, compiler)
            seconds, compiler, _ = first_result(env, "torch.compile(gpt2.block.python)")
            row("torch.compile: first call, its cache full", seconds, compiler)
    with tempfile.TemporaryDirectory() as folder:
        env = {"PPY_CACHE_DIR": str(Path(folder) / "cache")}
        _measured(SHARED_ONLY, env)
        path = Path(folder) / "layers.py"
        path.write_text(layers_source())
        seconds, compiler, _ = rebuild(path, env)
        row(f"{REGIONS}-region file (-O3): cold build (once-per-torch builds done)", seconds, compiler)
        edits = []
        for scale in (2.5, 3.5, 4.5):  # three edits, each a region no module holds yet: the median
            path.write_text(layers_source(scale_of_edited=scale))
            edits.append(rebuild(path, env))
        seconds, compiler, _ = sorted(edits)[1]
        row(f"{REGIONS}-region file: rebuild after editing one region (median of 3 edits)", seconds, compiler)
        path.write_text(layers_source(scale_of_edited=4.5, lines_above=2))
        seconds, compiler, modelled = rebuild(path, env)
        assert compiler < 0.5, f"moving the regions compiled something ({compiler:.1f} s of compiler time)"
        row(f"{REGIONS}-region file: rebuild after adding lines above every region", seconds, compiler,
            "nothing compiled")
        path.write_text(layers_source(scale_of_edited=4.5, lines_above=2, comment="reworded, at some length"))
        seconds, compiler, modelled = rebuild(path, env)
        assert modelled == 0 and compiler < 0.5, "rewording a comment modelled or compiled again"
        row(f"{REGIONS}-region file: rebuild after rewording a comment", seconds, compiler,
            "a cache hit: nothing modelled")
    return out


def markdown(report: dict[str, Any]) -> str:
    intro = (f"`{report['command']}` on {report['machine']}, torch {report['torch']}, Python {report['python']}, "
             f"{report['date']}; load average {report['load'][0]:.1f} before and {report['load'][1]:.1f} after (other "
             "work shares this machine). Each row is a fresh process, timed from just after `import torch`; compiler "
             "CPU is the compilers' user and system time.")
    shown = [[r["what"], r["note"], f"{r['seconds']:.2f}",
              "" if r["compiler_cpu_s"] is None else f"{r['compiler_cpu_s']:.1f}"] for r in report["rows"]]
    return table(intro, ["", "", "seconds", "compiler CPU s"], shown, numeric_from=2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--skip-compile", action="store_true", help="leave torch.compile out")
    parser.add_argument("--update-readme", action="store_true", help="refresh the table in README.md")
    args = parser.parse_args()
    import torch

    load_before = os.getloadavg()[0]
    measured = rows(args)
    report = {"command": command(), "machine": cpu(), "torch": torch.__version__, "python": platform.python_version(),
              "date": today(), "load": [load_before, os.getloadavg()[0]], "rows": measured}
    publish("start_speed", "start-speed", report, markdown(report), args.update_readme)


if __name__ == "__main__":
    main()
