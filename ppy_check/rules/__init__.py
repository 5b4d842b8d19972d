"""The rule registry: one module per rule, its docstring the rule's documentation.

Every rule module defines ``CODE`` and ``SUMMARY``. A region rule's
``check(region, analysis)`` yields ``Finding``s for one region: structural
rules from the region's syntax, the rest from the model builder's problems
and effects (``model/builder.py``); the engine runs those.
``ppy-unused-ignore`` judges a whole module's suppression comments after the
region rules, so the engine calls it on its own. ``ppy-check --explain CODE``
prints the docstring, and the README's rule section is checked against these
docstrings by a test.
"""

from __future__ import annotations

from types import ModuleType

from ppy_check.rules import branch, captured, impure, loop, syntax, type_errors, unsupported, untyped, unused_ignore

# The region rules, in ALL_CODES order.
RULES: dict[str, ModuleType] = {module.CODE: module for module in
                                [untyped, loop, branch, captured, impure, unsupported, syntax, type_errors]}


# Every rule, in KNOWN_CODES order: what --explain, the README, SARIF and --statistics describe.
KNOWN_RULES: dict[str, ModuleType] = {**RULES, unused_ignore.CODE: unused_ignore}


def explain(code: str) -> str | None:
    """The rule's documentation in Markdown, headed by its code and summary; None for an unknown code."""
    module = KNOWN_RULES.get(code)
    if module is None:
        return None
    doc = (module.__doc__ or "").strip()
    return f"**{code}**: {module.SUMMARY}\n\n{doc}\n"
