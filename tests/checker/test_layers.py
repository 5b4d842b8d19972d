"""The layers stay layers: no module imports a layer above it, no module imports itself through others, and
every test file lies in the folder of what it needs."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.support.groups import TESTS, Group, group_of, outside_every_group

ROOT = Path(__file__).resolve().parents[2]
# Each package, and the packages it must never import (at any depth: a lazy import counts too).
FORBIDDEN = {
    "ppy_check": {"ppy", "ppy_compile", "mypy_plugin", "torch", "mypy"},
    "ppy_compile": {"ppy", "mypy_plugin", "mypy"},
    "mypy_plugin": {"ppy_compile", "torch"},
}
# Generators of the shipped op data run with torch on a developer's machine, never in a check; and region
# syntax the checker reads as data, never imports (its `import torch` binds names, as in a user's file).
TORCH_TOOLS = {"ppy_check/gen_opdata.py", "ppy_check/probe.py", "ppy_check/torch_python_overrides.py"}
# That region syntax also names the function ppy's version of torch.einsum asks for its contraction path when a
# compiled region runs (ppy.einsum.contract_path): read by the checker as a name, never imported.
READ_AS_DATA = {"ppy_check/torch_python_overrides.py": {"ppy"}}


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
            banned = forbidden - ({"torch"} if relative in TORCH_TOOLS else set()) - READ_AS_DATA.get(relative, set())
            for name in sorted(_imports(path) & banned):
                problems.append(f"{relative} imports {name}")
    assert not problems, "\n".join(problems)


PACKAGES = ("ppy", "ppy_check", "ppy_compile", "mypy_plugin")


def _modules() -> dict[str, Path]:
    """Each module of ppy's packages by dotted name (a package by its own name)."""
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _type_checking_only(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imported_modules(name: str, path: Path, modules: dict[str, Path]) -> set[str]:
    """The modules of ``modules`` that ``name`` imports anywhere (in a function too), but under
    ``if TYPE_CHECKING:``. ``from package import module`` names the module, not the package: a module's
    package is always imported before it, so that edge says nothing."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking_only(child):
                for branch in child.orelse:
                    visit_statement(branch)
            else:
                visit_statement(child)

    def visit_statement(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            submodules = {f"{module}.{alias.name}" for alias in node.names} & set(modules)
            found.update(submodules)
            if len(submodules) < len(node.names):
                found.add(module)
        else:
            visit(node)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    return (found & set(modules)) - {name}


def import_cycles(modules: dict[str, Path]) -> list[list[str]]:
    """Each cycle of imports among ``modules``, as one of its strongly connected components (Tarjan's)."""
    graph = {name: sorted(_imported_modules(name, path, modules)) for name, path in modules.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    cycles = []

    def connect(name: str) -> None:
        index[name] = low[name] = len(index)
        stack.append(name)
        for other in graph[name]:
            if other not in index:
                connect(other)
                low[name] = min(low[name], low[other])
            elif other in stack:
                low[name] = min(low[name], index[other])
        if low[name] == index[name]:
            component = []
            while True:
                member = stack.pop()
                component.append(member)
                if member == name:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for name in graph:
        if name not in index:
            connect(name)
    return cycles


def test_no_import_cycles() -> None:
    """A cycle held together by an import inside a function is still a cycle: cut it with a leaf module."""
    cycles = import_cycles(_modules())
    assert not cycles, "\n".join(" <-> ".join(cycle) for cycle in cycles)


def test_a_function_level_import_closes_a_cycle(tmp_path: Path) -> None:
    (tmp_path / "low.py").write_text("def f() -> None:\n    from high import g\n", encoding="utf-8")
    (tmp_path / "high.py").write_text("from low import f\n", encoding="utf-8")
    (tmp_path / "typed.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import low\n",
                                       encoding="utf-8")
    modules = {name: tmp_path / f"{name}.py" for name in ("low", "high", "typed")}
    assert import_cycles(modules) == [["high", "low"]]
    (tmp_path / "low.py").write_text("import typed\n", encoding="utf-8")
    assert import_cycles(modules) == []



def test_every_test_file_lies_in_a_group_folder() -> None:
    files = sorted(TESTS.rglob("test_*.py"))
    assert files and all(group_of(path) is not None for path in files), [str(p) for p in files if group_of(p) is None]
    assert {group_of(path) for path in files} == set(Group)
    assert group_of(TESTS / "compiler" / "test_x.py") is Group.COMPILER
    assert outside_every_group(TESTS / "test_x.py") and outside_every_group(TESTS / "regions" / "test_x.py")
    assert outside_every_group(TESTS / "torch" / "test_x.py"), "tests/torch would pass for torch where it is absent"
    assert not outside_every_group(TESTS / "torch_only" / "test_x.py") and not outside_every_group(ROOT / "test_x.py")


def test_the_folder_marks_a_test_and_a_file_in_no_folder_fails_collection(tmp_path: Path) -> None:
    """tests/conftest.py and its support, copied into a project of their own, collect as they do here."""
    tests = tmp_path / "tests"
    shutil.copytree(TESTS / "support", tests / "support", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(TESTS / "conftest.py", tests / "conftest.py")
    (tmp_path / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["."]\n'
                                             'markers = ["checker", "torch", "compiler", "integration"]\n')
    (tests / "checker").mkdir()
    (tests / "checker" / "test_light.py").write_text("def test_light():\n    pass\n")
    (tests / "compiler").mkdir()
    (tests / "compiler" / "test_heavy.py").write_text("def test_heavy():\n    pass\n")
    env = {**os.environ, "PPY_TEST_CACHE_DIR": str(tmp_path / "cache")}

    def collect(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
                              cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)

    marked = collect("-m", "checker")
    assert marked.returncode == 0 and "tests/checker/test_light.py::test_light" in marked.stdout, marked.stdout
    assert "test_heavy" not in marked.stdout
    (tests / "test_stray.py").write_text("def test_stray():\n    pass\n")
    stray = collect()
    assert stray.returncode != 0 and "test_stray.py is in no group" in stray.stdout, stray.stdout
