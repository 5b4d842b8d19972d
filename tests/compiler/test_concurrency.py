"""Many threads making regions' first calls at once, and a fork while a background build runs: every call answers
as Python does, none raises, none hangs, and the regions end up compiled."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parents[1]
ROOT = HERE.parent

MODEL = '''
import ppy, torch


@ppy.opt(1)
def shifted(x: torch.Tensor) -> torch.Tensor:
    return torch.tanh(x) * 3 - x


@ppy.opt(1)
def scaled(x: torch.Tensor, k: float = 0.5) -> torch.Tensor:
    return x * k + 1


@ppy.opt(1)
def mixed(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.relu(x - y) + y * y
'''

# N threads, released at once, each calling every region (positionally and by keyword) until all are compiled, then
# a few more times; any error or any answer other than the Python body's is reported. The switch interval is tiny so
# that threads interleave inside ppy's own steps, where a half-published region would show.
THREADS = """
    import sys, threading, time, torch
    sys.path.insert(0, {folder!r})
    sys.setswitchinterval(1e-6)
    import model
    x, y = torch.linspace(-2, 2, 7), torch.linspace(1, -1, 7)
    calls = [(model.shifted, (x,), {{}}), (model.scaled, (x,), {{"k": 2.0}}), (model.mixed, (x,), {{"y": y}})]
    expected = [region.python(*args, **kwargs) for region, args, kwargs in calls]
    barrier = threading.Barrier({threads})
    problems = []

    def worker():
        barrier.wait()
        deadline, after = time.monotonic() + 300, 20
        while after and time.monotonic() < deadline:
            for (region, args, kwargs), wanted in zip(calls, expected):
                try:
                    got = region(*args, **kwargs) if {first_calls} else region.build()
                except BaseException as error:
                    problems.append(f"{{region.__name__}}: {{type(error).__name__}}: {{error}}")
                    return
                if {first_calls} and not torch.equal(got, wanted):
                    problems.append(f"{{region.__name__}}: {{got}} != {{wanted}}")
                    return
                if not {first_calls} and got is not True:
                    problems.append(f"{{region.__name__}}.build() answered {{got}} before its build was done")
                    return
            if all(region.__ppy_region__ for region, _, _ in calls):
                after -= 1

    threads = [threading.Thread(target=worker) for _ in range({threads})]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    print(problems or "no problems", [region.__ppy_region__ for region, _, _ in calls], flush=True)
"""


def _run(code: str, cache: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "PPY_CACHE_DIR": str(cache), "OMP_NUM_THREADS": "1", **env}
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          env=environment, timeout=600)


@pytest.fixture
def model(tmp_path: Path) -> Path:
    folder = tmp_path / "program"
    folder.mkdir()
    (folder / "model.py").write_text(MODEL, encoding="utf-8")
    return folder


@pytest.mark.parametrize("mode", ["background", "wait"])
def test_many_threads_first_calling_many_regions(fresh_cache: Path, model: Path, mode: str) -> None:
    """A region is published once, complete: no thread sees it half compiled (before, `_compiled` came before
    `_signature`, and a thread in between raised AttributeError)."""
    result = _run(THREADS.format(folder=str(model), threads=8, first_calls=True), fresh_cache, PPY_BUILD=mode)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "no problems [True, True, True]", result.stdout + result.stderr
    assert "Traceback" not in result.stderr, result.stderr


def test_build_waits_for_the_thread_that_prepares_the_region(fresh_cache: Path, model: Path) -> None:
    """`region.build()` while another thread prepares the region answers only once it is settled: True, compiled
    (before, a region was marked prepared as its preparation started, and build() answered False meanwhile)."""
    result = _run(THREADS.format(folder=str(model), threads=4, first_calls=False), fresh_cache, PPY_BUILD="wait")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "no problems [True, True, True]", result.stdout + result.stderr


FORK = """
    import os, sys, torch
    sys.path.insert(0, {folder!r})
    import model
    from ppy import runtime
    x = torch.linspace(-2, 2, 7)
    assert not model.shifted.__ppy_region__
    model.shifted(x)  # the first call: the build starts in the background
    assert isinstance(runtime._modules[model.__file__], runtime.Pending)
    child = os.fork()
    if child == 0:
        built = model.shifted.build() and model.scaled.build()
        source = model.shifted.cpp_source
        same = torch.equal(model.shifted(x), model.shifted.python(x))
        print("child", built, source is not None and "at::" in source, same, flush=True)
        os._exit(0)
    _, status = os.waitpid(child, 0)
    print("parent", os.waitstatus_to_exitcode(status), model.shifted.build(), flush=True)
"""


def test_fork_during_a_background_build(fresh_cache: Path, model: Path) -> None:
    """The child has no thread running its parent's build: it must not wait on that build's event, nor hold its
    parent's locks through inherited descriptors. It builds (or finds) the regions itself, and so does the parent."""
    result = _run(FORK.format(folder=str(model)), fresh_cache, PPY_BUILD="background")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == ["child True True True", "parent 0 True"], result.stdout + result.stderr
