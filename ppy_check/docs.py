"""Render the rules section of the README from the rule modules' docstrings.

    python -m ppy_check.docs            # print it
    python -m ppy_check.docs --write    # replace it in README.md, between its markers

A test fails when README.md and the docstrings disagree. The benches write
their tables into the README through the same ``update_readme``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ppy_check.rules import KNOWN_RULES

README = Path(__file__).resolve().parents[1] / "README.md"


def markers(name: str) -> tuple[str, str]:
    return f"<!-- {name}:start -->", f"<!-- {name}:end -->"


START, END = markers("rules")


def heading(code: str) -> str:
    return f"`{code}`: {KNOWN_RULES[code].SUMMARY}"


def render() -> str:
    parts = []
    for code, module in KNOWN_RULES.items():
        doc = (module.__doc__ or "").strip()
        headline, _, body = doc.partition("\n")
        parts.append(f"### {heading(code)}\n\n{headline}\n{body}\n")
    return "\n".join(parts)


def replace_section(content: str, name: str, body: str) -> str:
    """``content`` with what lies between the ``name`` markers replaced by ``body``."""
    start, end = markers(name)
    if start not in content or end not in content.split(start, 1)[1]:
        raise ValueError(f"README.md has no {start} ... {end} section")
    before, rest = content.split(start, 1)
    _, after = rest.split(end, 1)
    return before + start + "\n" + body + end + after


def update_readme(name: str, body: str, readme: Path = README) -> None:
    readme.write_text(replace_section(readme.read_text(encoding="utf-8"), name, body), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    text = render()
    if "--write" not in args:
        sys.stdout.write(text)
        return 0
    try:
        update_readme("rules", "\n" + text + "\n")
    except ValueError as error:
        print(f"ppy_check.docs: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
