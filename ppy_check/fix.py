"""``ppy-check --fix``: apply the fixes findings carry to the files they were found in.

A file is checked again just before it is rewritten, from the bytes about to
be edited, so an edit never lands on text other than what it was computed
for; the file keeps its encoding (a BOM included) and its line endings.
"""

from __future__ import annotations

import tokenize
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from io import BytesIO
from pathlib import Path

from ppy_check.diagnostic import Diagnostic, Edit
from ppy_check.runner import check_text_of, read


@dataclass
class FileFix:
    """One file after ``--fix``: the findings fixed, those that remain, or why it was left alone."""

    fixed: list[Diagnostic]
    remaining: list[Diagnostic]
    error: str | None = None


def applicable(diagnostic: Diagnostic, unsafe: bool) -> bool:
    fix = diagnostic.fix
    return fix is not None and (fix.applicability == "safe" or unsafe)


def fix_file(name: str, path: Path, codes: Sequence[str], unsafe: bool = False) -> FileFix:
    """Check the file, apply the applicable fixes of its findings and write it back."""
    data = read(path)
    if isinstance(data, str):
        return FileFix([], [], data)
    checked = check_text_of(name, data, codes)
    if checked.error is not None:
        return FileFix([], [], checked.error)
    fixed = [d for d in checked.diagnostics if applicable(d, unsafe)]
    if not fixed:
        return FileFix([], checked.diagnostics)
    # Decoded by hand rather than by ppy_check.source, whose text has Python's newlines: the file keeps its own.
    encoding, _ = tokenize.detect_encoding(BytesIO(data).readline)
    text, applied = apply_edits(data.decode(encoding), [edit for d in fixed for edit in _edits(d)])
    fixed = [d for d in fixed if all(edit in applied for edit in _edits(d))]
    try:
        path.write_bytes(text.encode(encoding))
    except OSError as error:
        return FileFix([], checked.diagnostics, f"{name}: cannot write the fixes: {error.strerror or error}")
    return FileFix(fixed, [d for d in checked.diagnostics if d not in fixed])


def _edits(diagnostic: Diagnostic) -> tuple[Edit, ...]:
    return diagnostic.fix.edits if diagnostic.fix is not None else ()


def apply_edits(text: str, edits: Iterable[Edit]) -> tuple[str, set[Edit]]:
    """The text with the edits made (each distinct edit once; one overlapping an edit already taken is
    left out, as ruff leaves it for the next run), and the edits that were made."""
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(line: int, column: int) -> int:
        if line > len(lines):
            return len(text)
        return min(starts[line - 1] + column - 1, starts[line])

    taken: list[tuple[int, int, Edit]] = []
    for edit in sorted(set(edits), key=lambda e: (e.line, e.column, e.end_line, e.end_column)):
        start, end = offset(edit.line, edit.column), offset(edit.end_line, edit.end_column)
        if taken and start < taken[-1][1]:
            continue
        taken.append((start, end, edit))
    for start, end, edit in reversed(taken):
        text = text[:start] + edit.content + text[end:]
    return text, {edit for _, _, edit in taken}
