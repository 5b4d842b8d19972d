"""The model's records: expressions and statements of a region in evaluation order, with spans and effects.

Every expression knows its static type, the source it came from, and which
tensor parameters it may alias (a view or the parameter itself), so a write
through it is a write to the caller's tensor. The body is in A-normal form:
every call and every operation that can raise is bound to a variable of its
own, in the order Python evaluates it, so the C++ runs the same steps in the
same order (C++ leaves the order of function arguments unspecified).
"""

from __future__ import annotations

import ast
import enum
from dataclasses import dataclass, field
from typing import Any, Union

from ppy_check.model.assumptions import Assumption
from ppy_check.model.types import Type
from ppy_check.schema import Native, Overload
from ppy_check.site import RegionSite


@dataclass(frozen=True)
class Span:
    """Where in the file: 1-based lines, 0-based columns, as ``ast`` counts (UTF-8 bytes)."""

    line: int
    column: int
    end_line: int
    end_column: int

    @classmethod
    def of(cls, node: ast.AST) -> Span:
        try:  # every expression and statement has all four (the ends may be None); read directly, it is hot
            line, column, end_line, end_column = node.lineno, node.col_offset, node.end_lineno, node.end_col_offset  # type: ignore[attr-defined]
        except AttributeError:
            line, column = getattr(node, "lineno", 1), getattr(node, "col_offset", 0)
            end_line, end_column = getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None)
        return cls(line, column, end_line or line, end_column or column)


NO_ALIASES: frozenset[str] = frozenset()


@dataclass(frozen=True, eq=False)
class Var:
    """One assignment's variable (a name assigned twice is two variables)."""

    name: str  # the Python name, or "" for a temporary
    index: int  # unique in the region
    type: Type


# --- expressions -------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Const:
    value: Any  # int, float, bool, str, None, Ellipsis, or a Named constant below
    type: Type
    span: Span
    aliases: frozenset[str] = NO_ALIASES


@dataclass(frozen=True)
class DtypeName:
    """``torch.float32``: ATen's ScalarType name (``Float``)."""

    scalar_type: str


@dataclass(frozen=True)
class EnumName:
    """A torch constant of an enum type: ``torch.strided`` (Layout), ``torch.channels_last`` (MemoryFormat)."""

    cpp: str  # the C++ spelling, e.g. at::MemoryFormat::ChannelsLast


@dataclass(frozen=True, eq=False)
class Param:
    name: str
    index: int
    type: Type
    span: Span
    aliases: frozenset[str] = NO_ALIASES


@dataclass(frozen=True, eq=False)
class Read:
    """The value of a variable."""

    var: Var
    type: Type
    span: Span
    aliases: frozenset[str] = NO_ALIASES


@dataclass(frozen=True, eq=False)
class Call:
    """One ATen operator overload, every schema argument given (``args`` in schema order; None: its default)."""

    native: Native
    overload: Overload
    args: tuple[tuple[str, Expr | None], ...]
    type: Type
    span: Span
    aliases: frozenset[str] = NO_ALIASES
    text: str = ""  # the call as the user wrote it, for messages
    requires_grad: Expr | None = None  # `requires_grad=` of a factory: applied to the result, as Python does


class HostOp(enum.Enum):
    """Python's operations on ints, floats and bools, run on the host with Python's exact semantics."""

    ADD = "+"
    SUB = "-"
    MUL = "*"
    TRUEDIV = "/"
    FLOORDIV = "//"
    MOD = "%"
    POW = "**"
    LSHIFT = "<<"
    RSHIFT = ">>"
    BITAND = "&"
    BITOR = "|"
    BITXOR = "^"
    NEG = "neg"
    POS = "pos"
    INVERT = "~"
    NOT = "not"
    EQ = "=="
    NE = "!="
    LT = "<"
    LE = "<="
    GT = ">"
    GE = ">="
    ABS = "abs"
    MIN = "min"
    MAX = "max"
    ROUND = "round"
    ROUND_DIGITS = "round_digits"
    TO_INT = "int"
    TO_FLOAT = "float"
    DEVICE_TYPE = "device.type"  # a device's type as Python names it: "cpu", "cuda"
    DEFAULT_DTYPE = "torch.get_default_dtype"  # no operands: torch's setting, read when the region runs
    TO_BOOL = "bool"
    TENSOR_FLOAT = "tensor.float"  # `float(t)` of a one-element tensor in torch's own code: a read of its value
    ALL = "all"  # `and` of comparisons in a chain: operands already evaluated
    PROD = "prod"  # the product of a run-time sequence of ints
    RANGE = "range"  # `range(n)` of a run-time int, taken whole (`tuple(range(x.ndim))`): a run-time sequence
    DTYPE_IS = "dtype.is"  # `dtype.is_floating_point`, `.is_complex`, `.is_signed`: `function` names which
    IINFO = "torch.iinfo"  # `torch.iinfo(dtype).min` or `.max`: `function` names which; TypeError for no int dtype
    FINFO = "torch.finfo"  # `torch.finfo(dtype).<attribute>`: `function` names it; TypeError for no float dtype
    MATH = "math"  # math.<function>: `function` names it
    # torch.einsum's contraction path for its operands (the equation, then each tensor): None, or the flat pairs
    # opt_einsum finds, as torch's Python code asks for them when the region runs (``ppy.einsum.contract_path``).
    EINSUM_PATH = "einsum_path"
    # The dtype `torch.tensor(v)` infers for a number known only at run time (a `float` parameter that may hold
    # an int): int64 for an int, else the default dtype, read when the region runs.
    NUMBER_DTYPE = "number_dtype"
    # torch._refs._broadcast_shapes(*shapes) (torch.broadcast_shapes, F.binary_cross_entropy's weight): the common
    # shape, or torch's errors; `function` names how each shape prints in them ("S": a torch.Size, "T": a tuple).
    BROADCAST_SHAPES = "broadcast_shapes"
    # torch._C._infer_size(a, b) (torch 2.11's F.binary_cross_entropy with a weight): the two shapes broadcast, by
    # ATen's at::infer_size, so with its errors.
    INFER_SIZE = "infer_size"


@dataclass(frozen=True, eq=False)
class Host:
    op: HostOp
    operands: tuple[Expr, ...]
    type: Type
    span: Span
    function: str = ""  # for HostOp.MATH
    aliases: frozenset[str] = NO_ALIASES


@dataclass(frozen=True, eq=False)
class MakeTuple:
    items: tuple[Expr, ...]
    type: Type
    span: Span
    aliases: frozenset[str] = NO_ALIASES


@dataclass(frozen=True, eq=False)
class MakeSeq:
    """A sequence built at run time: items, and spreads of other sequences (``(*shape[:-1], -1, 2)``)."""

    parts: tuple[tuple[Expr, bool], ...]  # (value, spread)
    type: Type
    span: Span
    aliases: frozenset[str] = NO_ALIASES


@dataclass(frozen=True, eq=False)
class Item:
    """Item ``index`` of a tuple of known length (a std::tuple), or of a checked sequence."""

    base: Expr
    index: int
    type: Type
    span: Span
    aliases: frozenset[str] = NO_ALIASES


@dataclass(frozen=True, eq=False)
class SeqIndex:
    """``seq[i]`` with a run-time index: Python's negative indices, IndexError out of range."""

    base: Expr
    index: Expr
    type: Type
    span: Span
    aliases: frozenset[str] = NO_ALIASES


@dataclass(frozen=True, eq=False)
class SeqSlice:
    base: Expr
    lower: Expr | None
    upper: Expr | None
    step: Expr | None
    type: Type
    span: Span
    aliases: frozenset[str] = NO_ALIASES


@dataclass(frozen=True, eq=False)
class Length:
    base: Expr
    type: Type
    span: Span
    aliases: frozenset[str] = NO_ALIASES


@dataclass(frozen=True, eq=False)
class SliceIndex:
    lower: Expr | None
    upper: Expr | None
    step: Expr | None


@dataclass(frozen=True, eq=False)
class IndexList:
    """``x[[0, 1]]``: Python turns a list in an index into an index tensor (int64, or bool for bools)."""

    items: tuple[Expr, ...]
    boolean: bool


@dataclass(frozen=True, eq=False)
class NoneRun:
    """``(None,) * n`` joined into an index (``x[(...,) + (None,) * n]``, k-diffusion's ``append_dims``): ``n``
    new dimensions of size 1, a count known only at run time (none for a count below 1, as Python's repeat)."""

    count: Expr


IndexPart = Union["Expr", SliceIndex, IndexList, NoneRun]


@dataclass(frozen=True, eq=False)
class TensorIndex:
    """``x[...]``: ATen's own indexing (``Tensor::index``), the same rules as Python's."""

    base: Expr
    parts: tuple[IndexPart, ...]
    type: Type
    span: Span
    aliases: frozenset[str] = NO_ALIASES


class Query(enum.Enum):
    """What a region may ask a tensor without dispatching an operator."""

    SHAPE = "shape"  # x.shape, x.size()
    SIZE = "size"  # x.size(d), x.shape[d]
    STRIDE = "stride"  # x.stride(d)
    STRIDES = "strides"  # x.stride()
    DIM = "dim"
    NUMEL = "numel"
    ELEMENT_SIZE = "element_size"
    DTYPE = "dtype"
    DEVICE = "device"
    IS_CUDA = "is_cuda"
    IS_CPU = "is_cpu"
    IS_SPARSE = "is_sparse"
    IS_MKLDNN = "is_mkldnn"
    IS_META = "is_meta"
    REQUIRES_GRAD = "requires_grad"
    IS_CONTIGUOUS = "is_contiguous"
    IS_FLOATING_POINT = "is_floating_point"
    IS_COMPLEX = "is_complex"
    LAYOUT = "layout"


@dataclass(frozen=True, eq=False)
class TensorQuery:
    base: Expr
    query: Query
    args: tuple[Expr, ...]
    type: Type
    span: Span
    aliases: frozenset[str] = NO_ALIASES


@dataclass(frozen=True, eq=False)
class VariableData:
    """``x.data``: ``x``'s storage as a tensor autograd does not see, with a version counter of its own, so a
    write through it writes ``x`` unnoticed by a graph that saved ``x`` (as in eager)."""

    base: Expr
    type: Type
    span: Span
    aliases: frozenset[str] = NO_ALIASES


@dataclass(frozen=True, eq=False)
class Unwrap:
    """The value inside an optional; TypeError if it is None, as the Python body would fail."""

    base: Expr
    what: str
    type: Type
    span: Span
    aliases: frozenset[str] = NO_ALIASES


@dataclass(frozen=True, eq=False)
class IsNone:
    base: Expr
    negate: bool
    type: Type
    span: Span
    aliases: frozenset[str] = NO_ALIASES


# Written with `|`, not Union[...]: mypy narrows `isinstance(value, Expr)` only on such a union.
Expr = (Const | Param | Read | Call | Host | MakeTuple | MakeSeq | Item | SeqIndex | SeqSlice | Length | TensorIndex
        | TensorQuery | VariableData | Unwrap | IsNone)


# --- statements --------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Let:
    var: Var
    value: Expr
    span: Span


@dataclass(frozen=True, eq=False)
class Eval:
    """An expression statement whose value is dropped (an in-place op, say)."""

    value: Expr
    span: Span


@dataclass(frozen=True, eq=False)
class Store:
    """``x[parts] = value``: ATen's ``index_put_`` on the tensor ``target``."""

    target: Expr
    parts: tuple[IndexPart, ...]
    value: Expr
    span: Span


@dataclass(frozen=True, eq=False)
class ExpectLength:
    """Unpacking a sequence of run-time length: ValueError unless it has ``count`` items (at least, with a star)."""

    base: Expr
    count: int
    at_least: bool
    span: Span


class PythonException(enum.Enum):
    """The exceptions a failed check raises (torch's Python code's, a region's own, einops's), as a compiled region
    raises them too."""

    VALUE_ERROR = "ValueError"
    TYPE_ERROR = "TypeError"
    RUNTIME_ERROR = "RuntimeError"
    INDEX_ERROR = "IndexError"
    KEY_ERROR = "KeyError"
    ASSERTION_ERROR = "AssertionError"
    NOT_IMPLEMENTED_ERROR = "NotImplementedError"
    # einops.EinopsError (a RuntimeError): what an einops call raises for a tensor its pattern does not fit. No
    # builtin, so neither a region's own `raise` nor torch's code names it; ppy_einops.h gives the C++ its class.
    EINOPS_ERROR = "EinopsError"

    @property
    def builtin(self) -> bool:
        """Whether Python's builtins hold it (``raise ValueError(...)`` names it; Python's C API has it)."""
        return self is not PythonException.EINOPS_ERROR


@dataclass(frozen=True)
class ResultClass:
    """A tuple subclass Python builds a result as: ``torch.Size``, ``torch.return_types.max``."""

    module: str
    name: str


@dataclass(frozen=True, eq=False)
class ShownSeq:
    """A sequence of run-time length in an exception's message, as Python's str() shows it: its items ", " apart
    between ``opening`` and ``closing`` (``(1, 2)``, ``[1, 2]``, ``torch.Size([1, 2])``), and a tuple of one item
    with its comma (``(1,)``)."""

    value: Expr
    opening: str
    closing: str
    tuple_comma: bool


@dataclass(frozen=True, eq=False)
class Require:
    """A check on a run-time value (``if x.dim() != 4: raise ValueError(...)``), in torch's Python code or a region's.

    ``holds`` is the negated test, a host bool; when it is false the compiled
    region raises ``error`` with ``message``, as the Python code would. The
    message is text and the run-time values an f-string formats into it (ints, bools, floats, strs, dtypes, and
    sequences of numbers).
    """

    holds: Expr
    error: PythonException
    message: tuple[str | Expr | ShownSeq, ...]
    span: Span


@dataclass(frozen=True, eq=False)
class Return:
    value: Expr | None
    span: Span


@dataclass(frozen=True, eq=False)
class Branch:
    """A decision torch's own Python code takes on a run-time value (``if input.dim() == 3:``), as a C++ ``if``.

    Only torch's code inlined into a region branches (a region's own code has
    no branches, by the rules). Each way runs its statements, then gives each
    of ``merged`` (variables declared before the ``if``) its value on that way.
    """

    test: Expr
    then_body: tuple[Stmt, ...]
    else_body: tuple[Stmt, ...]
    # (variable, its value when the test holds, its value otherwise); None where that way raises
    merged: tuple[tuple[Var, Expr | None, Expr | None], ...]
    span: Span


@dataclass(frozen=True, eq=False)
class Assertion:
    """A region's own ``assert``: the statements that compute its test and message and check it (a ``Require``).

    Python skips an ``assert`` whole under ``python -O`` (the test is not even
    computed), so the compiled region runs ``body`` only where the process
    keeps asserts (``sys.flags.optimize`` is 0). Nothing in ``body`` binds a
    variable read after it.
    """

    body: tuple[Stmt, ...]
    span: Span


Stmt = Let | Eval | Store | ExpectLength | Require | Branch | Assertion | Return


# --- what the region does to its caller -------------------------------------------


class WriteKind(enum.Enum):
    OP = "op"  # an in-place op or an op whose schema writes the argument
    OUT = "out"  # an out= argument
    STORE = "store"  # x[i] = y, x += y
    HIDDEN = "hidden"  # an op torch's schema does not annotate (observed by the op-data probe)


@dataclass(frozen=True)
class Write:
    param: str
    span: Span
    text: str  # the operation as written, for messages
    kind: WriteKind


class GradMode(enum.Enum):
    """A grad-mode decorator under ``@ppy.opt`` (``@torch.no_grad()``): the body runs in that mode."""

    INHERIT = "inherit"
    NO_GRAD = "no_grad"
    ENABLE_GRAD = "enable_grad"
    INFERENCE = "inference_mode"


@dataclass(frozen=True)
class ParamInfo:
    name: str
    type: Type
    kwonly: bool


@dataclass(frozen=True)
class InstanceReads:
    """What the entry of a method region takes from its instance at each call, and what it checks first.

    ``reads``: each attribute path (from the instance: ``attn.c_proj.weight``) the region reads a value of, in
    the order of the inputs that follow the region's own parameters, with the type the build assumed.
    ``classes``: each object the region reached through the instance (``""`` for the instance itself), and the
    exact class it was read as (``torch.nn.Linear``, or the name of a class of the region's file): another class
    (a subclass, a wrapper swapped in) has other code, so the call runs the Python body."""

    reads: tuple[tuple[str, Type], ...]
    classes: tuple[tuple[str, str], ...]
    # (path, name) of each method the build ran, on the instance itself (path "": `self.helper(x)`,
    # `super().forward(x)`) or on an object reached through it (`attn`: its `forward`, the methods that calls).
    # A subclass of the instance's class that defines none of the instance's, nor any attribute the region reads,
    # runs the same code (FSDP2's `fully_shard` makes every module it shards an instance of such a subclass); an
    # attribute of an object's own under one of its names, or its class changed there, is other code.
    methods: tuple[tuple[str, str], ...] = ()
    # The containers whose number of items the build used (a `[-1]`, a Sequential called): each with that
    # number, as the construction in the class's source makes it. An item appended or deleted since is another
    # model: that call runs the Python body.
    lengths: tuple[tuple[str, int], ...] = ()


@dataclass
class RegionModel:
    site: RegionSite
    name: str
    params: tuple[ParamInfo, ...]
    returns: Type
    pure: bool
    level: int
    grad_mode: GradMode = GradMode.INHERIT
    body: list[Stmt] = field(default_factory=list)
    writes: list[Write] = field(default_factory=list)
    random: bool = False  # draws random numbers: its order relative to the caller's draws matters
    natives: set[str] = field(default_factory=set)  # every overload it calls ("add.Tensor")
    dependencies: dict[str, str] = field(default_factory=dict)  # other files its helpers live in: path -> sha256
    # Parts of the result Python hands back as a tuple subclass: (where in the result, class), the deepest first.
    # `return torch.max(x, 1)` is a torch.return_types.max at (); `return y, y.shape` a torch.Size at (1,).
    result_classes: tuple[tuple[tuple[int, ...], ResultClass], ...] = ()
    assumptions: tuple[Assumption, ...] = ()  # the outside names it relied on, in the order it read them
    instance: InstanceReads | None = None  # a method region's reads through `self`; None for a function
