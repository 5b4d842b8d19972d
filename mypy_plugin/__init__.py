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

import ast
import functools
import hashlib
import os
from pathlib import Path
from collections.abc import Callable
from typing import Any

from mypy import errorcodes
from mypy.errorcodes import ErrorCode
from mypy.nodes import ARG_STAR, ARG_STAR2, CallExpr, Context, Decorator, FuncDef, MypyFile, OverloadedFuncDef, RefExpr, Var
from mypy.plugin import FunctionContext, MethodContext, Plugin, ReportConfigContext
from mypy.types import (CallableType, Instance, NoneType, Overloaded, ProperType, TupleType, Type, UnionType,
                        get_proper_type)

from ppy_check import messages
from ppy_check.config import ConfigError
from ppy_check.diagnostic import Diagnostic
from ppy_check.engine import Placed, merged_by_region, region_findings, suppressed
from ppy_check.messages import Message, refusals
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
    from ppy_check.installed_opdata import in_use
    from ppy_check.version import full_version

    # This module's own code too: what it leaves to mypy (a binding mypy checks) changes what it reports. And the
    # op data read: made for the installed torch where it is not the shipped data's release.
    own = hashlib.sha256(Path(__file__).read_bytes()).hexdigest()
    return hashlib.sha256(f"{full_version()}\0{in_use().identity}\0{own}\0{disabled}".encode()).hexdigest()[:16]


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
        if name in ("torch.Size", "torch._C.Size"):  # as the syntax reads it (ppy_check/annotations.py): a tuple of ints
            return t.SeqT(t.INT, passed="size")
        if name in ("typing.Sequence", "collections.abc.Sequence") and len(proper.args) == 1:
            inner = region_type(proper.args[0])
            return t.SeqT(inner, passed="sequence") if inner is not None else None
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
        found = region_findings(checked, path, lines, codes)
        mypy_calls = _CallsMypyChecks(region, func, api) if any(_binding(p) for p in found) else None
        for diagnostic in self._once(region, regions, found, path, lines, codes):
            line_text = lines[diagnostic.line - 1] if 0 < diagnostic.line <= len(lines) else ""
            if suppressed(line_text, diagnostic.code, type_comments=False):
                continue
            if mypy_calls is not None and mypy_calls.reports(diagnostic, found, lines):
                continue  # mypy's own `call-arg` says it at this call: one mistake, one error
            context = Context(line=diagnostic.line, column=diagnostic.column - 1)
            api.fail(diagnostic.message, context, code=ERROR_CODES[diagnostic.code])
        tree = getattr(api, "tree", None)
        if tree is not None:
            # The decoration is checked as part of the module's top level: that is the
            # target a change to the captured variable must recheck.
            triggers = set(oracle.dependencies) | self._helper_triggers(checked, api)
            for trigger in triggers:
                tree.plugin_deps.setdefault(trigger, set()).update({func.fullname, tree.fullname})

    @staticmethod
    def _once(region: Region, regions: list[Region], found: list[Placed], path: str, lines: list[str],
              codes: list[str]) -> list[Diagnostic]:
        """The region's findings as ppy-check reports them: one in a helper that several regions of the file
        inline is said once, naming them all, by the first of them (the others' hooks leave it out)."""
        if not any(placed.key is not None for placed in found):
            return [placed.diagnostic for placed in found]
        # The other regions as the syntax alone gives them (their hooks come before or after this one).
        per_region = [found if other is region else region_findings(other, path, lines, codes) for other in regions]
        mine = merged_by_region(per_region)[regions.index(region)]
        return [d for d, placed in zip(mine, found) if placed.key is None or d.regions[:1] == (region.name,)]

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


def _binding(placed: Placed) -> bool:
    """A finding in the region's own code that Python's binding of a call's arguments refuses (mypy's call-arg)."""
    why = dict(placed.text.fields).get("why")
    return placed.diagnostic.code == messages.TYPE and not placed.text.context and isinstance(why, Message) \
        and any(why.template == reason.template for reason in refusals.BINDING)


# The class ppy binds a method call of a tensor parameter against, as mypy names it.
_TENSOR_CLASSES = frozenset({"torch.Tensor", "torch._tensor.Tensor"})


class _CallsMypyChecks:
    """The calls in a region's body whose binding mypy checks against the def ppy binds them to: the body is
    checked, and the callee is a module-level name (or an attribute of an imported module, to any depth) bound
    to a def, overloaded or not, in a source file or in torch's own stubs (another stub may take what its
    source refuses), or a method of a `torch.Tensor` parameter the body never rebinds (a subclass's own method
    is not the one ppy binds). A def that takes `*args` or `**kwargs` refuses no argument, and a line that
    silences mypy, or a switched-off code mypy would report with, keeps ppy's finding; so does a call of
    anything else (a local, an attribute)."""

    def __init__(self, region: Region, func: FuncDef, api: Any):
        options = api.options
        self.region = region
        self.modules: dict[str, MypyFile] = getattr(api, "modules", {})
        self.globals = getattr(getattr(api, "tree", None), "names", None)
        self.checked = self.globals is not None and (not func.is_dynamic() or options.check_untyped_defs)
        self.disabled = options.disabled_error_codes
        stored = {node.id for node in ast.walk(region.node) if isinstance(node, ast.Name)
                  and isinstance(node.ctx, ast.Store)}
        self.local = stored | {a.arg for a in ast.walk(region.node.args) if isinstance(a, ast.arg)}
        signature = func.type
        self.parameters: dict[str, ProperType] = {}
        if isinstance(signature, CallableType):
            self.parameters = {name: get_proper_type(kind) for name, kind in zip(signature.arg_names, signature.arg_types)
                               if name is not None and name not in stored}

    def reports(self, diagnostic: Diagnostic, found: list[Placed], lines: list[str]) -> bool:
        if not self.checked or not any(_binding(p) and p.diagnostic == diagnostic for p in found):
            return False
        text = lines[diagnostic.line - 1] if 0 < diagnostic.line <= len(lines) else ""
        if "type: ignore" in text:
            return False  # what the line silences is mypy's, not ppy's
        offset = len(text[:diagnostic.column - 1].encode("utf-8"))  # ast's columns count UTF-8 bytes
        call = next((node for node in ast.walk(self.region.node) if isinstance(node, ast.Call)
                     and node.lineno == diagnostic.line and node.col_offset == offset), None)
        parts = _dotted(call.func) if call is not None else None
        if not parts:
            return False
        if len(parts) == 2 and parts[0] in self.parameters:
            receiver = self.parameters[parts[0]]
            return isinstance(receiver, Instance) and receiver.type.fullname in _TENSOR_CLASSES and \
                self._checks(receiver.type.get_method(parts[1]))
        if parts[0] in self.local:
            return False
        names = self.globals
        for part in parts[:-1]:
            symbol = names.get(part) if names is not None else None
            if symbol is None or not isinstance(symbol.node, MypyFile):
                return False
            names = symbol.node.names
        symbol = names.get(parts[-1]) if names is not None else None
        return symbol is not None and self._from_source(symbol.node) and self._checks(symbol.node)

    def _from_source(self, callee: Any) -> bool:
        """Whether mypy's def of ``callee`` is the one ppy binds to: in a source file, or in torch's stubs."""
        module = self.modules.get(getattr(callee, "fullname", "").rpartition(".")[0])
        return module is not None and (not module.is_stub or module.fullname.split(".")[0] == "torch")

    def _checks(self, callee: Any) -> bool:
        """Whether mypy reports a call of ``callee`` that Python's binding refuses: a def it has a signature of,
        under the codes it would report with switched on (`call-overload` for an overloaded one; `misc` for a
        value given twice)."""
        if isinstance(callee, FuncDef):
            # An unannotated def too: mypy binds a call of it, to parameters of type Any.
            code, kinds = errorcodes.CALL_ARG, [callee.arg_kinds]
        elif isinstance(callee, OverloadedFuncDef) and isinstance(callee.type, Overloaded):
            code, kinds = errorcodes.CALL_OVERLOAD, [item.arg_kinds for item in callee.type.items]
        else:
            return False
        return not {code, errorcodes.MISC} & set(self.disabled) and \
            not any({ARG_STAR, ARG_STAR2} & set(item) for item in kinds)


def _dotted(node: ast.expr) -> list[str] | None:
    """`F.softmax` as ["F", "softmax"]; None for what is not a dotted name."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return base + [node.attr] if base is not None else None
    return None


def plugin(version: str) -> type[Plugin]:
    return PpyPlugin
