"""Each region is its own item, found by site: methods and nested regions, each status, clean failures."""

from __future__ import annotations

import textwrap

import pytest

from tests.support.pytester_runs import run, table_rows
from tests.support.region_sites import SITES

pytest_plugins = ["pytester"]

STATUSES = SITES + textwrap.dedent(
    '''

    @twice.samples
    def _(device):
        yield (torch.randn(3, device=device),)


    def never() -> None:
        @ppy.opt(1)
        def ghost(y: torch.Tensor) -> torch.Tensor:
            return y - 1


    @ppy.opt(1)
    def two(x: torch.Tensor, w2: torch.Tensor) -> torch.Tensor:
        return x @ w2


    @two.samples
    def _(device):
        yield torch.randn(2, 2, device=device), torch.randn(2, 2, device=device)
        yield (torch.randn(2, 2, device=device),)


    @ppy.opt(1)
    def noisy(x: torch.Tensor) -> torch.Tensor:
        return x.abs()


    @noisy.samples
    def _(device):
        raise ValueError("no sample today")


    @ppy.opt(1)
    def looped(x: torch.Tensor) -> torch.Tensor:
        for _ in range(2):
            x = x + 1
        return x


    @ppy.opt(1)
    def bump(n: int) -> int:
        return n + 1


    @bump.samples
    def _(device):
        yield (2 ** 70,)


    @ppy.opt(1)
    def grow(n: int) -> int:
        return n + 1


    @grow.samples
    def _(device):
        yield (1,)
    '''
)

TESTS = textwrap.dedent(
    '''
    import pytest
    import torch

    import statuses


    def test_calls():
        assert statuses.twice(torch.ones(2)).tolist() == [2.0, 2.0]
        assert statuses.A.twice(torch.ones(2)).tolist() == [3.0, 3.0]
        assert statuses.A.twice(torch.zeros(1)).tolist() == [0.0]
        assert statuses.outer(torch.ones(2)).tolist() == [2.0, 2.0]


    def test_big_ints():
        assert statuses.grow(2 ** 70) == 2 ** 70 + 1  # the Python body answers: not a call the verifier compares


    @pytest.mark.ppy_unobserved
    def test_documented_overflow():
        with pytest.raises(OverflowError):
            statuses.grow(2 ** 63 - 1)  # Python's answer is 2 ** 63: judged, this call would fail `grow`
    '''
)

# Imported, each file would leave a mark: neither holds a region pytest was asked to verify.
MARK = "import pathlib\npathlib.Path(__file__).with_suffix('.ran').write_text('ran')\n"


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyprojecttoml('[tool.pytest.ini_options]\ntestpaths = ["tests"]\nppy_devices = ["cpu"]\n')
    files = {
        "tests/statuses.py": STATUSES,
        "tests/test_statuses.py": TESTS,
        "tests/conftest.py": "import sys, pathlib\nsys.path.insert(0, str(pathlib.Path(__file__).parent))\n",
        "tests/helper.py": "import ppy\n" + MARK,
        "scripts/danger.py": MARK + "import ppy\nimport torch\n\n\n@ppy.opt(1)\ndef danger(x: torch.Tensor) -> torch.Tensor:\n    return x\n",
    }
    for name, text in files.items():
        path = pytester.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return pytester


def test_each_region_gets_its_own_item_and_status(project: pytest.Pytester) -> None:
    result = run(project, "--ppy-verify", "--ignore=scripts")
    # The three tests, twice, A.twice, inner, grow pass; two, noisy, looped, bump fail; ghost never came to exist.
    result.assert_outcomes(passed=7, failed=4, skipped=1)
    result.stdout.fnmatch_lines(["collected 12 items"])
    out = result.stdout.str()
    rows = table_rows(result)
    # twice: its sample and the test's call; A.twice: the test's two calls, on records of its own.
    assert rows["tests/statuses.py::twice", "cpu"] == ["2", "0.00e+00", "1.3e-06, 1e-05", "passed"]
    assert rows["tests/statuses.py::A.twice", "cpu"][::3] == ["2", "passed"]
    assert rows["tests/statuses.py::outer.<locals>.inner", "cpu"][::3] == ["1", "passed"]
    assert rows["tests/statuses.py::never.<locals>.ghost", "cpu"][3] == "unverified"
    assert rows["tests/statuses.py::two", "cpu"][::3] == ["1", "failed"]
    assert rows["tests/statuses.py::noisy", "cpu"][3] == "failed"
    assert rows["tests/statuses.py::looped", "cpu"][3] == "invalid"
    assert "region `never.<locals>.ghost` on cpu: unverified (it never came to exist: `never` never ran)" in out
    # A sample that misses an argument: one line naming the region, the sample and the argument.
    assert "region `two` on cpu: sample 1: missing a required argument: 'w2'" in out
    # Samples that raise: the user's frame and a note, none of pytest's or pluggy's.
    noisy = out[out.index("ppy region noisy [cpu]"):out.index("ppy region looped [cpu]")]
    assert 'raise ValueError("no sample today")' in noisy and "region `noisy` on cpu: producing its samples raised this" in noisy
    assert "pluggy" not in noisy and "_pytest" not in noisy and len(noisy.splitlines()) < 20
    assert "region `looped` is not a valid region" in out and "ppy-loop" in out
    # An argument the compiled code does not take is the Python body's to answer: a sample of one checks nothing
    # and fails; a test's call of one is not counted; a test marked ppy_unobserved is not judged.
    assert ("region `bump` on cpu, sample 0: the compiled code does not take its arguments (one is not exactly the "
            "type its annotation names, or an int is beyond the 64 bits torch takes)") in out
    assert "got NotImplemented" not in out
    assert rows["tests/statuses.py::grow", "cpu"][::3] == ["1", "passed"]
    # Only modules holding a region were imported, and none that pytest was told to skip.
    assert not (project.path / "scripts/danger.ran").exists() and not (project.path / "tests/helper.ran").exists()


def test_a_region_that_runs_as_python_fails_with_the_reason(project: pytest.Pytester) -> None:
    result = run(project, "--ppy-verify", "tests/statuses.py::twice[cpu]", CXX="/nonexistent/c++")
    result.assert_outcomes(failed=1)
    assert "region `twice` on cpu: did not compile; it runs as Python" in result.stdout.str()
    assert "/nonexistent/c++" in result.stdout.str()
    assert table_rows(result)["tests/statuses.py::twice", "cpu"][3] == "python fallback"


def test_regions_are_skipped_when_ppy_is_disabled(project: pytest.Pytester) -> None:
    result = run(project, "--ppy-verify", "tests/statuses.py::twice[cpu]", PPY_DISABLE="1")
    result.assert_outcomes(skipped=1)
    assert "PPY_DISABLE=1: every region runs as Python" in result.stdout.str()


# Regions the tests call only in ways that compare no value, and one they also call in a way that does.
UNCOMPARED = textwrap.dedent(
    '''
    import ppy
    import torch


    @ppy.opt(1)
    def refused(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x + y


    @ppy.opt(1)
    def traced(x: torch.Tensor) -> torch.Tensor:
        return x * 2


    @ppy.opt(1)
    def declined(n: int) -> int:
        return n + 1


    @ppy.opt(1)
    def unbound(x: torch.Tensor) -> torch.Tensor:
        return x - 1


    @ppy.opt(1)
    def mixed(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        return x * y
    '''
)

UNCOMPARED_TESTS = textwrap.dedent(
    '''
    import pytest
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode

    import uncompared


    class Passing(TorchDispatchMode):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))


    def test_raises():
        with pytest.raises(RuntimeError, match="must match the size"):
            uncompared.refused(torch.ones(3), torch.ones(4))


    def test_traced():
        with Passing():
            assert uncompared.traced(torch.ones(2)).tolist() == [2.0, 2.0]


    def test_declined():
        assert uncompared.declined(2 ** 70) == 2 ** 70 + 1


    def test_unbound():
        with pytest.raises(TypeError, match="unexpected keyword"):
            uncompared.unbound(torch.ones(2), y=1)


    def test_mixed():
        with pytest.raises(RuntimeError):
            uncompared.mixed(torch.ones(3), torch.ones(4))
        assert uncompared.mixed(torch.ones(2), torch.ones(2)).tolist() == [1.0, 1.0]
    '''
)


@pytest.fixture
def uncompared(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyfile(uncompared=UNCOMPARED, test_uncompared=UNCOMPARED_TESTS)
    pytester.makeini("[pytest]\nppy_devices = cpu\n")
    return pytester


@pytest.mark.parametrize("strict", [False, True])
def test_an_item_whose_calls_compared_no_value_fails_saying_why(uncompared: pytest.Pytester, strict: bool) -> None:
    result = run(uncompared, "--ppy-verify", *(["--ppy-verify-strict"] if strict else []))
    result.assert_outcomes(passed=5 + 1, failed=4)  # the five tests and `mixed`; the other four regions fail
    out = result.stdout.str()
    rows = table_rows(result)
    for name in ("refused", "traced", "declined", "unbound"):
        assert rows[f"uncompared.py::{name}", "cpu"] == ["0", "-", "-", "failed"], name
    # A call that raised on both sides compared the exceptions, not a value: it is not a call checked.
    assert rows["uncompared.py::mixed", "cpu"] == ["1", "0.00e+00", "1.3e-06, 1e-05", "passed"]
    assert ("region `refused` on cpu: no value was compared: 1 call raised on both sides (a call made by "
            "test_uncompared.py::test_raises: RuntimeError: The size of tensor a (3) must match the size of tensor b "
            "(4)") in out
    assert "region `traced` on cpu: no value was compared: 1 call ran under a tracer" in out
    assert ("region `declined` on cpu: no value was compared: 1 call went to the Python body, the compiled code not "
            "taking their arguments") in out
    assert "region `unbound` on cpu: no value was compared: 1 call did not bind to its parameters" in out
    assert "got NotImplemented" not in out


COLD = textwrap.dedent(
    '''
    import ppy
    import torch


    @ppy.opt(1)
    def unsampled(x: torch.Tensor) -> torch.Tensor:
        return x * 5 - 2
    '''
)


def test_a_cold_cache_is_built_before_the_tests_calls_so_they_are_compared(
        pytester: pytest.Pytester, fresh_cache: object, monkeypatch: pytest.MonkeyPatch) -> None:
    # Without PPY_BUILD in the environment a cache miss builds in the background, and the test's call would run
    # the Python body unchecked: --ppy-verify waits for builds itself.
    monkeypatch.delenv("PPY_BUILD", raising=False)
    pytester.makepyfile(cold=COLD, test_cold="import cold, torch\n\n\ndef test_call():\n"
                                              "    assert cold.unsampled(torch.ones(2)).tolist() == [3.0, 3.0]\n")
    pytester.makeini("[pytest]\nppy_devices = cpu\n")
    result = run(pytester, "--ppy-verify")
    result.assert_outcomes(passed=2)
    assert table_rows(result)["cold.py::unsampled", "cpu"] == ["1", "0.00e+00", "1.3e-06, 1e-05", "passed"]


def test_a_call_made_before_the_build_is_done_compared_nothing_and_says_so(
        pytester: pytest.Pytester, fresh_cache: object, monkeypatch: pytest.MonkeyPatch) -> None:
    # A test that asks for background builds itself: its call runs the Python body, unchecked, and the item says so.
    pytester.makepyfile(cold=COLD, test_cold="import cold, torch\nfrom ppy import runtime\n\n\n"
                                              "def test_call(monkeypatch):\n"
                                              "    monkeypatch.setattr(runtime, '_build_mode', 'background')\n"
                                              "    assert cold.unsampled(torch.ones(2)).tolist() == [3.0, 3.0]\n")
    pytester.makeini("[pytest]\nppy_devices = cpu\n")
    result = run(pytester, "--ppy-verify")
    result.assert_outcomes(passed=1, failed=1)
    assert ("region `unsampled` on cpu: no value was compared: 1 call ran the Python body because the region was "
            "not compiled yet") in result.stdout.str()
