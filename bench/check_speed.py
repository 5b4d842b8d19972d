"""How fast ppy-check is: its start on one small file, torch's own installed source tree, a generated tree
full of regions, and a tree of model files that call torch's Python-level functions (F.layer_norm, F.softmax...).

    python bench/check_speed.py [--files N] [--model-files N] [--rounds R] [--update-readme]

Each row is a fresh process (interpreter start included), best of R rounds,
with one worker per core; `python -c pass` is timed in the same run, as the
yardstick for start-up. The package's bytecode is compiled first, as an
installed package has it (a shell with PYTHONDONTWRITEBYTECODE would otherwise
time the compiling of every module). Targets: one small region file within 4x
`python -c pass`; the torch tree in under 2 s wall; at least 50,000 lines per
second on the model files. Writes bench/results/check_speed.json and .md;
--update-readme puts the table in README.md between its check-speed markers.
"""

from __future__ import annotations

import argparse
import platform
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

from publish import command, cpu, publish, table, today

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


def best_of(command: list[str], rounds: int) -> tuple[float, subprocess.CompletedProcess[str]]:
    best, result = float("inf"), None
    for _ in range(rounds):
        start = time.perf_counter()
        result = subprocess.run(command, capture_output=True, text=True)
        best = min(best, time.perf_counter() - start)
    assert result is not None
    return best, result


def best_wall(root: Path, rounds: int) -> tuple[float, str]:
    """The best wall time of ppy-check over ``root``, and its statistics (the findings per rule)."""
    wall, result = best_of([sys.executable, "-m", "ppy_check", "--no-config", "--exit-zero", "--statistics", str(root)],
                           rounds)
    if result.returncode not in (0, 1):
        raise SystemExit(f"ppy-check failed on {root}: {result.stderr.strip()}")
    return wall, result.stdout.strip()


def compile_package() -> None:
    import ppy_check

    subprocess.run([sys.executable, "-m", "compileall", "-q", str(Path(ppy_check.__file__).parent)], check=True,
                   capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=200, help="generated files (default 200)")
    parser.add_argument("--regions-per-file", type=int, default=25)
    parser.add_argument("--model-files", type=int, default=20, help="generated model files (default 20)")
    parser.add_argument("--layers-per-file", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--update-readme", action="store_true", help="refresh the table in README.md")
    args = parser.parse_args()

    compile_package()
    rows: list[dict[str, Any]] = []
    python_start, _ = best_of([sys.executable, "-c", "pass"], args.rounds * 3)
    rows.append({"tree": "`python -c pass` (Python's own start)", "files": 0, "lines": 0, "wall_s": python_start})
    with tempfile.TemporaryDirectory() as folder:
        small = Path(folder) / "small.py"
        small.write_text(SMALL)
        small_wall, _ = best_of([sys.executable, "-m", "ppy_check", "--no-config", str(small)], args.rounds * 3)
        rows.append({"tree": "one small region file", "files": 1, "lines": SMALL.count("\n"), "wall_s": small_wall})
    try:
        import torch

        torch_root = Path(torch.__file__).parent
    except ImportError:
        torch_root = None
    torch_wall = None
    if torch_root is not None:
        files, lines = count_lines(torch_root)
        torch_wall, _ = best_wall(torch_root, args.rounds)
        rows.append({"tree": "torch's installed source (no regions)", "files": files, "lines": lines,
                     "wall_s": torch_wall})
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        lines = generate(root, args.files, args.regions_per_file)
        wall, _ = best_wall(root, args.rounds)
        rows.append({"tree": f"generated: {args.files * args.regions_per_file} regions", "files": args.files, "lines": lines,
                     "wall_s": wall})
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        lines = generate_models(root, args.model_files, args.layers_per_file)
        model_wall, findings = best_wall(root, args.rounds)
        rows.append({"tree": f"model files calling F.*: {args.model_files * args.layers_per_file * 2} regions",
                     "files": args.model_files, "lines": lines, "wall_s": model_wall, "findings": findings})
    model_rate = lines / model_wall
    targets = [
        {"target": f"one small region file within {START_FACTOR}x `python -c pass`",
         "measured": f"{small_wall / python_start:.1f}x", "met": small_wall <= START_FACTOR * python_start},
        {"target": f"at least {MODEL_LINES_PER_S:,} lines/s on model files calling F.*",
         "measured": f"{model_rate:,.0f} lines/s", "met": model_rate >= MODEL_LINES_PER_S},
    ]
    if torch_wall is not None:
        targets.append({"target": f"torch's source tree in under {TORCH_TREE_S:g} s", "measured": f"{torch_wall:.2f} s",
                        "met": torch_wall < TORCH_TREE_S})
    report = {"command": command(), "machine": cpu(), "python": platform.python_version(), "date": today(),
              "load": load(), "rows": rows, "targets": targets}
    print(f"ppy-check speed on {report['machine']}, Python {report['python']}, load average {report['load']}")
    print(f"{'tree':<48} {'files':>7} {'lines':>10} {'wall s':>8} {'lines/s':>11}")
    for row in rows:
        print(f"{row['tree']:<48} {row['files']:>7} {row['lines']:>10} {row['wall_s']:>8.2f} {rate(row):>11}")
    for target in targets:
        print(f"{target['target']}: {target['measured']} ({'met' if target['met'] else 'NOT met'})")
    publish("check_speed", "check-speed", report, markdown(report), args.update_readme)


def load() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


def rate(row: dict[str, Any]) -> str:
    return f"{row['lines'] / row['wall_s']:,.0f}" if row["lines"] and row["files"] > 1 else ""


def markdown(report: dict[str, Any]) -> str:
    rows = [[row["tree"], str(row["files"] or ""), f"{row['lines']:,}" if row["lines"] else "", f"{row['wall_s']:.2f}",
             rate(row)] for row in report["rows"]]
    intro = (f"`{report['command']}` on {report['machine']}, Python {report['python']}; {report['date']}; "
             f"load average {report['load']} (other work shares this machine):")
    text = table(intro, ["tree", "files", "lines", "wall s", "lines/s"], rows, numeric_from=1)
    verdicts = [f"- {t['target']}: {t['measured']}, **{'met' if t['met'] else 'not met'}**" for t in report["targets"]]
    return text + "\nTargets:\n\n" + "\n".join(verdicts) + "\n"


if __name__ == "__main__":
    main()
