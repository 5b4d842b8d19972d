"""What the mypy plugin adds to a mypy run: the examples, and a generated project of a few hundred regions.

    python bench/mypy_overhead.py [--regions 300] [--rounds 2] [--update-readme]

Each row is mypy with and without `plugins = ppy`, cold (an empty cache: mypy
also analyses torch) and warm (the cache from the previous run, nothing
edited), best of R rounds. Target: under 10% extra on a cold run.
Writes bench/results/mypy_overhead.json and .md; --update-readme puts the
table in README.md between its mypy-overhead markers.
"""

from __future__ import annotations

import argparse
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))

from check_speed import REGION  # noqa: E402  (the same region shape the checker bench uses)
from publish import command, cpu, publish, table, today  # noqa: E402


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
    parser.add_argument("--update-readme", action="store_true", help="refresh the table in README.md")
    args = parser.parse_args()
    measured = []
    with tempfile.TemporaryDirectory() as folder:
        examples = Path(folder) / "examples"
        shutil.copytree(ROOT / "examples", examples)
        measured.append(("examples/ (3 regions)", measure(examples, args.rounds)))
        generated = Path(folder) / "generated"
        generated.mkdir()
        generate(generated, args.regions)
        measured.append((f"generated ({args.regions} regions)", measure(generated, args.rounds)))
    import mypy.version

    rows = [
        {"project": name, "run": mode, "without_s": times[(False, mode)], "with_s": times[(True, mode)]}
        for name, times in measured for mode in ("cold", "warm")
    ]
    report = {"command": command(), "mypy": mypy.version.__version__, "machine": cpu(), "python": platform.python_version(),
              "date": today(), "rows": rows}
    print(f"mypy {report['mypy']} with and without the ppy plugin: {report['machine']}, Python {report['python']}")
    print(f"{'project':<28} {'run':<5} {'without s':>10} {'with s':>8} {'extra':>7}")
    for row in rows:
        print(f"{row['project']:<28} {row['run']:<5} {row['without_s']:>10.2f} {row['with_s']:>8.2f} {extra(row):>+7.1%}")
    publish("mypy_overhead", "mypy-overhead", report, markdown(report), args.update_readme)


def extra(row: dict[str, Any]) -> float:
    return float(row["with_s"] / row["without_s"] - 1)


def markdown(report: dict[str, Any]) -> str:
    rows = [[row["project"], row["run"], f"{row['without_s']:.2f}", f"{row['with_s']:.2f}", f"{extra(row):+.1%}"]
            for row in report["rows"]]
    intro = (f"`{report['command']}` (mypy {report['mypy']}; {report['machine']}, Python {report['python']}; "
             f"{report['date']}):")
    return table(intro, ["project", "run", "without s", "with s", "extra"], rows, numeric_from=2)


if __name__ == "__main__":
    main()
