"""A suppression comment silences a finding on its line (opt-in: not selected by default).

**What.** A `# ppy: ignore[...]` comment, or a ppy code in a
`# type: ignore[...]` comment, that silences no finding on its line: a code
listed there that the line does not produce, or a bare `# ppy: ignore` on a
line with no finding at all. Only real comments count, not strings that show
one. A bare `# type: ignore` and mypy's own codes are mypy's business (its
`warn_unused_ignores` reports those). Which findings a comment silences is
worked out with every rule on, so a comment stays needed while its rule is
switched off in one configuration. Turn this rule on with
`extend-select = ["ppy-unused-ignore"]` in `[tool.ppy]` or
`--extend-select ppy-unused-ignore`; a comment listing `ppy-unused-ignore`
keeps it quiet on that line.

**Why.** A suppression outlives the problem it silenced: the loop is removed,
the comment stays, and it will hide the next finding on that line without
anyone deciding to. This is ruff's RUF100 and mypy's `unused-ignore`.

**Example.**

    @ppy.opt(3)
    def scale(x: torch.Tensor, factor: float) -> torch.Tensor:
        return x * factor  # ppy: ignore[ppy-loop]      (there is no loop)

**Fix.** Remove the comment, or the codes in it that silence nothing:
`ppy-check --extend-select ppy-unused-ignore --fix` does it (a comment left
with no code goes, and its line when it stood alone; mypy's codes and the
rest of the comment stay).
"""

from __future__ import annotations

from collections.abc import Iterator

from ppy_check import messages as m
from ppy_check.diagnostic import Diagnostic, Edit, Fix
from ppy_check.module import ModuleRegions
from ppy_check.suppression import Directive, comment_directives

CODE = m.UNUSED_IGNORE
SUMMARY = "a suppression comment silences nothing (opt-in)"

# What a finding was silenced by: its line, the directive's column, and the code
# the directive listed (None for a bare directive).
Use = tuple[int, int, "str | None"]


def check(module: ModuleRegions, used: set[Use]) -> Iterator[Diagnostic]:
    """The unused directives of ``module``, given what the other rules' findings were silenced by."""
    found = comment_directives(module.text)
    keep_quiet = {line for line, d in found if d.codes is not None and CODE in d.codes}
    for line, directive in found:
        if line in keep_quiet:
            continue
        unused = list(_unused(line, directive, used))
        fix = _fix(module.lines[line - 1], line, directive, unused) if unused else None
        for code in unused:
            yield _diagnostic(module, line, directive, code, fix)


def _unused(line: int, directive: Directive, used: set[Use]) -> Iterator[str | None]:
    if directive.codes is None:
        # A bare `# type: ignore` may be there for mypy alone.
        if directive.kind == "ppy" and (line, directive.column, None) not in used:
            yield None
        return
    for code in directive.codes:
        if code == CODE or (directive.kind == "type" and not code.startswith("ppy-")):
            continue
        if (line, directive.column, code) not in used:
            yield code


def _fix(text: str, line: int, directive: Directive, unused: list[str | None]) -> Fix:
    """The directive's codes that silence nothing taken out of it, or the directive itself when none is
    left; one fix for all of its findings (each carries the same, applied once). Safe: which findings a
    comment silences was worked out with every rule on, so nothing it silences in any configuration goes."""
    start, end = directive.column, directive.column + len(directive.text)
    kept = [code for code in directive.codes or () if code not in unused]
    if kept:
        content = f"# {directive.kind}: ignore[{', '.join(kept)}]"
        codes = ", ".join(m.message(m.FIX_CODE, code=code).render() for code in unused)
        return Fix(m.message(m.FIX_REMOVE_CODES, codes=codes, comment=directive.text).render(),
                   (Edit(line, start + 1, line, end + 1, content),))
    message = m.message(m.FIX_REMOVE_COMMENT, comment=directive.text).render()
    after = text[end:]
    if after.strip() and not after.lstrip().startswith("#"):
        # The comment goes on (`# ppy: ignore[ppy-loop] since ...`): it stays a comment.
        return Fix(message, (Edit(line, start + 1, line, end + 1, "#"),))
    before = text[:start].rstrip()
    if not before:
        # The comment was the line's only content: the line goes too.
        return Fix(message, (Edit(line, 1, line + 1, 1, ""),))
    return Fix(message, (Edit(line, len(before) + 1, line, end + 1, ""),))


def _diagnostic(module: ModuleRegions, line: int, directive: Directive, code: str | None, fix: Fix | None) -> Diagnostic:
    holders = [r for r in module.regions if r.site.line <= line <= (r.node.end_lineno or r.node.lineno)]
    region = max(holders, key=lambda r: r.site.line).name if holders else ""
    if region:
        template = m.UNUSED_IGNORE_ALL if code is None else m.UNUSED_IGNORE_CODE
    else:
        template = m.UNUSED_IGNORE_ALL_OUTSIDE if code is None else m.UNUSED_IGNORE_CODE_OUTSIDE
    message = template.format(region=region, code=code, comment=directive.text)
    # The whole comment: what a fix removes or rewrites.
    return Diagnostic(module.path, line, directive.column + 1, CODE, message, region, line,
                      directive.column + len(directive.text) + 1, fix)
