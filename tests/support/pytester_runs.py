"""pytest run in a pytester project's own process, and the `--ppy-verify` summary table it printed."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import pytest

MUTATED_PYTEST = Path(__file__).with_name("mutated_pytest.py")


def run(project: pytest.Pytester, *args: str, mutation: str = "", **env: str) -> pytest.RunResult:
    """pytest in a subprocess, with ``PPY_*`` settings for it alone (``mutation`` miscompiles on purpose, through
    tests/support/mutated_pytest.py: nothing else can ask ppy to)."""
    settings = {"PPY_QUIET": "1", **env}
    options = ("-p", "no:cacheprovider", "-rs", "-p", "no:randomly", *args)
    with pytest.MonkeyPatch.context() as patch:
        for key, value in settings.items():
            patch.setenv(key, value)
        if not mutation:
            return project.runpytest_subprocess(*options)
        basetemp = tempfile.mkdtemp(prefix="runpytest-", dir=project.path)
        return project.run(sys.executable, str(MUTATED_PYTEST), mutation, f"--basetemp={basetemp}", *options)


def table_rows(result: pytest.RunResult) -> dict[tuple[str, str], list[str]]:
    """The summary table's rows by (region, device): [calls, max error, tolerance, status]."""
    rows = {}
    for line in result.stdout.lines:
        cells = [c.strip() for c in line.strip("│ ").split("│")]
        if len(cells) == 6 and "::" in cells[0]:
            rows[cells[0], cells[1]] = cells[2:]
    return rows
