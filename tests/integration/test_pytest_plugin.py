"""`pytest --ppy-verify`, driven through pytester in a project of its own: verdicts, mutations, xdist.

``run`` is shared with the other ``test_verify_*`` files.
"""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest
import torch

from tests.support.pytester_runs import run, table_rows

pytest_plugins = ["pytester"]

REGIONS = textwrap.dedent(
    '''
    import ppy
    import torch


    @ppy.opt(1)
    def combine(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x.add(y) * 2


    @combine.samples
    def _(device):
        yield torch.randn(3, device=device), torch.randn(3, device=device)


    @ppy.opt(1)
    def fill(cache: torch.Tensor, k: torch.Tensor, position: int) -> torch.Tensor:
        torch.narrow(cache, 0, position, 1).copy_(k)
        return cache.sum(0)


    @fill.samples
    def _(device):
        yield torch.zeros(4, 2, device=device), torch.ones(1, 2, device=device), 1


    @ppy.opt(1)
    def squash(x: torch.Tensor) -> torch.Tensor:
        return torch.tanh(x) * 3


    @squash.samples
    def _(device):
        yield (torch.randn(5, device=device),)


    @ppy.opt(1)
    def called(x: torch.Tensor) -> torch.Tensor:
        return x.add(-1)


    @ppy.opt(1)
    def lonely(x: torch.Tensor) -> torch.Tensor:
        return x + 1


    @ppy.pure
    @ppy.opt(1)
    def keep(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x.mul(y)


    @keep.samples
    def _(device):
        yield torch.randn(4, device=device), torch.ones(4, device=device)
    '''
)

TESTS = textwrap.dedent(
    '''
    import sys


    def test_light_without_the_flag(pytestconfig):
        if not pytestconfig.getoption("ppy_verify"):
            heavy = [m for m in sys.modules if m in ("torch", "rich") or m.startswith(("ppy.verify", "ppy_compile"))]
            assert heavy == []


    def test_calls_a_region(pytestconfig):
        if pytestconfig.getoption("ppy_verify"):
            import torch
            import regions
            assert regions.called(torch.ones(2)).tolist() == [0.0, 0.0]
    '''
)

# A machine without CUDA makes no cuda items (it says so once); one with CUDA verifies every region on both.
CUDA = torch.cuda.is_available()
# 2 tests, and 6 regions on each device there is.
COLLECTED = 2 + 6 * (2 if CUDA else 1)


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(regions=REGIONS, test_usage=TESTS)
    pytester.makeini("[pytest]\nppy_devices = cpu cuda\n")
    return pytester


def test_plugin_end_to_end(project: pytest.Pytester) -> None:
    quiet = run(project)
    quiet.assert_outcomes(passed=2)  # and test_light_without_the_flag found nothing heavy imported

    correct = run(project, "--ppy-verify")
    if CUDA:  # 5 regions verified on each device; lonely unverified on each
        correct.assert_outcomes(passed=2 + 5 * 2, skipped=2)
    else:  # 5 regions verified on cpu; lonely unverified; no cuda item to skip, one line saying why
        correct.assert_outcomes(passed=2 + 5, skipped=1)
    correct.stdout.fnmatch_lines([f"collected {COLLECTED} items"])
    out = correct.stdout.str()
    absent = "ppy verify: CUDA is not available on this machine: regions are verified on cpu only"
    assert out.count(absent) == (0 if CUDA else 2), out  # the header, and the table's caption
    assert "[cuda]" not in out or CUDA
    source = (project.path / "regions.py").read_text().splitlines()
    lonely = next(i for i, line in enumerate(source, 1) if "def lonely" in line) - 1  # its decorator's line
    assert f"SKIPPED [1] regions.py:{lonely}: region `lonely` on cpu: unverified (no samples, and the session never called it)" in out
    rows = table_rows(correct)
    assert rows["regions.py::called", "cpu"] == ["1", "0.00e+00", "1.3e-06, 1e-05", "passed"]
    # squash's gradient is held to 4x the tolerance; the table shows what its output was held to.
    assert rows["regions.py::squash", "cpu"][2:] == ["1.3e-06, 1e-05", "passed"]
    assert rows["regions.py::fill", "cpu"][3] == "passed"
    assert rows["regions.py::lonely", "cpu"] == ["0", "-", "-", "unverified"]
    assert (("regions.py::combine", "cuda") in rows) == CUDA

    selected = run(project, "--ppy-verify", "-k", "combine and cpu")
    selected.assert_outcomes(passed=1, deselected=COLLECTED - 1)

    strict = run(project, "--ppy-verify", "--ppy-verify-strict", "--ppy-devices", "cpu")
    strict.assert_outcomes(passed=2 + 5, failed=1)
    assert "region `lonely` on cpu: unverified (no samples, and the session never called it); --ppy-verify-strict" in strict.stdout.str()

    swapped = run(project, "--ppy-verify", "--ppy-devices", "cpu", "-k", "combine or called or calls_a_region",
                  mutation="swap:add:sub")
    swapped.assert_outcomes(failed=3, deselected=5)  # the test calling `called` fails too: its answer is wrong
    text = swapped.stdout.str()
    assert "region `combine` on cpu, sample 0: output differs" in text
    assert "region `called` on cpu, a call made by test_usage.py::test_calls_a_region: output differs" in text
    assert "max abs error" in text and "tolerance rtol=" in text
    assert "generated C++: " in text and "at::_ops::mul_Tensor::call(" in text

    dropped = run(project, "--ppy-verify", "--ppy-devices", "cpu", "-k", "fill", mutation="drop-writes")
    dropped.assert_outcomes(failed=1, deselected=7)
    assert "parameter `cache` differs" in dropped.stdout.str()

    detached = run(project, "--ppy-verify", "--ppy-devices", "cpu", "-k", "squash", mutation="detach")
    detached.assert_outcomes(failed=1, deselected=7)
    assert "gradient" in detached.stdout.str()


def test_pure_region_that_writes_fails_naming_the_parameter(project: pytest.Pytester) -> None:
    # `x.mul_(y)` with y all ones leaves every value as it was: only the version counter sees the write.
    written = run(project, "--ppy-verify", "--ppy-devices", "cpu", "-k", "keep", mutation="swap:mul:mul_")
    written.assert_outcomes(failed=1, deselected=7)
    text = written.stdout.str()
    assert "region `keep` on cpu, sample 0: parameter `x` was written" in text
    assert "the region is @ppy.pure, but the compiled call wrote `x` (its version counter moved from 0 to 1)" in text
    assert "output differs" not in text and "parameter `x` differs" not in text


def test_xdist_workers_build_each_module_once(project: pytest.Pytester, fresh_cache: Path) -> None:
    # A fresh cache (the toolchain entries only), so this run builds regions.py itself, with two
    # workers reaching its items at once. With -s the workers' build lines reach stderr.
    before = {p.name for p in (fresh_cache / "builds").iterdir()}
    spread = run(project, "--ppy-verify", "--ppy-devices", "cpu", "-n", "2", "-s", PPY_QUIET="")
    outcomes = spread.parseoutcomes()
    # `called` is verified only if its item runs in the worker that ran the test calling it.
    assert outcomes.get("failed", 0) == 0 and outcomes["passed"] + outcomes["skipped"] == 2 + 6, outcomes
    builds = [line for line in spread.stderr.lines
              if re.match(r"ppy: building \d+ regions? of regions\.py .*: done in ", line)]
    assert len(builds) == 1, spread.stderr.str()
    added = [p for p in (fresh_cache / "builds").iterdir() if p.name not in before and not p.name.startswith(".")]
    # Each region built once, whichever module holds it.
    assert sorted(name for p in added for name in json.loads((p / "manifest.json").read_text())["regions"]) == \
        ["called", "combine", "fill", "keep", "lonely", "squash"]
    assert len(list((fresh_cache / "index").glob("*.json"))) == 1
    # The table is built from the workers' reports.
    rows = table_rows(spread)
    assert [rows[f"regions.py::{name}", "cpu"][3] for name in ("combine", "fill", "squash", "keep")] == ["passed"] * 4
