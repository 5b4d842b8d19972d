"""The builder's fixed tables: torch namespaces, methods, properties and operators by name."""

from __future__ import annotations

import ast

from ppy_check.messages import Reason, refusals
from ppy_check.model import types as t
from ppy_check.model.ir import EnumName, GradMode, HostOp, PythonException, Query

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
                         "replace", "removeprefix", "removesuffix", "join"})


SUPPORTED_BUILTINS = frozenset({"int", "float", "bool", "abs", "min", "max", "round", "len", "list", "tuple"})


# Builtins torch's Python code uses on sequences whose length is known where a region is built.
LIBRARY_BUILTINS = frozenset({"range", "zip", "enumerate", "reversed", "sorted", "all", "any", "sum", "min", "max",
                              "float", "ord", "chr"})


MAX_UNROLLED = 64  # items of a `range` that torch's Python code loops over


# What consumes every item of a generator, in order, before anything else runs.
EAGER_CONSUMERS = frozenset({"list", "tuple", "sum", "min", "max", "sorted", "join"})


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


# Modules whose functions ppy knows itself, never read as the project's: a region calls them by name.
STANDARD_ROOTS = frozenset({"torch", "math", "builtins", "einops", "functools", "operator"})


# What ppy's version of torch.einsum calls for the contraction path, a question asked when the region runs.
EINSUM_PATH = "ppy.einsum.contract_path"


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
