"""One module's regions, read once: the parse, the module scope and every region site.

ppy-check, the mypy plugin, ``ppy build``, the runtime and the pytest plugin
all start here, so they agree on which functions are regions and what each
is called.
"""

from __future__ import annotations

import ast
import sys
import warnings
from dataclasses import dataclass, field

from ppy_check import messages as m, written
from ppy_check.diagnostic import Diagnostic
from ppy_check.nodes import all_nodes
from ppy_check.region import Region, find_regions
from ppy_check.scope import ModuleScope, build_scope
from ppy_check.source import python_lines


def parse_module(text: str, path: str) -> ast.Module | Diagnostic:
    """The module's syntax tree, or the ``ppy-syntax`` finding saying why there is none."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences are not ours to report
            tree = ast.parse(text, filename=path)
            if sys.version_info < (3, 11):
                _compiles_as_deep(text, path)
            return tree
    except SyntaxError as error:
        line = error.lineno or 1
        column = error.offset or 1
        return Diagnostic(path, line, column, m.SYNTAX, m.SYNTAX_PARSE.format(error=error.msg), "")
    except (ValueError, RecursionError, MemoryError) as error:
        reason = str(error) or type(error).__name__
        return Diagnostic(path, 1, 1, m.SYNTAX, m.SYNTAX_PARSE.format(error=reason), "")


def _compiles_as_deep(text: str, path: str) -> None:
    """Raise RecursionError where 3.10's compiler refuses the nesting its parser took (3.11's parser refuses it
    itself, so a file too deep to run is a syntax finding on both). Only the depth: the compiler's other errors
    (a late `from __future__`, a repeated parameter) are no finding on 3.11 either. From the text, as Python
    compiles a file: converting the tree back to C hits the recursion limit long before."""
    try:
        compile(text, path, "exec", dont_inherit=True)
    except SyntaxError:
        pass


@dataclass
class ModuleRegions:
    path: str
    text: str
    lines: list[str]
    tree: ast.Module | None
    scope: ModuleScope
    regions: list[Region] = field(default_factory=list)
    syntax_error: Diagnostic | None = None

    @classmethod
    def load(cls, path: str, text: str) -> ModuleRegions:
        tree = parse_module(text, path)
        lines = python_lines(text)  # as ast numbers them: a form feed is no line break
        if isinstance(tree, Diagnostic):
            return cls(path, text, lines, None, ModuleScope(), syntax_error=tree)
        nodes = all_nodes(tree)  # one walk for both: the walk of a big module costs more than either's questions
        written.remember(tree, lines, nodes)  # so that messages quote `1e4` as written, not as `10000.0`
        scope = build_scope(tree, nodes)
        try:
            regions = find_regions(tree, scope, lines, path)
        except RecursionError:
            # Definitions nested deeper than Python's own limit: no region can live there.
            regions = []
        return cls(path, text, lines, tree, scope, regions)

    def region(self, key: str) -> Region | None:
        """The region whose site key (``qualname:line``) is ``key``."""
        return next((r for r in self.regions if r.site.key == key), None)
