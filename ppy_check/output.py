"""Render diagnostics for people (concise, full) and for machines (json, github, sarif).

Only the formats for people take colour, and only when the caller's ``Style``
says so; the machine formats are the same bytes everywhere.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable

from ppy_check.diagnostic import Diagnostic
from ppy_check.terminal import Style, render_markdown

FORMATS = ("concise", "full", "json", "github", "sarif")

Renderer = Callable[[list[Diagnostic], dict[str, list[str]], Style], str]


def _location(d: Diagnostic, style: Style) -> str:
    if not style.colour:
        return d.concise()
    colon = style(":", "cyan")
    return f"{style(d.path, 'bold')}{colon}{d.line}{colon}{d.column}{colon} {style(d.code, 'bold', 'red')} {d.message}"


def concise(diagnostics: list[Diagnostic], sources: dict[str, list[str]], style: Style) -> str:
    return "".join(_location(d, style) + "\n" for d in diagnostics)


def full(diagnostics: list[Diagnostic], sources: dict[str, list[str]], style: Style) -> str:
    out = []
    for d in diagnostics:
        out.append(_location(d, style))
        lines = sources.get(d.path, [])
        if 0 < d.line <= len(lines):
            raw = lines[d.line - 1].rstrip("\n")
            gutter = f"{d.line:>5} | "
            out.append(style(gutter, "blue") + raw.expandtabs(4))
            start, end = _underlined(raw, d)
            out.append(" " * (len(gutter) + start) + style("^" * (end - start), "bold", "red"))
        out.append("")
    return "\n".join(out) + ("\n" if out else "")


def _underlined(raw: str, d: Diagnostic) -> tuple[int, int]:
    """The columns (0-based, tabs expanded, end exclusive) to underline on the finding's first line: its
    whole span there, to the end of the line's text when the span goes on to later lines; one at least."""
    first = d.column - 1
    last = d.end_column - 1 if d.end_line == d.line else len(raw.rstrip())
    start = len(raw[:first].expandtabs(4))
    end = len(raw[:max(last, first)].expandtabs(4))
    return start, max(end, start + 1)


def as_json(diagnostics: list[Diagnostic], sources: dict[str, list[str]], style: Style) -> str:
    return json.dumps([d.as_json() for d in diagnostics], indent=2) + "\n"


def _escape(text: str, property_value: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if property_value else text


def github(diagnostics: list[Diagnostic], sources: dict[str, list[str]], style: Style) -> str:
    return "".join(
        f"::error file={_escape(d.path, True)},line={d.line},col={d.column},endLine={d.end_line},"
        f"endColumn={d.end_column},title={d.code}::"
        f"{_escape(d.code + ' ' + d.message)}\n"
        for d in diagnostics
    )


def _sarif_rule(code: str) -> dict[str, object]:
    from ppy_check.rules import KNOWN_RULES

    module = KNOWN_RULES[code]
    doc = (module.__doc__ or "").strip()
    described = {"text": render_markdown(doc, Style(False)), "markdown": doc}
    return {
        "id": code,
        "shortDescription": {"text": module.SUMMARY},
        "fullDescription": described,
        # The rule's whole documentation, rather than a helpUri: ppy has no published address to point at,
        # and a link to a page that does not exist is worse than none.
        "help": described,
    }


def sarif(diagnostics: list[Diagnostic], sources: dict[str, list[str]], style: Style) -> str:
    from ppy_check import __version__
    from ppy_check.rules import KNOWN_RULES

    codes = list(KNOWN_RULES)
    results = [
        {
            "ruleId": d.code,
            "ruleIndex": codes.index(d.code),
            "level": "error",
            "message": {"text": d.message},
            "locations": [{
                "physicalLocation": {
                    "artifactLocation": {"uri": d.path},
                    "region": {"startLine": d.line, "startColumn": d.column,
                               "endLine": d.end_line, "endColumn": d.end_column},
                },
                # Every region the finding stands in: one, or each region inlining the helper it is in.
                "logicalLocations": [{"name": region, "kind": "function"} for region in d.regions],
            }],
        }
        for d in diagnostics
    ]
    driver = {"name": "ppy-check", "version": __version__,
              "rules": [_sarif_rule(code) for code in codes]}
    document = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        # Columns count characters, as ppy-check's other formats do.
        "runs": [{"tool": {"driver": driver}, "columnKind": "unicodeCodePoints", "results": results}],
    }
    return json.dumps(document, indent=2) + "\n"


RENDERERS: dict[str, Renderer] = {"concise": concise, "full": full, "json": as_json, "github": github, "sarif": sarif}


def statistics(diagnostics: list[Diagnostic]) -> str:
    if not diagnostics:
        return ""  # nothing to describe: a clean run, or one whose results were all kept, loads no rule
    # Imported here, as in sarif: the rule modules import the model builder, which a clean tree's check
    # (every file failing the prefilter) never needs.
    from ppy_check.rules import KNOWN_RULES

    counts = Counter(d.code for d in diagnostics)
    width = max((len(str(n)) for n in counts.values()), default=1)
    return "".join(
        f"{count:>{width}}  {code:<18} {KNOWN_RULES[code].SUMMARY}\n"
        for code, count in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    )
