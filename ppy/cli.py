"""`ppy`: check, build ahead of time, show the generated C++, manage the build cache."""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ppy_check.terminal import plural

if TYPE_CHECKING:
    from ppy_compile.preview import RegionPreview


def _jobs(text: str) -> int:
    try:
        jobs = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if jobs < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return jobs


def _parser() -> argparse.ArgumentParser:
    from ppy import __version__
    from ppy_check.cli import add_selection_options

    parser = argparse.ArgumentParser(prog="ppy", description="Straight-line PyTorch regions, checked and compiled to ATen C++.")
    parser.add_argument("--version", action="version", version=f"ppy {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.add_parser("check", help="the region rules over files or folders (same as ppy-check)", add_help=False)
    build = commands.add_parser("build", help="compile every region found under PATHS into the cache, ahead of time",
                                description="Compile every region found under PATHS into the cache, ahead of time. "
                                            "Files are chosen as ppy-check chooses them ([tool.ppy] exclude and "
                                            "include). Exit status: 0 all compiled, 1 a region did not, 2 usage error.")
    build.add_argument("paths", nargs="*", type=Path, help="files or folders (default: .)")
    add_selection_options(build)
    build.add_argument("-j", "--jobs", type=_jobs, default=None, metavar="N",
                       help="compilers run at once (default: one per core)")
    build.add_argument("-q", "--quiet", action="store_true", help="print findings and failures only: no progress, no summary")
    show = commands.add_parser("show", help="print the C++ a file's regions compile to")
    show.add_argument("file", type=Path, help="a Python file holding regions")
    show.add_argument("region", nargs="?", help="only this region's function")
    show.add_argument("-a", "--annotate", action="store_true",
                      help="each Python line of the region followed by the C++ statements it became")
    explain = commands.add_parser("explain", help="why each region of a file is compiled, runs as Python, or is invalid")
    explain.add_argument("target", help="FILE or FILE:REGION (a name or qualified name)")
    cache = commands.add_parser("cache", help="the build cache: `info`, `logs`, `clear` or `prune`")
    cache.add_argument("action", choices=["info", "logs", "clear", "prune"],
                       help="info: what it holds; logs: the logs of failed builds; clear: remove the modules and the "
                            "index; prune: remove what killed builds and ended processes left")
    cache.add_argument("--all", action="store_true", help="with clear: the bridge and precompiled header too "
                                                          "(a minute to build again)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["check"]:
        from ppy_check.cli import main as check

        return check(args_list[1:])
    try:
        status = _run(args_list)
        sys.stdout.flush()  # here, where a closed pipe is handled, not at exit
        return status
    except BrokenPipeError:
        # The reader took what it wanted and went (`ppy cache info | head -1`): nothing to say, and no failure, so a
        # pipeline under `set -o pipefail` passes. (ppy-check exits 2 there: its 0 would claim a clean tree.)
        from ppy_check.terminal import stdout_closed

        stdout_closed()
        return 0


def _run(args_list: list[str]) -> int:
    parser = _parser()
    args = parser.parse_args(args_list)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return {"build": _build, "show": _show, "cache": _cache, "explain": _explain}[args.command](args)
    except BrokenPipeError:
        raise
    except KeyboardInterrupt:
        print("ppy: interrupted", file=sys.stderr)
        return 2
    except Exception as error:  # one line, the traceback only on request
        print(f"ppy: {type(error).__name__}: {error} (set PPY_DEBUG=1 for a traceback)", file=sys.stderr)
        if os.environ.get("PPY_DEBUG"):
            traceback.print_exc()
        return 2


def _explain(args: argparse.Namespace) -> int:
    """Per region: compiled, Python fallback or invalid, and why; where its C++ is; which toolchain built it.

    Nothing is built: the cache says what was, the model what a build would make (an empty cache would
    otherwise cost the bridge and the precompiled header, minutes, just to print a verdict)."""
    from ppy_compile.pipeline import cached_module
    from ppy_compile.cache import Cache

    path, wanted = _split_target(args.target)
    source = _source("explain", path)
    if isinstance(source, int):
        return source
    origin = str(path.resolve())
    previews = _previews(path, source, wanted)
    if isinstance(previews, str):
        print(f"ppy explain: {previews}", file=sys.stderr)
        return 1
    cache = Cache.open()
    built = cached_module(origin, source, cache)
    missing = _compiler_problem()
    print(f"{path}  (cache {cache.root}; {_toolchain_line(missing)})")
    status = 0
    for preview in previews:
        head = f"  {preview.qualname} (line {preview.line}):"
        if preview.errors:
            status = 1
            print(f"{head} invalid, every call raises ppy.RegionError")
            for d in preview.errors:
                print(f"      {d.line}:{d.column}: {d.code} {d.message}")
        elif preview.fallback is not None:
            print(f"{head} runs as Python: {preview.fallback}")
        elif built is not None and preview.key in built.functions:
            print(f"{head} compiled at -O{preview.level}, C++ function {built.symbols[preview.key]} "
                  f"in {built.cpp_sources[preview.key]}")
        elif built is not None and preview.key in built.fallbacks:
            print(f"{head} runs as Python: {built.fallbacks[preview.key]}")
        elif missing is not None:
            print(f"{head} not built yet, and it cannot be: {missing}; until it is, every call runs as Python "
                  f"(it would compile at -O{preview.level} to C++ function {preview.symbol})")
        else:
            print(f"{head} not built yet: it compiles at -O{preview.level} to C++ function {preview.symbol} "
                  f"(`ppy build {path}` builds it now, else its first call does; `ppy show` prints it)")
    return status


def _split_target(target: str) -> tuple[Path, str]:
    """FILE or FILE:REGION as the file and the region's name (empty: every region)."""
    if ":" in target and not Path(target).exists():
        path_text, _, wanted = target.rpartition(":")
        return Path(path_text), wanted
    return Path(target), ""


def _source(command: str, path: Path) -> str | int:
    """The text of the one file a command reads, or its exit status after saying in one line why not."""
    from ppy_check.runner import read
    from ppy_check.source import SourceError, decode

    if os.path.isdir(path):
        what = {"show": "prints one file's C++", "explain": "explains one file's regions"}[command]
        print(f"ppy {command}: {path}: a folder; ppy {command} {what} "
              f"(`ppy-check {path}` checks a folder, `ppy build {path}` compiles one)", file=sys.stderr)
        return 2
    if not os.path.isfile(path):
        print(f"ppy {command}: {path}: no such file", file=sys.stderr)
        return 2
    data = read(path)
    if isinstance(data, str):
        print(f"ppy {command}: {data}", file=sys.stderr)
        return 2
    try:
        return decode(data, str(path)).text
    except SourceError as error:
        print(f"ppy {command}: {path}:{error.line}:{error.column}: {error.message}", file=sys.stderr)
        return 2


def _previews(path: Path, source: str, wanted: str) -> list[RegionPreview] | str:
    """The file's regions as a build would take them (those named ``wanted``, or all), or why there are none."""
    from ppy.errors import BuildError
    from ppy_compile.preview import preview_module

    try:
        selected = _selected(preview_module(str(path.resolve()), source), wanted)
    except BuildError as error:  # the file does not parse
        return str(error)
    return f"{path}: {selected}" if isinstance(selected, str) else selected


def _selected(previews: list[RegionPreview], wanted: str) -> list[RegionPreview] | str:
    """The regions a command asked for by name (qualified or not; every one for an empty name), or why none."""
    if not previews:
        return "no region in this file"
    if not wanted:
        return previews
    exact = [p for p in previews if p.qualname == wanted]
    chosen = exact or [p for p in previews if p.qualname.rsplit(".", 1)[-1] == wanted]
    if chosen:
        return chosen
    return f"no region named `{wanted}` (regions: {', '.join(p.qualname for p in previews)})"


def _compiler_problem() -> str | None:
    """Why nothing could be built here (no C++ compiler, no ninja), found without running anything; None: it could."""
    from ppy.errors import BuildError
    from ppy_compile.toolchain import toolchain

    try:
        toolchain()
    except BuildError as error:
        return str(error)
    return None


def _toolchain_line(missing: str | None) -> str:
    if missing is not None:
        return f"no toolchain: {missing}"
    try:
        from ppy_compile.drift import drift
        from ppy_compile.toolchain import toolchain

        return f"compiler {toolchain().cxx}, {drift().summary()}"
    except Exception as error:  # noqa: BLE001 - explain says what is missing rather than failing
        return f"no toolchain: {error}"


def _region_files(args: argparse.Namespace) -> tuple[list[tuple[Path, bytes]], list[str]]:
    """The files under the paths that may hold regions, chosen as ppy-check chooses them; and the problems."""
    from ppy_check.cli import selection_from
    from ppy_check.runner import region_candidates
    from ppy_check.selection import select_files

    files, problems = [], []
    for item in select_files(args.paths or [Path(".")], selection_from(args)):
        if isinstance(item, str):
            problems.append(item)
        else:
            files.append(item[0])
    candidates, unreadable = region_candidates(files)
    return candidates, problems + unreadable


def _build(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.text import Text

    from ppy.errors import BuildError
    from ppy_check.config import ConfigError
    from ppy_check.source import SourceError, decode
    from ppy_compile.cache import Cache
    from ppy_compile.pipeline import build_module
    from ppy_compile.shared import ensure_pch

    # Paths, messages and source are the user's text, never markup or emoji codes (`:100:`
    # is one), and a finding stays on one line for tools that parse `path:line:col:`.
    console = Console(stderr=True, markup=False, emoji=False, highlight=False, soft_wrap=True)
    try:
        files, problems = _region_files(args)
    except ConfigError as error:
        print(f"ppy build: {error}", file=sys.stderr)
        return 2
    if args.jobs is not None:
        os.environ["PPY_JOBS"] = str(args.jobs)  # read by the build, as from a user's environment
    for problem in problems:
        console.print(f"ppy: {problem}")
    failed = bool(problems)
    pch_failed = False
    regions = compiled = 0
    os.environ.setdefault("PPY_QUIET", "1")  # the bar below is the progress
    with Progress(TextColumn("{task.description}", markup=False), BarColumn(),
                  TextColumn("{task.completed}/{task.total} files", markup=False),
                  TimeElapsedColumn(), console=console, disable=args.quiet or not console.is_terminal) as progress:
        task = progress.add_task("ppy build", total=len(files))
        for path, data in files:
            progress.update(task, description=f"ppy build {path}")
            try:
                built = build_module(str(path.resolve()), decode(data, str(path)).text)
            except SourceError as error:
                console.print(f"{path}:{error.line}:{error.column}: ppy-syntax {error.message}")
                failed = True
                progress.advance(task)
                continue
            except (BuildError, OSError) as error:
                console.print(Text.assemble(f"{path}: ", ("cannot build", "red"), f": {error}"))
                failed = True
                progress.advance(task)
                continue
            if built.precompile_next and not pch_failed:  # made now: the files after this one (and images) have it
                try:
                    ensure_pch(Cache.open())
                except (BuildError, OSError) as error:
                    # Not a region's failure (each built without it), and tried once: it would fail the same way.
                    console.print(Text.assemble("ppy: ", ("cannot precompile torch's headers", "yellow"),
                                                f": {error}; the builds go on without them"))
                    pch_failed = True
            # Every region of the file once: compiled, invalid, or running as Python (its C++ failed, say).
            regions += len(set(built.symbols) | set(built.errors) | set(built.fallbacks))
            compiled += len(built.functions)
            # A finding in a helper several regions inline is in each one's list, and said once.
            for d in sorted({d for diagnostics in built.errors.values() for d in diagnostics}):
                failed = True
                console.print(f"{path}:{d.line}:{d.column}: {d.code} {d.message}")
            for rid, reason in built.fallbacks.items():
                failed = True
                console.print(f"{path}: region `{rid.split(':')[0]}` runs as Python: {reason}")
            progress.advance(task)
    if not args.quiet:
        print(f"ppy build: {compiled} of {plural(regions, 'region')} compiled, in {plural(len(files), 'file')}",
              file=sys.stderr)
    return 1 if failed else 0


def _show(args: argparse.Namespace) -> int:
    """The C++ each region of a file compiles to, printed from its model: nothing is built or waited for."""
    path: Path = args.file
    source = _source("show", path)
    if isinstance(source, int):
        return source
    previews = _previews(path, source, args.region or "")
    if isinstance(previews, str):
        print(f"ppy show: {previews}", file=sys.stderr)
        return 1
    printed = [p for p in previews if p.function is not None]
    for preview in previews:
        if preview.function is None:
            why = "it breaks the rules" if preview.errors else f"it runs as Python: {preview.fallback}"
            print(f"ppy show: {path}: region `{preview.qualname}` has no C++: {why}", file=sys.stderr)
            for d in preview.errors:
                print(f"{path}:{d.line}:{d.column}: {d.code} {d.message}", file=sys.stderr)
    if args.annotate:
        lines = source.splitlines()
        for preview in printed[:1] if args.region is not None else printed:
            sys.stdout.write(_annotated(preview, lines))
        return 0 if printed else 1
    if args.region is not None:
        if not printed:
            return 1
        sys.stdout.write(printed[0].function or "")
        return 0
    for preview in printed:
        sys.stdout.write(f"// ppy: region {preview.qualname} (line {preview.line}), -O{preview.level}\n"
                         f"{preview.function}\n")
    return 0 if printed else 1


def _annotated(preview: RegionPreview, lines: list[str]) -> str:
    """One region as `cython -a` shows it, in text: each source line, then the C++ it became, indented."""
    out = [f"// ppy: region {preview.qualname} (line {preview.line}), -O{preview.level}\n"]
    for line, cpp in preview.annotated:
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        out.append(f"{line:>5} | {text}\n")
        out += [f"{'':>5} |         {statement}\n" for statement in cpp]
    return "".join(out) + "\n"


def extract_function(source: str, symbol: str) -> str | None:
    """One region's C++ function (by its symbol) from a generated translation unit."""
    lines = source.splitlines(keepends=True)
    for index, line in enumerate(lines):
        if not line.startswith(" ") and line.rstrip().endswith("{") and f" {symbol}(" in line:
            end = index
            while end < len(lines) and not lines[end].startswith("}"):
                end += 1
            return "".join(lines[index:end + 1])
    return None


def _cache(args: argparse.Namespace) -> int:
    import warnings

    from ppy_compile.cache import Cache

    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        cache = Cache.open()
    for warning in seen:  # the cache refused and why, as one line
        print(f"ppy cache: {str(warning.message).removeprefix('ppy: ')}", file=sys.stderr)
    if args.action == "info":
        _cache_info(cache.info())
    elif args.action == "logs":
        _cache_logs(cache.logs())
    elif args.action == "clear":
        _cache_clear(cache, args.all)
    else:
        pruned = cache.prune()
        for what, label, labels in (("leftovers", "leftover of a killed build", "leftovers of killed builds"),
                                    ("broken", "broken build", "broken builds"),
                                    ("fallbacks", "fallback cache of an ended process",
                                     "fallback caches of ended processes")):
            sizes = pruned[what]
            print(f"removed {plural(len(sizes), label, labels)} ({_megabytes(sum(sizes))})")
    return 0


def _cache_clear(cache: Any, everything: bool) -> None:
    removed, in_use = cache.clear(everything=everything)
    kept = "" if everything else " (kept the bridge and the precompiled header; `ppy cache clear --all` removes them too)"
    print(f"removed {plural(removed, 'build')} from {cache.root}{kept}")
    if in_use:
        print(f"kept {plural(in_use, 'build')} in use by a build in progress (run it again once that build is done)")


def _cache_logs(logs: list[tuple[Path, float, str]]) -> None:
    """Each failed build's log, oldest first, under a line naming its file and when it was written."""
    import time

    if not logs:
        print("no logs of failed builds")
        return
    for path, written, text in logs:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(written)) if written else "unknown time"
        print(f"==> {path} ({when})")
        print(text.rstrip("\n"))
        print()
    print(f"{plural(len(logs), 'log')} of failed builds (`ppy cache clear` removes them)")


def _megabytes(size: int) -> str:
    return f"{size / 1e6:.1f} MB"


def _cache_info(info: dict) -> None:  # type: ignore[type-arg]
    kinds, staging = info["kinds"], info["staging"]
    print(f"cache: {info['root']}")
    print(f"builds: {info['builds']} ({_megabytes(info['bytes'])})")
    for kind, label in (("bridge", "bridges"), ("pch", "precompiled headers"), ("module", "modules"),
                        ("broken", "broken (`ppy cache prune` removes them)")):
        count, size = kinds.get(kind, (0, 0))
        if count or kind != "broken":
            print(f"  {label}: {count} ({_megabytes(size)})")
    print(f"indexed source files: {info['index']}")
    print(f"builds in progress: {staging['building'][0]} ({_megabytes(staging['building'][1])})")
    print(f"leftovers of killed builds: {staging['stale'][0]} ({_megabytes(staging['stale'][1])})")
    print(f"logs of failed builds: {staging['logs'][0]} ({_megabytes(staging['logs'][1])})"
          + ("; `ppy cache logs` shows them" if staging["logs"][0] else ""))
    fallbacks = info["fallbacks"]
    alive = [f for f in fallbacks if f.alive]
    ended = [f for f in fallbacks if not f.alive]
    print(f"fallback caches of running processes: {len(alive)} ({_megabytes(sum(f.bytes for f in alive))})")
    print(f"fallback caches of ended processes: {len(ended)} ({_megabytes(sum(f.bytes for f in ended))})")
    for found in fallbacks:
        print(f"  {found.path}{'' if found.alive else ' (ended)'}")
    if staging["stale"][0] or ended:
        print("`ppy cache prune` removes the leftovers and the ended processes' caches")


if __name__ == "__main__":
    sys.exit(main())
