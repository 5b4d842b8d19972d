"""`ppy-check`: the region rules over a source tree, for pre-commit and CI."""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from pathlib import Path

from ppy_check.config import ConfigError, find_pyproject, iter_files, load_config, validate_codes
from ppy_check.messages import ALL_CODES
from ppy_check.output import FORMATS, RENDERERS, statistics
from ppy_check.rules import explain
from ppy_check.runner import run

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR = 0, 1, 2


def _codes(text: str) -> list[str]:
    return [c.strip() for c in text.split(",") if c.strip()]


def build_parser() -> argparse.ArgumentParser:
    from ppy_check import __version__

    parser = argparse.ArgumentParser(
        prog="ppy-check",
        description="Check ppy regions (functions decorated with @ppy.opt / @ppy.pure) without importing or running them.",
        epilog=f"Rule codes: {', '.join(ALL_CODES)}. Exit status: 0 clean, 1 findings, 2 usage or internal error.",
    )
    parser.add_argument("paths", nargs="*", type=Path, help="files or folders to check (default: .)")
    parser.add_argument("--output-format", choices=FORMATS, default="concise", help="how to print findings (default: concise)")
    parser.add_argument("--select", action="append", default=[], metavar="CODE[,CODE]", help="only these rule codes")
    parser.add_argument("--ignore", action="append", default=[], metavar="CODE[,CODE]", help="skip these rule codes")
    parser.add_argument("--explain", metavar="CODE", help="print a rule's documentation and exit")
    parser.add_argument("--statistics", action="store_true", help="print a count per rule instead of each finding")
    parser.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings")
    parser.add_argument("--config", type=Path, metavar="PYPROJECT", help="read [tool.ppy] from this file instead of the nearest pyproject.toml")
    parser.add_argument("--no-config", action="store_true", help="ignore pyproject.toml")
    parser.add_argument("-j", "--jobs", type=int, default=None, help="worker processes (default: one per core)")
    parser.add_argument("--version", action="version", version=f"ppy-check {__version__}")
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("ppy-check: interrupted", file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        return EXIT_ERROR
    except Exception as error:  # an internal error: one line, the traceback only on request
        print(f"ppy-check: internal error: {type(error).__name__}: {error} (set PPY_DEBUG=1 for a traceback)", file=sys.stderr)
        if os.environ.get("PPY_DEBUG"):
            traceback.print_exc()
        return EXIT_ERROR


def _main(argv: list[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.explain:
        text = explain(args.explain)
        if text is None:
            print(f"ppy-check: unknown rule code {args.explain!r} (codes: {', '.join(ALL_CODES)})", file=sys.stderr)
            return EXIT_ERROR
        sys.stdout.write(text)
        return EXIT_CLEAN
    if args.jobs is not None and args.jobs < 1:
        parser.error("--jobs must be at least 1")
    try:
        if args.config is not None and not args.config.is_file():
            raise ConfigError(f"{args.config}: no such config file")
        pyproject = None if args.no_config else (args.config or find_pyproject(Path.cwd()))
        config = load_config(pyproject)
        select = [c for item in args.select for c in _codes(item)]
        ignore = [c for item in args.ignore for c in _codes(item)]
        if select:
            config.select = validate_codes(select, "--select")
        config.ignore = config.ignore + validate_codes(ignore, "--ignore")
    except ConfigError as error:
        print(f"ppy-check: {error}", file=sys.stderr)
        return EXIT_ERROR

    paths = args.paths or [Path(".")]
    files, problems = [], []
    for item in iter_files(paths, config):
        (problems if isinstance(item, str) else files).append(item)
    result = run(files, config.codes(), args.jobs)
    problems.extend(result.errors)
    for problem in problems:
        print(f"ppy-check: {problem}", file=sys.stderr)

    if args.statistics:
        sys.stdout.write(statistics(result.diagnostics))
    else:
        sys.stdout.write(RENDERERS[args.output_format](result.diagnostics, result.sources))
    if args.output_format in ("concise", "full") and not args.statistics:
        count = len(result.diagnostics)
        summary = f"Found {count} finding{'s' if count != 1 else ''} in {result.files} file{'s' if result.files != 1 else ''}." if count else f"All checks passed ({result.files} file{'s' if result.files != 1 else ''})."
        print(summary, file=sys.stderr)
    if problems:
        return EXIT_ERROR
    if result.diagnostics and not args.exit_zero:
        return EXIT_FINDINGS
    return EXIT_CLEAN
