"""Builds in the background: on a cache miss a file's regions run as Python until their build is done."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
ROOT = HERE.parent

FIRST_CALLS = """
    import sys, time, torch
    sys.path.insert(0, {folder!r})
    import model
    from ppy import runtime
    x = torch.ones(3)
    started = time.perf_counter()
    first = model.double(x)
    print("first", first.tolist(), model.double.__ppy_region__, round(time.perf_counter() - started, 3))
    try:
        model.broken(x)
    except Exception as error:
        print("broken", type(error).__name__)
    pending = runtime._modules[model.__file__]
    if isinstance(pending, runtime.Pending):
        pending.done.wait()
    again = model.double(x)
    print("after", again.tolist(), model.double.__ppy_region__)
"""

MODEL = '''
import ppy, torch


@ppy.opt(1)
def double(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@ppy.opt(1)
def broken(x: torch.Tensor) -> torch.Tensor:
    for _ in range(2):
        x = x + 1
    return x
'''


def _run(folder: Path, cache: Path, **env: str) -> subprocess.CompletedProcess[str]:
    code = textwrap.dedent(FIRST_CALLS.format(folder=str(folder)))
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "PPY_CACHE_DIR": str(cache), "PPY_QUIET": "", **env}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment, timeout=600)


def test_first_calls_run_as_python_while_the_build_runs(fresh_cache: Path, tmp_path: Path) -> None:
    (tmp_path / "model.py").write_text(MODEL)
    result = _run(tmp_path, fresh_cache, PPY_BUILD="background")
    assert result.returncode == 0, result.stderr
    first, broken, after = result.stdout.splitlines()
    # The first result is the Python body's, at once; a region breaking the rules still raises at its first call.
    assert first.startswith("first [2.0, 2.0, 2.0] False ")
    assert float(first.split()[-1]) < 5, first
    assert broken == "broken RegionError"
    assert after == "after [2.0, 2.0, 2.0] True"
    assert "ppy: compiling the regions of model.py in the background; until it is done they run as Python" in result.stderr
    # The next run finds the build in the cache: compiled from the first call, nothing built.
    warm = _run(tmp_path, fresh_cache, PPY_BUILD="background")
    assert warm.stdout.splitlines()[0].startswith("first [2.0, 2.0, 2.0] True"), warm.stdout + warm.stderr
    assert "background" not in warm.stderr


def test_wait_and_strict_build_before_the_first_call(fresh_cache: Path, tmp_path: Path) -> None:
    (tmp_path / "model.py").write_text(MODEL)
    for setting in ({"PPY_BUILD": "wait"}, {"PPY_STRICT": "1"}):
        result = _run(tmp_path, fresh_cache, **setting)
        assert result.stdout.startswith("first [2.0, 2.0, 2.0] True"), result.stdout + result.stderr
        assert "background" not in result.stderr


def test_a_program_that_ends_first_waits_for_its_build(fresh_cache: Path, tmp_path: Path) -> None:
    (tmp_path / "model.py").write_text(MODEL)
    code = textwrap.dedent(f"""
        import sys, torch
        sys.path.insert(0, {str(tmp_path)!r})
        import model
        print(model.double(torch.ones(1)).item(), model.double.__ppy_region__)
    """)
    environment = {**os.environ, "PYTHONPATH": str(ROOT), "PPY_CACHE_DIR": str(fresh_cache), "PPY_BUILD": "background"}
    ended = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment, timeout=600)
    assert ended.stdout.strip() == "2.0 False", ended.stderr
    again = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=environment, timeout=600)
    assert again.stdout.strip() == "2.0 True", again.stderr
