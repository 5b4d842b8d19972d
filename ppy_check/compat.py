"""What differs between the Python releases ppy runs on (3.10 and later), in one place."""

from __future__ import annotations

import ast
import sys
from typing import TypeGuard

# `try: ... except* E:` is 3.11's (ast.TryStar); on 3.10 no source can hold one.
TRY_STATEMENTS: tuple[type[ast.stmt], ...] = (ast.Try, ast.TryStar) if sys.version_info >= (3, 11) else (ast.Try,)


def is_try(node: ast.AST) -> TypeGuard[ast.Try | ast.TryStar]:
    return isinstance(node, TRY_STATEMENTS)


def add_note(error: BaseException, note: str) -> None:
    """`BaseException.add_note` (3.11); on 3.10 the same `__notes__` list, which pytest's traceback shows."""
    if sys.version_info >= (3, 11):
        error.add_note(note)
    else:
        notes = getattr(error, "__notes__", None)
        if not isinstance(notes, list):
            notes = []
            error.__notes__ = notes
        notes.append(note)
