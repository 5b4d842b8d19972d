"""Calls: what is called, its arguments, and the torch overload they bind to.

A new kind of callee (a method family, a Python-level constructor) goes in
``Calls.call`` / ``Calls._call_function`` / ``Calls.call_method``; binding to
a signature is ``bind_signature`` (helpers) and ``invoke`` (native overloads).
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
from collections.abc import Iterator

from ppy_check import messages as m
from ppy_check import torch_python
from ppy_check.messages import refusals
from ppy_check.model import budgets, hostmath
from ppy_check.model import types as t
from ppy_check.model.bind import Argument, Bound, describe_arguments, resolve
from ppy_check.model.builder.control import _Abandon
from ppy_check.model.builder.facts import _fixed_constant, _fold_str_method, _item, _passed_value, _schema_result
from ppy_check.model.builder.part import Part
from ppy_check.model.builder.tables import (
    FUNCTION_NAMESPACES,
    HOST_READING_METHODS,
    LIBRARY_ANSWERS,
    LIBRARY_BUILTINS,
    LIST_METHODS,
    NTUPLES,
    QUERY_METHODS,
    STR_METHODS,
    SUPPORTED_BUILTINS,
    TORCH,
    USER_QUESTIONS,
)
from ppy_check.model.builder.text import _strip_dotted, display
from ppy_check.model.builder.values import (
    POISON,
    BooleanDispatch,
    FunctionRef,
    ModuleValue,
    Helper,
    KeywordDict,
    LibraryModule,
    ModuleRef,
    Partial,
    Poisoned,
    ProjectModule,
    UntypedParam,
    Value,
)
from ppy_check.model.effects import effects_of
from ppy_check.model.ir import (
    Call,
    Const,
    DtypeName,
    Expr,
    Host,
    HostOp,
    Length,
    MakeTuple,
    PythonException,
    Require,
    Span,
    TensorQuery,
    Write,
    WriteKind,
)
from ppy_check.schema import Native, OptionalType, Overload
from ppy_check.scope import ModuleScope


class Calls(Part):
    """Calls and their binding to torch's overloads."""

    # --- calls ----------------------------------------------------------------------------

    def call(self, node: ast.Call) -> Value:
        span = Span.of(node)
        func = node.func
        shown = display(func)
        special = self.state.frame.dialect.call(node)
        if special is not None:
            return special
        instance = self.instance_of_frame() if isinstance(func, ast.Attribute) and _bare_super(func.value) else None
        if instance is not None:
            assert isinstance(func, ast.Attribute) and isinstance(self.state.frame.node, ast.FunctionDef)
            args, keywords = self.arguments(node)
            if args is None:
                return POISON
            return self.modules.call_super(instance, self.state.frame.node, func.attr, args, keywords, span, shown)
        callee = self.exprs.expr(func.value) if isinstance(func, ast.Attribute) else self.exprs.expr(func)
        if isinstance(callee, Const) and isinstance(callee.type, t.FunctionT) and not isinstance(func, ast.Attribute):
            callee = callee.value  # a function passed as a value, called
        if isinstance(callee, KeywordDict) and isinstance(func, ast.Attribute):
            return self.keyword_dict_method(callee, func.attr, node)
        if self.state.frame.dialect.models_python_data and isinstance(callee, FunctionRef) and \
                callee.dotted.removeprefix("builtins.") in LIBRARY_BUILTINS | {"list", "tuple"}:
            self.state.consumed.update((id(a), callee.dotted.removeprefix("builtins.")) for a in node.args
                                 if isinstance(a, ast.GeneratorExp))
        if self.state.frame.dialect.models_python_data and isinstance(func, ast.Attribute) and func.attr == "join" \
                and isinstance(callee, Const) and isinstance(callee.value, str):
            # `",".join(f(s) for s in items)` (torch.einsum's sublists): every item is taken, as `tuple(...)` takes.
            self.state.consumed.update((id(a), "join") for a in node.args if isinstance(a, ast.GeneratorExp))
        if isinstance(callee, UntypedParam) and isinstance(func, ast.Attribute):
            self.arguments(node)
            return self.state.unsupported(span, shown, refusals.METHOD_TENSOR(callee_name=callee.name))
        if isinstance(callee, (Poisoned, UntypedParam)):
            self.arguments(node)
            return POISON
        args, keywords = self.arguments(node)
        if args is None:
            if isinstance(callee, FunctionRef) and callee.dotted.startswith("builtins.") and \
                    callee.dotted[len("builtins."):] not in SUPPORTED_BUILTINS:
                return self.state.unsupported(span, shown, refusals.PYTHON_BUILTIN_RUNS())
            return POISON
        if isinstance(func, ast.Attribute):
            if isinstance(callee, ModuleRef) and self.state.frame.dialect.refuses_rebound_names and \
                    f"{callee.dotted}.{func.attr}" in self.state.frame.scope.patched:
                return self.state.rebound_capture(span, shown, self.state.frame.scope.patched[f"{callee.dotted}.{func.attr}"])
            if isinstance(callee, ModuleRef):
                if self.state.frame.dialect.records_assumptions:
                    self.exprs.assume(f"module:{callee.dotted}", func.attr, FunctionRef(f"{callee.dotted}.{func.attr}", shown))
                return self.call_function(_strip_dotted(f"{callee.dotted}.{func.attr}"), args, keywords, span, shown, node)
            if isinstance(callee, LibraryModule):
                return self.call_function(f"{callee.dotted}.{func.attr}", args, keywords, span, shown, node)
            if isinstance(callee, ProjectModule):
                found = self.exprs.project_value(f"{callee.dotted}.{func.attr}", shown)
                if isinstance(found, FunctionRef) and found.helper is not None:
                    self.exprs.assume(callee.path, func.attr, found)
                    return self.inliner.inline(found.helper, args, keywords, span, shown)
                return self.state.unsupported(span, shown, refusals.FUNCTION_PPY_FOLLOW(callee_dotted=callee.dotted))
            if isinstance(callee, FunctionRef) and callee.helper is None and callee.dotted.startswith("torch."):
                return self.call_function(_strip_dotted(f"{callee.dotted}.{func.attr}"), args, keywords, span, shown, node)
            if isinstance(callee, FunctionRef):
                return self.state.unsupported(span, shown, refusals.ATTRIBUTE_FUNCTION())
            if isinstance(callee, ModuleValue):
                return self.modules.call_member(callee, func.attr, args, keywords, span, shown)
            receiver = self.exprs.atom(callee, func.value)
            return self.call_method(func.attr, receiver, args, keywords, span, shown, node)
        if isinstance(callee, (FunctionRef, BooleanDispatch, Partial)):
            return self.call_value(callee, args, keywords, span, shown, node)
        if isinstance(callee, ModuleValue):
            return self.modules.call_module(callee, args, keywords, span, shown)
        if isinstance(callee, (ModuleRef, ProjectModule)):
            return self.state.unsupported(span, shown, refusals.MODULE_CANNOT_CALLED())
        return self.state.unsupported(span, shown,
                                refusals.MODULE_CANNOT_CALLED_2(shown=shown, callee_type=callee.type))  # type: ignore[union-attr]

    def call_value(self, callee: object, args: list[Argument], keywords: dict[str, Expr], span: Span, shown: str,
                   node: ast.Call) -> Value:
        """A call of a function known where the region is built: named, passed as a value, or a
        ``functools.partial`` of one (its arguments first, its keywords overridden by the call's)."""
        if isinstance(callee, Const) and isinstance(callee.type, t.FunctionT):
            callee = callee.value
        if isinstance(callee, Partial):
            return self.call_value(callee.func, [*callee.args, *args], {**dict(callee.keywords), **keywords}, span,
                                   shown, node)
        if isinstance(callee, FunctionRef):
            if callee.helper is not None:
                return self.inliner.inline(callee.helper, args, keywords, span, shown)
            return self.call_function(_strip_dotted(callee.dotted), args, keywords, span, shown, node)
        if isinstance(callee, BooleanDispatch):
            return self.library_dialect.dispatch(callee, args, keywords, span, shown)
        return self.state.unsupported(span, shown, refusals.NOT_CALLABLE(shown=shown))

    def instance_of_frame(self) -> ModuleValue | None:
        """The instance a method region's method runs on (its first parameter's value), if the frame is one."""
        node = self.state.frame.node
        if not isinstance(node, ast.FunctionDef) or not node.args.args:
            return None
        found = self.state.env.get(node.args.args[0].arg)
        return found if isinstance(found, ModuleValue) else None

    def keyword_dict_method(self, kwargs: KeywordDict, method: str, node: ast.Call) -> Value:
        """``kwargs.get("mask")`` on the ``**kwargs`` of torch's Python code: its keys are known here."""
        args, keywords = self.arguments(node)
        if args is None:
            return POISON
        key = args[0].value if args and not args[0].spread else None
        if method != "get" or keywords or not 1 <= len(args) <= 2 or not isinstance(key, Const) or \
                not isinstance(key.value, str):
            return self.state.unsupported(Span.of(node), self.state.frame.called_as,
                                    refusals.LIBRARY_CALLS(node_func=display(node.func)))
        found = dict(kwargs.items).get(key.value)
        if found is not None:
            return found
        return args[1].value if len(args) == 2 else Const(None, t.NONE, Span.of(node))

    def super_method(self, node: ast.Call) -> Value:
        """``super().unflatten(dim, sizes)`` in a method of torch's ``Tensor``: the builtin method it overrides."""
        func = node.func
        assert isinstance(func, ast.Attribute)
        span = Span.of(node)
        assert isinstance(self.state.frame.node, ast.FunctionDef)  # a method's body: call() tested it
        receiver = self.state.env.get(self.state.frame.node.args.args[0].arg)
        args, keywords = self.arguments(node)
        if args is None or not isinstance(receiver, Expr):
            return POISON
        if torch_python.module_of(self.state.frame.path) != "torch._tensor" or not self.state.data.has_method(func.attr):
            return self.state.unsupported(span, self.state.frame.called_as, refusals.LIBRARY_CALLS_PPY(func=display(func)))
        return self.invoke_method(func.attr, receiver, args, keywords, span, display(func))

    def arguments(self, node: ast.Call) -> tuple[list[Argument] | None, dict[str, Expr]]:
        """The call's arguments, evaluated once, left to right, as Python does."""
        args: list[Argument] = []
        keywords: dict[str, Expr] = {}
        failed = False
        for arg in node.args:
            spread = isinstance(arg, ast.Starred)
            value = self.exprs.expr(arg.value if isinstance(arg, ast.Starred) else arg)
            if isinstance(value, (Poisoned, UntypedParam)):
                failed = True
                continue
            atom = self.exprs.atom(_passed_value(value, arg), arg)
            if spread and not isinstance(atom.type, (t.TupleT, t.SeqT)):
                self.state.type_problem(Span.of(arg), display(arg), refusals.INDEX_LIST_MUST_2(atom_type=atom.type))
                failed = True
                continue
            args.append(Argument(atom, spread))
        for keyword in node.keywords:
            if keyword.arg is None:
                expanded = self.keyword_spread(keyword)
                if expanded is None:
                    failed = True
                    continue
                for key, value in expanded.items():
                    if key in keywords:
                        self.state.type_problem(Span.of(keyword), key, refusals.KEYWORD_ARGUMENT_GIVEN(key=key))
                        failed = True
                    keywords[key] = value
                continue
            value = self.exprs.expr(keyword.value)
            if isinstance(value, (Poisoned, UntypedParam)):
                failed = True
                continue
            keywords[keyword.arg] = self.exprs.atom(_passed_value(value, keyword.value), keyword.value)
        return (None if failed else args), keywords

    def keyword_spread(self, keyword: ast.keyword) -> dict[str, Expr] | None:
        """``**{"out": y}``: a dict display of literal keys spreads into keywords; anything else is refused."""
        node = keyword.value
        if isinstance(node, ast.Dict) and all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in node.keys):
            result: dict[str, Expr] = {}
            for key, value_node in zip(node.keys, node.values):
                evaluated = self.exprs.expr(value_node)
                if isinstance(evaluated, Poisoned):
                    return None
                assert isinstance(key, ast.Constant) and isinstance(key.value, str)  # the keys tested above
                result[key.value] = self.exprs.atom(evaluated, value_node)
            return result
        if self.state.frame.dialect.models_python_data:
            value = self.exprs.expr(node)
            if isinstance(value, KeywordDict):
                return dict(value.items)
        self.state.unsupported(Span.of(node), f"**{display(node)}", refusals.ANYTHING_DICT_LITERAL())
        return None

    def call_function(self, dotted: str, args: list[Argument], keywords: dict[str, Expr], span: Span, shown: str,
                      node: ast.Call) -> Value:
        if not self.state.frame.dialect.offers_fixes or dotted not in torch_python.ALTERNATIVES:  # nothing to offer: no context manager
            return self._call_function(dotted, args, keywords, span, shown, node)
        with self.offering_alternative(dotted, self.run_time_choice(dotted, args, keywords)):
            return self._call_function(dotted, args, keywords, span, shown, node)

    def run_time_choice(self, dotted: str, args: list[Argument], keywords: dict[str, Expr]) -> str | None:
        """What to write instead where the call passes a choice torch's Python code makes by (``mode``) that is known
        only at run time (``torch_python.RUN_TIME_CHOICES``); None where it passes none, or a literal."""
        choice = torch_python.RUN_TIME_CHOICES.get(dotted)
        if choice is None:
            return None
        name, position, alternative = choice
        before = args[:position + 1]
        value = keywords.get(name) if name in keywords else \
            args[position].value if len(args) > position and not any(a.spread for a in before) else None
        return alternative if value is not None and not isinstance(value, Const) else None

    def tensor_of_numbers(self, args: list[Argument], keywords: dict[str, Expr], span: Span, shown: str,
                          node: ast.Call) -> Value | None:
        """``torch.tensor(number)`` or of a tuple of numbers, as ``scalar_tensor`` (stacked): the numbers may be
        known only at run time. Without ``dtype`` torch infers it from the data: bool, int64, or for a float the
        default dtype, a setting read when the region runs; a ``float`` parameter may hold an int, so its dtype is
        decided when the region runs too (in a tuple it stays refused)."""
        if len(args) != 1 or args[0].spread or not set(keywords) <= {"dtype", "device", "requires_grad"}:
            return None
        data = args[0].value
        numbers = (t.IntT, t.FloatT, t.NumberT, t.BoolT)
        scalar = isinstance(data.type, numbers)
        if not scalar and (not isinstance(data.type, t.TupleT) or not data.type.items
                           or not all(isinstance(i, numbers) for i in data.type.items)):
            return None
        if "dtype" not in keywords:
            kinds = list(data.type.items) if isinstance(data.type, t.TupleT) else [data.type]
            if scalar and isinstance(data.type, t.NumberT):
                # A `float` parameter may hold an int: torch's dtype is int64 then, else the default one.
                inferred: Expr = Host(HostOp.NUMBER_DTYPE, (self.exprs.atom(data),), t.DTYPE, span)
            elif any(isinstance(k, t.NumberT) for k in kinds):
                return None
            elif any(isinstance(k, t.FloatT) for k in kinds):
                inferred = Host(HostOp.DEFAULT_DTYPE, (), t.DTYPE, span)
            else:
                inferred = Const(DtypeName("Bool" if all(isinstance(k, t.BoolT) for k in kinds) else "Long"),
                                 t.DTYPE, span)
            keywords = {**keywords, "dtype": inferred}
        if scalar:
            return self.call_function("torch.scalar_tensor", [Argument(data)], keywords, span, shown, node)
        assert isinstance(data.type, t.TupleT)
        grad = keywords.get("requires_grad")
        if grad is not None and not (isinstance(grad, Const) and grad.value is False):
            return None  # eager's is a leaf; stacked scalars that require grad are not
        factory = {k: v for k, v in keywords.items() if k != "requires_grad"}
        items = tuple(self.exprs.atom(self.call_function("torch.scalar_tensor", [Argument(_item(data, i))], factory, span,
                                                   shown, node)) for i in range(len(data.type.items)))
        stacked = MakeTuple(items, t.TupleT(tuple(i.type for i in items)), span)
        return self.call_function("torch.stack", [Argument(stacked)], {}, span, shown, node)

    @contextlib.contextmanager
    def offering_alternative(self, dotted: str, instead: str | None = None) -> Iterator[None]:
        """A user's call of torch's Python layer that ppy refuses: its finding ends with what to write instead,
        where ppy knows (``instead``, else ``torch_python.ALTERNATIVES``)."""
        start = len(self.state.problems.unsupported)
        try:
            yield
        finally:
            alternative = instead or torch_python.ALTERNATIVES.get(dotted)
            records = self.state.problems.unsupported
            if alternative is not None and len(records) > start:
                records[start] = dataclasses.replace(records[start], why=m.message(m.WITH_ALTERNATIVE, why=records[start].why,
                                                                                   alternative=alternative))

    def _call_function(self, dotted: str, args: list[Argument], keywords: dict[str, Expr], span: Span, shown: str,
                       node: ast.Call) -> Value:
        namespace, _, name = dotted.rpartition(".")
        if namespace == "builtins":
            return self.host_math.builtin(name, args, keywords, span, shown)
        if namespace == "math":
            return self.host_math.math(name, args, keywords, span, shown)
        if namespace == "einops":
            return self.einops_lowering.einops(name, args, keywords, span, shown)
        if namespace in ("functools", "operator"):
            return self.host_math.standard_library(namespace, name, args, keywords, span, shown, node)
        if dotted in LIBRARY_ANSWERS and (self.state.frame.dialect.answers_user_switches or dotted not in USER_QUESTIONS):
            answer = LIBRARY_ANSWERS[dotted]
            return Const(answer, hostmath.type_of_value(answer), span)
        if dotted in NTUPLES:
            return self.library_dialect.ntuple(NTUPLES[dotted], args, span, shown)
        if dotted == "torch.Size" and len(args) == 1 and not keywords and not args[0].spread and \
                isinstance(args[0].value.type, (t.TupleT, t.SeqT)) and t.element_type(args[0].value.type) == t.INT:
            # A shape, a tuple of ints: the value a region's shapes already are, and a torch.Size where Python's is.
            made = self.exprs.concatenate([(args[0].value, True)], span)
            self.state.sizes.add(made)
            return self.state.mark(made, "tuple")
        if dotted == "torch.numel" and len(args) + len(keywords) == 1 and set(keywords) <= {"input"} and \
                not any(a.spread for a in args):
            # A builtin with no operator behind it: what `input.numel()` asks, the tensor's element count.
            counted = args[0].value if args else keywords["input"]
            if isinstance(counted.type, t.TensorT):
                return self.query("numel", counted, [], {}, span, shown)
        if dotted == "torch.get_default_dtype" and not args and not keywords:
            # A setting the caller may change between calls: read when the region runs, never folded.
            return Host(HostOp.DEFAULT_DTYPE, (), t.DTYPE, span)
        if dotted == "torch.tensor":
            tensor = self.tensor_of_numbers(args, keywords, span, shown, node)
            if tensor is not None:
                return tensor
        if namespace == "torch._C._VariableFunctions" and self.state.data.binding(TORCH, name) is not None:
            namespace, dotted = TORCH, f"torch.{name}"  # the builtin torch.X is
        if namespace in FUNCTION_NAMESPACES:
            native = self.state.data.binding(namespace, name)
            if native is not None:
                return self.invoke_function(native, args, keywords, span, shown)
        helper = self.library_dialect.torch_python_function(dotted)
        if isinstance(helper, Helper):
            return self.inliner.inline(helper, args, keywords, span, shown)
        if isinstance(helper, BooleanDispatch):
            return self.library_dialect.dispatch(helper, args, keywords, span, shown)
        if isinstance(helper, FunctionRef) and helper.helper is not None:
            return self.inliner.inline(helper.helper, args, keywords, span, shown)  # `threshold = _threshold`
        why = torch_python.not_followed(dotted)
        if why is not None:
            return self.state.unsupported(span, shown, refusals.NOT_FOLLOWED(why=why))
        if namespace in FUNCTION_NAMESPACES:
            return self.state.unsupported(span, shown, refusals.TORCH_OPERATOR_C(namespace=namespace, name=name))
        root = dotted.split(".")[0]
        if root == "torch":
            return self.state.unsupported(span, shown, refusals.TORCH_OPERATOR_C_API(dotted=dotted))
        if root == "ppy":
            return self.state.unsupported(span, shown, refusals.PPY_OWN_API())
        if root == "<module>":
            binding = self.state.frame.scope.bindings.get(name)
            line = binding.line if binding is not None else 0
            return self.state.unsupported(span, shown, refusals.CLASS_LINE(line=line))
        return self.state.unsupported(span, shown, refusals.TORCH_TORCH_OPERATORS(root=root))

    def call_method(self, name: str, receiver: Expr, args: list[Argument], keywords: dict[str, Expr], span: Span,
                    shown: str, node: ast.Call) -> Value:
        kind = receiver.type
        if isinstance(kind, t.OptionalT) and isinstance(kind.inner, t.TensorT):
            assert isinstance(node.func, ast.Attribute)  # a method call: `receiver.name(...)`
            receiver = self.members.unwrap(receiver, display(node.func.value), span)
            kind = receiver.type
        if isinstance(kind, (t.TupleT, t.SeqT)) and name in LIST_METHODS:
            return self.state.unsupported(span, shown, refusals.REGION_SEQUENCES_DO())
        if isinstance(receiver, Const) and isinstance(kind, t.StrT) and name in STR_METHODS:
            try:
                folded = _fold_str_method(receiver.value, name, args, keywords, span)
            except budgets.FoldTooLarge as error:
                self.state.over_budget(span, shown, error.exceeded)
                raise _Abandon from None
            if folded is not None:
                return self.state.mark(folded, "list" if isinstance(folded.type, t.TupleT) else None)
        if not isinstance(kind, t.TensorT):
            return self.state.unsupported(span, shown, refusals.REGION_SEQUENCES_DO_2(kind=kind))
        if name in self.state.data.properties:
            return self.state.type_problem(span, shown,
                                     refusals.TENSOR_PROPERTY_METHOD(name=name, node_func=display(node.func)), self.state._uncalled(node))
        if name in HOST_READING_METHODS:
            return self.state.unsupported(span, shown, HOST_READING_METHODS[name]())
        if name in QUERY_METHODS:
            return self.query(name, receiver, args, keywords, span, shown)
        method = torch_python.tensor_method(name)
        if isinstance(method, str):
            return self.invoke_method(method, receiver, args, keywords, span, shown)  # `__pow__` is TensorBase.pow
        if method is None and self.state.data.has_method(name):
            return self.invoke_method(name, receiver, args, keywords, span, shown)
        if method is not None:
            # torch/_tensor.py's method is what Python runs, even where TensorBase has a builtin of the same name
            # (`x.norm(...)` is torch.norm, then linalg.vector_norm, not norm.ScalarOpt_dim): its checks and
            # messages are Python's.
            node_of, module = method
            helper = Helper(node_of, module.scope, module.path, library=True)
            if not self.state.frame.dialect.offers_fixes:
                return self.inliner.inline(helper, [Argument(receiver), *args], keywords, span, shown)
            with self.offering_alternative(f"torch.Tensor.{name}"):
                return self.inliner.inline(helper, [Argument(receiver), *args], keywords, span, shown)
        return self.state.unsupported(span, shown, refusals.TENSOR_TENSOR_METHOD(name=name))

    def query(self, name: str, receiver: Expr, args: list[Argument], keywords: dict[str, Expr], span: Span,
              shown: str) -> Expr:
        whole, per_dim, kind = QUERY_METHODS[name]
        given = [a.value for a in args if not a.spread]
        if len(given) != len(args):
            self.state.type_problem(span, shown, refusals.UNPACKING_INTO_TENSOR())
            raise _Abandon
        if "dim" in keywords and per_dim is not None and not given:
            given = [keywords.pop("dim")]
        if keywords or len(given) > (1 if per_dim is not None else 0):
            self.state.type_problem(span, shown,
                              (refusals.TENSOR_TAKES_ONE_DIM if per_dim else refusals.TENSOR_TAKES_NOTHING)(name=name))
            raise _Abandon
        if given and isinstance(given[0].type, t.NoneT):
            given = []
        if given:
            assert per_dim is not None  # a dim is given only to a query that takes one, tested above
            if not isinstance(given[0].type, t.IntT):
                self.state.type_problem(span, shown, refusals.TENSOR_DIM_TAKES(name=name, given_type=given[0].type))
                raise _Abandon
            return TensorQuery(receiver, per_dim, (given[0],), t.INT, span)
        return TensorQuery(receiver, whole, (), kind, span)

    # --- torch operators --------------------------------------------------------------------

    def invoke_function(self, name: str, args: list[Argument], keywords: dict[str, Expr], span: Span, shown: str) -> Expr:
        return self.invoke(self.state.data.function(name), args, keywords, span, shown, name)

    def invoke_method(self, name: str, receiver: Expr, args: list[Argument], keywords: dict[str, Expr], span: Span,
                      shown: str, write_kind: WriteKind | None = None) -> Expr:
        overloads = self.state.data.method(name)
        return self.invoke(overloads, args, keywords, span, shown, name, receiver=receiver, write_kind=write_kind)

    def invoke(self, overloads: tuple[Overload, ...], args: list[Argument], keywords: dict[str, Expr], span: Span,
               shown: str, name: str, receiver: Expr | None = None, write_kind: WriteKind | None = None) -> Expr:
        if not overloads:
            self.state.unsupported(span, shown, refusals.NO_ATEN_LOWERING(name=name))
            raise _Abandon
        if args and all(a.spread for a in args):
            args = self._spread_alone(overloads, args, keywords, span, shown, name)
        bound = resolve(overloads, args, keywords)
        if bound is None:
            tried = "; ".join(o.signature_text() for o in overloads[:4])
            self.state.type_problem(span, shown,
                              refusals.NO_OVERLOAD_TAKES(name=name, args=describe_arguments(args, keywords), tried=tried))
            raise _Abandon
        self._check_none_choice(bound, overloads, args, keywords, span, shown)
        return self.make_call(bound, receiver, span, shown, write_kind)

    def _spread_alone(self, overloads: tuple[Overload, ...], args: list[Argument], keywords: dict[str, Expr],
                      span: Span, shown: str, name: str) -> list[Argument]:
        """Positional arguments that are all `*` spreads: when they spread nothing, Python passes no positional
        argument, and torch raises TypeError (`x.reshape()`) or calls another overload (`x.squeeze()` squeezes
        every size-1 dimension, where an empty list squeezes none). Empty as written: no positional argument. Of
        run-time length: a compiled check raises the TypeError; another overload is decided in the caller."""
        if all(isinstance(a.value.type, t.TupleT) for a in args):
            return args if any(a.value.type.items for a in args if isinstance(a.value.type, t.TupleT)) else []
        if resolve(overloads, [], keywords) is not None:
            self.state.type_problem(span, shown, refusals.EVERY_POSITIONAL_ARGUMENT(name=name))
            raise _Abandon
        counts: list[Expr] = []
        for a in args:
            if isinstance(a.value.type, t.SeqT):
                counts.append(self.exprs.atom(Length(a.value, t.INT, span)))
            else:
                assert isinstance(a.value.type, t.TupleT)  # a spread is of a tuple or of a sequence
                counts.append(Const(len(a.value.type.items), t.INT, span))
        total = counts[0]
        for count in counts[1:]:
            total = self.exprs.atom(self.ops.host(HostOp.ADD, [total, count], span, shown))
        holds = self.exprs.atom(self.ops.host(HostOp.NE, [total, Const(0, t.INT, span)], span, shown))
        # Python's argument parser words it by how many signatures the name has (`view` also takes a dtype).
        message = (f'{name}() missing 1 required positional arguments: "{overloads[0].positional[0].name}"'
                   if len(overloads) == 1 else f"{name}() received an invalid combination of arguments - got ()")
        self.state.body.append(Require(holds, PythonException.TYPE_ERROR, (message,), span))
        return args

    def _check_none_choice(self, bound: Bound, overloads: tuple[Overload, ...], args: list[Argument],
                           keywords: dict[str, Expr], span: Span, shown: str) -> None:
        """An optional argument bound where None is not taken: torch must not pick another overload for None."""
        for key, value in list(bound.values.items()):
            if not isinstance(value.type, t.OptionalT):
                continue
            param = next(p for p in bound.overload.params if p.schema_name == key)
            if isinstance(param.type, OptionalType):
                continue
            none = Const(None, t.NONE, value.span)
            swapped_args = [Argument(none) if a.value is value else a for a in args]
            swapped_keywords = {k: (none if v is value else v) for k, v in keywords.items()}
            other = resolve(overloads, swapped_args, swapped_keywords)
            if other is not None:
                self.state.type_problem(span, shown, refusals.ARGUMENT_MAY_NONE(shown=shown))
                raise _Abandon

    def make_call(self, bound: Bound, receiver: Expr | None, span: Span, shown: str,
                  write_kind: WriteKind | None = None) -> Expr:
        overload = bound.overload
        native = overload.out if bound.out else overload.native
        assert native is not None
        values = dict(bound.values)
        if receiver is not None:
            values["self"] = receiver
        for key, fixed in overload.fixed:
            values[key] = _fixed_constant(native, key, fixed, span)
        out_names: tuple[str, ...] = ()
        if bound.out:
            out_names = overload.outputs
            values.update(zip(out_names, bound.out))
        for key, value in list(values.items()):
            if isinstance(value.type, t.OptionalT) and not isinstance(native.arg[key].type, OptionalType):
                values[key] = self.members.unwrap(value, f"argument `{key}` of `{shown}`", span)
        kind = self.result_type(native, span, shown)
        effects = effects_of(native, values, out_names)
        for param, how in effects.writes:
            self.state.writes.append(Write(param, self.state._span(span), self.state.frame.called_as or shown, write_kind or how))
        if effects.random:
            self.state.random = True
        self.state.natives.add(native.key)
        args = tuple((arg.name, values.get(arg.name)) for arg in native.args)
        return Call(native, overload, args, kind, span, effects.aliases, shown, bound.requires_grad)

    def result_type(self, native: Native, span: Span, shown: str) -> t.Type:
        kinds = []
        for returned in native.returns:
            kind = _schema_result(returned.type)
            if kind is None:
                self.state.unsupported(span, shown, refusals.RETURNS_REGION_CANNOT(returned_type=returned.type))
                raise _Abandon
            kinds.append(kind)
        if not kinds:
            return t.NONE
        if len(kinds) == 1:
            return kinds[0]
        names = tuple(r.name for r in native.returns)
        if not all(names):
            return t.TupleT(tuple(kinds))
        return t.TupleT(tuple(kinds), names, structseq=native.name)

    # --- Python-level torch functions ----------------------------------------------------------

    def bind_signature(self, spec: ast.arguments, args: list[Argument], keywords: dict[str, Expr], span: Span,
                       shown: str, scope: ModuleScope | None = None) -> dict[str, Value]:
        """Python's binding of arguments to a ``def``'s parameters (defaults are literals); the keywords no
        parameter takes go to ``**kwargs`` as a dict of literal keys."""
        positional_names = [a.arg for a in spec.posonlyargs + spec.args]
        defaults = dict(zip(positional_names[len(positional_names) - len(spec.defaults):], spec.defaults))
        for keyword_only, keyword_default in zip(spec.kwonlyargs, spec.kw_defaults):
            if keyword_default is not None:
                defaults[keyword_only.arg] = keyword_default
        values: list[Expr] = []
        for argument in args:
            if not argument.spread:
                values.append(argument.value)
            elif isinstance(argument.value.type, t.TupleT):
                values.extend(_item(argument.value, i) for i in range(len(argument.value.type.items)))
            else:
                self.state.type_problem(span, shown, refusals.SEQUENCE_WHOSE_LENGTH())
                raise _Abandon
        bound: dict[str, Value] = dict(zip(positional_names, values))
        extra = values[len(positional_names):]
        if spec.vararg is not None:
            bound[spec.vararg.arg] = MakeTuple(tuple(extra), t.TupleT(tuple(e.type for e in extra)), span,
                                               frozenset().union(*(e.aliases for e in extra)))
        elif extra:
            self.state.type_problem(span, shown,
                              refusals.TAKES_MOST_POSITIONAL(positional_names_count=len(positional_names), values_count=len(values)))
            raise _Abandon
        allowed = set(positional_names) | {a.arg for a in spec.kwonlyargs}
        extra_keywords: dict[str, Expr] = {}
        for key, value in keywords.items():
            if key not in allowed and spec.kwarg is not None:
                extra_keywords[key] = value
                continue
            if key not in allowed:
                self.state.type_problem(span, shown, refusals.GOT_UNEXPECTED_KEYWORD(key=key))
                raise _Abandon
            if key in bound:
                self.state.type_problem(span, shown, refusals.GOT_MULTIPLE_VALUES(key=key))
                raise _Abandon
            bound[key] = value
        for name in positional_names + [a.arg for a in spec.kwonlyargs]:
            if name not in bound:
                if name not in defaults:
                    self.state.type_problem(span, shown, refusals.MISSING_REQUIRED_ARGUMENT(name=name))
                    raise _Abandon
                default = self.exprs.constant(defaults[name], span, scope)
                if not isinstance(default, Expr):
                    self.state.unsupported(span, shown,
                                     refusals.DEFAULT_VALUE_PPY(name=name, defaults=display(defaults[name])))
                    raise _Abandon
                bound[name] = default
        if spec.kwarg is not None:
            bound[spec.kwarg.arg] = KeywordDict(tuple(extra_keywords.items()))
        return bound


def _bare_super(node: ast.expr) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super" and \
        not node.args and not node.keywords
