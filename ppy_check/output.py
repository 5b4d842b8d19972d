"""Render diagnostics for people (concise, full) and for machines (json, github, sarif)."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable

from ppy_check.diagnostic import Diagnostic
from ppy_check.rules import RULES

FORMATS = ("concise", "full", "json", "github", "sarif")


def concise(diagnostics: list[Diagnostic], sources: dict[str, list[str]]) -> str:
    return "".join(d.concise() + "\n" for d in diagnostics)


def full(diagnostics: list[Diagnostic], sources: dict[str, list[str]]) -> str:
    out = []
    for d in diagnostics:
        out.append(d.concise())
        lines = sources.get(d.path, [])
        if 0 < d.line <= len(lines):
            text = lines[d.line - 1].rstrip("\n").expandtabs(4)
            gutter = f"{d.line:>5} | "
            out.append(gutter + text)
            out.append(" " * (len(gutter) + d.column - 1) + "^")
        out.append("")
    return "\n".join(out) + ("\n" if out else "")


def as_json(diagnostics: list[Diagnostic], sources: dict[str, list[str]]) -> str:
    return json.dumps([d.as_json() for d in diagnostics], indent=2) + "\n"


def _escape(text: str, property_value: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if property_value else text


def github(diagnostics: list[Diagnostic], sources: dict[str, list[str]]) -> str:
    return "".join(
        f"::error file={_escape(d.path, True)},line={d.line},col={d.column},title={d.code}::"
        f"{_escape(d.code + ' ' + d.message)}\n"
        for d in diagnostics
    )


def sarif(diagnostics: list[Diagnostic], sources: dict[str, list[str]]) -> str:
    from ppy_check import __version__

    rules = [
        {"id": code, "shortDescription": {"text": module.SUMMARY}, "fullDescription": {"text": (module.__doc__ or "").strip()}}
        for code, module in RULES.items()
    ]
    results = [
        {
            "ruleId": d.code,
            "level": "error",
            "message": {"text": d.message},
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": {"uri": d.path},
                    "region": {"startLine": d.line, "startColumn": d.column},
                },
                "logicalLocations": [{"name": d.region, "kind": "function"}] if d.region else [],
            }],
        }
        for d in diagnostics
    ]
    document = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{"tool": {"driver": {"name": "ppy-check", "version": __version__, "rules": rules}}, "results": results}],
    }
    return json.dumps(document, indent=2) + "\n"


RENDERERS: dict[str, Callable[[list[Diagnostic], dict[str, list[str]]], str]] = {
    "concise": concise, "full": full, "json": as_json, "github": github, "sarif": sarif,
}


def statistics(diagnostics: list[Diagnostic]) -> str:
    counts = Counter(d.code for d in diagnostics)
    width = max((len(str(n)) for n in counts.values()), default=1)
    return "".join(
        f"{count:>{width}}  {code:<16} {RULES[code].SUMMARY}\n" for code, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    )
