"""What the mypy plugin adds to a mypy run: the examples, and a generated project of a few hundred regions.

    python bench/mypy_overhead.py [--regions 300] [--rounds 2]

Each row is mypy with and without `plugins = ppy`, cold (an empty cache: mypy
also analyses torch) and warm (the cache from the previous run, nothing
edited), best of R rounds. Target: under 10% extra on a cold run.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))

from check_speed import REGION  # noqa: E402  (the same region shape the checker bench uses)


def generate(root: Path, regions: int, per_file: int = 25) -> None:
    for index in range(0, regions, per_file):
        count = min(per_file, regions - index)
        body = "import ppy\nimport torch\nimport torch.nn.functional as F\n" + "".join(
            REGION.format(i=index + r) for r in range(count))
        (root / f"module_{index // per_file}.py").write_text(body)


def run(target: Path, plugin: bool, cache: Path) -> float:
    config = target / "bench-mypy.ini"
    config.write_text("[mypy]\nignore_missing_imports = True\n" + ("plugins = ppy\n" if plugin else ""))
    start = time.perf_counter()
    result = subprocess.run([sys.executable, "-m", "mypy", "--config-file", str(config), "--cache-dir", str(cache), "."],
                            cwd=target, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if result.returncode not in (0, 1) or "INTERNAL ERROR" in result.stderr:
        raise SystemExit(f"mypy failed: {result.stderr[-2000:]}")
    return elapsed


def measure(target: Path, rounds: int) -> dict[tuple[bool, str], float]:
    times: dict[tuple[bool, str], float] = {}
    for plugin in (False, True):
        cold, warm = [], []
        for _ in range(rounds):
            with tempfile.TemporaryDirectory() as cache:
                cold.append(run(target, plugin, Path(cache)))
                warm.append(run(target, plugin, Path(cache)))
        times[(plugin, "cold")] = min(cold)
        times[(plugin, "warm")] = min(warm)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--regions", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        examples = Path(folder) / "examples"
        shutil.copytree(ROOT / "examples", examples)
        rows.append(("examples/ (3 regions)", measure(examples, args.rounds)))
        generated = Path(folder) / "generated"
        generated.mkdir()
        generate(generated, args.regions)
        rows.append((f"generated ({args.regions} regions)", measure(generated, args.rounds)))
    import mypy.version

    print(f"mypy {mypy.version.__version__} with and without the ppy plugin: {platform.machine()}, "
          f"{os.cpu_count()} cores, Python {platform.python_version()}")
    print(f"{'project':<28} {'run':<5} {'without s':>10} {'with s':>8} {'extra':>7}")
    for name, times in rows:
        for mode in ("cold", "warm"):
            without, with_plugin = times[(False, mode)], times[(True, mode)]
            print(f"{name:<28} {mode:<5} {without:>10.2f} {with_plugin:>8.2f} {with_plugin / without - 1:>+7.1%}")


if __name__ == "__main__":
    main()
