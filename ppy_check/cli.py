"""`ppy-check`: the region rules over a source tree, for pre-commit, editors and CI."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from ppy_check.config import ConfigError, did_you_mean
from ppy_check.diagnostic import Diagnostic
from ppy_check.fix import applicable, fix_file
from ppy_check.messages import KNOWN_CODES, OPT_IN_CODES
from ppy_check.output import FORMATS, RENDERERS, statistics
from ppy_check.runner import RunResult, Target, display, run
from ppy_check.selection import Selection, select_files
from ppy_check.terminal import Style, plural, render_markdown, stdout_closed, wants_colour

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2
STDIN = "-"


def _codes(text: str) -> list[str]:
    return [c.strip() for c in text.split(",") if c.strip()]


def _help_formatter(prog: str) -> argparse.HelpFormatter:
    """argparse's own formatter at the width shutil would find (``COLUMNS``, else the terminal's, else 80):
    argparse imports shutil for it when each argument is added, a tenth of a start whose results are kept."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        columns = 0
    if columns <= 0:
        try:
            columns = os.get_terminal_size(sys.__stdout__.fileno()).columns if sys.__stdout__ else 0
        except (AttributeError, ValueError, OSError):
            columns = 0
    return argparse.HelpFormatter(prog, width=(columns or 80) - 2)


def build_parser() -> argparse.ArgumentParser:
    from ppy_check import __version__

    parser = argparse.ArgumentParser(
        prog="ppy-check",
        formatter_class=_help_formatter,
        description="Check ppy regions (functions decorated with @ppy.opt / @ppy.pure) without importing or running them.",
        epilog=f"Rule codes: {', '.join(KNOWN_CODES)} (opt-in: {', '.join(OPT_IN_CODES)}). "
               "Exit status: 0 clean, 1 findings, 2 usage or internal error.",
    )
    parser.add_argument("paths", nargs="*", type=Path, help="files or folders to check (default: .); - reads standard input")
    parser.add_argument("--output-format", choices=FORMATS, default="concise", help="how to print findings (default: concise)")
    parser.add_argument("--select", action="append", default=[], metavar="CODE[,CODE]",
                        help="only these rule codes, or codes by prefix (--select ppy: the default rules)")
    parser.add_argument("--extend-select", action="append", default=[], metavar="CODE[,CODE]",
                        help="these rule codes too (the opt-in ones, say)")
    parser.add_argument("--ignore", action="append", default=[], metavar="CODE[,CODE]",
                        help="skip these rule codes, or codes by prefix")
    parser.add_argument("--explain", metavar="CODE", help="print a rule's documentation and exit")
    parser.add_argument("--fix", action="store_true",
                        help="apply the fixes findings carry (removing suppressions that silence nothing) and report the rest")
    parser.add_argument("--unsafe-fixes", action="store_true",
                        help="with --fix, also apply fixes that may change what the code means")
    parser.add_argument("--statistics", action="store_true", help="print a count per rule instead of each finding")
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    add_selection_options(parser)
    parser.add_argument("--stdin-filename", metavar="PATH",
                        help="the name of the file read from standard input: reported as such, and configured as such")
    parser.add_argument("-j", "--jobs", type=int, default=None, help="worker processes (default: one per core)")
    parser.add_argument("--no-cache", action="store_true",
                        help="check every file anew, neither reading nor keeping results in ppy's cache (by default a "
                             "file is checked again only when it, or a file its regions import, changed; also "
                             "PPY_CHECK_NO_CACHE=1)")
    parser.add_argument("--version", action="version", version=f"ppy-check {__version__}")
    return parser


def add_selection_options(parser: argparse.ArgumentParser) -> None:
    """The options that choose files and their configuration: ``ppy build`` takes the same ones."""
    parser.add_argument("--config", type=Path, metavar="PYPROJECT", help="read [tool.ppy] from this file instead of the nearest pyproject.toml")
    parser.add_argument("--no-config", action="store_true", help="ignore pyproject.toml")
    parser.add_argument("--exclude", action="append", default=None, metavar="PATTERN[,PATTERN]",
                        help="skip files and folders matching these patterns, instead of the configured exclude")
    parser.add_argument("--extend-exclude", action="append", default=[], metavar="PATTERN[,PATTERN]",
                        help="skip these patterns too, beside the configured exclude")
    parser.add_argument("--force-exclude", action="store_true",
                        help="apply exclude patterns to paths named on the command line too (what pre-commit needs)")


def selection_from(args: argparse.Namespace) -> Selection:
    """The file selection the command line asks for (ConfigError for a bad configuration)."""
    return Selection(
        config=args.config, no_config=args.no_config,
        select=[c for item in getattr(args, "select", []) for c in _codes(item)],
        extend_select=[c for item in getattr(args, "extend_select", []) for c in _codes(item)],
        ignore=[c for item in getattr(args, "ignore", []) for c in _codes(item)],
        exclude=None if args.exclude is None else [p for item in args.exclude for p in _codes(item)],
        extend_exclude=[p for item in args.extend_exclude for p in _codes(item)],
        force_exclude=args.force_exclude,
    )


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("ppy-check: interrupted", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:  # the reader of the output went away (`ppy-check . | head`): nothing to say
        stdout_closed()
        return EXIT_ERROR
    except Exception as error:  # an internal error: one line, the traceback only on request
        print(f"ppy-check: internal error: {type(error).__name__}: {error} (set PPY_DEBUG=1 for a traceback)", file=sys.stderr)
        if os.environ.get("PPY_DEBUG"):
            import traceback  # only for this rare failure, not at every start

            traceback.print_exc()
        return EXIT_ERROR


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except BrokenPipeError:
        # `--help` or `--version` to a reader that went away (Python 3.11's argparse ignores it itself): no check
        # ran, so nothing is claimed by exiting 0 as argparse does after printing.
        stdout_closed()
        return 0
    if args.explain:
        from ppy_check.rules import explain  # the rule modules import the model builder: only when asked

        text = explain(args.explain)
        if text is None:
            print(f"ppy-check: unknown rule code {args.explain!r}{did_you_mean(args.explain)} "
                  f"(codes: {', '.join(KNOWN_CODES)})", file=sys.stderr)
            return EXIT_ERROR
        sys.stdout.write(render_markdown(text, Style(wants_colour(sys.stdout))))
        return EXIT_CLEAN
    if args.jobs is not None and args.jobs < 1:
        parser.error("--jobs must be at least 1")
    reads_stdin = any(str(p) == STDIN for p in args.paths) or (args.stdin_filename is not None and not args.paths)
    if args.stdin_filename is not None and not reads_stdin:
        parser.error("--stdin-filename names standard input: give - as the path, or no path")
    if args.fix and reads_stdin:
        parser.error("--fix rewrites files: it does not take standard input")
    if args.unsafe_fixes and not args.fix:
        parser.error("--unsafe-fixes applies fixes with --fix: give both")
    try:
        selection = selection_from(args)
        targets, problems = _targets(args, selection, reads_stdin)
    except ConfigError as error:
        print(f"ppy-check: {error}", file=sys.stderr)
        return EXIT_ERROR

    result = run(targets, args.jobs, keep=not args.no_cache)
    fixed = _fix(result, targets, args.unsafe_fixes) if args.fix else 0
    problems += result.errors
    for warning in result.warnings:
        print(f"ppy-check: warning: {warning}", file=sys.stderr)
    for problem in problems:
        print(f"ppy-check: {problem}", file=sys.stderr)
    if args.statistics:
        sys.stdout.write(statistics(result.diagnostics))
    else:
        style = Style(wants_colour(sys.stdout) and args.output_format in ("concise", "full"))
        sys.stdout.write(RENDERERS[args.output_format](result.diagnostics, result.sources, style))
    if args.output_format in ("concise", "full") and not args.statistics:
        print(summary(result, len(problems), fixed, fixable(result.diagnostics, args)), file=sys.stderr)
    if problems:
        return EXIT_ERROR
    if result.diagnostics and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN


def _targets(args: argparse.Namespace, selection: Selection, reads_stdin: bool) -> tuple[list[Target], list[str]]:
    paths = [p for p in args.paths if str(p) != STDIN]
    if not paths and not reads_stdin:
        paths = [Path(".")]
    targets: list[Target] = []
    problems: list[str] = []
    if reads_stdin:
        stdin = _stdin_target(args, selection)
        if stdin is not None:
            targets.append(stdin)
    for item in select_files(paths, selection):
        if isinstance(item, str):
            problems.append(item)
        else:
            path, config = item
            targets.append(Target(display(path), tuple(config.codes_for(path)), path))
    return targets, problems


def _stdin_target(args: argparse.Namespace, selection: Selection) -> Target | None:
    name = args.stdin_filename
    path = Path(name) if name is not None else Path(STDIN)
    config = selection.for_path(path if name is not None else Path(os.curdir))
    if name is not None and config.force_exclude and config.force_excluded(path):
        return None  # ruff's behaviour: an excluded buffer is not checked
    codes = config.codes_for(path) if name is not None else config.codes()
    return Target(name if name is not None else STDIN, tuple(codes), path, sys.stdin.buffer.read())


def _fix(result: RunResult, targets: list[Target], unsafe: bool) -> int:
    """Apply the fixes of the findings in ``result`` to their files; the findings left are ``result``'s now.
    How many were fixed."""
    by_name = {target.name: target for target in targets}
    fixed = 0
    remaining: list[Diagnostic] = []
    for name in dict.fromkeys(d.path for d in result.diagnostics):
        found = [d for d in result.diagnostics if d.path == name]
        target = by_name.get(name)
        if target is None or not any(applicable(d, unsafe) for d in found):
            remaining += found
            continue
        outcome = fix_file(name, target.path, target.codes, unsafe)
        if outcome.error is not None:
            result.errors.append(outcome.error)
            remaining += found
            continue
        fixed += len(outcome.fixed)
        remaining += outcome.remaining
    result.diagnostics = sorted(remaining)
    return fixed


def fixable(diagnostics: list[Diagnostic], args: argparse.Namespace) -> str:
    """What --fix (or --unsafe-fixes) would fix among the findings left, as a clause for the summary; "" for nothing."""
    safe = sum(1 for d in diagnostics if applicable(d, False))
    unsafe = sum(1 for d in diagnostics if applicable(d, True)) - safe
    parts = []
    if safe and not args.fix:
        parts.append(f"{safe} fixable with --fix")
    if unsafe and not args.unsafe_fixes:
        parts.append(f"{unsafe} {'more ' if parts else 'fixable '}with --fix --unsafe-fixes")
    return f" ({', '.join(parts)})" if parts else ""


def summary(result: RunResult, problems: int, fixed: int = 0, fixable: str = "") -> str:
    """One line that agrees with the exit status: findings, files with findings, and what could not be checked."""
    line = _summary(result, problems, fixable)
    return f"Fixed {plural(fixed, 'finding')}. {line}" if fixed else line


def _summary(result: RunResult, problems: int, fixable: str) -> str:
    count = len(result.diagnostics)
    with_findings = len({d.path for d in result.diagnostics})
    checked = result.files - len(result.errors)  # each run error is one file that was not checked
    if count:
        found = f"Found {plural(count, 'finding')} in {plural(with_findings, 'file')}{fixable}"
    elif problems:
        found = f"No findings in {plural(checked, 'file')} checked" if checked else "Nothing checked"
    else:
        return f"All checks passed ({plural(checked, 'file')})."
    if problems:
        return f"{found}; {plural(problems, 'path')} could not be checked (above)."
    return f"{found}."
