"""One prepared GPU run: every CUDA check ppy has and the GPT-2 XL table, in one command, on a lent machine.

    python3 bench/gpu_run.py [--dry-run] [--steps STEP,...] [--out DIR] [--cache DIR] [--budget SECONDS]
    python3 bench/gpu_run.py --collect DIR      # back here: a run's tables into bench/results/ and README.md

Made for a machine like the lent H200 one as it is: torch already installed
(never reinstalled), no network, no mypy, no pip. ppy runs from this working
tree (PYTHONPATH; the pytest plugin named with ``-p``), so nothing is
installed. The steps, in order, each in processes of its own with its own
time limit, so that one that fails or hangs costs only its own minutes:

- ``environment``: the machine, torch, CUDA, the compiler, and how this torch
  differs from the op data's release (ppy_compile/drift.py);
- ``build``: ``ppy build examples``, the one-time builds (bridge, precompiled
  header) and the GPT-2 example's regions, into a fresh cache under /tmp
  that the later steps share (a module builds in as many units as there are
  cores; the pytest steps spread files over pytest-xdist workers);
- ``cuda-tests``: every test marked ``cuda`` (the CUDA-graph KV-cache test);
- ``verify``: ``pytest --ppy-verify --ppy-devices cuda -m ppy_region``, every
  region of the suite against its Python body on the GPU;
- ``bench``: bench/gpt2_compare.py on CUDA (GPT-2 XL, bfloat16: eager,
  torch.compile, reduce-overhead, ppy, ppy+compile), with what time is left.

The whole run keeps to ``--budget`` (450 s): a step's limit is its own cap or
what is left once the later steps' minimums are kept back. Each step writes
its log to ``$OUT/<step>.log`` (command, output, exit status, wall time), and
``$OUT/summary.md`` says what each step did, what failed and why, and holds
the table; the bench's JSON and Markdown land in ``$OUT`` too. That is at most
8 files, the most a lent machine hands back. Under a torch other than the op
data's, a test or region that fails only because this torch lacks an operator
the op data names is listed as such and does not fail its step.

``--dry-run`` runs the same steps here, on the CPU: regions verified on the
CPU over a few files, the bench at the tiny shape, its caches seeded with
the one-time builds. tests/integration/test_gpu_run.py runs it, so the script is known to
work before anyone spends device time on it.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import os
import platform
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ElementTree
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from processes import dying_with_this_process

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"
# What a lent machine hands back from $OUT: at most this many files (its device README).
MAX_FILES = 8
DEFAULT_BUDGET_S = 450.0
# Files the dry run verifies on the CPU: a few regions, already built by the suite's own tests.
DRY_VERIFY = ("tests/regions/tiny.py", "tests/regions/fast_regions.py", "examples/gpt2/gpt2.py")
# The markers summary.md holds the README's part between (README.md's "Benchmarks": "GPU run results", and
# "GPT-2 end to end" for the CUDA table).
RUN_MARKER = "gpu-run"
BENCH_MARKER = "gpt2-cuda"
# pytest exit statuses (pytest.ExitCode), without importing pytest here.
PYTEST_OK, PYTEST_FAILED, PYTEST_NO_TESTS = 0, 1, 5


@dataclass
class Run:
    """What every step needs to know: where things go, and whether this is the CPU dry run."""

    out: Path
    cache: Path
    scratch: Path
    dry: bool
    jobs: int
    verify_paths: tuple[str, ...]
    bench_paths: str | None
    bench_rounds: int
    python: str = sys.executable

    def junit(self, step: str) -> Path:
        return self.scratch / f"{step}.xml"


@dataclass
class Step:
    name: str
    what: str
    cap_s: float  # its own limit
    floor_s: float  # kept back for it while earlier steps get their limits
    command: Callable[[Run, float], list[str]]
    pytest: bool = False
    dry_what: str = ""  # what the dry run does instead, where it differs

    def describe(self, run: Run) -> str:
        return self.dry_what if run.dry and self.dry_what else self.what


@dataclass
class Outcome:
    name: str
    what: str
    status: str  # passed, failed, timed out, not run
    detail: str
    exit_code: int | None
    wall_s: float
    limit_s: float
    log: str
    counts: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)
    drift: list[str] = field(default_factory=list)


def _pytest(run: Run, *args: str) -> list[str]:
    # The pytest steps run with PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 (a lent machine's image holds a dozen
    # plugins nobody here has run with), so ppy's plugin is named, as is xdist's where it is used; -p no:ppy
    # keeps an installed ppy's entry point (named `ppy`) from registering it twice. faulthandler_timeout: a
    # test that hangs prints every thread's stack in the log before the step's limit ends it.
    return [run.python, "-m", "pytest", "-p", "no:ppy", "-p", "ppy.pytest_plugin", "-p", "no:cacheprovider",
            "-o", "faulthandler_timeout=120", "-rfEs", *args]


def _xdist(run: Run) -> list[str]:
    """pytest-xdist's workers, where there are cores for two and xdist is installed (else one process)."""
    if run.jobs < 2 or importlib.util.find_spec("xdist") is None:
        return []
    return ["-p", "xdist.plugin", "-n", str(run.jobs), "--dist", "loadfile"]


def cuda_test_files() -> list[str]:
    """The test files that mark a test ``cuda``: collecting only them spares importing the whole suite."""
    return sorted(str(p.relative_to(ROOT)) for p in (ROOT / "tests").rglob("test_*.py")
                  if "mark.cuda" in p.read_text(encoding="utf-8"))


def environment_command(run: Run, limit: float) -> list[str]:
    return [run.python, str(Path(__file__).resolve()), "--environment", str(run.scratch / "environment.json")]


def build_command(run: Run, limit: float) -> list[str]:
    return [run.python, "-m", "ppy.cli", "build", "examples"]


def cuda_tests_command(run: Run, limit: float) -> list[str]:
    return _pytest(run, "-v", "-m", "cuda", f"--junitxml={run.junit('cuda-tests')}", *cuda_test_files())


def verify_command(run: Run, limit: float) -> list[str]:
    device = "cpu" if run.dry else "cuda"
    # Collection errors (a test module importing what this machine lacks) are reported, not fatal: the
    # region items of every other file still run.
    return _pytest(run, "-v", "--ppy-verify", "--ppy-devices", device, "-m", "ppy_region",
                   "--continue-on-collection-errors", f"--junitxml={run.junit('verify')}", *_xdist(run),
                   *run.verify_paths)


def bench_command(run: Run, limit: float) -> list[str]:
    command = [run.python, str(ROOT / "bench" / "gpt2_compare.py"), "--results", str(run.out), "--repeats", "1",
               # Its own budget ends before the step's limit, so it writes its table of what it reached.
               "--budget", f"{max(limit - 20.0, 10.0):.0f}", "--rounds", str(run.bench_rounds)]
    if run.dry:
        command += ["--shape", "tiny", "--seed-cache", str(run.cache)]
    else:
        command += ["--shape", "cuda"]
    if run.bench_paths:
        command += ["--paths", run.bench_paths]
    return command


STEPS = [
    Step("environment", "the machine, torch, CUDA, the compiler, the op data's release", 60, 15,
         environment_command),
    Step("build", "`ppy build examples`: bridge, the GPT-2 example, precompiled header", 180, 45, build_command),
    Step("cuda-tests", "every test marked `cuda` (the CUDA-graph KV-cache test)", 120, 45, cuda_tests_command,
         pytest=True),
    Step("verify", "`pytest --ppy-verify --ppy-devices cuda -m ppy_region`: every region of the suite", 240, 90,
         verify_command, pytest=True,
         dry_what="`pytest --ppy-verify --ppy-devices cpu -m ppy_region` over a few region files (--verify-paths)"),
    Step("bench", "bench/gpt2_compare.py: GPT-2 XL, bfloat16, five paths", 10_000, 120, bench_command,
         dry_what="bench/gpt2_compare.py --shape tiny: two layers on the CPU, torch.compile's eager backend"),
]


# --- the environment step (run as a process of its own: a broken torch fails it alone) -------------------


def describe_environment(target: Path) -> int:
    """Print what this machine is and holds; write what the summary needs to ``target`` (JSON)."""
    facts: dict[str, Any] = {"python": platform.python_version(), "executable": sys.executable,
                             "platform": platform.platform(), "cores": os.cpu_count()}

    def show(key: str, value: Any) -> None:
        facts[key] = value
        print(f"{key}: {value}", flush=True)

    for key in ("python", "executable", "platform", "cores"):
        print(f"{key}: {facts[key]}")
    status = 0
    try:
        import torch

        show("torch", str(torch.__version__))
        show("torch_cuda", str(torch.version.cuda))
        show("cuda_available", bool(torch.cuda.is_available()))
        if torch.cuda.is_available():
            show("gpu", torch.cuda.get_device_name())
            show("capability", ".".join(map(str, torch.cuda.get_device_capability())))
            show("gpu_memory_gib", round(torch.cuda.get_device_properties(0).total_memory / 2**30, 1))
    except Exception as error:  # noqa: BLE001 - the summary says what is broken
        show("torch_error", repr(error))
        status = 1
    try:
        from ppy_check.schema import opdata
        from ppy_compile.drift import drift

        found = drift()
        show("op_data_release", found.shipped)
        show("drift", found.summary())
        data = opdata()
        # How the C++ of a region names each missing overload: its dispatcher struct and its header.
        facts["missing"] = [{"overload": key, "struct": data.native(key).ops_struct, "header": data.native(key).header}
                            for key in found.missing]
        if found.missing:
            print("missing here: " + ", ".join(found.missing))
    except Exception as error:  # noqa: BLE001
        show("drift_error", repr(error))
        status = 1
    try:
        from ppy_compile.toolchain import toolchain

        tool = toolchain()
        show("compiler", tool.cxx)
        # The compiler itself, past any launcher (CXX="ccache g++"): its first line names its release.
        version = subprocess.run([*shlex.split(tool.cxx)[-1:], "--version"], capture_output=True, text=True, timeout=30)
        show("compiler_version", (version.stdout.splitlines() or ["?"])[0])
        show("ninja", tool.ninja)
    except Exception as error:  # noqa: BLE001
        show("toolchain_error", repr(error))
        status = 1
    for module in ("pytest", "xdist", "rich", "numpy", "einops", "mypy"):
        show(module, _version_of(module))
    if shutil.which("nvidia-smi"):
        smi = subprocess.run(["nvidia-smi"], capture_output=True, text=True, timeout=30)
        print(smi.stdout + smi.stderr)
    target.write_text(json.dumps(facts, indent=2) + "\n", encoding="utf-8")
    return status


def _version_of(module: str) -> str:
    try:
        imported = __import__(module)
    except ImportError:
        return "absent"
    return str(getattr(imported, "__version__", "present"))


# --- running a step ---------------------------------------------------------------------------------------


def step_environment(run: Run) -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    env.update(PYTHONUNBUFFERED="1", PPY_CACHE_DIR=str(run.cache), PPY_TEST_CACHE_DIR=str(run.cache),
               TORCHINDUCTOR_CACHE_DIR=str(run.scratch / "inductor"), TRITON_CACHE_DIR=str(run.scratch / "triton"))
    return env


def run_step(run: Run, step: Step, limit: float) -> Outcome:
    log = run.out / f"{step.name}.log"
    command = step.command(run, limit)
    started = time.monotonic()
    with log.open("w", encoding="utf-8") as sink:
        sink.write(f"$ {shlex.join(command)}\n# limit {limit:.0f} s, started {_now()}\n\n")
        sink.flush()
        env = step_environment(run)
        if step.pytest:
            env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
        process = subprocess.Popen(dying_with_this_process(command), stdout=sink, stderr=subprocess.STDOUT, cwd=ROOT,
                                   env=env, start_new_session=True)
        timed_out = False
        try:
            code: int | None = process.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            timed_out = True
            code = _stop(process)
        wall = time.monotonic() - started
        sink.write(f"\n# exit status {code}, {wall:.1f} s" + (f" (stopped at its limit of {limit:.0f} s)" if timed_out
                                                              else "") + "\n")
    outcome = Outcome(step.name, step.describe(run), "passed" if code == 0 else "failed", "", code, wall, limit,
                      log.name)
    if step.pytest:
        judge_pytest(run, step, outcome)
    if timed_out:
        outcome.status = "timed out"
        outcome.detail = f"stopped at its limit of {limit:.0f} s" + (f"; {outcome.detail}" if outcome.detail else "")
    elif outcome.status == "failed" and not outcome.detail:
        outcome.detail = f"exit status {code}: " + _last_line(log)
    return outcome


def _stop(process: subprocess.Popen[bytes]) -> int | None:
    """Interrupt the step's process group (pytest then writes its report of what ran), and kill it if that
    is not enough within ten seconds."""
    for sig, grace in ((signal.SIGINT, 10.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            return process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            continue
    return process.poll()


def _last_line(log: Path) -> str:
    lines = [line for line in log.read_text(encoding="utf-8", errors="replace").splitlines()
             if line.strip() and not line.startswith("# ")]
    return lines[-1][:300] if lines else "(no output)"


def _now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")


# --- judging a pytest step from its JUnit report ----------------------------------------------------------


def drift_names(run: Run) -> list[tuple[str, re.Pattern[str]]]:
    """Each overload the op data names that this torch lacks, with how a build error would name it."""
    facts = _environment_facts(run)
    # gcc: 'add_Tensor' is not a member of 'at::_ops'; clang: no member named 'add_Tensor' in namespace
    # 'at::_ops'; either: the source line's at::_ops::add_Tensor::call, or the header that is not there.
    return [(m["overload"], re.compile(rf"_ops::{re.escape(m['struct'])}\b|'{re.escape(m['struct'])}'"
                                       rf"|ATen/ops/{re.escape(m['header'])}_ops\.h"))
            for m in facts.get("missing", [])]


def _environment_facts(run: Run) -> dict[str, Any]:
    path = run.scratch / "environment.json"
    try:
        loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return loaded


def judge_pytest(run: Run, step: Step, outcome: Outcome) -> None:
    """Counts and failures from the JUnit report. A failure whose report names an operator overload this
    torch lacks (and the op data, from another release, names) is drift, not a failure of the step."""
    report = run.junit(step.name)
    if not report.is_file():
        outcome.detail = "no JUnit report (pytest did not get to write one)"
        return
    try:
        suites = ElementTree.parse(report).getroot()
    except ElementTree.ParseError as error:
        outcome.detail = f"unreadable JUnit report: {error}"
        return
    counts = {"passed": 0, "failed": 0, "errors": 0, "skipped": 0}
    missing = drift_names(run)
    for case in suites.iter("testcase"):
        name = f"{case.get('classname', '')}::{case.get('name', '')}".strip(":")
        problem = next((child for child in case if child.tag in ("failure", "error")), None)
        if problem is not None:
            text = (problem.get("message") or "") + "\n" + (problem.text or "")
            lacking = [overload for overload, pattern in missing if pattern.search(text)]
            first = next((line.strip() for line in text.splitlines() if line.strip()), "")[:240]
            if lacking:
                outcome.drift.append(f"`{name}`: this torch lacks {', '.join(lacking)}")
            else:
                counts["failed" if problem.tag == "failure" else "errors"] += 1
                outcome.failures.append(f"`{name}` ({problem.tag}): {first}")
        elif any(child.tag == "skipped" for child in case):
            counts["skipped"] += 1
        else:
            counts["passed"] += 1
    outcome.counts = counts
    shown = ", ".join(f"{n} {what}" for what, n in counts.items() if n)
    if outcome.drift:
        shown += f", {len(outcome.drift)} failed only for lacking operators of the op data's release"
    outcome.detail = shown or "no test ran"
    if outcome.exit_code == PYTEST_FAILED and not outcome.failures and outcome.drift:
        outcome.status = "passed"
    elif outcome.exit_code == PYTEST_NO_TESTS:
        outcome.status, outcome.detail = "failed", "no test was selected"


# --- the run ----------------------------------------------------------------------------------------------


def plan_limit(steps: list[Step], index: int, deadline: float) -> float:
    """The step's cap, or what is left once every later step's floor is kept back."""
    later = sum(step.floor_s for step in steps[index + 1:])
    return min(steps[index].cap_s, deadline - time.monotonic() - later)


def run_all(run: Run, steps: list[Step], budget: float) -> list[Outcome]:
    deadline = time.monotonic() + budget
    outcomes = []
    for index, step in enumerate(steps):
        limit = plan_limit(steps, index, deadline)
        if limit < min(10.0, step.cap_s):  # too short to start a Python that imports torch
            outcomes.append(Outcome(step.name, step.describe(run), "not run", f"only {max(limit, 0):.0f} s of the budget was "
                                    "left for it", None, 0.0, max(limit, 0.0), "-"))
            continue
        print(f"gpu_run: {step.name} (limit {limit:.0f} s)", flush=True)
        outcome = run_step(run, step, limit)
        print(f"gpu_run: {step.name}: {outcome.status}, {outcome.wall_s:.1f} s" +
              (f" ({outcome.detail})" if outcome.detail else ""), flush=True)
        outcomes.append(outcome)
    return outcomes


def summary(run: Run, outcomes: list[Outcome], started: str, wall: float) -> str:
    facts = _environment_facts(run)
    machine = facts.get("gpu") or f"no GPU ({facts.get('cores', '?')} cores)"
    torch_line = (f"torch {facts.get('torch', '?')} (CUDA {facts.get('torch_cuda', '-')}), Python "
                  f"{facts.get('python', '?')}, {facts.get('cores', '?')} cores, compiler "
                  f"{facts.get('compiler_version') or facts.get('compiler', '?')}")
    rows = ["| step | status | wall (s) | limit (s) | what it did |", "| --- | --- | ---: | ---: | --- |"]
    for o in outcomes:
        detail = o.detail.replace("|", "\\|").replace("\n", " ")
        rows.append(f"| {o.name} | {o.status} | {o.wall_s:.0f} | {o.limit_s:.0f} | {o.what}"
                    + (f": {detail}" if detail else "") + " |")
    kind = "CPU dry run" if run.dry else "GPU run"
    readme_part = "\n".join([
        f"{kind} of `python3 bench/gpu_run.py{' --dry-run' if run.dry else ''}` on {machine}, {started}: "
        f"{torch_line}. {facts.get('drift', '')}",
        "",
        *rows,
        "",
        f"{sum(o.status == 'passed' for o in outcomes)} of {len(outcomes)} steps passed, in {wall:.0f} s.",
        "",
    ])
    parts = [f"# ppy {kind}, {started}", "", f"<!-- {RUN_MARKER}:start -->", readme_part + f"<!-- {RUN_MARKER}:end -->",
             ""]
    for o in outcomes:
        if o.failures or o.drift:
            parts.append(f"## {o.name}: what failed (log: {o.log})")
            parts.append("")
            parts += [f"- {line}" for line in o.failures]
            if o.drift:
                parts += ["", f"Not counted: under torch {facts.get('torch', '?')} these fail only because it lacks "
                          f"operator overloads of torch {facts.get('op_data_release', '?')}, the op data's release:", ""]
                parts += [f"- {line}" for line in o.drift]
            parts.append("")
    bench = sorted(run.out.glob("gpt2_compare-*.md"))
    if bench:
        parts += ["## GPT-2", "", bench[0].read_text(encoding="utf-8")]
    parts += ["## Files", "", "Each step's log is `<step>.log` beside this file (its command, its output, its exit "
              "status and wall time). Back where the repository is: `python bench/gpu_run.py --collect DIR` "
              "puts this run's tables into bench/results/ and README.md.", ""]
    return "\n".join(parts)


def collect(folder: Path, results: Path = RESULTS, readme: Path | None = None) -> int:
    """A GPU run's files, brought back: its summary and table into bench/results/, and both into README.md."""
    sys.path.insert(0, str(ROOT))
    from ppy_check.docs import README, update_readme

    readme = readme or README
    summary_file = folder / "summary.md"
    if not summary_file.is_file():
        print(f"gpu_run --collect: {summary_file}: no such file", file=sys.stderr)
        return 2
    text = summary_file.read_text(encoding="utf-8")
    if "CPU dry run" in text.split("\n", 1)[0]:
        print("gpu_run --collect: this is a dry run's summary; only a GPU run's goes into the README", file=sys.stderr)
        return 2
    start, end = f"<!-- {RUN_MARKER}:start -->\n", f"<!-- {RUN_MARKER}:end -->"
    if start not in text or end not in text.split(start, 1)[1]:
        print(f"gpu_run --collect: {summary_file} has no {RUN_MARKER} section", file=sys.stderr)
        return 2
    try:
        update_readme(RUN_MARKER, text.split(start, 1)[1].split(end, 1)[0], readme)
        table = folder / "gpt2_compare-cuda.md"
        if table.is_file():
            update_readme(BENCH_MARKER, table.read_text(encoding="utf-8"), readme)
    except ValueError as error:
        print(f"gpu_run --collect: {error}", file=sys.stderr)
        return 2
    results.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(summary_file, results / "gpu_run.md")
    for name in ("gpt2_compare-cuda.json", "gpt2_compare-cuda.md"):
        if (folder / name).is_file():
            shutil.copyfile(folder / name, results / name)
    print(f"gpu_run --collect: {folder} -> {results} and {readme}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dry-run", action="store_true", help="the same steps on this machine's CPU, tiny shapes")
    parser.add_argument("--steps", default=",".join(s.name for s in STEPS),
                        help=f"comma-separated, in this order: {', '.join(s.name for s in STEPS)} (default: all)")
    parser.add_argument("--out", type=Path, default=None,
                        help="where the logs and the summary go (default: $OUT, else a new folder under /tmp)")
    parser.add_argument("--cache", type=Path, default=None,
                        help="the ppy build cache the steps share (default: a new folder under /tmp)")
    parser.add_argument("--budget", type=float, default=DEFAULT_BUDGET_S,
                        help=f"seconds for the whole run (default {DEFAULT_BUDGET_S:.0f})")
    parser.add_argument("--jobs", type=int, default=None,
                        help="pytest-xdist workers (default: a quarter of the cores, at most 4; under 2, none)")
    parser.add_argument("--verify-paths", default=None,
                        help="files the verify step collects (default: the suite's; in a dry run: a few)")
    parser.add_argument("--bench-paths", default=None, help="the bench's --paths (default: all five)")
    parser.add_argument("--bench-rounds", type=int, default=None, help="the bench's --rounds (default 5; dry run 1)")
    parser.add_argument("--collect", type=Path, default=None, metavar="DIR",
                        help="copy a finished GPU run's tables from DIR into bench/results/ and README.md")
    parser.add_argument("--environment", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.environment is not None:
        return describe_environment(args.environment)
    if args.collect is not None:
        return collect(args.collect)

    by_name = {s.name: s for s in STEPS}
    wanted = [name.strip() for name in args.steps.split(",") if name.strip()]
    unknown = [name for name in wanted if name not in by_name]
    if unknown or not wanted:
        parser.error(f"--steps: unknown step {unknown[0]!r}" if unknown else "--steps: none given")
    # Always in the run's own order, and always with the environment: the others are judged by what it finds.
    steps = [s for s in STEPS if s.name in wanted or s.name == "environment"]

    out = args.out or (Path(os.environ["OUT"]) if os.environ.get("OUT") else Path(tempfile.mkdtemp(prefix="ppy-gpu-run-")))
    out.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="ppy-gpu-scratch-"))
    cache = args.cache or scratch / "cache"
    cache.mkdir(parents=True, exist_ok=True, mode=0o700)
    cores = os.cpu_count() or 1
    run = Run(out=out.resolve(), cache=cache.resolve(), scratch=scratch, dry=args.dry_run,
              # Each module already builds in one unit per core: four workers at once is plenty, and 4 x 16
              # compilers of torch's headers fit the lent machine's memory.
              jobs=args.jobs if args.jobs is not None else min(4, cores // 4),
              verify_paths=tuple(args.verify_paths.split(",")) if args.verify_paths else (DRY_VERIFY if args.dry_run else ()),
              bench_paths=args.bench_paths, bench_rounds=args.bench_rounds or (1 if args.dry_run else 5))
    print(f"gpu_run: {'dry run, ' if run.dry else ''}steps {', '.join(s.name for s in steps)}; logs in {run.out}, "
          f"cache {run.cache}, budget {args.budget:.0f} s", flush=True)
    started, clock = _now(), time.monotonic()
    try:
        outcomes = run_all(run, steps, args.budget)
        (run.out / "summary.md").write_text(summary(run, outcomes, started, time.monotonic() - clock), encoding="utf-8")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    files = [p for p in run.out.rglob("*") if p.is_file()]
    print((run.out / "summary.md").read_text(encoding="utf-8").split(f"<!-- {RUN_MARKER}:end -->")[0])
    if len(files) > MAX_FILES:
        print(f"gpu_run: {len(files)} files in {run.out}; a lent machine hands back only {MAX_FILES}", file=sys.stderr)
        return 1
    return 0 if all(o.status == "passed" for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main())
