"""The rule registry: one module per rule, its docstring the rule's documentation.

Every rule module defines ``CODE`` and ``SUMMARY``. A region rule's
``check(region, analysis)`` yields ``Finding``s for one region: structural
rules from the region's syntax, the rest from the model builder's problems
and effects (``model/builder/``); the engine runs those.
``ppy-unused-ignore`` judges a whole module's suppression comments after the
region rules, so the engine calls it on its own. ``ppy-check --explain CODE``
prints the docstring, and the README's rule section is checked against these
docstrings by a test.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from ppy_check.messages import ALL_CODES, Code


def _module(code: Code) -> ModuleType:
    return importlib.import_module(f"ppy_check.rules.{code.module}")


# Every rule, in the registry's order (ppy_check.messages.Code): what --explain, the README, SARIF and
# --statistics describe.
KNOWN_RULES: dict[str, ModuleType] = {code.value: _module(code) for code in Code}
# The region rules, the default selection, in ALL_CODES order; the engine runs them.
RULES: dict[str, ModuleType] = {code: KNOWN_RULES[code] for code in ALL_CODES}


def explain(code: str) -> str | None:
    """The rule's documentation in Markdown, headed by its code and summary; None for an unknown code."""
    module = KNOWN_RULES.get(code)
    if module is None:
        return None
    doc = (module.__doc__ or "").strip()
    return f"**{code}**: {module.SUMMARY}\n\n{doc}\n"
