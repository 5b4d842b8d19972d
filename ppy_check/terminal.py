"""Colour for people at a terminal, plain text for everything else.

Colour follows the common conventions: ``NO_COLOR`` (no-color.org) turns it
off, ``FORCE_COLOR`` (force-color.org) turns it on where the output is not a
terminal, and otherwise only a terminal (not ``TERM=dumb``) gets it; a pipe or
a file never does. ``NO_COLOR`` wins when both are set.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from typing import TextIO

_RESET = "\x1b[0m"
_CODES = {"bold": "1", "dim": "2", "red": "31", "green": "32", "cyan": "36", "blue": "34"}


def plural(count: int, noun: str, nouns: str | None = None) -> str:
    """``count`` and the noun it takes: ``nouns`` where the plural is not the noun and an s."""
    return f"{count} {noun if count == 1 else nouns or noun + 's'}"


def stdout_closed() -> None:
    """After a BrokenPipeError (the reader of standard output, `head` say, has gone): point standard output at
    /dev/null, so that nothing more is written to the closed pipe, not even the flush at exit (which would print
    "Exception ignored ... BrokenPipeError")."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no standard output with a descriptor: nothing to flush there
        pass


def wants_colour(stream: TextIO) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty()) and os.environ.get("TERM") != "dumb"


@dataclass(frozen=True)
class Style:
    colour: bool

    def __call__(self, text: str, *styles: str) -> str:
        if not self.colour or not text:
            return text
        return "\x1b[" + ";".join(_CODES[s] for s in styles) + "m" + text + _RESET


# A code span, or strong text outside one: `**kwargs` is code, not the start of bold.
_INLINE = re.compile(r"`([^`\n]+)`|\*\*(.+?)\*\*")


def render_markdown(text: str, style: Style) -> str:
    """The rule docs' small Markdown (``**strong**``, ```code```, indented examples) for a reader.

    With colour: strong text in bold, code in cyan without its backticks,
    examples dimmed. Without: the same words, ``**`` dropped and backticks kept,
    since they are then the only mark of code.
    """
    def inline(match: re.Match[str]) -> str:
        code, strong = match.groups()
        if strong is not None:
            return style(strong, "bold")
        return style(code, "cyan") if style.colour else match.group(0)

    out = []
    for line in text.splitlines(keepends=True):
        if line.startswith("    ") and line.strip():
            out.append(style(line.rstrip("\n"), "dim") + "\n" if style.colour else line)
        else:
            out.append(_INLINE.sub(inline, line))
    return "".join(out)
