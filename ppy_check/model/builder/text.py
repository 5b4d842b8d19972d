"""How the builder shows source in messages: an expression's text, cut short, and plain spellings."""

from __future__ import annotations

import ast

from ppy_check import written
from ppy_check.node_memo import per_node

# Expressions inside one that display() spells as written; past them a message shows `...` (the text is cut at
# 60 characters anyway), so that displaying each level of a deep expression costs no more than this.
DISPLAY_NODES = 64


@per_node  # torch's shipped code is displayed by every region that inlines it
def display(node: ast.AST) -> str:
    """Source text for a message: one line, at most 60 characters."""
    small = _smaller_than(node, DISPLAY_NODES)
    plain = _plain_text(node) if small else None
    text = plain if plain is not None else written.unparse(node) if small else ast.unparse(_pruned(node, [DISPLAY_NODES]))
    first, *rest = text.splitlines() or [""]
    if rest:
        first += " ..."
    return first if len(first) <= 60 else first[:57] + "..."


def _smaller_than(node: ast.AST, limit: int) -> bool:
    """Whether the tree under ``node`` holds fewer than ``limit`` expressions (it is walked no further)."""
    pending = [node]
    seen = 0
    while pending:
        current = pending.pop()
        if isinstance(current, ast.expr):
            seen += 1
            if seen >= limit:
                return False
        pending.extend(ast.iter_child_nodes(current))
    return True


def _pruned(node: ast.AST, budget: list[int]) -> ast.AST:
    """A copy of ``node`` with ``budget`` expressions of its own, and every one past them `...`. The last fields are
    copied first: deep expressions nest on the left (`x + x + ...`, `x.abs().abs()...`), so the copy keeps the
    operands written last, as they are, and the deep rest reads `...`."""
    if isinstance(node, ast.expr):
        budget[0] -= 1
    copy = type(node)()
    for name, value in reversed(list(ast.iter_fields(node))):
        if isinstance(value, ast.AST):
            value = _pruned_child(value, budget)
        elif isinstance(value, list):
            value = [_pruned_child(item, budget) if isinstance(item, ast.AST) else item for item in reversed(value)][::-1]
        setattr(copy, name, value)
    return copy


def _pruned_child(node: ast.AST, budget: list[int]) -> ast.AST:
    if budget[0] <= 0 and isinstance(node, ast.expr):
        return ast.Name(id="...")
    spelling = written.spelling(node)
    if spelling is not None:
        budget[0] -= 1
        return ast.Name(id=spelling)  # prints as the number was written (ppy_check.written)
    return _pruned(node, budget)


def _plain_text(node: ast.AST) -> str | None:
    """``ast.unparse(node)`` for the plainest expressions: names, attributes, calls and tuples of them, ints; None
    for anything else. Every call is displayed, and most calls are chains like ``F.linear(h, w).reshape``, where
    unparse's visitor would be a tenth of the model's cost. The spelling follows unparse exactly (a test compares),
    but for numbers, which read as written (ppy_check.written)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        if isinstance(node.value, ast.Constant):
            return None  # `(1).real` and `"".join`: unparse's own care
        base = _plain_text(node.value)
        return None if base is None else f"{base}.{node.attr}"
    if isinstance(node, ast.Call):
        func = _plain_text(node.func)
        args = [_plain_text(arg) for arg in node.args]
        args += [None if k.arg is None else _keyword_text(k.arg, _plain_text(k.value)) for k in node.keywords]
        arg_texts = [arg for arg in args if arg is not None]
        if func is None or len(arg_texts) < len(args):
            return None
        return f"{func}({', '.join(arg_texts)})"
    if isinstance(node, ast.Tuple):
        items = [_plain_text(item) for item in node.elts]
        item_texts = [item for item in items if item is not None]
        if len(item_texts) < len(items):
            return None
        return f"({item_texts[0]},)" if len(item_texts) == 1 else f"({', '.join(item_texts)})"
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return written.spelling(node) or repr(node.value)
    return None


def _keyword_text(name: str, value: str | None) -> str | None:
    return None if value is None else f"{name}={value}"


def _strip_dotted(dotted: str) -> str:
    """One spelling per function: ``torch.functional.X`` is ``torch.X``, ``torch._VF.X`` the builtin behind it."""
    if dotted.startswith("torch.functional."):
        return "torch." + dotted[len("torch.functional."):]
    if dotted == "torch._VF" or dotted.startswith("torch._VF."):
        return "torch._C._VariableFunctions" + dotted[len("torch._VF"):]
    return dotted


def _text_of(text: ast.expr) -> str:
    """A message of torch's Python code as a finding shows it: a string, an f-string's literal parts with `{...}`
    for each value, or the expression's source."""
    if isinstance(text, ast.Constant) and isinstance(text.value, str):
        return text.value
    if not isinstance(text, ast.JoinedStr):
        return display(text)
    return "".join(str(part.value) if isinstance(part, ast.Constant) else "{" + display(part.value) + "}"
                   for part in text.values if isinstance(part, (ast.Constant, ast.FormattedValue)))


def _is_text(node: ast.expr) -> bool:
    """A message's text: string literals, f-strings and their concatenations."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and _is_text(node.left) and _is_text(node.right)


def _is_docstring(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) and isinstance(statement.value.value, str)


def _statement_text(statement: ast.AST) -> str:
    """What a finding about a whole statement names: the expression it computes, or the statement."""
    value = getattr(statement, "value", None)
    if isinstance(statement, (ast.Return, ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign)) and \
            isinstance(value, ast.expr):
        return display(value)
    if isinstance(statement, ast.FunctionDef):
        return statement.name
    return display(statement)


def _short(text: str) -> str:
    first = text.splitlines()[0] if text else ""
    return first if len(first) <= 120 else first[:117] + "..."
