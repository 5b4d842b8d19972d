"""`ppy`: check, build ahead of time, show the generated C++, manage the build cache."""

from __future__ import annotations

import argparse
import os
import sys
import traceback
from pathlib import Path


def _parser() -> argparse.ArgumentParser:
    from ppy import __version__

    parser = argparse.ArgumentParser(prog="ppy", description="Straight-line PyTorch regions, checked and compiled to ATen C++.")
    parser.add_argument("--version", action="version", version=f"ppy {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.add_parser("check", help="the region rules over files or folders (same as ppy-check)", add_help=False)
    build = commands.add_parser("build", help="compile every region found under PATHS into the cache, ahead of time")
    build.add_argument("paths", nargs="*", type=Path, help="files or folders (default: .)")
    show = commands.add_parser("show", help="print the C++ a file's regions compile to")
    show.add_argument("file", type=Path, help="a Python file holding regions")
    show.add_argument("region", nargs="?", help="only this region's function")
    explain = commands.add_parser("explain", help="why each region of a file is compiled, runs as Python, or is invalid")
    explain.add_argument("target", help="FILE or FILE:REGION (a name or qualified name)")
    cache = commands.add_parser("cache", help="the build cache: `info`, `clear` or `prune`")
    cache.add_argument("action", choices=["info", "clear", "prune"],
                       help="info: what it holds; clear: remove the modules and the index; "
                            "prune: remove what killed builds and ended processes left")
    cache.add_argument("--all", action="store_true", help="with clear: the bridge and precompiled header too "
                                                          "(a minute to build again)")
    return parser


def main(argv: list[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list[:1] == ["check"]:
        from ppy_check.cli import main as check

        return check(args_list[1:])
    parser = _parser()
    args = parser.parse_args(args_list)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        return {"build": _build, "show": _show, "cache": _cache, "explain": _explain}[args.command](args)
    except KeyboardInterrupt:
        print("ppy: interrupted", file=sys.stderr)
        return 2
    except Exception as error:  # one line, the traceback only on request
        print(f"ppy: {type(error).__name__}: {error} (set PPY_DEBUG=1 for a traceback)", file=sys.stderr)
        if os.environ.get("PPY_DEBUG"):
            traceback.print_exc()
        return 2


def _explain(args: argparse.Namespace) -> int:
    """Per region: compiled, Python fallback or invalid, and why; where its C++ is; which toolchain built it."""
    from ppy_check.module import ModuleRegions
    from ppy_check.source import SourceError, read_source
    from ppy_compile.build import build_module
    from ppy_compile.cache import Cache

    target = args.target
    path_text, _, wanted = target.rpartition(":") if ":" in target and not Path(target).exists() else (target, "", "")
    path = Path(path_text)
    if not path.is_file():
        print(f"ppy explain: {path}: no such file", file=sys.stderr)
        return 2
    try:
        text = read_source(path).text
    except SourceError as error:
        print(f"ppy explain: {path}:{error.line}:{error.column}: {error.message}", file=sys.stderr)
        return 2
    regions = [r for r in ModuleRegions.load(str(path.resolve()), text).regions
               if not wanted or wanted in (r.site.qualname, r.name)]
    if not regions:
        print(f"ppy explain: {path}: no region{f' named `{wanted}`' if wanted else ''}", file=sys.stderr)
        return 1
    built = build_module(str(path.resolve()), text)
    cache = Cache.open()
    print(f"{path}  (cache {cache.root}; {_toolchain_line()})")
    status = 0
    for region in regions:
        key = region.site.key
        head = f"  {region.site.qualname} (line {region.site.line}):"
        if key in built.errors:
            status = 1
            print(f"{head} invalid, every call raises ppy.RegionError")
            for d in built.errors[key]:
                print(f"      {d.line}:{d.column}: {d.code} {d.message}")
        elif key in built.fallbacks:
            print(f"{head} runs as Python: {built.fallbacks[key]}")
        elif key in built.functions:
            print(f"{head} compiled at -O{region.level}, C++ function {built.symbols[key]} in {built.cpp_sources[key]}")
        else:
            print(f"{head} not compiled (no build of it was found)")
    return status


def _toolchain_line() -> str:
    try:
        import torch

        from ppy_compile.toolchain import toolchain

        from ppy_compile.drift import drift

        tool = toolchain()
        return f"compiler {tool.cxx}, {drift().summary()}"
    except Exception as error:  # noqa: BLE001 - explain says what is missing rather than failing
        return f"no toolchain: {error}"


def _region_files(paths: list[Path]) -> tuple[list[tuple[Path, bytes]], list[str]]:
    from ppy_check.config import Config
    from ppy_check.files import iter_files
    from ppy_check.runner import region_candidates

    files, problems = [], []
    for item in iter_files(paths or [Path(".")], Config()):
        (problems if isinstance(item, str) else files).append(item)
    candidates, unreadable = region_candidates(files)
    return candidates, problems + unreadable


def _build(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn
    from rich.text import Text

    from ppy.errors import BuildError
    from ppy_check.source import SourceError, decode
    from ppy_check.terminal import plural
    from ppy_compile.build import build_module

    # Paths, messages and source are the user's text, never markup or emoji codes (`:100:`
    # is one), and a finding stays on one line for tools that parse `path:line:col:`.
    console = Console(stderr=True, markup=False, emoji=False, highlight=False, soft_wrap=True)
    files, problems = _region_files(args.paths)
    for problem in problems:
        console.print(f"ppy: {problem}")
    failed = bool(problems)
    regions = compiled = 0
    os.environ.setdefault("PPY_QUIET", "1")  # the bar below is the progress
    with Progress(TextColumn("{task.description}", markup=False), BarColumn(),
                  TextColumn("{task.completed}/{task.total} files", markup=False),
                  TimeElapsedColumn(), console=console, disable=not console.is_terminal) as progress:
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
            regions += len(built.symbols) + len(built.errors)
            compiled += len(built.functions)
            for diagnostics in built.errors.values():
                failed = True
                for d in diagnostics:
                    console.print(f"{path}:{d.line}:{d.column}: {d.code} {d.message}")
            for rid, reason in built.fallbacks.items():
                failed = True
                console.print(f"{path}: region `{rid.split(':')[0]}` runs as Python: {reason}")
            progress.advance(task)
    print(f"ppy build: {compiled} of {plural(regions, 'region')} compiled, in {plural(len(files), 'file')}", file=sys.stderr)
    return 1 if failed else 0


def _show(args: argparse.Namespace) -> int:
    from ppy_check.runner import read
    from ppy_check.source import SourceError, decode

    path: Path = args.file
    if os.path.isdir(path):
        print(f"ppy show: {path}: a folder; ppy show prints one file's C++ (`ppy build {path}` compiles a folder)", file=sys.stderr)
        return 2
    if not os.path.isfile(path):
        print(f"ppy show: {path}: no such file", file=sys.stderr)
        return 2
    data = read(path)
    if isinstance(data, str):
        print(f"ppy show: {data}", file=sys.stderr)
        return 2
    try:
        text = decode(data, str(path)).text
    except SourceError as error:
        print(f"ppy show: {path}:{error.line}:{error.column}: {error.message}", file=sys.stderr)
        return 2

    from ppy_compile.build import build_module

    built = build_module(str(path.resolve()), text)
    if not built.cpp_sources:
        print(f"ppy show: {path}: no region of this file compiled", file=sys.stderr)
        for diagnostics in built.errors.values():
            for d in diagnostics:
                print(f"{path}:{d.line}:{d.column}: {d.code} {d.message}", file=sys.stderr)
        return 1
    if args.region is None:
        # The regions may be spread over several units (a rebuild compiles only what changed): each, once.
        for unit in dict.fromkeys(built.cpp_sources.values()):
            sys.stdout.write(f"// ppy: {unit}\n{unit.read_text(encoding='utf-8')}")
        return 0
    by_name = {key.rsplit(":", 1)[0]: key for key in built.cpp_sources}
    wanted = by_name.get(args.region) or next(
        (key for qualname, key in by_name.items() if qualname.rsplit(".", 1)[-1] == args.region), None)
    function = extract_function(built.cpp_sources[wanted].read_text(encoding="utf-8"), built.symbols[wanted]) \
        if wanted else None
    if function is None:
        names = sorted(by_name)
        print(f"ppy show: no compiled region `{args.region}` in {path} (compiled: {', '.join(names) or 'none'})", file=sys.stderr)
        return 1
    sys.stdout.write(function)
    return 0


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
    elif args.action == "clear":
        removed = cache.clear(everything=args.all)
        kept = "" if args.all else " (kept the bridge and the precompiled header; `ppy cache clear --all` removes them too)"
        print(f"removed {removed} builds from {cache.root}{kept}")
    else:
        pruned = cache.prune()
        for what, label in (("leftovers", "leftover of killed builds"), ("broken", "broken build"),
                            ("fallbacks", "fallback cache of an ended process")):
            sizes = pruned[what]
            print(f"removed {len(sizes)} {label}{'s' if len(sizes) != 1 else ''} ({_megabytes(sum(sizes))})")
    return 0


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
    print(f"logs of failed builds: {staging['logs'][0]} ({_megabytes(staging['logs'][1])})")
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
