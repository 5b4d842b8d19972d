"""How fast ppy-check is: torch's own installed source tree, and a generated tree full of regions.

    python bench/check_speed.py [--files N] [--rounds R]

Each row is a fresh `ppy-check` process (interpreter start included), best of
R rounds, with one worker per core. Targets on the 2-core dev machine: the
torch tree in under 2 s wall; at least 50,000 region lines per second.
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
    args = parser.parse_args()

    rows = []
    try:
        import torch

        torch_root = Path(torch.__file__).parent
    except ImportError:
        torch_root = None
    if torch_root is not None:
        files, lines = count_lines(torch_root)
        wall, _ = best_wall(torch_root, args.rounds)
        rows.append(("torch's installed source (no regions)", files, lines, wall))
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        lines = generate(root, args.files, args.regions_per_file)
        wall, _ = best_wall(root, args.rounds)
        rows.append((f"generated: {args.files * args.regions_per_file} regions", args.files, lines, wall))

    print(f"ppy-check speed on {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"{'tree':<40} {'files':>7} {'lines':>10} {'wall s':>8} {'lines/s':>11}")
    for name, files, lines, wall in rows:
        print(f"{name:<40} {files:>7} {lines:>10} {wall:>8.2f} {lines / wall:>11,.0f}")


if __name__ == "__main__":
    main()
