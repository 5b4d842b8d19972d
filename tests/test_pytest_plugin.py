"""`pytest --ppy-verify`, driven through pytester in a project of its own."""

from __future__ import annotations

import os
import textwrap

import pytest

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
        return x - 1


    @ppy.opt(1)
    def lonely(x: torch.Tensor) -> torch.Tensor:
        return x + 1
    '''
)

TESTS = textwrap.dedent(
    '''
    import sys


    def test_light_without_the_flag():
        if "--ppy-verify" not in sys.argv:
            assert "torch" not in sys.modules


    def test_calls_a_region():
        if "--ppy-verify" in sys.argv:
            import torch
            import regions
            assert regions.called(torch.ones(2)).tolist() == [0.0, 0.0]
    '''
)


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(regions=REGIONS, test_usage=TESTS)
    pytester.makeini("[pytest]\nppy_devices = cpu cuda\n")
    return pytester


def run(project: pytest.Pytester, *args: str, mutation: str = "") -> pytest.RunResult:
    env = {"PPY_TESTING_MUTATION": mutation, "PPY_QUIET": "1"}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        return project.runpytest_subprocess("-p", "no:cacheprovider", "-rs", "-p", "no:randomly", *args)
    finally:
        for key, value in old.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def test_plugin_end_to_end(project: pytest.Pytester) -> None:
    # No flag: nothing of ppy's runs and torch is never imported.
    quiet = run(project)
    quiet.assert_outcomes(passed=2)

    correct = run(project, "--ppy-verify")
    correct.assert_outcomes(passed=2 + 4, skipped=5 + 1)  # 4 regions verified on cpu; 5 cuda items; lonely on cpu
    out = correct.stdout.str()
    assert "CUDA is not available on this machine" in out
    assert "unverified (no samples, and the session never called it)" in out
    assert "ppy verify" in out and "regions.py::combine" in out
    assert "regions.py::called" in out

    # Under pytest-xdist: the workers share the cache, so nothing is rebuilt, and every item still runs.
    spread = run(project, "--ppy-verify", "--ppy-devices", "cpu", "-n", "2")
    outcomes = spread.parseoutcomes()
    assert outcomes.get("failed", 0) == 0 and outcomes["passed"] >= 2 + 3, outcomes

    selected = run(project, "--ppy-verify", "-k", "combine and cpu")
    selected.assert_outcomes(passed=1, deselected=11)

    strict = run(project, "--ppy-verify", "--ppy-verify-strict", "--ppy-devices", "cpu")
    strict.assert_outcomes(passed=2 + 4, failed=1)
    assert "region `lonely` on cpu: unverified (no samples, and the session never called it); --ppy-verify-strict" in strict.stdout.str()

    swapped = run(project, "--ppy-verify", "--ppy-devices", "cpu", "-k", "combine", mutation="swap:add:sub")
    swapped.assert_outcomes(failed=1, deselected=6)
    text = swapped.stdout.str()
    assert "region `combine` on cpu, a registered sample: output differs" in text
    assert "max abs error" in text and "tolerance rtol=" in text
    assert "generated C++: " in text and "at::_ops::mul_Tensor::call(" in text

    dropped = run(project, "--ppy-verify", "--ppy-devices", "cpu", "-k", "fill", mutation="drop-writes")
    dropped.assert_outcomes(failed=1, deselected=6)
    assert "parameter `cache` differs" in dropped.stdout.str()

    detached = run(project, "--ppy-verify", "--ppy-devices", "cpu", "-k", "squash", mutation="detach")
    detached.assert_outcomes(failed=1, deselected=6)
    assert "gradient" in detached.stdout.str()


def test_bad_device_option_is_a_usage_error(project: pytest.Pytester) -> None:
    result = run(project, "--ppy-verify", "--ppy-devices", "tpu")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert "unknown device 'tpu'" in result.stderr.str()
