"""The library dialect: torch's own Python source, inlined as a helper is.

Folding tests on what is known, run-time decisions compiled as C++ ``if``s,
``for`` loops unrolled, imports, ``torch._check``, ``isinstance``, warnings.
A construct only torch's Python code uses goes here.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from ppy_check import messages as m
from ppy_check import torch_python
from ppy_check.messages import refusals
from ppy_check.model import budgets
from ppy_check.model import types as t
from ppy_check.model.bind import Argument
from ppy_check.model.builder.control import _Abandon, _Jump, _LibraryRefused
from ppy_check.model.builder.facts import (
    _ends_in_return,
    _harmless,
    _is_warning,
    _isinstance_answer,
    _item,
    _or_parts,
    _range_length,
    _same_object,
    _without_warnings,
)
from ppy_check.model.builder.frame import Frame
from ppy_check.model.builder.part import Part
from ppy_check.model.builder.tables import EAGER_CONSUMERS, EINSUM_PATH, LIBRARY_BUILTINS, LIBRARY_CHECKS, MAX_UNROLLED, MODULE_PATHS
from ppy_check.model.builder.text import _strip_dotted, _text_of, display
from ppy_check.model.builder.values import (
    POISON,
    BooleanDispatch,
    FunctionRef,
    Helper,
    KeywordDict,
    ModuleRef,
    Poisoned,
    RestTaken,
    UntypedParam,
    Value,
)
from ppy_check.model.ir import Branch, Const, Expr, Host, HostOp, MakeTuple, PythonException, Read, Require, Span, Var
from ppy_check.model.problems import CaptureOrigin
from ppy_check.scope import ModuleScope


class LibraryDialect(Part):
    """torch's own Python source, inlined as a helper is: tests on what is known fold, decisions on run-time
    values compile as C++ `if`s, loops over what is known unroll; a problem refuses the user's whole call."""

    records_assumptions = False
    refuses_rebound_names = False
    reads_torch_source = True
    answers_user_switches = True
    models_python_data = True
    offers_fixes = False
    reuses_templates = False

    def subject(self, name: str, why: m.Message) -> tuple[str, m.Message]:
        """In torch's Python code a finding names the user's call, and says where inside it the problem is."""
        called_as = self.state.frame.called_as
        if name == called_as:
            return name, why
        return called_as, m.message(m.IN_LIBRARY, name=name, why=why)

    def budget_subject(self, subject: str) -> str:
        return self.state.frame.called_as or subject  # the user's call; torch's code is not theirs to change

    def refused(self) -> None:
        raise _LibraryRefused

    def capture(self, span: Span, name: str, origin: CaptureOrigin, detail: str) -> Poisoned:
        return self.state.unsupported(span, name, refusals.READS_MODULE_LEVEL())

    def structural(self, node: ast.AST) -> None:
        self.state.unsupported(Span.of(node), self.state.frame.called_as,
                                 refusals.LIBRARY_NOT_STRAIGHT(node=display(node)))

    def block_if(self, statements: list[ast.stmt], index: int) -> RestTaken:
        frame = self.state.frame
        frame.rests.append(statements[index + 1:])
        try:
            return self.library_if(statements[index])  # type: ignore[arg-type]
        finally:
            frame.rests.pop()

    def statement(self, node: ast.stmt) -> bool:
        if isinstance(node, (ast.If, ast.Raise, ast.Assert)) or _is_warning(node, self.state.frame.scope):
            self.library_statement(node)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            self.library_import(node)
        elif isinstance(node, ast.For):
            self.library_for(node)
        elif isinstance(node, (ast.Break, ast.Continue)):
            raise _Jump(node)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.decorator_list:
            self.state.env[node.name] = self.stmts.local_definition(node)
        else:
            return False
        return True

    def expression(self, node: ast.expr) -> Value | None:
        if isinstance(node, ast.IfExp):
            return self.fold_condition(node)
        if isinstance(node, ast.BoolOp):
            return self.fold_bool(node)
        if isinstance(node, ast.Dict):
            spread = self.calls.keyword_spread(ast.keyword(arg=None, value=node))
            return POISON if spread is None else KeywordDict(tuple(spread.items()))
        if isinstance(node, ast.ListComp):
            repeated = self.exprs.repeated(node)
            return repeated if repeated is not None else self.comprehension(node)
        return None

    def call(self, node: ast.Call) -> Value | None:
        func = node.func
        if self.state.frame.scope.resolve(func) in ("isinstance", "builtins.isinstance") and \
                "isinstance" not in self.state.env:
            return self.isinstance_of(node)
        if display(func) == "torch.jit.annotate" and len(node.args) == 2:
            return self.exprs.expr(node.args[1])  # a type note for TorchScript: the value itself
        if isinstance(func, ast.Attribute) and func.attr in ("append", "extend") and \
                isinstance(func.value, ast.Name) and func.value.id in self.state.frame.lists:
            return self.grow_list(node, func.value.id)
        check = _strip_dotted(self.state.frame.scope.resolve(func) or "")
        if check == "torch._refs._broadcast_shapes":
            args, keywords = self.calls.arguments(node)
            return POISON if args is None else self.broadcast_shapes(args, keywords, Span.of(node), display(func))
        if check == "torch._C._infer_size":
            args, keywords = self.calls.arguments(node)
            return POISON if args is None else self.infer_size(args, keywords, Span.of(node), display(func))
        if check == EINSUM_PATH:
            args, keywords = self.calls.arguments(node)
            return POISON if args is None else self.einsum_path(args, keywords, Span.of(node), display(func))
        if check in LIBRARY_CHECKS:
            return self.library_check(node, LIBRARY_CHECKS[check])
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call) and \
                display(func.value) == "super()" and isinstance(self.state.frame.node, ast.FunctionDef) and \
                self.state.frame.node.args.args:
            return self.calls.super_method(node)
        return None

    def builtin(self, name: str, args: list[Argument], keywords: dict[str, Expr], span: Span,
                shown: str) -> Expr | None:
        if name in LIBRARY_BUILTINS:
            return self.library_builtin(name, args, keywords, span, shown)
        return None

    def identity(self, left: Expr, right: Expr, negate: bool, span: Span, text: str) -> Const | None:
        if _same_object(left, right):
            return Const(not negate, t.BOOL, span)  # `k is v` where the user passed one tensor for both
        self.state.unsupported(span, self.state.frame.called_as, refusals.LIBRARY_TESTS_IDENTITY(text=text))
        return None

    def library_if(self, node: ast.If) -> RestTaken:
        """An `if` of torch's Python code: folded when its test is known here, else compiled as a run-time branch,
        taking what runs after it (the rest of the function, from enclosing blocks too) into the way that does not
        return."""
        test = self.try_truth(node.test)
        if test is not None:
            self.stmts.statements(node.body if test.value else node.orelse)
            return RestTaken.NO
        body = _without_warnings(node.body, self.state.frame.scope)
        if not body and not node.orelse or len(body) == 1 and isinstance(body[0], ast.Raise) and not node.orelse:
            return RestTaken.NOT_HANDLED  # a warning, or a check that raises: library_statement keeps it
        then_ends, else_ends = _ends_in_return(node.body), _ends_in_return(node.orelse)
        rest = self.stmts.continuation()
        if then_ends and not else_ends:
            self.stmts.runtime_branch(node.test, node.body, node.orelse + rest, node)
            self.state.frame.finished = True
            return RestTaken.YES
        if else_ends and not then_ends:
            self.stmts.runtime_branch(node.test, node.body + rest, node.orelse, node)
            self.state.frame.finished = True
            return RestTaken.YES
        self.stmts.runtime_branch(node.test, node.body, node.orelse, node)
        return RestTaken.NO

    def library_import(self, node: ast.Import | ast.ImportFrom) -> None:
        """``import torch`` inside a function of torch's Python code binds what the module-level import would."""
        for alias in node.names:
            if isinstance(node, ast.Import):
                dotted = alias.name if alias.asname else alias.name.split(".")[0]
                self.state.env[alias.asname or dotted] = self.exprs.dotted_value(dotted, Span.of(node), dotted) \
                    if dotted not in MODULE_PATHS else ModuleRef(dotted)
            elif node.level == 0 and node.module:
                dotted = f"{node.module}.{alias.name}"
                why = torch_python.not_followed(dotted)
                if why is not None or dotted.split(".")[0] not in ("torch", "math", "builtins"):
                    self.state.unsupported(Span.of(node), self.state.frame.called_as,
                                     refusals.LIBRARY_IMPORTS_UNFOLLOWED(dotted=dotted, why=why) if why else
                                     refusals.LIBRARY_IMPORTS(dotted=dotted))
                self.state.env[alias.asname or alias.name] = self.exprs.dotted_value(_strip_dotted(dotted), Span.of(node), dotted)
            else:
                self.state.unsupported(Span.of(node), self.state.frame.called_as, refusals.LIBRARY_IMPORTS_RELATIVELY())

    def library_for(self, node: ast.For) -> None:
        """A `for` of torch's Python code over what is known here (a tuple, `range` of literals): its body runs once
        per item, as Python runs it."""
        self.state.consumed[id(node.iter)] = "for"
        items = self.static_items(self.exprs.expr(node.iter), node.iter)
        for item in items:
            self.stmts.assign(node.target, item, node)
            self.state.frame.rests.append(None)
            try:
                self.stmts.statements(node.body)
            except _Jump as jump:
                if isinstance(jump.node, ast.Break):
                    return
            finally:
                # A branch inside the body took the rest of this round only: the next round follows it.
                self.state.frame.rests.pop()
                self.state.frame.finished = False
            if self.state.returned:
                return
        self.stmts.statements(node.orelse)

    def static_items(self, value: Value, node: ast.expr) -> list[Expr]:
        """The items of what torch's Python code iterates over, when their number is known here."""
        if isinstance(value, (Poisoned, UntypedParam)):
            raise _Abandon
        if isinstance(value, Expr) and isinstance(value.type, t.TupleT):
            return [_item(value, i) for i in range(len(value.type.items))]
        while isinstance(value, Read) and value.var in self.state.values:
            value = self.state.values[value.var]
        if isinstance(value, Host) and value.op is HostOp.RANGE:
            self.state.unsupported(Span.of(node), self.state.frame.called_as, refusals.LIBRARY_COUNTS())
        self.state.unsupported(Span.of(node), self.state.frame.called_as, refusals.LIBRARY_LOOPS(node=display(node)))
        raise _Abandon

    def comprehension(self, node: ast.ListComp | ast.GeneratorExp) -> Value:
        """A list comprehension or generator of torch's Python code over what is known here: the tuple of its items."""
        saved = self.state.env
        self.state.env = dict(saved)
        results: list[Expr] = []
        start = len(self.state.body)

        def run(index: int) -> None:
            if index == len(node.generators):
                results.append(self.exprs.atom(self.exprs.expr(node.elt), node.elt))
                return
            generator = node.generators[index]
            if generator.is_async:
                self.state.structural(node)
            self.state.consumed[id(generator.iter)] = "for"
            for item in self.static_items(self.exprs.expr(generator.iter), generator.iter):
                self.stmts.assign(generator.target, item, ast.copy_location(ast.Expr(node), node))
                for condition in generator.ifs:
                    known = self.try_constant(condition)
                    if known is None:
                        self.state.unsupported(Span.of(condition), self.state.frame.called_as,
                                         refusals.LIBRARY_FILTERS(condition=display(condition)))
                    assert known is not None  # unsupported() raised: this is torch's Python code
                    if not known.value:
                        break
                else:
                    run(index + 1)

        try:
            run(0)
        finally:
            self.state.env = saved
        span = Span.of(node)
        if isinstance(node, ast.GeneratorExp) and self.state.consumed.get(id(node)) not in EAGER_CONSUMERS and \
                not all(_harmless(statement) for statement in self.state.body[start:]):
            # Python may stop before the last item (`all`, `any`, a loop's `break`): ppy computes every item first.
            self.state.unsupported(span, self.state.frame.called_as, refusals.LIBRARY_COMPUTES(node=display(node)))
        return MakeTuple(tuple(results), t.TupleT(tuple(r.type for r in results)), span,
                         frozenset().union(*(r.aliases for r in results)))

    def grow_list(self, node: ast.Call, name: str) -> Value:
        """``items.append(x)`` / ``items.extend(xs)`` on a list torch's Python code is building."""
        func = node.func
        assert isinstance(func, ast.Attribute)
        args, keywords = self.calls.arguments(node)
        if args is None:
            return POISON
        if len(args) != 1 or args[0].spread or keywords:
            self.state.type_problem(Span.of(node), display(func), refusals.LIST_TAKES_ONE(func_attr=func.attr))
            raise _Abandon
        value = args[0].value
        if func.attr == "extend" and not isinstance(value.type, (t.TupleT, t.SeqT)):
            self.state.type_problem(Span.of(node), display(func), refusals.LIST_EXTEND(type=value.type))
            raise _Abandon
        current = self.exprs.atom(self.state.env[name])
        grown = self.exprs.atom(self.exprs.concatenate([(current, True), (value, func.attr == "extend")], Span.of(node)))
        self.state.env[name] = self.state.mark(grown, "list")
        return Const(None, t.NONE, Span.of(node))

    def einsum_path(self, args: list[Argument], keywords: dict[str, Expr], span: Span, shown: str) -> Value:
        """``contract_path(equation, *operands)`` in ppy's version of ``torch.einsum``: the path torch's Python code
        would pass for these operands, asked when the region runs (it depends on settings and sizes)."""
        operands: list[Expr] = []
        for arg in args:
            kind = arg.value.type
            operands += [_item(arg.value, i) for i in range(len(kind.items))] \
                if arg.spread and isinstance(kind, t.TupleT) else [arg.value]
        if keywords or any(a.spread and not isinstance(a.value.type, t.TupleT) for a in args) or not operands or not isinstance(operands[0].type, t.StrT) or \
                not all(isinstance(o.type, t.TensorT) for o in operands[1:]):
            return self.state.unsupported(span, shown, refusals.OTHER_ARGUMENTS(node_func=shown))
        # Bound to a name: C++ passes it to einsum as a view of the vector, which must outlive the call.
        return self.state.let(Host(HostOp.EINSUM_PATH, tuple(self.exprs.atom(o) for o in operands),
                                   t.OptionalT(t.SeqT(t.INT)), span))

    def broadcast_shapes(self, args: list[Argument], keywords: dict[str, Expr], span: Span, shown: str) -> Value:
        """``torch._refs._broadcast_shapes(*shapes)``, which loops over the shapes' lengths: computed when the
        region runs, with torch's errors, each shape printed in them as Python prints it."""
        shapes: list[Expr] = []
        for arg in args:
            kind = arg.value.type
            shapes += [_item(arg.value, i) for i in range(len(kind.items))] \
                if arg.spread and isinstance(kind, t.TupleT) else [arg.value]
        kinds = ""
        sequences: list[Expr] = []
        for shape in shapes:
            if isinstance(shape.type, t.IntT):
                shape = MakeTuple((shape,), t.TupleT((t.INT,)), span)  # `(x,)`, as torch's code makes it
            if keywords or any(a.spread and not isinstance(a.value.type, t.TupleT) for a in args) or \
                    not isinstance(shape.type, (t.TupleT, t.SeqT)) or t.element_type(shape.type) != t.INT:
                return self.state.unsupported(span, self.state.frame.called_as,
                                              refusals.LIBRARY_NOT_FOLLOWED_SHAPES(shown=shown))
            kinds += "S" if self.exprs.is_size(shape) else "L" if self.state.kind_of(shape) == "list" else "T"
            sequences.append(self.exprs.atom(self.members.as_sequence(shape)))
        return Host(HostOp.BROADCAST_SHAPES, tuple(sequences), t.SeqT(t.INT), span, function=kinds)

    def infer_size(self, args: list[Argument], keywords: dict[str, Expr], span: Span, shown: str) -> Value:
        """``torch._C._infer_size(a, b)``: two shapes broadcast when the region runs, by the C++ function it binds."""
        if keywords or len(args) != 2 or any(a.spread for a in args) or \
                not all(isinstance(a.value.type, (t.TupleT, t.SeqT)) and t.element_type(a.value.type) == t.INT
                        for a in args):
            return self.state.unsupported(span, self.state.frame.called_as,
                                          refusals.LIBRARY_NOT_FOLLOWED_SHAPES(shown=shown))
        shapes = tuple(self.exprs.atom(self.members.as_sequence(a.value)) for a in args)
        return Host(HostOp.INFER_SIZE, shapes, t.SeqT(t.INT), span)

    def library_check(self, node: ast.Call, error: PythonException) -> Value:
        """``torch._check(cond, lambda: message)`` in torch's Python code: a check the compiled region keeps."""
        if not node.args or len(node.args) > 2 or node.keywords:
            return self.state.unsupported(Span.of(node), self.state.frame.called_as,
                                    refusals.OTHER_ARGUMENTS(node_func=display(node.func)))
        text = node.args[1].body if len(node.args) == 2 and isinstance(node.args[1], ast.Lambda) else None
        known = self.try_constant(node.args[0])
        if known is None:
            self.stmts.require(node.args[0], ast.copy_location(ast.Expr(node), node), error,
                         self.stmts.message(text) if text is not None else ("",), negate=False)
        elif not known.value:
            shown = _text_of(text) if text is not None else ""
            self.state.unsupported(Span.of(node), self.state.frame.called_as,
                             refusals.LIBRARY_RAISES_SAYING(error=error.value, text=shown) if shown else
                             refusals.LIBRARY_RAISES_ERROR(error=error.value))
        return Const(None, t.NONE, Span.of(node))

    def library_statement(self, node: ast.stmt) -> None:
        """torch's own Python: `if` on what is known here folds, a check of a run-time value is kept, a warning is
        not printed, and what is left (a decision on a run-time value) is refused."""
        shown = self.state.frame.called_as
        if _is_warning(node, self.state.frame.scope):
            return  # compiled code prints none of the warnings torch's Python layer would
        if isinstance(node, ast.Raise):
            error, message = self.stmts.raised(node)
            if self.state.branching and error is not None:
                # One way of a run-time decision raises: the compiled way raises the same exception.
                self.state.body.append(Require(Const(False, t.BOOL, Span.of(node)), error, message, Span.of(node)))
                self.state.returned, self.state.returned_value, self.state.raising = True, None, True
                return
            self.state.unsupported(Span.of(node), shown, refusals.LIBRARY_RAISES(node=display(node)))
            raise _Abandon
        assert isinstance(node, (ast.If, ast.Assert))
        test = self.try_truth(node.test)
        if isinstance(node, ast.Assert):
            if test is None:
                self.stmts.require(node.test, node, PythonException.ASSERTION_ERROR, self.stmts.message(node.msg) if node.msg else ("",),
                             negate=False)
            elif not test.value:
                self.state.unsupported(Span.of(node), shown, refusals.LIBRARY_FAILS(node_test=display(node.test)))
                raise _Abandon
            return
        if test is not None:
            self.stmts.statements(node.body if test.value else node.orelse)
            return
        body = _without_warnings(node.body, self.state.frame.scope)
        if not body and not node.orelse:
            return  # a run-time check whose only effect is a warning
        if len(body) == 1 and isinstance(body[0], ast.Raise) and not node.orelse:
            error, message = self.stmts.raised(body[0])
            if error is not None:
                # `if a or b: raise E` checks `a`, then `b` only where `a` is false: one check each, in turn.
                for part in _or_parts(node.test):
                    known = self.try_constant(part)
                    if known is None:
                        self.stmts.require(part, node, error, message, negate=True)
                    elif known.value:
                        text = _text_of(body[0].exc.args[0]) if isinstance(body[0].exc, ast.Call) and body[0].exc.args \
                            else ""
                        self.state.unsupported(Span.of(node), shown,
                                         refusals.LIBRARY_RAISES_SAYING(error=error.value, text=text) if text else
                                         refusals.LIBRARY_RAISES_ERROR(error=error.value))
                        raise _Abandon
                return
        self.state.unsupported(Span.of(node), shown, refusals.LIBRARY_DECIDES_KNOWN(node_test=display(node.test)))
        raise _Abandon

    def try_constant(self, node: ast.expr) -> Const | None:
        """The value of an expression when it is known here, with nothing recorded when it is not."""
        saved = self.state.snapshot()
        try:
            value = self.exprs.expr(node)
        except (_Abandon, _LibraryRefused):
            value = None
        if not isinstance(value, Const):
            self.state.rollback(saved)
            return None
        return value

    def try_truth(self, node: ast.expr) -> Const | None:
        """Whether a test holds, when that is known here: a value known here, or one whose truth its type decides
        (a tuple of known length, None, a function), as Python's `if args:` asks."""
        known = self.try_constant(node)
        if known is not None:
            return known
        saved = self.state.snapshot()
        try:
            value = self.exprs.expr(node)
        except (_Abandon, _LibraryRefused):
            value = None
        if isinstance(value, Expr) and isinstance(value.type, (t.TupleT, t.NoneT, t.FunctionT)):
            return Const(not isinstance(value.type, t.NoneT) and (not isinstance(value.type, t.TupleT)
                                                                   or bool(value.type.items)), t.BOOL, Span.of(node))
        self.state.rollback(saved)
        return None

    def library_binding(self, value: ast.expr, span: Span, name: str) -> Value:
        """A module-level name of torch's Python code: an alias of a builtin (``logsigmoid = _add_docstr(
        torch._C._nn.log_sigmoid, ...)``) or a ``boolean_dispatch`` between two functions."""
        if isinstance(value, (ast.Name, ast.Attribute)):
            return self.exprs.expr(value)
        if isinstance(value, ast.Call) and value.args:
            called = self.state.frame.scope.resolve(value.func)
            if called is not None and called.endswith("_add_docstr"):
                return self.exprs.expr(value.args[0])
        if isinstance(value, ast.Call) and (self.state.frame.scope.resolve(value.func) or "").endswith("boolean_dispatch"):
            fields = {k.arg: k.value for k in value.keywords if k.arg}
            arg_name, arg_index, default = (fields.get(f) for f in ("arg_name", "arg_index", "default"))
            if_true, if_false = fields.get("if_true"), fields.get("if_false")
            if isinstance(arg_name, ast.Constant) and isinstance(arg_name.value, str) and \
                    isinstance(arg_index, ast.Constant) and isinstance(arg_index.value, int) and \
                    isinstance(default, ast.Constant) and isinstance(if_true, ast.Name) and isinstance(if_false, ast.Name):
                return BooleanDispatch(arg_name.value, arg_index.value, bool(default.value), if_true.id, if_false.id,
                                       self.state.frame.scope, self.state.frame.path)
        return self.state.unsupported(span, name, refusals.READS_MODULE_LEVEL())

    def dispatch(self, chooser: BooleanDispatch, args: list[Argument], keywords: dict[str, Expr], span: Span,
                 shown: str) -> Value:
        """Which of a ``boolean_dispatch``'s functions runs: the flag must be known here."""
        flag: Expr | None = keywords.get(chooser.arg_name)
        if flag is None and len(args) > chooser.arg_index and not any(a.spread for a in args):
            flag = args[chooser.arg_index].value
        if flag is None:
            flag = Const(chooser.default, t.BOOL, span)
        if not isinstance(flag, Const):
            return self.state.unsupported(span, shown, refusals.MUST_LITERAL(chooser_arg_name=chooser.arg_name))
        chosen = chooser.if_true if flag.value else chooser.if_false
        binding = chooser.scope.bindings.get(chosen)
        if binding is not None and isinstance(binding.node, ast.FunctionDef):
            return self.inliner.inline(Helper(binding.node, chooser.scope, chooser.path, library=True), args, keywords, span,
                               shown)
        if binding is not None and binding.value is not None:
            # One dispatch choosing another (`unique` picks `_return_output`, itself a dispatch on `return_counts`).
            inner = self.library_frame_value(binding.value, chooser.scope, chooser.path, chosen)
            if isinstance(inner, BooleanDispatch):
                return self.dispatch(inner, args, keywords, span, shown)
        return self.state.unsupported(span, shown, refusals.TORCH_BOOLEAN_DISPATCH())

    def ntuple(self, count: int, args: list[Argument], span: Span, shown: str) -> Expr:
        """``_pair(x)``: a sequence as it is, anything else repeated ``count`` times."""
        if len(args) != 1 or args[0].spread:
            self.state.type_problem(span, shown, refusals.TAKES_ONE_ARGUMENT())
            raise _Abandon
        value = args[0].value
        if isinstance(value.type, (t.TupleT, t.SeqT)):
            return value
        return MakeTuple((value,) * count, t.TupleT((value.type,) * count), span)

    def isinstance_of(self, node: ast.Call) -> Value:
        """``isinstance(x, ...)`` in torch's Python code: known from the model's type of ``x``, or refused."""
        if len(node.args) != 2 or node.keywords:
            return self.state.unsupported(Span.of(node), self.state.frame.called_as, refusals.ISINSTANCE_OTHER_THAN())
        value = self.exprs.expr(node.args[0])
        if not isinstance(value, Expr):
            return self.state.unsupported(Span.of(node), self.state.frame.called_as,
                                    refusals.ISINSTANCE_OTHER_THAN_2(node=display(node)))
        classes = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
        names = {self.state.frame.scope.resolve(c) or display(c) for c in classes}
        if torch_python.module_of(self.state.frame.path) == "torch._tensor":
            names = {"torch.Tensor" if n == "Tensor" else n for n in names}  # the class torch/_tensor.py defines
        names = {n if "." in n else f"builtins.{n}" for n in names}
        answer = _isinstance_answer(value.type, frozenset(names), self.state.kind_of(value))
        if answer is None:
            return self.state.unsupported(Span.of(node), self.state.frame.called_as,
                                    refusals.LIBRARY_TESTS(node=display(node)))
        return Const(answer, t.BOOL, Span.of(node))

    def library_function(self, dotted: str, node: ast.FunctionDef, scope: ModuleScope, name: str) -> FunctionRef:
        """A function of torch's Python code, or ppy's straight-line version of it where torch's loops."""
        replaced = torch_python.override(dotted)
        if replaced is not None:
            node, module = replaced
            return FunctionRef(dotted, name, Helper(node, module.scope, module.path, library=True))
        return FunctionRef(dotted, name, Helper(node, scope, self.state.frame.path, library=True))

    def torch_python_function(self, dotted: str) -> Helper | Value | None:
        """A function of torch's Python source that ppy ships (``F.smooth_l1_loss`` is in torch.nn.functional)."""
        replaced = torch_python.override(dotted)
        if replaced is not None:
            return Helper(replaced[0], replaced[1].scope, replaced[1].path, library=True)
        module_name, _, name = dotted.rpartition(".")
        for candidate in (module_name, torch_python.REEXPORTS.get(module_name, "")):
            module = torch_python.module(candidate) if candidate else None
            if module is None or module.tree is None:
                continue
            found = torch_python.function(module, name)
            if found is not None:
                return Helper(found, module.scope, module.path, library=True)
            binding = module.scope.bindings.get(name)
            if binding is not None and binding.value is not None:
                return self.library_frame_value(binding.value, module.scope, module.path, name)
        return None

    def library_frame_value(self, value: ast.expr, scope: ModuleScope, path: str, name: str) -> Value | None:
        """A module-level binding of torch's Python code, read from the region (``F.adaptive_max_pool2d``)."""
        saved = self.state.frame
        self.state.frame = Frame(frozenset(), [], m.message(m.IN_TORCH, name=name).render(), value, scope, path,
                           self.library_dialect,
                           saved.called_as or name)
        try:
            return self.library_binding(value, Span.of(value), name)
        except _LibraryRefused:
            return None
        finally:
            self.state.frame = saved

    def library_builtin(self, name: str, args: list[Argument], keywords: dict[str, Expr], span: Span,
                        shown: str) -> Expr | None:
        """What torch's Python code does with sequences of a length known here: ``range`` of literals, ``zip``,
        ``enumerate``, ``reversed``, ``sorted`` of literals, ``all``/``any``/``sum``/``min``/``max`` of a tuple.
        None: not one of those forms (the general rules apply)."""
        if any(a.spread for a in args):
            return None
        values = [a.value for a in args]
        strict = keywords.pop("strict", None) if name == "zip" else None
        if keywords:
            return None

        def tuple_of(items: Sequence[Expr]) -> Expr:
            return MakeTuple(tuple(items), t.TupleT(tuple(i.type for i in items)), span,
                             frozenset().union(*(i.aliases for i in items)))

        def items(value: Expr) -> list[Expr] | None:
            return [_item(value, i) for i in range(len(value.type.items))] if isinstance(value.type, t.TupleT) else None

        if name == "float" and len(values) == 1 and isinstance(values[0].type, t.TensorT):
            # `1.0 / float(self.num_batches_tracked)` (BatchNorm's cumulative average): a read of the value, which
            # eager's Python makes at the same point.
            return Host(HostOp.TENSOR_FLOAT, (values[0],), t.FLOAT, span)
        if name == "float":
            return None
        if name in ("ord", "chr"):
            # On what is known here (torch.einsum's sublists, letters numbered from "A"): folded, as Python computes.
            known = values[0].value if len(values) == 1 and isinstance(values[0], Const) else None
            try:
                if name == "ord" and isinstance(known, str):
                    return Const(ord(known), t.INT, span)
                if name == "chr" and isinstance(known, int) and not isinstance(known, bool):
                    return Const(chr(known), t.STR, span)
            except (TypeError, ValueError, OverflowError):
                pass  # Python's error: the general rules refuse the builtin
            return None
        if name == "range" and 1 <= len(values) <= 3 and all(isinstance(v.type, t.IntT) for v in values) and \
                not all(isinstance(v, Const) for v in values):
            # Taken whole (`tuple(range(x.ndim))`, tensordot's `list(range(-dims, 0))`), a sequence built at run
            # time; a loop over it is refused (static_items).
            return Host(HostOp.RANGE, tuple(values), t.SeqT(t.INT), span)
        if name == "range" and not all(isinstance(v, Const) for v in values):
            self.state.unsupported(span, shown, refusals.LIBRARY_COUNTS())
        if name == "range" and 1 <= len(values) <= 3 and all(isinstance(v, Const) and isinstance(v.type, t.IntT)
                                                              for v in values):
            try:
                numbers = range(*(v.value for v in values if isinstance(v, Const)))  # all are, tested above
            except ValueError as error:  # a step of 0
                self.state.type_problem(span, shown, refusals.ALWAYS_RAISES_VALUEERROR(error=error))
                raise _Abandon from None
            count = _range_length(numbers)
            if count > MAX_UNROLLED:
                self.state.unsupported(span, shown,
                                 refusals.ITEMS_MORE_THAN(shown=shown, budgets_shown_int=budgets.shown_int(count)))
            return tuple_of([Const(n, t.INT, span) for n in numbers])
        if name in ("zip", "enumerate", "reversed", "sorted") and any(isinstance(v.type, t.SeqT) for v in values):
            self.state.unsupported(span, shown, refusals.LIBRARY_TAKES(name=name))
        sequences = [found for found in (items(v) for v in values) if found is not None]
        if not values or len(sequences) < len(values):
            return None
        first = sequences[0]
        if name == "zip" and values:
            lengths = {len(s) for s in sequences}
            if strict is not None and not (isinstance(strict, Const) and (not strict.value or len(lengths) == 1)):
                return None
            return tuple_of([tuple_of([s[i] for s in sequences]) for i in range(min(lengths))])
        if len(values) != 1:
            return None
        if name == "enumerate":
            return tuple_of([tuple_of([Const(i, t.INT, span), item]) for i, item in enumerate(first)])
        if name == "reversed":
            return tuple_of(first[::-1])
        if name == "sorted":
            if len(first) <= 1:
                return tuple_of(first)
            constants_known = [i for i in first if isinstance(i, Const)]
            if len(constants_known) == len(first) and all(t.is_number(i.type) for i in constants_known):
                ordered = sorted(constants_known, key=lambda i: i.value)  # apart: tuple_of's Expr would type the key
                return tuple_of(ordered)
            self.state.unsupported(span, shown, refusals.LIBRARY_SORTS())
        if name in ("all", "any"):
            if not all(t.is_number(i.type) for i in first):
                return None
            truths = [i if isinstance(i.type, t.BoolT) else self.exprs.atom(self.ops.host(HostOp.TO_BOOL, [i], span, shown,
                                                                                 kind=t.BOOL)) for i in first]
            if name == "any":
                return self.ops.any_of(truths, span, shown)
            return self.ops.host(HostOp.ALL, truths, span, shown, kind=t.BOOL) if truths else Const(True, t.BOOL, span)
        if name == "sum" and all(t.is_number(i.type) for i in first):
            total: Expr = Const(0, t.INT, span)
            for item in first:
                total = self.exprs.atom(self.ops.host(HostOp.ADD, [total, item], span, shown))
            return total
        if name in ("min", "max") and first and all(t.is_number(i.type) for i in first):
            if len(first) == 1:
                return first[0]
            return self.host_math.extreme(name, first, span, shown)
        return None

    def fold_bool(self, node: ast.BoolOp) -> Value:
        """`a and b` in torch's Python code: short-circuits on what is known here; run-time bools are combined
        when computing them early is harmless (a rank or dtype test, not ``x.size(1)`` that could raise)."""
        is_or = isinstance(node.op, ast.Or)
        start = len(self.state.body)
        pending: list[Expr] = []
        result: Value = POISON
        for operand in node.values:
            result = self.exprs.expr(operand)
            if isinstance(result, Const):
                if bool(result.value) == is_or:
                    break  # decided; with only bools about, the value is the decision
                continue
            if not isinstance(result, Expr) or result.type != t.BOOL:
                self.state.unsupported(Span.of(node), self.state.frame.called_as,
                                 refusals.LIBRARY_TESTS_PPY(operand=display(operand)))
                raise _Abandon
            pending.append(result)
        if not pending:
            return result
        if not all(_harmless(statement) for statement in self.state.body[start:]):
            self.state.unsupported(Span.of(node), self.state.frame.called_as, refusals.LIBRARY_TESTS_WHOSE(node=display(node)))
            raise _Abandon
        if isinstance(result, Const) and bool(result.value) == is_or:
            return Const(is_or, t.BOOL, Span.of(node))
        if is_or:
            return self.ops.any_of(pending, Span.of(node), display(node))
        return self.ops.host(HostOp.ALL, pending, Span.of(node), display(node), kind=t.BOOL) if len(pending) > 1 \
            else pending[0]

    def fold_condition(self, node: ast.IfExp) -> Value:
        """`a if test else b` in torch's Python code: folded where the test is known here, else a run-time choice
        that computes only the way taken, as Python does."""
        known = self.try_truth(node.test)
        if known is not None:
            return self.exprs._expr(node.body if known.value else node.orelse)
        span = Span.of(node)
        test = self.exprs.expr(node.test)
        if not isinstance(test, Expr) or not t.is_number(test.type):
            self.state.unsupported(span, self.state.frame.called_as, refusals.LIBRARY_CHOOSES(node_test=display(node.test)))
            raise _Abandon
        test = self.exprs.atom(self.ops.host(HostOp.TO_BOOL, [test], span, display(node.test), kind=t.BOOL)
                         if not isinstance(test.type, t.BoolT) else test)
        saved = self.state.body
        ways = []
        try:
            for way in (node.body, node.orelse):
                self.state.body = []
                ways.append((self.exprs.atom(self.exprs.expr(way), way), self.state.body))
        finally:
            self.state.body = saved
        (one, then_body), (other, else_body) = ways
        merged: list[tuple[Var, Expr | None, Expr | None]] = []
        value = self.stmts.merge(refusals.MERGED_VALUE(), one, other, span,
                           refusals.LIBRARY_CHOOSES_AT_RUN_TIME(test=display(node.test)), merged)
        self.state.body.append(Branch(test, tuple(then_body), tuple(else_body), tuple(merged), span))
        return value
