"""The seed document's comparison: GPT-2 with one ppy region per block, against eager and torch.compile.

    python bench/gpt2_compare.py [--paths eager,compile,ppy,ppy+compile] [--rounds 3] [--update-readme]

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
--update-readme refreshes it there).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from publish import cpu, publish, table, today

ROOT = Path(__file__).resolve().parents[1]
WORKER = ROOT / "bench" / "gpt2_worker.py"

CPU = {"device": "cpu", "dtype": "float32", "layers": 6, "heads": 12, "vocab": 8192,
       "forward": [[1, 32], [1, 128], [1, 512], [4, 256]], "decode": [128, 32], "train": [2, 128], "rounds": 3}
CUDA = {"device": "cuda", "dtype": "bfloat16", "layers": 48, "heads": 25, "vocab": 50257,
        "forward": [[1, 32], [1, 128], [1, 512], [8, 512]], "decode": [128, 128], "train": [4, 512], "rounds": 10}


def worker(path: str, spec: dict[str, Any], env: dict[str, str], first_call_only: bool = False) -> dict[str, Any]:
    command = [sys.executable, str(WORKER), path, json.dumps(spec)] + (["--first-call-only"] if first_call_only else [])
    result = subprocess.run(command, capture_output=True, text=True, env={**os.environ, **env, "PPY_QUIET": "1"}, cwd=ROOT)
    if result.returncode != 0:
        raise SystemExit(f"gpt2_compare: the {path} path failed:\n{result.stderr[-4000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def machine(spec: dict[str, Any]) -> str:
    import torch

    if spec["device"] == "cuda":
        return f"{torch.cuda.get_device_name()} (CUDA {torch.version.cuda})"
    return cpu()


def cells(report: dict[str, Any]) -> list[list[str]]:
    """The table's rows, for the terminal and the README alike."""
    results, paths = report["results"], report["paths"]
    rows = [[row, *(f"{results[p]['rows'][row]:.2f}" for p in paths)] for row in report["rows"]]
    rows.append(["cold first forward (s)", *(f"{results[p]['cold_s']:.1f}" for p in paths)])
    rows.append(["warm first forward (s)", *(f"{results[p]['warm_s']:.2f}" for p in paths)])
    return rows


def markdown(report: dict[str, Any]) -> str:
    spec = report["spec"]
    intro = (
        f"Milliseconds per pass of the whole model (best of {spec['rounds']}+ passes in each of "
        f"{report['repeats']} processes per path, taking turns), {spec['layers']} layers, "
        f"{spec['heads']} heads, width {spec['heads'] * 64}, {spec['dtype']}, on {report['machine']}; "
        f"torch {report['torch']}, Python {report['python']}, {report['date']}."
    )
    verdict = "All paths print the same aggregates on every row: " + ("yes." if report["agree"] else "**NO**.")
    return table(intro, ["", *report["paths"]], cells(report), numeric_from=1) + "\n" + verdict + "\n"


def disagree(results: dict[str, Any], paths: list[str], rows: list[str]) -> list[str]:
    """Each row whose answer differs between the paths, or that a path timed without recording an answer."""
    problems = []
    for row in rows:
        answers = {p: results[p]["answers"].get(row) for p in paths}
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
    parser.add_argument("--update-readme", action="store_true", help="refresh the table in README.md")
    args = parser.parse_args()

    import torch
    from rich.console import Console
    from rich.table import Table

    spec = dict(CUDA if torch.cuda.is_available() else CPU)
    if args.rounds:
        spec["rounds"] = args.rounds
    default_paths = (["eager", "compile"] + (["reduce-overhead"] if spec["device"] == "cuda" else [])
                     + ["ppy", "ppy+compile"])
    paths = args.paths.split(",") if args.paths else default_paths
    console = Console(stderr=True)
    results: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as scratch:
        envs = {}
        for path in paths:
            caches = Path(scratch) / path
            envs[path] = {"PPY_CACHE_DIR": str(caches / "ppy"), "TORCHINDUCTOR_CACHE_DIR": str(caches / "inductor"),
                          "TRITON_CACHE_DIR": str(caches / "triton")}
            with console.status(f"{path}: cold first call"):
                cold = worker(path, spec, envs[path], first_call_only=True)
            results[path] = {"rows": {}, "answers": {}, "cold_s": cold["first_call_s"], "warm_s": float("inf")}
        # Warm runs take turns, `--repeats` times, and each row keeps its best: on a shared
        # machine a path that ran alone in a busy spell would otherwise look slow.
        for repeat in range(args.repeats):
            for path in paths:
                with console.status(f"{path}: warm start and every row ({repeat + 1}/{args.repeats})"):
                    warm = worker(path, spec, envs[path])
                entry = results[path]
                entry["answers"] = warm["answers"]
                entry["warm_s"] = min(entry["warm_s"], warm["first_call_s"])
                for row, value in warm["rows"].items():
                    entry["rows"][row] = min(entry["rows"].get(row, float("inf")), value)
        console.print("done")
    rows = list(results[paths[0]]["rows"])
    disagreements = disagree(results, paths, rows)
    report = {
        "spec": spec, "paths": paths, "rows": rows, "results": results, "agree": not disagreements, "repeats": args.repeats,
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

    publish(f"gpt2_compare-{spec['device']}", f"gpt2-{spec['device']}", report, markdown(report), args.update_readme)
    if disagreements:
        print("gpt2_compare: THE PATHS DISAGREE:\n  " + "\n  ".join(disagreements), file=sys.stderr)
        raise SystemExit(1)
    print("All paths print the same aggregates on every row.")


if __name__ == "__main__":
    main()
