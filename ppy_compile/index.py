"""A file's entry in the cache's index: its key (the file's code, comments aside), what a build records in
it, and whether the files it was built from still read the same."""

from __future__ import annotations

import io
import tokenize
from typing import Any

from ppy_check.diagnostic import Diagnostic
from ppy_check.source import file_digest
from ppy_check.suppression import directives
from ppy_compile.keys import light_identity, sha
from ppy_compile.options import BuildOptions


def index_key(origin: str, text: str, options: BuildOptions) -> str:
    """The index entry's key: the file's tokens and where each stands, less its comments other than
    suppressions (which change what runs compiled), so rewording a comment stays a cache hit."""
    return sha("source", light_identity(options), origin, _code_of(text))


def _code_of(text: str) -> str:
    kept = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in (tokenize.COMMENT, tokenize.NL) and not any(directives(token.string)):
                continue  # a comment, or the end of a line that holds no code
            if token.type in (tokenize.NEWLINE, tokenize.DEDENT, tokenize.ENDMARKER):
                kept.append(f"{token.type}")  # where they stand moves with the comments before them
                continue
            kept.append(f"{token.type} {token.start[0]} {token.start[1]} {token.string}")
    except (tokenize.TokenError, SyntaxError):
        return "text\0" + text  # not tokenizable: the text as it is
    return "tokens\0" + "\n".join(kept)


def dependencies_changed(dependencies: Any) -> bool:
    """Whether any of these files (path -> the sha256 a build compiled) reads differently now."""
    if not isinstance(dependencies, dict):
        return True
    for path, digest in dependencies.items():
        try:
            if file_digest(path) != digest:
                return True
        except (OSError, TypeError):
            return True
    return False


def diagnostics_json(diagnostics: list[Diagnostic]) -> list[dict[str, Any]]:
    return [d.as_json() for d in diagnostics]
