"""The seed document's comparison: GPT-2 with one ppy region per block, against eager and torch.compile.

    python bench/gpt2_compare.py [--paths eager,compile,ppy,ppy+compile] [--rounds 3] [--update-readme]
                                 [--shape auto|cpu|cuda|tiny] [--budget SECONDS] [--results DIR]

Each path runs in processes of its own (bench/gpt2_worker.py), all in this one
invocation: first a process that only times its first forward from empty
caches (cold: ppy builds its module, torch.compile compiles its graph), then
processes with the caches warm, the paths taking turns, that time their first
forward again (warm start) and then every row. ppy+compile is torch.compile of
the model whose blocks are regions (the glue compiled, each region one
operator): its cold start builds the regions and compiles the graph. On CUDA:
GPT-2 XL in bfloat16, the seed's rows, and reduce-overhead too. On CPU: the six-layer GPT-2-small stack in float32, with
smaller rows where the seed's would take minutes here.

Every path must print the same answer on every row: the three aggregates
(mean, absmean, meansq) of the logits to three decimals, and for the training
step also the size of the gradients it computed. The bench says so, and exits
1 if they differ or a row has no answer. Writes
bench/results/gpt2_compare-<device>.json and .md (the README embeds the .md;
--update-readme refreshes it there), or --results DIR's.

--budget SECONDS bounds the whole bench (bench/gpu_run.py has minutes of a
lent GPU): each path then runs its processes in turn rather than taking turns
with the others, and a process is stopped when its path's share is spent. A
path keeps the rows it finished; the table shows the others as not reached
and says why, and the bench exits 1. A path that fails does not stop the
others either. --shape tiny is a two-layer model on the CPU with torch.compile's
"eager" backend: the dry run's, to show the paths run, not to time them.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from processes import dying_with_this_process
from publish import RESULTS, cpu, publish, table, today

ROOT = Path(__file__).resolve().parents[1]
WORKER = ROOT / "bench" / "gpt2_worker.py"

CPU = {"device": "cpu", "dtype": "float32", "layers": 6, "heads": 12, "vocab": 8192,
       "forward": [[1, 32], [1, 128], [1, 512], [4, 256]], "decode": [128, 32], "train": [2, 128], "rounds": 3}
CUDA = {"device": "cuda", "dtype": "bfloat16", "layers": 48, "heads": 25, "vocab": 50257,
        "forward": [[1, 32], [1, 128], [1, 512], [8, 512]], "decode": [128, 128], "train": [4, 512], "rounds": 10}
# The dry run's: every row and path in seconds on a CPU. Its numbers time nothing worth a table.
TINY = {"device": "cpu", "dtype": "float32", "layers": 2, "heads": 2, "vocab": 512,
        "forward": [[1, 8], [2, 16]], "decode": [8, 4], "train": [1, 8], "rounds": 1, "backend": "eager"}
SHAPES = {"cpu": CPU, "cuda": CUDA, "tiny": TINY}
# Under --budget, the time kept back for each path still to run when a path's process is given its limit,
# and the order the paths run in.
RESERVE_S = 30.0
MIN_CALL_S = 5.0  # less than this is too little to start a process that imports torch
PRIORITY = ["eager", "ppy", "compile", "reduce-overhead", "ppy+compile"]


class Stopped(Exception):
    """A worker that failed or ran past its limit, with the rows it reported before (None if none)."""

    def __init__(self, message: str, partial: dict[str, Any] | None):
        super().__init__(message)
        self.partial = partial


def last_report(stdout: str) -> dict[str, Any] | None:
    """The newest result line the worker printed (it prints one after every row)."""
    for line in reversed(stdout.strip().splitlines()):
        try:
            found = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(found, dict) and "path" in found:
            return found
    return None


def worker(path: str, spec: dict[str, Any], env: dict[str, str], first_call_only: bool = False,
           timeout: float | None = None) -> dict[str, Any]:
    command = [sys.executable, str(WORKER), path, json.dumps(spec)] + (["--first-call-only"] if first_call_only else [])
    # A session of its own, so that a stopped worker takes its compile workers (Inductor's pool) with it.
    process = subprocess.Popen(dying_with_this_process(command), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, cwd=ROOT,
                               env={**os.environ, **env, "PPY_QUIET": "1"}, start_new_session=True)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        raise Stopped(f"stopped at its limit of {timeout:.0f} s", last_report(stdout)) from None
    finally:
        if process.poll() is None:  # interrupted: leave nothing running
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    found = last_report(stdout)
    if process.returncode != 0 or found is None:
        tail = stderr.strip().splitlines()[-1] if stderr.strip() else f"exit status {process.returncode}"
        print(f"gpt2_compare: the {path} path failed:\n{stderr[-4000:]}", file=sys.stderr)
        raise Stopped(f"failed: {tail[:300]}", found)
    return found


def one_time_builds(source: Path) -> list[str]:
    """The keys of the once-per-torch builds in the ppy cache ``source``, built there first if missing."""
    from ppy_compile.build import _ensure_bridge, _ensure_pch, use_pch
    from ppy_compile.cache import Cache

    cache = Cache.open(source)
    return [_ensure_bridge(cache)] + ([_ensure_pch(cache)] if use_pch() else [])


def seeded(root: Path, source: Path, keys: list[str]) -> None:
    """A new ppy cache at ``root`` holding only ``source``'s builds ``keys`` (hard links: nothing is copied)."""
    from ppy_compile.cache import Cache

    cache = Cache.open(root)
    for key in keys:
        shutil.copytree(source / "builds" / key, cache.build_dir(key), copy_function=os.link)


def machine(spec: dict[str, Any]) -> str:
    import torch

    if spec["device"] == "cuda":
        return f"{torch.cuda.get_device_name()} (CUDA {torch.version.cuda})"
    return cpu()


def cells(report: dict[str, Any]) -> list[list[str]]:
    """The table's rows, for the terminal and the README alike ("-": a row that path did not reach)."""
    results, paths = report["results"], report["paths"]

    def number(value: float | None, places: int) -> str:
        return "-" if value is None or value == float("inf") else f"{value:.{places}f}"

    rows = [[row, *(number(results[p]["rows"].get(row), 2) for p in paths)] for row in report["rows"]]
    rows.append(["cold first forward (s)", *(number(results[p]["cold_s"], 1) for p in paths)])
    rows.append(["warm first forward (s)", *(number(results[p]["warm_s"], 2) for p in paths)])
    return rows


def all_rows(spec: dict[str, Any]) -> list[str]:
    """Every row the worker times, in its order (a path that stopped early has only the first few)."""
    return ([f"forward b{b} s{s}" for b, s in spec["forward"]] + [f"decode {spec['decode'][1]} tokens"]
            + [f"training step b{spec['train'][0]} s{spec['train'][1]}"])


def markdown(report: dict[str, Any]) -> str:
    spec = report["spec"]
    order = ("taking turns" if report.get("budget_s") is None
             else f"one path after another within a budget of {report['budget_s']:.0f} s")
    intro = (
        f"Milliseconds per pass of the whole model (best of {spec['rounds']}+ passes in each of "
        f"{report['repeats']} processes per path, {order}), {spec['layers']} layers, "
        f"{spec['heads']} heads, width {spec['heads'] * 64}, {spec['dtype']}, on {report['machine']}; "
        f"torch {report['torch']}, Python {report['python']}, {report['date']}."
    )
    stopped = report.get("stopped", {})
    if stopped:
        verdict = ("The paths print the same aggregates on every row they all reached: "
                   + ("yes." if report["agree"] else "**NO**.") + " Not finished (-): "
                   + "; ".join(f"{path}, {why}" for path, why in stopped.items()) + ".")
    else:
        verdict = "All paths print the same aggregates on every row: " + ("yes." if report["agree"] else "**NO**.")
    return table(intro, ["", *report["paths"]], cells(report), numeric_from=1) + "\n" + verdict + "\n"


def disagree(results: dict[str, Any], paths: list[str], rows: list[str], stopped: dict[str, str]) -> list[str]:
    """Each row whose answer differs between the paths, or that a path timed without recording an answer.
    A path that stopped (``stopped``, said apart) is held only to the rows it reached."""
    problems = []
    for row in rows:
        answers = {p: results[p]["answers"].get(row) for p in paths
                   if p not in stopped or row in results[p]["rows"]}
        if None in answers.values():
            problems.append(f"{row}: no answer recorded by " + ", ".join(p for p, a in answers.items() if a is None))
        elif len(set(answers.values())) > 1:
            problems.append(f"{row}: " + ", ".join(f"{p} {a}" for p, a in answers.items()))
    return problems


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--paths", default=None,
                        help="comma-separated subset of eager,compile,reduce-overhead,ppy,ppy+compile")
    parser.add_argument("--rounds", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=3, help="warm runs per path, taking turns (default 3)")
    parser.add_argument("--shape", choices=["auto", *SHAPES], default="auto",
                        help="auto (default): cuda where torch sees a GPU, else cpu; tiny: the dry run's")
    parser.add_argument("--budget", type=float, default=None, metavar="SECONDS",
                        help="stop each path's processes when its share of this much wall time is spent")
    parser.add_argument("--results", type=Path, default=RESULTS, help="where the JSON and Markdown go")
    parser.add_argument("--seed-cache", type=Path, default=None, metavar="DIR",
                        help="start each path's ppy cache with the one-time builds (bridge, precompiled header) of "
                             "the ppy cache DIR, built there if missing: the cold row then times the module alone")
    parser.add_argument("--update-readme", action="store_true", help="refresh the table in README.md")
    args = parser.parse_args()
    deadline = time.monotonic() + args.budget if args.budget is not None else None

    import torch
    from rich.console import Console
    from rich.table import Table

    shape = args.shape if args.shape != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
    if shape == "cuda" and not torch.cuda.is_available():
        raise SystemExit("gpt2_compare: --shape cuda, but torch sees no CUDA device")
    if args.update_readme and shape == "tiny":
        raise SystemExit("gpt2_compare: the tiny shape times nothing the README should show")
    spec = dict(SHAPES[shape])
    if args.rounds:
        spec["rounds"] = args.rounds
    # reduce-overhead is CUDA graphs: on the CPU only the dry run takes it, to show that its code runs.
    default_paths = (["eager", "compile"] + (["reduce-overhead"] if spec["device"] == "cuda" or shape == "tiny" else [])
                     + ["ppy", "ppy+compile"])
    paths = args.paths.split(",") if args.paths else default_paths
    console = Console(stderr=True)
    results: dict[str, Any] = {path: {"rows": {}, "answers": {}, "cold_s": None, "warm_s": float("inf")}
                               for path in paths}
    stopped: dict[str, str] = {}
    # Without a budget the warm runs take turns, `--repeats` times, and each row keeps its best: on a
    # shared machine a path that ran alone in a busy spell would otherwise look slow. With one, each path
    # runs all its processes in turn, so a path that overruns its share leaves the next ones theirs.
    # In that case the seed's own columns come first, the cheapest first: what a short budget cuts is the rest.
    order = sorted(paths, key=lambda p: PRIORITY.index(p) if p in PRIORITY else len(PRIORITY))
    calls = ([(path, "cold") for path in paths] + [(path, "warm") for _ in range(args.repeats) for path in paths]
             if deadline is None else [(path, kind) for path in order for kind in ["cold"] + ["warm"] * args.repeats])
    seeds = one_time_builds(args.seed_cache) if args.seed_cache is not None and any(
        p.startswith("ppy") for p in paths) else []
    with tempfile.TemporaryDirectory() as scratch:
        for index, (path, kind) in enumerate(calls):
            if path in stopped:
                continue
            caches = Path(scratch) / path
            if kind == "cold" and seeds:
                seeded(caches / "ppy", args.seed_cache, seeds)
            # PPY_BUILD=wait: the cold row is the first compiled forward, as torch.compile's is (by default a
            # cache miss runs the Python body while the module builds in the background).
            env = {"PPY_CACHE_DIR": str(caches / "ppy"), "TORCHINDUCTOR_CACHE_DIR": str(caches / "inductor"),
                   "TRITON_CACHE_DIR": str(caches / "triton"), "PPY_BUILD": "wait"}
            timeout = None
            if deadline is not None:
                later = len({p for p, _ in calls[index + 1:]} - {path} - set(stopped))
                timeout = deadline - time.monotonic() - RESERVE_S * later
                if timeout < MIN_CALL_S:
                    stopped[path] = "no time left in the budget"
                    continue
            entry = results[path]
            try:
                with console.status(f"{path}: " + ("cold first call" if kind == "cold" else "warm start and every row")):
                    found: dict[str, Any] | None = worker(path, spec, env, first_call_only=kind == "cold",
                                                          timeout=timeout)
            except KeyboardInterrupt:  # the GPU run's limit for this step: the table of what was reached still counts
                for other in paths:
                    if other not in stopped and (other == path or not results[other]["rows"]):
                        stopped[other] = "interrupted"
                break
            except Stopped as stop:
                found = stop.partial
                reached = [row for row in all_rows(spec) if row in (found or {}).get("rows", {})]
                stopped[path] = (f"{kind} process {stop}" + (f" after {reached[-1]}" if reached else "")
                                 + (" (cold start not reached)" if kind == "cold" and found is None else ""))
                console.print(f"{path}: {stopped[path]}")
            if found is None:
                continue
            if kind == "cold":
                entry["cold_s"] = found["first_call_s"]
                continue
            entry["answers"].update(found["answers"])
            entry["warm_s"] = min(entry["warm_s"], found["first_call_s"])
            for row, value in found["rows"].items():
                entry["rows"][row] = min(entry["rows"].get(row, float("inf")), value)
        console.print("done")
    rows = [row for row in all_rows(spec) if any(row in results[p]["rows"] for p in paths)]
    disagreements = disagree(results, paths, rows, stopped)
    for entry in results.values():
        if entry["warm_s"] == float("inf"):
            entry["warm_s"] = None  # JSON has no infinity
    report = {
        "spec": spec, "paths": paths, "rows": rows, "results": results, "agree": not disagreements, "repeats": args.repeats,
        "stopped": stopped, "budget_s": args.budget,
        "machine": machine(spec), "torch": torch.__version__, "python": platform.python_version(),
        "date": today(),
    }
    terminal = Table(title=f"GPT-2 on {report['machine']} ({spec['dtype']}), ms per pass")
    terminal.add_column("row")
    for path in paths:
        terminal.add_column(path, justify="right")
    for row_cells in cells(report):
        terminal.add_row(*row_cells)
    Console().print(terminal)
    for row in rows:
        print(f"{row}: " + " | ".join(f"{p}: {results[p]['answers'].get(row, '(none)')}" for p in paths))

    stem = f"gpt2_compare-{spec['device']}" if shape != "tiny" else "gpt2_compare-tiny"
    publish(stem, f"gpt2-{spec['device']}", report, markdown(report), args.update_readme, args.results)
    if disagreements:
        print("gpt2_compare: THE PATHS DISAGREE:\n  " + "\n  ".join(disagreements), file=sys.stderr)
        raise SystemExit(1)
    if stopped:
        print("gpt2_compare: not every path finished:\n  "
              + "\n  ".join(f"{path}: {why}" for path, why in stopped.items()), file=sys.stderr)
        raise SystemExit(1)
    print("All paths print the same aggregates on every row.")


if __name__ == "__main__":
    main()
