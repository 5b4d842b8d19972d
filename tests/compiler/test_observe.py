"""PPY_LOG: a user sees which regions ran compiled, which ran as Python and why (subprocesses, so the
switch is read at import as a user sets it)."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

REGION = '''
import torch
import ppy

@ppy.opt(1)
def scale(x: torch.Tensor, k: int) -> torch.Tensor:
    return x * k

x = torch.ones(3)
assert scale.build()
for _ in range(3):
    scale(x, 2)
scale(x, True)  # a bool for an int: the compiled entry declines, the Python body answers
scale(x, True)
'''


def _run(tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    path = tmp_path / "observed.py"
    path.write_text(textwrap.dedent(REGION))
    return subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=600,
                          env={**os.environ, **env}, cwd=tmp_path, check=False)


def test_ppy_log_reports_calls_and_the_bool_for_int_decline_once(tmp_path: Path) -> None:
    result = _run(tmp_path, PPY_LOG="fallback,calls")
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert lines.count("ppy[calls]: scale: compiled") == 3, result.stderr
    assert lines.count("ppy[calls]: scale: python (declined)") == 2, result.stderr
    declines = [line for line in lines if line.startswith("ppy[fallback]:") and "declined" in line]
    assert len(declines) == 1 and "bool" in declines[0] and "`scale`" in declines[0], result.stderr


def test_an_unknown_ppy_log_topic_warns_naming_the_topics(tmp_path: Path) -> None:
    result = _run(tmp_path, PPY_LOG="fallback,bogus")
    assert result.returncode == 0, result.stderr
    warning = [line for line in result.stderr.splitlines() if "PPY_LOG" in line]
    assert len(warning) == 1 and "bogus" in warning[0] and "topics are fallback, calls, build, cache, all" in warning[0]


PROFILED = '''
import torch
import ppy

@ppy.opt(1)
def scale(x: torch.Tensor, k: int) -> torch.Tensor:
    return x * k

x = torch.ones(3)
assert scale.build()
scale(x, 2)  # prepared and routed before the profile starts: entering it must re-route
with ppy.profile() as seen:
    for _ in range(3):
        scale(x, 2)
    scale(x, True)
scale(x, 2)  # after the profile: not counted
(row,) = seen.rows()
print("ROW", row.region, row.calls, row.compiled, row.python, row.total_s > 0)
'''


def test_ppy_profile_counts_compiled_and_python_calls_and_prints_a_table(tmp_path: Path) -> None:
    path = tmp_path / "profiled.py"
    path.write_text(textwrap.dedent(PROFILED))
    result = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=600,
                            cwd=tmp_path, check=False)
    assert result.returncode == 0, result.stderr
    assert "ROW scale 4 3 1 True" in result.stdout, result.stdout + result.stderr
    assert "ppy profile" in result.stderr and "scale" in result.stderr


def test_ppy_profile_environment_prints_the_table_at_exit(tmp_path: Path) -> None:
    result = _run(tmp_path, PPY_PROFILE="1")
    assert result.returncode == 0, result.stderr
    rows = [line for line in result.stderr.splitlines() if "scale" in line]
    assert len(rows) == 1 and " 5 " in rows[0] and " 3 " in rows[0] and " 2 " in rows[0], result.stderr


BUILT = '''
import torch
import ppy

@ppy.opt(1)
def observed_build(x: torch.Tensor) -> torch.Tensor:
    return x * 3

assert observed_build.build()
'''


def test_ppy_log_build_and_cache_say_what_was_built_and_what_came_from_the_cache(tmp_path: Path,
                                                                                 fresh_cache: Path) -> None:
    path = tmp_path / "built.py"
    path.write_text(textwrap.dedent(BUILT))

    def run() -> list[str]:
        result = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, timeout=600,
                                env={**os.environ, "PPY_LOG": "build,cache", "PPY_CACHE_DIR": str(fresh_cache)},
                                cwd=tmp_path, check=False)
        assert result.returncode == 0, result.stderr
        return result.stderr.splitlines()

    cold = run()
    assert "ppy[cache]: miss for built.py: no entry" in cold, cold
    built = [line for line in cold if line.startswith("ppy[build]: compiled a module of built.py")]
    assert len(built) == 1 and "observed_build" in built[0] and built[0].endswith("s"), cold
    warm = run()
    assert "ppy[cache]: 1 region of built.py from cache" in warm, warm
    assert not [line for line in warm if line.startswith("ppy[build]")], warm
