"""pytest run in a pytester project's own process, and the `--ppy-verify` summary table it printed."""

from __future__ import annotations

import pytest


def run(project: pytest.Pytester, *args: str, mutation: str = "", **env: str) -> pytest.RunResult:
    """pytest in a subprocess, with ``PPY_*`` settings for it alone (``mutation`` miscompiles on purpose)."""
    settings = {"PPY_TESTING_MUTATION": mutation, "PPY_QUIET": "1", **env}
    with pytest.MonkeyPatch.context() as patch:
        for key, value in settings.items():
            patch.setenv(key, value)
        return project.runpytest_subprocess("-p", "no:cacheprovider", "-rs", "-p", "no:randomly", *args)


def table_rows(result: pytest.RunResult) -> dict[tuple[str, str], list[str]]:
    """The summary table's rows by (region, device): [calls, max error, tolerance, status]."""
    rows = {}
    for line in result.stdout.lines:
        cells = [c.strip() for c in line.strip("│ ").split("│")]
        if len(cells) == 6 and "::" in cells[0]:
            rows[cells[0], cells[1]] = cells[2:]
    return rows
