"""The first-write corpus (tests/corpus/): every function checked, built and verified as first written.

For each function: ppy-check's engine runs on its file. A function it passes
must build and match its Python body on every sample, values and gradients;
anything else is a ppy bug (a known one is listed in KNOWN_BUGS, strictly
expected to fail, so that fixing it is noticed). A function it refuses must be
refused well: every finding carries a rule code and names the function.

The functions that loop, branch or assert by design (each module's ``KIND``)
must be refused as ``ppy-loop`` or ``ppy-branch``. The others are meant to work
as written: REFUSED_TODAY lists those that ppy-check refuses for a feature the
compiler lacks, strictly expected to fail, so that a feature that lands shows
here (delete its entries) and a function refused that used to pass fails.
``bench/first_write.py`` counts the same verdicts as the first-write rate.

One build per corpus file, through the session cache.
"""

from __future__ import annotations

import os
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from first_write import BY_DESIGN_CODES, Entry, corpus_files, judge_corpus_file  # noqa: E402
from judge import check_file  # noqa: E402
from ppy_check.messages import ALL_CODES  # noqa: E402
from tests.support.first_write_checks import hold, param  # noqa: E402

# First-write functions that ppy-check refuses today, and why. Delete an entry when its feature lands.
REFUSED_TODAY: dict[str, str] = {}
# Functions ppy-check passes that do not build or do not match today: ppy bugs, with what goes wrong.
KNOWN_BUGS: dict[str, str] = {}


def _functions() -> list[tuple[str, str]]:
    return [(path.stem, name) for path in corpus_files() for name in check_file(path)[0]]


def _param(file: str, name: str) -> object:
    return param(file, name, REFUSED_TODAY, KNOWN_BUGS, "refused today")


@cache
def _judged(file: str) -> dict[str, Entry]:
    return {entry.name: entry for entry in judge_corpus_file(ROOT / "tests" / "corpus" / f"{file}.py")}


@pytest.mark.parametrize(("file", "name"), [_param(*f) for f in _functions()])
def test_corpus_function(file: str, name: str) -> None:
    hold(_judged(file)[name], BY_DESIGN_CODES, ALL_CODES)


def test_lists_name_corpus_functions() -> None:
    """REFUSED_TODAY and KNOWN_BUGS name first-write functions of the corpus, each once."""
    functions = {f"{file}.{name}" for file, name in _functions()}
    assert set(REFUSED_TODAY) <= functions and set(KNOWN_BUGS) <= functions
    assert not set(REFUSED_TODAY) & set(KNOWN_BUGS)


def test_corpus_runs_as_python() -> None:
    """Every function is valid eager code: with ppy switched off, each runs on each of its samples (at least one)."""
    script = (
        "import importlib, sys\n"
        "sys.path.insert(0, 'tests')\n"
        "import ppy\n"
        "from first_write import corpus_files\n"
        "count = 0\n"
        "for path in corpus_files():\n"
        "    module = importlib.import_module(f'corpus.{path.stem}')\n"
        "    for region in ppy.decorators.live_regions(str(path)):\n"
        "        calls = region.sample_calls('cpu')\n"
        "        assert calls, f'{path.stem}.{region.__name__} has no samples'\n"
        "        for call in calls:\n"
        "            region(*call.args, **call.kwargs)\n"
        "        count += 1\n"
        "print(count)\n"
    )
    env = {**os.environ, "PPY_DISABLE": "1", "PYTHONPATH": str(ROOT / "bench")}
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    assert int(result.stdout.split()[-1]) == len(_functions())
