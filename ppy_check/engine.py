"""Check one file's text: parse, find regions, run the rules, apply suppressions."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, replace

from ppy_check import messages as m
from ppy_check.diagnostic import Diagnostic, Edit, Fix
from ppy_check.imports import one_read
from ppy_check.model import budgets
from ppy_check.model.builder import Analysis, build_model
from ppy_check.messages import Message
from ppy_check.model.problems import Problems, Suggestion
from ppy_check.module import ModuleRegions
from ppy_check.prefilter import may_hold_region as may_hold_region
from ppy_check.region import Region
from ppy_check.rules import RULES, unused_ignore
from ppy_check.suppression import silencer

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
    cached: Analysis | None = region.analysis
    if cached is None:
        with one_read():  # a helper's file reached twice is one text
            cached = region.analysis = build_model(region, deadline)
    return cached


@dataclass(frozen=True)
class Placed:
    """A region's finding placed in its file, with its text before rendering. One in a helper of that file
    (outside the region's own lines) has a ``key``: where it is and what it says whoever reaches it, by which
    ``merged`` says it once for every region that reaches it."""

    diagnostic: Diagnostic
    text: Message
    key: tuple[int, int, str, str] | None = None


def _placed(region: Region, diagnostic: Diagnostic, text: Message) -> Placed:
    node = region.node
    in_region = node.lineno <= diagnostic.line <= (node.end_lineno or node.lineno)
    if not text.context or in_region or not text.opens_with_region():
        # A helper of another file is placed at the region's call of it (its anchor), inside the region: its own.
        return Placed(diagnostic, text)
    return Placed(diagnostic, text, (diagnostic.line, diagnostic.column, diagnostic.code, text.seen_from("", "").render()))


def region_findings(region: Region, path: str, lines: list[str], codes: Iterable[str] | None = None,
                    deadline: float | None = None) -> list[Placed]:
    """The region's findings as it alone would report them, each with what ``merged`` needs."""
    wanted = set(codes) if codes is not None else set(RULES)
    analysis = analyse(region, deadline)
    found: dict[tuple[int, int, str, str], Placed] = {}
    any_finding = False
    for code, rule in RULES.items():
        for finding in rule.check(region, analysis):
            any_finding = True
            if code not in wanted:
                continue
            span = finding.span
            column = _column(lines, span.line, span.column)
            key = (span.line, column, finding.code, finding.message)
            if key not in found:
                found[key] = _placed(region, Diagnostic(
                    path, span.line, column, finding.code, finding.message, region.name, span.end_line,
                    _column(lines, span.end_line, span.end_column), _fix(finding.fix, lines)), finding.text)
    for callee, context, anchor in analysis.callees:
        # A helper's loops and branches are the region's: the structural rules read its syntax too, and the tests
        # it decided at build time on this reach (the branch rule skips them).
        decided = frozenset(entry for entry in analysis.decided if entry[1] == context and entry[2] == anchor)
        reached = Analysis(None, Problems(), decided=decided) if decided else EMPTY_ANALYSIS
        for code in STRUCTURAL:
            if code not in wanted:
                continue
            for finding in RULES[code].check(callee, reached):
                any_finding = True
                span = anchor or finding.span
                column = _column(lines, span.line, span.column)
                text = finding.text.seen_from(region.name, context)
                key = (span.line, column, finding.code, text.render())
                if key not in found:
                    found[key] = _placed(region, Diagnostic(
                        path, span.line, column, finding.code, key[3], region.name, span.end_line,
                        _column(lines, span.end_line, span.end_column)), text)
    if analysis.model is None and not any_finding:
        # The builder refused something no rule explains: never let it pass as valid.
        line, column = region.node.lineno, _column(lines, region.node.lineno, region.node.col_offset)
        internal = m.message(m.UNSUPPORTED_INTERNAL, region=region.name)
        message = internal.render()
        found.setdefault((line, column, m.UNSUPPORTED, message),
                         Placed(Diagnostic(path, line, column, m.UNSUPPORTED, message, region.name), internal))
    return sorted(found.values(), key=lambda placed: placed.diagnostic)


def check_region(region: Region, path: str, lines: list[str], codes: Iterable[str] | None = None,
                 deadline: float | None = None) -> list[Diagnostic]:
    """The region's findings as it alone would report them (a helper's named as this region reaches it)."""
    return [placed.diagnostic for placed in region_findings(region, path, lines, codes, deadline)]


def merged(placed: Iterable[Placed]) -> list[Diagnostic]:
    """Findings of several regions of one file, each mistake once: a finding in a helper that several regions
    reach (or one region by several calls) is one finding, at the helper, naming each region and how it got there.
    Its ``region`` is the first of them, in the order given; ``regions`` all."""
    placed = list(placed)
    shared = _shared(placed)
    return sorted(dict.fromkeys(_as_merged(one, shared) for one in placed))


def merged_by_region(per_region: list[list[Placed]]) -> list[list[Diagnostic]]:
    """Each region's findings (``region_findings``), those in a shared helper as ``merged`` says them."""
    shared = _shared([one for found in per_region for one in found])
    return [[_as_merged(one, shared) for one in found] for found in per_region]


def _as_merged(placed: Placed, shared: dict[tuple[int, int, str, str], Diagnostic]) -> Diagnostic:
    return placed.diagnostic if placed.key is None else shared[placed.key]


def _shared(placed: list[Placed]) -> dict[tuple[int, int, str, str], Diagnostic]:
    """The one finding each group of shared findings (by place and text) becomes."""
    groups: dict[tuple[int, int, str, str], list[tuple[Diagnostic, Message, str]]] = {}
    for one in placed:
        if one.key is not None:
            groups.setdefault(one.key, []).append((one.diagnostic, one.text, one.text.context))
    result: dict[tuple[int, int, str, str], Diagnostic] = {}
    for key, group in groups.items():
        first, text, _ = group[0]
        if len(group) == 1:
            result[key] = first
            continue
        regions = tuple(dict.fromkeys(diagnostic.region for diagnostic, _, _ in group))
        reached = [(diagnostic.region, how) for diagnostic, _, how in group]
        if len(regions) == 1:
            text = text.in_helper(m.REACHED_SEPARATOR.join(how for _, how in reached))
        else:
            text = text.reached_by(reached)
        result[key] = replace(first, message=text.render(), regions=regions)
    return result


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
    placed = [one for region in module.regions
              for one in region_findings(region, module.path, lines, region_codes, deadline)]
    for diagnostic in merged(placed):
        line_text = lines[diagnostic.line - 1] if 0 < diagnostic.line <= len(lines) else ""
        directive = silencer(line_text, diagnostic.code)
        if directive is not None:
            used.add((diagnostic.line, directive.column, None if directive.codes is None else diagnostic.code))
        elif diagnostic.code in wanted:
            results.append(diagnostic)
    if audit:
        results += unused_ignore.check(module, used)
    return sorted(results)
