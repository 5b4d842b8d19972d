"""How fast ppy-check is: torch's own installed source tree, and a generated tree full of regions.

    python bench/check_speed.py [--files N] [--rounds R] [--update-readme]

Each row is a fresh `ppy-check` process (interpreter start included), best of
R rounds, with one worker per core. Targets on the 2-core dev machine: the
torch tree in under 2 s wall; at least 50,000 region lines per second.
Writes bench/results/check_speed.json and .md; --update-readme puts the table
in README.md between its check-speed markers.
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


def best_wall(root: Path, rounds: int) -> tuple[float, int]:
    best, code = float("inf"), 0
    for _ in range(rounds):
        start = time.perf_counter()
        result = subprocess.run(
            [sys.executable, "-m", "ppy_check", "--no-config", "--exit-zero", "--statistics", str(root)],
            capture_output=True, text=True,
        )
        best = min(best, time.perf_counter() - start)
        code = result.returncode
        if code not in (0, 1):
            raise SystemExit(f"ppy-check failed on {root}: {result.stderr.strip()}")
    return best, code


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--files", type=int, default=200, help="generated files (default 200)")
    parser.add_argument("--regions-per-file", type=int, default=25)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--update-readme", action="store_true", help="refresh the table in README.md")
    args = parser.parse_args()

    rows: list[dict[str, Any]] = []
    try:
        import torch

        torch_root = Path(torch.__file__).parent
    except ImportError:
        torch_root = None
    if torch_root is not None:
        files, lines = count_lines(torch_root)
        wall, _ = best_wall(torch_root, args.rounds)
        rows.append({"tree": "torch's installed source (no regions)", "files": files, "lines": lines, "wall_s": wall})
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        lines = generate(root, args.files, args.regions_per_file)
        wall, _ = best_wall(root, args.rounds)
        rows.append({"tree": f"generated: {args.files * args.regions_per_file} regions", "files": args.files, "lines": lines,
                     "wall_s": wall})

    report = {"command": command(), "machine": cpu(), "python": platform.python_version(), "date": today(), "rows": rows}
    print(f"ppy-check speed on {report['machine']}, Python {report['python']}")
    print(f"{'tree':<40} {'files':>7} {'lines':>10} {'wall s':>8} {'lines/s':>11}")
    for row in rows:
        print(f"{row['tree']:<40} {row['files']:>7} {row['lines']:>10} {row['wall_s']:>8.2f} {row['lines'] / row['wall_s']:>11,.0f}")
    publish("check_speed", "check-speed", report, markdown(report), args.update_readme)


def markdown(report: dict[str, Any]) -> str:
    rows = [[row["tree"], str(row["files"]), f"{row['lines']:,}", f"{row['wall_s']:.2f}", f"{row['lines'] / row['wall_s']:,.0f}"]
            for row in report["rows"]]
    intro = f"`{report['command']}` on {report['machine']}, Python {report['python']}; {report['date']}:"
    return table(intro, ["tree", "files", "lines", "wall s", "lines/s"], rows, numeric_from=1)


if __name__ == "__main__":
    main()
