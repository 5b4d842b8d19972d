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
    return changed_dependency(dependencies) is not None


def changed_dependency(dependencies: Any) -> str | None:
    """The first of these files (path -> the sha256 a build compiled) that reads differently now, or None;
    an entry that is not such a mapping is "the index entry" (PPY_LOG=cache names the file)."""
    if not isinstance(dependencies, dict):
        return "the index entry"
    for path, digest in dependencies.items():
        try:
            if file_digest(path) != digest:
                return str(path)
        except (OSError, TypeError):
            return str(path)
    return None


def last_key(origin: str) -> str:
    """Where PPY_LOG=cache records what a file's last build was keyed by, to say why the next one missed."""
    return sha("last", origin)


def last_record(origin: str, text: str, options: BuildOptions) -> dict[str, str]:
    return {"identity": sha(light_identity(options)), "code": sha(_code_of(text))}


def why_missed(previous: dict[str, Any] | None, now: dict[str, str]) -> str:
    """Why a file has no index entry now, from what its last build (logged) was keyed by."""
    if previous is None:
        return "no entry"
    if previous.get("identity") != now["identity"]:
        return "the options or torch changed"
    if previous.get("code") != now["code"]:
        return "the file changed"
    return "no entry"


def diagnostics_json(diagnostics: list[Diagnostic]) -> list[dict[str, Any]]:
    return [d.as_json() for d in diagnostics]
