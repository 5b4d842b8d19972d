"""Suppression comments: `# ppy: ignore[ppy-loop]`, and `# type: ignore[ppy-loop]` so one comment serves mypy too.

A bare ``# ppy: ignore`` (or ``# type: ignore``) silences every code on its line.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass

_DIRECTIVE = re.compile(r"#\s*(ppy|type)\s*:\s*ignore\b(?:\[([^\]]*)\])?")


@dataclass(frozen=True)
class Directive:
    kind: str  # "ppy" or "type"
    column: int  # 0-based, in characters
    text: str  # as written: `# ppy: ignore[ppy-loop]`
    codes: tuple[str, ...] | None  # None for a bare directive


def directives(text: str, offset: int = 0) -> Iterator[Directive]:
    """The directives in ``text`` (a line, or a comment starting at column ``offset``)."""
    for match in _DIRECTIVE.finditer(text):
        listed = match.group(2)
        codes = None if listed is None else tuple(c.strip() for c in listed.split(",") if c.strip())
        yield Directive(match.group(1), offset + match.start(), match.group(0), codes)


def silencer(line_text: str, code: str, type_comments: bool = True) -> Directive | None:
    """The first directive on the line that silences ``code``, if one does.

    ``type_comments=False`` honours only ``# ppy: ignore``: under mypy, mypy
    itself applies ``# type: ignore`` (and reports the unused ones).
    """
    for directive in directives(line_text):
        if directive.kind == "type" and not type_comments:
            continue
        if directive.codes is None or code in directive.codes:
            return directive
    return None


def comment_directives(text: str) -> list[tuple[int, Directive]]:
    """(line, directive) for every directive in a real comment of the source.

    Unlike :func:`silencer`, which reads the line's text, this skips strings:
    a docstring showing `# ppy: ignore` is not a directive anyone wrote.
    """
    found = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                found += [(token.start[0], d) for d in directives(token.string, token.start[1])]
    except (tokenize.TokenError, SyntaxError):
        pass  # the parse already succeeded; a tokenizer hiccup leaves the comments read so far
    return found
