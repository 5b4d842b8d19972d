"""The C++ toolchain: which compiler, which flags, and a ninja build of one shared object.

Include paths, library paths and the C++ ABI flag come from torch's
cpp_extension, so a region builds exactly as a torch extension would; ninja
runs the compile and link. Everything that changes a binary is gathered in
``Toolchain.identity`` for the cache key.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

from ppy_check.errors import BuildError

CXX_STANDARD = "-std=c++20"  # torch 2.13's headers need C++20


@dataclass(frozen=True)
class Toolchain:
    cxx: str
    ninja: str
    include_dirs: tuple[str, ...]
    torch_lib: str
    abi_flag: str
    torch_version: str
    identity: str  # sha256 of everything above that changes a binary

    def compile_flags(self, level: int) -> list[str]:
        return [CXX_STANDARD, f"-O{level}", "-fPIC", "-w", self.abi_flag, *[f"-I{d}" for d in self.include_dirs]]

    def link_flags(self, libraries: list[str], extra_rpath: str | None = None) -> list[str]:
        flags = ["-shared", f"-L{self.torch_lib}", *[f"-l{lib}" for lib in libraries], f"-Wl,-rpath,{self.torch_lib}"]
        if extra_rpath:
            flags.append(f"-Wl,-rpath,{extra_rpath}")
        return flags


def _compiler() -> str:
    requested = os.environ.get("CXX") or "c++"
    found = shutil.which(requested)
    if found is None:
        raise BuildError(f"no C++ compiler: `{requested}` is not on PATH (install g++ or set CXX)")
    return found


def _ninja() -> str:
    candidates = [Path(sys.executable).parent / "ninja", shutil.which("ninja")]
    for candidate in candidates:
        if candidate and Path(candidate).exists():
            return str(candidate)
    raise BuildError("ninja is not installed (pip install ninja)")


def _file_identity(path: str) -> str:
    stat = os.stat(path)
    return f"{os.path.realpath(path)}:{stat.st_size}:{int(stat.st_mtime)}"


def compiler_identity() -> str:
    """The compiler a build would use, as a cheap stat (no compiler run); its name alone when it is missing."""
    try:
        return _file_identity(_compiler())
    except (BuildError, OSError):
        return os.environ.get("CXX") or "c++"


@functools.lru_cache(maxsize=1)
def toolchain() -> Toolchain:
    import torch
    from torch.utils import cpp_extension

    cxx = _compiler()
    ninja = _ninja()
    python_include = sysconfig.get_paths()["include"]
    include_dirs = tuple(cpp_extension.include_paths()) + (python_include,)
    torch_lib = os.path.join(os.path.dirname(torch.__file__), "lib")
    abi_flag = f"-D_GLIBCXX_USE_CXX11_ABI={int(torch._C._GLIBCXX_USE_CXX11_ABI)}"
    version = str(torch.__version__)
    identity = hashlib.sha256(
        "\n".join([
            _file_identity(cxx), os.environ.get("CXXFLAGS", ""), CXX_STANDARD, abi_flag, version,
            str(torch.version.cuda), sys.version, _file_identity(os.path.join(torch_lib, "libtorch_cpu.so"))
            if os.path.exists(os.path.join(torch_lib, "libtorch_cpu.so")) else torch_lib,
        ]).encode()
    ).hexdigest()
    return Toolchain(cxx, ninja, include_dirs, torch_lib, abi_flag, version, identity)


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


_ERROR_LINE = re.compile(r"^[^:\s]+\.cpp:(\d+):\d+: error: (.*)$")


def run_ninja(folder: Path, tool: Toolchain) -> None:
    result = subprocess.run([tool.ninja, "-C", str(folder)], capture_output=True, text=True)
    if result.returncode == 0:
        return
    output = (result.stdout + result.stderr).strip()
    log = folder.parent / f"{folder.name}.log"
    try:
        log.write_text(output, encoding="utf-8")
    except OSError:
        log = None  # type: ignore[assignment]
    errors = [line for line in output.splitlines() if "error" in line.lower() and "ninja" not in line.lower()]
    summary = errors[0].strip() if errors else (output.splitlines()[-1] if output else "unknown error")
    where = f" (full log: {log})" if log else ""
    located = [(int(m.group(1)), m.group(2)) for line in output.splitlines() if (m := _ERROR_LINE.match(line.strip()))]
    raise CompileError(f"the C++ compiler failed: {summary}{where}", located)
