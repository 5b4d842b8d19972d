"""The digests that name builds in the cache, and what every one of them depends on."""

from __future__ import annotations

import hashlib
import os
import sys

from ppy_check.version import full_version
from ppy_compile import cpp_files
from ppy_compile.build_env import use_pch
from ppy_compile.options import BuildOptions

BUILD_FORMAT = "3"  # bump when the generated code or the layout changes meaning


def light_identity(options: BuildOptions) -> str:
    """What changes a build and is cheap to read on every warm start (no compiler run, no cpp_extension)."""
    import torch  # only once a region's file is built or loaded: `import ppy` stays light

    from ppy_check.installed_opdata import in_use
    from ppy_compile.toolchain import compiler_identity, torch_library_identity

    # in_use().identity: the op data a build was lowered from, where it is made for the installed torch (or the
    # shipped data serves there because making it failed): same ppy and torch, other data, another build.
    parts = [BUILD_FORMAT, full_version(), in_use().identity, str(torch.__version__), str(torch.version.cuda),
             torch_library_identity(),
             sys.version, compiler_identity(), os.environ.get("CXXFLAGS", ""), options.key(), str(use_pch()),
             cpp_files.every_digest()]  # the shipped C++ a module includes: read from files, not part of its text
    return "\n".join(parts)


def sha(*parts: str) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8"))
        digest.update(b"\0")
    return digest.hexdigest()
