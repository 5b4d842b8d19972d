"""The mypy front-end of ppy's rules: the same findings as ``ppy-check``, in the editor.

Enable with ``[tool.mypy] plugins = ["ppy"]`` (or ``"mypy_plugin"``). mypy has
no decorator hook, so the plugin watches the decorations themselves: applying
``ppy.opt(level)`` is a call of ``Optimize.__call__``, applying a bare
``ppy.opt`` a call of ``opt`` and applying ``ppy.pure`` a call of ``pure``; the
decorated ``FuncDef`` is ``ctx.context``. Every hook returns mypy's own type of
the decoration, a ``Region[P, R]``, so a call of the region is checked as a
call of the function.

At that point mypy has not checked the function's body yet, so the plugin runs
ppy's own rule engine over the region's source, exactly as ``ppy-check`` does,
and adds what only mypy knows through an oracle (``ppy_check/oracle.py``):
annotations that are aliases of ``torch.Tensor``, and attributes of other
modules that are variables. Findings keep their codes (registered mypy error
codes, so ``# type: ignore[ppy-loop]`` and ``disable_error_code`` work), their
message text, line and column.
"""

from __future__ import annotations

import functools
import hashlib
import os
from pathlib import Path
from collections.abc import Callable
from typing import Any

from mypy.errorcodes import ErrorCode
from mypy.nodes import CallExpr, Context, Decorator, FuncDef, RefExpr, Var
from mypy.plugin import FunctionContext, MethodContext, Plugin, ReportConfigContext
from mypy.types import CallableType, Instance, NoneType, ProperType, TupleType, Type, UnionType, get_proper_type

from ppy_check import messages
from ppy_check.config import ConfigError
from ppy_check.engine import check_region, suppressed
from ppy_check.module import ModuleRegions
from ppy_check.oracle import informed
from ppy_check.region import Region
from ppy_check.selection import Selection
from ppy_check.source import ByContent, SourceError
from ppy_check.model import types as t

OPT_CALL = "ppy.decorators.Optimize.__call__"
PURE = "ppy.decorators.pure"
OPT = "ppy.decorators.opt"

ERROR_CODES = {code: ErrorCode(code, f"ppy region rule {code}", "ppy") for code in messages.ALL_CODES}
_TENSOR_NAMES = {"torch._tensor.Tensor", "torch.Tensor"}
_SCALARS: dict[str, t.Type] = {
    "builtins.int": t.INT, "builtins.float": t.NUMBER, "builtins.bool": t.BOOL, "builtins.str": t.STR,
    "torch.dtype": t.DTYPE, "torch._C.dtype": t.DTYPE, "torch.device": t.DEVICE, "torch._C.device": t.DEVICE,
}


def rules_version() -> str:
    """Changes whenever the rules could report differently: cached mypy results are then rechecked."""
    return _rules_version(os.environ.get("PPY_MYPY_DISABLE", ""))


@functools.cache
def _rules_version(disabled: str) -> str:
    from ppy_check.version import full_version

    return hashlib.sha256(f"{full_version()}\0{disabled}".encode()).hexdigest()[:16]


def region_type(kind: Type | None) -> t.Type | None:
    """A mypy type as a region value type, or None when it is none of them."""
    if kind is None:
        return None
    proper: ProperType = get_proper_type(kind)
    if isinstance(proper, Instance):
        name = proper.type.fullname
        if name in _TENSOR_NAMES or any(base.fullname in _TENSOR_NAMES for base in proper.type.mro):
            return t.TENSOR
        if name in _SCALARS:
            return _SCALARS[name]
        if name == "builtins.tuple" and len(proper.args) == 1:
            inner = region_type(proper.args[0])
            return t.SeqT(inner) if inner is not None else None
        return None
    if isinstance(proper, TupleType):
        items = [region_type(item) for item in proper.items]
        return t.TupleT(tuple(items)) if all(i is not None for i in items) else None  # type: ignore[arg-type]
    if isinstance(proper, UnionType):
        others = [get_proper_type(i) for i in proper.items if not isinstance(get_proper_type(i), NoneType)]
        if len(others) == 1 and len(others) < len(proper.items):
            inner = region_type(others[0])
            return t.optional(inner) if inner is not None and not isinstance(inner, t.OptionalT) else None
    return None


class MypyOracle:
    """What mypy knows about one decorated function and the modules it can see."""

    def __init__(self, func: FuncDef, api: Any):
        self.func = func
        self.api = api
        self.dependencies: set[str] = set()

    def param_type(self, name: str) -> t.Type | None:
        signature = self.func.type
        if not isinstance(signature, CallableType):
            return None
        for arg_name, arg_type in zip(signature.arg_names, signature.arg_types):
            if arg_name == name:
                return region_type(arg_type)
        return None

    def return_type(self) -> t.Type | None:
        signature = self.func.type
        returned = getattr(signature, "ret_type", None)
        if returned is not None and isinstance(get_proper_type(returned), NoneType):
            return t.NONE
        return region_type(returned)

    def module_variable(self, dotted: str) -> bool:
        module, _, name = dotted.rpartition(".")
        tree = self.api.modules.get(module) if hasattr(self.api, "modules") else None
        if tree is None:
            return False
        symbol = tree.names.get(name)
        if symbol is None or not isinstance(symbol.node, Var):
            return False
        # A change to that variable (say, from a constant to a tensor) must recheck this region.
        self.dependencies.add(f"<{dotted}>")
        return True


class PpyPlugin(Plugin):
    def __init__(self, options: Any):
        super().__init__(options)
        # Parses kept by the digest of the bytes read (dmypy lives long: a stat can be put back after an edit).
        self._parsed: ByContent[ModuleRegions] = ByContent(lambda source: ModuleRegions.load(source.path, source.text))
        self._selection = Selection()
        self._selected: dict[str, bool | str] = {}  # path -> selected, or the configuration's problem

    def get_function_hook(self, fullname: str) -> Callable[[FunctionContext], Type] | None:
        if fullname == PURE:
            return self._on_pure
        # A bare `@ppy.opt`; the call in `@ppy.opt(3)` is hooked too, but its context is no Decorator.
        return self._on_decoration if fullname == OPT else None

    def get_method_hook(self, fullname: str) -> Callable[[MethodContext], Type] | None:
        return self._on_decoration if fullname == OPT_CALL else None

    def report_config_data(self, ctx: ReportConfigContext) -> Any:
        if "site-packages" in ctx.path or ctx.path.endswith(".pyi"):
            return None
        # Whether ppy selects the file is part of its result: excluding it (or no longer) rechecks it.
        return {"ppy-rules": rules_version(), "ppy-selected": self._is_selected(ctx.path)}

    # ------------------------------------------------------------------------

    def _regions(self, path: str) -> tuple[list[Region], list[str]]:
        """The file's regions and lines, read as Python and ppy-check read it (its coding comment, a BOM)."""
        try:
            module = self._parsed.get(path)
        except (OSError, SourceError):  # mypy reports a file it cannot read or decode itself
            return [], []
        return module.regions, module.lines

    def _on_decoration(self, ctx: FunctionContext | MethodContext) -> Type:
        decorator = ctx.context
        if isinstance(decorator, Decorator):
            try:
                self._check(decorator.func, ctx)
            except Exception as error:  # never take mypy down with us
                ctx.api.fail(f"ppy: internal error while checking `{decorator.func.name}`: {error}", decorator.func)
        return ctx.default_return_type

    def _on_pure(self, ctx: FunctionContext) -> Type:
        """Both decorators of a region trigger a hook: only `ppy.opt`'s reports when both are there."""
        decorator = ctx.context
        if isinstance(decorator, Decorator):
            for expression in decorator.original_decorators:
                callee = expression.callee if isinstance(expression, CallExpr) else expression
                if isinstance(callee, RefExpr) and callee.fullname == OPT:
                    return ctx.default_return_type
        return self._on_decoration(ctx)

    def _check(self, func: FuncDef, ctx: FunctionContext | MethodContext) -> None:
        api = ctx.api
        path = getattr(api, "path", None)
        if not path:
            return
        selected = self._is_selected(path)
        if isinstance(selected, str):
            api.fail(f"ppy: {selected}", func)
            return
        if not selected:
            return
        regions, lines = self._regions(path)
        region = next((r for r in regions if r.node.lineno == func.line and r.name == func.name), None)
        if region is None:
            return
        oracle = MypyOracle(func, api)
        disabled = set(filter(None, os.environ.get("PPY_MYPY_DISABLE", "").split(",")))
        codes = [code for code in messages.ALL_CODES if code not in disabled]
        checked = informed(region, oracle)
        for diagnostic in check_region(checked, path, lines, codes):
            line_text = lines[diagnostic.line - 1] if 0 < diagnostic.line <= len(lines) else ""
            if suppressed(line_text, diagnostic.code, type_comments=False):
                continue
            context = Context(line=diagnostic.line, column=diagnostic.column - 1)
            api.fail(diagnostic.message, context, code=ERROR_CODES[diagnostic.code])
        tree = getattr(api, "tree", None)
        if tree is not None:
            # The decoration is checked as part of the module's top level: that is the
            # target a change to the captured variable must recheck.
            triggers = set(oracle.dependencies) | self._helper_triggers(checked, api)
            for trigger in triggers:
                tree.plugin_deps.setdefault(trigger, set()).update({func.fullname, tree.fullname})

    def _is_selected(self, path: str) -> bool | str:
        """Whether ppy-check selects the file ([tool.ppy] exclude): the plugin reports what ppy-check does.
        A string is the configuration's problem, to report instead."""
        if path not in self._selected:
            try:
                self._selected[path] = self._selection.selected(Path(path))
            except ConfigError as error:
                self._selected[path] = str(error)
        return self._selected[path]

    @staticmethod
    def _helper_triggers(region: Region, api: Any) -> set[str]:
        """A helper the region inlines from another module: a change to it must recheck the region."""
        analysis = region.analysis
        if analysis is None or not hasattr(api, "modules"):
            return set()
        by_path = {os.path.realpath(tree.path): name for name, tree in api.modules.items() if getattr(tree, "path", None)}
        triggers = set()
        for callee, _, _ in analysis.callees:
            module = by_path.get(os.path.realpath(callee.site.path))
            if module is not None:
                triggers.add(f"<{module}.{callee.name}>")
        return triggers


def plugin(version: str) -> type[Plugin]:
    return PpyPlugin
