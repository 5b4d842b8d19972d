"""Statements of a body, in order: assignment and its targets, ``return``, ``+=``, stores.

A new statement form a region may use goes in ``Statements.statement``'s
dispatch; one only torch's Python code uses goes to the library dialect.
"""

from __future__ import annotations

import ast

from ppy_check import messages as m
from ppy_check import torch_python
from ppy_check.messages import refusals
from ppy_check.model import types as t
from ppy_check.model.builder.control import _Abandon, _Jump, _LibraryRefused
from ppy_check.model.builder.facts import (
    Mismatch,
    _assignable,
    _cannot_raise,
    _is_new_list,
    _item,
    _may_raise,
    _repeats_a_variable,
)
from ppy_check.model.builder.part import Part
from ppy_check.model.builder.tables import _SHOWN_SCALARS, TENSOR_INPLACE
from ppy_check.model.builder.text import _is_docstring, display
from ppy_check.model.builder.values import (
    POISON,
    BooleanDispatch,
    FunctionRef,
    Helper,
    KeywordDict,
    LibraryModule,
    Message,
    ModuleRef,
    Poisoned,
    RestTaken,
    UntypedParam,
    Value,
    _is_expr,
)
from ppy_check.model.ir import (
    Branch,
    Call,
    Const,
    Eval,
    ExpectLength,
    Expr,
    Host,
    HostOp,
    Item,
    Length,
    Let,
    MakeSeq,
    MakeTuple,
    Param,
    PythonException,
    Query,
    Read,
    Require,
    Return,
    SeqIndex,
    SeqSlice,
    ShownSeq,
    Span,
    Store,
    TensorIndex,
    TensorQuery,
    Var,
    Write,
    WriteKind,
)
from ppy_check.region import function_locals


class Statements(Part):
    """Statements, in order, and assignment to their targets."""

    # --- statements ----------------------------------------------------------------------

    def statements(self, statements: list[ast.stmt]) -> None:
        for index, statement in enumerate(statements):
            if index == 0 and _is_docstring(statement):
                continue
            if self.state.returned or self.state.frame.finished:
                # Code after `return` never runs; Python compiles it anyway.
                continue
            if not self.state.inlining:
                self.state.at = statement
            try:
                if isinstance(statement, ast.If):
                    taken = self.state.frame.dialect.block_if(statements, index)
                    if taken is RestTaken.YES:
                        return  # the rest of the block was compiled inside the branch
                    if taken is RestTaken.NO:
                        continue
                self.statement(statement)
            except _Abandon:
                self.poison_targets(statement)

    def continuation(self) -> list[ast.stmt]:
        """What runs after the statement being built, to the end of the function (or of a loop's body)."""
        rest: list[ast.stmt] = []
        for block in reversed(self.state.frame.rests):
            if block is None:
                break
            rest += block
        return rest

    def runtime_branch(self, test_node: ast.expr, then: list[ast.stmt], otherwise: list[ast.stmt],
                       node: ast.If) -> None:
        """Both ways of a decision of torch's Python code, built one after the other, joined as a C++ `if`."""
        span = Span.of(node)
        test = self.exprs.expr(test_node)
        if not isinstance(test, Expr) or not t.is_number(test.type):
            self.state.unsupported(span, self.state.frame.called_as, refusals.LIBRARY_DECIDES(test_node=display(test_node)))
            raise _Abandon
        test = self.exprs.atom(self.ops.host(HostOp.TO_BOOL, [test], span, display(test_node), kind=t.BOOL)
                         if not isinstance(test.type, t.BoolT) else test)
        saved = (self.state.body, self.state.env, self.state.returned, self.state.returned_value, self.state.raising)
        # Each way holds all that runs after it on that way: nothing there reaches past it.
        rests, finished = self.state.frame.rests, self.state.frame.finished
        ways = []
        # `if dim is None: dim = ...`: on the way the test proves a name not None, it holds the value inside the
        # optional (as a type checker narrows it), so the two ways can give it one type.
        narrowing = _tests_none(test_node)
        narrowed: dict[str, Expr] = {}
        outer_narrowed = self.state.narrowed_attributes
        self.state.branching += 1
        try:
            for statements, holds in ((then, True), (otherwise, False)):
                self.state.body, self.state.env = [], dict(saved[1])
                self.state.returned, self.state.returned_value, self.state.raising = False, None, False
                self.state.frame.rests, self.state.frame.finished = [None], False
                self.state.narrowed_attributes = dict(outer_narrowed)
                if narrowing is not None and narrowing[1] is not holds:
                    tested = narrowing[0]
                    path = self.modules.path_of(tested) if isinstance(tested, ast.Attribute) else None
                    original = self.state.env.get(tested.id) if isinstance(tested, ast.Name) else \
                        self.state.attributes.get(path) if path is not None else None
                    if isinstance(original, Expr) and isinstance(original.type, t.OptionalT):
                        inner = self.members.unwrap(original, display(tested), span)
                        if isinstance(tested, ast.Name):
                            narrowed[tested.id] = self.state.env[tested.id] = inner
                        elif path is not None:  # `self.momentum is None`: an input read through the instance
                            self.state.narrowed_attributes[path] = inner
                try:
                    self.statements(statements)
                except _Jump as jump:
                    self.state.unsupported(Span.of(jump.node), self.state.frame.called_as,
                                     refusals.LIBRARY_LEAVES(jump_node=display(jump.node), test_node=display(test_node)))
                    raise _Abandon from None
                value = None
                if self.state.returned and not self.state.raising:
                    assert self.state.returned_value is not None  # a way that returns holds what it returns
                    value = self.exprs.atom(self.state.returned_value)
                ways.append((self.state.body, self.state.env, self.state.returned, value, self.state.raising))
        finally:
            self.state.branching -= 1
            self.state.narrowed_attributes = outer_narrowed
            self.state.body, self.state.env, self.state.returned, self.state.returned_value, self.state.raising = saved
            self.state.frame.rests, self.state.frame.finished = rests, finished
        (then_body, then_env, then_returned, then_value, then_raises), \
            (else_body, else_env, else_returned, else_value, else_raises) = ways
        shown = refusals.LIBRARY_DECIDES_AT_RUN_TIME(test=display(test_node))
        merged: list[tuple[Var, Expr | None, Expr | None]] = []
        if then_raises and else_raises:
            self.state.returned, self.state.returned_value, self.state.raising = True, None, True
        elif then_raises or else_raises:
            # The way that raises never goes on: what follows is the other way's.
            goes_on = (else_env, else_returned, else_value) if then_raises else (then_env, then_returned, then_value)
            if goes_on[1]:
                assert goes_on[2] is not None
                self.state.returned, self.state.returned_value = True, self.merge(refusals.MERGED_RESULT(), goes_on[2], None, span, shown,
                                                                      merged, then_raises)
            else:
                for name, held in goes_on[0].items():
                    if name in narrowed and held is narrowed[name]:
                        held = self.state.env[name]  # narrowed only: as it was
                    if self.state.env.get(name) is not held and isinstance(held, Expr):
                        self.state.env[name] = self.merge(refusals.MERGED_NAME(name=name), held, None, span, shown, merged, then_raises)
        elif then_returned != else_returned:
            self.state.unsupported(span, self.state.frame.called_as, refusals.RETURNS_ONE_WAY(shown=shown))
            raise _Abandon
        elif then_returned:
            assert then_value is not None and else_value is not None
            self.state.returned, self.state.returned_value = True, self.merge(refusals.MERGED_RESULT(), then_value, else_value, span, shown,
                                                                  merged)
        else:
            for name in sorted(set(then_env) | set(else_env)):
                one, other = then_env.get(name), else_env.get(name)
                if name in narrowed and (one is narrowed[name] or other is narrowed[name]):
                    # Narrowed on one way and untouched on the other: as it was. Assigned on the other: the
                    # narrowed value is what this way gives.
                    kept = other if one is narrowed[name] else one
                    if kept is self.state.env.get(name):
                        continue
                if one is other:
                    continue
                if one is None or other is None:
                    self.state.env.pop(name, None)  # set one way only: reading it after would raise in Python too
                    continue
                if not isinstance(one, Expr) or not isinstance(other, Expr):
                    self.state.unsupported(span, self.state.frame.called_as,
                                     refusals.DIFFERENT_FUNCTION_EACH(shown=shown, name=name))
                    raise _Abandon
                self.state.env[name] = self.merge(refusals.MERGED_NAME(name=name), one, other, span, shown, merged)
        self.state.body.append(Branch(test, tuple(then_body), tuple(else_body), tuple(merged), span))

    def merge(self, what: m.Message, one: Expr, other: Expr | None, span: Span, shown: m.Message,
              merged: list[tuple[Var, Expr | None, Expr | None]], swapped: bool = False) -> Read:
        """One variable for a value two ways give (of one type), set on each way; ``other`` None: that way raises
        (``swapped``: the raising way is the one where the test holds)."""
        if isinstance(one.type, t.FunctionT):
            self.state.unsupported(span, self.state.frame.called_as, refusals.DIFFERENT_FUNCTION_EACH_WAY(shown=shown, what=what))
            raise _Abandon
        kind = one.type
        if other is not None and one.type != other.type:
            if {type(one.type), type(other.type)} <= {t.IntT, t.FloatT, t.NumberT}:
                kind = t.NUMBER  # an int one way and a float the other: a Python number, as a float parameter holds
            elif isinstance(one.type, t.NoneT) != isinstance(other.type, t.NoneT) and \
                    t.strip_optional(one.type if isinstance(other.type, t.NoneT) else other.type) in _OPTIONAL_SCALARS:
                # None one way, a bool (or number) the other: an optional, as torch's `align_corners` is.
                kind = t.OptionalT(t.strip_optional(one.type if isinstance(other.type, t.NoneT) else other.type))
            else:
                self.state.unsupported(span, self.state.frame.called_as,
                                 refusals.ONE_WAY_OTHER(shown=shown, what=what, one_type=one.type, other_type=other.type))
                raise _Abandon
        var = self.state.new_var("", kind)
        if self.members.strided(one) and (other is None or self.members.strided(other)):
            self.state.strided_vars.add(var)
        merged.append((var, other, one) if swapped else (var, one, other))
        return Read(var, kind, span, one.aliases | (other.aliases if other is not None else frozenset()))

    def poison_targets(self, statement: ast.stmt) -> None:
        """A statement that could not be modelled binds nothing usable: later reads are not reported again."""
        targets: list[ast.expr] = []
        if isinstance(statement, ast.Assign):
            targets = statement.targets
        elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
            targets = [statement.target]
        for target in targets:
            self.bind_poison(target)
        if isinstance(statement, ast.Return) and self.state.inlining:
            # A helper's `return` that could not be modelled hands back what its problem already explains: the
            # call is not None to its caller (that would cascade into findings on correct lines there).
            self.state.returned, self.state.returned_value = True, POISON

    def statement(self, node: ast.stmt) -> None:
        if self.state.frame.dialect.statement(node):
            return
        if isinstance(node, ast.Expr):
            value = self.exprs.expr(node.value, top=True)
            if isinstance(value, (Call, TensorIndex)) or _may_raise(value):
                self.state.body.append(Eval(value, Span.of(node)))
        elif isinstance(node, ast.Assign):
            first_var = self.state.vars
            value = self.exprs.expr(node.value, top=True)
            chained = len(node.targets) > 1
            if chained:
                value = self.exprs.atom(value, node.value)
            for target in node.targets:
                # `h = w = x.shape[1]`: every target holds the one value, so none may take its variable over.
                self.assign(target, value, node, None if chained else first_var)
                self.track_list(target, node.value)
        elif isinstance(node, ast.AnnAssign):
            if node.value is not None:
                first_var = self.state.vars
                self.assign(node.target, self.exprs.expr(node.value, top=True), node, first_var)
                self.track_list(node.target, node.value)
        elif isinstance(node, ast.AugAssign):
            self.augmented(node)
        elif isinstance(node, ast.Return):
            self.ret(node)
        elif isinstance(node, ast.Pass):
            return
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.state.structural(node)
            self.state.env[node.name] = POISON
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            self.state.structural(node)
            for alias in node.names:
                self.state.env[(alias.asname or alias.name).split(".")[0]] = POISON
        elif isinstance(node, ast.Raise):
            # ppy-branch reports the raise; of the exception only its arguments can hold another problem (the
            # class itself, `ValueError`, is no call a region makes: reporting it would be a second finding).
            self.state.structural(node)
            call = node.exc
            if isinstance(call, ast.Call):
                parts = [*call.args, *(k.value for k in call.keywords)]
                # An f-string message is text Python builds on the way out: only what it formats is read.
                parts = [inner.value for part in parts if isinstance(part, ast.JoinedStr) for inner in part.values
                         if isinstance(inner, ast.FormattedValue)] + \
                    [part for part in parts if not isinstance(part, ast.JoinedStr)]
                self.exprs.shadow(ast.Tuple(parts, ast.Load()))
        else:
            self.state.structural(node)
            self.exprs.shadow(node)

    def local_definition(self, node: ast.FunctionDef | ast.ClassDef) -> Value:
        """A function or class torch's Python code defines inside a function: nothing runs until it is used. A
        function is followed where it is called; a class (an autograd Function for MaskedTensor inputs, say) is
        refused only if the way taken uses it."""
        if isinstance(node, ast.ClassDef):
            return FunctionRef(f"<class defined in a function>.{node.name}", node.name)
        dotted = f"{torch_python.module_of(self.state.frame.path)}.{node.name}"
        read = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        closure = frozenset(read & self.state.frame.locals - function_locals(node))
        helper = Helper(node, self.state.frame.scope, self.state.frame.path, library=True, enclosing=self.state.frame.node,
                        closure=closure)
        return Const(FunctionRef(dotted, node.name, helper), t.FunctionT(node.name), Span.of(node))

    def track_list(self, target: ast.expr, value: ast.expr) -> None:
        """In torch's Python code, a name bound to a new list may grow by `.append` until it is read as a whole."""
        if not self.state.frame.dialect.models_python_data or not isinstance(target, ast.Name):
            return
        if _is_new_list(value, self.state.frame.scope):
            self.state.frame.lists.add(target.id)
        else:
            self.state.frame.lists.discard(target.id)

    def require(self, test: ast.expr, node: ast.stmt, error: PythonException, message: Message,
                negate: bool) -> None:
        """Keep a check of torch's Python code on a run-time value: the compiled region raises where it would."""
        span = Span.of(node)
        value = self.exprs.expr(test)
        if isinstance(value, Expr) and t.is_number(value.type):
            holds = self.ops.host(HostOp.NOT, [value], span, display(test)) if negate else value
            self.state.body.append(Require(holds, error, message, span))
            return
        reads_tensor = isinstance(value, Expr) and isinstance(value.type, t.TensorT)
        self.state.unsupported(span, self.state.frame.called_as,
                         (refusals.LIBRARY_CHECKS_TENSOR_VALUE if reads_tensor else refusals.LIBRARY_CHECKS_UNKNOWN)(
                             test=display(test)))
        raise _Abandon

    def raised(self, node: ast.Raise) -> tuple[PythonException | None, Message]:
        """The exception a `raise` of torch's Python code makes, and its message: literal text, and the values an
        f-string formats (what is known here as text, a run-time int or bool as itself)."""
        call = node.exc
        func = call.func if isinstance(call, ast.Call) else call
        name = self.state.frame.scope.resolve(func) if func is not None else None
        error = next((e for e in PythonException if e.builtin and name in (e.value, f"builtins.{e.value}")), None)
        if not isinstance(call, ast.Call) or not call.args:
            return error, (name or "",)
        return error, self.message(call.args[0])

    def message(self, text: ast.expr) -> Message:
        """An exception's message in torch's Python code: literal text, and the values an f-string formats."""
        if isinstance(text, ast.Constant) and isinstance(text.value, str):
            return (text.value,)
        if isinstance(text, ast.JoinedStr):
            return tuple(piece for part in text.values if isinstance(part, (ast.Constant, ast.FormattedValue))
                         for piece in ((str(part.value),) if isinstance(part, ast.Constant) else self.formatted(part)))
        return (display(text),)

    def formatted(self, part: ast.FormattedValue) -> Message:
        """One `{...}` of a raise's f-string: its text where it is known here, the run-time value where it is one
        the compiled code prints as Python's str() does and nothing can fail computing (the message is built before
        the check fails), else its source."""
        shown = "{" + display(part.value) + "}"
        if part.format_spec is not None or part.conversion not in (-1, ord("s")):
            return (shown,)
        known = self.library_dialect.try_constant(part.value)
        if known is not None:
            value = known.value
            return (str(value),) if isinstance(value, (str, int, float, bool)) or value is None else (shown,)
        saved = self.state.snapshot()
        try:
            value = self.exprs.expr(part.value)
        except (_Abandon, _LibraryRefused):
            value = POISON
        added = self.state.body[saved[0]:]
        if isinstance(value, Expr) and len(self.state.problems.unsupported) == saved[1] \
                and len(self.state.problems.types) == saved[2] and all(isinstance(s, Let) and self.computes_safely(s.value)
                                                                 for s in added):
            pieces = self.shown(value)
            if pieces is not None:
                return pieces
        self.state.rollback(saved)
        return (shown,)

    def shown(self, value: Expr) -> Message | None:
        """``value`` as the pieces of a message that print it as Python's str() does; None where the compiled code
        cannot (a str inside a tuple, which Python quotes; a value whose computing may fail)."""
        if value.type in _SHOWN_SCALARS or isinstance(value.type, t.StrT):
            return (value,) if self.computes_safely(value) else None
        if t.read_only(value.type) is not None:
            return None  # a list or a tuple, shown `[1, 2]` or `(1, 2)`
        opening, closing = ("torch.Size([", "])") if self.exprs.is_size(value) else \
            ("[", "]") if self.state.kind_of(value) == "list" else ("(", ")")
        if isinstance(value.type, t.SeqT) and value.type.item in _SHOWN_SCALARS and self.computes_safely(value):
            return (ShownSeq(value, opening, closing, opening == "("),)
        if not isinstance(value.type, t.TupleT):
            return None
        items = [_item(value, i) for i in range(len(value.type.items))]
        if not all(item.type in _SHOWN_SCALARS and self.computes_safely(item) for item in items):
            return None
        pieces: list[str | Expr | ShownSeq] = [opening]
        for index, item in enumerate(items):
            pieces.extend((", ", item) if index else (item,))
        return (*pieces, "," if len(items) == 1 and opening == "(" else "", closing)

    def computes_safely(self, value: Expr) -> bool:
        """Whether computing a value a message shows cannot fail (it is computed before the check that raises it):
        what _cannot_raise allows, a tuple's items, slices and joins of such sequences, and arithmetic on a rank
        or a length, which cannot overflow (`{-ndim}`, `{len(out_size) + 1}`)."""
        if isinstance(value, Item):
            return self.computes_safely(value.base)
        if isinstance(value, MakeSeq):
            return all(self.computes_safely(part) for part, _ in value.parts)
        if isinstance(value, SeqSlice):
            return self.computes_safely(value.base) and all(
                bound is None or self.computes_safely(bound) for bound in (value.lower, value.upper)) and (
                value.step is None or isinstance(value.step, Const) and value.step.value != 0)
        return _cannot_raise(value) or self.small(value)

    def small(self, value: Expr, depth: int = 0) -> bool:
        """Whether an int is a rank, a length or a small literal, or a sum, difference or negation of a few of
        them, or the least or greatest of them: 64-bit arithmetic on it cannot overflow."""
        if depth > 4:
            return False
        if isinstance(value, Const):
            return isinstance(value.value, int) and abs(value.value) < 2**32
        if isinstance(value, (Length, TensorQuery)):
            return isinstance(value, Length) or value.query is Query.DIM
        if isinstance(value, Read):
            known = self.state.values.get(value.var)
            return known is not None and self.small(known, depth + 1)
        if isinstance(value, Host) and value.op in (HostOp.ADD, HostOp.SUB, HostOp.NEG, HostOp.MIN, HostOp.MAX):
            return all(self.small(operand, depth + 1) for operand in value.operands)
        return False

    def bind_poison(self, target: ast.expr) -> None:
        for name in ast.walk(target):
            if isinstance(name, ast.Name):
                self.state.env[name.id] = POISON

    def assign(self, target: ast.expr, value: Value, statement: ast.stmt, renames_after: int | None = None) -> None:
        """Bind ``target`` to ``value``. ``renames_after``: a temporary made after that variable count (by this
        statement alone) that only this target holds may take the target's name; None: it may not."""
        if isinstance(target, ast.Name):
            self.bind_name(target.id, value, renames_after)
        elif isinstance(target, (ast.Tuple, ast.List)):
            self.unpack(target, value, statement, renames_after)
        elif isinstance(target, ast.Subscript):
            self.store(target, value, statement)
        elif isinstance(target, ast.Starred):
            self.state.unsupported(Span.of(target), display(target), refusals.STARRED_TARGET_MUST())
        else:
            self.state.unsupported(Span.of(target), display(target),
                             refusals.ASSIGNING_ATTRIBUTE_CHANGES())

    def bind_name(self, name: str, value: Value, renames_after: int | None = None) -> None:
        if isinstance(value, (Poisoned, UntypedParam)):
            self.state.env[name] = POISON
            return
        if isinstance(value, (ModuleRef, FunctionRef, LibraryModule, BooleanDispatch, KeywordDict)):
            self.state.env[name] = value  # an alias of a module or function: known at build time
            return
        if renames_after is not None and isinstance(value, Read) and value.var.index > renames_after and self.state.body \
                and isinstance(self.state.body[-1], Let) and self.state.body[-1].var is value.var and not value.var.name:
            # The value was just computed into a temporary that nothing else holds: give it the user's name. (A
            # temporary an earlier statement made may be held by another name's tuple: `t = (x.sum(), 1)`.)
            last = self.state.body.pop()
            self.state.env[name] = self.state.mark(self.state.let(last.value, name), self.state.kind_of(value))
            return
        if isinstance(value, (Const, Param, MakeTuple, Read)):
            self.state.env[name] = self.exprs.atom(value)
            return
        assert _is_expr(value), f"{value} has no value a region can hold"
        self.state.env[name] = self.state.let(value, name)

    def unpack(self, target: ast.Tuple | ast.List, value: Value, statement: ast.stmt,
               renames_after: int | None = None) -> None:
        if isinstance(value, Poisoned):
            self.bind_poison(target)
            return
        source = self.exprs.atom(value, statement)
        starred = [i for i, e in enumerate(target.elts) if isinstance(e, ast.Starred)]
        count = len(target.elts)
        span = Span.of(target)
        if len(starred) > 1:
            self.state.unsupported(span, display(target), refusals.TWO_STARRED_TARGETS())
            raise _Abandon
        if isinstance(source.type, t.TensorT):
            # Python iterates a tensor as `iter(x.unbind(0))`, after refusing a 0-d one with TypeError.
            rank = self.exprs.atom(TensorQuery(source, Query.DIM, (), t.INT, span))
            holds = self.exprs.atom(self.ops.host(HostOp.NE, [rank, Const(0, t.INT, span)], span, display(target)))
            self.state.body.append(Require(holds, PythonException.TYPE_ERROR, ("iteration over a 0-d tensor",), span))
            source = self.exprs.atom(self.calls.invoke_method("unbind", source, [], {}, span, display(statement)))
        if isinstance(source.type, t.TupleT):
            items = [_item(source, i) for i in range(len(source.type.items))]
            if starred:
                star = starred[0]
                after = count - star - 1
                if len(items) < count - 1:
                    self.state.type_problem(span, display(target),
                                      refusals.UNPACKS_VALUES_INTO(items_count=len(items), count=count - 1))
                    raise _Abandon
                middle = items[star:len(items) - after]
                rest = MakeTuple(tuple(middle), t.TupleT(tuple(i.type for i in middle)), span,
                                 frozenset().union(*(i.aliases for i in middle)))
                values = items[:star] + [rest] + items[len(items) - after:]
            else:
                if len(items) != count:
                    self.state.type_problem(span, display(target),
                                      refusals.UNPACKS_VALUES_INTO_NAMES(items_count=len(items), count=count))
                    raise _Abandon
                values = items
        elif isinstance(source.type, t.SeqT):
            self.state.body.append(ExpectLength(source, count - len(starred), bool(starred), span))
            item_type = source.type.item
            values = []
            for index, element in enumerate(target.elts):
                if isinstance(element, ast.Starred):
                    after = count - index - 1
                    upper = Const(-after, t.INT, span) if after else None
                    values.append(SeqSlice(source, Const(index, t.INT, span), upper, None, source.type, span, source.aliases))
                elif starred and index > starred[0]:
                    values.append(SeqIndex(source, Const(index - count, t.INT, span), item_type, span, source.aliases))
                else:
                    values.append(Item(source, index, item_type, span, source.aliases))
        else:
            self.state.type_problem(span, display(target), refusals.CANNOT_UNPACK(source_type=source.type))
            raise _Abandon
        if renames_after is not None and _repeats_a_variable(values):
            renames_after = None  # `p, q = (x.sum(),) * 2`: both names hold the one temporary
        for element, item in zip(target.elts, values):
            self.assign(element.value if isinstance(element, ast.Starred) else element, item, statement, renames_after)

    def store(self, target: ast.Subscript, value: Value, statement: ast.stmt) -> None:
        base = self.exprs.atom(self.exprs.expr(target.value), target.value)
        if not isinstance(base.type, t.TensorT):
            self.state.unsupported(Span.of(target), display(target),
                             refusals.ITEM_ASSIGNMENT_OUTSIDE(type=base.type)
                             if not isinstance(base.type, (t.TupleT, t.SeqT)) else refusals.TUPLES_CANNOT_CHANGE())
            raise _Abandon
        parts = self.members.index_parts(target.slice)
        item = self.exprs.atom(value, statement)
        if not (isinstance(item.type, t.TensorT) or t.is_number(item.type)):
            self.state.type_problem(Span.of(statement), display(statement), refusals.CANNOT_STORE_INTO(item_type=item.type))
            raise _Abandon
        span = Span.of(statement)
        self.state.body.append(Store(base, parts, item, span))
        self._record_writes(base.aliases, span, display(statement), WriteKind.STORE)

    def _record_writes(self, params: frozenset[str], span: Span, text: str, kind: WriteKind) -> None:
        for param in sorted(params):
            self.state.writes.append(Write(param, self.state._span(span), text, kind))

    def augmented(self, node: ast.AugAssign) -> None:
        span = Span.of(node)
        if isinstance(node.target, ast.Subscript):
            # x[i] += y: x.__setitem__(i, x.__getitem__(i).__iadd__(y)), in that order.
            base = self.exprs.atom(self.exprs.expr(node.target.value), node.target.value)
            parts = self.members.index_parts(node.target.slice)
            current = self.exprs.atom(self.members.tensor_index(base, parts, span), node)
            other = self.exprs.atom(self.exprs.expr(node.value), node.value)
            updated = self.exprs.atom(self.ops.operator(node.op, current, other, span, in_place=True, text=display(node)), node)
            if isinstance(base.type, t.TensorT):
                self.state.body.append(Store(base, parts, updated, span))
                self._record_writes(base.aliases, span, display(node), WriteKind.STORE)
            return
        if not isinstance(node.target, ast.Name):
            self.state.unsupported(span, display(node.target), refusals.ASSIGNING_ATTRIBUTE_CHANGES())
            raise _Abandon
        first_var = self.state.vars
        named = self.exprs.name(node.target)
        if isinstance(named, Poisoned):
            raise _Abandon
        current_atom = self.exprs.atom(named, node.target)
        other = self.exprs.atom(self.exprs.expr(node.value), node.value)
        if isinstance(current_atom.type, t.TensorT) and TENSOR_INPLACE.get(type(node.op)) is not None:
            # `x += y` on a tensor is Tensor.__iadd__: the same tensor, written in place.
            result = self.ops.operator(node.op, current_atom, other, span, in_place=True, text=display(node))
            self.state.body.append(Eval(result, span))
            return
        self.bind_name(node.target.id, self.ops.operator(node.op, current_atom, other, span, text=display(node)), first_var)

    def ret(self, node: ast.Return) -> None:
        span = Span.of(node)
        if self.state.inlining:
            # A helper's return hands its value back to the call being inlined.
            self.state.returned_value = Const(None, t.NONE, span) if node.value is None else self.exprs.expr(node.value)
            self.state.returned = True
            return
        declared = self.state.region.returns
        value: Expr | None = None
        if node.value is not None:
            value = self.exprs.atom(self.exprs.expr(node.value, top=True), node.value)
        self.state.returned = True
        if declared is None:
            return
        if isinstance(declared, t.NoneT):
            if value is not None and not isinstance(value.type, t.NoneT):
                self.state.type_problem(span, display(node), refusals.RETURNS_ANNOTATED_NONE(type=value.type))
                raise _Abandon
            self.state.body.append(Return(None, span))
            return
        if value is None:
            self.state.type_problem(span, display(node), refusals.RETURNS_NONE_ANNOTATED(declared=declared))
            raise _Abandon
        if (sequence := t.read_only(value.type)) is not None:
            self.state.type_problem(span, display(node), refusals.SEQUENCE_RETURNED(item=sequence.item))
            raise _Abandon
        mismatch = _assignable(value.type, declared)
        if mismatch is not None:
            self.state.type_problem(span, display(node),
                                    refusals.RETURNS_BOOL_AS_INT(type=value.type, declared=declared)
                                    if mismatch is Mismatch.BOOL_AS_INT else
                                    refusals.RETURNS_WHERE_WAS(type=value.type, declared=declared))
            raise _Abandon
        self.state.result_classes = tuple(self.exprs.classes_of(value, ()))
        self.state.body.append(Return(value, span))


# What a variable set to None one way and to a value the other may hold, as an optional the C++ carries (a
# tensor: BatchNorm's `self.running_mean if not self.training or self.track_running_stats else None`).
_OPTIONAL_SCALARS = (t.BOOL, t.INT, t.NUMBER, t.FLOAT, t.TENSOR)


def _tests_none(test: ast.expr) -> tuple[ast.Name | ast.Attribute, bool] | None:
    """(x, True) for `x is None`, (x, False) for `x is not None` (x a name or `self.<path>`): whether the test holding
    means None."""
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.left, (ast.Name, ast.Attribute)) and \
            isinstance(test.comparators[0], ast.Constant) and test.comparators[0].value is None and \
            isinstance(test.ops[0], (ast.Is, ast.IsNot)):
        return test.left, isinstance(test.ops[0], ast.Is)
    return None
