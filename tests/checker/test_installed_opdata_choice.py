"""Which op data the checker reads, decided without importing torch: the shipped files where torch is absent
or is their release, and no cache touched then (tests/torch_only/test_installed_opdata.py makes data for
another release)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from ppy_check import installed_opdata

ROOT = Path(__file__).resolve().parents[2]
# In a process of its own, with `torch` on the path as the test lays it out (or none): what it reads, and
# whether torch was imported.
SCRIPT = """
import json, sys
from ppy_check import installed_opdata
used = installed_opdata.in_use()
print(json.dumps({"installed": installed_opdata.installed_torch_version(), "made": used.made,
                  "data": str(used.data), "reason": used.reason, "torch_imported": "torch" in sys.modules}))
"""


def run(tmp_path: Path, torch_version: str | None) -> tuple[dict[str, object], str]:
    """``SCRIPT`` with a stand-in torch package of ``torch_version`` first on the path (None: an empty path
    entry, so only whatever torch the interpreter has otherwise; -S and -I keep site-packages out)."""
    fake = tmp_path / "path"
    (fake / "torch").mkdir(parents=True)
    if torch_version is None:
        (fake / "torch").rmdir()
    else:
        (fake / "torch" / "__init__.py").write_text("raise ImportError('a stand-in: never imported')\n")
        (fake / "torch" / "version.py").write_text(f"__version__ = '{torch_version}'\ncuda = None\n")
    env = {key: value for key, value in os.environ.items() if key != "PPY_QUIET"}
    env.update({"PPY_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": f"{fake}{os.pathsep}{ROOT}"})
    command = [sys.executable, "-S", "-c", SCRIPT]  # -S: no site-packages, so no real torch behind the stand-in
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1]), done.stderr


def test_without_torch_the_shipped_data_serves(tmp_path: Path) -> None:
    report, stderr = run(tmp_path, None)
    assert report == {"installed": None, "made": False, "data": str(installed_opdata.SHIPPED_DATA), "reason": None,
                      "torch_imported": False}
    assert stderr == "" and not (tmp_path / "cache").exists()


def test_the_shipped_release_reads_the_shipped_files(tmp_path: Path) -> None:
    version = installed_opdata.shipped_torch_version() + "+cu128"  # a build of the same release
    report, stderr = run(tmp_path, version)
    assert report["installed"] == version and not report["made"] and report["reason"] is None
    assert not report["torch_imported"] and stderr == "" and not (tmp_path / "cache").exists()


def test_another_release_that_cannot_be_made_from_falls_back_with_one_line(tmp_path: Path) -> None:
    # The stand-in cannot be imported, so making data for it fails: the shipped data serves, and one line says why.
    report, stderr = run(tmp_path, "2.99.0")
    assert report["installed"] == "2.99.0" and not report["made"] and report["reason"]
    assert not report["torch_imported"]
    shipped = installed_opdata.shipped_torch_version()
    assert f"ppy: using the shipped operator data of torch {shipped} under torch 2.99.0: {report['reason']}" in stderr


def test_release_and_shipped_version() -> None:
    assert installed_opdata.release("2.13.0+cpu") == "2.13.0"
    shipped = json.loads(installed_opdata.SHIPPED_DATA.read_text(encoding="utf-8"))["torch_version"]
    assert installed_opdata.shipped_torch_version() == shipped
