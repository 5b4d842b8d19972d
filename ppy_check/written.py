"""Numbers as the source writes them, for messages: `1e4`, `0x10` and `1_000`, not Python's `10000.0`, `16`, `1000`.

A syntax tree keeps a literal's value, not its spelling, and ``ast.unparse`` re-prints the value. A module's
numbers are remembered when it is loaded (``ModuleRegions.load`` calls ``remember``), keyed weakly by their nodes
so they die with the tree, and only those whose spelling differs from the re-printed one; ``unparse`` shows each
remembered number as it was written. Nodes the builder makes afresh are not remembered and print as
``ast.unparse`` prints them.
"""

from __future__ import annotations

import ast
from weakref import WeakKeyDictionary

from ppy_check.nodes import all_nodes

_SPELLINGS: WeakKeyDictionary[ast.Constant, str] = WeakKeyDictionary()


def remember(tree: ast.AST, lines: list[str], nodes: list[ast.AST] | None = None) -> None:
    """Keep the spelling of every number literal in ``tree`` that Python re-prints otherwise; ``lines`` are the
    parsed text's, as Python numbers them (``source.python_lines``). ``nodes``: all of the tree's nodes
    (``nodes.all_nodes``), where the caller has walked it already."""
    for node in all_nodes(tree) if nodes is None else nodes:
        if not isinstance(node, ast.Constant) or not _is_number(node.value) or node.end_lineno != node.lineno or node.end_col_offset is None or \
                node.lineno > len(lines):
            continue
        line = lines[node.lineno - 1].encode("utf-8")  # ast's columns count UTF-8 bytes
        spelling = line[node.col_offset:node.end_col_offset].decode("utf-8", "replace")
        if spelling != repr(node.value) and _means(spelling, node.value):
            _SPELLINGS[node] = spelling


def spelling(node: ast.AST) -> str | None:
    """How the source writes this number literal, where that differs from how Python prints it."""
    return _SPELLINGS.get(node) if isinstance(node, ast.Constant) else None


def unparse(node: ast.AST) -> str:
    """``ast.unparse(node)``, with each remembered number as the source writes it."""
    if not any(isinstance(inner, ast.Constant) and inner in _SPELLINGS for inner in ast.walk(node)):
        return ast.unparse(node)
    return ast.unparse(_spelled(node))


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float, complex)) and not isinstance(value, bool)


def _means(text: str, value: object) -> bool:
    """Whether ``text`` is a literal of ``value``: what a slice of the line must be before a message shows it."""
    try:
        return bool(ast.literal_eval(text) == value)
    except (ValueError, SyntaxError):
        return False


def _spelled(node: ast.AST) -> ast.AST:
    """A copy of ``node`` (the parsed tree is never changed) with each remembered number a name of its spelling: a
    name prints as its text, unquoted and unparenthesised, as a number literal does."""
    written = spelling(node)
    if written is not None:
        return ast.Name(id=written)
    copy = type(node)()
    for name, value in ast.iter_fields(node):
        if isinstance(value, ast.AST):
            value = _spelled(value)
        elif isinstance(value, list):
            value = [_spelled(item) if isinstance(item, ast.AST) else item for item in value]
        setattr(copy, name, value)
    return copy
