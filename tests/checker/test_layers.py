"""The layers stay layers: no module imports a layer above it, and every test file says what it needs."""

from __future__ import annotations

import ast
from pathlib import Path

from conftest import NEEDS

ROOT = Path(__file__).resolve().parents[1]
# Each package, and the packages it must never import (at any depth: a lazy import counts too).
FORBIDDEN = {
    "ppy_check": {"ppy", "ppy_compile", "mypy_plugin", "torch", "mypy"},
    "ppy_compile": {"ppy", "mypy_plugin", "mypy"},
    "mypy_plugin": {"ppy_compile", "torch"},
}
# Generators of the shipped op data run with torch on a developer's machine, never in a check; and region
# syntax the checker reads as data, never imports (its `import torch` binds names, as in a user's file).
TORCH_TOOLS = {"ppy_check/gen_opdata.py", "ppy_check/probe.py", "ppy_check/torch_python_overrides.py"}


def _imports(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_no_module_imports_a_layer_above_it() -> None:
    problems = []
    for package, forbidden in FORBIDDEN.items():
        for path in sorted((ROOT / package).rglob("*.py")):
            relative = path.relative_to(ROOT).as_posix()
            banned = forbidden - ({"torch"} if relative in TORCH_TOOLS else set())
            for name in sorted(_imports(path) & banned):
                problems.append(f"{relative} imports {name}")
    assert not problems, "\n".join(problems)


def test_every_test_file_says_what_it_needs() -> None:
    files = {p.name for p in Path(__file__).parent.glob("test_*.py")}
    assert files <= set(NEEDS), f"classify them in tests/conftest.py's NEEDS: {sorted(files - set(NEEDS))}"
