"""The suite's torch-dependent tests under another torch release, in a virtual environment of its own.

    python bench/torch_range.py --torch 2.11.0 [--venvs DIR] [--python PY] [--update-readme]
    make test-torch TORCH=2.11.0                      # the same, with the README table rewritten

``make test`` stays on the pinned torch (constraints.txt). This is the slower
check of the declared range (pyproject.toml's ``[torch]`` extra, README.md's
"Install"): for one release it

- makes ``<venvs>/torch-<version>`` (outside the repository: a CUDA build
  from PyPI is several GB; PyPI's x86-64 wheels run on the CPU too) with that
  torch and the rest of the dev dependencies (constraints.txt's pins, torch's
  own left out), and ppy installed editable from this working tree;
- runs, in that environment and with a build cache of its own
  (``<venv>/ppy-test-cache``: builds against another torch's headers are
  keyed apart anyway, and this keeps them out of the shared one), the steps:
  ``suite`` (``pytest --ppy-verify -m "not checker and not integration"``:
  the torch and compiler groups and every region verified against its Python
  body), ``torch-stack`` (tests/integration/test_torch_stack.py:
  torch.compile, opcheck, DDP) and ``mypy-plugin``;
- writes every run it has made to bench/results/torch_range.json (one entry
  per release, replaced on a rerun) and the table of them to
  torch_range.md and, with ``--update-readme``, README.md between the
  ``torch-range`` markers.

Tests that hold only under the op data's own release are marked
``opdata_torch`` and skip under another (tests/conftest.py).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import time
import tomllib
import xml.etree.ElementTree as ElementTree
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from processes import dying_with_this_process
from publish import RESULTS, ROOT, cpu, publish, table, today

STEM = "torch_range"
MARKER = "torch-range"
DEFAULT_VENVS = Path.home() / ".cache" / "ppy" / "venvs"
# The steps: name, pytest arguments (run from the repository root), time limit in seconds (generous: under
# another torch every build is made again, on a machine that may be shared).
STEPS: tuple[tuple[str, tuple[str, ...], float], ...] = (
    ("suite", ("--ppy-verify", "-m", "not checker and not integration", "-n", "2", "--dist", "loadfile"), 7200.0),
    ("torch-stack", ("tests/integration/test_torch_stack.py", "-n", "2"), 3600.0),
    ("mypy-plugin", ("tests/integration/test_mypy_plugin.py", "-n", "2"), 2400.0),
)


@dataclass
class Step:
    name: str
    command: str
    exit_code: int | None  # None: stopped at its time limit
    wall_s: float
    counts: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def _run(command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
    print("torch_range: " + " ".join(command), flush=True)
    return subprocess.run(command, check=True, text=True, **kwargs)


def installed_torch(python: Path) -> str | None:
    if not python.is_file():
        return None
    found = subprocess.run([str(python), "-c", "import torch; print(torch.__version__)"], capture_output=True,
                           text=True)
    return found.stdout.strip() if found.returncode == 0 else None


def requirements() -> list[str]:
    """The dev extra's requirements, the extras it names unfolded, ppy itself and torch left out."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    found: list[str] = []
    for extra in ("torch", "mypy", "dev"):
        found += [r for r in extras[extra] if not r.startswith(("ppy-regions", "torch"))]
    return found


def constraints_without_torch(target: Path) -> Path:
    """constraints.txt without its torch pin (the run's own torch is installed first, then kept)."""
    lines = [line for line in (ROOT / "constraints.txt").read_text().splitlines()
             if not re.match(r"torch\s*(==|$)", line)]
    target.write_text("\n".join(lines) + "\n")
    return target


def prepare(venv: Path, version: str, base_python: str) -> None:
    """The venv, with torch ``version``, the dev dependencies and ppy (editable, compat mode, as `make venv`)."""
    python = venv_python(venv)
    if not python.is_file():
        _run([base_python, "-m", "venv", str(venv)])
    have = installed_torch(python)
    if have is None or have.split("+")[0] != version:
        _run([str(python), "-m", "pip", "install", "--disable-pip-version-check", f"torch=={version}"])
    constraints = constraints_without_torch(venv / "constraints-without-torch.txt")
    _run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "-c", str(constraints),
          *requirements()])
    # --no-deps: the [torch] extra's floor must not replace the torch under test.
    _run([str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-deps",
          "--config-settings", "editable_mode=compat", "-e", str(ROOT)])


def environment(python: Path) -> dict[str, Any]:
    """The venv's torch, Python and C++ compiler, and how this torch differs from the op data's release."""
    probe = (
        "import json, platform, sys, torch\n"
        "from ppy_compile.drift import drift\n"
        "from ppy_compile.toolchain import compiler_identity\n"
        "d = drift()\n"
        "print(json.dumps({'torch': str(torch.__version__), 'cuda_build': torch.version.cuda,\n"
        "  'python': platform.python_version(), 'compiler': compiler_identity().splitlines()[0],\n"
        "  'opdata_torch': d.shipped, 'missing_overloads': len(d.missing), 'unknown_overloads': len(d.unknown),\n"
        "  'python_sources_differing': list(d.sources), 'summary': d.summary()}))\n"
    )
    found = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, cwd=ROOT, check=True)
    facts: dict[str, Any] = json.loads(found.stdout.strip().splitlines()[-1])
    return facts


def judge(report: Path, step: Step) -> None:
    """Counts, and each failure's first line, from pytest's JUnit report."""
    if not report.is_file():
        step.failures.append("no JUnit report (pytest did not get to write one)")
        return
    counts = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0}
    for case in ElementTree.parse(report).getroot().iter("testcase"):
        name = f"{case.get('classname', '')}::{case.get('name', '')}".strip(":")
        problem = next((child for child in case if child.tag in ("failure", "error")), None)
        if problem is not None:
            counts["failed" if problem.tag == "failure" else "errors"] += 1
            text = (problem.get("message") or "") + "\n" + (problem.text or "")
            first = next((line.strip() for line in text.splitlines() if line.strip()), "")[:300]
            step.failures.append(f"{name}: {first}")
        elif any(child.tag == "skipped" for child in case):
            counts["skipped"] += 1
        else:
            counts["passed"] += 1
    step.counts = counts


def judged_only(venv: Path, name: str, args: tuple[str, ...]) -> Step:
    """A step's last report read again, not rerun (its run was interrupted, or made by hand): the wall time
    is pytest's own."""
    report = venv / f"junit-{name}.xml"
    wall = 0.0
    if report.is_file():
        wall = sum(float(suite.get("time", 0)) for suite in ElementTree.parse(report).getroot().iter("testsuite"))
    step = Step(name, "pytest " + " ".join(args), None, round(wall, 1))
    judge(report, step)
    step.exit_code = 1 if step.counts.get("failed") or step.counts.get("errors") or not step.counts else 0
    return step


def run_step(python: Path, venv: Path, name: str, args: tuple[str, ...], limit: float) -> Step:
    report = venv / f"junit-{name}.xml"
    report.unlink(missing_ok=True)
    log = venv / f"{name}.log"
    command = [str(python), "-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider", f"--junitxml={report}", *args]
    env = dict(os.environ, PPY_TEST_CACHE_DIR=str(venv / "ppy-test-cache"))
    env.pop("VIRTUAL_ENV", None)
    print(f"torch_range: {name}: {' '.join(command[1:])} (log {log})", flush=True)
    started = time.monotonic()
    with log.open("w") as out:
        process = subprocess.Popen(dying_with_this_process(command), cwd=ROOT, env=env, stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
        try:
            code: int | None = process.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            code = None
            # Interrupted as Ctrl-C would: pytest still writes its report of the tests that ran.
            os.killpg(process.pid, signal.SIGINT)
            try:
                process.wait(timeout=300)  # xdist's workers stop first: a minute was not enough for the report
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
    shown = "pytest " + " ".join(args)
    step = Step(name, shown, code, round(time.monotonic() - started, 1))
    judge(report, step)
    print(f"torch_range: {name}: exit {code}, {step.wall_s:.0f} s, {step.counts}", flush=True)
    return step


def load_runs(results: Path) -> dict[str, Any]:
    path = results / f"{STEM}.json"
    if not path.is_file():
        return {"runs": {}}
    loaded: dict[str, Any] = json.loads(path.read_text())
    return loaded


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version.split("+")[0]))


def markdown(report: dict[str, Any]) -> str:
    runs = sorted(report["runs"].values(), key=lambda run: _version_key(run["environment"]["torch"]))
    intro = ("`make test-torch TORCH=<version>` (bench/torch_range.py): the torch and compiler groups with "
             "`--ppy-verify` (suite), tests/integration/test_torch_stack.py (torch.compile, opcheck, DDP) and "
             "the mypy plugin's tests, each release in its own virtual environment, ppy installed editable from "
             "the working tree. Counts are pytest's; a failure is listed in bench/results/torch_range.json.")
    header = ["torch", "Python", "machine, date", "op data drift", "suite", "torch-stack", "mypy-plugin", "wall"]
    rows = []
    for run in runs:
        env = run["environment"]
        drift = ("none (the op data's own)" if env["torch"].split("+")[0] == env["opdata_torch"] else
                 f"{env['missing_overloads']} overloads missing, {len(env['python_sources_differing'])} "
                 "Python modules differ")
        cells = []
        for name, _, _ in STEPS:
            step = next((s for s in run["steps"] if s["name"] == name), None)
            if step is None:
                cells.append("not run")
                continue
            counts = step["counts"]
            text = ", ".join(f"{counts[k]} {k}" for k in ("passed", "failed", "errors", "skipped") if counts.get(k))
            if step["exit_code"] is None:
                text += " (stopped at its time limit)"
            cells.append(text or "no test ran")
        wall = sum(s["wall_s"] for s in run["steps"])
        rows.append([f"{env['torch']} ({'CUDA ' + env['cuda_build'] + ' build' if env['cuda_build'] else 'CPU build'})",
                     env["python"], f"{run['machine']}, {run['date']}", drift, *cells, f"{wall / 60:.0f} min"])
    return table(intro, header, rows, numeric_from=len(header))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--torch", required=True, help="the torch release to test under, e.g. 2.11.0")
    parser.add_argument("--venvs", type=Path, default=Path(os.environ.get("PPY_TORCH_VENVS", DEFAULT_VENVS)),
                        help=f"where the releases' virtual environments live (default {DEFAULT_VENVS})")
    parser.add_argument("--python", default=sys.executable, help="the interpreter a new venv is made from")
    parser.add_argument("--steps", default=",".join(name for name, _, _ in STEPS),
                        help="which steps to run, comma-separated")
    parser.add_argument("--no-install", action="store_true", help="use the venv as it is")
    parser.add_argument("--limit", type=float, default=None,
                        help="each step's time limit in seconds (default: the step's own); one stopped there is "
                        "interrupted as Ctrl-C would, and the tests that ran are counted")
    parser.add_argument("--judge-only", action="store_true",
                        help="run nothing: read the steps' last JUnit reports in the venv again")
    parser.add_argument("--update-readme", action="store_true", help="rewrite README.md's torch-range table")
    parser.add_argument("--results", type=Path, default=RESULTS)
    options = parser.parse_args(argv)
    chosen = options.steps.split(",")
    unknown = set(chosen) - {name for name, _, _ in STEPS}
    if unknown:
        parser.error(f"no step {', '.join(sorted(unknown))}")
    venv = options.venvs.expanduser().resolve() / f"torch-{options.torch}"
    if venv.is_relative_to(ROOT):
        parser.error(f"{venv} is inside the repository: a torch venv is several GB, keep it elsewhere")
    if not options.no_install and not options.judge_only:
        prepare(venv, options.torch, options.python)
    python = venv_python(venv)
    facts = environment(python)
    print(f"torch_range: {facts['summary']}", flush=True)
    if options.judge_only:
        # A step that never ran under this release has no report to read: it stays "not run".
        chosen = [name for name in chosen if (venv / f"junit-{name}.xml").is_file()]
    steps = [judged_only(venv, name, args) if options.judge_only
             else run_step(python, venv, name, args, options.limit or limit)
             for name, args, limit in STEPS if name in chosen]
    report = load_runs(options.results)
    # A step not run this time keeps its last result under this release (one entry per release).
    earlier = report["runs"].get(options.torch, {}).get("steps", [])
    kept = [step for step in earlier if step["name"] not in chosen]
    report["runs"][options.torch] = {"environment": facts, "machine": cpu(), "date": today(),
                                     "steps": sorted(kept + [asdict(step) for step in steps],
                                                     key=lambda step: [n for n, _, _ in STEPS].index(step["name"]))}
    publish(STEM, MARKER, report, markdown(report), options.update_readme, options.results)
    failed = [step.name for step in steps if step.exit_code != 0]
    print(f"torch_range: torch {facts['torch']}: " + ("every step passed" if not failed else
                                                       f"{', '.join(failed)} failed"), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
