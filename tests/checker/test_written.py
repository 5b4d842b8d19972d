"""Messages quote number literals as the source writes them (ppy_check/written.py), through every display path."""

from __future__ import annotations

import ast

from ppy_check import written
from ppy_check.model.builder.text import DISPLAY_NODES, display
from ppy_check.module import ModuleRegions


def _parsed(text: str) -> ast.Module:
    tree = ModuleRegions.load("t.py", text).tree
    assert tree is not None
    return tree


def _value(tree: ast.Module, index: int = 0) -> ast.expr:
    statement = tree.body[index]
    assert isinstance(statement, (ast.Expr, ast.Assign))
    return statement.value


def test_numbers_read_as_written_in_plain_and_unparsed_expressions() -> None:
    tree = _parsed("f(0x10, 1_000, 7)\ny = -1e4 * x + 2.50j\n")
    assert display(_value(tree, 0)) == "f(0x10, 1_000, 7)"  # a call display spells without unparse
    assert display(_value(tree, 1)) == "-1e4 * x + 2.50j"
    assert written.unparse(_value(tree, 1)) == "-1e4 * x + 2.50j"


def test_columns_are_utf8_bytes_and_lines_are_pythons() -> None:
    """ast counts columns in UTF-8 bytes, and a form feed or a vertical tab ends no line of its; a slice taken by
    characters or by str.splitlines would quote the wrong text (and a wrong slice must never be quoted)."""
    tree = _parsed("é = 'ünïcode'; z = g(1e3)\n\fs = '\x0b'; y = 0o17\r\nw = 1E2\r")
    assert display(_value(tree, 1)) == "g(1e3)"
    assert display(_value(tree, 3)) == "0o17"
    assert display(_value(tree, 4)) == "1E2"


def test_a_number_spelled_as_python_prints_it_is_not_kept() -> None:
    tree = _parsed("h(10, 2.5)\n")
    call = _value(tree)
    assert isinstance(call, ast.Call)
    assert [written.spelling(arg) for arg in call.args] == [None, None]


def test_unremembered_trees_and_the_parsed_tree_itself_are_left_as_they_are() -> None:
    fresh = ast.parse("1e4 + x", mode="eval").body  # not read through parse_module: nothing to quote
    assert display(fresh) == "10000.0 + x"
    tree = _parsed("1e4 + x\n")
    before = ast.dump(tree)
    assert written.unparse(_value(tree)) == "1e4 + x"
    assert ast.dump(tree) == before


def test_a_cut_expression_keeps_its_numbers_as_written() -> None:
    """Past DISPLAY_NODES expressions display prunes a copy and unparses that; the copy's numbers read as written."""
    text = " + ".join(["x"] * (DISPLAY_NODES + 10)) + " + 0x10\n"
    shown = display(_value(_parsed(text)))
    assert shown.endswith("...") and len(shown) == 60
    assert display(_value(_parsed(" + ".join(["0x10"] * (DISPLAY_NODES + 10)) + "\n"))).startswith("... + 0x10 + 0x10")
