"""Inlining helpers and regions a region calls, and reusing a helper's model as a template."""

from __future__ import annotations

import ast
from typing import Any

from ppy_check import messages as m
from ppy_check.messages import refusals
from ppy_check.model import types as t
from ppy_check.model.bind import Argument
from ppy_check.model.builder.control import LIBRARY_REENTRY, _LibraryRefused
from ppy_check.model.builder.facts import _is_constant_expression
from ppy_check.model.builder.frame import Frame
from ppy_check.model.builder.part import Part
from ppy_check.model.builder.templates import _Cloner, _count_statements, _Template, _TemplateStart
from ppy_check.model.builder.text import display
from ppy_check.model.builder.values import POISON, Helper, Value, _is_expr
from ppy_check.model.ir import Const, Expr, MakeTuple, Span
from ppy_check.region import Region, describe_function, function_locals


class Inliner(Part):
    """Helpers inlined, and their templates."""

    def inline(self, helper: Helper, args: list[Argument], keywords: dict[str, Expr], span: Span,
               shown: str, receiver: tuple[str, Value] | None = None) -> Value:
        """A call of a helper or of another region: its body runs here, on the arguments as they are.

        Everything a region reaches is straight-line, so the helper's body is
        interpreted like the region's own: its parameters take the types of the
        arguments (annotations or none), findings inside it point at its lines
        and say how the region got there.
        """
        node = helper.node
        depth = sum(n is node for n in self.state.inlining)
        if node is self.state.region.node or (depth and not (helper.library and depth < LIBRARY_REENTRY)):
            return self.state.type_problem(span, shown, refusals.CALLS_ITSELF_RECURSION(node_name=node.name))
        for decorator in [] if helper.library else node.decorator_list:
            func = decorator.func if isinstance(decorator, ast.Call) else decorator
            if helper.scope.resolve(func) not in ("ppy.opt", "ppy.pure", "builtins.staticmethod"):
                return self.state.unsupported(span, shown,
                                        refusals.DECORATED_PPY_CANNOT(node_name=node.name, decorator=display(decorator)))
        if node.args.kwarg is not None and not helper.library:
            return self.state.unsupported(span, shown,
                                    refusals.DECORATED_PPY_CANNOT_2(node_name=node.name, node_args_kwarg_arg=node.args.kwarg.arg))
        if helper.enclosing is not None and helper.enclosing is not self.state.frame.node:
            return self.state.unsupported(span, self.state.frame.called_as or shown,
                                    refusals.LIBRARY_CALLS_FUNCTION(node_name=node.name))
        for default in node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
            from ppy_check.scope import is_literal

            if not is_literal(default) and not (helper.library and _is_constant_expression(default)):
                return self.state.unsupported(span, shown,
                                        refusals.DEFAULT_LITERAL(node_name=node.name, default=display(default)))
        spec = node.args if receiver is None else _after_instance(node.args)
        bound = self.calls.bind_signature(spec, args, keywords, span, shown, helper.scope if helper.library else None)
        if receiver is not None:
            # A method's instance (`self` of a module region) is bound as it is: a path, not a value.
            bound = {receiver[0]: receiver[1], **bound}

        if helper.library:
            step = m.message(m.IN_TORCH, name=node.name)
        elif helper.path != self.state.region.site.path:
            step = m.message(m.IN_HELPER_OF_FILE, name=node.name, path=helper.path, line=span.line)
        else:
            step = m.message(m.IN_HELPER_CALLED, name=node.name, line=span.line)
        chain = step.render() if helper.library or not self.state.frame.context else \
            m.message(m.HELPER_CHAIN, step=step, outer=self.state.frame.context).render()
        key = self.template_key(helper, bound)
        template = self.state.templates.get(key) if key is not None else None
        if template is not None and template.reached.isdisjoint(id(n) for n in self.state.inlining):
            return self.instantiate(template, bound, chain)
        start = _TemplateStart(len(self.state.body), self.state.vars, self.state.snapshot(), len(self.state.problems.structural),
                               len(self.state.problems.branches), len(self.state.problems.budgets), len(self.state.callees_reached),
                               set(self.state.natives), len(self.state.sequence_kinds), set(self.state.sizes), len(self.state.inlined),
                               len(self.state.decided))
        anchor = self.state.anchor or span if helper.path != self.state.region.site.path else None
        if not helper.library:
            self.add_callee(describe_function(node, helper.scope, helper.path), chain, anchor)
        self.state.inlined.append(id(node))
        saved: tuple[Any, Frame, Any, Any, Any] = (self.state.env, self.state.frame, self.state.returned, self.state.returned_value, self.state.anchor)
        # A nested function reads its enclosing function's names as they are now, at the call (Python's cells).
        self.state.env = {**{name: self.state.env[name] for name in sorted(helper.closure) if name in self.state.env}, **bound}
        called_as = (self.state.frame.called_as or shown) if helper.library else ""
        self.state.frame = Frame(function_locals(node), [], chain, node, helper.scope, helper.path, self.state.dialect_for(helper),
                           called_as, anchor=anchor)
        if helper.path != self.state.region.site.path and self.state.anchor is None:
            self.state.anchor = span
        self.state.returned, self.state.returned_value = False, None
        self.state.inlining.append(node)
        outermost_library = helper.library and saved[1].dialect is not self.library_dialect
        try:
            self.stmts.statements(node.body)
            value: Value = self.state.returned_value if self.state.returned_value is not None else Const(None, t.NONE, span)
        except _LibraryRefused:
            if not outermost_library:
                raise
            value = POISON
        finally:
            self.state.inlining.pop()
            self.state.env, self.state.frame, self.state.returned, self.state.returned_value, self.state.anchor = saved
        if key is not None and _is_expr(value):
            self.remember(key, start, bound, value, chain)
        return value

    # --- the model of a helper, built once per arguments ----------------------------------------------------------

    def add_callee(self, callee: Region, chain: str, anchor: Span | None) -> None:
        """A helper the structural rules check, once per (helper, how it was reached, anchor)."""
        self.state.callees_reached.append((callee, chain, anchor))  # every one, for the templates that reach it again
        if (id(callee.node), chain, anchor) not in self.state.callees_seen:
            self.state.callees_seen.add((id(callee.node), chain, anchor))
            self.state.callees.append((callee, chain, anchor))

    def template_key(self, helper: Helper, bound: dict[str, Value]) -> tuple[Any, ...] | None:
        """What a helper's model depends on beyond its own code: the bound arguments' types, literal values,
        aliases and kinds, and which of them are one object; None where the model is not reused (torch's code,
        whose folding reads more of the caller; a helper of another file reached from the region's, whose
        findings and writes stand at each call)."""
        if helper.library or not self.state.frame.dialect.reuses_templates or self.state.branching or helper.enclosing is not None or \
                helper.path != self.state.region.site.path and self.state.anchor is None:
            return None
        leaves: list[Expr] = []
        signature = []
        for name, value in bound.items():
            if not _is_expr(value):
                return None
            shape = self.argument_signature(value, leaves)
            if shape is None:
                return None
            signature.append((name, shape))
        first: dict[int, int] = {}
        same = tuple(first.setdefault(id(leaf), index) for index, leaf in enumerate(leaves))
        return (id(helper.node), tuple(signature), same, self.state.anchor)

    def argument_signature(self, value: Expr, leaves: list[Expr]) -> tuple[Any, ...] | None:
        leaves.append(value)
        if isinstance(value, MakeTuple):
            items = []
            for item in value.items:
                shape = self.argument_signature(item, leaves)
                if shape is None:
                    return None
                items.append(shape)
            return ("tuple", value.type, tuple(items), self.state.kind_of(value), value.aliases)
        literal: Any = None
        if isinstance(value, Const):
            literal = (type(value.value), repr(value.value) if isinstance(value.value, float) else value.value)
            try:
                hash(literal)
            except TypeError:
                return None
        return (type(value).__name__, value.type, literal, value.aliases, self.members.strided(value), self.exprs.is_size(value),
                self.state.kind_of(value))

    def remember(self, key: tuple[Any, ...], start: _TemplateStart, bound: dict[str, Value], value: Expr,
                 chain: str) -> None:
        """Keep a helper's model, built without a problem, for its next call with the same kinds of arguments."""
        saved = start.snapshot
        if (len(self.state.problems.unsupported), len(self.state.problems.types), len(self.state.problems.captures)) != saved[1:4] or \
                (len(self.state.problems.structural), len(self.state.problems.branches), len(self.state.problems.budgets)) != \
                (start.structural, start.branches, start.budgets) or not self.state.complete:
            return
        leaves: list[Expr] = []
        for argument in bound.values():
            assert _is_expr(argument)  # template_key gave the key only to arguments that all are
            self.argument_signature(argument, leaves)
        body = tuple(self.state.body[start.body:])
        self.state.templates[key] = _Template(
            tuple(leaves), body, value, start.vars, self.state.vars, tuple(self.state.writes[saved[4]:]),
            tuple(self.state.callees_reached[start.callees:]), chain, frozenset(self.state.natives - start.natives), self.state.random,
            tuple(self.state.sizes - start.sizes), tuple(list(self.state.sequence_kinds.values())[start.kinds:]),
            frozenset(self.state.inlined[start.inlined:]), _count_statements(body) + len(self.state.callees_reached) - start.callees,
            tuple(self.state.decided[start.decided:]))

    def instantiate(self, template: _Template, bound: dict[str, Value], chain: str) -> Expr:
        """A helper's model built before, for these arguments: its statements again, on these arguments' values,
        with variables of their own (as inlining would make them, without interpreting the helper again)."""
        self.state.steps += template.statements
        self.state.count_step()
        leaves: list[Expr] = []
        for argument in bound.values():
            assert _is_expr(argument)  # the template's key (template_key) was found only for such arguments
            self.argument_signature(argument, leaves)
        mapping: dict[int, Any] = {id(old): new for old, new in zip(template.leaves, leaves)}
        cloner = _Cloner(mapping, template.first_var, template.last_var, self.state.new_var)
        for statement in template.body:
            copy = cloner.clone(statement)
            self.state.body.append(copy)
        for old_var, new_var in cloner.vars.items():
            old = self.state.values.get(old_var)
            if old is not None:
                self.state.values[new_var] = cloner.clone(old)
            if old_var in self.state.size_vars:
                self.state.size_vars.add(new_var)
            if old_var in self.state.strided_vars:
                self.state.strided_vars.add(new_var)
        self.state.writes.extend(template.writes)
        for callee, callee_chain, anchor in template.callees:
            self.add_callee(callee, callee_chain[:len(callee_chain) - len(template.chain)] + chain, anchor)
        for decided, decided_chain, anchor in template.decided:
            self.state.decided.append((decided, decided_chain[:len(decided_chain) - len(template.chain)] + chain, anchor))
        self.state.natives |= template.natives
        self.state.random = self.state.random or template.random
        self.state.sizes.update(cloner.clone(size) for size in template.sizes)
        for marked, kind in template.kinds:
            self.state.mark(cloner.clone(marked), kind)
        self.state.inlined.extend(template.reached)
        # The cloner copies any model node, so it is untyped; a copy of an Expr is an Expr.
        value: Expr = cloner.clone(template.value)
        return value


def _after_instance(spec: ast.arguments) -> ast.arguments:
    """A method's parameters after its instance, which the caller binds itself."""
    if spec.posonlyargs:
        return ast.arguments(spec.posonlyargs[1:], spec.args, spec.vararg, spec.kwonlyargs, spec.kw_defaults, spec.kwarg,
                             spec.defaults)
    return ast.arguments([], spec.args[1:], spec.vararg, spec.kwonlyargs, spec.kw_defaults, spec.kwarg, spec.defaults)
