"""How fast ppy-check is: its start on one small file, torch's own installed source tree, a generated tree
full of regions, and a tree of model files that call torch's Python-level functions (F.layer_norm, F.softmax...).

    python bench/check_speed.py [--files N] [--model-files N] [--rounds R] [--update-readme]

Each row is a fresh process (interpreter start included), best of R rounds,
with one worker per core; `python -c pass` is timed in the same run, as the
yardstick for start-up. The package's bytecode is compiled first, as an
installed package has it (a shell with PYTHONDONTWRITEBYTECODE would otherwise
time the compiling of every module). Each file is checked anew
(PPY_CHECK_NO_CACHE) except in the two rows of results kept from a run before
(ppy_check/result_cache.py), where the first round fills a cache of the
bench's own and the best round answers from it. Targets, judged both ways:
one small region file within 4x `python -c pass`; at least 50,000 lines per
second on the model files; and the torch tree in under 2 s wall. Writes
bench/results/check_speed.json and .md; --update-readme puts the table in
README.md between its check-speed markers.
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

from publish import ROOT, command, cpu, publish, table, today

REGION = textwrap.dedent(
    '''
    @ppy.opt(3)
    def block_{i}(
        x: torch.Tensor, ln_w: torch.Tensor, ln_b: torch.Tensor, q_w: torch.Tensor, k_w: torch.Tensor,
        v_w: torch.Tensor, o_w: torch.Tensor, fc_w: torch.Tensor, proj_w: torch.Tensor,
        batch: int, length: int, heads: int, head_dim: int, width: int, eps: float,
    ) -> torch.Tensor:
        """Region {i}."""
        h = torch.layer_norm(x, (width,), ln_w, ln_b, eps)
        q = F.linear(h, q_w).reshape((batch, length, heads, head_dim)).transpose(1, 2)
        k = F.linear(h, k_w).reshape((batch, length, heads, head_dim)).transpose(1, 2)
        v = F.linear(h, v_w).reshape((batch, length, heads, head_dim)).transpose(1, 2)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        merged = a.transpose(1, 2).reshape((batch, length, width))
        attended = torch.add(x, F.linear(merged, o_w))
        n = torch.layer_norm(attended, (width,), ln_w, ln_b, eps)
        f = F.gelu(F.linear(n, fc_w), approximate="tanh")
        return torch.add(attended, F.linear(f, proj_w))
    '''
)


# A model file's layer as people write one: torch's Python-level functions, which ppy inlines from their source.
MODEL = textwrap.dedent(
    '''
    @ppy.opt(3)
    def block_{i}(
        x: Tensor, ln_w: Tensor, ln_b: Tensor, qkv_w: Tensor, qkv_b: Tensor, o_w: Tensor,
        fc_w: Tensor, proj_w: Tensor, heads: int, p: float, training: bool,
    ) -> Tensor:
        """Block {i}: a transformer layer."""
        batch, length, width = x.shape
        h = F.layer_norm(x, (width,), ln_w, ln_b)
        q, k, v = F.linear(h, qkv_w, qkv_b).split(width, dim=2)
        q = q.view(batch, length, heads, width // heads).transpose(1, 2)
        k = k.view(batch, length, heads, width // heads).transpose(1, 2)
        v = v.view(batch, length, heads, width // heads).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-2, -1)) / (width // heads) ** 0.5
        weights = F.dropout(F.softmax(scores, dim=-1), p, training)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        merged = (torch.matmul(weights, v) + a).transpose(1, 2).reshape(batch, length, width)
        x = x + F.dropout(F.linear(merged, o_w), p, training)
        n = F.layer_norm(x, (width,), ln_w, ln_b, 1e-5)
        f = F.gelu(F.linear(n, fc_w), approximate="tanh")
        return x + F.dropout(F.linear(f, proj_w), p, training)


    @ppy.opt(3)
    def head_{i}(x: Tensor, tokens: Tensor, table: Tensor, w: Tensor, targets: Tensor) -> tuple[Tensor, Tensor]:
        """Embedding, logits and loss {i}."""
        e = F.embedding(tokens, table)
        logits = F.linear(F.layer_norm(x + e, (x.shape[-1],)), w)
        probabilities = F.softmax(logits.float(), dim=-1)
        loss = F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=-1)
        return probabilities, loss
    '''
)
MODEL_HEADER = "import ppy\nimport torch\nimport torch.nn.functional as F\nfrom torch import Tensor\n"
SMALL = "import ppy\nimport torch\n\n\n@ppy.opt(3)\ndef f(x: torch.Tensor) -> torch.Tensor:\n    return torch.relu(x)\n"
START_FACTOR = 4  # one small file's check within this many times Python's own start
MODEL_LINES_PER_S = 50_000
TORCH_TREE_S = 2.0
NO_CACHE = "PPY_CHECK_NO_CACHE"


def generate_models(root: Path, files: int, layers_per_file: int) -> int:
    lines = 0
    for index in range(files):
        body = MODEL_HEADER + "".join(MODEL.format(i=index * layers_per_file + r) for r in range(layers_per_file))
        (root / f"model_{index}.py").write_text(body)
        lines += body.count("\n")
    return lines


def generate(root: Path, files: int, regions_per_file: int) -> int:
    lines = 0
    for index in range(files):
        body = "import ppy\nimport torch\nimport torch.nn.functional as F\n" + "".join(
            REGION.format(i=index * regions_per_file + r) for r in range(regions_per_file)
        )
        (root / f"module_{index}.py").write_text(body)
        lines += body.count("\n")
    return lines


def count_lines(root: Path) -> tuple[int, int]:
    files = lines = 0
    for path in root.rglob("*.py"):
        files += 1
        lines += path.read_bytes().count(b"\n")
    return files, lines


def best_of(command: list[str], rounds: int, env: dict[str, str] | None = None,
            ) -> tuple[float, subprocess.CompletedProcess[str]]:
    best, result = float("inf"), None
    for _ in range(rounds):
        start = time.perf_counter()
        # From a folder of no package's: `-m` puts the working folder first on the path, before PYTHONPATH.
        result = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tempfile.gettempdir())
        best = min(best, time.perf_counter() - start)
    assert result is not None
    return best, result


def checking(env: dict[str, str] | None, kept: Path | None = None) -> dict[str, str]:
    """``env`` (None: this checkout's) for ppy-check checking every file anew or, with ``kept``, keeping its
    results in that cache folder. By variable, not by flag: a baseline commit may not know --no-cache."""
    made = {**(env if env is not None else os.environ)}
    made.pop(NO_CACHE, None)
    if kept is None:
        made[NO_CACHE] = "1"
    else:
        made["PPY_CACHE_DIR"] = str(kept)
    return made


def best_wall(root: Path, rounds: int, env: dict[str, str] | None = None) -> tuple[float, str]:
    """The best wall time of ppy-check over ``root``, and its statistics (the findings per rule)."""
    wall, result = best_of([sys.executable, "-m", "ppy_check", "--no-config", "--exit-zero", "--statistics", str(root)],
                           rounds, env if env is not None else checking(None))
    if result.returncode not in (0, 1):
        raise SystemExit(f"ppy-check failed on {root}: {result.stderr.strip()}")
    return wall, result.stdout.strip()


def compile_package(folder: Path) -> None:
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(folder)], check=True, capture_output=True)


def baseline_env(ref: str, folder: Path) -> dict[str, str]:
    """An environment whose ``ppy_check`` is the one at git ``ref`` (extracted under ``folder``), to time it in the
    same run, under the same load, as this checkout's."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "ppy_check"], check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive.stdout, check=True)
    compile_package(folder / "ppy_check")
    return {**os.environ, "PYTHONPATH": str(folder)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=200, help="generated files (default 200)")
    parser.add_argument("--regions-per-file", type=int, default=25)
    parser.add_argument("--model-files", type=int, default=20, help="generated model files (default 20)")
    parser.add_argument("--layers-per-file", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--baseline", metavar="GIT_REF", help="also time ppy_check as of this commit, in the same run")
    parser.add_argument("--update-readme", action="store_true", help="refresh the table in README.md")
    args = parser.parse_args()
    if args.rounds < 2:
        parser.error("--rounds must be at least 2: the rows of kept results fill the cache in their first")

    import ppy_check

    compile_package(Path(ppy_check.__file__).parent)
    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "baseline").mkdir()
        base = baseline_env(args.baseline, Path(folder) / "baseline") if args.baseline else None
        rows, smalls, python_start, torch_wall, models, lines = measure(args, Path(folder), base)
    targets = []
    for how, small_wall, model_wall in (("checked anew", smalls[0], models[0]),
                                        ("results kept", smalls[1], models[1])):
        model_rate = lines / model_wall
        targets += [
            {"target": f"one small region file within {START_FACTOR}x `python -c pass` ({how})",
             "measured": f"{small_wall / python_start:.1f}x", "met": small_wall <= START_FACTOR * python_start},
            {"target": f"at least {MODEL_LINES_PER_S:,} lines/s on model files calling F.* ({how})",
             "measured": f"{model_rate:,.0f} lines/s", "met": model_rate >= MODEL_LINES_PER_S},
        ]
    if torch_wall is not None:
        targets.append({"target": f"torch's source tree in under {TORCH_TREE_S:g} s", "measured": f"{torch_wall:.2f} s",
                        "met": torch_wall < TORCH_TREE_S})
    report = {"command": command(), "machine": cpu(), "python": platform.python_version(), "date": today(),
              "load": load(), "baseline": args.baseline, "rows": rows, "targets": targets}
    print(f"ppy-check speed on {report['machine']}, Python {report['python']}, load average {report['load']}")
    print(f"{'tree':<48} {'files':>7} {'lines':>10} {'wall s':>8} {'lines/s':>11} {'baseline s':>11}")
    for row in rows:
        before = f"{row['baseline_s']:.2f}" if "baseline_s" in row else ""
        print(f"{row['tree']:<48} {row['files']:>7} {row['lines']:>10} {row['wall_s']:>8.2f} {rate(row):>11} {before:>11}")
    for target in targets:
        print(f"{target['target']}: {target['measured']} ({'met' if target['met'] else 'NOT met'})")
    publish("check_speed", "check-speed", report, markdown(report), args.update_readme)


def measure(args: argparse.Namespace, folder: Path, base: dict[str, str] | None,
            ) -> tuple[list[dict[str, Any]], tuple[float, float], float, float | None, tuple[float, float], int]:
    """Each tree's row (with the baseline's time beside it, when there is one), and the figures the targets need
    (the small file's and the model files' walls as (checked anew, results kept))."""
    rows: list[dict[str, Any]] = []

    def timed(row: dict[str, Any], run: Any) -> float:
        row["wall_s"] = run(None)
        if base is not None:
            row["baseline_s"] = run(base)
        rows.append(row)
        return float(row["wall_s"])

    python_start = timed({"tree": "`python -c pass` (Python's own start)", "files": 0, "lines": 0},
                         lambda env: best_of([sys.executable, "-c", "pass"], args.rounds * 3, env)[0])
    small = folder / "small.py"
    small.write_text(SMALL)
    small_command = [sys.executable, "-m", "ppy_check", "--no-config", str(small)]
    small_wall = timed({"tree": "one small region file", "files": 1, "lines": SMALL.count("\n")},
                       lambda env: best_of(small_command, args.rounds * 3, checking(env))[0])
    small_kept = timed({"tree": "the same, its result kept from a run before", "files": 1, "lines": SMALL.count("\n")},
                       lambda env: best_of(small_command, args.rounds * 3, checking(env, folder / "kept"))[0])
    try:
        import torch

        torch_root: Path | None = Path(torch.__file__).parent
    except ImportError:
        torch_root = None
    torch_wall = None
    if torch_root is not None:
        files, lines = count_lines(torch_root)
        torch_wall = timed({"tree": "torch's installed source (no regions)", "files": files, "lines": lines},
                           lambda env: best_wall(torch_root, args.rounds, checking(env))[0])
    generated = folder / "generated"
    generated.mkdir()
    lines = generate(generated, args.files, args.regions_per_file)
    timed({"tree": f"generated: {args.files * args.regions_per_file} regions", "files": args.files, "lines": lines},
          lambda env: best_wall(generated, args.rounds, checking(env))[0])
    models = folder / "models"
    models.mkdir()
    lines = generate_models(models, args.model_files, args.layers_per_file)
    findings = {}

    def model_run(env: dict[str, str] | None, kept: Path | None = None) -> float:
        wall, findings[("base" if env else "this", kept is not None)] = best_wall(models, args.rounds,
                                                                                  checking(env, kept))
        return wall

    regions = args.model_files * args.layers_per_file * 2
    model_wall = timed({"tree": f"model files calling F.*: {regions} regions", "files": args.model_files,
                        "lines": lines}, model_run)
    # The first of its rounds fills the cache; the best of them is a run that checked nothing again.
    model_kept = timed({"tree": "the same, their results kept from a run before", "files": args.model_files,
                        "lines": lines}, lambda env: model_run(env, folder / ("kept-base" if env else "kept")))
    if len(set(findings.values())) != 1:  # kept or checked anew, this checkout or the baseline: one answer
        raise SystemExit("the runs find otherwise on the model files:\n" +
                         "\n---\n".join(f"{who} (kept: {kept}):\n{text}" for (who, kept), text in findings.items()))
    return rows, (small_wall, small_kept), python_start, torch_wall, (model_wall, model_kept), lines


def load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def rate(row: dict[str, Any]) -> str:
    return f"{row['lines'] / row['wall_s']:,.0f}" if row["lines"] and row["files"] > 1 else ""


def markdown(report: dict[str, Any]) -> str:
    baseline = report.get("baseline")
    rows = [[row["tree"], str(row["files"] or ""), f"{row['lines']:,}" if row["lines"] else "", f"{row['wall_s']:.2f}",
             rate(row)] + ([f"{row['baseline_s']:.2f}"] if baseline else []) for row in report["rows"]]
    intro = (f"`{report['command']}` on {report['machine']}, Python {report['python']}; {report['date']}; "
             f"load average {report['load']} (other work shares this machine)"
             + (f"; the last column times `ppy_check` as of `{baseline}` in the same run" if baseline else "") + ":")
    header = ["tree", "files", "lines", "wall s", "lines/s"] + ([f"{baseline} s"] if baseline else [])
    text = table(intro, header, rows, numeric_from=1)
    verdicts = [f"- {t['target']}: {t['measured']}, **{'met' if t['met'] else 'not met'}**" for t in report["targets"]]
    return text + "\nTargets:\n\n" + "\n".join(verdicts) + "\n"


if __name__ == "__main__":
    main()
