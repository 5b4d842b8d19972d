"""What every bench leaves behind: its JSON and Markdown under bench/results/, and, on request, its
table in README.md between its own markers (the same helper that writes the README's rule docs)."""

from __future__ import annotations

import datetime
import json
import os
import platform
import sys
from pathlib import Path
from typing import Any

from ppy_check.docs import update_readme

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "bench" / "results"


def cpu() -> str:
    """The processor's model and core count, as /proc/cpuinfo names it where there is one."""
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{model or platform.processor() or platform.machine()} ({os.cpu_count()} cores)"


def today() -> str:
    return datetime.date.today().isoformat()


def command() -> str:
    """How this bench was run, for the README to say, without the flag that only decides where it is written."""
    script = Path(sys.argv[0]).resolve()
    name = script.relative_to(ROOT).as_posix() if script.is_relative_to(ROOT) else sys.argv[0]
    return " ".join(["python", name, *[a for a in sys.argv[1:] if a != "--update-readme"]])


def table(intro: str, header: list[str], rows: list[list[str]], numeric_from: int) -> str:
    """Markdown: ``intro``, a blank line, and the table, its columns from ``numeric_from`` on right-aligned."""
    aligns = ["---" if index < numeric_from else "---:" for index in range(len(header))]
    lines = [intro, "", "| " + " | ".join(header) + " |", "| " + " | ".join(aligns) + " |"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def publish(stem: str, marker: str, report: dict[str, Any], markdown: str, readme: bool,
            results: Path = RESULTS) -> None:
    """<results>/<stem>.json and .md (bench/results/ unless told); with ``readme``, the Markdown between
    ``<!-- marker:start/end -->``."""
    results.mkdir(parents=True, exist_ok=True)
    (results / f"{stem}.json").write_text(json.dumps(report, indent=2) + "\n")
    (results / f"{stem}.md").write_text(markdown)
    if readme:
        try:
            update_readme(marker, markdown)
        except ValueError as error:
            raise SystemExit(f"{Path(sys.argv[0]).name}: {error}") from None
