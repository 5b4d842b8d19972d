"""The shared state of one region's build: frames, the model being built, counters, problems.

Also the entry (``build``, ``stopped``) and what every part records through:
the problems (``unsupported``, ``type_problem``, ``capture``...), new
variables and ``let`` bindings, the step budget, and snapshot/rollback of a
tentative build. A new kind of finding the builder records goes here.
"""

from __future__ import annotations

import ast
import time
from typing import Any

from ppy_check import messages as m, reads
from ppy_check.classes import ClassModel, user_class
from ppy_check.messages import refusals
from ppy_check.model import budgets
from ppy_check.model import types as t
from ppy_check.model.assumptions import Assumption
from ppy_check.model.budgets import Budget, Exceeded
from ppy_check.model.builder.control import CLOCK_EVERY, _OutOfBudget
from ppy_check.model.builder.dialect import Dialect
from ppy_check.model.builder.facts import _carries_tensors
from ppy_check.model.builder.frame import Analysis, Frame
from ppy_check.model.builder.part import Part
from ppy_check.model.builder.tables import GRAD_DECORATORS
from ppy_check.model.builder.templates import _Template
from ppy_check.model.builder.text import _statement_text, _strip_dotted, display
from ppy_check.model.builder.values import POISON, Helper, Poisoned, UntypedParam, Value, _ValueT
from ppy_check.model.ir import (
    Expr,
    GradMode,
    InstanceReads,
    Let,
    Param,
    ParamInfo,
    Read,
    RegionModel,
    ResultClass,
    Span,
    Var,
    Write,
)
from ppy_check.model.problems import Capture, CaptureOrigin, OverBudget, Problems, Suggestion, TypeProblem, Unsupported
from ppy_check.region import Region
from ppy_check.schema import OpData, opdata
from ppy_check.scope import Rebinding


class BuildState(Part):
    """The shared state of one region's build, and what every part records through."""

    def __init__(self, region: Region, data: OpData | None = None, deadline: float | None = None):
        self.region = region
        self.deadline = deadline  # time.monotonic() past which the region is refused (ppy-check's file budget)
        self.steps = 0  # expressions evaluated, the inlined ones included (budgets.MAX_STEPS)
        # The statement of the region's own body being built, which a finding for the whole region names.
        self.at: ast.stmt | None = None
        # The items (nested ones counted) of each tuple type met, by identity; the type is kept so its id stays its own.
        self.leaves_of: dict[int, tuple[t.TupleT, int]] = {}
        self.scope = region.scope
        self.data = data or opdata()
        self.problems = Problems()
        self.writes: list[Write] = []
        self.body: list[Any] = []
        self.env: dict[str, Value] = {}
        self.vars = 0
        self.complete = True
        self.random = False
        self.natives: set[str] = set()
        # Sequences that are torch.Size in Python (`x.shape`, its slices and sums), and variables holding them.
        self.sizes: set[Expr] = set()
        self.size_vars: set[Var] = set()
        self.strided_vars: set[Var] = set()  # variables merged from two ways that each hold a strided tensor
        self.values: dict[Var, Expr] = {}  # each variable's value, to see what a returned variable holds
        self.result_classes: tuple[tuple[tuple[int, ...], ResultClass], ...] = ()
        self.branching = 0  # inside a run-time decision of torch's Python code (runtime_branch)
        self.raising = False  # this way of such a decision raises
        self.returned = False
        # Made where building starts (build), in the region's dialect.
        self.frame: Frame
        self.dependencies: dict[str, str] = {}  # other files the region reached: path -> sha256
        # The names from outside the body the model took as fixed, by (namespace, name): what the runtime proves.
        self.assumptions: dict[tuple[str, str], Assumption] = {}
        self.anchor: Span | None = None  # the call in the region's file that reached another file
        self.inlining: list[ast.AST] = []  # the helpers being inlined, outermost first (recursion is refused)
        self.returned_value: Value | None = None
        self.callees: list[tuple[Region, str, Span | None]] = []
        # Each (helper, how it was reached, anchor) once: a helper called on many paths is checked once per path.
        self.callees_seen: set[tuple[int, str, Span | None]] = set()
        self.callees_reached: list[tuple[Region, str, Span | None]] = []
        # The `if`s and conditional expressions of helpers that picked their way here, their test known (by node,
        # the helper's reach and anchor), and those built as branches: a test known on one call of a helper and not
        # on another of the same reach (`f(x, True) + f(x, flag)` on one line) is a branch.
        self.decided: list[tuple[int, str, Span | None]] = []
        self.branched: set[tuple[int, str, Span | None]] = set()
        # A helper's model, by what it depends on (template_key), and the helpers each inlining reached.
        self.templates: dict[tuple[Any, ...], _Template] = {}
        self.inlined: list[int] = []
        # Sequences known to be lists or tuples (by identity; the value is kept so its id stays its own), for the
        # `isinstance(x, list)` tests of torch's Python code.
        self.sequence_kinds: dict[int, tuple[Expr, str]] = {}
        # Generator expressions of torch's Python code consumed where they stand (`all(d >= 0 for d in shape)`),
        # and by what: only those are modelled, as the tuple of their items.
        self.consumed: dict[int, str] = {}
        # A method region's inputs read through its instance, by path (`self.attn.c_proj.weight`), in order, and
        # the class each object reached through it was read as (`self.attn` -> Attention).
        self.attributes: dict[str, Param] = {}
        self.module_classes: dict[str, ClassModel] = {}
        self.container_lengths: dict[str, int] = {}  # a container's path -> the item count the build used
        # (path, name) of each method run on the region's instance or an object reached through it (InstanceReads).
        self.methods_run: set[tuple[str, str]] = set()
        # On a way of a run-time decision that proved an optional input not None (`self.momentum is None`): its value.
        self.narrowed_attributes: dict[str, Expr] = {}

    def release(self) -> None:
        """Break the cycles between the parts (each holds every other), so that a build dies by reference
        counting: the runner calls the cyclic collector rarely (runner.GC_THRESHOLD)."""
        for part in (self.stmts, self.exprs, self.members, self.ops, self.calls, self.host_math, self.inliner, self.einops_lowering, self.modules, self.region_dialect, self.library_dialect, self):
            part.disconnect()

    def dialect_for(self, helper: Helper) -> Dialect:
        """The dialect a helper's body is written in: torch's own source, or the user's."""
        return self.library_dialect if helper.library else self.region_dialect

    def mark(self, value: _ValueT, kind: str | None) -> _ValueT:
        """Record that ``value`` is a list or a tuple (``kind``), when known."""
        if kind is not None and isinstance(value, Expr) and isinstance(value.type, (t.TupleT, t.SeqT)):
            self.sequence_kinds[id(value)] = (value, kind)
        return value

    def kind_of(self, value: Value) -> str | None:
        found = self.sequence_kinds.get(id(value))
        return found[1] if found is not None and found[0] is value else None

    # --- entry -------------------------------------------------------------------

    def build(self) -> Analysis:
        region = self.region
        self.frame = Frame(region.locals, region.enclosing, "", region.node, region.scope, region.site.path,
                           self.region_dialect)
        params = []
        if region.self_name is not None and region.owner is not None:
            self.env[region.self_name] = self.modules.instance(user_class(region.owner, region.scope, region.site.path),
                                                               region.self_name)
        for index, param in enumerate(region.params):
            if param.type is None:
                self.complete = False
                self.env[param.name] = UntypedParam(param.name)
                continue
            aliases = frozenset({param.name}) if _carries_tensors(param.type) else frozenset()
            value = Param(param.name, index, param.type, Span.of(param.node), aliases)
            self.env[param.name] = value
            if isinstance(param.type, t.SeqT) and param.type.passed == "size":
                self.sizes.add(value)  # Python's value is a torch.Size, as `x.shape` is
            params.append(ParamInfo(param.name, param.type, param.node in region.node.args.kwonlyargs))
        if region.returns is None or any(p.type is None for p in region.params):
            self.complete = False
        if region.node.args.vararg or region.node.args.kwarg or region.decorator_problems:
            self.complete = False
        grad_mode = self._grad_mode()
        self.stmts.statements(region.node.body)
        returns = region.returns if region.returns is not None else t.NONE
        if self.complete and not self.returned and not isinstance(returns, t.NoneT):
            self.type_problem(Span.of(region.node), region.name,
                              refusals.ENDS_WITHOUT_RETURN(returns=returns))
        decided = frozenset(self.decided) - self.branched
        if not self.complete or self.problems:
            return Analysis(None, self.problems, self.writes, self.callees, decided)
        instance = None
        if region.self_name is not None:
            # The entry takes every input positionally: the region's parameters, then what it reads through `self`.
            params = [ParamInfo(p.name, p.type, False) for p in params] + \
                [ParamInfo(path, read.type, False) for path, read in self.attributes.items()]
            prefix = len(region.self_name) + 1
            instance = InstanceReads(tuple((path[prefix:], read.type) for path, read in self.attributes.items()),
                                     tuple((path[prefix:], cls.guard(region.site.path))
                                           for path, cls in self.module_classes.items()),
                                     tuple(sorted((path[prefix:], name) for path, name in self.methods_run)),
                                     tuple((path[prefix:], count) for path, count in self.container_lengths.items()))
        model = RegionModel(region.site, region.name, tuple(params), returns, region.pure, region.level, grad_mode,
                            self.body, self.writes, self.random, self.natives, self.dependencies, self.result_classes,
                            tuple(self.assumptions.values()), instance)
        return Analysis(model, self.problems, self.writes, self.callees, decided)

    def stopped(self, exceeded: Exceeded | None, error: str = "") -> Analysis:
        """The region's analysis when building stopped part way: one finding, at the statement of the region's body
        it had reached. What was recorded before is dropped: part of it may be tentative, taken back only by the
        steps the stop cut short; the helpers reached so far still have their syntax checked."""
        statement = self.at if self.at is not None else self.region.node
        problems = Problems()
        problems.budgets.append(OverBudget(Span.of(statement), _statement_text(statement), exceeded, error=error))
        return Analysis(None, problems, [], self.callees)

    def _grad_mode(self) -> GradMode:
        """A grad-mode decorator under ppy's is understood; any other decorator there is refused."""
        mode = GradMode.INHERIT
        inside = False
        for decorator in self.region.node.decorator_list:
            func = decorator.func if isinstance(decorator, ast.Call) else decorator
            target = self.scope.resolve(func)
            if target in ("ppy.opt", "ppy.pure"):
                inside = True
                continue
            if not inside:
                continue  # above ppy's decorators: it wraps the region object, which is fine
            target = _strip_dotted(target or "")
            if target in GRAD_DECORATORS and isinstance(decorator, ast.Call) and not decorator.args and not decorator.keywords:
                mode = GRAD_DECORATORS[target]
                continue
            self.unsupported(Span.of(decorator), display(decorator),
                             refusals.DECORATOR_UNDER_PPY())
        return mode

    # --- problems ----------------------------------------------------------------------

    def _span(self, span: Span) -> Span:
        # Inside a helper of another file (or torch's Python code), a finding stands at the call in the region's file.
        return self.anchor or span

    def _library_subject(self, name: str, why: m.Message) -> tuple[str, m.Message]:
        return self.frame.dialect.subject(name, why)

    def unsupported(self, span: Span, name: str, why: m.Message, attribute: bool = False) -> Poisoned:
        name, why = self._library_subject(name, why)
        self.problems.unsupported.append(Unsupported(self._span(span), name, why, attribute, self.frame.context))
        self.complete = False
        self.frame.dialect.refused()
        return POISON

    def type_problem(self, span: Span, subject: str, why: m.Message, fix: Suggestion | None = None) -> Poisoned:
        subject, why = self._library_subject(subject, why)
        self.problems.types.append(TypeProblem(self._span(span), subject, why, self.frame.context, fix))
        self.complete = False
        self.frame.dialect.refused()
        return POISON

    def over_budget(self, span: Span, subject: str, exceeded: Exceeded) -> Poisoned:
        """A value too large to fold where the region is built: a finding, as `unsupported` records one."""
        subject = self.frame.dialect.budget_subject(subject)
        self.problems.budgets.append(OverBudget(self._span(span), subject, exceeded, self.frame.context))
        self.complete = False
        self.frame.dialect.refused()
        return POISON

    def _uncalled(self, node: ast.Call) -> Suggestion | None:
        """`x.mT()` as `x.mT`, in the region's own code: unsafe, since the call raises a TypeError where
        the attribute does not."""
        if self.frame.context or not self.frame.dialect.offers_fixes or self.anchor is not None or node.args or node.keywords:
            return None
        func = Span.of(node.func)
        called = Span.of(node)
        return Suggestion(Span(func.end_line, func.end_column, called.end_line, called.end_column), "",
                          m.FIX_REMOVE_CALL, safe=False)

    def capture(self, span: Span, name: str, origin: CaptureOrigin, detail: str) -> Poisoned:
        return self.frame.dialect.capture(span, name, origin, detail)

    def rebound_capture(self, span: Span, name: str, rebinding: Rebinding) -> Poisoned:
        """A module-level name the module rebinds behind its assignments (or may, by a star import)."""
        self.problems.captures.append(Capture(self._span(span), name, CaptureOrigin.REBOUND, str(rebinding.line),
                                              self.frame.context, rebinding.how, rebinding.star))
        self.complete = False
        return POISON

    def structural(self, node: ast.AST) -> None:
        """A construct the loop, branch or syntax rule reports from the syntax (of the region or a helper it calls)."""
        self.frame.dialect.structural(node)
        self.problems.structural.append(Span.of(node))
        self.branched.add((id(node), self.frame.context, self.frame.anchor))
        self.complete = False

    def snapshot(self) -> tuple[int, int, int, int, int, bool]:
        """Where the model stands, to take back what a tentative step recorded (rollback)."""
        return (len(self.body), len(self.problems.unsupported), len(self.problems.types), len(self.problems.captures),
                len(self.writes), self.complete)

    def rollback(self, saved: tuple[int, int, int, int, int, bool]) -> None:
        del self.body[saved[0]:]
        del self.problems.unsupported[saved[1]:]
        del self.problems.types[saved[2]:]
        del self.problems.captures[saved[3]:]
        del self.writes[saved[4]:]
        self.complete = saved[5]

    def new_var(self, name: str, kind: t.Type) -> Var:
        self.vars += 1
        return Var(name, self.vars, kind)

    def let(self, value: Expr, name: str = "") -> Read:
        var = self.new_var(name, value.type)
        self.body.append(Let(var, value, value.span))
        self.values[var] = value
        if self.exprs.is_size(value):
            self.size_vars.add(var)
        return Read(var, value.type, value.span, value.aliases)

    def count_step(self) -> None:
        """One more expression evaluated: the region's step budget, and now and then the clock."""
        self.steps += 1
        if self.steps > budgets.MAX_STEPS:
            raise _OutOfBudget(Exceeded(Budget.STEPS, budgets.MAX_STEPS))
        if self.deadline is not None and self.steps % CLOCK_EVERY == 0 and time.monotonic() > self.deadline:
            reads.unrepeatable()  # a finding of the clock's: another run may finish
            raise _OutOfBudget(Exceeded(Budget.TIME, budgets.file_seconds()))

    def leaves(self, kind: t.TupleT) -> int:
        """How many items a tuple of this type holds, nested tuples' items counted (each shared type once)."""
        known = self.leaves_of.get(id(kind))
        if known is not None and known[0] is kind:
            return known[1]
        count = sum(self.leaves(item) if isinstance(item, t.TupleT) else 1 for item in kind.items)
        self.leaves_of[id(kind)] = (kind, count)
        return count
