"""One file selection for all four front-ends: ppy-check, ppy build, the mypy plugin and pytest --ppy-verify
skip what ``[tool.ppy]`` excludes, on one tree, with the patterns anchored at the pyproject.toml's folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.support.mypy_runs import findings, mypy

BIN = Path(sys.executable).parent
# No torch in the regions: mypy follows only ppy, and nothing compiles (each region has a loop, so each is
# invalid and reported by every front-end that reads its file).
REGION = "import ppy\n\n\n@ppy.opt(1)\ndef {name}(n: int) -> int:\n    while n:\n        n = n - 1\n    return n\n"
FILES = {
    "src/kept.py": "kept",
    "src/legacy/old.py": "old",  # excluded by a pattern with a slash: anchored at the pyproject's folder
    "generated/made.py": "made",  # excluded by a name
    "src/generated/deep.py": "deep",  # the name matches anywhere
}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    for name, region in FILES.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(REGION.format(name=region))
    (root / "pyproject.toml").write_text(textwrap.dedent(
        """\
        [tool.pytest.ini_options]
        ppy_devices = ["cpu"]

        [tool.ppy]
        extend-exclude = ["generated", "src/legacy"]
        """))
    return root


def _run(command: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PPY_QUIET": "1", **env})


def test_ppy_check_skips_the_excluded_files(tree: Path) -> None:
    result = _run([str(BIN / "ppy-check"), "--output-format", "json", "."], tree)
    assert result.returncode == 1, result.stderr
    assert {Path(finding["path"]).as_posix() for finding in json.loads(result.stdout)} == {"src/kept.py"}


def test_ppy_build_skips_the_excluded_files(tree: Path, tmp_path: Path) -> None:
    result = _run([str(BIN / "ppy"), "build", "."], tree, PPY_CACHE_DIR=str(tmp_path / "cache"))
    assert result.returncode == 1, result.stderr
    assert "kept.py:6:5: ppy-loop" in result.stderr
    for skipped in ("old", "made", "deep"):
        assert f"{skipped}.py" not in result.stderr
    assert "in 1 file" in result.stderr


def test_ppy_build_takes_the_selection_options(tree: Path, tmp_path: Path) -> None:
    cache = str(tmp_path / "cache")
    # Without the configuration every file is built; --exclude replaces the default list (as in ruff).
    result = _run([str(BIN / "ppy"), "build", "--no-config", "--exclude", "legacy", "."], tree, PPY_CACHE_DIR=cache)
    assert all(f"{name}.py" in result.stderr for name in ("kept", "made", "deep")) and "old.py" not in result.stderr
    result = _run([str(BIN / "ppy"), "build", "--extend-exclude", "kept.py", "--quiet", "."], tree, PPY_CACHE_DIR=cache)
    assert result.returncode == 0 and result.stderr == "", result.stderr  # nothing left to build, nothing to say
    result = _run([str(BIN / "ppy"), "build", "--quiet", "src/kept.py"], tree, PPY_CACHE_DIR=cache)
    assert result.returncode == 1 and "ppy-loop" in result.stderr and "compiled, in" not in result.stderr
    result = _run([str(BIN / "ppy"), "build", "--force-exclude", "src/legacy/old.py"], tree, PPY_CACHE_DIR=cache)
    assert result.returncode == 0 and "0 of 0 regions compiled, in 0 files" in result.stderr, result.stderr
    result = _run([str(BIN / "ppy"), "build", "-j", "0", "."], tree, PPY_CACHE_DIR=cache)
    assert result.returncode == 2 and "argument -j/--jobs: must be at least 1" in result.stderr
    (tree / "pyproject.toml").write_text("[tool.ppy]\nexclude = 3\n")
    result = _run([str(BIN / "ppy"), "build", "."], tree, PPY_CACHE_DIR=cache)
    assert result.returncode == 2 and "exclude must be a list of strings" in result.stderr
    assert "Traceback" not in result.stderr


def test_mypy_plugin_skips_the_excluded_files(tree: Path) -> None:
    result = mypy(["src", "generated"], tree)
    assert {name for name, *_ in findings(result.stdout)} == {"kept.py"}, result.stdout + result.stderr


def test_pytest_plugin_skips_the_excluded_files_from_any_folder(tree: Path) -> None:
    # Run from src/: the slash pattern still means the project's src/legacy, not src/src/legacy.
    result = _run([sys.executable, "-m", "pytest", "--ppy-verify", "--co", "-q", "-p", "no:cacheprovider"], tree / "src")
    items = {line.strip() for line in result.stdout.splitlines() if "::" in line}
    assert items == {"src/kept.py::kept[cpu]"}, result.stdout + result.stderr
