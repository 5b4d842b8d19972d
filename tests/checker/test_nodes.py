"""One walk of a tree serves every question asked of all its nodes (ppy_check/nodes.py): it must be ast.walk's."""

from __future__ import annotations

import ast
from pathlib import Path

from ppy_check.nodes import all_nodes
from ppy_check.scope import build_scope

SHIPPED = Path(__file__).resolve().parents[2] / "ppy_check" / "torch_python"


def test_all_nodes_is_ast_walk_in_its_order() -> None:
    # Order matters: the scope keeps the first rebinding of a name it meets (dict.setdefault).
    for path in sorted(SHIPPED.glob("*.py.txt")) + [Path(__file__)]:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        walked, listed = list(ast.walk(tree)), all_nodes(tree)
        assert len(walked) == len(listed) and all(a is b for a, b in zip(walked, listed)), path.name


def test_a_scope_from_a_shared_walk_is_the_scope_from_its_own() -> None:
    source = ("import torch\nimport torch.nn.functional as F\nx = 1\nglobals()['y'] = 2\ndef f():\n"
              "    global x\n    x = 3\n    torch.relu = None\nexec('z = 1')\nsetattr(F, 'gelu', None)\n")
    tree = ast.parse(source)
    own, shared = build_scope(tree), build_scope(tree, all_nodes(tree))
    assert (own.bindings, own.imports, own.modules, own.patched, own.star_imports) == \
        (shared.bindings, shared.imports, shared.modules, shared.patched, shared.star_imports)
    assert "torch.relu" in shared.patched and "torch.nn.functional.gelu" in shared.patched and "y" in shared.bindings
