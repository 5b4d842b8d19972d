"""torch's own Python functions (`F.smooth_l1_loss`, `torch.nn._reduction.get_enum`), read from shipped source.

Most of torch's public functions are builtins bound to one ATen operator; the
rest are Python, and change with every torch release. Rather than keep a
table of what each does, ppy ships their modules' source
(``torch_python/``, written by ``gen_opdata`` from the installed torch) and
the model builder inlines a call of one as it inlines a project helper: the
tests on literal arguments fold (``reduction == "mean"``, ``weight is
None``, ``has_torch_function(...)``), and whatever depends on a value known
only at run time is refused, naming the test.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from ppy_check.module import ModuleRegions

SOURCES = Path(__file__).with_name("torch_python")
OVERRIDES = Path(__file__).with_name("torch_python_overrides.py")
# torch's private helpers that loop, followed in ppy's straight-line versions (torch_python_overrides.py).
OVERRIDDEN = frozenset({"torch.nn.functional._verify_batch_size", "torch.nn.functional._verify_spatial_size",
                        "torch.nn.modules.utils._list_with_default"})


@functools.lru_cache(maxsize=None)
def module(dotted: str) -> ModuleRegions | None:
    """The parsed source of torch's Python module ``dotted``, when ppy ships it."""
    path = SOURCES / f"{dotted}.py.txt"
    if not path.is_file():
        return None
    return ModuleRegions.load(f"<torch>/{dotted.replace('.', '/')}.py", path.read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=None)
def _overrides() -> ModuleRegions:
    return ModuleRegions.load(str(OVERRIDES), OVERRIDES.read_text(encoding="utf-8"))


def override(dotted: str) -> tuple[ast.FunctionDef, ModuleRegions] | None:
    """ppy's straight-line version of one of torch's looping helpers, and the module it is read from."""
    if dotted not in OVERRIDDEN:
        return None
    overrides = _overrides()
    found = function(overrides, dotted.rpartition(".")[2])
    return None if found is None else (found, overrides)


def module_of(path: str) -> str:
    """``torch.nn.functional`` for the path ``module`` gives a shipped module's source."""
    return path.removeprefix("<torch>/").removesuffix(".py").replace("/", ".")


def shipped(dotted: str) -> bool:
    return (SOURCES / f"{dotted}.py.txt").is_file()


def function(module: ModuleRegions, name: str) -> ast.FunctionDef | None:
    """The definition of ``name`` that runs: the last one, skipping typing stubs under ``if TYPE_CHECKING``."""
    found = None
    assert module.tree is not None
    for statement in module.tree.body:
        if isinstance(statement, ast.FunctionDef) and statement.name == name:
            found = statement
        elif isinstance(statement, ast.If) and ast.unparse(statement.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            found = next((s for s in statement.orelse if isinstance(s, ast.FunctionDef) and s.name == name), found)
    return found


def tensor_method(name: str) -> tuple[ast.FunctionDef, ModuleRegions] | None:
    """A Python-level method of ``torch.Tensor`` (``torch/_tensor.py``), and the module it is read from."""
    tensor_module = module("torch._tensor")
    if tensor_module is None or tensor_module.tree is None:
        return None
    for statement in tensor_module.tree.body:
        if isinstance(statement, ast.ClassDef) and statement.name == "Tensor":
            found = [s for s in statement.body if isinstance(s, ast.FunctionDef) and s.name == name]
            return (found[-1], tensor_module) if found else None
    return None
