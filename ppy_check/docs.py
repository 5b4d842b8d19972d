"""Render the rules section of the README from the rule modules' docstrings.

    python -m ppy_check.docs            # print it
    python -m ppy_check.docs --write    # replace it in README.md, between its markers

A test fails when README.md and the docstrings disagree.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ppy_check.rules import RULES

START, END = "<!-- rules:start -->", "<!-- rules:end -->"


def render() -> str:
    parts = []
    for code, module in RULES.items():
        doc = (module.__doc__ or "").strip()
        headline, _, body = doc.partition("\n")
        parts.append(f"### `{code}`: {module.SUMMARY}\n\n{headline}\n{body}\n")
    return "\n".join(parts)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    text = render()
    if "--write" not in args:
        sys.stdout.write(text)
        return 0
    readme = Path(__file__).resolve().parents[1] / "README.md"
    content = readme.read_text(encoding="utf-8")
    before, rest = content.split(START, 1)
    _, after = rest.split(END, 1)
    readme.write_text(before + START + "\n\n" + text + "\n" + END + after, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
