"""Every node of a syntax tree, in ``ast.walk``'s order, as one list.

Loading a module asks several questions of all of its nodes (the numbers' spellings, the module scope's dynamic
rebindings and patches); torch.nn.functional alone has some 20,000 nodes, and each shipped torch module a check
reaches is loaded at its first call. One walk serves them all, and this one, a list that grows as it is read,
takes about half of ``ast.walk``'s time (no generator per node, no deque).
"""

from __future__ import annotations

import ast


def all_nodes(tree: ast.AST) -> list[ast.AST]:
    """``list(ast.walk(tree))``: breadth first, each node's children in field order."""
    nodes: list[ast.AST] = [tree]
    append, extend = nodes.append, nodes.extend
    for node in nodes:  # a list read while it grows: each node's children join the end, as ast.walk's queue
        for name in node._fields:
            value = getattr(node, name, None)
            if isinstance(value, list):
                extend([item for item in value if isinstance(item, ast.AST)])
            elif isinstance(value, ast.AST):
                append(value)
    return nodes
