"""Replace what lies between a pair of README markers, ``<!-- NAME:start -->`` and ``<!-- NAME:end -->``."""

from __future__ import annotations

from pathlib import Path

README = Path(__file__).resolve().parents[1] / "README.md"


def replace_between_markers(name: str, text: str, readme: Path = README) -> None:
    """Put ``text`` between the ``name`` markers of ``readme``; a missing marker is an error, never a silent skip."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    content = readme.read_text(encoding="utf-8")
    if content.count(start) != 1 or content.count(end) != 1 or content.index(start) > content.index(end):
        raise ValueError(f"{readme.name} needs exactly one {start} followed by one {end}")
    before, rest = content.split(start, 1)
    _, after = rest.split(end, 1)
    readme.write_text(before + start + "\n" + text.strip("\n") + "\n" + end + after, encoding="utf-8")
