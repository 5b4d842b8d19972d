"""mypy with ppy's plugin, run in a project folder, and the ppy findings it printed."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

MYPY_LINE = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+):(?P<column>\d+): error: (?P<message>.*)  \[(?P<code>ppy-[a-z]+)\]$")
BIN = Path(sys.executable).parent
# torch's own modules take mypy most of a run: one cache for the session keeps that to the first run.
SHARED_CACHE = Path(__file__).resolve().parents[2] / ".ppy-cache" / "mypy"


# Where mypy reads ppy's own modules from (the ppy a project imports, which the plugin knows by name). An
# editable install in setuptools' default mode puts ppy on sys.path through an import hook that mypy cannot
# follow (it then sees `ppy` as missing and every region untyped), so ppy's folder is named to it outright.
PPY_ROOT = Path(__file__).resolve().parents[2]


def mypy(args: list[str], cwd: Path, config: str = "", env: dict[str, str] | None = None,
         command: str = "mypy") -> subprocess.CompletedProcess[str]:
    (cwd / "mypy.ini").write_text("[mypy]\nplugins = ppy\nshow_column_numbers = True\nignore_missing_imports = True\n"
                                  f"mypy_path = {PPY_ROOT}\n" + config)
    if command == "mypy" and "--cache-dir" not in args:
        args = ["--cache-dir", str(SHARED_CACHE), *args]
    return subprocess.run([str(BIN / command), *args], cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, **(env or {})}, timeout=600)


def findings(output: str) -> list[tuple[str, int, int, str, str]]:
    found = []
    for line in output.splitlines():
        match = MYPY_LINE.match(line.strip())
        if match:
            found.append((Path(match["path"]).name, int(match["line"]), int(match["column"]), match["code"], match["message"]))
    return sorted(found)
