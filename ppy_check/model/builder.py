"""Build a region's model: run its body once, as Python would, on static types.

For each statement, in order, the builder evaluates the expressions Python
would evaluate, in Python's order, and records what each is: a call bound to
the torch overload Python's argument parser would pick, scalar arithmetic
with Python's own result types, indexing, tuple building. Values carry the
parameters they may alias, so writes through views land on the parameter they
reach. A construct the builder cannot give a complete meaning becomes a
problem (a finding); then the region has no model, and nothing downstream can
compile something the checker did not accept.

torch's Python-level functions (``F.softmax``, ``F.cross_entropy``,
``Tensor.unique``) are inlined from torch's own source (``torch_python.py``)
as a helper is, over arguments already evaluated once; tests on literal
arguments (``inplace``, ``reduction == "mean"``) fold at build time.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import enum
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
import typing
from typing import Any, Protocol, TypeGuard, TypeVar

from ppy_check import torch_python
from ppy_check import messages as m
from ppy_check.messages import Reason, refusals
from ppy_check.model import budgets, constants, hostmath
from ppy_check.model import types as t
from ppy_check.model.bind import Argument, Bound, describe_arguments, resolve
from ppy_check.model.effects import effects_of
from ppy_check.model.assumptions import Assumed, Assumption
from ppy_check.model.ir import (
    Branch, Call, Const, DtypeName, EnumName, Eval, ExpectLength, Expr, GradMode, Host, HostOp, IndexList, IndexPart, IsNone, Item, Length, Let,
    MakeSeq, MakeTuple, Param, ParamInfo, PythonException, Query, Read, RegionModel, Require, ResultClass, Return, SeqIndex,
    SeqSlice, ShownSeq, SliceIndex, Span, Store, TensorIndex, TensorQuery, Unwrap, Var, VariableData, Write, WriteKind,
)
from ppy_check.model.budgets import Budget, Exceeded
from ppy_check.model.problems import (Capture, CaptureOrigin, OverBudget, Problems, Suggestion, TypeProblem,
                                      Unsupported)
from ppy_check.node_memo import per_node
from ppy_check.region import Region, describe_function, function_locals
from ppy_check.scope import BUILTIN_NAMES, BindingKind, ModuleScope, Rebinding
from ppy_check.schema import Base, BaseType, ListType, Native, OpData, OptionalType, Overload, SchemaType, opdata

# Python namespaces whose builtins reach a native function (``opdata.json``'s bindings).
FUNCTION_NAMESPACES = ("torch", "torch.nn.functional", "torch._C._nn", "torch.special", "torch.linalg", "torch.fft",
                       "torch._C._VariableFunctions")
MODULE_PATHS = frozenset({"torch", "torch.nn", "torch.nn.functional", "torch.special", "torch.linalg", "torch.fft",
                          "torch._C", "torch._C._nn", "torch._C._VariableFunctions", "torch.masked", "math"})
TORCH = "torch"
PYTHON_TYPES = ("float", "int", "bool", "complex")
LIST_METHODS = frozenset({"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse"})
# Methods of a string that compute a value from it and change nothing: folded where the string is known.
STR_METHODS = frozenset({"rsplit", "split", "lower", "upper", "strip", "lstrip", "rstrip", "startswith", "endswith",
                         "replace", "removeprefix", "removesuffix"})
SUPPORTED_BUILTINS = frozenset({"int", "float", "bool", "abs", "min", "max", "round", "len", "list", "tuple"})
# Builtins torch's Python code uses on sequences whose length is known where a region is built.
LIBRARY_BUILTINS = frozenset({"range", "zip", "enumerate", "reversed", "sorted", "all", "any", "sum", "min", "max"})
MAX_UNROLLED = 64  # items of a `range` that torch's Python code loops over
# What consumes every item of a generator, in order, before anything else runs.
EAGER_CONSUMERS = frozenset({"list", "tuple", "sum", "min", "max", "sorted"})
# What torch's Python code asks about the world, answered for a region's plain tensors in plain eager code.
LIBRARY_ANSWERS: dict[str, object] = {
    "torch.overrides.has_torch_function": False, "torch.overrides.has_torch_function_unary": False,
    "torch.overrides.has_torch_function_variadic": False, "torch._C._has_torch_function": False,
    "torch._C._has_torch_function_unary": False, "torch._C._has_torch_function_variadic": False,
    "torch.jit.is_scripting": False, "torch.jit.is_tracing": False, "torch._jit_internal.is_scripting": False,
    "torch._C._get_tracing_state": None, "torch.compiler.is_compiling": False, "torch._utils.is_compiling": False,
    # A global switch torch's Python code reads to pick another implementation of the same values (F.pad on CUDA
    # picks a decomposition whose backward is deterministic): compiled code keeps the default implementation.
    "torch.are_deterministic_algorithms_enabled": False,
    # A region's tensors are plain (the compiled entry runs the Python body for a subclass), never a MaskedTensor.
    "torch.masked.maskedtensor.core.is_masked_tensor": False,
}
# torch's own checks (`torch._check(cond, lambda: message)`), and what each raises when its condition is false.
LIBRARY_CHECKS = {
    "torch._check": PythonException.RUNTIME_ERROR, "torch._check_type": PythonException.TYPE_ERROR,
    "torch._check_value": PythonException.VALUE_ERROR, "torch._check_index": PythonException.INDEX_ERROR,
}
# Of those, the ones a user's region may not have answered so: a switch the user sets.
USER_QUESTIONS = frozenset({"torch.are_deterministic_algorithms_enabled"})
# Read (not called) by torch's Python code; cudnn_enabled only picks a backend for the same result.
LIBRARY_CONSTANTS: dict[str, object] = {
    "torch.backends.cudnn.enabled": True,
    # The name a third-party device backend goes by (torch.norm tests for it); ppy compiles for torch's own.
    "torch.utils.backend_registration._privateuse1_backend_name": "privateuseone",
}
# torch.nn.modules.utils._pair and its kin: an int repeated, a sequence as it is.
NTUPLES = {f"torch.nn.modules.utils.{name}": count
           for name, count in (("_single", 1), ("_pair", 2), ("_triple", 3), ("_quadruple", 4))}

HOST_READING_METHODS: dict[str, Reason] = {
    "item": refusals.METHOD_READS_VALUE_BACK,
    "tolist": refusals.METHOD_BUILDS_LIST,
    "numpy": refusals.METHOD_RUNS_NUMPY,
    "backward": refusals.METHOD_RUNS_AUTOGRAD,
    "data_ptr": refusals.METHOD_READS_ADDRESS,
    "register_hook": refusals.METHOD_REGISTERS_HOOK,
    "register_post_accumulate_grad_hook": refusals.METHOD_REGISTERS_HOOK,
    # Python-level methods of torch/_tensor.py that compute no tensor.
    "__array__": refusals.METHOD_HANDS_DATA_TO_NUMPY,
    "__array_wrap__": refusals.METHOD_IS_NUMPY_PROTOCOL,
    "__deepcopy__": refusals.METHOD_COPIES_OBJECT,
    "__dir__": refusals.METHOD_LISTS_ATTRIBUTES,
    "__dlpack__": refusals.METHOD_HANDS_DATA_ELSEWHERE,
    "__dlpack_device__": refusals.METHOD_HANDS_DATA_ELSEWHERE,
    "__format__": refusals.METHOD_FORMATS_TEXT,
    "__repr__": refusals.METHOD_FORMATS_TEXT,
    "__hash__": refusals.METHOD_IS_IDENTITY,
    "__reduce_ex__": refusals.METHOD_PICKLES,
    "__setstate__": refusals.METHOD_PICKLES,
    "dim_order": refusals.METHOD_READS_LAYOUT,
    "is_shared": refusals.METHOD_READS_STORAGE_PLACE,
    "share_memory_": refusals.METHOD_SHARES_STORAGE,
    "storage": refusals.METHOD_HANDS_OUT_STORAGE,
    "storage_type": refusals.METHOD_NAMES_STORAGE_CLASS,
    "module_load": refusals.METHOD_LOADS_STATE_DICT,
    "__bool__": refusals.METHOD_READS_VALUE_BACK,
    "storage_offset": refusals.METHOD_READS_OFFSET,
}
QUERY_METHODS: dict[str, tuple[Query, Query | None, t.Type]] = {
    # name: (query with no argument, query with a dim argument, result of the no-argument form)
    "size": (Query.SHAPE, Query.SIZE, t.SeqT(t.INT)),
    "stride": (Query.STRIDES, Query.STRIDE, t.SeqT(t.INT)),
    "dim": (Query.DIM, None, t.INT),
    "ndimension": (Query.DIM, None, t.INT),
    "numel": (Query.NUMEL, None, t.INT),
    "nelement": (Query.NUMEL, None, t.INT),
    "element_size": (Query.ELEMENT_SIZE, None, t.INT),
    "is_contiguous": (Query.IS_CONTIGUOUS, None, t.BOOL),
}
TENSOR_PROPERTIES: dict[str, tuple[Query, t.Type]] = {
    "shape": (Query.SHAPE, t.SeqT(t.INT)),
    "dtype": (Query.DTYPE, t.DTYPE),
    "device": (Query.DEVICE, t.DEVICE),
    "ndim": (Query.DIM, t.INT),
    "is_cuda": (Query.IS_CUDA, t.BOOL),
    "is_cpu": (Query.IS_CPU, t.BOOL),
    "is_sparse": (Query.IS_SPARSE, t.BOOL),
    "is_mkldnn": (Query.IS_MKLDNN, t.BOOL),
    "is_meta": (Query.IS_META, t.BOOL),
    "requires_grad": (Query.REQUIRES_GRAD, t.BOOL),
    "layout": (Query.LAYOUT, t.LAYOUT),
}
# What a dtype's `is_floating_point`, `is_complex` and `is_signed` answer: the ATen ScalarTypes for which it is True.
_FLOATING = frozenset({"Float", "Double", "Half", "BFloat16", "Float8_e4m3fn", "Float8_e5m2"})
_COMPLEX = frozenset({"ComplexFloat", "ComplexDouble", "ComplexHalf"})
DTYPE_TESTS = {
    "is_floating_point": _FLOATING, "is_complex": _COMPLEX,
    "is_signed": _FLOATING | _COMPLEX | frozenset({"Char", "Short", "Int", "Long"}),
}
# torch.iinfo's (min, max) of each integer dtype that an int64 holds.
INTEGER_BOUNDS = {
    "Byte": (0, 255), "Char": (-128, 127), "Short": (-32768, 32767), "Int": (-2**31, 2**31 - 1),
    "Long": (-2**63, 2**63 - 1), "UInt16": (0, 65535), "UInt32": (0, 2**32 - 1),
}
# torch.finfo's attributes a region reads: each a float, but `bits`.
FINFO_ATTRIBUTES = frozenset({"min", "max", "eps", "tiny", "smallest_normal", "resolution", "bits"})
# A strided tensor's layout, as torch's Python code reads it (Builder.strided).
STRIDED = EnumName("at::kStrided")
LAYOUT_PROPERTIES: dict[str, object] = {"layout": STRIDED, "is_sparse": False, "is_sparse_csr": False,
                                        "is_mkldnn": False, "is_nested": False}
# Operators whose names say they make (or read) tensors of another layout than strided.
_OTHER_LAYOUTS = ("sparse", "mkldnn", "nested", "csr", "csc", "bsr", "bsc", "coo", "jagged", "hspmm")
# Tensor properties that are views, as the native method torch's getter calls.
VIEW_PROPERTIES = {"T": "numpy_T", "mT": "mT", "H": "matrix_H", "mH": "mH"}
VIEW_FUNCTIONS = {"real": "real", "imag": "imag"}
PROPERTY_REFUSALS: dict[str, Reason] = {
    "grad": refusals.PROPERTY_READS_GRADIENT,
    "grad_fn": refusals.PROPERTY_READS_AUTOGRAD_GRAPH,
    "is_leaf": refusals.PROPERTY_READS_AUTOGRAD_GRAPH,
}

# What an exception's message formats at run time as Python's str() does, alone or as a sequence's items.
_SHOWN_SCALARS = (t.INT, t.BOOL, t.FLOAT, t.NUMBER, t.DTYPE)
# The pieces of an exception's message: literal text, and run-time values formatted into it.
Message = tuple[str | Expr | ShownSeq, ...]

BINARY_OPS = {
    ast.Add: HostOp.ADD, ast.Sub: HostOp.SUB, ast.Mult: HostOp.MUL, ast.Div: HostOp.TRUEDIV,
    ast.FloorDiv: HostOp.FLOORDIV, ast.Mod: HostOp.MOD, ast.Pow: HostOp.POW, ast.LShift: HostOp.LSHIFT,
    ast.RShift: HostOp.RSHIFT, ast.BitAnd: HostOp.BITAND, ast.BitOr: HostOp.BITOR, ast.BitXor: HostOp.BITXOR,
}
COMPARE_OPS = {ast.Eq: HostOp.EQ, ast.NotEq: HostOp.NE, ast.Lt: HostOp.LT, ast.LtE: HostOp.LE, ast.Gt: HostOp.GT,
               ast.GtE: HostOp.GE}
# Python operators on tensors, as the Tensor method each calls (torch/_tensor.py and TensorBase).
TENSOR_BINARY = {
    ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.FloorDiv: "floor_divide",
    ast.Mod: "remainder", ast.Pow: "pow", ast.MatMult: "matmul", ast.BitAnd: "__and__", ast.BitOr: "__or__",
    ast.BitXor: "__xor__", ast.LShift: "__lshift__", ast.RShift: "__rshift__",
}
TENSOR_INPLACE = {
    ast.Add: "add_", ast.Sub: "sub_", ast.Mult: "mul_", ast.Div: "div_", ast.FloorDiv: "floor_divide_",
    ast.Mod: "remainder_", ast.Pow: "pow_", ast.MatMult: None, ast.BitAnd: "__iand__", ast.BitOr: "__ior__",
    ast.BitXor: "__ixor__", ast.LShift: "__ilshift__", ast.RShift: "__irshift__",
}
# Tensor.__invert__'s words for a tensor that is neither integer nor bool.
INVERT_REFUSED = "~ (operator.invert) is only implemented on integer and Boolean-type tensors"
TENSOR_COMPARE = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge"}
MIRRORED = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}
GRAD_DECORATORS = {
    "torch.no_grad": GradMode.NO_GRAD, "torch.enable_grad": GradMode.ENABLE_GRAD,
    "torch.inference_mode": GradMode.INFERENCE, "torch.autograd.grad_mode.no_grad": GradMode.NO_GRAD,
}
OPERATOR_NAMES = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**",
    ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>",
}


@dataclass(frozen=True)
class ModuleRef:
    """A module (``torch``, ``F``): a name, not a value."""

    dotted: str


@dataclass(frozen=True)
class FunctionRef:
    """A function of a module (``torch.relu``, ``math.sqrt``, ``builtins.min``): callable, not a value."""

    dotted: str
    shown: str
    helper: Helper | None = None  # a function of the project: inlined where it is called


@dataclass(frozen=True)
class Helper:
    """A function of the project's own code (or torch's Python source), and the module it is defined in."""

    node: ast.FunctionDef
    scope: ModuleScope
    path: str
    library: bool = False  # torch's own Python: tests on literals fold, and it is no concern of the rules
    # A function torch's Python code defines inside another (`def helper(...)` in `_combine_input_and_mask`): the
    # function that defines it, and the names it reads from there, which it reads as they are when it is called.
    enclosing: ast.AST | None = None
    closure: frozenset[str] = frozenset()


@dataclass(frozen=True)
class BooleanDispatch:
    """torch's ``boolean_dispatch``: one of two functions, chosen by a bool argument (``return_indices``)."""

    arg_name: str
    arg_index: int
    default: bool
    if_true: str
    if_false: str
    scope: ModuleScope
    path: str


@dataclass(frozen=True)
class KeywordDict:
    """A dict of literal keys in torch's Python code, only ever spread into a call (``_VF.meshgrid(t, **kwargs)``)."""

    items: tuple[tuple[str, Expr], ...]


@dataclass(frozen=True)
class LibraryModule:
    """One of torch's Python modules whose source ships (torch_python.py): its functions are inlined."""

    dotted: str


@dataclass(frozen=True)
class ProjectModule:
    """A module of the project imported by a region's module (``import layers``): its functions are helpers."""

    path: str
    dotted: str


@dataclass(frozen=True)
class UntypedParam:
    """A parameter without a region type (reported by the untyped rule); reading through it is a capture."""

    name: str


@dataclass(frozen=True)
class Poisoned:
    """A value whose problem is already reported: anything computed from it is not reported again."""


POISON = Poisoned()
Value = (Expr | ModuleRef | FunctionRef | ProjectModule | LibraryModule | BooleanDispatch | KeywordDict | UntypedParam
         | Poisoned)
# A value handed back as it came (Builder.mark): an Expr stays an Expr for the caller.
_ValueT = TypeVar("_ValueT", bound=Value)


class RestTaken(enum.Enum):
    """What library_if did with the statements after an `if` of torch's code."""

    YES = "compiled inside the branch"
    NO = "left to run after it"
    NOT_HANDLED = "the `if` is a check or a warning, for library_statement"


class _Abandon(Exception):
    """The current statement cannot be modelled any further (its problem is recorded)."""


# torch's own Python code calls itself on its arguments rearranged (`einsum(equation, *operands)` when handed
# one list of operands); folded on what is known, each level is a different call, so a few levels are
# followed before it counts as recursion.
LIBRARY_REENTRY = 4


class _LibraryRefused(Exception):
    """A call of torch's Python code cannot be followed: its first problem, recorded, stands for the whole call."""


class _OutOfBudget(Exception):
    """A budget of the whole region ran out (steps, time): building stops, and that is the region's one finding."""

    def __init__(self, exceeded: Exceeded):
        super().__init__(exceeded.budget.value)
        self.exceeded = exceeded


# How many expressions the builder evaluates between two looks at the clock.
CLOCK_EVERY = 64


@dataclass(frozen=True)
class _TemplateStart:
    """Where the model stood when a helper's inlining began (Builder.remember keeps what it added)."""

    body: int
    vars: int
    snapshot: tuple[int, int, int, int, int, bool]
    structural: int
    branches: int
    budgets: int
    callees: int
    natives: set[str]
    kinds: int
    sizes: set[Expr]
    inlined: int


@dataclass(frozen=True)
class _Template:
    """A helper's model for one kind of arguments: what inlining it added, and the arguments it was built on."""

    leaves: tuple[Expr, ...]  # the bound arguments, tuples before their items
    body: tuple[Any, ...]
    value: Expr
    first_var: int  # its variables are those numbered above first_var, up to last_var
    last_var: int
    writes: tuple[Write, ...]
    callees: tuple[tuple[Region, str, Span | None], ...]
    chain: str  # how the region reached the helper (each callee's chain ends with it)
    natives: frozenset[str]
    random: bool
    sizes: tuple[Expr, ...]
    kinds: tuple[tuple[Expr, str], ...]
    reached: frozenset[int]  # the helpers inlined, by identity: reused only where none of them is being inlined
    statements: int  # its cost in steps (budgets.MAX_STEPS): its statements and the helpers it reaches


class _Cloner:
    """Copies of a template's model nodes: the first call's arguments replaced by this call's, each of its
    variables by a new one; a node shared in the template is one node in the copy."""

    def __init__(self, mapping: dict[int, Any], first_var: int, last_var: int, new_var: Any):
        self.mapping = mapping
        self.first_var, self.last_var = first_var, last_var
        self.new_var = new_var
        self.vars: dict[Var, Var] = {}

    def clone(self, node: Any) -> Any:
        found = self.mapping.get(id(node))
        if found is not None:
            return found
        if isinstance(node, tuple):
            return tuple(self.clone(item) for item in node)
        if isinstance(node, Var):
            copy: Any = self.new_var(node.name, node.type) if self.first_var < node.index <= self.last_var else node
            if copy is not node:
                self.vars[node] = copy
        elif type(node) in _MODEL_NODES:
            changes = {}
            for name in _MODEL_NODES[type(node)]:
                value = getattr(node, name)
                cloned = self.clone(value)
                if cloned is not value:
                    changes[name] = cloned
            copy = dataclasses.replace(node, **changes) if changes else node
        else:
            return node
        self.mapping[id(node)] = copy
        return copy


def _model_nodes() -> dict[type, tuple[str, ...]]:
    """The model's node classes whose fields may hold other nodes, and those fields."""
    from ppy_check.model import ir

    leaves = (ir.Span, ir.DtypeName, ir.EnumName, ir.ResultClass, ir.Write, ir.ParamInfo, ir.RegionModel, ir.Var)
    return {kind: tuple(f.name for f in dataclasses.fields(kind) if f.name not in ("span", "type", "aliases"))
            for kind in vars(ir).values()
            if isinstance(kind, type) and dataclasses.is_dataclass(kind) and kind not in leaves}


_MODEL_NODES = _model_nodes()


_EXPRESSIONS: tuple[type, ...] = typing.get_args(Expr)


def _is_expr(value: object) -> TypeGuard[Expr]:
    return isinstance(value, _EXPRESSIONS)


def _count_statements(body: tuple[Any, ...]) -> int:
    """Statements, those of run-time decisions' ways included: what instantiating a template costs."""
    total = 0
    for statement in body:
        total += 1
        if isinstance(statement, Branch):
            total += _count_statements(statement.then_body) + _count_statements(statement.else_body)
    return total


class _Jump(Exception):
    """`break` or `continue` in a loop of torch's Python code that is being unrolled."""

    def __init__(self, node: ast.stmt):
        super().__init__()
        self.node = node


@dataclass
class Analysis:
    """The builder's result: a complete model, or the problems that stopped it."""

    model: RegionModel | None
    problems: Problems
    writes: list[Write] = field(default_factory=list)
    # Helpers and regions the region calls (inlined): the structural rules check their syntax too.
    # (helper, how the region reached it, the call in the region's file when the helper is in another file)
    callees: list[tuple[Region, str, Span | None]] = field(default_factory=list)


@dataclass
class Frame:
    """The function whose body is being interpreted: the region itself, or a helper it calls."""

    locals: frozenset[str]
    enclosing: list[tuple[str, frozenset[str]]]
    context: str  # "" for the region; how the region reached a helper, for messages
    node: ast.AST
    scope: ModuleScope
    path: str
    dialect: Dialect  # the language the function is written in: what its code may do
    called_as: str = ""  # in torch's Python code: the user's call that led there, which messages name
    # In torch's Python code: local lists still growing by `.append` (no other reference to them has been taken).
    lists: set[str] = field(default_factory=set)
    # In torch's Python code: what runs after the statement being built, block by block outward (innermost last);
    # None where a loop's body ends (what follows it is the next round, no straight continuation).
    rests: list[list[ast.stmt] | None] = field(default_factory=list)
    finished: bool = False  # the rest of the function was built inside a run-time branch (library_if)


# Expressions inside one that display() spells as written; past them a message shows `...` (the text is cut at
# 60 characters anyway), so that displaying each level of a deep expression costs no more than this.
DISPLAY_NODES = 64


@per_node  # torch's shipped code is displayed by every region that inlines it
def display(node: ast.AST) -> str:
    """Source text for a message: one line, at most 60 characters."""
    small = _smaller_than(node, DISPLAY_NODES)
    plain = _plain_text(node) if small else None
    text = plain if plain is not None else ast.unparse(node if small else _pruned(node, [DISPLAY_NODES]))
    first, *rest = text.splitlines() or [""]
    if rest:
        first += " ..."
    return first if len(first) <= 60 else first[:57] + "..."


def _smaller_than(node: ast.AST, limit: int) -> bool:
    """Whether the tree under ``node`` holds fewer than ``limit`` expressions (it is walked no further)."""
    pending = [node]
    seen = 0
    while pending:
        current = pending.pop()
        if isinstance(current, ast.expr):
            seen += 1
            if seen >= limit:
                return False
        pending.extend(ast.iter_child_nodes(current))
    return True


def _pruned(node: ast.AST, budget: list[int]) -> ast.AST:
    """A copy of ``node`` with ``budget`` expressions of its own, and every one past them `...`. The last fields are
    copied first: deep expressions nest on the left (`x + x + ...`, `x.abs().abs()...`), so the copy keeps the
    operands written last, as they are, and the deep rest reads `...`."""
    if isinstance(node, ast.expr):
        budget[0] -= 1
    copy = type(node)()
    for name, value in reversed(list(ast.iter_fields(node))):
        if isinstance(value, ast.AST):
            value = _pruned_child(value, budget)
        elif isinstance(value, list):
            value = [_pruned_child(item, budget) if isinstance(item, ast.AST) else item for item in reversed(value)][::-1]
        setattr(copy, name, value)
    return copy


def _pruned_child(node: ast.AST, budget: list[int]) -> ast.AST:
    if budget[0] <= 0 and isinstance(node, ast.expr):
        return ast.Name(id="...")
    return _pruned(node, budget)


def _plain_text(node: ast.AST) -> str | None:
    """``ast.unparse(node)`` for the plainest expressions: names, attributes, calls and tuples of them, ints; None
    for anything else. Every call is displayed, and most calls are chains like ``F.linear(h, w).reshape``, where
    unparse's visitor would be a tenth of the model's cost. The spelling follows unparse exactly (a test compares)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        if isinstance(node.value, ast.Constant):
            return None  # `(1).real` and `"".join`: unparse's own care
        base = _plain_text(node.value)
        return None if base is None else f"{base}.{node.attr}"
    if isinstance(node, ast.Call):
        func = _plain_text(node.func)
        args = [_plain_text(arg) for arg in node.args]
        args += [None if k.arg is None else _keyword_text(k.arg, _plain_text(k.value)) for k in node.keywords]
        arg_texts = [arg for arg in args if arg is not None]
        if func is None or len(arg_texts) < len(args):
            return None
        return f"{func}({', '.join(arg_texts)})"
    if isinstance(node, ast.Tuple):
        items = [_plain_text(item) for item in node.elts]
        item_texts = [item for item in items if item is not None]
        if len(item_texts) < len(items):
            return None
        return f"({item_texts[0]},)" if len(item_texts) == 1 else f"({', '.join(item_texts)})"
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return repr(node.value)
    return None


def _keyword_text(name: str, value: str | None) -> str | None:
    return None if value is None else f"{name}={value}"


def _strip_dotted(dotted: str) -> str:
    """One spelling per function: ``torch.functional.X`` is ``torch.X``, ``torch._VF.X`` the builtin behind it."""
    if dotted.startswith("torch.functional."):
        return "torch." + dotted[len("torch.functional."):]
    if dotted == "torch._VF" or dotted.startswith("torch._VF."):
        return "torch._C._VariableFunctions" + dotted[len("torch._VF"):]
    return dotted


class Dialect(Protocol):
    """The language a frame's code is written in, asked wherever a user's region and torch's own code differ.

    Policies are answers to one question each; hooks build the forms only a dialect has (None, False or
    NOT_HANDLED: the form is not the dialect's, and the builder's own code builds or refuses it)."""

    # The runtime proves what the model took a module-level name (or a module's attribute) to be.
    records_assumptions: bool
    # A module-level name the module rebinds behind its assignments (or a star import may bind) is refused.
    refuses_rebound_names: bool
    # Names resolve into torch's shipped Python source: its modules, functions, bindings and constants.
    reads_torch_source: bool
    # What torch's code asks the world is answered even where the user sets the switch it reads.
    answers_user_switches: bool
    # Python data a function builds as it goes (growing lists, set displays, dicts spread as keywords,
    # generators consumed in place) is modelled.
    models_python_data: bool
    # A finding may offer the user a fix (`x.mT()` as `x.mT`) or an alternative (torch_python.ALTERNATIVES).
    offers_fixes: bool
    # A helper's model may be reused as a template for calls with the same argument signature.
    reuses_templates: bool

    def subject(self, name: str, why: m.Message) -> tuple[str, m.Message]:
        """What a finding names, and what it says, for a problem at ``name``."""

    def budget_subject(self, subject: str) -> str:
        """What a budget finding names."""

    def refused(self) -> None:
        """A problem was recorded: whatever the dialect stops with then (torch's code: the whole call)."""

    def capture(self, span: Span, name: str, origin: CaptureOrigin, detail: str) -> Poisoned:
        """A name read from outside the function that the model cannot take as fixed."""

    def structural(self, node: ast.AST) -> None:
        """A construct the loop, branch or syntax rule reports: what the dialect records beside that."""

    def block_if(self, statements: list[ast.stmt], index: int) -> RestTaken:
        """The `if` at ``statements[index]``, where the dialect builds it with the statements after it."""

    def statement(self, node: ast.stmt) -> bool:
        """Build a statement only this dialect has (True), or leave it to the builder (False)."""

    def expression(self, node: ast.expr) -> Value | None:
        """Build a conditional, boolean, dict or list-comprehension expression this dialect folds, or None."""

    def call(self, node: ast.Call) -> Value | None:
        """Build a call only this dialect has (checks, `isinstance`, `super()`, list growth), or None."""

    def builtin(self, name: str, args: list[Argument], keywords: dict[str, Expr], span: Span,
                shown: str) -> Expr | None:
        """A builtin call only this dialect has (over sequences known here), or None."""

    def identity(self, left: Expr, right: Expr, negate: bool, span: Span, text: str) -> Const | None:
        """`left is right` beyond `is None`: its answer, or None (then the builder refuses it)."""


class RegionDialect:
    """A user's region (or a helper it calls), under the rules: what it may not do is a finding for the user."""

    records_assumptions = True
    refuses_rebound_names = True
    reads_torch_source = False
    answers_user_switches = False
    models_python_data = False
    offers_fixes = True
    reuses_templates = True

    def __init__(self, builder: Builder):
        self.builder = builder

    def subject(self, name: str, why: m.Message) -> tuple[str, m.Message]:
        return name, why

    def budget_subject(self, subject: str) -> str:
        return subject

    def refused(self) -> None:
        return None

    def capture(self, span: Span, name: str, origin: CaptureOrigin, detail: str) -> Poisoned:
        self.builder.problems.captures.append(Capture(self.builder._span(span), name, origin, detail,
                                                      self.builder.frame.context))
        self.builder.complete = False
        return POISON

    def structural(self, node: ast.AST) -> None:
        return None

    def block_if(self, statements: list[ast.stmt], index: int) -> RestTaken:
        return RestTaken.NOT_HANDLED

    def statement(self, node: ast.stmt) -> bool:
        return False

    def expression(self, node: ast.expr) -> Value | None:
        return None

    def call(self, node: ast.Call) -> Value | None:
        return None

    def builtin(self, name: str, args: list[Argument], keywords: dict[str, Expr], span: Span,
                shown: str) -> Expr | None:
        return None

    def identity(self, left: Expr, right: Expr, negate: bool, span: Span, text: str) -> Const | None:
        return None


class LibraryDialect:
    """torch's own Python source, inlined as a helper is: tests on what is known fold, decisions on run-time
    values compile as C++ `if`s, loops over what is known unroll; a problem refuses the user's whole call."""

    records_assumptions = False
    refuses_rebound_names = False
    reads_torch_source = True
    answers_user_switches = True
    models_python_data = True
    offers_fixes = False
    reuses_templates = False

    def __init__(self, builder: Builder):
        self.builder = builder

    def subject(self, name: str, why: m.Message) -> tuple[str, m.Message]:
        """In torch's Python code a finding names the user's call, and says where inside it the problem is."""
        called_as = self.builder.frame.called_as
        if name == called_as:
            return name, why
        return called_as, m.message(m.IN_LIBRARY, name=name, why=why)

    def budget_subject(self, subject: str) -> str:
        return self.builder.frame.called_as or subject  # the user's call; torch's code is not theirs to change

    def refused(self) -> None:
        raise _LibraryRefused

    def capture(self, span: Span, name: str, origin: CaptureOrigin, detail: str) -> Poisoned:
        return self.builder.unsupported(span, name, refusals.READS_MODULE_LEVEL())

    def structural(self, node: ast.AST) -> None:
        self.builder.unsupported(Span.of(node), self.builder.frame.called_as,
                                 refusals.LIBRARY_NOT_STRAIGHT(node=display(node)))

    def block_if(self, statements: list[ast.stmt], index: int) -> RestTaken:
        frame = self.builder.frame
        frame.rests.append(statements[index + 1:])
        try:
            return self.builder.library_if(statements[index])  # type: ignore[arg-type]
        finally:
            frame.rests.pop()

    def statement(self, node: ast.stmt) -> bool:
        if isinstance(node, (ast.If, ast.Raise, ast.Assert)) or _is_warning(node, self.builder.frame.scope):
            self.builder.library_statement(node)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            self.builder.library_import(node)
        elif isinstance(node, ast.For):
            self.builder.library_for(node)
        elif isinstance(node, (ast.Break, ast.Continue)):
            raise _Jump(node)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.decorator_list:
            self.builder.env[node.name] = self.builder.local_definition(node)
        else:
            return False
        return True

    def expression(self, node: ast.expr) -> Value | None:
        if isinstance(node, ast.IfExp):
            return self.builder.fold_condition(node)
        if isinstance(node, ast.BoolOp):
            return self.builder.fold_bool(node)
        if isinstance(node, ast.Dict):
            spread = self.builder.keyword_spread(ast.keyword(arg=None, value=node))
            return POISON if spread is None else KeywordDict(tuple(spread.items()))
        if isinstance(node, ast.ListComp):
            repeated = self.builder.repeated(node)
            return repeated if repeated is not None else self.builder.comprehension(node)
        return None

    def call(self, node: ast.Call) -> Value | None:
        func = node.func
        if self.builder.frame.scope.resolve(func) in ("isinstance", "builtins.isinstance") and \
                "isinstance" not in self.builder.env:
            return self.builder.isinstance_of(node)
        if display(func) == "torch.jit.annotate" and len(node.args) == 2:
            return self.builder.expr(node.args[1])  # a type note for TorchScript: the value itself
        if isinstance(func, ast.Attribute) and func.attr in ("append", "extend") and \
                isinstance(func.value, ast.Name) and func.value.id in self.builder.frame.lists:
            return self.builder.grow_list(node, func.value.id)
        check = _strip_dotted(self.builder.frame.scope.resolve(func) or "")
        if check in LIBRARY_CHECKS:
            return self.builder.library_check(node, LIBRARY_CHECKS[check])
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Call) and \
                display(func.value) == "super()" and isinstance(self.builder.frame.node, ast.FunctionDef) and \
                self.builder.frame.node.args.args:
            return self.builder.super_method(node)
        return None

    def builtin(self, name: str, args: list[Argument], keywords: dict[str, Expr], span: Span,
                shown: str) -> Expr | None:
        if name in LIBRARY_BUILTINS:
            return self.builder.library_builtin(name, args, keywords, span, shown)
        return None

    def identity(self, left: Expr, right: Expr, negate: bool, span: Span, text: str) -> Const | None:
        if _same_object(left, right):
            return Const(not negate, t.BOOL, span)  # `k is v` where the user passed one tensor for both
        self.builder.unsupported(span, self.builder.frame.called_as, refusals.LIBRARY_TESTS_IDENTITY(text=text))
        return None


class Builder:
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
        self.region_dialect = RegionDialect(self)
        self.library_dialect = LibraryDialect(self)
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
        # A helper's model, by what it depends on (template_key), and the helpers each inlining reached.
        self.templates: dict[tuple[Any, ...], _Template] = {}
        self.inlined: list[int] = []
        # Sequences known to be lists or tuples (by identity; the value is kept so its id stays its own), for the
        # `isinstance(x, list)` tests of torch's Python code.
        self.sequence_kinds: dict[int, tuple[Expr, str]] = {}
        # Generator expressions of torch's Python code consumed where they stand (`all(d >= 0 for d in shape)`),
        # and by what: only those are modelled, as the tuple of their items.
        self.consumed: dict[int, str] = {}

    def release(self) -> None:
        """Break the cycles between the builder and its dialects (each holds the other), so that a build dies by
        reference counting: the runner calls the cyclic collector rarely (runner.GC_THRESHOLD)."""
        del self.region_dialect.builder, self.library_dialect.builder

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
        for index, param in enumerate(region.params):
            if param.type is None:
                self.complete = False
                self.env[param.name] = UntypedParam(param.name)
                continue
            aliases = frozenset({param.name}) if _carries_tensors(param.type) else frozenset()
            self.env[param.name] = Param(param.name, index, param.type, Span.of(param.node), aliases)
            params.append(ParamInfo(param.name, param.type, param.node in region.node.args.kwonlyargs))
        if region.returns is None or any(p.type is None for p in region.params):
            self.complete = False
        if region.node.args.vararg or region.node.args.kwarg or region.decorator_problems:
            self.complete = False
        grad_mode = self._grad_mode()
        self.statements(region.node.body)
        returns = region.returns if region.returns is not None else t.NONE
        if self.complete and not self.returned and not isinstance(returns, t.NoneT):
            self.type_problem(Span.of(region.node), region.name,
                              refusals.ENDS_WITHOUT_RETURN(returns=returns))
        if not self.complete or self.problems:
            return Analysis(None, self.problems, self.writes, self.callees)
        model = RegionModel(region.site, region.name, tuple(params), returns, region.pure, region.level, grad_mode,
                            self.body, self.writes, self.random, self.natives, self.dependencies, self.result_classes,
                            tuple(self.assumptions.values()))
        return Analysis(model, self.problems, self.writes, self.callees)

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
        self.complete = False

    # --- statements ----------------------------------------------------------------------

    def statements(self, statements: list[ast.stmt]) -> None:
        for index, statement in enumerate(statements):
            if index == 0 and _is_docstring(statement):
                continue
            if self.returned or self.frame.finished:
                # Code after `return` never runs; Python compiles it anyway.
                continue
            if not self.inlining:
                self.at = statement
            try:
                if isinstance(statement, ast.If):
                    taken = self.frame.dialect.block_if(statements, index)
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
        for block in reversed(self.frame.rests):
            if block is None:
                break
            rest += block
        return rest

    def library_if(self, node: ast.If) -> RestTaken:
        """An `if` of torch's Python code: folded when its test is known here, else compiled as a run-time branch,
        taking what runs after it (the rest of the function, from enclosing blocks too) into the way that does not
        return."""
        test = self.try_truth(node.test)
        if test is not None:
            self.statements(node.body if test.value else node.orelse)
            return RestTaken.NO
        body = _without_warnings(node.body, self.frame.scope)
        if not body and not node.orelse or len(body) == 1 and isinstance(body[0], ast.Raise) and not node.orelse:
            return RestTaken.NOT_HANDLED  # a warning, or a check that raises: library_statement keeps it
        then_ends, else_ends = _ends_in_return(node.body), _ends_in_return(node.orelse)
        rest = self.continuation()
        if then_ends and not else_ends:
            self.runtime_branch(node.test, node.body, node.orelse + rest, node)
            self.frame.finished = True
            return RestTaken.YES
        if else_ends and not then_ends:
            self.runtime_branch(node.test, node.body + rest, node.orelse, node)
            self.frame.finished = True
            return RestTaken.YES
        self.runtime_branch(node.test, node.body, node.orelse, node)
        return RestTaken.NO

    def runtime_branch(self, test_node: ast.expr, then: list[ast.stmt], otherwise: list[ast.stmt],
                       node: ast.If) -> None:
        """Both ways of a decision of torch's Python code, built one after the other, joined as a C++ `if`."""
        span = Span.of(node)
        test = self.expr(test_node)
        if not isinstance(test, Expr) or not t.is_number(test.type):
            self.unsupported(span, self.frame.called_as, refusals.LIBRARY_DECIDES(test_node=display(test_node)))
            raise _Abandon
        test = self.atom(self.host(HostOp.TO_BOOL, [test], span, display(test_node), kind=t.BOOL)
                         if not isinstance(test.type, t.BoolT) else test)
        saved = (self.body, self.env, self.returned, self.returned_value, self.raising)
        # Each way holds all that runs after it on that way: nothing there reaches past it.
        rests, finished = self.frame.rests, self.frame.finished
        ways = []
        self.branching += 1
        try:
            for statements in (then, otherwise):
                self.body, self.env = [], dict(saved[1])
                self.returned, self.returned_value, self.raising = False, None, False
                self.frame.rests, self.frame.finished = [None], False
                try:
                    self.statements(statements)
                except _Jump as jump:
                    self.unsupported(Span.of(jump.node), self.frame.called_as,
                                     refusals.LIBRARY_LEAVES(jump_node=display(jump.node), test_node=display(test_node)))
                    raise _Abandon from None
                value = None
                if self.returned and not self.raising:
                    assert self.returned_value is not None  # a way that returns holds what it returns
                    value = self.atom(self.returned_value)
                ways.append((self.body, self.env, self.returned, value, self.raising))
        finally:
            self.branching -= 1
            self.body, self.env, self.returned, self.returned_value, self.raising = saved
            self.frame.rests, self.frame.finished = rests, finished
        (then_body, then_env, then_returned, then_value, then_raises), \
            (else_body, else_env, else_returned, else_value, else_raises) = ways
        shown = refusals.LIBRARY_DECIDES_AT_RUN_TIME(test=display(test_node))
        merged: list[tuple[Var, Expr | None, Expr | None]] = []
        if then_raises and else_raises:
            self.returned, self.returned_value, self.raising = True, None, True
        elif then_raises or else_raises:
            # The way that raises never goes on: what follows is the other way's.
            goes_on = (else_env, else_returned, else_value) if then_raises else (then_env, then_returned, then_value)
            if goes_on[1]:
                assert goes_on[2] is not None
                self.returned, self.returned_value = True, self.merge(refusals.MERGED_RESULT(), goes_on[2], None, span, shown,
                                                                      merged, then_raises)
            else:
                for name, held in goes_on[0].items():
                    if self.env.get(name) is not held and isinstance(held, Expr):
                        self.env[name] = self.merge(refusals.MERGED_NAME(name=name), held, None, span, shown, merged, then_raises)
        elif then_returned != else_returned:
            self.unsupported(span, self.frame.called_as, refusals.RETURNS_ONE_WAY(shown=shown))
            raise _Abandon
        elif then_returned:
            assert then_value is not None and else_value is not None
            self.returned, self.returned_value = True, self.merge(refusals.MERGED_RESULT(), then_value, else_value, span, shown,
                                                                  merged)
        else:
            for name in sorted(set(then_env) | set(else_env)):
                one, other = then_env.get(name), else_env.get(name)
                if one is other:
                    continue
                if one is None or other is None:
                    self.env.pop(name, None)  # set one way only: reading it after would raise in Python too
                    continue
                if not isinstance(one, Expr) or not isinstance(other, Expr):
                    self.unsupported(span, self.frame.called_as,
                                     refusals.DIFFERENT_FUNCTION_EACH(shown=shown, name=name))
                    raise _Abandon
                self.env[name] = self.merge(refusals.MERGED_NAME(name=name), one, other, span, shown, merged)
        self.body.append(Branch(test, tuple(then_body), tuple(else_body), tuple(merged), span))

    def merge(self, what: m.Message, one: Expr, other: Expr | None, span: Span, shown: m.Message,
              merged: list[tuple[Var, Expr | None, Expr | None]], swapped: bool = False) -> Read:
        """One variable for a value two ways give (of one type), set on each way; ``other`` None: that way raises
        (``swapped``: the raising way is the one where the test holds)."""
        if isinstance(one.type, t.FunctionT):
            self.unsupported(span, self.frame.called_as, refusals.DIFFERENT_FUNCTION_EACH_WAY(shown=shown, what=what))
            raise _Abandon
        if other is not None and one.type != other.type:
            self.unsupported(span, self.frame.called_as,
                             refusals.ONE_WAY_OTHER(shown=shown, what=what, one_type=one.type, other_type=other.type))
            raise _Abandon
        var = self.new_var("", one.type)
        if self.strided(one) and (other is None or self.strided(other)):
            self.strided_vars.add(var)
        merged.append((var, other, one) if swapped else (var, one, other))
        return Read(var, one.type, span, one.aliases | (other.aliases if other is not None else frozenset()))

    def poison_targets(self, statement: ast.stmt) -> None:
        """A statement that could not be modelled binds nothing usable: later reads are not reported again."""
        targets: list[ast.expr] = []
        if isinstance(statement, ast.Assign):
            targets = statement.targets
        elif isinstance(statement, (ast.AnnAssign, ast.AugAssign)):
            targets = [statement.target]
        for target in targets:
            self.bind_poison(target)
        if isinstance(statement, ast.Return) and self.inlining:
            # A helper's `return` that could not be modelled hands back what its problem already explains: the
            # call is not None to its caller (that would cascade into findings on correct lines there).
            self.returned, self.returned_value = True, POISON

    def statement(self, node: ast.stmt) -> None:
        if self.frame.dialect.statement(node):
            return
        if isinstance(node, ast.Expr):
            value = self.expr(node.value, top=True)
            if isinstance(value, (Call, TensorIndex)) or _may_raise(value):
                self.body.append(Eval(value, Span.of(node)))
        elif isinstance(node, ast.Assign):
            first_var = self.vars
            value = self.expr(node.value, top=True)
            chained = len(node.targets) > 1
            if chained:
                value = self.atom(value, node.value)
            for target in node.targets:
                # `h = w = x.shape[1]`: every target holds the one value, so none may take its variable over.
                self.assign(target, value, node, None if chained else first_var)
                self.track_list(target, node.value)
        elif isinstance(node, ast.AnnAssign):
            if node.value is not None:
                first_var = self.vars
                self.assign(node.target, self.expr(node.value, top=True), node, first_var)
                self.track_list(node.target, node.value)
        elif isinstance(node, ast.AugAssign):
            self.augmented(node)
        elif isinstance(node, ast.Return):
            self.ret(node)
        elif isinstance(node, ast.Pass):
            return
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.structural(node)
            self.env[node.name] = POISON
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            self.structural(node)
            for alias in node.names:
                self.env[(alias.asname or alias.name).split(".")[0]] = POISON
        else:
            self.structural(node)
            self.shadow(node)

    def local_definition(self, node: ast.FunctionDef | ast.ClassDef) -> Value:
        """A function or class torch's Python code defines inside a function: nothing runs until it is used. A
        function is followed where it is called; a class (an autograd Function for MaskedTensor inputs, say) is
        refused only if the way taken uses it."""
        if isinstance(node, ast.ClassDef):
            return FunctionRef(f"<class defined in a function>.{node.name}", node.name)
        dotted = f"{torch_python.module_of(self.frame.path)}.{node.name}"
        read = {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        closure = frozenset(read & self.frame.locals - function_locals(node))
        helper = Helper(node, self.frame.scope, self.frame.path, library=True, enclosing=self.frame.node,
                        closure=closure)
        return Const(FunctionRef(dotted, node.name, helper), t.FunctionT(node.name), Span.of(node))

    def library_import(self, node: ast.Import | ast.ImportFrom) -> None:
        """``import torch`` inside a function of torch's Python code binds what the module-level import would."""
        for alias in node.names:
            if isinstance(node, ast.Import):
                dotted = alias.name if alias.asname else alias.name.split(".")[0]
                self.env[alias.asname or dotted] = self.dotted_value(dotted, Span.of(node), dotted) \
                    if dotted not in MODULE_PATHS else ModuleRef(dotted)
            elif node.level == 0 and node.module:
                dotted = f"{node.module}.{alias.name}"
                why = torch_python.not_followed(dotted)
                if why is not None or dotted.split(".")[0] not in ("torch", "math", "builtins"):
                    self.unsupported(Span.of(node), self.frame.called_as,
                                     refusals.LIBRARY_IMPORTS_UNFOLLOWED(dotted=dotted, why=why) if why else
                                     refusals.LIBRARY_IMPORTS(dotted=dotted))
                self.env[alias.asname or alias.name] = self.dotted_value(_strip_dotted(dotted), Span.of(node), dotted)
            else:
                self.unsupported(Span.of(node), self.frame.called_as, refusals.LIBRARY_IMPORTS_RELATIVELY())

    def library_for(self, node: ast.For) -> None:
        """A `for` of torch's Python code over what is known here (a tuple, `range` of literals): its body runs once
        per item, as Python runs it."""
        self.consumed[id(node.iter)] = "for"
        items = self.static_items(self.expr(node.iter), node.iter)
        for item in items:
            self.assign(node.target, item, node)
            self.frame.rests.append(None)
            try:
                self.statements(node.body)
            except _Jump as jump:
                if isinstance(jump.node, ast.Break):
                    return
            finally:
                # A branch inside the body took the rest of this round only: the next round follows it.
                self.frame.rests.pop()
                self.frame.finished = False
            if self.returned:
                return
        self.statements(node.orelse)

    def static_items(self, value: Value, node: ast.expr) -> list[Expr]:
        """The items of what torch's Python code iterates over, when their number is known here."""
        if isinstance(value, (Poisoned, UntypedParam)):
            raise _Abandon
        if isinstance(value, Expr) and isinstance(value.type, t.TupleT):
            return [_item(value, i) for i in range(len(value.type.items))]
        while isinstance(value, Read) and value.var in self.values:
            value = self.values[value.var]
        if isinstance(value, Host) and value.op is HostOp.RANGE:
            self.unsupported(Span.of(node), self.frame.called_as, refusals.LIBRARY_COUNTS())
        self.unsupported(Span.of(node), self.frame.called_as, refusals.LIBRARY_LOOPS(node=display(node)))
        raise _Abandon

    def comprehension(self, node: ast.ListComp | ast.GeneratorExp) -> Value:
        """A list comprehension or generator of torch's Python code over what is known here: the tuple of its items."""
        saved = self.env
        self.env = dict(saved)
        results: list[Expr] = []
        start = len(self.body)

        def run(index: int) -> None:
            if index == len(node.generators):
                results.append(self.atom(self.expr(node.elt), node.elt))
                return
            generator = node.generators[index]
            if generator.is_async:
                self.structural(node)
            self.consumed[id(generator.iter)] = "for"
            for item in self.static_items(self.expr(generator.iter), generator.iter):
                self.assign(generator.target, item, ast.copy_location(ast.Expr(node), node))
                for condition in generator.ifs:
                    known = self.try_constant(condition)
                    if known is None:
                        self.unsupported(Span.of(condition), self.frame.called_as,
                                         refusals.LIBRARY_FILTERS(condition=display(condition)))
                    assert known is not None  # unsupported() raised: this is torch's Python code
                    if not known.value:
                        break
                else:
                    run(index + 1)

        try:
            run(0)
        finally:
            self.env = saved
        span = Span.of(node)
        if isinstance(node, ast.GeneratorExp) and self.consumed.get(id(node)) not in EAGER_CONSUMERS and \
                not all(_harmless(statement) for statement in self.body[start:]):
            # Python may stop before the last item (`all`, `any`, a loop's `break`): ppy computes every item first.
            self.unsupported(span, self.frame.called_as, refusals.LIBRARY_COMPUTES(node=display(node)))
        return MakeTuple(tuple(results), t.TupleT(tuple(r.type for r in results)), span,
                         frozenset().union(*(r.aliases for r in results)))

    def track_list(self, target: ast.expr, value: ast.expr) -> None:
        """In torch's Python code, a name bound to a new list may grow by `.append` until it is read as a whole."""
        if not self.frame.dialect.models_python_data or not isinstance(target, ast.Name):
            return
        if _is_new_list(value, self.frame.scope):
            self.frame.lists.add(target.id)
        else:
            self.frame.lists.discard(target.id)

    def grow_list(self, node: ast.Call, name: str) -> Value:
        """``items.append(x)`` / ``items.extend(xs)`` on a list torch's Python code is building."""
        func = node.func
        assert isinstance(func, ast.Attribute)
        args, keywords = self.arguments(node)
        if args is None:
            return POISON
        if len(args) != 1 or args[0].spread or keywords:
            self.type_problem(Span.of(node), display(func), refusals.LIST_TAKES_ONE(func_attr=func.attr))
            raise _Abandon
        value = args[0].value
        if func.attr == "extend" and not isinstance(value.type, (t.TupleT, t.SeqT)):
            self.type_problem(Span.of(node), display(func), refusals.LIST_EXTEND(type=value.type))
            raise _Abandon
        current = self.atom(self.env[name])
        grown = self.atom(self.concatenate([(current, True), (value, func.attr == "extend")], Span.of(node)))
        self.env[name] = self.mark(grown, "list")
        return Const(None, t.NONE, Span.of(node))

    def library_check(self, node: ast.Call, error: PythonException) -> Value:
        """``torch._check(cond, lambda: message)`` in torch's Python code: a check the compiled region keeps."""
        if not node.args or len(node.args) > 2 or node.keywords:
            return self.unsupported(Span.of(node), self.frame.called_as,
                                    refusals.OTHER_ARGUMENTS(node_func=display(node.func)))
        text = node.args[1].body if len(node.args) == 2 and isinstance(node.args[1], ast.Lambda) else None
        known = self.try_constant(node.args[0])
        if known is None:
            self.require(node.args[0], ast.copy_location(ast.Expr(node), node), error,
                         self.message(text) if text is not None else ("",), negate=False)
        elif not known.value:
            shown = _text_of(text) if text is not None else ""
            self.unsupported(Span.of(node), self.frame.called_as,
                             refusals.LIBRARY_RAISES_SAYING(error=error.value, text=shown) if shown else
                             refusals.LIBRARY_RAISES_ERROR(error=error.value))
        return Const(None, t.NONE, Span.of(node))

    def library_statement(self, node: ast.stmt) -> None:
        """torch's own Python: `if` on what is known here folds, a check of a run-time value is kept, a warning is
        not printed, and what is left (a decision on a run-time value) is refused."""
        shown = self.frame.called_as
        if _is_warning(node, self.frame.scope):
            return  # compiled code prints none of the warnings torch's Python layer would
        if isinstance(node, ast.Raise):
            error, message = self.raised(node)
            if self.branching and error is not None:
                # One way of a run-time decision raises: the compiled way raises the same exception.
                self.body.append(Require(Const(False, t.BOOL, Span.of(node)), error, message, Span.of(node)))
                self.returned, self.returned_value, self.raising = True, None, True
                return
            self.unsupported(Span.of(node), shown, refusals.LIBRARY_RAISES(node=display(node)))
            raise _Abandon
        assert isinstance(node, (ast.If, ast.Assert))
        test = self.try_truth(node.test)
        if isinstance(node, ast.Assert):
            if test is None:
                self.require(node.test, node, PythonException.ASSERTION_ERROR, self.message(node.msg) if node.msg else ("",),
                             negate=False)
            elif not test.value:
                self.unsupported(Span.of(node), shown, refusals.LIBRARY_FAILS(node_test=display(node.test)))
                raise _Abandon
            return
        if test is not None:
            self.statements(node.body if test.value else node.orelse)
            return
        body = _without_warnings(node.body, self.frame.scope)
        if not body and not node.orelse:
            return  # a run-time check whose only effect is a warning
        if len(body) == 1 and isinstance(body[0], ast.Raise) and not node.orelse:
            error, message = self.raised(body[0])
            if error is not None:
                # `if a or b: raise E` checks `a`, then `b` only where `a` is false: one check each, in turn.
                for part in _or_parts(node.test):
                    known = self.try_constant(part)
                    if known is None:
                        self.require(part, node, error, message, negate=True)
                    elif known.value:
                        text = _text_of(body[0].exc.args[0]) if isinstance(body[0].exc, ast.Call) and body[0].exc.args \
                            else ""
                        self.unsupported(Span.of(node), shown,
                                         refusals.LIBRARY_RAISES_SAYING(error=error.value, text=text) if text else
                                         refusals.LIBRARY_RAISES_ERROR(error=error.value))
                        raise _Abandon
                return
        self.unsupported(Span.of(node), shown, refusals.LIBRARY_DECIDES_KNOWN(node_test=display(node.test)))
        raise _Abandon

    def require(self, test: ast.expr, node: ast.stmt, error: PythonException, message: Message,
                negate: bool) -> None:
        """Keep a check of torch's Python code on a run-time value: the compiled region raises where it would."""
        span = Span.of(node)
        value = self.expr(test)
        if isinstance(value, Expr) and t.is_number(value.type):
            holds = self.host(HostOp.NOT, [value], span, display(test)) if negate else value
            self.body.append(Require(holds, error, message, span))
            return
        reads_tensor = isinstance(value, Expr) and isinstance(value.type, t.TensorT)
        self.unsupported(span, self.frame.called_as,
                         (refusals.LIBRARY_CHECKS_TENSOR_VALUE if reads_tensor else refusals.LIBRARY_CHECKS_UNKNOWN)(
                             test=display(test)))
        raise _Abandon

    def raised(self, node: ast.Raise) -> tuple[PythonException | None, Message]:
        """The exception a `raise` of torch's Python code makes, and its message: literal text, and the values an
        f-string formats (what is known here as text, a run-time int or bool as itself)."""
        call = node.exc
        func = call.func if isinstance(call, ast.Call) else call
        name = self.frame.scope.resolve(func) if func is not None else None
        error = next((e for e in PythonException if name in (e.value, f"builtins.{e.value}")), None)
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
        known = self.try_constant(part.value)
        if known is not None:
            value = known.value
            return (str(value),) if isinstance(value, (str, int, float, bool)) or value is None else (shown,)
        saved = self.snapshot()
        try:
            value = self.expr(part.value)
        except (_Abandon, _LibraryRefused):
            value = POISON
        added = self.body[saved[0]:]
        if isinstance(value, Expr) and len(self.problems.unsupported) == saved[1] \
                and len(self.problems.types) == saved[2] and all(isinstance(s, Let) and self.computes_safely(s.value)
                                                                 for s in added):
            pieces = self.shown(value)
            if pieces is not None:
                return pieces
        self.rollback(saved)
        return (shown,)

    def shown(self, value: Expr) -> Message | None:
        """``value`` as the pieces of a message that print it as Python's str() does; None where the compiled code
        cannot (a str inside a tuple, which Python quotes; a value whose computing may fail)."""
        if value.type in _SHOWN_SCALARS or isinstance(value.type, t.StrT):
            return (value,) if self.computes_safely(value) else None
        opening, closing = ("torch.Size([", "])") if self.is_size(value) else \
            ("[", "]") if self.kind_of(value) == "list" else ("(", ")")
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
            known = self.values.get(value.var)
            return known is not None and self.small(known, depth + 1)
        if isinstance(value, Host) and value.op in (HostOp.ADD, HostOp.SUB, HostOp.NEG, HostOp.MIN, HostOp.MAX):
            return all(self.small(operand, depth + 1) for operand in value.operands)
        return False

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

    def try_constant(self, node: ast.expr) -> Const | None:
        """The value of an expression when it is known here, with nothing recorded when it is not."""
        saved = self.snapshot()
        try:
            value = self.expr(node)
        except (_Abandon, _LibraryRefused):
            value = None
        if not isinstance(value, Const):
            self.rollback(saved)
            return None
        return value

    def try_truth(self, node: ast.expr) -> Const | None:
        """Whether a test holds, when that is known here: a value known here, or one whose truth its type decides
        (a tuple of known length, None, a function), as Python's `if args:` asks."""
        known = self.try_constant(node)
        if known is not None:
            return known
        saved = self.snapshot()
        try:
            value = self.expr(node)
        except (_Abandon, _LibraryRefused):
            value = None
        if isinstance(value, Expr) and isinstance(value.type, (t.TupleT, t.NoneT, t.FunctionT)):
            return Const(not isinstance(value.type, t.NoneT) and (not isinstance(value.type, t.TupleT)
                                                                   or bool(value.type.items)), t.BOOL, Span.of(node))
        self.rollback(saved)
        return None

    def shadow(self, node: ast.AST) -> None:
        """Look inside a construct the structural rules refuse, so one run reports every problem in it."""
        saved = (len(self.body), dict(self.env), self.returned)
        for child in ast.iter_child_nodes(node):
            try:
                if isinstance(child, ast.stmt):
                    try:
                        self.statement(child)
                    except _Abandon:
                        self.poison_targets(child)
                        raise
                elif isinstance(child, ast.expr):
                    if isinstance(node, (ast.For, ast.AsyncFor)) and child is node.target:
                        self.bind_poison(child)
                    elif isinstance(node, ast.withitem) and child is node.optional_vars:
                        self.bind_poison(child)
                    elif not isinstance(node, (ast.ExceptHandler, ast.match_case, ast.arguments)):
                        self.expr(child)
                elif isinstance(child, (ast.withitem, ast.match_case, ast.ExceptHandler)):
                    self.shadow(child)
            except _Abandon:
                pass
        del self.body[saved[0]:]
        self.returned = saved[2]

    def repeated(self, node: ast.ListComp) -> Expr | None:
        """`[value for _ in range(n)]` in torch's Python code, its value not depending on the loop: the value,
        computed once (it reads no tensor and cannot raise), repeated n times."""
        (generator,) = node.generators if len(node.generators) == 1 else (None,)
        if generator is None or generator.ifs or not isinstance(generator.target, ast.Name) or \
                not isinstance(generator.iter, ast.Call) or display(generator.iter.func) != "range" or \
                len(generator.iter.args) != 1 or \
                any(isinstance(n, ast.Name) and n.id == generator.target.id for n in ast.walk(node.elt)):
            return None
        saved = self.snapshot()
        try:
            count = self.atom(self.expr(generator.iter.args[0]))
            item = self.atom(self.expr(node.elt))
        except (_Abandon, _LibraryRefused):
            self.rollback(saved)
            return None
        if not isinstance(count.type, t.IntT) or not t.is_number(item.type) or \
                not all(_harmless(statement) for statement in self.body[saved[0]:]):
            self.rollback(saved)
            return None
        return self.sequence_operator(ast.Mult(), MakeTuple((item,), t.TupleT((item.type,)), item.span), count,
                                      Span.of(node), display(node))

    def shadow_scope(self, node: ast.DictComp | ast.SetComp | ast.ListComp | ast.GeneratorExp | ast.Lambda
                     | ast.NamedExpr) -> Poisoned:
        """A comprehension, lambda or walrus: reported by the loop or syntax rule; its names are still checked."""
        self.structural(node)
        saved = dict(self.env)
        try:
            if isinstance(node, ast.Lambda):
                for arg in node.args.posonlyargs + node.args.args + node.args.kwonlyargs:
                    self.env[arg.arg] = POISON
                self.expr(node.body)
            elif isinstance(node, ast.NamedExpr):
                self.expr(node.value)
            else:
                for generator in node.generators:
                    self.expr(generator.iter)
                    self.bind_poison(generator.target)
                    for condition in generator.ifs:
                        self.expr(condition)
                parts = (node.key, node.value) if isinstance(node, ast.DictComp) else (node.elt,)
                for part in parts:
                    self.expr(part)
        except _Abandon:
            pass
        finally:
            self.env = saved
        if isinstance(node, ast.NamedExpr):
            self.env[node.target.id] = POISON
        return POISON

    def bind_poison(self, target: ast.expr) -> None:
        for name in ast.walk(target):
            if isinstance(name, ast.Name):
                self.env[name.id] = POISON

    def new_var(self, name: str, kind: t.Type) -> Var:
        self.vars += 1
        return Var(name, self.vars, kind)

    def let(self, value: Expr, name: str = "") -> Read:
        var = self.new_var(name, value.type)
        self.body.append(Let(var, value, value.span))
        self.values[var] = value
        if self.is_size(value):
            self.size_vars.add(var)
        return Read(var, value.type, value.span, value.aliases)

    def is_size(self, value: Expr) -> bool:
        """Whether Python's value is a torch.Size: `x.shape`, `x.size()`, their slices, sums and repeats."""
        if isinstance(value, TensorQuery):
            return value.query is Query.SHAPE
        if isinstance(value, Read):
            return value.var in self.size_vars
        if isinstance(value, SeqSlice):
            return self.is_size(value.base)
        if isinstance(value, Host) and value.op is HostOp.MUL and isinstance(value.type, t.SeqT):
            return self.is_size(value.operands[0])
        return value in self.sizes

    def classes_of(self, value: Expr, path: tuple[int, ...]) -> list[tuple[tuple[int, ...], ResultClass]]:
        """Where a returned value holds tuple subclasses Python would build (deepest first), by what made them."""
        while isinstance(value, Read) and value.var in self.values and not self.is_size(value):
            value = self.values[value.var]
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
        if isinstance(value, (ModuleRef, FunctionRef)):
            self.unsupported(Span.of(node) if node is not None else Span(0, 0, 0, 0), value.dotted if isinstance(value, ModuleRef) else value.shown,
                             refusals.MODULE_FUNCTION_VALUE())
            raise _Abandon
        if isinstance(value, Const) and isinstance(value.value, int) and not isinstance(value.value, bool):
            if not hostmath.fits_int64(value.value):
                self.type_problem(value.span, budgets.shown_int(value.value), refusals.INT_DOES_FIT())
                raise _Abandon
        if isinstance(value, (Const, Param, Read)):
            return value
        if isinstance(value, MakeTuple):
            items = tuple(self.atom(i) for i in value.items)
            if all(a is b for a, b in zip(items, value.items)):
                return value
            return self.mark(MakeTuple(items, value.type, value.span, value.aliases), self.kind_of(value))
        assert _is_expr(value), f"{value} has no value a region can hold"  # modules stay names (bind_name)
        return self.mark(self.let(value), self.kind_of(value))

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
            self.unsupported(Span.of(target), display(target), refusals.STARRED_TARGET_MUST())
        else:
            self.unsupported(Span.of(target), display(target),
                             refusals.ASSIGNING_ATTRIBUTE_CHANGES())

    def bind_name(self, name: str, value: Value, renames_after: int | None = None) -> None:
        if isinstance(value, (Poisoned, UntypedParam)):
            self.env[name] = POISON
            return
        if isinstance(value, (ModuleRef, FunctionRef, LibraryModule, BooleanDispatch, KeywordDict)):
            self.env[name] = value  # an alias of a module or function: known at build time
            return
        if renames_after is not None and isinstance(value, Read) and value.var.index > renames_after and self.body \
                and isinstance(self.body[-1], Let) and self.body[-1].var is value.var and not value.var.name:
            # The value was just computed into a temporary that nothing else holds: give it the user's name. (A
            # temporary an earlier statement made may be held by another name's tuple: `t = (x.sum(), 1)`.)
            last = self.body.pop()
            self.env[name] = self.mark(self.let(last.value, name), self.kind_of(value))
            return
        if isinstance(value, (Const, Param, MakeTuple, Read)):
            self.env[name] = self.atom(value)
            return
        assert _is_expr(value), f"{value} has no value a region can hold"
        self.env[name] = self.let(value, name)

    def unpack(self, target: ast.Tuple | ast.List, value: Value, statement: ast.stmt,
               renames_after: int | None = None) -> None:
        if isinstance(value, Poisoned):
            self.bind_poison(target)
            return
        source = self.atom(value, statement)
        starred = [i for i, e in enumerate(target.elts) if isinstance(e, ast.Starred)]
        count = len(target.elts)
        span = Span.of(target)
        if len(starred) > 1:
            self.unsupported(span, display(target), refusals.TWO_STARRED_TARGETS())
            raise _Abandon
        if isinstance(source.type, t.TensorT):
            # Python iterates a tensor as `iter(x.unbind(0))`, after refusing a 0-d one with TypeError.
            rank = self.atom(TensorQuery(source, Query.DIM, (), t.INT, span))
            holds = self.atom(self.host(HostOp.NE, [rank, Const(0, t.INT, span)], span, display(target)))
            self.body.append(Require(holds, PythonException.TYPE_ERROR, ("iteration over a 0-d tensor",), span))
            source = self.atom(self.invoke_method("unbind", source, [], {}, span, display(statement)))
        if isinstance(source.type, t.TupleT):
            items = [_item(source, i) for i in range(len(source.type.items))]
            if starred:
                star = starred[0]
                after = count - star - 1
                if len(items) < count - 1:
                    self.type_problem(span, display(target),
                                      refusals.UNPACKS_VALUES_INTO(items_count=len(items), count=count - 1))
                    raise _Abandon
                middle = items[star:len(items) - after]
                rest = MakeTuple(tuple(middle), t.TupleT(tuple(i.type for i in middle)), span,
                                 frozenset().union(*(i.aliases for i in middle)))
                values = items[:star] + [rest] + items[len(items) - after:]
            else:
                if len(items) != count:
                    self.type_problem(span, display(target),
                                      refusals.UNPACKS_VALUES_INTO_NAMES(items_count=len(items), count=count))
                    raise _Abandon
                values = items
        elif isinstance(source.type, t.SeqT):
            self.body.append(ExpectLength(source, count - len(starred), bool(starred), span))
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
            self.type_problem(span, display(target), refusals.CANNOT_UNPACK(source_type=source.type))
            raise _Abandon
        if renames_after is not None and _repeats_a_variable(values):
            renames_after = None  # `p, q = (x.sum(),) * 2`: both names hold the one temporary
        for element, item in zip(target.elts, values):
            self.assign(element.value if isinstance(element, ast.Starred) else element, item, statement, renames_after)

    def store(self, target: ast.Subscript, value: Value, statement: ast.stmt) -> None:
        base = self.atom(self.expr(target.value), target.value)
        if not isinstance(base.type, t.TensorT):
            self.unsupported(Span.of(target), display(target),
                             refusals.ITEM_ASSIGNMENT_OUTSIDE(type=base.type)
                             if not isinstance(base.type, (t.TupleT, t.SeqT)) else refusals.TUPLES_CANNOT_CHANGE())
            raise _Abandon
        parts = self.index_parts(target.slice)
        item = self.atom(value, statement)
        if not (isinstance(item.type, t.TensorT) or t.is_number(item.type)):
            self.type_problem(Span.of(statement), display(statement), refusals.CANNOT_STORE_INTO(item_type=item.type))
            raise _Abandon
        span = Span.of(statement)
        self.body.append(Store(base, parts, item, span))
        self._record_writes(base.aliases, span, display(statement), WriteKind.STORE)

    def _record_writes(self, params: frozenset[str], span: Span, text: str, kind: WriteKind) -> None:
        for param in sorted(params):
            self.writes.append(Write(param, self._span(span), text, kind))

    def augmented(self, node: ast.AugAssign) -> None:
        span = Span.of(node)
        if isinstance(node.target, ast.Subscript):
            # x[i] += y: x.__setitem__(i, x.__getitem__(i).__iadd__(y)), in that order.
            base = self.atom(self.expr(node.target.value), node.target.value)
            parts = self.index_parts(node.target.slice)
            current = self.atom(self.tensor_index(base, parts, span), node)
            other = self.atom(self.expr(node.value), node.value)
            updated = self.atom(self.operator(node.op, current, other, span, in_place=True, text=display(node)), node)
            if isinstance(base.type, t.TensorT):
                self.body.append(Store(base, parts, updated, span))
                self._record_writes(base.aliases, span, display(node), WriteKind.STORE)
            return
        if not isinstance(node.target, ast.Name):
            self.unsupported(span, display(node.target), refusals.ASSIGNING_ATTRIBUTE_CHANGES())
            raise _Abandon
        first_var = self.vars
        named = self.name(node.target)
        if isinstance(named, Poisoned):
            raise _Abandon
        current_atom = self.atom(named, node.target)
        other = self.atom(self.expr(node.value), node.value)
        if isinstance(current_atom.type, t.TensorT) and TENSOR_INPLACE.get(type(node.op)) is not None:
            # `x += y` on a tensor is Tensor.__iadd__: the same tensor, written in place.
            result = self.operator(node.op, current_atom, other, span, in_place=True, text=display(node))
            self.body.append(Eval(result, span))
            return
        self.bind_name(node.target.id, self.operator(node.op, current_atom, other, span, text=display(node)), first_var)

    def ret(self, node: ast.Return) -> None:
        span = Span.of(node)
        if self.inlining:
            # A helper's return hands its value back to the call being inlined.
            self.returned_value = Const(None, t.NONE, span) if node.value is None else self.expr(node.value)
            self.returned = True
            return
        declared = self.region.returns
        value: Expr | None = None
        if node.value is not None:
            value = self.atom(self.expr(node.value, top=True), node.value)
        self.returned = True
        if declared is None:
            return
        if isinstance(declared, t.NoneT):
            if value is not None and not isinstance(value.type, t.NoneT):
                self.type_problem(span, display(node), refusals.RETURNS_ANNOTATED_NONE(type=value.type))
                raise _Abandon
            self.body.append(Return(None, span))
            return
        if value is None:
            self.type_problem(span, display(node), refusals.RETURNS_NONE_ANNOTATED(declared=declared))
            raise _Abandon
        problem = _assignable(value.type, declared)
        if problem:
            self.type_problem(span, display(node),
                              refusals.RETURNS_WHERE_WAS(type=value.type, declared=declared, problem=problem))
            raise _Abandon
        self.result_classes = tuple(self.classes_of(value, ()))
        self.body.append(Return(value, span))

    # --- expressions --------------------------------------------------------------------

    def expr(self, node: ast.expr, top: bool = False) -> Value:
        """The value of an expression; with ``top``, a call is left for the statement to bind."""
        self.count_step()
        value = self._expr(node)
        if _is_expr(value) and isinstance(value.type, t.TupleT) and self.leaves(value.type) > budgets.MAX_ITEMS:
            self.over_budget(Span.of(node), display(node), Exceeded(Budget.ITEMS, budgets.MAX_ITEMS))
            raise _Abandon
        if isinstance(node, (ast.List, ast.ListComp)):
            self.mark(value, "list")
        elif isinstance(node, ast.Tuple):
            self.mark(value, "tuple")
        if top or isinstance(value, (Poisoned, ModuleRef, FunctionRef, UntypedParam)):
            return value
        if _needs_binding(value):
            return self.mark(self.let(value), self.kind_of(value))
        return value

    def count_step(self) -> None:
        """One more expression evaluated: the region's step budget, and now and then the clock."""
        self.steps += 1
        if self.steps > budgets.MAX_STEPS:
            raise _OutOfBudget(Exceeded(Budget.STEPS, budgets.MAX_STEPS))
        if self.deadline is not None and self.steps % CLOCK_EVERY == 0 and time.monotonic() > self.deadline:
            raise _OutOfBudget(Exceeded(Budget.TIME, budgets.file_seconds()))

    def leaves(self, kind: t.TupleT) -> int:
        """How many items a tuple of this type holds, nested tuples' items counted (each shared type once)."""
        known = self.leaves_of.get(id(kind))
        if known is not None and known[0] is kind:
            return known[1]
        count = sum(self.leaves(item) if isinstance(item, t.TupleT) else 1 for item in kind.items)
        self.leaves_of[id(kind)] = (kind, count)
        return count

    def _expr(self, node: ast.expr) -> Value:
        # Each branch takes the node's span only where it needs it: most names are read from `env` without one.
        if isinstance(node, ast.Constant):
            if isinstance(node.value, (bytes, complex)):
                kind = "complex numbers" if isinstance(node.value, complex) else "bytes"
                return self.unsupported(Span.of(node), repr(node.value), refusals.HAVE_NO_REGION(kind=kind))
            return Const(node.value, hostmath.type_of_value(node.value), Span.of(node))
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.Attribute):
            return self.attribute(node)
        if isinstance(node, ast.Subscript):
            return self.subscript(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.BinOp):
            left = self.expr(node.left)
            right = self.expr(node.right)
            if isinstance(left, (Poisoned, UntypedParam)) or isinstance(right, (Poisoned, UntypedParam)):
                return POISON
            return self.operator(node.op, self.atom(left, node.left), self.atom(right, node.right), Span.of(node),
                                 text=display(node))
        if isinstance(node, ast.UnaryOp):
            return self.unary(node)
        if isinstance(node, ast.Compare):
            return self.compare(node)
        if isinstance(node, (ast.Tuple, ast.List)):
            return self.display_sequence(node)
        if isinstance(node, (ast.IfExp, ast.BoolOp, ast.Dict, ast.ListComp)):
            folded = self.frame.dialect.expression(node)
            if folded is not None:
                return folded
        if isinstance(node, ast.IfExp):
            self.structural(node)
            self.expr(node.test)
            self.expr(node.body)
            self.expr(node.orelse)
            return POISON
        if isinstance(node, ast.BoolOp):
            self.structural(node)
            for value in node.values:
                self.expr(value)
            return POISON
        if isinstance(node, ast.JoinedStr):
            return self.fstring(node)
        if isinstance(node, (ast.Dict, ast.Set)):
            kind = "a dict" if isinstance(node, ast.Dict) else "a set"
            return self.unsupported(Span.of(node), display(node), refusals.NO_REGION_TYPE(kind=kind))
        if isinstance(node, ast.GeneratorExp) and id(node) in self.consumed:
            return self.comprehension(node)
        if isinstance(node, (ast.DictComp, ast.SetComp, ast.ListComp, ast.GeneratorExp, ast.Lambda, ast.NamedExpr)):
            return self.shadow_scope(node)
        if isinstance(node, ast.Starred):
            return self.unsupported(Span.of(node), display(node), refusals.UNPACKING_BELONGS_CALL())
        if isinstance(node, ast.Slice):
            return self.unsupported(Span.of(node), display(node), refusals.SLICE_BELONGS_INSIDE())
        # lambda, walrus, await, yield: the syntax rule reports them.
        self.structural(node)
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
            return self.unsupported(Span.of(node), display(node), refusals.F_STRING_BUILDS())
        if sum(map(len, parts)) > budgets.MAX_TEXT:
            return self.over_budget(Span.of(node), display(node), Exceeded(Budget.TEXT, budgets.MAX_TEXT))
        return Const("".join(parts), t.STR, Span.of(node))

    # --- names ----------------------------------------------------------------------------

    def name(self, node: ast.Name) -> Value:
        name = node.id
        if name in self.env:
            self.frame.lists.discard(name)  # now referred to from elsewhere: it must not change any more
            return self.env[name]
        if name in self.frame.locals:
            return self.type_problem(Span.of(node), name, refusals.USED_BEFORE_ASSIGNED(name=name))
        return self.free_name(node)

    def free_name(self, node: ast.Name) -> Value:
        """Python's order: enclosing functions, then the module, then builtins; what the model took a name of the
        module or a builtin to be is recorded (``assume``), since Python reads it again at every call."""
        value = self.module_name(node)
        if self.frame.dialect.records_assumptions and not any(node.id in names for _, names in self.frame.enclosing):
            self.assume(self.frame.path, node.id, value)
        return value

    def assume(self, namespace: str, name: str, value: Value) -> None:
        """Record what the model took ``name`` in ``namespace`` (a file, or ``module:<dotted>``) to be."""
        scope = self.frame.scope
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
            self.assumptions.setdefault((namespace, name), Assumption(namespace, name, *expected))

    def module_name(self, node: ast.Name) -> Value:
        name = node.id
        span = Span.of(node)
        for scope_name, names in reversed(self.frame.enclosing):
            if name in names:
                return self.capture(span, name, CaptureOrigin.CLOSURE, scope_name)
        scope = self.frame.scope
        if name in scope.imports:
            target = scope.imports[name]
            if name in scope.modules:
                if self.frame.dialect.reads_torch_source and target != "torch":
                    if torch_python.shipped(target):
                        return LibraryModule(target)
                if target.split(".")[0] not in ("torch", "math", "builtins", "einops"):
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
                if self.frame.dialect.reads_torch_source:
                    return self.library_function(f"{torch_python.module_of(self.frame.path)}.{name}", binding.node,
                                                 scope, name)
                return FunctionRef(f"<module>.{name}", name, Helper(binding.node, scope, self.frame.path))
            if self.frame.dialect.reads_torch_source and binding.kind is BindingKind.VALUE and binding.value is not None:
                return self.library_binding(binding.value, span, name)
            if self.frame.dialect.reads_torch_source and binding.kind is BindingKind.VALUE:
                # Defined more than once (`@overload` stubs, then the definition that runs).
                module = torch_python.module(torch_python.module_of(self.frame.path))
                definition = torch_python.function(module, name) if module is not None else None
                if definition is not None:
                    return self.library_function(f"{torch_python.module_of(self.frame.path)}.{name}", definition,
                                                 scope, name)
            if binding.kind in (BindingKind.FUNCTION, BindingKind.CLASS):
                return FunctionRef(f"<module>.{name}", name)
            if binding.rebound is not None and self.frame.dialect.refuses_rebound_names:
                return self.rebound_capture(span, name, binding.rebound)
            return self.capture(span, name, CaptureOrigin.GLOBAL, str(binding.line))
        if name in BUILTIN_NAMES:
            if scope.star_imports and self.frame.dialect.refuses_rebound_names:
                return self.rebound_capture(span, name, scope.star_imports[0])  # it may be what the import binds
            if f"builtins.{name}" in scope.patched and self.frame.dialect.refuses_rebound_names:
                return self.rebound_capture(span, name, scope.patched[f"builtins.{name}"])
            return FunctionRef(f"builtins.{name}", name)
        return self.capture(span, name, CaptureOrigin.UNDEFINED, "")

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
            return self.host(BINARY_OPS[type(node.op)], [left, right], span, display(node))
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
        if self.frame.dialect.reads_torch_source and dotted in LIBRARY_CONSTANTS:
            answer = LIBRARY_CONSTANTS[dotted]
            return Const(answer, hostmath.type_of_value(answer), span)
        if root == "torch" and self.frame.dialect.reads_torch_source:
            if torch_python.shipped(dotted):
                return LibraryModule(dotted)
        if root in ("torch", "math", "builtins", "einops"):
            return FunctionRef(dotted, shown)
        project_found = self.project_value(dotted, shown)
        if project_found is not None:
            return project_found
        oracle = self.region.oracle
        module, _, _ = dotted.rpartition(".")
        if oracle is not None and oracle.module_variable(dotted):
            return self.capture(span, shown, CaptureOrigin.IMPORTED, module)
        if oracle is None and "." in shown:
            return self.unsupported(span, shown, refusals.VALUE_REGION_READ(), attribute=True)
        if "." not in shown:
            return self.capture(span, shown, CaptureOrigin.IMPORTED, module)
        return FunctionRef(dotted, shown)

    def library_binding(self, value: ast.expr, span: Span, name: str) -> Value:
        """A module-level name of torch's Python code: an alias of a builtin (``logsigmoid = _add_docstr(
        torch._C._nn.log_sigmoid, ...)``) or a ``boolean_dispatch`` between two functions."""
        if isinstance(value, (ast.Name, ast.Attribute)):
            return self.expr(value)
        if isinstance(value, ast.Call) and value.args:
            called = self.frame.scope.resolve(value.func)
            if called is not None and called.endswith("_add_docstr"):
                return self.expr(value.args[0])
        if isinstance(value, ast.Call) and (self.frame.scope.resolve(value.func) or "").endswith("boolean_dispatch"):
            fields = {k.arg: k.value for k in value.keywords if k.arg}
            arg_name, arg_index, default = (fields.get(f) for f in ("arg_name", "arg_index", "default"))
            if_true, if_false = fields.get("if_true"), fields.get("if_false")
            if isinstance(arg_name, ast.Constant) and isinstance(arg_name.value, str) and \
                    isinstance(arg_index, ast.Constant) and isinstance(arg_index.value, int) and \
                    isinstance(default, ast.Constant) and isinstance(if_true, ast.Name) and isinstance(if_false, ast.Name):
                return BooleanDispatch(arg_name.value, arg_index.value, bool(default.value), if_true.id, if_false.id,
                                       self.frame.scope, self.frame.path)
        return self.unsupported(span, name, refusals.READS_MODULE_LEVEL())

    def dispatch(self, chooser: BooleanDispatch, args: list[Argument], keywords: dict[str, Expr], span: Span,
                 shown: str) -> Value:
        """Which of a ``boolean_dispatch``'s functions runs: the flag must be known here."""
        flag: Expr | None = keywords.get(chooser.arg_name)
        if flag is None and len(args) > chooser.arg_index and not any(a.spread for a in args):
            flag = args[chooser.arg_index].value
        if flag is None:
            flag = Const(chooser.default, t.BOOL, span)
        if not isinstance(flag, Const):
            return self.unsupported(span, shown, refusals.MUST_LITERAL(chooser_arg_name=chooser.arg_name))
        chosen = chooser.if_true if flag.value else chooser.if_false
        binding = chooser.scope.bindings.get(chosen)
        if binding is not None and isinstance(binding.node, ast.FunctionDef):
            return self.inline(Helper(binding.node, chooser.scope, chooser.path, library=True), args, keywords, span,
                               shown)
        if binding is not None and binding.value is not None:
            # One dispatch choosing another (`unique` picks `_return_output`, itself a dispatch on `return_counts`).
            inner = self.library_frame_value(binding.value, chooser.scope, chooser.path, chosen)
            if isinstance(inner, BooleanDispatch):
                return self.dispatch(inner, args, keywords, span, shown)
        return self.unsupported(span, shown, refusals.TORCH_BOOLEAN_DISPATCH())

    def ntuple(self, count: int, args: list[Argument], span: Span, shown: str) -> Expr:
        """``_pair(x)``: a sequence as it is, anything else repeated ``count`` times."""
        if len(args) != 1 or args[0].spread:
            self.type_problem(span, shown, refusals.TAKES_ONE_ARGUMENT())
            raise _Abandon
        value = args[0].value
        if isinstance(value.type, (t.TupleT, t.SeqT)):
            return value
        return MakeTuple((value,) * count, t.TupleT((value.type,) * count), span)

    def isinstance_of(self, node: ast.Call) -> Value:
        """``isinstance(x, ...)`` in torch's Python code: known from the model's type of ``x``, or refused."""
        if len(node.args) != 2 or node.keywords:
            return self.unsupported(Span.of(node), self.frame.called_as, refusals.ISINSTANCE_OTHER_THAN())
        value = self.expr(node.args[0])
        if not isinstance(value, Expr):
            return self.unsupported(Span.of(node), self.frame.called_as,
                                    refusals.ISINSTANCE_OTHER_THAN_2(node=display(node)))
        classes = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
        names = {self.frame.scope.resolve(c) or display(c) for c in classes}
        if torch_python.module_of(self.frame.path) == "torch._tensor":
            names = {"torch.Tensor" if n == "Tensor" else n for n in names}  # the class torch/_tensor.py defines
        names = {n if "." in n else f"builtins.{n}" for n in names}
        answer = _isinstance_answer(value.type, frozenset(names), self.kind_of(value))
        if answer is None:
            return self.unsupported(Span.of(node), self.frame.called_as,
                                    refusals.LIBRARY_TESTS(node=display(node)))
        return Const(answer, t.BOOL, Span.of(node))

    def library_function(self, dotted: str, node: ast.FunctionDef, scope: ModuleScope, name: str) -> FunctionRef:
        """A function of torch's Python code, or ppy's straight-line version of it where torch's loops."""
        replaced = torch_python.override(dotted)
        if replaced is not None:
            node, module = replaced
            return FunctionRef(dotted, name, Helper(node, module.scope, module.path, library=True))
        return FunctionRef(dotted, name, Helper(node, scope, self.frame.path, library=True))

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
        saved = self.frame
        self.frame = Frame(frozenset(), [], m.message(m.IN_TORCH, name=name).render(), value, scope, path,
                           self.library_dialect,
                           saved.called_as or name)
        try:
            return self.library_binding(value, Span.of(value), name)
        except _LibraryRefused:
            return None
        finally:
            self.frame = saved

    def project_value(self, dotted: str, shown: str) -> Value | None:
        """A module or function of the project's own files, found without importing (imports.py)."""
        from ppy_check.imports import find_module, load_file

        path = find_module(self.frame.path, dotted)
        if path is not None:
            return ProjectModule(path, dotted)
        module_name, _, name = dotted.rpartition(".")
        path = find_module(self.frame.path, module_name) if module_name else None
        found = load_file(path) if path is not None else None
        if path is None or found is None or found.module.tree is None:
            return None
        module = found.module
        binding = module.scope.bindings.get(name)
        if binding is None or binding.kind is not BindingKind.FUNCTION or not isinstance(binding.node, ast.FunctionDef):
            return None
        if path not in self.dependencies and path != self.region.site.path:
            self.dependencies[path] = found.source.digest  # of the bytes this helper was parsed from
        return FunctionRef(dotted, shown, Helper(binding.node, module.scope, path))

    # --- attributes ---------------------------------------------------------------------

    def attribute(self, node: ast.Attribute) -> Value:
        span = Span.of(node)
        if isinstance(node.value, ast.Call) and node.attr in FINFO_ATTRIBUTES:
            made = _strip_dotted(self.frame.scope.resolve(node.value.func) or "")
            if made == "torch.iinfo" and node.attr in ("min", "max"):
                return self.iinfo(node.value, node.attr)
            if made == "torch.finfo":
                return self.finfo(node.value, node.attr)
        base = self.expr(node.value)
        if isinstance(base, Poisoned):
            return POISON
        if isinstance(base, ModuleRef) and self.frame.dialect.refuses_rebound_names and \
                f"{base.dotted}.{node.attr}" in self.frame.scope.patched:
            return self.rebound_capture(span, display(node), self.frame.scope.patched[f"{base.dotted}.{node.attr}"])
        if isinstance(base, ModuleRef):
            found = self.dotted_value(_strip_dotted(f"{base.dotted}.{node.attr}"), span, display(node))
            if self.frame.dialect.records_assumptions:
                self.assume(f"module:{base.dotted}", node.attr, found)
            return found
        if isinstance(base, LibraryModule):
            return FunctionRef(f"{base.dotted}.{node.attr}", display(node))
        if isinstance(base, ProjectModule):
            member = self.project_value(f"{base.dotted}.{node.attr}", display(node))
            if member is None:
                return self.capture(span, display(node), CaptureOrigin.IMPORTED, base.dotted)
            self.assume(base.path, node.attr, member)
            return member
        if isinstance(base, FunctionRef) and base.helper is None and base.dotted.startswith("torch."):
            # torch's Python code reads its own submodules (`torch.jit.is_scripting`, `torch.backends.cudnn`).
            return self.dotted_value(_strip_dotted(f"{base.dotted}.{node.attr}"), span, display(node))
        if isinstance(base, FunctionRef):
            return self.unsupported(span, display(node), refusals.ATTRIBUTE_FUNCTION(), attribute=True)
        if isinstance(base, UntypedParam):
            return self.capture(span, base.name, CaptureOrigin.ATTRIBUTE, node.attr)
        value = self.atom(base, node.value)
        kind = t.strip_optional(value.type)
        if isinstance(kind, t.TupleT) and kind.names and node.attr in kind.names:
            return _item(value, kind.names.index(node.attr))
        if isinstance(kind, t.TensorT):
            if isinstance(value.type, t.OptionalT):
                value = self.unwrap(value, display(node.value), span)
            return self.tensor_property(value, node.attr, span, display(node))
        if isinstance(kind, t.FunctionT) and node.attr == "__name__":
            return Const(kind.name, t.STR, span)
        if isinstance(kind, t.DeviceT) and node.attr == "type":
            return Host(HostOp.DEVICE_TYPE, (value,), t.STR, span)
        if isinstance(kind, t.DtypeT) and node.attr in DTYPE_TESTS:
            if isinstance(value, Const):
                return Const(value.value.scalar_type in DTYPE_TESTS[node.attr], t.BOOL, span)
            return Host(HostOp.DTYPE_IS, (value,), t.BOOL, span, function=node.attr)
        if isinstance(kind, t.DtypeT) and node.attr == "itemsize":
            return self.unsupported(span, display(node), refusals.DTYPE_PROPERTIES_COMPILED(), attribute=True)
        return self.unsupported(span, display(node),
                                refusals.DTYPE_PROPERTIES_COMPILED_2(type=value.type), attribute=True)

    def iinfo(self, node: ast.Call, bound: str) -> Value:
        """``torch.iinfo(dtype).min`` (or ``.max``): the bound of an integer dtype, which may be known only at run
        time (TypeError for another dtype, as Python raises)."""
        span = Span.of(node)
        args, keywords = self.arguments(node)
        if args is None:
            return POISON
        if len(args) != 1 or args[0].spread or keywords or not isinstance(args[0].value.type, t.DtypeT):
            return self.unsupported(span, display(node), refusals.TORCH_IINFO_ANYTHING())
        dtype = args[0].value
        if isinstance(dtype, Const) and dtype.value.scalar_type in INTEGER_BOUNDS:
            return Const(INTEGER_BOUNDS[dtype.value.scalar_type][bound == "max"], t.INT, span)
        return Host(HostOp.IINFO, (dtype,), t.INT, span, function=bound)

    def finfo(self, node: ast.Call, attribute: str) -> Value:
        """``torch.finfo(dtype).min`` (``.eps``, ``.tiny``...): a number of a floating dtype, read when the region
        runs (the dtype is often a tensor's); no dtype is torch's default. TypeError for another dtype, as Python."""
        span = Span.of(node)
        args, keywords = self.arguments(node)
        if args is None:
            return POISON
        if keywords or len(args) > 1 or any(a.spread or not isinstance(a.value.type, t.DtypeT) for a in args):
            return self.unsupported(span, display(node), refusals.TORCH_FINFO_ANYTHING())
        dtype = args[0].value if args else self.let(Host(HostOp.DEFAULT_DTYPE, (), t.DTYPE, span))
        return Host(HostOp.FINFO, (dtype,), t.INT if attribute == "bits" else t.FLOAT, span, function=attribute)

    def tensor_property(self, base: Expr, attr: str, span: Span, shown: str) -> Value:
        if attr in LAYOUT_PROPERTIES and self.strided(base):
            return Const(LAYOUT_PROPERTIES[attr], t.LAYOUT if attr == "layout" else t.BOOL, span)
        if attr in TENSOR_PROPERTIES:
            query, kind = TENSOR_PROPERTIES[attr]
            return TensorQuery(base, query, (), kind, span)
        if attr in VIEW_PROPERTIES:
            return self.invoke_method(VIEW_PROPERTIES[attr], base, [], {}, span, shown)
        if attr in VIEW_FUNCTIONS:
            return self.invoke_function(VIEW_FUNCTIONS[attr], [Argument(base)], {}, span, shown)
        if attr == "data":
            return VariableData(base, t.TENSOR, span, base.aliases)
        if attr in PROPERTY_REFUSALS:
            return self.unsupported(span, shown, PROPERTY_REFUSALS[attr](), attribute=True)
        if attr in self.data.properties:
            return self.unsupported(span, shown, refusals.TENSOR_PROPERTY_PPY(), attribute=True)
        if self.data.has_method(attr) or attr in QUERY_METHODS:
            return self.unsupported(span, shown, refusals.TENSOR_METHOD_CALL(attr=attr), attribute=True)
        return self.unsupported(span, shown, refusals.TENSOR_ATTRIBUTE_PPY(), attribute=True)

    def strided(self, value: Expr) -> bool:
        """Whether a tensor is certainly strided (dense), so that torch's decisions on its layout fold: a tensor
        parameter is (the compiled entry runs the Python body for a sparse or other one), and so is what an
        operator computes from strided tensors, unless the operator makes another layout (its name says so, or it
        takes a `layout`)."""
        if isinstance(value, Param):
            return _carries_tensors(value.type)
        if isinstance(value, Read):
            if value.var in self.strided_vars:
                return True
            known = self.values.get(value.var)
            return known is not None and self.strided(known)
        if isinstance(value, (Unwrap, Item, TensorIndex, SeqIndex)):
            return self.strided(value.base)
        if isinstance(value, MakeTuple):
            return all(self.strided(item) for item in value.items if _carries_tensors(item.type))
        if isinstance(value, Call):
            if any(word in value.native.name for word in _OTHER_LAYOUTS):
                return False
            for key, argument in value.args:
                if argument is None or not _carries_tensors(argument.type) and key != "layout":
                    continue
                if key == "layout":
                    if not (isinstance(argument, Const) and argument.value in (None, STRIDED)):
                        return False
                elif not self.strided(argument):
                    return False
            return True
        return False

    def unwrap(self, value: Expr, what: str, span: Span) -> Expr:
        """An optional used where a value is needed: the run time raises TypeError for None, as Python would."""
        if not isinstance(value.type, t.OptionalT):
            return value
        return self.let(Unwrap(value, what, value.type.inner, span, value.aliases))

    # --- subscripts ---------------------------------------------------------------------

    def subscript(self, node: ast.Subscript) -> Value:
        span = Span.of(node)
        if isinstance(node.value, ast.Name) and node.value.id in self.frame.lists:
            base = self.env[node.value.id]  # an item of a list torch's Python code is building
        else:
            base = self.expr(node.value)
        if isinstance(base, Poisoned):
            return POISON
        base = self.atom(base, node.value)
        kind = base.type
        if isinstance(kind, t.OptionalT):
            base = self.unwrap(base, display(node.value), span)
            kind = base.type
        if isinstance(kind, t.TensorT):
            return self.tensor_index(base, self.index_parts(node.slice), span)
        if isinstance(kind, (t.TupleT, t.SeqT)):
            return self.sequence_index(base, node.slice, span)
        return self.type_problem(span, display(node), refusals.CANNOT_INDEXED(kind=kind))

    def sequence_index(self, base: Expr, index_node: ast.expr, span: Span) -> Value:
        kind = base.type
        if isinstance(index_node, ast.Slice):
            bounds = [None if p is None else self.atom(self.expr(p), p) for p in
                      (index_node.lower, index_node.upper, index_node.step)]
            for bound in bounds:
                # An `int | None` bound is taken as it is: None is the bound's default, as in Python.
                if bound is not None and not isinstance(bound.type, (t.IntT, t.NoneT)) and not (
                        isinstance(bound.type, t.OptionalT) and isinstance(bound.type.inner, t.IntT)):
                    return self.type_problem(span, display(index_node),
                                             refusals.SLICE_BOUNDS_MUST(bound_type=bound.type))
            if isinstance(kind, t.TupleT) and all(b is None or isinstance(b, Const) for b in bounds):
                items = [_item(base, i) for i in range(len(kind.items))]
                try:
                    picked = items[slice(*(b.value if isinstance(b, Const) else None for b in bounds))]
                except ValueError as error:  # a step of 0
                    return self.type_problem(span, display(index_node), refusals.ALWAYS_RAISES_VALUEERROR(error=error))
                return self.mark(MakeTuple(tuple(picked), t.TupleT(tuple(i.type for i in picked)), span,
                                           frozenset().union(*(i.aliases for i in picked))), self.kind_of(base))
            seq_type = t.SeqT(t.element_type(kind) or t.INT) if isinstance(kind, t.TupleT) else kind
            if isinstance(kind, t.TupleT) and t.element_type(kind) is None:
                return self.type_problem(span, display(index_node), refusals.TUPLE_MIXED_TYPES())
            lower, upper, step = bounds
            return SeqSlice(self.as_sequence(base), lower, upper, step, seq_type, span, base.aliases)
        index = self.atom(self.expr(index_node), index_node)
        if not isinstance(index.type, (t.IntT, t.BoolT)):
            return self.type_problem(span, display(index_node), refusals.SEQUENCE_INDEX_MUST(index_type=index.type))
        if isinstance(kind, t.TupleT):
            if isinstance(index, Const):
                position = int(index.value)
                if -len(kind.items) <= position < len(kind.items):
                    return _item(base, position % len(kind.items))
                return self.type_problem(span, display(index_node),
                                         refusals.INDEX_OUT_RANGE(position=position, kind_items_count=len(kind.items)))
            element = t.element_type(kind)
            if element is None:
                return self.type_problem(span, display(index_node), refusals.TUPLE_MIXED_TYPES_INDEXED())
            return SeqIndex(self.as_sequence(base), index, element, span, base.aliases)
        assert isinstance(kind, t.SeqT)  # the callers index only tuples and sequences
        return SeqIndex(base, index, kind.item, span, base.aliases)

    def as_sequence(self, value: Expr) -> Expr:
        """A tuple of one item type as a run-time sequence."""
        if isinstance(value.type, t.SeqT):
            return value
        assert isinstance(value.type, t.TupleT)
        element = t.element_type(value.type)
        items = tuple(_item(value, i) for i in range(len(value.type.items)))
        return MakeSeq(tuple((i, False) for i in items), t.SeqT(element or t.INT), value.span, value.aliases)

    def index_parts(self, node: ast.expr) -> tuple[IndexPart, ...]:
        """Python indexing, part by part: ints, slices, None, ..., tensors, and lists of ints (advanced indexing)."""
        elements = node.elts if isinstance(node, ast.Tuple) else [node]
        parts: list[IndexPart] = []
        for element in elements:
            if isinstance(element, ast.Slice):
                bounds: list[Expr | None] = []
                for bound in (element.lower, element.upper, element.step):
                    if bound is None:
                        bounds.append(None)
                        continue
                    value = self.atom(self.expr(bound), bound)
                    # An `int | None` bound stays optional: None is the bound's default (`x[a:b]`, `a = None`).
                    if isinstance(value.type, t.OptionalT) and not isinstance(value.type.inner, t.IntT):
                        value = self.unwrap(value, display(bound), Span.of(bound))
                    if not isinstance(value.type, (t.IntT, t.NoneT)) and not (
                            isinstance(value.type, t.OptionalT) and isinstance(value.type.inner, t.IntT)):
                        self.type_problem(Span.of(bound), display(bound),
                                          refusals.SLICE_BOUNDS_MUST_INTS(type=value.type))
                        raise _Abandon
                    bounds.append(value)
                parts.append(SliceIndex(*bounds))
                continue
            if isinstance(element, ast.List):
                parts.append(self.index_list(element))
                continue
            value = self.atom(self.expr(element), element)
            values = [_item(value, i) for i in range(len(value.type.items))] if isinstance(value.type, t.TupleT) \
                and not isinstance(node, ast.Tuple) else [value]
            for value in values:
                if isinstance(value.type, t.OptionalT) and not isinstance(value, Const):
                    value = self.unwrap(value, display(element), Span.of(element))
                if not isinstance(value.type, (t.IntT, t.BoolT, t.TensorT, t.NoneT, t.EllipsisT)):
                    self.type_problem(Span.of(element), display(element), refusals.CANNOT_INDEX_TENSOR(type=value.type))
                    raise _Abandon
                parts.append(value)
        return tuple(parts)

    def index_list(self, node: ast.List) -> IndexList:
        """``x[[0, 1]]``: Python makes an index tensor of the list (ints, or bools as a mask)."""
        items = [self.atom(self.expr(e), e) for e in node.elts]
        ints = all(isinstance(i.type, t.IntT) for i in items)
        if not items or not (ints or all(isinstance(i.type, t.BoolT) for i in items)):
            self.type_problem(Span.of(node), display(node), refusals.INDEX_LIST_MUST())
            raise _Abandon
        return IndexList(tuple(items), boolean=not ints)

    def tensor_index(self, base: Expr, parts: tuple[IndexPart, ...], span: Span) -> Expr:
        # Basic indexing returns a view of the tensor; advanced indexing a copy.
        view = all(isinstance(p, SliceIndex) or (not isinstance(p, IndexList) and not isinstance(p.type, t.TensorT))
                   for p in parts)
        return TensorIndex(base, parts, t.TENSOR, span, base.aliases if view else frozenset())

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
                return self.type_problem(Span.of(element), display(element),
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
                self.type_problem(span, "tuple", refusals.JOINS_TUPLES_MIXED())
                raise _Abandon
            kinds.append(element)
        element = kinds[0] if len(set(kinds)) == 1 else (t.join_numbers(*kinds) if all(t.is_number(k) for k in kinds) else None)
        if element is None:
            self.type_problem(span, "tuple", refusals.JOINS_TUPLES_MIXED())
            raise _Abandon
        return MakeSeq(tuple(parts), t.SeqT(element), span, frozenset().union(*(v.aliases for v, _ in parts)))

    # --- operators ------------------------------------------------------------------------

    def operator(self, op: ast.operator, left: Expr, right: Expr, span: Span, in_place: bool = False,
                 text: str = "") -> Expr:
        """``left <op> right`` as Python evaluates it: a tensor operator, number arithmetic or tuple joining."""
        left = self.unwrap(left, "operand", span) if isinstance(left.type, t.OptionalT) else left
        right = self.unwrap(right, "operand", span) if isinstance(right.type, t.OptionalT) else right
        if isinstance(left.type, t.TensorT) or isinstance(right.type, t.TensorT):
            return self.tensor_operator(op, left, right, span, in_place, text)
        if isinstance(left.type, (t.TupleT, t.SeqT)) or isinstance(right.type, (t.TupleT, t.SeqT)):
            return self.sequence_operator(op, left, right, span, text)
        if isinstance(left.type, t.StrT) and isinstance(right.type, t.StrT) and isinstance(op, ast.Add) \
                and isinstance(left, Const) and isinstance(right, Const):
            if len(left.value) + len(right.value) > budgets.MAX_TEXT:
                self.over_budget(span, text, Exceeded(Budget.TEXT, budgets.MAX_TEXT))
                raise _Abandon
            return Const(left.value + right.value, t.STR, span)
        host = BINARY_OPS.get(type(op))
        if host is None:
            self.type_problem(span, text,
                              refusals.DOES_TAKE(operator_names=OPERATOR_NAMES[type(op)], left_type=left.type, right_type=right.type))
            raise _Abandon
        return self.host(host, [left, right], span, text)

    def host(self, op: HostOp, operands: list[Expr], span: Span, text: str, function: str = "",
             kind: t.Type | None = None) -> Expr:
        """Scalar arithmetic: folded when every operand is a literal, else computed on the host."""
        if kind is None:
            try:
                if len(operands) == 2:
                    right = operands[1]
                    kind = hostmath.binary_type(op, operands[0].type, right.type,
                                                right.value if isinstance(right, Const) else None)
                else:
                    kind = hostmath.unary_type(op, operands[0].type)
            except hostmath.HostTypeError as error:
                self.type_problem(span, text, refusals.HOST_TYPE_ERROR(error=error))
                raise _Abandon from None
        if all(isinstance(o, Const) for o in operands):
            try:
                value = hostmath.fold(op, [o.value for o in operands if isinstance(o, Const)], function)  # all are
            except budgets.FoldTooLarge as error:
                self.over_budget(span, text, error.exceeded)
                raise _Abandon from None
            except (ArithmeticError, ValueError) as error:
                self.type_problem(span, text, refusals.ALWAYS_RAISES(error_type=type(error).__name__, error=error))
                raise _Abandon from None
            return Const(value, hostmath.type_of_value(value), span)
        return Host(op, tuple(operands), kind, span, function)

    def sequence_operator(self, op: ast.operator, left: Expr, right: Expr, span: Span, text: str) -> Expr:
        seq_left = isinstance(left.type, (t.TupleT, t.SeqT))
        seq_right = isinstance(right.type, (t.TupleT, t.SeqT))
        if isinstance(op, ast.Add) and seq_left and seq_right:
            kind = self.kind_of(left)
            joined = self.concatenate([(left, True), (right, True)], span)
            if self.is_size(left) or self.is_size(right):
                self.sizes.add(joined)  # torch.Size + tuple, and tuple + torch.Size, is a torch.Size
            return self.mark(joined, kind if kind == self.kind_of(right) else None)
        if isinstance(op, ast.Mult) and (seq_left != seq_right):
            sequence, count = (left, right) if seq_left else (right, left)
            if not isinstance(count.type, (t.IntT, t.BoolT)):
                self.type_problem(span, text, refusals.TUPLE_REPEATED(count_type=count.type))
                raise _Abandon
            if isinstance(sequence.type, t.TupleT) and isinstance(count, Const):
                if self.leaves(sequence.type) * int(count.value) > budgets.MAX_ITEMS:
                    self.over_budget(span, text, Exceeded(Budget.ITEMS, budgets.MAX_ITEMS))
                    raise _Abandon
                items = [_item(sequence, i) for i in range(len(sequence.type.items))] * max(int(count.value), 0)
                return MakeTuple(tuple(items), t.TupleT(tuple(i.type for i in items)), span, sequence.aliases)
            seq = self.as_sequence(sequence) if isinstance(sequence.type, t.TupleT) else sequence
            if isinstance(sequence.type, t.TupleT) and t.element_type(sequence.type) is None:
                self.type_problem(span, text, refusals.TUPLE_MIXED_TYPES_REPEATED())
                raise _Abandon
            return Host(HostOp.MUL, (seq, count), seq.type, span, aliases=seq.aliases)
        self.type_problem(span, text,
                          refusals.DOES_TAKE(operator_names=OPERATOR_NAMES[type(op)], left_type=left.type, right_type=right.type))
        raise _Abandon

    def tensor_operator(self, op: ast.operator, left: Expr, right: Expr, span: Span, in_place: bool, text: str) -> Expr:
        symbol = OPERATOR_NAMES[type(op)]
        if in_place and isinstance(left.type, t.TensorT) and TENSOR_INPLACE.get(type(op)) is None:
            in_place = False  # no `Tensor.__imatmul__`: Python computes `x @ y` and rebinds the target
        if in_place:
            method = TENSOR_INPLACE.get(type(op))
            if method is None or not isinstance(left.type, t.TensorT):
                self.type_problem(span, text,
                                  refusals.DOES_TAKE_2(symbol=symbol, left_type=left.type, right_type=right.type))
                raise _Abandon
            return self.invoke_method(method, left, [Argument(right)], {}, span, text, write_kind=WriteKind.STORE)
        method = TENSOR_BINARY[type(op)]
        if isinstance(left.type, t.TensorT):
            return self.invoke_method(method, left, [Argument(right)], {}, span, text)
        # A number on the left: Tensor's reflected operators (torch/_tensor.py).
        if method in ("add", "mul", "__and__", "__or__", "__xor__"):
            return self.invoke_method(method, right, [Argument(left)], {}, span, text)
        if method == "sub":
            return self.invoke_function("rsub", [Argument(right), Argument(left)], {}, span, text)
        if method == "div":
            reciprocal = self.atom(self.invoke_method("reciprocal", right, [], {}, span, text))
            return self.invoke_method("mul", reciprocal, [Argument(left)], {}, span, text)
        if method in ("floor_divide", "remainder", "pow"):
            return self.invoke_function(method, [Argument(left), Argument(right)], {}, span, text)
        if method in ("__lshift__", "__rshift__"):  # Tensor.__rlshift__ and __rrshift__
            shift = "bitwise_left_shift" if method == "__lshift__" else "bitwise_right_shift"
            return self.invoke_function(shift, [Argument(left), Argument(right)], {}, span, text)
        self.type_problem(span, text, refusals.LEFT_TENSOR(left_type=left.type, symbol=symbol))
        raise _Abandon

    def unary(self, node: ast.UnaryOp) -> Value:
        span = Span.of(node)
        value = self.expr(node.operand)
        if isinstance(value, Poisoned):
            return POISON
        operand = self.atom(value, node.operand)
        if isinstance(operand.type, t.OptionalT) and not isinstance(node.op, ast.Not):
            operand = self.unwrap(operand, display(node.operand), span)
        if isinstance(operand.type, t.TensorT):
            if isinstance(node.op, ast.Not):
                return self.unsupported(span, display(node), refusals.READS_TENSOR_VALUE())
            if isinstance(node.op, ast.Invert):
                self.require_integral(operand, span)
            method = {ast.USub: "neg", ast.Invert: "bitwise_not", ast.UAdd: "positive"}[type(node.op)]
            return self.invoke_method(method, operand, [], {}, span, display(node))
        if isinstance(node.op, ast.Not) and isinstance(operand.type, t.OptionalT):
            return IsNone(operand, False, t.BOOL, span)
        if isinstance(node.op, ast.Not) and isinstance(operand.type, t.TupleT):
            return Const(not operand.type.items, t.BOOL, span)  # `not sizes`: empty or not, known here
        if isinstance(node.op, ast.Not) and isinstance(operand.type, t.SeqT):
            return self.host(HostOp.EQ, [self.atom(Length(operand, t.INT, span)), Const(0, t.INT, span)], span,
                             display(node))
        op = {ast.USub: HostOp.NEG, ast.UAdd: HostOp.POS, ast.Invert: HostOp.INVERT, ast.Not: HostOp.NOT}[type(node.op)]
        if op is HostOp.NOT and not t.is_number(operand.type):
            return self.unsupported(span, display(node), refusals.READS_TENSOR_VALUE_2(operand_type=operand.type))
        return self.host(op, [operand], span, display(node))

    def require_integral(self, operand: Expr, span: Span) -> None:
        """``~x`` is Tensor.__invert__, which refuses a floating or complex tensor with TypeError before it
        dispatches (torch's python_variable_methods.cpp), where ``bitwise_not`` would raise NotImplementedError."""
        for query in (Query.IS_FLOATING_POINT, Query.IS_COMPLEX):
            kind = self.atom(TensorQuery(operand, query, (), t.BOOL, span))
            holds = self.atom(self.host(HostOp.NOT, [kind], span, "~"))
            self.body.append(Require(holds, PythonException.TYPE_ERROR, (INVERT_REFUSED,), span))

    def compare(self, node: ast.Compare) -> Value:
        span = Span.of(node)
        operands = [self.expr(node.left)] + [self.membership(c) if isinstance(op, (ast.In, ast.NotIn)) else
                                             self.expr(c) for op, c in zip(node.ops, node.comparators)]
        if any(isinstance(o, Poisoned) for o in operands):
            return POISON
        values = [self.atom(o, n) for o, n in zip(operands, [node.left, *node.comparators])]
        if len(node.ops) > 1 and any(isinstance(v.type, t.TensorT) for v in values):
            # `a < x < b` on tensors is `and`, which reads the tensor's value: a branch.
            self.problems.branches.append((self._span(span), display(node)))
            self.complete = False
            return POISON
        results = []
        for op, left, right in zip(node.ops, values, values[1:]):
            results.append(self.atom(self.compare_pair(op, left, right, span, display(node)), node))
        if len(results) == 1:
            return results[0]
        return self.host(HostOp.ALL, results, span, display(node), kind=t.BOOL)

    def membership(self, node: ast.expr) -> Value:
        """What `in` tests in torch's Python code: a list it is building, read without letting it escape (it may
        still grow), or a set display as the tuple of its items (of numbers, strings and dtypes, whose hashes agree
        with their equality)."""
        if not self.frame.dialect.models_python_data:
            return self.expr(node)
        if isinstance(node, ast.Name) and node.id in self.frame.lists:
            return self.env[node.id]
        if not isinstance(node, ast.Set):
            return self.expr(node)
        items = [self.atom(self.expr(item), item) for item in node.elts]
        if not all(t.is_number(i.type) or isinstance(i.type, (t.StrT, t.DtypeT, t.LayoutT)) for i in items):
            return self.unsupported(Span.of(node), self.frame.called_as,
                                    refusals.LIBRARY_TESTS_MEMBERSHIP(node=display(node)))
        return MakeTuple(tuple(items), t.TupleT(tuple(i.type for i in items)), Span.of(node))

    def compare_pair(self, op: ast.cmpop, left: Expr, right: Expr, span: Span, text: str) -> Expr:
        if isinstance(op, (ast.Eq, ast.NotEq)) and (_never_equal(left.type, right.type) or isinstance(left.type, t.TupleT)
                                                    and isinstance(right.type, t.TupleT)
                                                    and len(left.type.items) != len(right.type.items)):
            # Python's `==` across these types is False whatever the values (`dim == ()` for an int dim, or for
            # a tuple of another length).
            return Const(isinstance(op, ast.NotEq), t.BOOL, span)
        if isinstance(op, (ast.Is, ast.IsNot)) and type(left.type) is type(right.type) and \
                isinstance(left.type, (t.DtypeT, t.LayoutT, t.MemoryFormatT)):
            # torch's dtypes, layouts and memory formats are singletons: identity is equality.
            return self.compare_pair(ast.Eq() if isinstance(op, ast.Is) else ast.NotEq(), left, right, span, text)
        if isinstance(op, (ast.Is, ast.IsNot)):
            negate = isinstance(op, ast.IsNot)
            for value, other in ((left, right), (right, left)):
                if isinstance(other.type, t.NoneT):
                    if isinstance(value.type, t.NoneT):
                        return Const(not negate, t.BOOL, span)
                    if isinstance(value.type, t.OptionalT):
                        return IsNone(value, negate, t.BOOL, span)
                    return Const(negate, t.BOOL, span)  # a value that can never be None
            answer = self.frame.dialect.identity(left, right, negate, span, text)
            if answer is not None:
                return answer
            self.type_problem(span, text, refusals.COMPARES_IDENTITY_NONE())
            raise _Abandon
        if isinstance(op, (ast.In, ast.NotIn)):
            if isinstance(right.type, t.TupleT) and not isinstance(left.type, t.TensorT) and \
                    not any(isinstance(i, t.TensorT) for i in right.type.items):
                equal = [self.atom(self.compare_pair(ast.Eq(), left, _item(right, i), span, text))
                         for i in range(len(right.type.items))]
                found = self.any_of(equal, span, text)
                return self.host(HostOp.NOT, [found], span, text) if isinstance(op, ast.NotIn) else found
            self.unsupported(span, text, refusals.READS_VALUES_BACK())
            raise _Abandon
        if all(isinstance(v.type, (t.TupleT, t.SeqT)) and t.element_type(v.type) == t.INT for v in (left, right)):
            # Shapes compared (`target.size() == input.size()`): Python's tuple order is std::vector's.
            return Host(COMPARE_OPS[type(op)], (self.as_sequence(left), self.as_sequence(right)), t.BOOL, span)
        if isinstance(op, (ast.Eq, ast.NotEq)) and type(left.type) is type(right.type) and \
                isinstance(left.type, (t.StrT, t.DtypeT, t.LayoutT, t.MemoryFormatT, t.DeviceT)):
            if isinstance(left, Const) and isinstance(right, Const):
                return Const((left.value == right.value) == isinstance(op, ast.Eq), t.BOOL, span)
            return Host(COMPARE_OPS[type(op)], (left, right), t.BOOL, span)  # `x.layout == torch.strided`
        name = TENSOR_COMPARE[type(op)]
        left = self.unwrap(left, "operand", span) if isinstance(left.type, t.OptionalT) else left
        right = self.unwrap(right, "operand", span) if isinstance(right.type, t.OptionalT) else right
        if isinstance(left.type, t.TensorT):
            return self.invoke_method(name, left, [Argument(right)], {}, span, text)
        if isinstance(right.type, t.TensorT):
            return self.invoke_method(MIRRORED[name], right, [Argument(left)], {}, span, text)
        return self.host(COMPARE_OPS[type(op)], [left, right], span, text)

    def any_of(self, values: list[Expr], span: Span, text: str) -> Expr:
        if not values:
            return Const(False, t.BOOL, span)
        negated = [self.atom(self.host(HostOp.NOT, [v], span, text)) for v in values]
        return self.host(HostOp.NOT, [self.atom(self.host(HostOp.ALL, negated, span, text, kind=t.BOOL))], span, text)

    # --- calls ----------------------------------------------------------------------------

    def call(self, node: ast.Call) -> Value:
        span = Span.of(node)
        func = node.func
        shown = display(func)
        special = self.frame.dialect.call(node)
        if special is not None:
            return special
        callee = self.expr(func.value) if isinstance(func, ast.Attribute) else self.expr(func)
        if isinstance(callee, Const) and isinstance(callee.type, t.FunctionT) and not isinstance(func, ast.Attribute):
            callee = callee.value  # a function passed as a value, called
        if isinstance(callee, KeywordDict) and isinstance(func, ast.Attribute):
            return self.keyword_dict_method(callee, func.attr, node)
        if self.frame.dialect.models_python_data and isinstance(callee, FunctionRef) and \
                callee.dotted.removeprefix("builtins.") in LIBRARY_BUILTINS | {"list", "tuple"}:
            self.consumed.update((id(a), callee.dotted.removeprefix("builtins.")) for a in node.args
                                 if isinstance(a, ast.GeneratorExp))
        if isinstance(callee, UntypedParam) and isinstance(func, ast.Attribute):
            self.arguments(node)
            return self.unsupported(span, shown, refusals.METHOD_TENSOR(callee_name=callee.name))
        if isinstance(callee, (Poisoned, UntypedParam)):
            self.arguments(node)
            return POISON
        args, keywords = self.arguments(node)
        if args is None:
            if isinstance(callee, FunctionRef) and callee.dotted.startswith("builtins.") and \
                    callee.dotted[len("builtins."):] not in SUPPORTED_BUILTINS:
                return self.unsupported(span, shown, refusals.PYTHON_BUILTIN_RUNS())
            return POISON
        if isinstance(func, ast.Attribute):
            if isinstance(callee, ModuleRef) and self.frame.dialect.refuses_rebound_names and \
                    f"{callee.dotted}.{func.attr}" in self.frame.scope.patched:
                return self.rebound_capture(span, shown, self.frame.scope.patched[f"{callee.dotted}.{func.attr}"])
            if isinstance(callee, ModuleRef):
                if self.frame.dialect.records_assumptions:
                    self.assume(f"module:{callee.dotted}", func.attr, FunctionRef(f"{callee.dotted}.{func.attr}", shown))
                return self.call_function(_strip_dotted(f"{callee.dotted}.{func.attr}"), args, keywords, span, shown, node)
            if isinstance(callee, LibraryModule):
                return self.call_function(f"{callee.dotted}.{func.attr}", args, keywords, span, shown, node)
            if isinstance(callee, ProjectModule):
                found = self.project_value(f"{callee.dotted}.{func.attr}", shown)
                if isinstance(found, FunctionRef) and found.helper is not None:
                    self.assume(callee.path, func.attr, found)
                    return self.inline(found.helper, args, keywords, span, shown)
                return self.unsupported(span, shown, refusals.FUNCTION_PPY_FOLLOW(callee_dotted=callee.dotted))
            if isinstance(callee, FunctionRef) and callee.helper is None and callee.dotted.startswith("torch."):
                return self.call_function(_strip_dotted(f"{callee.dotted}.{func.attr}"), args, keywords, span, shown, node)
            if isinstance(callee, FunctionRef):
                return self.unsupported(span, shown, refusals.ATTRIBUTE_FUNCTION())
            receiver = self.atom(callee, func.value)
            return self.call_method(func.attr, receiver, args, keywords, span, shown, node)
        if isinstance(callee, FunctionRef):
            if callee.helper is not None:
                return self.inline(callee.helper, args, keywords, span, shown)
            return self.call_function(_strip_dotted(callee.dotted), args, keywords, span, shown, node)
        if isinstance(callee, BooleanDispatch):
            return self.dispatch(callee, args, keywords, span, shown)
        if isinstance(callee, (ModuleRef, ProjectModule)):
            return self.unsupported(span, shown, refusals.MODULE_CANNOT_CALLED())
        return self.unsupported(span, shown,
                                refusals.MODULE_CANNOT_CALLED_2(shown=shown, callee_type=callee.type))  # type: ignore[union-attr]

    def keyword_dict_method(self, kwargs: KeywordDict, method: str, node: ast.Call) -> Value:
        """``kwargs.get("mask")`` on the ``**kwargs`` of torch's Python code: its keys are known here."""
        args, keywords = self.arguments(node)
        if args is None:
            return POISON
        key = args[0].value if args and not args[0].spread else None
        if method != "get" or keywords or not 1 <= len(args) <= 2 or not isinstance(key, Const) or \
                not isinstance(key.value, str):
            return self.unsupported(Span.of(node), self.frame.called_as,
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
        assert isinstance(self.frame.node, ast.FunctionDef)  # a method's body: call() tested it
        receiver = self.env.get(self.frame.node.args.args[0].arg)
        args, keywords = self.arguments(node)
        if args is None or not isinstance(receiver, Expr):
            return POISON
        if torch_python.module_of(self.frame.path) != "torch._tensor" or not self.data.has_method(func.attr):
            return self.unsupported(span, self.frame.called_as, refusals.LIBRARY_CALLS_PPY(func=display(func)))
        return self.invoke_method(func.attr, receiver, args, keywords, span, display(func))

    def arguments(self, node: ast.Call) -> tuple[list[Argument] | None, dict[str, Expr]]:
        """The call's arguments, evaluated once, left to right, as Python does."""
        args: list[Argument] = []
        keywords: dict[str, Expr] = {}
        failed = False
        for arg in node.args:
            spread = isinstance(arg, ast.Starred)
            value = self.expr(arg.value if isinstance(arg, ast.Starred) else arg)
            if isinstance(value, (Poisoned, UntypedParam)):
                failed = True
                continue
            atom = self.atom(_passed_value(value, arg), arg)
            if spread and not isinstance(atom.type, (t.TupleT, t.SeqT)):
                self.type_problem(Span.of(arg), display(arg), refusals.INDEX_LIST_MUST_2(atom_type=atom.type))
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
                        self.type_problem(Span.of(keyword), key, refusals.KEYWORD_ARGUMENT_GIVEN(key=key))
                        failed = True
                    keywords[key] = value
                continue
            value = self.expr(keyword.value)
            if isinstance(value, (Poisoned, UntypedParam)):
                failed = True
                continue
            keywords[keyword.arg] = self.atom(_passed_value(value, keyword.value), keyword.value)
        return (None if failed else args), keywords

    def keyword_spread(self, keyword: ast.keyword) -> dict[str, Expr] | None:
        """``**{"out": y}``: a dict display of literal keys spreads into keywords; anything else is refused."""
        node = keyword.value
        if isinstance(node, ast.Dict) and all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in node.keys):
            result: dict[str, Expr] = {}
            for key, value_node in zip(node.keys, node.values):
                evaluated = self.expr(value_node)
                if isinstance(evaluated, Poisoned):
                    return None
                assert isinstance(key, ast.Constant) and isinstance(key.value, str)  # the keys tested above
                result[key.value] = self.atom(evaluated, value_node)
            return result
        if self.frame.dialect.models_python_data:
            value = self.expr(node)
            if isinstance(value, KeywordDict):
                return dict(value.items)
        self.unsupported(Span.of(node), f"**{display(node)}", refusals.ANYTHING_DICT_LITERAL())
        return None

    def call_function(self, dotted: str, args: list[Argument], keywords: dict[str, Expr], span: Span, shown: str,
                      node: ast.Call) -> Value:
        if not self.frame.dialect.offers_fixes or dotted not in torch_python.ALTERNATIVES:  # nothing to offer: no context manager
            return self._call_function(dotted, args, keywords, span, shown, node)
        with self.offering_alternative(dotted):
            return self._call_function(dotted, args, keywords, span, shown, node)

    def tensor_of_numbers(self, args: list[Argument], keywords: dict[str, Expr], span: Span, shown: str,
                          node: ast.Call) -> Value | None:
        """``torch.tensor(number)`` or of a tuple of numbers, as ``scalar_tensor`` (stacked): the numbers may be
        known only at run time. Without ``dtype`` torch infers it from the data: bool, int64, or for a float the
        default dtype, a setting read when the region runs; a ``float`` parameter may hold an int, so its dtype is
        not known and it stays refused."""
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
            if any(isinstance(k, t.NumberT) for k in kinds):
                return None
            if any(isinstance(k, t.FloatT) for k in kinds):
                inferred: Expr = Host(HostOp.DEFAULT_DTYPE, (), t.DTYPE, span)
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
        items = tuple(self.atom(self.call_function("torch.scalar_tensor", [Argument(_item(data, i))], factory, span,
                                                   shown, node)) for i in range(len(data.type.items)))
        stacked = MakeTuple(items, t.TupleT(tuple(i.type for i in items)), span)
        return self.call_function("torch.stack", [Argument(stacked)], {}, span, shown, node)

    @contextlib.contextmanager
    def offering_alternative(self, dotted: str) -> Iterator[None]:
        """A user's call of torch's Python layer that ppy refuses: its finding ends with what to write instead,
        where ppy knows (``torch_python.ALTERNATIVES``)."""
        start = len(self.problems.unsupported)
        try:
            yield
        finally:
            alternative = torch_python.ALTERNATIVES.get(dotted)
            records = self.problems.unsupported
            if alternative is not None and len(records) > start:
                records[start] = dataclasses.replace(records[start], why=m.message(m.WITH_ALTERNATIVE, why=records[start].why,
                                                                                   alternative=alternative))

    def _call_function(self, dotted: str, args: list[Argument], keywords: dict[str, Expr], span: Span, shown: str,
                       node: ast.Call) -> Value:
        namespace, _, name = dotted.rpartition(".")
        if namespace == "builtins":
            return self.builtin(name, args, keywords, span, shown)
        if namespace == "math":
            return self.math(name, args, keywords, span, shown)
        if namespace == "einops":
            return self.einops(name, args, keywords, span, shown)
        if dotted in LIBRARY_ANSWERS and (self.frame.dialect.answers_user_switches or dotted not in USER_QUESTIONS):
            answer = LIBRARY_ANSWERS[dotted]
            return Const(answer, hostmath.type_of_value(answer), span)
        if dotted in NTUPLES:
            return self.ntuple(NTUPLES[dotted], args, span, shown)
        if dotted == "torch.Size" and len(args) == 1 and not keywords and not args[0].spread and \
                isinstance(args[0].value.type, (t.TupleT, t.SeqT)) and t.element_type(args[0].value.type) == t.INT:
            # A shape, a tuple of ints: the value a region's shapes already are.
            return self.mark(self.concatenate([(args[0].value, True)], span), "tuple")
        if dotted == "torch.get_default_dtype" and not args and not keywords:
            # A setting the caller may change between calls: read when the region runs, never folded.
            return Host(HostOp.DEFAULT_DTYPE, (), t.DTYPE, span)
        if dotted == "torch.tensor":
            tensor = self.tensor_of_numbers(args, keywords, span, shown, node)
            if tensor is not None:
                return tensor
        if namespace == "torch._C._VariableFunctions" and self.data.binding(TORCH, name) is not None:
            namespace, dotted = TORCH, f"torch.{name}"  # the builtin torch.X is
        if namespace in FUNCTION_NAMESPACES:
            native = self.data.binding(namespace, name)
            if native is not None:
                return self.invoke_function(native, args, keywords, span, shown)
        helper = self.torch_python_function(dotted)
        if isinstance(helper, Helper):
            return self.inline(helper, args, keywords, span, shown)
        if isinstance(helper, BooleanDispatch):
            return self.dispatch(helper, args, keywords, span, shown)
        if isinstance(helper, FunctionRef) and helper.helper is not None:
            return self.inline(helper.helper, args, keywords, span, shown)  # `threshold = _threshold`
        why = torch_python.not_followed(dotted)
        if why is not None:
            return self.unsupported(span, shown, refusals.NOT_FOLLOWED(why=why))
        if namespace in FUNCTION_NAMESPACES:
            return self.unsupported(span, shown, refusals.TORCH_OPERATOR_C(namespace=namespace, name=name))
        root = dotted.split(".")[0]
        if root == "torch":
            return self.unsupported(span, shown, refusals.TORCH_OPERATOR_C_API(dotted=dotted))
        if root == "ppy":
            return self.unsupported(span, shown, refusals.PPY_OWN_API())
        if root == "<module>":
            binding = self.frame.scope.bindings.get(name)
            line = binding.line if binding is not None else 0
            return self.unsupported(span, shown, refusals.CLASS_LINE(line=line))
        return self.unsupported(span, shown, refusals.TORCH_TORCH_OPERATORS(root=root))

    def call_method(self, name: str, receiver: Expr, args: list[Argument], keywords: dict[str, Expr], span: Span,
                    shown: str, node: ast.Call) -> Value:
        kind = receiver.type
        if isinstance(kind, t.OptionalT) and isinstance(kind.inner, t.TensorT):
            assert isinstance(node.func, ast.Attribute)  # a method call: `receiver.name(...)`
            receiver = self.unwrap(receiver, display(node.func.value), span)
            kind = receiver.type
        if isinstance(kind, (t.TupleT, t.SeqT)) and name in LIST_METHODS:
            return self.unsupported(span, shown, refusals.REGION_SEQUENCES_DO())
        if isinstance(receiver, Const) and isinstance(kind, t.StrT) and name in STR_METHODS:
            try:
                folded = _fold_str_method(receiver.value, name, args, keywords, span)
            except budgets.FoldTooLarge as error:
                self.over_budget(span, shown, error.exceeded)
                raise _Abandon from None
            if folded is not None:
                return self.mark(folded, "list" if isinstance(folded.type, t.TupleT) else None)
        if not isinstance(kind, t.TensorT):
            return self.unsupported(span, shown, refusals.REGION_SEQUENCES_DO_2(kind=kind))
        if name in self.data.properties:
            return self.type_problem(span, shown,
                                     refusals.TENSOR_PROPERTY_METHOD(name=name, node_func=display(node.func)), self._uncalled(node))
        if name in HOST_READING_METHODS:
            return self.unsupported(span, shown, HOST_READING_METHODS[name]())
        if name in QUERY_METHODS:
            return self.query(name, receiver, args, keywords, span, shown)
        method = torch_python.tensor_method(name)
        if isinstance(method, str):
            return self.invoke_method(method, receiver, args, keywords, span, shown)  # `__pow__` is TensorBase.pow
        if method is None and self.data.has_method(name):
            return self.invoke_method(name, receiver, args, keywords, span, shown)
        if method is not None:
            # torch/_tensor.py's method is what Python runs, even where TensorBase has a builtin of the same name
            # (`x.norm(...)` is torch.norm, then linalg.vector_norm, not norm.ScalarOpt_dim): its checks and
            # messages are Python's.
            node_of, module = method
            helper = Helper(node_of, module.scope, module.path, library=True)
            if not self.frame.dialect.offers_fixes:
                return self.inline(helper, [Argument(receiver), *args], keywords, span, shown)
            with self.offering_alternative(f"torch.Tensor.{name}"):
                return self.inline(helper, [Argument(receiver), *args], keywords, span, shown)
        return self.unsupported(span, shown, refusals.TENSOR_TENSOR_METHOD(name=name))

    def query(self, name: str, receiver: Expr, args: list[Argument], keywords: dict[str, Expr], span: Span,
              shown: str) -> Expr:
        whole, per_dim, kind = QUERY_METHODS[name]
        given = [a.value for a in args if not a.spread]
        if len(given) != len(args):
            self.type_problem(span, shown, refusals.UNPACKING_INTO_TENSOR())
            raise _Abandon
        if "dim" in keywords and per_dim is not None and not given:
            given = [keywords.pop("dim")]
        if keywords or len(given) > (1 if per_dim is not None else 0):
            self.type_problem(span, shown,
                              (refusals.TENSOR_TAKES_ONE_DIM if per_dim else refusals.TENSOR_TAKES_NOTHING)(name=name))
            raise _Abandon
        if given and isinstance(given[0].type, t.NoneT):
            given = []
        if given:
            assert per_dim is not None  # a dim is given only to a query that takes one, tested above
            if not isinstance(given[0].type, t.IntT):
                self.type_problem(span, shown, refusals.TENSOR_DIM_TAKES(name=name, given_type=given[0].type))
                raise _Abandon
            return TensorQuery(receiver, per_dim, (given[0],), t.INT, span)
        return TensorQuery(receiver, whole, (), kind, span)

    def builtin(self, name: str, args: list[Argument], keywords: dict[str, Expr], span: Span, shown: str) -> Expr:
        if name == "callable" and len(args) == 1 and not args[0].spread and not keywords:
            # Only a function passed as a value is callable: a region's other values are numbers, tensors, tuples.
            return Const(isinstance(args[0].value.type, t.FunctionT), t.BOOL, span)
        found = self.frame.dialect.builtin(name, args, keywords, span, shown)
        if found is not None:
            return found
        values = [a.value for a in args]
        if any(a.spread for a in args) or keywords:
            self.unsupported(span, shown, refusals.TENSOR_DIM_TAKES_2(name=name))
            raise _Abandon
        conversions = {"int": HostOp.TO_INT, "float": HostOp.TO_FLOAT, "bool": HostOp.TO_BOOL}
        if name in conversions and len(values) == 1:
            value = values[0]
            if isinstance(value.type, (t.TensorT, t.SeqT, t.TupleT)):
                self.unsupported(span, shown, (refusals.CONVERSION_READS_TENSOR if isinstance(value.type, t.TensorT)
                                               else refusals.CONVERSION_OF_SEQUENCE)(name=name, type=value.type))
                raise _Abandon
            if name == "float" and isinstance(value, Const) and isinstance(value.value, str):
                try:
                    return Const(float(value.value), t.FLOAT, span)
                except ValueError:
                    self.type_problem(span, shown, refusals.FLOAT_RAISES_VALUEERROR(value_value=value.value))
                    raise _Abandon from None
            kinds: dict[str, t.Type] = {"int": t.INT, "float": t.FLOAT, "bool": t.BOOL}
            kind = kinds[name]
            return self.host(conversions[name], [value], span, shown, kind=kind) if t.is_number(value.type) else \
                self._refuse_conversion(name, value, span, shown)
        if name == "abs" and len(values) == 1:
            if isinstance(values[0].type, t.TensorT):
                return self.invoke_method("abs", values[0], [], {}, span, shown)
            return self.host(HostOp.ABS, values, span, shown)
        if name in ("min", "max") and len(values) >= 2:
            if not all(t.is_number(v.type) for v in values):
                self.unsupported(span, shown,
                                 (refusals.MIN_OF_TENSORS if name == "min" else refusals.MAX_OF_TENSORS)(name=name))
                raise _Abandon
            return self.extreme(name, values, span, shown)
        if name == "round" and len(values) in (1, 2) and t.is_number(values[0].type):
            if len(values) == 1:
                return self.host(HostOp.ROUND, values, span, shown, kind=t.INT)
            if not isinstance(values[1].type, t.IntT):
                self.type_problem(span, shown, refusals.ROUND_DIGITS_MUST())
                raise _Abandon
            kind = t.INT if isinstance(values[0].type, (t.IntT, t.BoolT)) else values[0].type
            return self.host(HostOp.ROUND_DIGITS, values, span, shown, kind=kind)
        if name == "len" and len(values) == 1:
            kind = values[0].type
            if isinstance(kind, t.TupleT):
                return Const(len(kind.items), t.INT, span)
            if isinstance(kind, t.SeqT):
                return Length(values[0], t.INT, span)
            if isinstance(kind, t.TensorT):
                # `len(x)` is `Tensor.__len__` (torch/_tensor.py): TypeError for a 0-d tensor, else the first size.
                method = torch_python.tensor_method("__len__")
                if isinstance(method, tuple):
                    length = self.inline(Helper(method[0], method[1].scope, method[1].path, library=True),
                                         [Argument(values[0])], {}, span, shown)
                    if isinstance(length, Expr):
                        return length
                    raise _Abandon
                return TensorQuery(values[0], Query.SIZE, (Const(0, t.INT, span),), t.INT, span)
        if name in ("list", "tuple") and len(values) == 1 and isinstance(values[0].type, (t.TupleT, t.SeqT)):
            value = values[0]
            if isinstance(value.type, t.TupleT) and value.type.structseq is not None:
                # `tuple(torch.max(x, 1))` is a plain tuple of the fields
                items = tuple(_item(value, i) for i in range(len(value.type.items)))
                return self.mark(MakeTuple(items, t.TupleT(value.type.items), span, value.aliases), name)
            if self.is_size(value):
                # `tuple(x.shape)`: no torch.Size
                return self.mark(MakeSeq(((value, True),), value.type, span, value.aliases), name)
            # `list(x.shape[2:])`: a region's sequences are values, either spelling; a new one of that kind.
            return self.mark(self.concatenate([(value, True)], span), name)
        self.unsupported(span, shown, refusals.PYTHON_BUILTIN_RUNS())
        raise _Abandon

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

        if name == "range" and len(values) == 1 and isinstance(values[0].type, t.IntT) and \
                not isinstance(values[0], Const):
            # Taken whole (`tuple(range(x.ndim))`), a sequence built at run time; a loop over it is refused
            # (static_items).
            return Host(HostOp.RANGE, (values[0],), t.SeqT(t.INT), span)
        if name == "range" and not all(isinstance(v, Const) for v in values):
            self.unsupported(span, shown, refusals.LIBRARY_COUNTS())
        if name == "range" and 1 <= len(values) <= 3 and all(isinstance(v, Const) and isinstance(v.type, t.IntT)
                                                              for v in values):
            try:
                numbers = range(*(v.value for v in values if isinstance(v, Const)))  # all are, tested above
            except ValueError as error:  # a step of 0
                self.type_problem(span, shown, refusals.ALWAYS_RAISES_VALUEERROR(error=error))
                raise _Abandon from None
            count = _range_length(numbers)
            if count > MAX_UNROLLED:
                self.unsupported(span, shown,
                                 refusals.ITEMS_MORE_THAN(shown=shown, budgets_shown_int=budgets.shown_int(count)))
            return tuple_of([Const(n, t.INT, span) for n in numbers])
        if name in ("zip", "enumerate", "reversed", "sorted") and any(isinstance(v.type, t.SeqT) for v in values):
            self.unsupported(span, shown, refusals.LIBRARY_TAKES(name=name))
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
            self.unsupported(span, shown, refusals.LIBRARY_SORTS())
        if name in ("all", "any"):
            if not all(t.is_number(i.type) for i in first):
                return None
            truths = [i if isinstance(i.type, t.BoolT) else self.atom(self.host(HostOp.TO_BOOL, [i], span, shown,
                                                                                 kind=t.BOOL)) for i in first]
            if name == "any":
                return self.any_of(truths, span, shown)
            return self.host(HostOp.ALL, truths, span, shown, kind=t.BOOL) if truths else Const(True, t.BOOL, span)
        if name == "sum" and all(t.is_number(i.type) for i in first):
            total: Expr = Const(0, t.INT, span)
            for item in first:
                total = self.atom(self.host(HostOp.ADD, [total, item], span, shown))
            return total
        if name in ("min", "max") and first and all(t.is_number(i.type) for i in first):
            if len(first) == 1:
                return first[0]
            return self.extreme(name, first, span, shown)
        return None

    def extreme(self, name: str, values: list[Expr], span: Span, shown: str) -> Expr:
        """`min()` or `max()` of numbers: the winning operand itself, of its own type."""
        bools = [isinstance(v.type, t.BoolT) for v in values]
        if any(bools) and not all(bools) and not all(isinstance(v, Const) for v in values):
            # `min(True, 2)` is True, a bool, and `min(True, 0)` is 0, an int: the type is known only at run time.
            self.unsupported(span, shown, refusals.BOOL_NUMBER_BOOL(name=name))
            raise _Abandon
        return self.host(HostOp.MIN if name == "min" else HostOp.MAX, values, span, shown,
                         kind=t.join_numbers(*(v.type for v in values)))

    def _refuse_conversion(self, name: str, value: Expr, span: Span, shown: str) -> Expr:
        self.type_problem(span, shown, refusals.BOOL_NUMBER_BOOL_2(name=name, type=value.type))
        raise _Abandon

    def math(self, name: str, args: list[Argument], keywords: dict[str, Expr], span: Span, shown: str) -> Expr:
        if name == "prod" and len(args) == 1 and not keywords and not args[0].spread and \
                isinstance(args[0].value.type, (t.TupleT, t.SeqT)) and t.element_type(args[0].value.type) == t.INT:
            return Host(HostOp.PROD, (self.atom(self.as_sequence(args[0].value)),), t.INT, span)  # `math.prod(x.shape)`
        if name not in hostmath.MATH_FUNCTIONS:
            self.unsupported(span, shown, refusals.MATH_COMPILED(name=name))
            raise _Abandon
        kind, arity = hostmath.MATH_FUNCTIONS[name]
        values = [a.value for a in args]
        if keywords or any(a.spread for a in args) or len(values) != (2 if name == "log" and len(values) == 2 else arity):
            self.type_problem(span, shown,
                              (refusals.MATH_TAKES_ARGUMENTS if arity > 1 else refusals.MATH_TAKES_ARGUMENT)(name=name, arity=arity))
            raise _Abandon
        for value in values:
            if not t.is_number(value.type):
                self.type_problem(span, shown, refusals.MATH_TAKES_NUMBERS(name=name, type=value.type))
                raise _Abandon
        if name in ("gcd", "lcm") and not all(isinstance(v.type, (t.IntT, t.BoolT)) for v in values):
            self.type_problem(span, shown, refusals.MATH_TAKES_INTS(name=name))
            raise _Abandon
        return self.host(HostOp.MATH, values, span, shown, function=name, kind=kind)

    # --- torch operators --------------------------------------------------------------------

    def invoke_function(self, name: str, args: list[Argument], keywords: dict[str, Expr], span: Span, shown: str) -> Expr:
        return self.invoke(self.data.function(name), args, keywords, span, shown, name)

    def invoke_method(self, name: str, receiver: Expr, args: list[Argument], keywords: dict[str, Expr], span: Span,
                      shown: str, write_kind: WriteKind | None = None) -> Expr:
        overloads = self.data.method(name)
        return self.invoke(overloads, args, keywords, span, shown, name, receiver=receiver, write_kind=write_kind)

    def invoke(self, overloads: tuple[Overload, ...], args: list[Argument], keywords: dict[str, Expr], span: Span,
               shown: str, name: str, receiver: Expr | None = None, write_kind: WriteKind | None = None) -> Expr:
        if not overloads:
            self.unsupported(span, shown, refusals.NO_ATEN_LOWERING(name=name))
            raise _Abandon
        if args and all(a.spread for a in args):
            args = self._spread_alone(overloads, args, keywords, span, shown, name)
        bound = resolve(overloads, args, keywords)
        if bound is None:
            tried = "; ".join(o.signature_text() for o in overloads[:4])
            self.type_problem(span, shown,
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
            self.type_problem(span, shown, refusals.EVERY_POSITIONAL_ARGUMENT(name=name))
            raise _Abandon
        counts: list[Expr] = []
        for a in args:
            if isinstance(a.value.type, t.SeqT):
                counts.append(self.atom(Length(a.value, t.INT, span)))
            else:
                assert isinstance(a.value.type, t.TupleT)  # a spread is of a tuple or of a sequence
                counts.append(Const(len(a.value.type.items), t.INT, span))
        total = counts[0]
        for count in counts[1:]:
            total = self.atom(self.host(HostOp.ADD, [total, count], span, shown))
        holds = self.atom(self.host(HostOp.NE, [total, Const(0, t.INT, span)], span, shown))
        # Python's argument parser words it by how many signatures the name has (`view` also takes a dtype).
        message = (f'{name}() missing 1 required positional arguments: "{overloads[0].positional[0].name}"'
                   if len(overloads) == 1 else f"{name}() received an invalid combination of arguments - got ()")
        self.body.append(Require(holds, PythonException.TYPE_ERROR, (message,), span))
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
                self.type_problem(span, shown, refusals.ARGUMENT_MAY_NONE(shown=shown))
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
                values[key] = self.unwrap(value, f"argument `{key}` of `{shown}`", span)
        kind = self.result_type(native, span, shown)
        effects = effects_of(native, values, out_names)
        for param, how in effects.writes:
            self.writes.append(Write(param, self._span(span), self.frame.called_as or shown, write_kind or how))
        if effects.random:
            self.random = True
        self.natives.add(native.key)
        args = tuple((arg.name, values.get(arg.name)) for arg in native.args)
        return Call(native, overload, args, kind, span, effects.aliases, shown, bound.requires_grad)

    def result_type(self, native: Native, span: Span, shown: str) -> t.Type:
        kinds = []
        for returned in native.returns:
            kind = _schema_result(returned.type)
            if kind is None:
                self.unsupported(span, shown, refusals.RETURNS_REGION_CANNOT(returned_type=returned.type))
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
                self.type_problem(span, shown, refusals.SEQUENCE_WHOSE_LENGTH())
                raise _Abandon
        bound: dict[str, Value] = dict(zip(positional_names, values))
        extra = values[len(positional_names):]
        if spec.vararg is not None:
            bound[spec.vararg.arg] = MakeTuple(tuple(extra), t.TupleT(tuple(e.type for e in extra)), span,
                                               frozenset().union(*(e.aliases for e in extra)))
        elif extra:
            self.type_problem(span, shown,
                              refusals.TAKES_MOST_POSITIONAL(positional_names_count=len(positional_names), values_count=len(values)))
            raise _Abandon
        allowed = set(positional_names) | {a.arg for a in spec.kwonlyargs}
        extra_keywords: dict[str, Expr] = {}
        for key, value in keywords.items():
            if key not in allowed and spec.kwarg is not None:
                extra_keywords[key] = value
                continue
            if key not in allowed:
                self.type_problem(span, shown, refusals.GOT_UNEXPECTED_KEYWORD(key=key))
                raise _Abandon
            if key in bound:
                self.type_problem(span, shown, refusals.GOT_MULTIPLE_VALUES(key=key))
                raise _Abandon
            bound[key] = value
        for name in positional_names + [a.arg for a in spec.kwonlyargs]:
            if name not in bound:
                if name not in defaults:
                    self.type_problem(span, shown, refusals.MISSING_REQUIRED_ARGUMENT(name=name))
                    raise _Abandon
                default = self.constant(defaults[name], span, scope)
                if not isinstance(default, Expr):
                    self.unsupported(span, shown,
                                     refusals.DEFAULT_VALUE_PPY(name=name, defaults=display(defaults[name])))
                    raise _Abandon
                bound[name] = default
        if spec.kwarg is not None:
            bound[spec.kwarg.arg] = KeywordDict(tuple(extra_keywords.items()))
        return bound

    def fold_bool(self, node: ast.BoolOp) -> Value:
        """`a and b` in torch's Python code: short-circuits on what is known here; run-time bools are combined
        when computing them early is harmless (a rank or dtype test, not ``x.size(1)`` that could raise)."""
        is_or = isinstance(node.op, ast.Or)
        start = len(self.body)
        pending: list[Expr] = []
        result: Value = POISON
        for operand in node.values:
            result = self.expr(operand)
            if isinstance(result, Const):
                if bool(result.value) == is_or:
                    break  # decided; with only bools about, the value is the decision
                continue
            if not isinstance(result, Expr) or result.type != t.BOOL:
                self.unsupported(Span.of(node), self.frame.called_as,
                                 refusals.LIBRARY_TESTS_PPY(operand=display(operand)))
                raise _Abandon
            pending.append(result)
        if not pending:
            return result
        if not all(_harmless(statement) for statement in self.body[start:]):
            self.unsupported(Span.of(node), self.frame.called_as, refusals.LIBRARY_TESTS_WHOSE(node=display(node)))
            raise _Abandon
        if isinstance(result, Const) and bool(result.value) == is_or:
            return Const(is_or, t.BOOL, Span.of(node))
        if is_or:
            return self.any_of(pending, Span.of(node), display(node))
        return self.host(HostOp.ALL, pending, Span.of(node), display(node), kind=t.BOOL) if len(pending) > 1 \
            else pending[0]

    def fold_condition(self, node: ast.IfExp) -> Value:
        """`a if test else b` in torch's Python code: folded where the test is known here, else a run-time choice
        that computes only the way taken, as Python does."""
        known = self.try_truth(node.test)
        if known is not None:
            return self._expr(node.body if known.value else node.orelse)
        span = Span.of(node)
        test = self.expr(node.test)
        if not isinstance(test, Expr) or not t.is_number(test.type):
            self.unsupported(span, self.frame.called_as, refusals.LIBRARY_CHOOSES(node_test=display(node.test)))
            raise _Abandon
        test = self.atom(self.host(HostOp.TO_BOOL, [test], span, display(node.test), kind=t.BOOL)
                         if not isinstance(test.type, t.BoolT) else test)
        saved = self.body
        ways = []
        try:
            for way in (node.body, node.orelse):
                self.body = []
                ways.append((self.atom(self.expr(way), way), self.body))
        finally:
            self.body = saved
        (one, then_body), (other, else_body) = ways
        merged: list[tuple[Var, Expr | None, Expr | None]] = []
        value = self.merge(refusals.MERGED_VALUE(), one, other, span,
                           refusals.LIBRARY_CHOOSES_AT_RUN_TIME(test=display(node.test)), merged)
        self.body.append(Branch(test, tuple(then_body), tuple(else_body), tuple(merged), span))
        return value

    def inline(self, helper: Helper, args: list[Argument], keywords: dict[str, Expr], span: Span,
               shown: str) -> Value:
        """A call of a helper or of another region: its body runs here, on the arguments as they are.

        Everything a region reaches is straight-line, so the helper's body is
        interpreted like the region's own: its parameters take the types of the
        arguments (annotations or none), findings inside it point at its lines
        and say how the region got there.
        """
        node = helper.node
        depth = sum(n is node for n in self.inlining)
        if node is self.region.node or (depth and not (helper.library and depth < LIBRARY_REENTRY)):
            return self.type_problem(span, shown, refusals.CALLS_ITSELF_RECURSION(node_name=node.name))
        for decorator in [] if helper.library else node.decorator_list:
            func = decorator.func if isinstance(decorator, ast.Call) else decorator
            if helper.scope.resolve(func) not in ("ppy.opt", "ppy.pure"):
                return self.unsupported(span, shown,
                                        refusals.DECORATED_PPY_CANNOT(node_name=node.name, decorator=display(decorator)))
        if node.args.kwarg is not None and not helper.library:
            return self.unsupported(span, shown,
                                    refusals.DECORATED_PPY_CANNOT_2(node_name=node.name, node_args_kwarg_arg=node.args.kwarg.arg))
        if helper.enclosing is not None and helper.enclosing is not self.frame.node:
            return self.unsupported(span, self.frame.called_as or shown,
                                    refusals.LIBRARY_CALLS_FUNCTION(node_name=node.name))
        for default in node.args.defaults + [d for d in node.args.kw_defaults if d is not None]:
            from ppy_check.scope import is_literal

            if not is_literal(default) and not (helper.library and _is_constant_expression(default)):
                return self.unsupported(span, shown,
                                        refusals.DEFAULT_LITERAL(node_name=node.name, default=display(default)))
        bound = self.bind_signature(node.args, args, keywords, span, shown, helper.scope if helper.library else None)

        if helper.library:
            step = m.message(m.IN_TORCH, name=node.name)
        elif helper.path != self.region.site.path:
            step = m.message(m.IN_HELPER_OF_FILE, name=node.name, path=helper.path, line=span.line)
        else:
            step = m.message(m.IN_HELPER_CALLED, name=node.name, line=span.line)
        chain = step.render() if helper.library or not self.frame.context else \
            m.message(m.HELPER_CHAIN, step=step, outer=self.frame.context).render()
        key = self.template_key(helper, bound)
        template = self.templates.get(key) if key is not None else None
        if template is not None and template.reached.isdisjoint(id(n) for n in self.inlining):
            return self.instantiate(template, bound, chain)
        start = _TemplateStart(len(self.body), self.vars, self.snapshot(), len(self.problems.structural),
                               len(self.problems.branches), len(self.problems.budgets), len(self.callees_reached),
                               set(self.natives), len(self.sequence_kinds), set(self.sizes), len(self.inlined))
        if not helper.library:
            self.add_callee(describe_function(node, helper.scope, helper.path), chain,
                            self.anchor or span if helper.path != self.region.site.path else None)
        self.inlined.append(id(node))
        saved: tuple[Any, Frame, Any, Any, Any] = (self.env, self.frame, self.returned, self.returned_value, self.anchor)
        # A nested function reads its enclosing function's names as they are now, at the call (Python's cells).
        self.env = {**{name: self.env[name] for name in sorted(helper.closure) if name in self.env}, **bound}
        called_as = (self.frame.called_as or shown) if helper.library else ""
        self.frame = Frame(function_locals(node), [], chain, node, helper.scope, helper.path, self.dialect_for(helper),
                           called_as)
        if helper.path != self.region.site.path and self.anchor is None:
            self.anchor = span
        self.returned, self.returned_value = False, None
        self.inlining.append(node)
        outermost_library = helper.library and saved[1].dialect is not self.library_dialect
        try:
            self.statements(node.body)
            value: Value = self.returned_value if self.returned_value is not None else Const(None, t.NONE, span)
        except _LibraryRefused:
            if not outermost_library:
                raise
            value = POISON
        finally:
            self.inlining.pop()
            self.env, self.frame, self.returned, self.returned_value, self.anchor = saved
        if key is not None and _is_expr(value):
            self.remember(key, start, bound, value, chain)
        return value

    # --- the model of a helper, built once per arguments ----------------------------------------------------------

    def add_callee(self, callee: Region, chain: str, anchor: Span | None) -> None:
        """A helper the structural rules check, once per (helper, how it was reached, anchor)."""
        self.callees_reached.append((callee, chain, anchor))  # every one, for the templates that reach it again
        if (id(callee.node), chain, anchor) not in self.callees_seen:
            self.callees_seen.add((id(callee.node), chain, anchor))
            self.callees.append((callee, chain, anchor))

    def template_key(self, helper: Helper, bound: dict[str, Value]) -> tuple[Any, ...] | None:
        """What a helper's model depends on beyond its own code: the bound arguments' types, literal values,
        aliases and kinds, and which of them are one object; None where the model is not reused (torch's code,
        whose folding reads more of the caller; a helper of another file reached from the region's, whose
        findings and writes stand at each call)."""
        if helper.library or not self.frame.dialect.reuses_templates or self.branching or helper.enclosing is not None or \
                helper.path != self.region.site.path and self.anchor is None:
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
        return (id(helper.node), tuple(signature), same, self.anchor)

    def argument_signature(self, value: Expr, leaves: list[Expr]) -> tuple[Any, ...] | None:
        leaves.append(value)
        if isinstance(value, MakeTuple):
            items = []
            for item in value.items:
                shape = self.argument_signature(item, leaves)
                if shape is None:
                    return None
                items.append(shape)
            return ("tuple", value.type, tuple(items), self.kind_of(value), value.aliases)
        literal: Any = None
        if isinstance(value, Const):
            literal = (type(value.value), repr(value.value) if isinstance(value.value, float) else value.value)
            try:
                hash(literal)
            except TypeError:
                return None
        return (type(value).__name__, value.type, literal, value.aliases, self.strided(value), self.is_size(value),
                self.kind_of(value))

    def remember(self, key: tuple[Any, ...], start: _TemplateStart, bound: dict[str, Value], value: Expr,
                 chain: str) -> None:
        """Keep a helper's model, built without a problem, for its next call with the same kinds of arguments."""
        saved = start.snapshot
        if (len(self.problems.unsupported), len(self.problems.types), len(self.problems.captures)) != saved[1:4] or \
                (len(self.problems.structural), len(self.problems.branches), len(self.problems.budgets)) != \
                (start.structural, start.branches, start.budgets) or not self.complete:
            return
        leaves: list[Expr] = []
        for argument in bound.values():
            assert _is_expr(argument)  # template_key gave the key only to arguments that all are
            self.argument_signature(argument, leaves)
        body = tuple(self.body[start.body:])
        self.templates[key] = _Template(
            tuple(leaves), body, value, start.vars, self.vars, tuple(self.writes[saved[4]:]),
            tuple(self.callees_reached[start.callees:]), chain, frozenset(self.natives - start.natives), self.random,
            tuple(self.sizes - start.sizes), tuple(list(self.sequence_kinds.values())[start.kinds:]),
            frozenset(self.inlined[start.inlined:]), _count_statements(body) + len(self.callees_reached) - start.callees)

    def instantiate(self, template: _Template, bound: dict[str, Value], chain: str) -> Expr:
        """A helper's model built before, for these arguments: its statements again, on these arguments' values,
        with variables of their own (as inlining would make them, without interpreting the helper again)."""
        self.steps += template.statements
        self.count_step()
        leaves: list[Expr] = []
        for argument in bound.values():
            assert _is_expr(argument)  # the template's key (template_key) was found only for such arguments
            self.argument_signature(argument, leaves)
        mapping: dict[int, Any] = {id(old): new for old, new in zip(template.leaves, leaves)}
        cloner = _Cloner(mapping, template.first_var, template.last_var, self.new_var)
        for statement in template.body:
            copy = cloner.clone(statement)
            self.body.append(copy)
        for old_var, new_var in cloner.vars.items():
            old = self.values.get(old_var)
            if old is not None:
                self.values[new_var] = cloner.clone(old)
            if old_var in self.size_vars:
                self.size_vars.add(new_var)
            if old_var in self.strided_vars:
                self.strided_vars.add(new_var)
        self.writes.extend(template.writes)
        for callee, callee_chain, anchor in template.callees:
            self.add_callee(callee, callee_chain[:len(callee_chain) - len(template.chain)] + chain, anchor)
        self.natives |= template.natives
        self.random = self.random or template.random
        self.sizes.update(cloner.clone(size) for size in template.sizes)
        for marked, kind in template.kinds:
            self.mark(cloner.clone(marked), kind)
        self.inlined.extend(template.reached)
        # The cloner copies any model node, so it is untyped; a copy of an Expr is an Expr.
        value: Expr = cloner.clone(template.value)
        return value

    def einops(self, name: str, args: list[Argument], keywords: dict[str, Expr], span: Span, shown: str) -> Expr:
        """``einops.rearrange/repeat/reduce`` with a literal pattern: the reshapes, permutes and reductions einops runs."""
        from ppy_check.model import einops_patterns as patterns

        if name not in ("rearrange", "repeat", "reduce") or any(a.spread for a in args):
            self.unsupported(span, shown, refusals.REARRANGE_REPEAT_REDUCE())
            raise _Abandon
        values = [a.value for a in args]
        keywords = dict(keywords)
        if name == "reduce" and len(values) == 2 and "reduction" in keywords:
            values.append(keywords.pop("reduction"))
        arity = 3 if name == "reduce" else 2
        pattern = values[1] if len(values) > 1 else keywords.pop("pattern", None)
        if len(values) != arity or not isinstance(values[0].type, t.TensorT):
            self.type_problem(span, shown, (refusals.EINOPS_REDUCE_ARGUMENTS if name == "reduce" else
                                            refusals.EINOPS_ARGUMENTS)(name=name))
            raise _Abandon
        if not isinstance(pattern, Const) or not isinstance(pattern.value, str):
            self.unsupported(span, shown, refusals.PATTERN_MUST_LITERAL())
            raise _Abandon
        reduction = values[2] if name == "reduce" else None
        if reduction is not None and not (isinstance(reduction, Const) and reduction.value in patterns.REDUCTIONS):
            self.unsupported(span, shown, refusals.REDUCTION_MUST_ONE(reductions=", ".join(patterns.REDUCTIONS)))
            raise _Abandon
        for key, value in keywords.items():
            if not isinstance(value.type, t.IntT):
                self.type_problem(span, shown, refusals.LENGTH_MUST_INT(key=key, type=value.type))
                raise _Abandon
        try:
            plan = patterns.plan(name, pattern.value, set(keywords))
        except patterns.PatternError as error:
            self.unsupported(span, shown, refusals.LENGTH_MUST_INT_2(pattern_value=pattern.value, error=error))
            raise _Abandon from None
        return self.run_einops_plan(plan, values[0], keywords, reduction.value if reduction is not None else "", span, shown)

    def run_einops_plan(self, plan: Any, x: Expr, lengths: dict[str, Expr], reduction: str, span: Span,
                        shown: str) -> Expr:
        from ppy_check.model.einops_patterns import ELLIPSIS

        def const(value: int) -> Const:
            return Const(value, t.INT, span)

        def ints(items: Sequence[Expr]) -> Expr:
            return self.atom(MakeTuple(tuple(items), t.TupleT(tuple(t.INT for _ in items)), span))

        shape = self.atom(TensorQuery(x, Query.SHAPE, (), t.SeqT(t.INT), span))
        groups = plan.left.groups
        ellipsis_at = next((i for i, g in enumerate(groups) if g == (ELLIPSIS,)), None)
        sizes: dict[str, Expr] = dict(lengths)
        flat: list[Expr] = []  # the elementary sizes, the ellipsis flattened into one axis
        ellipsis: Expr | None = None
        decompose = False
        for index, group in enumerate(groups):
            if group == (ELLIPSIS,):
                after = len(groups) - index - 1
                ellipsis = self.atom(SeqSlice(shape, const(index), const(-after) if after else None, None,
                                              t.SeqT(t.INT), span))
                sizes[ELLIPSIS] = self.atom(Host(HostOp.PROD, (ellipsis,), t.INT, span))
                flat.append(sizes[ELLIPSIS])
                decompose = True
                continue
            position = index if ellipsis_at is None or index < ellipsis_at else index - len(groups)
            dim = self.atom(SeqIndex(shape, const(position), t.INT, span))
            if len(group) == 1:
                sizes.setdefault(group[0], dim)
            elif group:
                known = [sizes[a] for a in group if a in lengths]
                unknown = [a for a in group if a not in lengths]
                if unknown:
                    product = known[0] if known else const(1)
                    for other in known[1:]:
                        product = self.atom(self.host(HostOp.MUL, [product, other], span, shown))
                    sizes[unknown[0]] = self.atom(self.host(HostOp.FLOORDIV, [dim, product], span, shown))
                decompose = True
            else:
                decompose = True  # a `1`: the unit axis goes
            flat.extend(sizes[a] for a in group)
        current = plan.left.axes
        if decompose:
            x = self.atom(self.invoke_method("reshape", x, [Argument(ints(flat))], {}, span, shown))
        if plan.reduced:
            dims = [current.index(a) for a in plan.reduced]
            if reduction == "prod":
                for dim in sorted(dims, reverse=True):
                    x = self.atom(self.invoke_method("prod", x, [Argument(const(dim))], {}, span, shown))
            else:
                method = {"max": "amax", "min": "amin"}.get(reduction, reduction)
                x = self.atom(self.invoke_method(method, x, [Argument(ints([const(d) for d in dims]))], {}, span, shown))
            current = [a for a in current if a not in plan.reduced]
        order = list(plan.order)
        if order != current:
            permutation = [const(current.index(a)) for a in order]
            x = self.atom(self.invoke_method("permute", x, [Argument(ints(permutation))], {}, span, shown))
        right = plan.right.axes
        if plan.added:
            for position, axis in enumerate(right):
                if axis in plan.added:
                    x = self.atom(self.invoke_method("unsqueeze", x, [Argument(const(position))], {}, span, shown))
            expanded = [sizes[a] if a in plan.added else const(-1) for a in right]
            x = self.atom(self.invoke_method("expand", x, [Argument(ints(expanded))], {}, span, shown))
        singletons = all(len(g) == 1 and g != (ELLIPSIS,) for g in plan.right.groups)
        if singletons and not decompose:
            return x
        parts: list[tuple[Expr, bool]] = []
        for group in plan.right.groups:
            if group == (ELLIPSIS,):
                assert ellipsis is not None  # the pattern's two sides both have `...` or neither has
                parts.append((ellipsis, True))
                continue
            size: Expr = const(1)
            for axis in group:
                size = sizes[axis] if size is None or (isinstance(size, Const) and size.value == 1) else \
                    self.atom(self.host(HostOp.MUL, [size, sizes[axis]], span, shown))
            parts.append((size, False))
        target = self.concatenate(parts, span)
        return self.invoke_method("reshape", x, [Argument(self.atom(target))], {}, span, shown)

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
                            "torch.SymFloat", "torch.SymBool", "torch.dtype", "torch.device"})


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
                            HostOp.DEVICE_TYPE, HostOp.DEFAULT_DTYPE, HostOp.DTYPE_IS, HostOp.RANGE})


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


def _text_of(text: ast.expr) -> str:
    """A message of torch's Python code as a finding shows it: a string, an f-string's literal parts with `{...}`
    for each value, or the expression's source."""
    if isinstance(text, ast.Constant) and isinstance(text.value, str):
        return text.value
    if not isinstance(text, ast.JoinedStr):
        return display(text)
    return "".join(str(part.value) if isinstance(part, ast.Constant) else "{" + display(part.value) + "}"
                   for part in text.values if isinstance(part, (ast.Constant, ast.FormattedValue)))


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


def _is_text(node: ast.expr) -> bool:
    """A message's text: string literals, f-strings and their concatenations."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    if isinstance(node, ast.JoinedStr):
        return True
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and _is_text(node.left) and _is_text(node.right)


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
        elif isinstance(kind, (t.NoneT, t.StrT, t.DtypeT, t.LayoutT, t.MemoryFormatT)):
            kinds.append(str(kind))
        else:
            return False  # a tensor compares elementwise; an optional may hold either
    return kinds[0] != kinds[1]


def _fold_str_method(text: str, name: str, args: list[Argument], keywords: dict[str, Expr], span: Span) -> Expr | None:
    """A method of a string known here, on arguments known here (``op_name.rsplit(".", 1)``): its value, as Python
    computes it; None when an argument is not known here."""
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


def _is_docstring(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) and isinstance(statement.value.value, str)


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


def _statement_text(statement: ast.AST) -> str:
    """What a finding about a whole statement names: the expression it computes, or the statement."""
    value = getattr(statement, "value", None)
    if isinstance(statement, (ast.Return, ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign)) and \
            isinstance(value, ast.expr):
        return display(value)
    if isinstance(statement, ast.FunctionDef):
        return statement.name
    return display(statement)


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


def _assignable(value: t.Type, declared: t.Type) -> str:
    """Why a value of type ``value`` cannot be returned as ``declared`` ("" when it can)."""
    if value == declared:
        return ""
    if isinstance(declared, t.NumberT) and isinstance(value, (t.IntT, t.FloatT)):
        return ""
    if isinstance(declared, t.OptionalT):
        if isinstance(value, t.NoneT):
            return ""
        return _assignable(t.strip_optional(value), declared.inner)
    if isinstance(declared, t.TupleT) and isinstance(value, t.TupleT) and len(declared.items) == len(value.items):
        problems = [_assignable(v, d) for v, d in zip(value.items, declared.items)]
        return next((p for p in problems if p), "")
    if isinstance(declared, t.SeqT) and isinstance(value, t.SeqT):
        return _assignable(value.item, declared.item)
    if isinstance(declared, t.SeqT) and isinstance(value, t.TupleT):
        problems = [_assignable(v, declared.item) for v in value.items]
        return next((p for p in problems if p), "")
    if isinstance(declared, t.IntT) and isinstance(value, t.BoolT):
        return " (the compiled region would hand back 1 for True; declare `-> bool` or convert with `int()`)"
    return " "


def build_model(region: Region, deadline: float | None = None) -> Analysis:
    """The region's model. Whatever stops the builder is the region's one finding, never an exception: a budget
    running out (``budgets``; ``deadline``, a time.monotonic(), is ppy-check's budget for the file), a body nested
    too deeply for this recursive builder, memory, or a failure of the builder itself."""
    import os
    import sys
    import traceback

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20000))
    builder = Builder(region, deadline=deadline)
    try:
        return builder.build()
    except _OutOfBudget as stop:
        return builder.stopped(stop.exceeded)
    except RecursionError:
        return builder.stopped(Exceeded(Budget.DEPTH, 0))
    except MemoryError:
        return builder.stopped(Exceeded(Budget.MEMORY, 0))
    except Exception as error:  # a builder bug: this region's alone, refused, and the rest of the file is checked
        if os.environ.get("PPY_DEBUG"):
            traceback.print_exc()
        return builder.stopped(None, f"{type(error).__name__}: {_short(str(error))}")
    finally:
        builder.release()
        sys.setrecursionlimit(limit)


def _short(text: str) -> str:
    first = text.splitlines()[0] if text else ""
    return first if len(first) <= 120 else first[:117] + "..."
