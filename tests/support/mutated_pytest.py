"""``python tests/mutated_pytest.py MUTATION PYTEST-ARGS...``: pytest in a process whose region builds miscompile
on purpose, for the tests that prove `pytest --ppy-verify` catches a miscompile (tests/test_pytest_plugin.py).

The mutation reaches ppy only through this entry point (``ppy.runtime.set_build_options``): no environment
variable of a user's process can turn it on.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ppy import runtime
from ppy_compile.options import BuildOptions, Mutation


def mutated(text: str) -> BuildOptions:
    """``swap:A:B`` (call operator B where the region calls A), ``drop-writes`` or ``detach``."""
    kind, *rest = text.split(":")
    mutation = Mutation(kind)
    if mutation is Mutation.SWAP:
        if len(rest) != 2:
            raise ValueError(f"`swap` takes two operator names: swap:A:B, not {text!r}")
        return BuildOptions(mutation=mutation, swap=(rest[0], rest[1]))
    return BuildOptions(mutation=mutation)


def main(argv: list[str]) -> int:
    # Run as a script, its folder leads sys.path: the project under test must not import ppy's tests/regions.
    here = Path(__file__).resolve().parent
    sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != here]
    runtime.set_build_options(mutated(argv[0]))
    return int(pytest.main(argv[1:]))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
