"""Results of pure functions of syntax trees, kept as long as the tree they were computed from lives.

torch's shipped Python source is parsed once per process and inlined by every
region that calls it, so what is derived from one of its nodes (the text a
message shows, the definition a module's body gives a name) is asked again and
again of the same node. The key is the node itself, held weakly: a user file's
trees still die with the file, and a node's identity cannot be reused while its
entry stands. Only functions of the node alone may be memoised here; no caller
mutates a parsed tree (the builder makes new nodes where it needs changed ones).
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable
from typing import TypeVar
from weakref import WeakKeyDictionary

Node = TypeVar("Node", bound=ast.AST)
Result = TypeVar("Result")


def per_node(function: Callable[[Node], Result]) -> Callable[[Node], Result]:
    """``function`` computed once per live node."""
    results: WeakKeyDictionary[Node, Result] = WeakKeyDictionary()

    @functools.wraps(function)
    def once(node: Node) -> Result:
        try:
            return results[node]
        except KeyError:
            found = results[node] = function(node)
            return found

    return once


def per_node_and_name(function: Callable[[Node, str], Result]) -> Callable[[Node, str], Result]:
    """``function`` computed once per live node and name."""
    results: WeakKeyDictionary[Node, dict[str, Result]] = WeakKeyDictionary()

    @functools.wraps(function)
    def once(node: Node, name: str) -> Result:
        by_name = results.get(node)
        if by_name is None:
            by_name = results[node] = {}
        if name in by_name:
            return by_name[name]
        found = by_name[name] = function(node, name)
        return found

    return once
