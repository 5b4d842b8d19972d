"""The C++ toolchain: which compiler, which flags, and a ninja build of one shared object.

Include paths, library paths and the C++ ABI flag come from torch's
cpp_extension, so a region builds exactly as a torch extension would; ninja
runs the compile and link. Everything that changes a binary is gathered in
``Toolchain.identity`` for the cache key.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import logging
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from ppy_check.errors import BuildError

CXX_STANDARD = "-std=c++20"  # torch 2.13's headers need C++20


# Programs that run the compiler named after them (CXX="ccache g++").
LAUNCHERS = ("ccache", "sccache", "distcc", "icecc", "buildcache")


@dataclass(frozen=True)
class Toolchain:
    cxx: str  # the compiler command as ninja runs it (a launcher first, if CXX names one)
    ninja: str
    include_dirs: tuple[str, ...]
    torch_lib: str
    abi_flag: str
    torch_version: str
    identity: str  # sha256 of everything above that changes a binary
    linker_flags: tuple[str, ...] = ()  # ("-fuse-ld=gold",) where the compiler drives gold: it links torch's
    # large libraries in less than half of the default linker's time, a tenth of a one-region rebuild

    def compile_flags(self, level: int) -> list[str]:
        return [CXX_STANDARD, f"-O{level}", "-fPIC", "-w", self.abi_flag, *[f"-I{d}" for d in self.include_dirs]]

    def link_flags(self, libraries: list[str], extra_rpath: str | None = None) -> list[str]:
        flags = ["-shared", *self.linker_flags, f"-L{self.torch_lib}", *[f"-l{lib}" for lib in libraries],
                 f"-Wl,-rpath,{self.torch_lib}"]
        if extra_rpath:
            flags.append(f"-Wl,-rpath,{extra_rpath}")
        return flags


def _compiler() -> tuple[list[str], list[str]]:
    """``$CXX`` (default ``c++``) as arguments, the first resolved on PATH; and every program among them.

    CXX may be a command, as CMake and torch's cpp_extension take it: a launcher
    and a compiler (``ccache g++``), or a compiler and flags (``g++ -m64``).
    """
    requested = os.environ.get("CXX", "").strip() or "c++"
    try:
        words = shlex.split(requested)
    except ValueError as error:
        raise BuildError(f"CXX={requested!r} is not a command line ({error})") from None
    if any(ord(c) < 32 for word in words for c in word):
        raise BuildError(f"CXX={requested!r} holds a control character")
    found = shutil.which(words[0])
    if found is None:
        what = f"`{words[0]}`" if len(words) == 1 else f"`{words[0]}` (from CXX={requested!r})"
        raise BuildError(f"no C++ compiler: {what} is not on PATH (install g++ or set CXX)")
    programs = [found, *_masqueraded(found)]
    for position, word in enumerate(words[1:], 1):
        resolved = None if word.startswith("-") else shutil.which(word)
        if resolved is not None:
            programs.append(resolved)
        elif position == 1 and Path(found).name in LAUNCHERS:
            raise BuildError(f"no C++ compiler: `{word}`, which {Path(found).name} is to run (CXX={requested!r}), "
                             "is not on PATH")
    return [found, *words[1:]], programs


def _masqueraded(found: str) -> list[str]:
    """For a launcher linked under a compiler's name (/usr/lib/ccache/g++), the compiler it runs: the next of that name on PATH."""
    launcher = os.path.realpath(found)
    if Path(launcher).name not in LAUNCHERS or Path(found).name in LAUNCHERS:
        return []
    for folder in os.environ.get("PATH", "").split(os.pathsep):
        candidate = shutil.which(Path(found).name, path=folder)
        if candidate is not None and os.path.realpath(candidate) != launcher:
            return [candidate]
    return []


def _command_identity(words: list[str], programs: list[str]) -> str:
    """The command and every program in it by file: a launcher hides nothing about the compiler it runs."""
    return "\n".join([shlex.join(words), *(_file_identity(p) for p in programs)])


def _faster_linker(command: list[str]) -> tuple[str, ...]:
    """``-fuse-ld=gold`` when the compiler takes it and gold runs; else nothing (the compiler's default)."""
    try:
        probe = subprocess.run([*command, "-fuse-ld=gold", "-Wl,--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return ()
    return ("-fuse-ld=gold",) if probe.returncode == 0 and "gold" in probe.stdout.lower() else ()


def _ninja() -> str:
    """The environment's ninja (beside the interpreter), else the one on PATH; one this user cannot run (a venv
    under another user's home, a file without its execute bit) is named as such, never taken for missing."""
    unusable = []
    for candidate in (Path(sys.executable).parent / "ninja", shutil.which("ninja")):
        if not candidate:
            continue
        try:
            if not Path(candidate).exists():
                continue
        except OSError as error:  # a folder on its path this user may not enter
            unusable.append(f"{candidate} ({error.strerror})")
            continue
        if os.access(candidate, os.X_OK):
            return str(candidate)
        unusable.append(f"{candidate} (not executable by this user)")
    if unusable:
        raise BuildError(f"ninja cannot be run by this user: {'; '.join(unusable)}; install one it can run "
                         "(pip install ninja)")
    raise BuildError("ninja is not installed (pip install ninja)")


def _file_identity(path: str) -> str:
    stat = os.stat(path)
    return f"{os.path.realpath(path)}:{stat.st_size}:{int(stat.st_mtime)}"


def torch_library_identity() -> str:
    """libtorch as a cheap stat: a torch reinstalled under the same version string is another library."""
    import torch

    library = os.path.join(os.path.dirname(torch.__file__), "lib", "libtorch_cpu.so")
    try:
        return _file_identity(library)
    except OSError:
        return os.path.dirname(library)


def compiler_identity() -> str:
    """The compiler a build would use, as a cheap stat (no compiler run); its name alone when it is missing."""
    try:
        return _command_identity(*_compiler())
    except (BuildError, OSError):
        return os.environ.get("CXX") or "c++"


@contextlib.contextmanager
def _quiet_cpp_extension() -> Iterator[None]:
    """Importing cpp_extension looks for a CUDA toolkit, and on a CUDA build of torch without
    a GPU logs "No CUDA runtime is found, using CUDA_HOME=..." on every build. ppy never uses
    CUDA_HOME (the generated code calls the dispatcher), so with PPY_QUIET that goes unsaid."""
    logger = logging.getLogger("torch.utils.cpp_extension")
    disabled = logger.disabled
    logger.disabled = disabled or bool(os.environ.get("PPY_QUIET"))
    try:
        yield
    finally:
        logger.disabled = disabled


@functools.lru_cache(maxsize=1)
def toolchain() -> Toolchain:
    import torch

    with _quiet_cpp_extension():
        from torch.utils import cpp_extension

    command, programs = _compiler()
    ninja = _ninja()
    python_include = sysconfig.get_paths()["include"]
    include_dirs = tuple(cpp_extension.include_paths()) + (python_include,)
    torch_lib = os.path.join(os.path.dirname(torch.__file__), "lib")
    abi_flag = f"-D_GLIBCXX_USE_CXX11_ABI={int(torch._C._GLIBCXX_USE_CXX11_ABI)}"
    version = str(torch.__version__)
    linker = _faster_linker(command)
    identity = hashlib.sha256(
        "\n".join([
            _command_identity(command, programs), os.environ.get("CXXFLAGS", ""), CXX_STANDARD, abi_flag, version,
            *linker,
            str(torch.version.cuda), sys.version, torch_library_identity(),
        ]).encode()
    ).hexdigest()
    # ninja hands the command to the shell, after its own `$` escapes.
    cxx = shlex.join(command).replace("$", "$$")
    return Toolchain(cxx, ninja, include_dirs, torch_lib, abi_flag, version, identity, linker)


def _quote(text: str) -> str:
    return text.replace("$", "$$").replace(" ", "$ ").replace(":", "$:")


def write_ninja(folder: Path, tool: Toolchain, source: str, output: str, level: int, libraries: list[str],
                extra_link: list[str] | None = None, extra_compile: list[str] | None = None) -> None:
    """A build of ``source`` into ``output``: a shared object, or a precompiled header when it ends in .gch."""
    compile_flags = " ".join(tool.compile_flags(level) + (extra_compile or []) + os.environ.get("CXXFLAGS", "").split())
    link_flags = " ".join(tool.link_flags(libraries) + (extra_link or []))
    rules = (
        "ninja_required_version = 1.3\n"
        f"cxx = {tool.cxx}\n"
        f"cflags = {compile_flags}\n"
        f"ldflags = {link_flags}\n"
        "rule compile\n"
        "  command = $cxx $cflags -c $in -o $out\n"
        "  description = compile $in\n"
        "rule header\n"
        "  command = $cxx $cflags -x c++-header $in -o $out\n"
        "  description = precompile $in\n"
        "rule link\n"
        "  command = $cxx $in $ldflags -o $out\n"
        "  description = link $out\n"
    )
    if output.endswith(".gch"):
        steps = f"build {_quote(output)}: header {_quote(source)}\n"
    else:
        steps = f"build {_quote(output)}.o: compile {_quote(source)}\nbuild {_quote(output)}: link {_quote(output)}.o\n"
    (folder / "build.ninja").write_text(rules + steps + f"default {_quote(output)}\n", encoding="utf-8")


class CompileError(BuildError):
    """The compiler rejected a source; ``errors`` holds (line, message) for each error in it."""

    def __init__(self, message: str, errors: list[tuple[int, str]]):
        super().__init__(message)
        self.errors = errors


class CompilerCrash(CompileError):
    """The compiler itself failed (a crash, an internal error), not the source."""


class BuildInterrupted(BuildError):
    """The machine or a person, not the source, stopped the build (a signal, a full disk, no memory, a missing
    tool): the cache records nothing about the regions and keeps no log, so the next process tries again."""


class SilentStop(BuildInterrupted):
    """A build step failed without a word: a signal, most likely, or a compiler that read a broken precompiled
    header (GCC may exit 1 without a message on one), which the pipeline tells apart (shared.pch_crashes)."""


_DIAGNOSTIC = re.compile(r"\berror:", re.IGNORECASE)
_ERROR_LINE = re.compile(r"^[^:\s]+\.cpp:(\d+):\d+: error: (.*)$")
# GCC says "confused by earlier errors, bailing out" for an internal error met after a diagnostic of its own (a
# precompiled header with zeroed bytes gives "sorry, unimplemented: unexpected AST of kind error_mark", then that).
_CRASH = re.compile(r"internal compiler error|signal terminated program|Segmentation fault|PLEASE submit a bug report|"
                    r"confused by earlier errors, bailing out")
# What the machine says when it, not the source, stops a compiler (strerror's texts, as GCC and ld quote them).
_MACHINE = re.compile(r"No space left on device|Disk quota exceeded|Cannot allocate memory|Too many open files|"
                      r"Read-only file system|virtual memory exhausted|out of memory allocating")
# A compiler, assembler or linker ended by a signal someone sent (Ctrl-C, kill, the OOM killer's SIGKILL), as GCC's
# driver, collect2 and clang report it: the program was stopped, it did not fail. A crash (SIGSEGV) is not here.
_SIGNALLED = re.compile(r"(?:Killed|Interrupt|Terminated|Hangup|Quit) signal terminated program \S+|"
                        r"terminated with signal (?:1|2|3|9|15) \[[^]]*\]|"
                        r"(?:internal compiler error|unable to execute command): (?:Killed|Terminated|Interrupt)\b")
# A tool of the build that is not there to run (a compiler uninstalled since the toolchain was read).
_MISSING_TOOL = re.compile(r"cannot execute '[^']*'|cannot find 'ld'|: not found$|command not found|"
                           r"No such file or directory \(program|execvp: No such file", re.MULTILINE)
# ninja's own words when a signal (SIGINT, SIGTERM, SIGHUP) stopped it, and the wrapper's when its parent was gone
# or a Ctrl-C reached it before it became ninja (Python, still starting, prints "KeyboardInterrupt" last, after
# "Fatal Python error: ..." where the interpreter was not up yet: no compiler says either).
_NINJA_STOPPED = re.compile(r"build stopped: interrupted by user|ppy: the build's parent process is gone|"
                            r"^KeyboardInterrupt$", re.MULTILINE)
# Exit statuses that say a signal ended the program: 128 + SIGINT, SIGKILL, SIGTERM (as a shell reports them).
_SIGNAL_EXITS = {130: "SIGINT", 137: "SIGKILL", 143: "SIGTERM"}

# Run in the child between fork and exec, so that ninja dies with the process
# that started it, and takes its compilers along (on SIGTERM it signals each
# one's process group): a `kill -9` of a build must not leave compilers running.
# preexec_fn would do the same, but is unsafe in a threaded process such as
# any process running torch.
_DIE_WITH_PARENT = """
import ctypes, os, signal, sys
ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
if os.getppid() != int(sys.argv[1]):
    sys.exit("ppy: the build's parent process is gone")
os.execv(sys.argv[2], sys.argv[2:])
"""


def _ninja_command(folder: Path, tool: Toolchain, targets: tuple[str, ...] = ()) -> list[str]:
    command = [tool.ninja, "-C", str(folder), *targets]
    if sys.platform != "linux" or not sys.executable:
        return command
    return [sys.executable, "-I", "-S", "-c", _DIE_WITH_PARENT, str(os.getpid()), *command]


def run_ninja(folder: Path, tool: Toolchain, targets: tuple[str, ...] = ()) -> None:
    """Build ``targets`` of the folder's build.ninja (its default where none are named)."""
    command = _ninja_command(folder, tool, targets)
    try:
        result = subprocess.run(command, capture_output=True, text=True)
    # The interpreter or ninja cannot be run by this user (a venv under another's home). A machine's errors (no
    # memory, too many files) go on, to be taken for an interruption (ppy.runtime._guarded).
    except (PermissionError, FileNotFoundError) as error:
        raise BuildError(f"cannot run {command[0]}: {error.strerror}; the build needs it (as this user)") from None
    if result.returncode == 0:
        return
    raise build_failure(folder, result.returncode, (result.stdout + result.stderr).strip())


def build_failure(folder: Path, returncode: int, output: str) -> BuildError:
    """What a failed ninja run in ``folder`` means, by its cause.

    Only the compiler or linker rejecting the code (it ran to its end and printed an error) is a verdict on
    the regions: a CompileError, its log kept. A signal, a full disk, no memory or a missing tool says
    nothing about them: BuildInterrupted, with no log, which nothing records, so the next run builds again.
    """
    summary = _summary(output)
    stopped = _stopped(returncode, output)
    if stopped == _SILENT:
        return SilentStop(f"the build was stopped: {stopped} ({summary}); nothing was recorded, and the next "
                          "process that runs the region builds it again")
    if stopped is not None:
        return BuildInterrupted(f"the build was stopped: {stopped} ({summary}); nothing was recorded, and the next "
                                "process that runs the region builds it again")
    log = _keep_log(folder, output)
    where = f" (full log: {log})" if log else ""
    if _CRASH.search(output):
        return CompilerCrash(f"the C++ compiler crashed: {summary}{where}", [])
    located = [(int(m.group(1)), m.group(2)) for line in output.splitlines() if (m := _ERROR_LINE.match(line.strip()))]
    return CompileError(f"the C++ compiler failed: {summary}{where}", located)


_SILENT = "a build step ended without an error message (a signal, most likely)"


def _stopped(returncode: int, output: str) -> str | None:
    """Why the build stopped when it was not the code's fault (None: the compiler or linker rejected it)."""
    import signal

    if returncode < 0:
        return f"ninja was ended by {signal.Signals(-returncode).name}" if -returncode in signal.valid_signals() \
            else f"ninja was ended by signal {-returncode}"
    if _NINJA_STOPPED.search(output) or returncode in _SIGNAL_EXITS:
        return f"interrupted ({_SIGNAL_EXITS.get(returncode, 'a signal')}, Ctrl-C or kill)"
    if (machine := _MACHINE.search(output)) is not None:
        return machine.group(0)
    if (signalled := _SIGNALLED.search(output)) is not None:
        return f"{signalled.group(0)} (out of memory, or ended by someone)"
    if (missing := _MISSING_TOOL.search(output)) is not None:
        return f"a tool of the build is missing: {missing.group(0)}"
    if not _diagnostics(output):
        ninja = next((line.strip() for line in output.splitlines() if line.startswith("ninja: error:")), None)
        return f"ninja could not run the build ({ninja})" if ninja else _SILENT
    return None


def _diagnostics(output: str) -> list[str]:
    """The compiler's and the linker's own "error:" lines (ninja's are about the build, not the code)."""
    return [line for line in output.splitlines() if _DIAGNOSTIC.search(line) and not line.startswith("ninja: ")]


def _summary(output: str) -> str:
    # The compiler's and the linker's own "error:" lines first: the command line ninja echoes mentions
    # "error" too when a path in it does (a project, or the cache, in a folder called so).
    errors = _diagnostics(output) or \
        [line for line in output.splitlines() if "error" in line.lower() and "ninja" not in line.lower()]
    if errors:
        return errors[0].strip()
    # No error line (a step ended by a signal): the step ninja names, not the command line it echoes.
    failed = [line for line in output.splitlines() if line.startswith("FAILED:")] or output.splitlines()[-1:]
    return failed[0].strip()[:300] if failed else "no output"


def _keep_log(folder: Path, output: str) -> Path | None:
    """The failed build's output, beside its staging folder (`ppy cache logs` shows it)."""
    log = folder.parent / f"{folder.name}.log"
    try:
        log.write_text(output, encoding="utf-8")
    except OSError:
        return None
    return log
