"""Print a region model as C++: one function of ``at::_ops`` calls, and its CPython entry point.

Nothing here decides what a region means; the model already holds every
resolved overload, type, temporary and effect. Each expression becomes the
C++ that computes it, each statement one line, calls through
``at::_ops::<overload>::call`` (the dispatcher entry for exactly the
overload the model chose, so C++ overload resolution never picks another).
"""

from __future__ import annotations

import keyword
from typing import TypeGuard
from dataclasses import dataclass, field

from ppy_check.model import types as t
from ppy_check.model.ir import (
    IndexPart,
    Assertion, Branch, Call, Const, DtypeName, EnumName, Eval, ExpectLength, Expr, GradMode, Host, HostOp, IndexList, IsNone, Item,
    PythonException, Require, Length, Let, MakeSeq, MakeTuple, NoneRun, Param, Query, Read, RegionModel, Return, SeqIndex, SeqSlice, ShownSeq,
    SliceIndex, Span,
    Stmt, Store, TensorIndex, TensorQuery, Unwrap, Var, VariableData,
)
from ppy_check.model.constants import PYTHON_TYPE_DTYPES
from ppy_check.schema import Base, BaseType, ListType, Native, OptionalType, SchemaArg, SchemaType
from ppy_compile import cpp_files
from ppy_compile.options import BuildOptions, Mutation
from ppy_compile.cpp_types import (
    argument, convert, cpp_type, float_literal, int_literal, param_type, scalar, std_string,
    string_literal, takes_optional_tensors, to_double,
)


_RESERVED = frozenset(
    "alignas alignof and and_eq asm auto bitand bitor bool break case catch char class compl const constexpr "
    "const_cast continue decltype default delete do double dynamic_cast else enum explicit export extern false "
    "float for friend goto if inline int long mutable namespace new noexcept not not_eq nullptr operator or "
    "or_eq private protected public register reinterpret_cast return short signed sizeof static static_assert "
    "static_cast struct switch template this thread_local throw true try typedef typeid typename union unsigned "
    "using virtual void volatile wchar_t while xor xor_eq at std c10 torch ppy char8_t char16_t char32_t concept "
    "consteval constinit co_await co_return co_yield requires int64_t".split()
)


def identifier(name: str) -> str:
    """A Python name as a C++ identifier no keyword, macro-ish name or ppy temporary can collide with."""
    if name in _RESERVED or name.startswith(("ppy_", "_")) or keyword.iskeyword(name) or not name.isascii() \
            or not name.isidentifier():  # an attribute input is named by its path (`self.fc.weight`)
        return "u_" + "".join(c if c.isalnum() or c == "_" else f"_{ord(c):x}_" for c in name)
    return name


@dataclass
class _Names:
    used: dict[int, str] = field(default_factory=dict)
    taken: set[str] = field(default_factory=set)

    def var(self, var: Var) -> str:
        found = self.used.get(var.index)
        if found is None:
            base = identifier(var.name) if var.name else f"ppy_t{var.index}"
            found, suffix = base, 2
            while found in self.taken:
                found, suffix = f"{base}_{suffix}", suffix + 1
            self.used[var.index] = found
            self.taken.add(found)
        return found


def _empty_extreme_message(name: str) -> str:
    """What this Python's ``min()`` or ``max()`` of an empty sequence says (3.11's differs from 3.12's)."""
    try:
        (min if name == "min" else max)(())
    except ValueError as error:
        return str(error)
    raise AssertionError(name)  # an empty sequence always raises


_HOST_FUNCTIONS = {
    HostOp.ADD: "ppy::py_add", HostOp.SUB: "ppy::py_sub", HostOp.MUL: "ppy::py_mul", HostOp.TRUEDIV: "ppy::py_truediv",
    HostOp.FLOORDIV: "ppy::py_floordiv", HostOp.MOD: "ppy::py_mod", HostOp.POW: "ppy::py_pow",
    HostOp.LSHIFT: "ppy::py_lshift", HostOp.RSHIFT: "ppy::py_rshift", HostOp.BITAND: "ppy::py_and",
    HostOp.BITOR: "ppy::py_or", HostOp.BITXOR: "ppy::py_xor", HostOp.NEG: "ppy::py_neg", HostOp.POS: "ppy::py_pos",
    HostOp.INVERT: "ppy::py_invert", HostOp.ABS: "ppy::py_abs", HostOp.MIN: "ppy::py_min", HostOp.MAX: "ppy::py_max",
    HostOp.ROUND: "ppy::py_round", HostOp.ROUND_DIGITS: "ppy::py_round_digits", HostOp.TO_INT: "ppy::py_int",
}
_COMPARISONS = {HostOp.EQ: "==", HostOp.NE: "!=", HostOp.LT: "<", HostOp.LE: "<=", HostOp.GT: ">", HostOp.GE: ">="}


class Printer:
    """Prints one region model; every choice it makes is about spelling, never about meaning."""

    def __init__(self, model: RegionModel, symbol: str, options: BuildOptions):
        self.model = model
        self.symbol = symbol
        self.options = options
        self.names = _Names()
        self.params = {p.name: identifier(p.name) for p in model.params}
        self.names.taken.update(self.params.values())
        self.lines: list[str] = []
        # The region's source line (absolute) each of ``lines`` was printed for, None for the `ppy_line`
        # bookkeeping: what `ppy show --annotate` puts beside each Python line (the C++ is not changed by it).
        self.line_sources: list[int | None] = []
        self._annotated_line = model.site.line
        self.headers: set[str] = set()
        self.lvalues = 0
        self.depth = 0  # blocks of a run-time decision of torch's Python code (Branch) the printer is inside
        self.line_now = 1  # relative: the region's first line
        # The region's own lines, from its `def` to its return. A statement inlined from a helper or from
        # torch's Python source carries that code's span, no line of the region's: its traceback frame
        # is left out (line 0) rather than put on a wrong line.
        last = max((s.span.end_line for s in model.body if isinstance(s, Return)), default=model.site.line)
        self.own_lines = range(model.site.line, last + 1)

    # --- the function ----------------------------------------------------------------

    def signature(self) -> str:
        declared = ", ".join(f"{param_type(p.type)} {self.params[p.name]}" for p in self.model.params)
        return f"{cpp_type(self.model.returns)} {self.symbol}({declared})"

    def function(self) -> str:
        """The region's C++ function."""
        mode = self.model.grad_mode
        if mode is GradMode.NO_GRAD:
            self.emit("at::AutoGradMode ppy_grad_mode(false);", None)
        elif mode is GradMode.ENABLE_GRAD:
            self.emit("at::AutoGradMode ppy_grad_mode(true);", None)
        elif mode is GradMode.INFERENCE:
            self.emit("c10::InferenceMode ppy_inference_mode;", None)
        for statement in self.model.body:
            self.statement(statement)
        body = "".join(f"        {line}\n" for line in self.lines)
        # `ppy_line`: the region's source line now running, read only when a statement raises (the traceback);
        # counted from the region's first line (1), so a region that only moved prints the same C++.
        return (f"{self.signature()} {{\n    int ppy_line = 1;\n    try {{\n{body}"
                "    } catch (...) { ppy::failed_at(ppy_line); throw; }\n}\n")

    def emit(self, line: str, span: Span | None) -> None:
        source_line = (span.line - self.model.site.line + 1 if span.line in self.own_lines else 0) \
            if span is not None else self.line_now
        if span is not None and span.line in self.own_lines:
            self._annotated_line = span.line  # code inlined from a helper stays beside the region's line that called it
        if source_line != self.line_now:
            self.lines.append("    " * self.depth + f"ppy_line = {source_line};")
            self.line_sources.append(None)
            self.line_now = source_line
        self.lines.append("    " * self.depth + line)
        self.line_sources.append(self._annotated_line)

    def annotated(self) -> list[tuple[int, list[str]]]:
        """After ``function``: each of the region's own source lines (absolute), with the C++ statements printed
        for it, in source order; a line that printed nothing has an empty list."""
        by_line: dict[int, list[str]] = {line: [] for line in self.own_lines}
        for cpp, source in zip(self.lines, self.line_sources):
            if source is not None:
                by_line.setdefault(source, []).append(cpp)
        return sorted(by_line.items())

    def statement(self, statement: Stmt) -> None:
        span = statement.span
        if isinstance(statement, Let):
            if self._dropped(statement.value):
                self.emit(f"{cpp_type(statement.var.type)} {self.names.var(statement.var)} = "
                          f"{self.expr(self._written_arg(statement.value))};", span)
                return
            self.emit(f"{cpp_type(statement.var.type)} {self.names.var(statement.var)} = {self.expr(statement.value)};", span)
        elif isinstance(statement, Eval):
            if self._dropped(statement.value):
                return
            self.emit(f"(void){self.expr(statement.value)};", span)
        elif isinstance(statement, Store):
            target = self.lvalue(statement.target, span)
            value = statement.value
            stored = self.expr(value) if isinstance(value.type, t.TensorT) else scalar(self.expr(value), value.type)
            self.headers.add(cpp_files.INDEXING)
            if self.options.mutation is Mutation.DROP_WRITES:
                return
            steps = self.zero_steps(statement.parts)
            if steps:
                self.emit(f"ppy::check_steps({target}, {self.index_list(statement.parts)}, {steps});", span)
            self.emit(f"{target}.index_put_({self.index_list(statement.parts)}, {stored});", span)
        elif isinstance(statement, ExpectLength):
            self.emit(f"ppy::expect_length({self.expr(statement.base)}, {statement.count}, "
                      f"{'true' if statement.at_least else 'false'});", span)
        elif isinstance(statement, Branch):
            for var, _, _ in statement.merged:
                if not isinstance(var.type, t.NoneT):  # None on every way that returns: no value to hold (see expr)
                    # ppy::blank, not `{}`: an at::Device (or a tuple holding one) has no default constructor.
                    declared = cpp_type(var.type)
                    self.emit(f"{declared} {self.names.var(var)} = ppy::blank<{declared}>();", span)
            self.emit(f"if ({self.expr(statement.test)}) {{", span)
            self.block(statement.then_body, [(var, value) for var, value, _ in statement.merged])
            self.emit("} else {", span)
            self.block(statement.else_body, [(var, value) for var, _, value in statement.merged])
            self.emit("}", span)
        elif isinstance(statement, Assertion):
            # Python skips an assert under `python -O`, its test too: the flag the module read when it was loaded.
            self.emit("if (!ppy::asserts_skipped) {", span)
            self.block(statement.body, [])
            self.emit("}", span)
        elif isinstance(statement, Require):
            self.emit(f"if (!({self.expr(statement.holds)})) ppy::raise({self.exception(statement.error)}, "
                      f"{self.message(statement.message)});", span)
        elif isinstance(statement, Return):
            if statement.value is None:
                self.emit("return;", span)
                return
            returned = self.returned(statement.value, self.model.returns)
            self.emit(f"return {returned};", span)

    def exception(self, error: PythonException) -> str:
        """The class a failed check raises: Python's builtin, or einops's, which its header finds."""
        if error.builtin:
            return f"PyExc_{error.value}"
        self.headers.add(cpp_files.EINOPS)
        return "ppy::einops_error()"

    def message(self, pieces: tuple[str | Expr | ShownSeq, ...]) -> str:
        """A raise's message: literal text joined, run-time values formatted as Python's str() does."""
        if all(isinstance(piece, str) for piece in pieces):
            return string_literal("".join(piece for piece in pieces if isinstance(piece, str)))
        parts = []
        for piece in pieces:
            if isinstance(piece, str):
                parts.append(std_string(piece))
            elif isinstance(piece, ShownSeq):
                parts.append(f"ppy::seq_str({self.expr(piece.value)}, {string_literal(piece.opening)}, "
                             f"{string_literal(piece.closing)}, {'true' if piece.tuple_comma else 'false'})")
            elif isinstance(piece.type, t.StrT):
                parts.append(f"::std::string({self.expr(piece)})")
            else:  # cast, so that the overload is the one of the value's Python type
                parts.append(f"ppy::shown(static_cast<{cpp_type(piece.type)}>({self.expr(piece)}))")
        return " + ".join(parts)

    def block(self, body: tuple[Stmt, ...], assigned: list[tuple[Var, Expr | None]]) -> None:
        """One way of a Branch: its statements, then each merged variable's value on this way (none if it raises)."""
        self.depth += 1
        self.line_now = -1  # the line stored before it is one way's, not the other's: store afresh
        for statement in body:
            self.statement(statement)
        for var, value in assigned:
            if value is not None and not isinstance(var.type, t.NoneT):
                self.emit(f"{self.names.var(var)} = {self.value_as(value, var.type)};", value.span)
        self.depth -= 1
        self.line_now = -1

    def _dropped(self, value: Expr) -> TypeGuard[Call]:
        return self.options.mutation is Mutation.DROP_WRITES and isinstance(value, Call) and value.native.writes

    def _written_arg(self, call: Call) -> Expr:
        written = next(arg for arg in call.native.args if arg.is_write)
        value = dict(call.args)[written.name]
        assert value is not None
        return value

    def returned(self, value: Expr, declared: t.Type) -> str:
        code = self.value_as(value, declared)
        if self.options.mutation is Mutation.DETACH and isinstance(declared, t.TensorT):
            return f"({code}).detach()"
        return code

    def value_as(self, value: Expr, target: t.Type) -> str:
        """A value spelled as the C++ type of ``target`` (tuples and sequences item by item)."""
        if isinstance(target, t.TupleT) and isinstance(value, MakeTuple):
            items = ", ".join(self.value_as(i, k) for i, k in zip(value.items, target.items))
            return f"{cpp_type(target)}({items})"
        if isinstance(target, t.SeqT) and isinstance(value, (MakeTuple, MakeSeq)):
            return self.vector(value, target.item)
        if isinstance(target, t.OptionalT) and not isinstance(value.type, (t.OptionalT, t.NoneT)):
            return f"{cpp_type(target)}({self.value_as(value, target.inner)})"
        return convert(self.expr(value), value.type, target)

    # --- expressions ---------------------------------------------------------------------

    def expr(self, value: Expr) -> str:
        if isinstance(value, Const):
            return self.constant(value)
        if isinstance(value, Param):
            return self.params[value.name]
        if isinstance(value, Read):
            if isinstance(value.var.type, t.NoneT):
                return "::std::nullopt"  # a variable that can only be None is declared nowhere (see Branch)
            return self.names.var(value.var)
        if isinstance(value, Call):
            return self.call(value)
        if isinstance(value, Host):
            return self.host(value)
        if isinstance(value, MakeTuple):
            return f"{cpp_type(value.type)}({', '.join(self.expr(i) for i in value.items)})"
        if isinstance(value, MakeSeq):
            assert isinstance(value.type, t.SeqT)
            return self.vector(value, value.type.item)
        if isinstance(value, Item):
            base = self.expr(value.base)
            if isinstance(value.base.type, t.TupleT):
                return f"::std::get<{value.index}>({base})"
            return f"{base}[{value.index}]"
        if isinstance(value, SeqIndex):
            indexed = value.base
            if isinstance(indexed, TensorQuery) and indexed.query is Query.SHAPE:
                return f"{self.expr(indexed.base)}.size({self.expr(value.index)})"
            return f"ppy::at({self.expr(indexed)}, {self.expr(value.index)})"
        if isinstance(value, SeqSlice):
            bounds = ", ".join(self.optional_int(b) for b in (value.lower, value.upper, value.step))
            return f"ppy::slice({self.expr(value.base)}, {bounds})"
        if isinstance(value, Length):
            return f"static_cast<int64_t>({self.expr(value.base)}.size())"
        if isinstance(value, TensorIndex):
            self.headers.add(cpp_files.INDEXING)
            steps = self.zero_steps(value.parts)
            if steps:
                return f"ppy::check_steps({self.expr(value.base)}, {self.index_list(value.parts)}, {steps}).index({self.index_list(value.parts)})"
            return f"{self.expr(value.base)}.index({self.index_list(value.parts)})"
        if isinstance(value, TensorQuery):
            return self.query(value)
        if isinstance(value, VariableData):
            return f"at::Tensor({self.expr(value.base)}.variable_data())"
        if isinstance(value, Unwrap):
            return f"ppy::value({self.expr(value.base)}, {string_literal(value.what)})"
        if isinstance(value, IsNone):
            return f"{'' if value.negate else '!'}{self.expr(value.base)}.has_value()"
        raise AssertionError(f"no C++ for {type(value).__name__}")

    def constant(self, value: Const) -> str:
        raw = value.value
        if isinstance(value.type, t.PyTypeT):
            return f"at::ScalarType::{PYTHON_TYPE_DTYPES[raw]}"
        if isinstance(raw, DtypeName):
            return f"at::ScalarType::{raw.scalar_type}"
        if isinstance(raw, EnumName):
            return raw.cpp
        if raw is None:
            return "::std::nullopt"
        if isinstance(raw, bool):
            return "true" if raw else "false"
        if isinstance(raw, int):
            return int_literal(raw)
        if isinstance(raw, float):
            return float_literal(raw)
        if isinstance(raw, str):
            return std_string(raw)
        raise AssertionError(f"no C++ for the constant {raw!r}")

    def vector(self, value: Expr, item: t.Type) -> str:
        """A sequence value as a ``std::vector`` of ``item``'s C++ type."""
        element = cpp_type(item)
        if isinstance(value, MakeTuple):
            items = ", ".join(self.value_as(i, item) for i in value.items)
            return f"::std::vector<{element}>{{{items}}}"
        if isinstance(value, MakeSeq):
            parts = []
            for part, spread in value.parts:
                parts.append(self.vector(part, item) if spread else f"::std::vector<{element}>{{{self.value_as(part, item)}}}")
            return f"ppy::join<{element}>({{{', '.join(parts)}}})"
        if isinstance(value.type, t.TupleT):
            items = ", ".join(convert(f"::std::get<{i}>({self.expr(value)})", k, item) for i, k in enumerate(value.type.items))
            return f"::std::vector<{element}>{{{items}}}"
        assert isinstance(value.type, t.SeqT)
        return convert(self.expr(value), value.type, t.SeqT(item))

    def optional_int(self, value: Expr | None) -> str:
        if value is None or isinstance(value.type, t.NoneT):
            return "::std::nullopt"
        return f"::std::optional<int64_t>({self.expr(value)})"

    def zero_steps(self, parts: tuple[IndexPart, ...]) -> str:
        """The run-time slice steps of a tensor index, as ``{{position, step == 0}, ...}`` for ``ppy::check_steps``
        (empty where every step is None or a nonzero constant): ``at::indexing::Slice`` refuses a zero step when it
        is built, Python's indexing only where it reaches that slice (see ``ppy::check_steps``)."""
        steps = []
        for position, part in enumerate(parts):
            if not isinstance(part, SliceIndex) or part.step is None or isinstance(part.step.type, t.NoneT):
                continue
            if isinstance(part.step, Const) and part.step.value != 0:
                continue
            test = (f"ppy::is_zero_step({self.expr(part.step)})" if isinstance(part.step.type, t.OptionalT)
                    else f"({self.expr(part.step)}) == 0")
            steps.append(f"{{{position}, {test}}}")
        return "{" + ", ".join(steps) + "}" if steps else ""

    def index_list(self, parts: tuple[IndexPart, ...]) -> str:
        rendered = []
        for part in parts:
            if isinstance(part, SliceIndex):
                bounds = []
                for bound in (part.lower, part.upper, part.step):
                    if bound is None or isinstance(bound.type, t.NoneT):
                        bounds.append("::std::nullopt")
                    elif bound is part.step and not isinstance(bound, Const):
                        bounds.append(f"ppy::slice_step({self.expr(bound)})")
                    elif isinstance(bound.type, t.OptionalT):
                        bounds.append(f"ppy::slice_bound({self.expr(bound)})")
                    else:
                        bounds.append(f"c10::SymInt({self.expr(bound)})")
                rendered.append(f"at::indexing::Slice({', '.join(bounds)})")
            elif isinstance(part, NoneRun):
                # A run of Nones counted at run time: the parts around it are joined into one vector then.
                rendered.append(f"\0{self.expr(part.count)}")
            elif isinstance(part, IndexList):
                items = ", ".join(self.expr(i) for i in part.items)
                kind = "bool" if part.boolean else "int64_t"
                rendered.append(f"at::indexing::TensorIndex(ppy::index_tensor<{kind}>({{{items}}}))")
            elif isinstance(part.type, t.NoneT):
                rendered.append("at::indexing::None")
            elif isinstance(part.type, t.EllipsisT):
                rendered.append("at::indexing::Ellipsis")
            else:
                rendered.append(f"at::indexing::TensorIndex({self.expr(part)})")
        if not any(r.startswith("\0") for r in rendered):
            return "{" + ", ".join(rendered) + "}"
        pieces: list[str] = []
        run: list[str] = []
        for item in rendered:
            if item.startswith("\0"):
                pieces.append("::std::vector<at::indexing::TensorIndex>{" + ", ".join(run) + "}")
                pieces.append(f"ppy::nones({item[1:]})")
                run = []
            else:
                run.append(item)
        pieces.append("::std::vector<at::indexing::TensorIndex>{" + ", ".join(run) + "}")
        return f"ppy::join_index({{{', '.join(pieces)}}})"

    def query(self, value: TensorQuery) -> str:
        base = self.expr(value.base)
        query = value.query
        if query is Query.SHAPE:
            return f"{base}.sizes().vec()"
        if query is Query.STRIDES:
            return f"{base}.strides().vec()"
        if query in (Query.SIZE, Query.STRIDE):
            return f"{base}.{query.value}({self.expr(value.args[0])})"
        if query is Query.ELEMENT_SIZE:
            return f"static_cast<int64_t>({base}.element_size())"
        if query is Query.DTYPE:
            return f"{base}.scalar_type()"
        return f"{base}.{query.value}()"

    def host(self, value: Host) -> str:
        operands = value.operands
        if value.op is HostOp.DEFAULT_DTYPE:
            return "c10::typeMetaToScalarType(c10::get_default_dtype())"
        if value.op in (HostOp.MIN, HostOp.MAX) and len(operands) == 1:
            # `min(x.shape)`: one sequence known at run time; Python's ValueError when it is empty.
            message = string_literal(_empty_extreme_message(value.op.value))
            maximum = "true" if value.op is HostOp.MAX else "false"
            return f"ppy::py_extreme_of<{maximum}>({self.expr(operands[0])}, {message})"
        if value.op is HostOp.NUMBER_DTYPE:
            return (f"(({self.expr(operands[0])}).isIntegral(/*includeBool=*/false) ? at::kLong : "
                    f"c10::typeMetaToScalarType(c10::get_default_dtype()))")
        if value.op is HostOp.BROADCAST_SHAPES:
            shapes = ", ".join(self.expr(o) for o in operands)
            return f"ppy::broadcast_shapes({{{shapes}}}, {string_literal(value.function)})"
        if value.op is HostOp.INFER_SIZE:
            return f"at::infer_size({self.expr(operands[0])}, {self.expr(operands[1])})"
        if value.op is HostOp.EINSUM_PATH:
            tensors = ", ".join(self.expr(o) for o in operands[1:])
            return f"ppy::einsum_path({self.expr(operands[0])}, {{{tensors}}})"
        if value.op is HostOp.DEVICE_TYPE:
            return f"::std::string(c10::DeviceTypeName(({self.expr(operands[0])}).type(), /*lower_case=*/true))"
        if value.op in _COMPARISONS and isinstance(operands[0].type, (t.SeqT, t.StrT, t.DtypeT, t.LayoutT,
                                                                      t.MemoryFormatT, t.DeviceT)):
            return f"({self.expr(operands[0])} {_COMPARISONS[value.op]} {self.expr(operands[1])})"
        if value.op in _COMPARISONS:
            left, right = operands
            compared = _common(left.type, right.type)
            if isinstance(compared, t.FloatT) and not all(isinstance(o.type, t.FloatT) for o in operands):
                # An int against a float compares exactly, as Python does: the int is not rounded to a double.
                return (f"ppy::py_compare<{_CMP[value.op]}>({self.number(left, _exact(left.type))}, "
                        f"{self.number(right, _exact(right.type))})")
            return f"ppy::py_compare<{_CMP[value.op]}>({self.number(left, compared)}, {self.number(right, compared)})"
        if value.op is HostOp.NOT:
            return f"(!ppy::py_bool({self.expr(operands[0])}))"
        if value.op is HostOp.ALL:
            return "(" + " && ".join(self.expr(o) for o in operands) + ")"
        if value.op is HostOp.PROD:
            return f"ppy::product({self.expr(operands[0])})"
        if value.op is HostOp.RANGE:
            return f"ppy::py_range({', '.join(self.value_as(o, t.INT) for o in operands)})"
        if value.op is HostOp.DTYPE_IS:
            test = {"is_floating_point": "isFloatingType", "is_complex": "isComplexType", "is_signed": "isSignedType"}
            return f"at::{test[value.function]}({self.expr(operands[0])})"
        if value.op is HostOp.FINFO:
            attribute = "Tiny" if value.function == "smallest_normal" else value.function.capitalize()
            found = f"ppy::finfo({self.expr(operands[0])}, ppy::FInfo::{attribute})"
            return f"static_cast<int64_t>({found})" if value.function == "bits" else found
        if value.op is HostOp.IINFO:
            return f"ppy::iinfo({self.expr(operands[0])}, /*maximum=*/{'true' if value.function == 'max' else 'false'})"
        if value.op is HostOp.TO_FLOAT:
            return to_double(self.expr(operands[0]), operands[0].type)
        if value.op is HostOp.TENSOR_FLOAT:
            return f"ppy::tensor_float({self.expr(operands[0])})"
        if value.op is HostOp.TO_BOOL:
            return f"ppy::py_bool({self.expr(operands[0])})"
        if value.op is HostOp.MATH:
            args = ", ".join(self.number(o, t.FLOAT if value.function not in ("gcd", "lcm") else t.INT) for o in operands)
            if value.function in ("ceil", "floor", "trunc") and isinstance(operands[0].type, (t.IntT, t.BoolT)):
                return f"static_cast<int64_t>({self.expr(operands[0])})"
            if value.function in ("ceil", "floor", "trunc") and isinstance(operands[0].type, t.NumberT):
                return f"ppy::math_{value.function}({self.expr(operands[0])})"  # an int stays exact, not a double
            return f"ppy::math_{value.function}({args})"
        if value.op is HostOp.ADD and isinstance(value.type, t.StrT):
            return f"(std::string({self.expr(operands[0])}) + {self.expr(operands[1])})"
        if value.op is HostOp.MUL and isinstance(value.type, t.StrT):
            return f"ppy::repeat_str({self.expr(operands[0])}, {self.expr(operands[1])})"
        if value.op is HostOp.MUL and isinstance(value.type, t.SeqT):
            return f"ppy::repeat({self.expr(operands[0])}, {self.expr(operands[1])})"
        if value.op is HostOp.TO_INT:
            return f"ppy::py_int({self.expr(operands[0])})"
        common = value.type if value.op not in (HostOp.TRUEDIV, HostOp.ROUND, HostOp.ROUND_DIGITS, HostOp.POW) else None
        if value.op is HostOp.POW:
            # An int to an int power the checker could not prove non-negative is a number known at run time
            # (`2 ** -1` is 0.5): it runs as at::Scalar arithmetic, not int64's, which raises on a negative exponent.
            common = _common(*(o.type for o in operands), value.type)
        if value.op in (HostOp.TRUEDIV,):
            if all(isinstance(o.type, (t.IntT, t.BoolT)) for o in operands):
                # int / int: Python's ZeroDivisionError says "division by zero", not "float division by zero".
                return f"ppy::py_int_truediv({', '.join(self.expr(o) for o in operands)})"
            common = t.FLOAT if not any(isinstance(o.type, t.NumberT) for o in operands) else t.NUMBER
        if value.op in (HostOp.ROUND, HostOp.ROUND_DIGITS):
            first = self.expr(operands[0])
            rest = "".join(f", {self.expr(o)}" for o in operands[1:])
            return f"{_HOST_FUNCTIONS[value.op]}({first}{rest})"
        if isinstance(common, t.BoolT) and value.op in (HostOp.BITAND, HostOp.BITOR, HostOp.BITXOR):
            return f"ppy::py_bool_bits<{_BITS[value.op]}>({self.expr(operands[0])}, {self.expr(operands[1])})"
        assert common is not None
        args = ", ".join(self.number(o, common) for o in operands)
        if value.op in (HostOp.MIN, HostOp.MAX):
            args = "{" + args + "}"
        call = f"{_HOST_FUNCTIONS[value.op]}({args})"
        if value.op is HostOp.TRUEDIV and isinstance(value.type, t.FloatT) and isinstance(common, t.NumberT):
            return f"({call}).toDouble()"
        return call

    def number(self, value: Expr, common: t.Type) -> str:
        """An operand as the C++ type arithmetic of ``common`` runs in (bools count as ints)."""
        code = self.expr(value)
        if isinstance(common, t.BoolT) or value.type == common:
            return code
        if isinstance(common, t.IntT):
            return f"static_cast<int64_t>({code})"
        return convert(code, t.INT if isinstance(value.type, t.BoolT) else value.type, common)

    # --- calls -------------------------------------------------------------------------

    def call(self, value: Call) -> str:
        native = value.native
        if self.options.mutation is Mutation.SWAP and native.name == self.options.swap[0]:
            native = _swapped(native, self.options.swap[1])
        struct = native.ops_struct
        self.headers.add(f"ATen/ops/{native.header}_ops.h")
        if any(takes_optional_tensors(arg.type) for arg in native.args):
            self.headers.add(cpp_files.INDEXING)
        args = []
        given = dict(value.args)
        for arg in native.args:
            supplied = given.get(arg.name)
            if supplied is None:
                assert arg.cpp_default is not None, f"{native.key}: `{arg.name}` has no default"
                args.append(arg.cpp_default)
                continue
            args.append(self.argument(supplied, arg, value.span))
        code = f"at::_ops::{struct}::call({', '.join(args)})"
        if len(native.returns) == 1 and native.returns[0].type == BaseType(Base.SymInt):
            code = f"{code}.expect_int()"
        if value.requires_grad is not None:
            code = f"ppy::with_requires_grad({code}, {self.expr(value.requires_grad)})"
        return code

    def argument(self, value: Expr, arg: SchemaArg, span: Span) -> str:
        kind = arg.type
        if arg.is_write and isinstance(kind, BaseType):
            return self.lvalue(value, span)
        if _is_list(kind):
            if isinstance(value.type, t.NoneT) and isinstance(kind, OptionalType):
                return "::std::nullopt"  # `torch.sum(x, dim=None)`
            literal = self.literal_list(value, kind)
            if literal is not None:
                return literal
            if isinstance(value.type, t.OptionalT) and isinstance(kind, OptionalType):
                # A sequence, tuple or int, or None, known at run time (torch.einsum's `path`, `x.sum(dim)` of an
                # `int | None`): cpp_types keeps the storage its view points at alive for the call.
                return argument(self.expr(value), value.type, kind)
            return argument(self.sequence_code(value, kind), value.type, kind)
        if isinstance(value, Const) and isinstance(value.value, str) and kind in (BaseType(Base.str), OptionalType(BaseType(Base.str))):
            view = f"c10::string_view({string_literal(value.value)}, {len(value.value.encode('utf-8', 'surrogatepass'))})"
            return view if isinstance(kind, BaseType) else f"::std::optional<c10::string_view>({view})"
        return argument(self.expr(value), value.type, kind)

    def literal_list(self, value: Expr, kind: SchemaType) -> str | None:
        """A tuple display passed to an int, float or tensor list: an ArrayRef over a braced list, no heap."""
        optional = isinstance(kind, OptionalType)
        list_type = kind.elem if isinstance(kind, OptionalType) else kind
        if not isinstance(value, MakeTuple) or not isinstance(list_type, ListType) or not isinstance(list_type.elem, BaseType):
            return None
        base = list_type.elem.base
        if base in (Base.int, Base.SymInt):
            ref = f"c10::IntArrayRef{{{', '.join(self.value_as(i, t.INT) for i in value.items)}}}"
            if base is Base.SymInt:
                ref = f"c10::fromIntArrayRefSlow({ref})"
            wrapper = "at::OptionalIntArrayRef" if base is Base.int else "at::OptionalSymIntArrayRef"
            return f"{wrapper}({ref})" if optional else ref
        if base is Base.float and not optional:
            return f"at::ArrayRef<double>{{{', '.join(self.value_as(i, t.FLOAT) for i in value.items)}}}"
        if base is Base.Tensor and not optional:
            return f"at::ArrayRef<at::Tensor>{{{', '.join(self.expr(i) for i in value.items)}}}"
        return None

    def sequence_code(self, value: Expr, kind: SchemaType) -> str:
        """A tuple or sequence value as the vector a list parameter takes."""
        list_type = kind.elem if isinstance(kind, OptionalType) else kind
        assert isinstance(list_type, ListType)
        if isinstance(value.type, t.IntT):
            return self.expr(value)
        elem = list_type.elem
        if isinstance(elem, OptionalType):
            if isinstance(value, MakeTuple):
                items = ", ".join("::std::optional<at::Tensor>()" if isinstance(i.type, t.NoneT) else self.expr(i)
                                  for i in value.items)
                return f"::std::vector<::std::optional<at::Tensor>>{{{items}}}"
            return self.vector(value, t.TENSOR)
        assert isinstance(elem, BaseType)  # a list of lists is no schema's
        items_of: dict[Base, t.Type] = {Base.int: t.INT, Base.SymInt: t.INT, Base.float: t.FLOAT, Base.bool: t.BOOL,
                                        Base.Tensor: t.TENSOR, Base.Scalar: t.NUMBER}
        model_item = items_of[elem.base]
        return self.vector(value, model_item)

    def lvalue(self, value: Expr, span: Span) -> str:
        """A tensor an op writes is passed by non-const reference: a named, non-const handle on the same storage."""
        if isinstance(value, Read) and isinstance(value.type, t.TensorT):
            return self.names.var(value.var)
        self.lvalues += 1
        name = f"ppy_written_{self.lvalues}"
        self.emit(f"at::Tensor {name} = {self.expr(value)};", span)
        return name


_CMP = {HostOp.EQ: "ppy::Cmp::Eq", HostOp.NE: "ppy::Cmp::Ne", HostOp.LT: "ppy::Cmp::Lt", HostOp.LE: "ppy::Cmp::Le",
        HostOp.GT: "ppy::Cmp::Gt", HostOp.GE: "ppy::Cmp::Ge"}
_BITS = {HostOp.BITAND: "'&'", HostOp.BITOR: "'|'", HostOp.BITXOR: "'^'"}


def _swapped(native: Native, name: str) -> Native:
    """The same overload of another operator, for the SWAP mutation (``mul.Tensor`` -> ``mul_.Tensor``)."""
    from ppy_check.schema import opdata

    overload = native.key.partition(".")[2]
    return opdata().native(f"{name}.{overload}" if overload else name)


def _is_list(kind: object) -> bool:
    return isinstance(kind, ListType) or (isinstance(kind, OptionalType) and isinstance(kind.elem, ListType))


def _exact(kind: t.Type) -> t.Type:
    """The C++ type a number of ``kind`` compares in without rounding: int64 for an int or a bool."""
    return t.INT if isinstance(kind, (t.IntT, t.BoolT)) else kind


def _common(*kinds: t.Type) -> t.Type:
    """The C++ arithmetic a mix of Python numbers runs in: double if any float, Scalar if a run-time number, else int."""
    if any(isinstance(k, t.FloatT) for k in kinds):
        return t.FLOAT
    if any(isinstance(k, t.NumberT) for k in kinds):
        return t.NUMBER
    if all(isinstance(k, (t.IntT, t.BoolT)) for k in kinds):
        return t.INT
    return kinds[0]


