"""What is known of values and types without building anything: pure functions the parts share."""

from __future__ import annotations

import ast
import enum
from typing import Any, TypeGuard

from ppy_check.model import budgets, hostmath
from ppy_check.model import types as t
from ppy_check.model.bind import Argument
from ppy_check.model.builder.tables import BINARY_OPS, PYTHON_TYPES
from ppy_check.model.builder.text import _is_text, display
from ppy_check.model.builder.values import FunctionRef, Value
from ppy_check.model.ir import (
    Call,
    Const,
    DtypeName,
    Expr,
    Host,
    HostOp,
    IsNone,
    Item,
    Length,
    Let,
    MakeSeq,
    MakeTuple,
    Param,
    Query,
    Read,
    SeqIndex,
    SeqSlice,
    Span,
    TensorIndex,
    TensorQuery,
    Unwrap,
)
from ppy_check.schema import Base, BaseType, ListType, Native, OptionalType, SchemaType
from ppy_check.scope import ModuleScope

# The classes a value of each model type is an instance of, for torch's `isinstance` tests.
_ITERABLE_CLASSES = frozenset({"collections.abc.Iterable", "typing.Iterable"})


_INSTANCE_OF: dict[type, frozenset[str]] = {
    t.TensorT: frozenset({"torch.Tensor"}) | _ITERABLE_CLASSES, t.IntT: frozenset({"builtins.int"}),
    t.BoolT: frozenset({"builtins.bool", "builtins.int"}), t.FloatT: frozenset({"builtins.float"}),
    t.StrT: frozenset({"builtins.str"}) | _ITERABLE_CLASSES, t.NoneT: frozenset(), t.DtypeT: frozenset({"torch.dtype"}),
    t.DeviceT: frozenset({"torch.device"}),
}


_SEQUENCE_CLASSES = frozenset({"collections.abc.Sequence", "typing.Sequence"}) | _ITERABLE_CLASSES


_KNOWN_CLASSES = _SEQUENCE_CLASSES | frozenset({"builtins.int", "builtins.float", "builtins.bool", "builtins.str", "builtins.complex",
                            "builtins.list", "builtins.tuple", "builtins.dict", "torch.Tensor", "torch.SymInt",
                            "torch.SymFloat", "torch.SymBool", "torch.dtype", "torch.device",
                            # No value a region holds is a dict: torch 2.11's Tensor.unflatten asks of its sizes.
                            "collections.OrderedDict", "typing.OrderedDict"})


def _isinstance_answer(kind: t.Type, classes: frozenset[str], sequence: str | None = None) -> bool | None:
    """What ``isinstance`` answers for a value of ``kind`` (a sequence known to be a list or tuple: ``sequence``),
    or None when the model cannot tell."""
    if not classes <= _KNOWN_CLASSES:
        return None
    if isinstance(kind, (t.TupleT, t.SeqT)):
        if classes & _SEQUENCE_CLASSES:
            return True
        if sequence is not None:
            return f"builtins.{sequence}" in classes
        # A region's sequence may have been a list or a tuple: only asking for both (or neither) is decided.
        asked = classes & {"builtins.list", "builtins.tuple"}
        return True if len(asked) == 2 else False if not asked else None
    if isinstance(kind, t.NumberT):
        # An int or a float, which only the run time knows: a test for both, or for neither, is decided here.
        numbers = classes & {"builtins.int", "builtins.float"}
        return True if len(numbers) == 2 else False if not numbers else None
    if isinstance(kind, t.OptionalT):
        inner = _isinstance_answer(kind.inner, classes)
        return False if inner is False else None
    instance_of = _INSTANCE_OF.get(type(kind))
    return None if instance_of is None else bool(instance_of & classes)


# Tensor methods that read a property of the tensor, never raise and write nothing.
_HARMLESS_NATIVES = frozenset({"is_complex", "is_floating_point", "is_signed", "is_conj", "is_neg", "is_inference"})


_HARMLESS_HOST = frozenset({HostOp.EQ, HostOp.NE, HostOp.LT, HostOp.LE, HostOp.GT, HostOp.GE, HostOp.NOT, HostOp.ALL,
                            HostOp.DEVICE_TYPE, HostOp.DEFAULT_DTYPE, HostOp.DTYPE_IS, HostOp.RANGE,
                            HostOp.NUMBER_DTYPE})


def _ends_in_return(statements: list[ast.stmt]) -> bool:
    """Whether a block of torch's code always ends by returning (or raising) where it stands."""
    for statement in statements:
        if isinstance(statement, (ast.Return, ast.Raise)):
            return True
        if isinstance(statement, ast.If) and _ends_in_return(statement.body) and _ends_in_return(statement.orelse):
            return True
    return False


def _harmless(statement: object) -> bool:
    """A statement that cannot raise or write: computing it where Python might not is unobservable."""
    return isinstance(statement, Let) and _cannot_raise(statement.value)


def _is_dotted(node: ast.expr) -> bool:
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name)


def _cannot_raise(value: Expr) -> bool:
    """Whether computing ``value`` cannot fail and writes nothing: reads, lengths, a tensor's argument-free queries,
    the tensor predicates of _HARMLESS_NATIVES, and comparisons of those (of scalars: a sequence's may not)."""
    if isinstance(value, (Const, Param, Read, Length)):
        return True
    if isinstance(value, TensorQuery):
        return not value.args
    if isinstance(value, IsNone):
        return _cannot_raise(value.base)
    if isinstance(value, Item):
        # An item of a tuple of known length (`for x in size` of a `tuple[int, int]`): no IndexError to raise.
        return isinstance(value.base.type, t.TupleT) and -len(value.base.type.items) <= value.index < \
            len(value.base.type.items) and _cannot_raise(value.base)
    if isinstance(value, Call):
        return value.native.name in _HARMLESS_NATIVES
    if isinstance(value, Host):
        return value.op in _HARMLESS_HOST and not any(isinstance(o.type, t.SeqT) for o in value.operands[:1]) \
            and all(_cannot_raise(operand) for operand in value.operands)
    return False


def _is_constant_expression(node: ast.expr) -> bool:
    """A default of torch's Python code known where a region is built: literals, arithmetic on them, names of torch."""
    from ppy_check.scope import is_literal

    if isinstance(node, ast.BinOp):
        return type(node.op) in BINARY_OPS and _is_constant_expression(node.left) and _is_constant_expression(node.right)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        return _is_constant_expression(node.operand)
    return is_literal(node) or _is_dotted(node)


def _is_new_list(node: ast.expr, scope: ModuleScope) -> bool:
    """``[]``, ``[a, b]``, ``list(x)`` or ``torch.jit.annotate(list[int], [])``: a list no other name refers to."""
    if isinstance(node, (ast.List, ast.ListComp)):
        return True
    if isinstance(node, ast.Call) and display(node.func) == "torch.jit.annotate" and len(node.args) == 2:
        return _is_new_list(node.args[1], scope)
    return isinstance(node, ast.Call) and scope.resolve(node.func) in ("list", "builtins.list")


def _same_object(left: Expr, right: Expr) -> bool:
    """Whether two values are one Python object: one parameter, or one variable, read twice."""
    if isinstance(left, Param) and isinstance(right, Param):
        return left.name == right.name
    return isinstance(left, Read) and isinstance(right, Read) and left.var == right.var


def _or_parts(test: ast.expr) -> list[ast.expr]:
    """The operands of `a or b or c`, in Python's order (one operand when the test is no `or`)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        return [part for value in test.values for part in _or_parts(value)]
    return [test]


def _without_warnings(body: list[ast.stmt], scope: ModuleScope) -> list[ast.stmt]:
    """A block of torch's Python code less its warnings, and the messages built only for them
    (``warn_msg = f"..."`` then ``warnings.warn(warn_msg)``)."""
    warnings = [n for n in body if _is_warning(n, scope)]
    read = {name.id for warning in warnings for name in ast.walk(warning) if isinstance(name, ast.Name)}
    kept = [n for n in body if n not in warnings]
    others = {name.id for statement in kept for name in ast.walk(statement)
              if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Load)}

    def message(statement: ast.stmt) -> bool:
        return isinstance(statement, ast.Assign) and len(statement.targets) == 1 and \
            isinstance(statement.targets[0], ast.Name) and statement.targets[0].id in read - others and \
            _is_text(statement.value)

    return [n for n in kept if not message(n)]


def _is_warning(node: ast.stmt, scope: ModuleScope) -> bool:
    """`warnings.warn(...)` as a statement: in torch's Python code, a message only."""
    if not isinstance(node, ast.Expr) or not isinstance(node.value, ast.Call):
        return False
    return scope.resolve(node.value.func) in ("warnings.warn", "torch.warnings.warn")


def _passed_value(value: Value, node: ast.expr) -> Value:
    """An argument's value: a type or function passed is a constant at the argument's place (its span is taken
    only then: most arguments are neither)."""
    if not isinstance(value, FunctionRef):
        return value
    span = Span.of(node)
    return _function_value(_python_type_value(value, span), span)


def _python_type_value(value: Value, span: Span) -> Value:
    """``float`` passed as an argument: torch's parser takes Python's types as dtypes (``x.to(float)``)."""
    if isinstance(value, FunctionRef) and value.dotted.startswith("builtins.") and value.shown in PYTHON_TYPES:
        name = value.dotted.split(".")[1]
        return Const(name, t.PyTypeT(name), span)
    return value


def _function_value(value: Value, span: Span) -> Value:
    """A function passed as an argument (``_combine_input_and_mask(sum, input, mask)``): a value known here, which
    the callee may call, name or test with ``callable``."""
    if isinstance(value, FunctionRef):
        return Const(value, t.FunctionT(value.dotted.rpartition(".")[2]), span)
    return value


def _never_equal(left: t.Type, right: t.Type) -> bool:
    """Whether Python's ``==`` is False for any values of these two types: a number and a tuple, None and a value
    that is never None, a string and a number (a device is left out: torch compares it with a string)."""
    kinds = []
    for kind in (left, right):
        if isinstance(kind, (t.TupleT, t.SeqT)):
            kinds.append("sequence")
        elif t.is_number(kind):
            kinds.append("number")
        elif isinstance(kind, (t.NoneT, t.StrT, t.DtypeT, t.LayoutT, t.MemoryFormatT, t.EllipsisT)):
            kinds.append(str(kind))
        else:
            return False  # a tensor compares elementwise; an optional may hold either
    return kinds[0] != kinds[1]


def _fold_str_method(text: str, name: str, args: list[Argument], keywords: dict[str, Expr], span: Span) -> Expr | None:
    """A method of a string known here, on arguments known here (``op_name.rsplit(".", 1)``): its value, as Python
    computes it; None when an argument is not known here."""
    if name == "join" and len(args) == 1 and not args[0].spread and not keywords and \
            isinstance(args[0].value, MakeTuple) and all(isinstance(i, Const) and isinstance(i.value, str)
                                                          for i in args[0].value.items):
        pieces = [str(i.value) for i in args[0].value.items if isinstance(i, Const)]  # every item is, tested above
        budgets.check_text(sum(len(p) for p in pieces) + len(text) * max(len(pieces) - 1, 0))
        return Const(text.join(pieces), t.STR, span)
    values = [a.value for a in args if not a.spread and isinstance(a.value, Const)]
    named = {k: v for k, v in keywords.items() if isinstance(v, Const)}
    if len(values) != len(args) or len(named) != len(keywords):
        return None
    if name == "replace" and len(values) >= 2 and isinstance(values[0].value, str) and \
            isinstance(values[1].value, str):
        # `s.replace("", s)` grows by the square of the length: refused before it is computed.
        old, new = values[0].value, values[1].value
        count = text.count(old) if old else len(text) + 1
        budgets.check_text(len(text) + count * max(len(new) - len(old), 0))
    try:
        result = getattr(text, name)(*(v.value for v in values), **{k: v.value for k, v in named.items()})
    except (TypeError, ValueError):
        return None
    if isinstance(result, list):
        items = tuple(Const(item, t.STR, span) for item in result)
        return MakeTuple(items, t.TupleT(tuple(t.STR for _ in items)), span)
    return Const(result, hostmath.type_of_value(result), span)


def _carries_tensors(kind: t.Type) -> bool:
    if isinstance(kind, t.TensorT):
        return True
    if isinstance(kind, t.OptionalT):
        return _carries_tensors(kind.inner)
    if isinstance(kind, t.SeqT):
        return _carries_tensors(kind.item)
    if isinstance(kind, t.TupleT):
        return any(_carries_tensors(i) for i in kind.items)
    return False


def _range_length(numbers: range) -> int:
    """``len(numbers)``, which raises OverflowError past a machine word (``range(10 ** 30)``)."""
    if numbers.step > 0:
        return max(0, (numbers.stop - numbers.start + numbers.step - 1) // numbers.step)
    return max(0, (numbers.start - numbers.stop - numbers.step - 1) // -numbers.step)


def _repeats_a_variable(values: list[Expr]) -> bool:
    """Whether one variable is read by more than one of these values' tuple items (a temporary two names hold)."""
    seen: set[int] = set()
    pending = list(values)
    while pending:
        value = pending.pop()
        if isinstance(value, MakeTuple):
            pending.extend(value.items)
        elif isinstance(value, Read):
            if value.var.index in seen:
                return True
            seen.add(value.var.index)
    return False


def _item(base: Expr, index: int) -> Expr:
    """Item ``index`` of a tuple value (a literal tuple's own item, or a read of a std::tuple's field)."""
    if isinstance(base, MakeTuple):
        return base.items[index]
    assert isinstance(base.type, t.TupleT)
    return Item(base, index, base.type.items[index], base.span, base.aliases)


# Host operations that can raise: integer overflow, division by zero, math domain errors, int() of inf.
_OVERFLOWING = {HostOp.ADD, HostOp.SUB, HostOp.MUL, HostOp.POW, HostOp.LSHIFT, HostOp.NEG, HostOp.ABS}


_ALWAYS_RAISING = {HostOp.TRUEDIV, HostOp.FLOORDIV, HostOp.MOD, HostOp.TO_INT, HostOp.ROUND, HostOp.MATH, HostOp.PROD,
                   HostOp.IINFO, HostOp.FINFO}


def _may_raise(value: Value) -> TypeGuard[Host | SeqIndex | Unwrap | TensorQuery]:
    if isinstance(value, Host):
        if value.op in _ALWAYS_RAISING:
            return True
        return value.op in _OVERFLOWING and isinstance(value.type, (t.IntT, t.NumberT, t.SeqT))
    return isinstance(value, (SeqIndex, Unwrap)) or (
        isinstance(value, TensorQuery) and value.query in (Query.SIZE, Query.STRIDE))


def _needs_binding(value: Value) -> TypeGuard[Call | TensorIndex | MakeSeq | SeqSlice | Host | SeqIndex | Unwrap
                                               | TensorQuery]:
    """Calls and everything that can raise get a variable of their own, in evaluation order."""
    return isinstance(value, (Call, TensorIndex, MakeSeq, SeqSlice)) or _may_raise(value)


def _fixed_constant(native: Native, key: str, raw: Any, span: Span) -> Const:
    from ppy_check.schema import Named

    kind = native.arg[key].type
    base = kind.elem if isinstance(kind, OptionalType) else kind
    if isinstance(raw, Named) and base == BaseType(Base.ScalarType):
        return Const(DtypeName(raw.name), t.DTYPE, span)
    if isinstance(raw, Named) and base == BaseType(Base.Device):
        return Const(raw.name, t.STR, span)
    return Const(raw, hostmath.type_of_value(raw), span)


# The region type of each schema return type a region can hold (one table, not one per call: it is hot).
_SCHEMA_RESULTS: dict[Base, t.Type] = {
    Base.Tensor: t.TENSOR, Base.int: t.INT, Base.SymInt: t.INT, Base.float: t.FLOAT, Base.bool: t.BOOL,
    Base.ScalarType: t.DTYPE, Base.Scalar: t.NUMBER,
}


def _schema_result(kind: SchemaType) -> t.Type | None:
    if isinstance(kind, BaseType):
        return _SCHEMA_RESULTS.get(kind.base)
    if isinstance(kind, ListType) and kind.elem == BaseType(Base.Tensor):
        return t.SeqT(t.TENSOR)
    if isinstance(kind, ListType) and isinstance(kind.elem, BaseType) and kind.elem.base in (Base.int, Base.SymInt):
        return t.SeqT(t.INT)
    return None


class Mismatch(enum.Enum):
    """Why a value cannot be returned as the annotation declares (``_assignable``)."""

    TYPE = "another type"
    BOOL_AS_INT = "a bool where an int is declared"  # the compiled region would hand back 1 for True


def _assignable(value: t.Type, declared: t.Type) -> Mismatch | None:
    """Why a value of type ``value`` cannot be returned as ``declared``; None when it can."""
    if value == declared:
        return None
    if isinstance(declared, t.NumberT) and isinstance(value, (t.IntT, t.FloatT)):
        return None
    if isinstance(declared, t.OptionalT):
        if isinstance(value, t.NoneT):
            return None
        return _assignable(t.strip_optional(value), declared.inner)
    if isinstance(declared, t.TupleT) and isinstance(value, t.TupleT) and len(declared.items) == len(value.items):
        problems = [_assignable(v, d) for v, d in zip(value.items, declared.items)]
        return next((p for p in problems if p is not None), None)
    if isinstance(declared, t.SeqT) and isinstance(value, t.SeqT):
        return _assignable(value.item, declared.item)
    if isinstance(declared, t.SeqT) and isinstance(value, t.TupleT):
        problems = [_assignable(v, declared.item) for v in value.items]
        return next((p for p in problems if p is not None), None)
    if isinstance(declared, t.IntT) and isinstance(value, t.BoolT):
        return Mismatch.BOOL_AS_INT
    return Mismatch.TYPE
