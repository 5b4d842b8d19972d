"""Expressions: the dispatch over expression forms, names and where they resolve, constants.

A new expression form goes in ``Expressions._expr``'s dispatch (operators,
attributes, subscripts and calls each have their own part).
"""

from __future__ import annotations

import ast

from ppy_check import torch_python
from ppy_check.messages import refusals
from ppy_check.model import budgets, constants, hostmath
from ppy_check.model import types as t
from ppy_check.model.assumptions import Assumed, Assumption
from ppy_check.model.budgets import Budget, Exceeded
from ppy_check.model.builder.control import _Abandon, _LibraryRefused
from ppy_check.model.builder.facts import _harmless, _item, _needs_binding
from ppy_check.model.builder.part import Part
from ppy_check.model.builder.tables import BINARY_OPS, LIBRARY_CONSTANTS, MODULE_PATHS, STANDARD_ROOTS
from ppy_check.model.builder.text import _strip_dotted, display
from ppy_check.model.builder.values import (
    POISON,
    BooleanDispatch,
    FunctionRef,
    ModuleValue,
    Helper,
    LibraryModule,
    ModuleRef,
    Poisoned,
    ProjectModule,
    UntypedParam,
    Value,
    _is_expr,
)
from ppy_check.model.ir import (
    Const,
    Expr,
    Host,
    HostOp,
    MakeSeq,
    MakeTuple,
    Param,
    Query,
    Read,
    ResultClass,
    SeqSlice,
    Span,
    TensorQuery,
)
from ppy_check.model.problems import CaptureOrigin
from ppy_check.scope import BUILTIN_NAMES, BindingKind, ModuleScope


class Expressions(Part):
    """Expressions: names, constants, displays, f-strings."""

    def shadow(self, node: ast.AST) -> None:
        """Look inside a construct the structural rules refuse, so one run reports every problem in it."""
        saved = (len(self.state.body), dict(self.state.env), self.state.returned)
        for child in ast.iter_child_nodes(node):
            try:
                if isinstance(child, ast.stmt):
                    try:
                        self.stmts.statement(child)
                    except _Abandon:
                        self.stmts.poison_targets(child)
                        raise
                elif isinstance(child, ast.expr):
                    if isinstance(node, (ast.For, ast.AsyncFor)) and child is node.target:
                        self.stmts.bind_poison(child)
                    elif isinstance(node, (ast.For, ast.AsyncFor)) and child is node.iter and \
                            isinstance(child, ast.Call) and display(child.func) == "range" and "range" not in self.state.env:
                        # A loop over `range` keeps the finding that names `range` too (where it stood before
                        # range() became a value a region may take whole): ppy-check's users select on both.
                        self._range_in_loop(child)
                    elif isinstance(node, ast.withitem) and child is node.optional_vars:
                        self.stmts.bind_poison(child)
                    elif not isinstance(node, (ast.ExceptHandler, ast.match_case, ast.arguments)):
                        self.expr(child)
                elif isinstance(child, (ast.withitem, ast.match_case, ast.ExceptHandler)):
                    self.shadow(child)
            except _Abandon:
                pass
        del self.state.body[saved[0]:]
        self.state.returned = saved[2]

    def repeated(self, node: ast.ListComp) -> Expr | None:
        """`[value for _ in range(n)]` in torch's Python code, its value not depending on the loop: the value,
        computed once (it reads no tensor and cannot raise), repeated n times."""
        (generator,) = node.generators if len(node.generators) == 1 else (None,)
        if generator is None or generator.ifs or not isinstance(generator.target, ast.Name) or \
                not isinstance(generator.iter, ast.Call) or display(generator.iter.func) != "range" or \
                len(generator.iter.args) != 1 or \
                any(isinstance(n, ast.Name) and n.id == generator.target.id for n in ast.walk(node.elt)):
            return None
        saved = self.state.snapshot()
        try:
            count = self.atom(self.expr(generator.iter.args[0]))
            item = self.atom(self.expr(node.elt))
        except (_Abandon, _LibraryRefused):
            self.state.rollback(saved)
            return None
        if not isinstance(count.type, t.IntT) or not t.is_number(item.type) or \
                not all(_harmless(statement) for statement in self.state.body[saved[0]:]):
            self.state.rollback(saved)
            return None
        return self.ops.sequence_operator(ast.Mult(), MakeTuple((item,), t.TupleT((item.type,)), item.span), count,
                                      Span.of(node), display(node))

    def shadow_scope(self, node: ast.DictComp | ast.SetComp | ast.ListComp | ast.GeneratorExp | ast.Lambda
                     | ast.NamedExpr) -> Poisoned:
        """A comprehension, lambda or walrus: reported by the loop or syntax rule; its names are still checked."""
        self.state.structural(node)
        saved = dict(self.state.env)
        try:
            if isinstance(node, ast.Lambda):
                for arg in node.args.posonlyargs + node.args.args + node.args.kwonlyargs:
                    self.state.env[arg.arg] = POISON
                self.expr(node.body)
            elif isinstance(node, ast.NamedExpr):
                self.expr(node.value)
            else:
                for generator in node.generators:
                    self.expr(generator.iter)
                    self.stmts.bind_poison(generator.target)
                    for condition in generator.ifs:
                        self.expr(condition)
                parts = (node.key, node.value) if isinstance(node, ast.DictComp) else (node.elt,)
                for part in parts:
                    self.expr(part)
        except _Abandon:
            pass
        finally:
            self.state.env = saved
        if isinstance(node, ast.NamedExpr):
            self.state.env[node.target.id] = POISON
        return POISON

    def is_size(self, value: Expr) -> bool:
        """Whether Python's value is a torch.Size: `x.shape`, `x.size()`, their slices, sums and repeats."""
        if isinstance(value, TensorQuery):
            return value.query is Query.SHAPE
        if isinstance(value, Read):
            return value.var in self.state.size_vars
        if isinstance(value, SeqSlice):
            return self.is_size(value.base)
        if isinstance(value, Host) and value.op is HostOp.MUL and isinstance(value.type, t.SeqT):
            return self.is_size(value.operands[0])
        return value in self.state.sizes

    def classes_of(self, value: Expr, path: tuple[int, ...]) -> list[tuple[tuple[int, ...], ResultClass]]:
        """Where a returned value holds tuple subclasses Python would build (deepest first), by what made them."""
        while isinstance(value, Read) and value.var in self.state.values and not self.is_size(value):
            value = self.state.values[value.var]
        found: list[tuple[tuple[int, ...], ResultClass]] = []
        if isinstance(value, MakeTuple):
            for index, item in enumerate(value.items):
                found += self.classes_of(item, path + (index,))
        if self.is_size(value):
            found.append((path, ResultClass("torch", "Size")))
        elif isinstance(value.type, t.TupleT) and value.type.structseq is not None:
            found.append((path, ResultClass("torch.return_types", value.type.structseq)))
        return found

    def atom(self, value: Value, node: ast.AST | None = None) -> Expr:
        """The value as something cheap to read more than once: a constant, a parameter, a variable or a tuple of them."""
        if isinstance(value, (Param, Read)):
            return value  # the commonest, tested first
        if isinstance(value, (Poisoned, UntypedParam)):
            raise _Abandon
        if isinstance(value, ModuleValue):
            self.state.type_problem(Span.of(node) if node is not None else Span(0, 0, 0, 0), value.path,
                                    refusals.MODULE_NOT_VALUE(cls=value.cls.name))
            raise _Abandon
        if isinstance(value, (ModuleRef, FunctionRef)):
            self.state.unsupported(Span.of(node) if node is not None else Span(0, 0, 0, 0), value.dotted if isinstance(value, ModuleRef) else value.shown,
                             refusals.MODULE_FUNCTION_VALUE())
            raise _Abandon
        if isinstance(value, Const) and isinstance(value.value, int) and not isinstance(value.value, bool):
            if not hostmath.fits_int64(value.value):
                self.state.type_problem(value.span, budgets.shown_int(value.value), refusals.INT_DOES_FIT())
                raise _Abandon
        if isinstance(value, (Const, Param, Read)):
            return value
        if isinstance(value, MakeTuple):
            items = tuple(self.atom(i) for i in value.items)
            if all(a is b for a, b in zip(items, value.items)):
                return value
            return self.state.mark(MakeTuple(items, value.type, value.span, value.aliases), self.state.kind_of(value))
        assert _is_expr(value), f"{value} has no value a region can hold"  # modules stay names (bind_name)
        return self.state.mark(self.state.let(value), self.state.kind_of(value))

    def _range_in_loop(self, node: ast.Call) -> None:
        for arg in node.args:
            self.expr(arg)
        self.state.unsupported(Span.of(node), display(node.func), refusals.PYTHON_BUILTIN_RUNS())

    # --- expressions --------------------------------------------------------------------

    def expr(self, node: ast.expr, top: bool = False) -> Value:
        """The value of an expression; with ``top``, a call is left for the statement to bind."""
        self.state.count_step()
        value = self._expr(node)
        if _is_expr(value) and isinstance(value.type, t.TupleT) and self.state.leaves(value.type) > budgets.MAX_ITEMS:
            self.state.over_budget(Span.of(node), display(node), Exceeded(Budget.ITEMS, budgets.MAX_ITEMS))
            raise _Abandon
        if isinstance(node, (ast.List, ast.ListComp)):
            self.state.mark(value, "list")
        elif isinstance(node, ast.Tuple):
            self.state.mark(value, "tuple")
        if top or isinstance(value, (Poisoned, ModuleRef, FunctionRef, UntypedParam, ModuleValue)):
            return value
        if _needs_binding(value):
            return self.state.mark(self.state.let(value), self.state.kind_of(value))
        return value

    def _expr(self, node: ast.expr) -> Value:
        # Each branch takes the node's span only where it needs it: most names are read from `env` without one.
        if isinstance(node, ast.Constant):
            if isinstance(node.value, (bytes, complex)):
                kind = "complex numbers" if isinstance(node.value, complex) else "bytes"
                return self.state.unsupported(Span.of(node), repr(node.value), refusals.HAVE_NO_REGION(kind=kind))
            return Const(node.value, hostmath.type_of_value(node.value), Span.of(node))
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.Attribute):
            return self.members.attribute(node)
        if isinstance(node, ast.Subscript):
            return self.members.subscript(node)
        if isinstance(node, ast.Call):
            return self.calls.call(node)
        if isinstance(node, ast.BinOp):
            left = self.expr(node.left)
            right = self.expr(node.right)
            if isinstance(left, (Poisoned, UntypedParam)) or isinstance(right, (Poisoned, UntypedParam)):
                return POISON
            return self.ops.operator(node.op, self.atom(left, node.left), self.atom(right, node.right), Span.of(node),
                                 text=display(node))
        if isinstance(node, ast.UnaryOp):
            return self.ops.unary(node)
        if isinstance(node, ast.Compare):
            return self.ops.compare(node)
        if isinstance(node, (ast.Tuple, ast.List)):
            return self.display_sequence(node)
        if isinstance(node, (ast.IfExp, ast.BoolOp, ast.Dict, ast.ListComp)):
            folded = self.state.frame.dialect.expression(node)
            if folded is not None:
                return folded
        if isinstance(node, ast.IfExp):
            self.state.structural(node)
            self.expr(node.test)
            self.expr(node.body)
            self.expr(node.orelse)
            return POISON
        if isinstance(node, ast.BoolOp):
            self.state.structural(node)
            for value in node.values:
                self.expr(value)
            return POISON
        if isinstance(node, ast.JoinedStr):
            return self.fstring(node)
        if isinstance(node, (ast.Dict, ast.Set)):
            kind = "a dict" if isinstance(node, ast.Dict) else "a set"
            return self.state.unsupported(Span.of(node), display(node), refusals.NO_REGION_TYPE(kind=kind))
        if isinstance(node, ast.GeneratorExp) and id(node) in self.state.consumed:
            return self.library_dialect.comprehension(node)
        if isinstance(node, (ast.DictComp, ast.SetComp, ast.ListComp, ast.GeneratorExp, ast.Lambda, ast.NamedExpr)):
            return self.shadow_scope(node)
        if isinstance(node, ast.Starred):
            return self.state.unsupported(Span.of(node), display(node), refusals.UNPACKING_BELONGS_CALL())
        if isinstance(node, ast.Slice):
            return self.state.unsupported(Span.of(node), display(node), refusals.SLICE_BELONGS_INSIDE())
        # lambda, walrus, await, yield: the syntax rule reports them.
        self.state.structural(node)
        return POISON

    def fstring(self, node: ast.JoinedStr) -> Value:
        parts = []
        for value in node.values:
            if isinstance(value, ast.Constant):
                parts.append(str(value.value))
                continue
            assert isinstance(value, ast.FormattedValue)
            inner = self.expr(value.value)
            if isinstance(inner, Const) and value.format_spec is None and value.conversion == -1 and \
                    isinstance(inner.value, (str, int)) and not isinstance(inner.value, bool):
                parts.append(str(inner.value))
                continue
            return self.state.unsupported(Span.of(node), display(node), refusals.F_STRING_BUILDS())
        if sum(map(len, parts)) > budgets.MAX_TEXT:
            return self.state.over_budget(Span.of(node), display(node), Exceeded(Budget.TEXT, budgets.MAX_TEXT))
        return Const("".join(parts), t.STR, Span.of(node))

    # --- names ----------------------------------------------------------------------------

    def name(self, node: ast.Name) -> Value:
        name = node.id
        if name in self.state.env:
            self.state.frame.lists.discard(name)  # now referred to from elsewhere: it must not change any more
            return self.state.env[name]
        if name in self.state.frame.locals:
            return self.state.type_problem(Span.of(node), name, refusals.USED_BEFORE_ASSIGNED(name=name))
        return self.free_name(node)

    def free_name(self, node: ast.Name) -> Value:
        """Python's order: enclosing functions, then the module, then builtins; what the model took a name of the
        module or a builtin to be is recorded (``assume``), since Python reads it again at every call."""
        value = self.module_name(node)
        if self.state.frame.dialect.records_assumptions and not any(node.id in names for _, names in self.state.frame.enclosing):
            self.assume(self.state.frame.path, node.id, value)
        return value

    def assume(self, namespace: str, name: str, value: Value) -> None:
        """Record what the model took ``name`` in ``namespace`` (a file, or ``module:<dotted>``) to be."""
        scope = self.state.frame.scope
        binding = scope.bindings.get(name) if not namespace.startswith("module:") else None
        expected: tuple[Assumed, str] | None = None
        if isinstance(value, (ModuleRef, LibraryModule)):
            expected = Assumed.MODULE, value.dotted
        elif isinstance(value, ProjectModule):
            expected = Assumed.PROJECT_MODULE, value.path
        elif isinstance(value, FunctionRef) and value.helper is not None and not value.helper.library:
            expected = Assumed.HELPER, f"{value.helper.path}::{value.helper.node.name}"
        elif binding is not None and binding.kind is BindingKind.CONSTANT and binding.value is not None:
            expected = Assumed.LITERAL, repr(ast.literal_eval(binding.value))
        elif binding is not None:
            return  # a capture, already a finding
        elif isinstance(value, FunctionRef) and value.dotted.startswith("builtins.") and \
                not namespace.startswith("module:") and name not in scope.imports:
            expected = Assumed.BUILTIN, name
        elif isinstance(value, (FunctionRef, BooleanDispatch, Const)):
            dotted = scope.imports.get(name) if not namespace.startswith("module:") else f"{namespace[7:]}.{name}"
            if dotted is not None and dotted.split(".")[0] in ("torch", "math", "einops", "builtins"):
                dotted = _strip_dotted(dotted)
                expected = (Assumed.LIBRARY_VALUE, f"{dotted} {constants.python_repr(value.value)}") \
                    if isinstance(value, Const) else (Assumed.LIBRARY, dotted)
        if expected is not None:
            self.state.assumptions.setdefault((namespace, name), Assumption(namespace, name, *expected))

    def module_name(self, node: ast.Name) -> Value:
        name = node.id
        span = Span.of(node)
        for scope_name, names in reversed(self.state.frame.enclosing):
            if name in names:
                return self.state.capture(span, name, CaptureOrigin.CLOSURE, scope_name)
        scope = self.state.frame.scope
        if name in scope.imports:
            target = scope.imports[name]
            if target.startswith(".") and self.state.frame.dialect.reads_torch_source:
                # `from .utils import _pair` in torch.nn.modules.conv: relative to the shipped module's package.
                level = len(target) - len(target.lstrip("."))
                package = torch_python.module_of(self.state.frame.path).split(".")[:-level]
                target = ".".join([*package, target[level:]])
            if name in scope.modules:
                if self.state.frame.dialect.reads_torch_source and target != "torch":
                    if torch_python.shipped(target):
                        return LibraryModule(target)
                if target.split(".")[0] not in STANDARD_ROOTS:
                    found = self.project_value(target, name)
                    if isinstance(found, ProjectModule):
                        return found
                return ModuleRef(target)
            return self.dotted_value(_strip_dotted(target), span, name)
        binding = scope.bindings.get(name)
        if binding is not None:
            if binding.kind is BindingKind.CONSTANT and binding.value is not None:
                return self.constant(binding.value, span)
            if binding.kind is BindingKind.FUNCTION and isinstance(binding.node, ast.FunctionDef):
                if self.state.frame.dialect.reads_torch_source:
                    return self.library_dialect.library_function(f"{torch_python.module_of(self.state.frame.path)}.{name}", binding.node,
                                                 scope, name)
                return FunctionRef(f"<module>.{name}", name, Helper(binding.node, scope, self.state.frame.path))
            if self.state.frame.dialect.reads_torch_source and binding.kind is BindingKind.VALUE and binding.value is not None:
                return self.library_dialect.library_binding(binding.value, span, name)
            if self.state.frame.dialect.reads_torch_source and binding.kind is BindingKind.VALUE:
                # Defined more than once (`@overload` stubs, then the definition that runs).
                module = torch_python.module(torch_python.module_of(self.state.frame.path))
                definition = torch_python.function(module, name) if module is not None else None
                if definition is not None:
                    return self.library_dialect.library_function(f"{torch_python.module_of(self.state.frame.path)}.{name}", definition,
                                                 scope, name)
            if binding.kind in (BindingKind.FUNCTION, BindingKind.CLASS):
                return FunctionRef(f"<module>.{name}", name)
            if binding.rebound is not None and self.state.frame.dialect.refuses_rebound_names:
                return self.state.rebound_capture(span, name, binding.rebound)
            return self.state.capture(span, name, CaptureOrigin.GLOBAL, str(binding.line))
        if name in BUILTIN_NAMES:
            if scope.star_imports and self.state.frame.dialect.refuses_rebound_names:
                return self.state.rebound_capture(span, name, scope.star_imports[0])  # it may be what the import binds
            if f"builtins.{name}" in scope.patched and self.state.frame.dialect.refuses_rebound_names:
                return self.state.rebound_capture(span, name, scope.patched[f"builtins.{name}"])
            if name == "Ellipsis":
                return Const(..., t.ELLIPSIS, span)  # `...` by its name (torch.einsum's sublists hold it)
            return FunctionRef(f"builtins.{name}", name)
        return self.state.capture(span, name, CaptureOrigin.UNDEFINED, "")

    def constant(self, node: ast.expr, span: Span, scope: ModuleScope | None = None) -> Value:
        """A module-level literal constant, at the place it is read; with ``scope``, a default of torch's Python
        code may also be arithmetic on literals (``lower=1.0 / 8``) or a name of torch (``torch.preserve_format``)."""
        if isinstance(node, ast.Constant):
            return Const(node.value, hostmath.type_of_value(node.value), span)
        if isinstance(node, ast.UnaryOp):
            inner = self.constant(node.operand, span, scope)
            assert isinstance(inner, Const)
            value = -inner.value if isinstance(node.op, ast.USub) else +inner.value
            return Const(value, hostmath.type_of_value(value), span)
        if scope is not None and isinstance(node, ast.BinOp) and type(node.op) in BINARY_OPS:
            left, right = self.constant(node.left, span, scope), self.constant(node.right, span, scope)
            assert isinstance(left, Const) and isinstance(right, Const)
            return self.ops.host(BINARY_OPS[type(node.op)], [left, right], span, display(node))
        if scope is not None and isinstance(node, (ast.Name, ast.Attribute)):
            dotted = scope.resolve(node) or display(node)
            return self.dotted_value(_strip_dotted(dotted), span, display(node))
        assert isinstance(node, ast.Tuple)
        items = tuple(self.constant(item, span, scope) for item in node.elts)
        exprs = tuple(i for i in items if _is_expr(i))
        assert len(exprs) == len(items), "a literal tuple holds values"
        return MakeTuple(exprs, t.TupleT(tuple(i.type for i in exprs)), span)

    def dotted_value(self, dotted: str, span: Span, shown: str) -> Value:
        """What ``torch.float32``, ``math.pi``, ``torch.relu`` or ``F`` is, read as a name or attribute chain."""
        found = constants.module_constant(dotted)
        if found is not None:
            value, kind = found
            return Const(value, kind, span)
        if dotted in MODULE_PATHS:
            return ModuleRef(dotted)
        root = dotted.split(".")[0]
        if self.state.frame.dialect.reads_torch_source and dotted in LIBRARY_CONSTANTS:
            answer = LIBRARY_CONSTANTS[dotted]
            return Const(answer, hostmath.type_of_value(answer), span)
        if root == "torch" and self.state.frame.dialect.reads_torch_source:
            if torch_python.shipped(dotted):
                return LibraryModule(dotted)
        if root in STANDARD_ROOTS:
            return FunctionRef(dotted, shown)
        project_found = self.project_value(dotted, shown)
        if project_found is not None:
            return project_found
        oracle = self.state.region.oracle
        module, _, _ = dotted.rpartition(".")
        if oracle is not None and oracle.module_variable(dotted):
            return self.state.capture(span, shown, CaptureOrigin.IMPORTED, module)
        if oracle is None and "." in shown:
            return self.state.unsupported(span, shown, refusals.VALUE_REGION_READ(), attribute=True)
        if "." not in shown:
            return self.state.capture(span, shown, CaptureOrigin.IMPORTED, module)
        return FunctionRef(dotted, shown)

    def project_value(self, dotted: str, shown: str) -> Value | None:
        """A module or function of the project's own files, found without importing (imports.py)."""
        from ppy_check.imports import find_module, load_file

        path = find_module(self.state.frame.path, dotted)
        if path is not None:
            return ProjectModule(path, dotted)
        module_name, _, name = dotted.rpartition(".")
        path = find_module(self.state.frame.path, module_name) if module_name else None
        found = load_file(path) if path is not None else None
        if path is None or found is None or found.module.tree is None:
            return None
        module = found.module
        binding = module.scope.bindings.get(name)
        if binding is None or binding.kind is not BindingKind.FUNCTION or not isinstance(binding.node, ast.FunctionDef):
            return None
        if path not in self.state.dependencies and path != self.state.region.site.path:
            self.state.dependencies[path] = found.source.digest  # of the bytes this helper was parsed from
        return FunctionRef(dotted, shown, Helper(binding.node, module.scope, path))

    # --- sequences ----------------------------------------------------------------------

    def display_sequence(self, node: ast.Tuple | ast.List) -> Value:
        span = Span.of(node)
        parts: list[tuple[Expr, bool]] = []
        for element in node.elts:
            spread = isinstance(element, ast.Starred)
            value = self.expr(element.value if isinstance(element, ast.Starred) else element)
            if isinstance(value, Poisoned):
                return POISON
            atom = self.atom(value, element)
            if spread and not isinstance(atom.type, (t.TupleT, t.SeqT)):
                return self.state.type_problem(Span.of(element), display(element),
                                         refusals.INDEX_LIST_MUST_2(atom_type=atom.type))
            parts.append((atom, spread))
        return self.concatenate(parts, span)

    def concatenate(self, parts: list[tuple[Expr, bool]], span: Span) -> Expr:
        """Items and spreads as one tuple: of known length when every spread is, else a run-time sequence."""
        if all(not spread or isinstance(value.type, t.TupleT) for value, spread in parts):
            items: list[Expr] = []
            for value, spread in parts:
                if spread:
                    assert isinstance(value.type, t.TupleT)  # every spread is, tested above
                    items.extend(_item(value, i) for i in range(len(value.type.items)))
                else:
                    items.append(value)
            return MakeTuple(tuple(items), t.TupleT(tuple(i.type for i in items)), span,
                             frozenset().union(*(i.aliases for i in items)))
        kinds = []
        for value, spread in parts:
            element = t.element_type(value.type) if spread else value.type
            if element is None:
                self.state.type_problem(span, "tuple", refusals.JOINS_TUPLES_MIXED())
                raise _Abandon
            kinds.append(element)
        element = kinds[0] if len(set(kinds)) == 1 else (t.join_numbers(*kinds) if all(t.is_number(k) for k in kinds) else None)
        if element is None:
            self.state.type_problem(span, "tuple", refusals.JOINS_TUPLES_MIXED())
            raise _Abandon
        return MakeSeq(tuple(parts), t.SeqT(element), span, frozenset().union(*(v.aliases for v, _ in parts)))
