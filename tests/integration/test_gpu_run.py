"""bench/gpu_run.py, the prepared GPU run: its dry run on this CPU runs every step and writes the summary, and
the parts that decide what a step's outcome is (time limits, drift, collecting results) do what they say."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

import gpu_run  # noqa: E402


def test_the_dry_run_runs_every_step_and_writes_the_summary(tmp_path: Path, toolchain_entries: list[str]) -> None:
    from tests.support.session_cache import SESSION_CACHE

    out = tmp_path / "out"
    # The fewest files and paths that still run each step: the session's cache already holds the one-time builds.
    command = [sys.executable, str(ROOT / "bench" / "gpu_run.py"), "--dry-run", "--out", str(out),
               "--cache", str(SESSION_CACHE), "--verify-paths", "tests/regions/tiny.py", "--bench-paths", "eager",
               "--budget", "400"]
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    summary = (out / "summary.md").read_text(encoding="utf-8")
    assert summary.startswith("# ppy CPU dry run")
    for step in gpu_run.STEPS:
        assert f"| {step.name} | passed |" in summary, summary
        log = (out / f"{step.name}.log").read_text(encoding="utf-8")
        assert log.startswith("$ ") and "\n# exit status 0, " in log, log[-2000:]
    assert "tests/regions/tiny.py::scale_shift[cpu] PASSED" in (out / "verify.log").read_text(encoding="utf-8")
    assert "1 passed" in summary and "1 skipped" in summary  # verify's region; the CUDA test, skipped here
    report = json.loads((out / "gpt2_compare-tiny.json").read_text(encoding="utf-8"))
    assert report["agree"] and report["paths"] == ["eager"] and not report["stopped"]
    assert set(report["results"]["eager"]["rows"]) == set(report["rows"]) and len(report["rows"]) == 4
    assert "## GPT-2" in summary and "| forward b1 s8 |" in summary
    assert len([p for p in out.rglob("*") if p.is_file()]) <= gpu_run.MAX_FILES
    assert not (ROOT / "bench" / "results" / "gpt2_compare-tiny.json").exists()


def _run(tmp_path: Path, dry: bool = True) -> gpu_run.Run:
    out, scratch = tmp_path / "out", tmp_path / "scratch"
    out.mkdir(parents=True)
    scratch.mkdir(parents=True)
    return gpu_run.Run(out=out, cache=tmp_path / "cache", scratch=scratch, dry=dry, jobs=0, verify_paths=(),
                       bench_paths=None, bench_rounds=1)


def _step(name: str, code: str, cap: float = 60.0, pytest_step: bool = False) -> gpu_run.Step:
    return gpu_run.Step(name, f"runs {name}", cap, 5.0, lambda run, limit: [sys.executable, "-c", code],
                        pytest=pytest_step)


def test_a_step_past_its_limit_is_stopped_and_the_next_still_runs(tmp_path: Path) -> None:
    run = _run(tmp_path)
    steps = [_step("hangs", "import time; print('started', flush=True); time.sleep(600)", cap=3),
             _step("fails", "raise SystemExit('broken on purpose')"), _step("works", "print('fine')")]
    hangs, fails, works = gpu_run.run_all(run, steps, budget=300)
    assert (hangs.status, fails.status, works.status) == ("timed out", "failed", "passed")
    assert hangs.detail == "stopped at its limit of 3 s"
    log = (run.out / "hangs.log").read_text(encoding="utf-8")
    assert "started" in log and "(stopped at its limit of 3 s)" in log
    assert fails.exit_code == 1 and fails.detail == "exit status 1: broken on purpose"


def test_a_step_the_budget_leaves_no_time_for_is_not_run(tmp_path: Path) -> None:
    steps = [_step("first", "print(1)"), _step("second", "print(2)")]
    steps[0].floor_s = steps[1].floor_s = 200.0
    first, second = gpu_run.run_all(_run(tmp_path), steps, budget=150)
    assert first.status == "not run" and second.status == "passed"  # the last step keeps what is left
    assert first.detail.startswith("only 0 s of the budget")


JUNIT = """<?xml version="1.0" encoding="utf-8"?>
<testsuites><testsuite name="pytest">
<testcase classname="tests.regions.ops_regions" name="gone[cuda]"><failure message="region `gone` on cuda: did not
compile; it runs as Python">error: 'newer_op_Tensor' is not a member of 'at::_ops'; did you mean at::_ops::newer_op_Tensor_out?</failure></testcase>
<testcase classname="tests.regions.ops_regions" name="header[cuda]"><failure message="did not compile">fatal error:
ATen/ops/brand_new_ops.h: No such file or directory</failure></testcase>
<testcase classname="tests.regions.ops_regions" name="wrong[cuda]"><failure message="region `wrong` on cuda, sample 0:
output differs">max abs error 3.0</failure></testcase>
<testcase classname="tests.regions.ops_regions" name="fine[cuda]"/>
<testcase classname="tests.regions.ops_regions" name="lonely[cuda]"><skipped message="unverified"/></testcase>
</testsuite></testsuites>
"""


def _judged(tmp_path: Path, junit: str, missing: list[dict[str, str]], exit_code: int) -> gpu_run.Outcome:
    run = _run(tmp_path, dry=False)
    (run.scratch / "environment.json").write_text(json.dumps({"torch": "2.11.0", "missing": missing}))
    run.junit("verify").write_text(junit)
    outcome = gpu_run.Outcome("verify", "", "failed", "", exit_code, 1.0, 10.0, "verify.log")
    gpu_run.judge_pytest(run, gpu_run.STEPS[3], outcome)
    return outcome


MISSING = [{"overload": "newer_op.Tensor", "struct": "newer_op_Tensor", "header": "newer_op"},
           {"overload": "brand_new", "struct": "brand_new", "header": "brand_new"}]


def test_failures_for_operators_this_torch_lacks_are_listed_apart_and_fail_nothing(tmp_path: Path) -> None:
    without_wrong = JUNIT.replace(JUNIT[JUNIT.index('<testcase classname="tests.regions.ops_regions" name="wrong'):
                                        JUNIT.index('<testcase classname="tests.regions.ops_regions" name="fine')], "")
    outcome = _judged(tmp_path, without_wrong, MISSING, gpu_run.PYTEST_FAILED)
    assert outcome.status == "passed" and not outcome.failures
    assert outcome.drift == ["`tests.regions.ops_regions::gone[cuda]`: this torch lacks newer_op.Tensor",
                             "`tests.regions.ops_regions::header[cuda]`: this torch lacks brand_new"]
    assert outcome.counts == {"passed": 1, "failed": 0, "errors": 0, "skipped": 1}


def test_any_other_failure_fails_the_step(tmp_path: Path) -> None:
    outcome = _judged(tmp_path, JUNIT, MISSING, gpu_run.PYTEST_FAILED)
    assert outcome.status == "failed" and len(outcome.drift) == 2
    assert outcome.failures == ["`tests.regions.ops_regions::wrong[cuda]` (failure): region `wrong` on cuda, sample 0: "
                                "output differs"]
    # Under the op data's own release nothing is missing: every failure is a failure.
    same = _judged(tmp_path / "same", JUNIT, [], gpu_run.PYTEST_FAILED)
    assert same.status == "failed" and len(same.failures) == 3 and not same.drift


def test_a_missing_report_says_so(tmp_path: Path) -> None:
    run = _run(tmp_path)
    outcome = gpu_run.Outcome("verify", "", "failed", "", 2, 1.0, 10.0, "verify.log")
    gpu_run.judge_pytest(run, gpu_run.STEPS[3], outcome)
    assert outcome.status == "failed" and outcome.detail == "no JUnit report (pytest did not get to write one)"


def test_collect_puts_a_gpu_runs_tables_into_the_readme_and_refuses_a_dry_run(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("intro\n<!-- gpu-run:start -->\npending\n<!-- gpu-run:end -->\n"
                      "<!-- gpt2-cuda:start -->\npending\n<!-- gpt2-cuda:end -->\nend\n")
    run = tmp_path / "run"
    run.mkdir()
    (run / "summary.md").write_text("# ppy GPU run, today\n\n<!-- gpu-run:start -->\n| step | status |\n"
                                    "<!-- gpu-run:end -->\n\n## Files\n")
    (run / "gpt2_compare-cuda.md").write_text("| | eager |\n")
    (run / "gpt2_compare-cuda.json").write_text("{}\n")
    results = tmp_path / "results"
    assert gpu_run.collect(run, results, readme) == 0
    assert readme.read_text() == ("intro\n<!-- gpu-run:start -->\n| step | status |\n<!-- gpu-run:end -->\n"
                                  "<!-- gpt2-cuda:start -->\n| | eager |\n<!-- gpt2-cuda:end -->\nend\n")
    assert sorted(p.name for p in results.iterdir()) == ["gpt2_compare-cuda.json", "gpt2_compare-cuda.md", "gpu_run.md"]
    (run / "summary.md").write_text("# ppy CPU dry run, today\n\n<!-- gpu-run:start -->\nx\n<!-- gpu-run:end -->\n")
    assert gpu_run.collect(run, tmp_path / "elsewhere", readme) == 2
    assert not (tmp_path / "elsewhere").exists()


def test_the_readme_has_the_sections_collect_fills() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    for marker in (gpu_run.RUN_MARKER, gpu_run.BENCH_MARKER):
        assert f"<!-- {marker}:start -->" in text and f"<!-- {marker}:end -->" in text


@pytest.mark.parametrize("steps, message", [("bench,nonsense", "unknown step 'nonsense'"), (",", "none given")])
def test_unknown_steps_are_a_usage_error(steps: str, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        gpu_run.main(["--steps", steps])
    assert exit_info.value.code == 2 and message in capsys.readouterr().err


# --- bench/gpt2_compare.py under a budget, with workers that stop, hang and fail on purpose ---------------------

FAKE_WORKER = '''
import json, sys, time
path, spec = sys.argv[1], json.loads(sys.argv[2])
if path == "compile":
    sys.exit("compile broke on purpose")
rows = ([f"forward b{b} s{s}" for b, s in spec["forward"]] + [f"decode {spec['decode'][1]} tokens"]
        + [f"training step b{spec['train'][0]} s{spec['train'][1]}"])
result = {"path": path, "first_call_s": 0.5, "rows": {}, "answers": {}}
print(json.dumps(result), flush=True)
if "--first-call-only" in sys.argv:
    sys.exit(0)
for index, row in enumerate(rows):
    if path == "ppy" and index == 1:
        time.sleep(600)
    result["rows"][row], result["answers"][row] = 1.0 + index, f"answer {index}"
    print(json.dumps(result), flush=True)
'''


def test_the_bench_keeps_what_a_stopped_path_reached_and_goes_on_past_a_failed_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    import gpt2_compare
    import rich.table  # noqa: F401 - imported before the budget starts, as torch is: the budget is the workers'
    import torch  # noqa: F401

    worker = tmp_path / "worker.py"
    worker.write_text(FAKE_WORKER)
    monkeypatch.setattr(gpt2_compare, "WORKER", worker)
    monkeypatch.setattr(gpt2_compare, "RESERVE_S", 2.0)
    monkeypatch.setattr(gpt2_compare, "MIN_CALL_S", 0.5)
    monkeypatch.setattr(sys, "argv", ["gpt2_compare.py", "--shape", "tiny", "--paths", "compile,ppy,eager",
                                      "--repeats", "1", "--budget", "8", "--results", str(tmp_path)])
    with pytest.raises(SystemExit) as exit_info:
        gpt2_compare.main()
    assert exit_info.value.code == 1  # not every path finished
    report = json.loads((tmp_path / "gpt2_compare-tiny.json").read_text())
    assert report["paths"] == ["compile", "ppy", "eager"]  # the columns as asked; eager and ppy ran first
    assert report["stopped"]["compile"] == "cold process failed: compile broke on purpose (cold start not reached)"
    assert report["stopped"]["ppy"].startswith("warm process stopped at its limit of ")
    assert report["stopped"]["ppy"].endswith(" s after forward b1 s8")
    assert report["results"]["ppy"]["rows"] == {"forward b1 s8": 1.0} and report["results"]["ppy"]["cold_s"] == 0.5
    assert len(report["results"]["eager"]["rows"]) == 4 and report["agree"]
    table = (tmp_path / "gpt2_compare-tiny.md").read_text()
    assert "| forward b2 s16 | - | - | 2.00 |" in table and "| forward b1 s8 | - | 1.00 | 1.00 |" in table
    assert "same aggregates on every row they all reached: yes. Not finished (-): ppy, warm process stopped" in table
    assert "; compile, cold process failed: compile broke on purpose (cold start not reached)." in table
    assert "gpt2_compare: the compile path failed" in capsys.readouterr().err
