"""Check one file's text: parse, find regions, run the rules, apply suppressions."""

from __future__ import annotations

import re
import time
from collections.abc import Iterable

from ppy_check import messages as m
from ppy_check.diagnostic import Diagnostic, Edit, Fix
from ppy_check.imports import one_read
from ppy_check.model import budgets
from ppy_check.model.builder import Analysis, build_model
from ppy_check.model.problems import Problems, Suggestion
from ppy_check.module import ModuleRegions
from ppy_check.region import Region
from ppy_check.rules import RULES, unused_ignore
from ppy_check.suppression import silencer

# A file that never imports ppy cannot hold a region; most files stop here.
_MAY_HOLD_REGION = re.compile(rb"^[ \t]*(?:from[ \t]+ppy\b|import[ \t]+[^\n#]*\bppy\b)", re.MULTILINE)


def may_hold_region(data: bytes) -> bool:
    return _MAY_HOLD_REGION.search(data) is not None


def suppressed(line_text: str, code: str, type_comments: bool = True) -> bool:
    """Whether a comment on the line silences ``code`` (see ``ppy_check.suppression.silencer``)."""
    return silencer(line_text, code, type_comments) is not None


def _column(lines: list[str], line: int, byte_offset: int) -> int:
    """ast gives UTF-8 byte offsets; people count characters, from 1."""
    if 1 <= line <= len(lines):
        return len(lines[line - 1].encode("utf-8")[:byte_offset].decode("utf-8", "replace")) + 1
    return byte_offset + 1


def _fix(suggestion: Suggestion | None, lines: list[str]) -> Fix | None:
    """A rule's suggested edit placed in the file, its columns counted in characters as a finding's are."""
    if suggestion is None:
        return None
    span = suggestion.span
    edit = Edit(span.line, _column(lines, span.line, span.column), span.end_line,
                _column(lines, span.end_line, span.end_column), suggestion.content)
    return Fix(suggestion.message, (edit,), "safe" if suggestion.safe else "unsafe")


# The rules that read a function's syntax alone: they also check the helpers a region calls.
STRUCTURAL = tuple(code.value for code in m.Code if code.structural)
EMPTY_ANALYSIS = Analysis(None, Problems())


def analyse(region: Region, deadline: float | None = None) -> Analysis:
    """The region's model (or what stopped it), built once and shared by every rule; past ``deadline`` (a
    time.monotonic()) building stops with a finding."""
    cached = region.analysis
    if cached is None:
        with one_read():  # a helper's file reached twice is one text
            cached = region.analysis = build_model(region, deadline)
    return cached


def check_region(region: Region, path: str, lines: list[str], codes: Iterable[str] | None = None,
                 deadline: float | None = None) -> list[Diagnostic]:
    wanted = set(codes) if codes is not None else set(RULES)
    analysis = analyse(region, deadline)
    found: dict[tuple[int, int, str, str], Diagnostic] = {}
    any_finding = False
    for code, rule in RULES.items():
        for finding in rule.check(region, analysis):
            any_finding = True
            if code not in wanted:
                continue
            span = finding.span
            column = _column(lines, span.line, span.column)
            key = (span.line, column, finding.code, finding.message)
            found.setdefault(key, Diagnostic(path, span.line, column, finding.code, finding.message, region.name,
                                             span.end_line, _column(lines, span.end_line, span.end_column),
                                             _fix(finding.fix, lines)))
    for callee, context, anchor in analysis.callees:
        # A helper's loops and branches are the region's: the structural rules read its syntax too.
        for code in STRUCTURAL:
            if code not in wanted:
                continue
            for finding in RULES[code].check(callee, EMPTY_ANALYSIS):
                any_finding = True
                span = anchor or finding.span
                column = _column(lines, span.line, span.column)
                message = finding.text.seen_from(region.name, context).render()
                key = (span.line, column, finding.code, message)
                found.setdefault(key, Diagnostic(path, span.line, column, finding.code, message, region.name,
                                                 span.end_line, _column(lines, span.end_line, span.end_column)))
    if analysis.model is None and not any_finding:
        # The builder refused something no rule explains: never let it pass as valid.
        line, column = region.node.lineno, _column(lines, region.node.lineno, region.node.col_offset)
        message = m.message(m.UNSUPPORTED_INTERNAL, region=region.name).render()
        found.setdefault((line, column, m.UNSUPPORTED, message),
                         Diagnostic(path, line, column, m.UNSUPPORTED, message, region.name))
    return sorted(found.values())


def check_source(text: str, path: str = "<string>", codes: Iterable[str] | None = None) -> list[Diagnostic]:
    """Every finding in one file, suppressions applied, in line order."""
    return check_module(ModuleRegions.load(path, text), codes)


def check_module(module: ModuleRegions, codes: Iterable[str] | None = None) -> list[Diagnostic]:
    """``codes`` None is the default selection (ALL_CODES): opt-in codes run only when named."""
    wanted = set(m.ALL_CODES if codes is None else codes)
    if module.syntax_error is not None:
        return [module.syntax_error] if m.SYNTAX in wanted else []
    audit = m.UNUSED_IGNORE in wanted
    # Whether a comment is needed depends on every finding it could silence, selected or not.
    region_codes = list(m.ALL_CODES) if audit else [code for code in m.ALL_CODES if code in wanted]
    lines = module.lines
    results: list[Diagnostic] = []
    used: set[unused_ignore.Use] = set()
    # One file's regions share one time budget: a file that runs away costs seconds, and each region it did
    # not finish is refused with a finding (budgets.FILE_SECONDS).
    deadline = time.monotonic() + budgets.file_seconds()
    for region in module.regions:
        for diagnostic in check_region(region, module.path, lines, region_codes, deadline):
            line_text = lines[diagnostic.line - 1] if 0 < diagnostic.line <= len(lines) else ""
            directive = silencer(line_text, diagnostic.code)
            if directive is not None:
                used.add((diagnostic.line, directive.column, None if directive.codes is None else diagnostic.code))
            elif diagnostic.code in wanted:
                results.append(diagnostic)
    if audit:
        results += unused_ignore.check(module, used)
    return sorted(results)
