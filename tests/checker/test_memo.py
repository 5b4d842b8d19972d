"""What is kept per syntax node (ppy_check/node_memo.py) answers for that node alone, and dies with it."""

from __future__ import annotations

import ast
import gc
import textwrap

from ppy_check.engine import check_source
from ppy_check.model.builder import build_model
from ppy_check.model.builder.text import display
from ppy_check.model.ir import Call, Const, DtypeName, Let, RegionModel
from ppy_check.module import ModuleRegions
from ppy_check.node_memo import per_node, per_node_and_name
from ppy_check.region import function_locals


def test_each_node_gets_its_own_answer_and_the_answer_dies_with_it() -> None:
    calls: list[str] = []

    @per_node
    def spelled(node: ast.expr) -> str:
        calls.append(ast.unparse(node))
        return ast.unparse(node)

    one, other = ast.parse("a + b", mode="eval").body, ast.parse("a - b", mode="eval").body
    assert [spelled(one), spelled(other), spelled(one)] == ["a + b", "a - b", "a + b"]
    assert calls == ["a + b", "a - b"]
    del one
    gc.collect()
    assert spelled(ast.parse("a * b", mode="eval").body) == "a * b"


def test_names_of_one_node_are_kept_apart() -> None:
    @per_node_and_name
    def defines(tree: ast.Module, name: str) -> bool:
        return any(isinstance(s, ast.FunctionDef) and s.name == name for s in tree.body)

    tree = ast.parse("def f(): pass\n")
    assert (defines(tree, "f"), defines(tree, "g"), defines(tree, "f")) == (True, False, True)


def test_displayed_text_and_locals_are_the_nodes_own() -> None:
    tree = ast.parse("def f(x):\n    y = x\n    return y\n\ndef g(z):\n    w = v = z\n    return w\n")
    first, second = tree.body
    assert isinstance(first, ast.FunctionDef) and isinstance(second, ast.FunctionDef)
    assert (function_locals(first), function_locals(second), function_locals(first)) == (
        frozenset({"x", "y"}), frozenset({"w", "v", "z"}), frozenset({"x", "y"}))
    texts = [display(node) for node in (first.body[0], second.body[0], first.body[0])]
    assert texts == ["y = x", "w = v = z", "y = x"]


def _softmax_dtypes(model: RegionModel) -> list[object]:
    return [dict(stmt.value.args)["dtype"] for stmt in model.body
            if isinstance(stmt, Let) and isinstance(stmt.value, Call) and stmt.value.native.key == "softmax.int"]


def test_one_torch_function_with_two_kinds_of_arguments_in_one_file() -> None:
    # F.dropout and F.softmax are inlined from torch's source; each call's own arguments decide what it becomes.
    source = textwrap.dedent(
        """
        import ppy
        import torch
        import torch.nn.functional as F

        @ppy.opt(2)
        def plain(x: torch.Tensor) -> torch.Tensor:
            return F.softmax(F.dropout(x, 0.5, training=False), dim=-1)

        @ppy.opt(2)
        def wide(x: torch.Tensor) -> torch.Tensor:
            return F.softmax(F.dropout(x, 0.5), dim=-1, dtype=torch.float64)

        @ppy.opt(2)
        def refused(x: torch.Tensor) -> torch.Tensor:
            return F.dropout(x, 1.5)

        @ppy.opt(2)
        def again(x: torch.Tensor) -> torch.Tensor:
            return F.softmax(x, dim=0)
        """
    )
    found = check_source(source, "two_kinds.py")
    assert [(d.region, d.code) for d in found] == [("refused", "ppy-unsupported")]
    assert "dropout probability has to be between" in found[0].message
    models = {region.node.name: build_model(region).model for region in ModuleRegions.load("two_kinds.py", source).regions}
    plain, wide, again = models["plain"], models["wide"], models["again"]
    assert plain is not None and wide is not None and again is not None and models["refused"] is None
    assert _softmax_dtypes(plain) == [None] and _softmax_dtypes(again) == [None]
    [dtype] = _softmax_dtypes(wide)
    assert isinstance(dtype, Const) and dtype.value == DtypeName("Double")
