"""Lower one checked region to the body of one C++ function of ``at::`` calls.

The lowering walks the straight-line body in order. Every Python value
becomes a ``CExpr`` (C++ code and a kind); a call is resolved against the
overloads torch's Python argument parser would try, in the same order, and
emitted through the C++ signature torchgen derives for the chosen one. A name
assigned twice gets a fresh C++ variable each time. C++ leaves the order of
function arguments unspecified, so a statement holding a call that writes
memory or draws random numbers is emitted one call per line, in Python's order.
"""

from __future__ import annotations

import ast
import copy
import os
from dataclasses import dataclass, field
from typing import Any

from ppy_check.expand import ATEN, TORCH, Unsupported, dotted_name, expand, normalise_dotted
from ppy_check.region import Region
from ppy_check.scope import is_literal
from ppy_check.types import FLOAT_CONSTANTS, TORCH_DTYPES, NoneType, Optional, RegionType, Scalar, Tuple
from ppy_check.wrappers import lookup
from ppy_compile.cpp_types import (
    CExpr, TypeMismatch, convert, cpp_type, dtype_code, float_literal, literal, param_type, param_value,
    result_value, unwrap,
)
from ppy_compile.schemas import Catalog, Overload

TENSOR_VIEWS = {"T": "numpy_T", "mT": "mT", "H": "matrix_H", "mH": "mH"}

# Python operators on tensors, as the Tensor method each calls (torch/_tensor.py).
BINARY_METHODS = {
    ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.FloorDiv: "floor_divide",
    ast.Mod: "remainder", ast.Pow: "pow", ast.MatMult: "matmul", ast.BitAnd: "bitwise_and",
    ast.BitOr: "bitwise_or", ast.BitXor: "bitwise_xor", ast.LShift: "bitwise_left_shift",
    ast.RShift: "bitwise_right_shift",
}
COMPARE_METHODS = {ast.Eq: "eq", ast.NotEq: "ne", ast.Lt: "lt", ast.LtE: "le", ast.Gt: "gt", ast.GtE: "ge"}
MIRRORED = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}
INT_OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^",
                 ast.LShift: "<<", ast.RShift: ">>"}
C_COMPARE = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}


def testing_mutation() -> tuple[str, ...]:
    """A deliberate miscompilation, for ppy's own tests of the verifier: never set it otherwise.

    ``swap:A:B`` emits op B where the region calls A; ``drop-writes`` leaves
    out every in-place write; ``detach`` cuts the returned tensors from autograd.
    """
    value = os.environ.get("PPY_TESTING_MUTATION", "")
    return tuple(value.split(":")) if value else ()


class LoweringError(Exception):
    def __init__(self, node: ast.AST, message: str):
        super().__init__(message)
        self.node = node
        self.message = message


@dataclass
class LoweredRegion:
    name: str
    cpp_name: str
    signature: str  # the C++ function's declaration, without a trailing ';'
    body: list[str]
    headers: set[str]
    params: list[tuple[str, RegionType]]
    returns: RegionType
    # Every native overload the region calls ("add.Tensor", "layer_norm").
    overloads: set[str] = field(default_factory=set)

    def source(self) -> str:
        return self.signature + " {\n" + "".join(f"    {line}\n" for line in self.body) + "}\n"


class _Restart(Exception):
    """A statement holds an effectful call: lower it again, one call per line."""


class Lowerer:
    def __init__(self, region: Region, catalog: Catalog, module_tag: str):
        self.region = region
        self.catalog = catalog
        self.cpp_name = f"ppy_region_{module_tag}_{region.name}"
        self.env: dict[str, CExpr] = {}
        self.versions: dict[str, int] = {}
        self.lines: list[str] = []
        self.headers: set[str] = set()
        self.temps = 0
        self.mutation = testing_mutation()
        self.param_names: set[str] = set()
        self.overloads: set[str] = set()
        self.one_call_per_line = False
        self.effectful_seen = False
        self.calls_in_statement = 0

    # --- entry -----------------------------------------------------------

    def lower(self) -> LoweredRegion:
        params: list[tuple[str, RegionType]] = []
        declared = []
        for param in self.region.params:
            assert param.type is not None, "checked regions have typed parameters"
            cname = self._cpp_identifier(param.name)
            self.versions[param.name] = 0
            self.env[param.name] = param_value(cname, param.type)
            params.append((param.name, param.type))
            declared.append(f"{param_type(param.type)} {cname}")
            self.param_names.add(cname)
        returns = self.region.returns
        assert returns is not None
        signature = f"{cpp_type(returns)} {self.cpp_name}({', '.join(declared)})"
        for statement in self.region.node.body:
            self.statement(statement)
        if not isinstance(returns, NoneType) and not (self.region.node.body and isinstance(self.region.node.body[-1], ast.Return)):
            raise LoweringError(self.region.node, f"region `{self.region.name}` must end with a `return`")
        return LoweredRegion(self.region.name, self.cpp_name, signature, self.lines, self.headers, params, returns,
                             self.overloads)

    # --- statements --------------------------------------------------------

    def emit(self, line: str) -> None:
        self.lines.append(line)

    def statement(self, node: ast.stmt) -> None:
        mark = (len(self.lines), dict(self.env), dict(self.versions), self.temps, set(self.headers))
        self.one_call_per_line = False
        self.effectful_seen = False
        self.calls_in_statement = 0
        try:
            self._statement(node)
            if self.effectful_seen and self.calls_in_statement > 1:
                raise _Restart
        except _Restart:
            del self.lines[mark[0]:]
            self.env, self.versions, self.temps, self.headers = mark[1], mark[2], mark[3], mark[4]
            self.one_call_per_line = True
            self._statement(node)
        self.one_call_per_line = False

    def _statement(self, node: ast.stmt) -> None:
        if isinstance(node, ast.Expr):
            if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
                return  # a docstring
            value = self.expr(node.value)
            if value.code and value.kind != "none":
                self.emit(f"(void){value.code};" if not value.code.endswith(")") else f"{value.code};")
            elif value.code:
                self.emit(f"{value.code};")
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            if node.value is None:
                return
            value = self.expr(node.value)
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if len(targets) > 1:
                value = self.materialize(value, "tmp")
            for target in targets:
                self.assign(target, value)
        elif isinstance(node, ast.AugAssign):
            self.augmented(node)
        elif isinstance(node, ast.Return):
            self.ret(node)
        elif isinstance(node, ast.Pass):
            return
        else:
            raise LoweringError(node, f"region `{self.region.name}`: `{type(node).__name__}` statements cannot be lowered")

    def _cpp_identifier(self, name: str) -> str:
        return name if name not in _CPP_KEYWORDS else name + "_"

    def bind(self, name: str, value: CExpr) -> None:
        """A Python name takes a new value: a fresh C++ variable (names may be rebound to other types)."""
        if value.kind == "tuple" and value.items is not None and not value.code:
            # A tuple literal stays a tuple of names: each item becomes its own variable.
            items = tuple(self.materialize(item, f"{name}_{i}") for i, item in enumerate(value.items))
            self.env[name] = CExpr("", "tuple", items=items)
            return
        if value.kind in ("none", "ellipsis", "slice"):
            self.env[name] = value
            return
        version = self.versions.get(name, -1) + 1
        self.versions[name] = version
        cname = self._cpp_identifier(name if version == 0 else f"{name}_{version}")
        self.emit(f"auto {cname} = {value.code};")
        if value.kind == "tuple" and value.items is not None:
            items = tuple(CExpr(f"::std::get<{i}>({cname})", item.kind) for i, item in enumerate(value.items))
            self.env[name] = CExpr(cname, "tuple", items=items, names=value.names)
        else:
            self.env[name] = CExpr(cname, value.kind, literal=value.literal)

    def materialize(self, value: CExpr, hint: str = "t") -> CExpr:
        if value.kind in ("none", "ellipsis", "slice") or (value.kind == "tuple" and not value.code):
            return value
        if value.literal is not None or _is_identifier(value.code):
            return value
        self.temps += 1
        cname = f"ppy_{_safe(hint)}_{self.temps}"
        self.emit(f"auto {cname} = {value.code};")
        if value.kind == "tuple" and value.items is not None:
            items = tuple(CExpr(f"::std::get<{i}>({cname})", item.kind) for i, item in enumerate(value.items))
            return CExpr(cname, "tuple", items=items, names=value.names)
        return CExpr(cname, value.kind)

    def assign(self, target: ast.expr, value: CExpr) -> None:
        if isinstance(target, ast.Name):
            self.bind(target.id, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            self.unpack(target, value)
        elif isinstance(target, ast.Subscript):
            base = self.expr(target.value)
            if base.kind != "tensor":
                raise LoweringError(target, f"region `{self.region.name}`: only tensors take item assignment")
            indices = self.indices(target.slice)
            handle = self.lvalue(base)  # Tensor::index_put_ with Python-style indices is not const
            if value.kind == "tensor":
                self.emit(f"{handle}.index_put_({indices}, {value.code});")
            else:
                value = unwrap(value, "value")
                if value.kind not in ("int", "float", "bool"):
                    raise LoweringError(target, f"region `{self.region.name}`: cannot store a {value.kind} into a tensor")
                self.emit(f"{handle}.index_put_({indices}, at::Scalar({value.code}));")
            self.headers.add("ATen/TensorIndexing.h")
        else:
            raise LoweringError(target, f"region `{self.region.name}`: cannot assign to `{ast.unparse(target)}`")

    def unpack(self, target: ast.Tuple | ast.List, value: CExpr) -> None:
        count = len(target.elts)
        if any(isinstance(e, ast.Starred) for e in target.elts):
            raise LoweringError(target, f"region `{self.region.name}`: starred unpacking cannot be lowered")
        if value.kind == "tuple" and value.items is not None:
            if len(value.items) != count:
                raise LoweringError(target, f"region `{self.region.name}`: unpacks {len(value.items)} values into {count} names")
            source = self.materialize(value, "unpacked")
            for element, item in zip(target.elts, source.items or ()):
                self.assign(element, item)
            return
        if value.kind in ("tensors", "ints"):
            source = self.materialize(value, "unpacked")
            self.emit(f"ppy::expect_size({source.code}, {count});")
            kind = "tensor" if value.kind == "tensors" else "int"
            for index, element in enumerate(target.elts):
                self.assign(element, CExpr(f"{source.code}[{index}]", kind))
            return
        raise LoweringError(target, f"region `{self.region.name}`: cannot unpack a {value.kind}")

    def augmented(self, node: ast.AugAssign) -> None:
        if not isinstance(node.target, ast.Name):
            base = self.expr(ast.copy_location(ast.Subscript(node.target.value, node.target.slice, ast.Load()), node.target)
                             if isinstance(node.target, ast.Subscript) else node.target)
            if base.kind != "tensor":
                raise LoweringError(node, f"region `{self.region.name}`: cannot lower `{ast.unparse(node)}`")
            other = self.expr(node.value)
            self.emit(self.tensor_operator(node.op, base, other, node, in_place=True).code + ";")
            return
        current = self.lookup_name(node.target.id, node.target)
        other = self.expr(node.value)
        if current.kind == "tensor":
            # `x += y` is Tensor.__iadd__: an in-place op on the same tensor.
            self.emit(self.tensor_operator(node.op, current, other, node, in_place=True).code + ";")
            return
        self.bind(node.target.id, self.binary(node.op, current, other, node))

    def ret(self, node: ast.Return) -> None:
        returns = self.region.returns
        if isinstance(returns, NoneType):
            if node.value is not None:
                value = self.expr(node.value)
                if value.kind != "none":
                    raise LoweringError(node, f"region `{self.region.name}` is annotated `-> None` but returns a value")
            self.emit("return;")
            return
        assert returns is not None
        value = self.expr(node.value) if node.value is not None else CExpr("::std::nullopt", "none")
        self.emit(f"return {self.coerce(value, returns, node)};")

    def coerce(self, value: CExpr, kind: RegionType, node: ast.AST) -> str:
        """C++ for ``value`` as the region type ``kind`` (a return, or an item of one)."""
        target = cpp_type(kind)
        if isinstance(kind, Optional):
            if value.kind == "none":
                return f"{target}()"
            if value.kind.startswith("opt_"):
                return value.code
            return f"{target}({self.coerce(value, kind.inner, node)})"
        if isinstance(kind, Tuple):
            if kind.variadic:
                item_kind = kind.items[0]
                if value.kind in ("tensors", "ints"):
                    return value.code
                if value.kind == "tuple" and value.items is not None:
                    return f"{target}{{" + ", ".join(self.coerce(i, item_kind, node) for i in value.items) + "}"
            elif value.kind == "tuple" and value.items is not None and len(value.items) == len(kind.items):
                if value.code and not any(i.kind == "tuple" for i in value.items):
                    return f"{target}({value.code})"
                return f"{target}(" + ", ".join(self.coerce(i, k, node) for i, k in zip(value.items, kind.items)) + ")"
            raise LoweringError(node, f"region `{self.region.name}` returns a {value.kind} where `{kind}` was declared")
        assert isinstance(kind, Scalar)
        value = unwrap(value, "return value")
        expected = {"Tensor": ("tensor",), "int": ("int", "bool"), "float": ("float", "int"), "bool": ("bool",),
                    "str": ("str",), "dtype": ("dtype",)}[kind.name]
        if value.kind not in expected:
            raise LoweringError(node, f"region `{self.region.name}` returns a {value.kind} where `{kind}` was declared")
        if kind.name == "str":
            return f"::std::string({value.code})"
        if kind.name == "Tensor" and self.mutation == ("detach",):
            return f"{_paren(value.code)}.detach()"
        return value.code

    # --- expressions -------------------------------------------------------

    def expr(self, node: ast.expr) -> CExpr:
        if isinstance(node, ast.Constant):
            try:
                return literal(node.value)
            except TypeMismatch as error:
                raise LoweringError(node, f"region `{self.region.name}`: {error}") from None
        if isinstance(node, ast.Name):
            return self.lookup_name(node.id, node)
        if isinstance(node, ast.Attribute):
            return self.attribute(node)
        if isinstance(node, ast.Subscript):
            return self.subscript(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.BinOp):
            left = self.expr(node.left)
            right = self.expr(node.right)
            return self.binary(node.op, left, right, node)
        if isinstance(node, ast.UnaryOp):
            return self.unary(node)
        if isinstance(node, ast.Compare):
            return self.compare(node)
        if isinstance(node, (ast.Tuple, ast.List)):
            items = tuple(self.expr(item) for item in node.elts)
            return CExpr("", "tuple", items=items)
        raise LoweringError(node, f"region `{self.region.name}`: `{ast.unparse(node)}` cannot be lowered")

    def lookup_name(self, name: str, node: ast.AST) -> CExpr:
        if name in self.env:
            return self.env[name]
        binding = self.region.scope.bindings.get(name)
        if binding is not None and binding.kind == "constant" and binding.value is not None and is_literal(binding.value):
            return self.expr(copy.deepcopy(binding.value))
        target = self.region.scope.imports.get(name)
        if target is not None:
            constant = self.module_constant(target)
            if constant is not None:
                return constant
        raise LoweringError(node, f"region `{self.region.name}`: `{name}` is not a parameter, a local or a constant")

    def module_constant(self, dotted: str) -> CExpr | None:
        dotted = normalise_dotted(dotted)
        module, _, attr = dotted.rpartition(".")
        if module == "torch" and attr in TORCH_DTYPES:
            return CExpr(dtype_code(attr), "dtype")
        if dotted in FLOAT_CONSTANTS:
            return CExpr(float_literal(FLOAT_CONSTANTS[dotted]), "float", literal=FLOAT_CONSTANTS[dotted])
        return None

    def dotted(self, node: ast.expr) -> str | None:
        return dotted_name(node, self.region.scope.imports, lambda name: name in self.env)

    def attribute(self, node: ast.Attribute) -> CExpr:
        dotted = self.dotted(node)
        if dotted is not None:
            constant = self.module_constant(dotted)
            if constant is None:
                raise LoweringError(node, f"region `{self.region.name}`: `{ast.unparse(node)}` is not a value a region can read")
            return constant
        base = self.expr(node.value)
        if base.kind == "tuple" and base.names and node.attr in base.names:
            return base.item(base.names.index(node.attr))
        base = unwrap(base, ast.unparse(node.value))
        if base.kind != "tensor":
            raise LoweringError(node, f"region `{self.region.name}`: `{ast.unparse(node)}` reads an attribute of a {base.kind}")
        code = _paren(base.code)
        attr = node.attr
        if attr == "shape":
            return CExpr(f"{code}.sizes().vec()", "ints")
        if attr == "dtype":
            return CExpr(f"{code}.scalar_type()", "dtype")
        if attr == "device":
            return CExpr(f"{code}.device()", "device")
        if attr == "ndim":
            return CExpr(f"{code}.dim()", "int")
        if attr in ("is_cuda", "requires_grad"):
            return CExpr(f"{code}.{attr}()", "bool")
        if attr in TENSOR_VIEWS:
            return CExpr(f"{code}.{TENSOR_VIEWS[attr]}()", "tensor")
        if attr in ("real", "imag"):
            self.headers.add(f"ATen/ops/{attr}.h")
            return CExpr(f"at::{attr}({base.code})", "tensor")
        raise LoweringError(node, f"region `{self.region.name}`: `{ast.unparse(node)}` has no C++ form")

    def subscript(self, node: ast.Subscript) -> CExpr:
        # `x.shape[i]` is `x.size(i)`: no vector built for one dimension.
        if isinstance(node.value, ast.Attribute) and node.value.attr == "shape" and not isinstance(node.slice, ast.Slice):
            owner = self.expr(node.value.value)
            if owner.kind == "tensor":
                index = unwrap(self.expr(node.slice), "index")
                if index.kind == "int":
                    return CExpr(f"{_paren(owner.code)}.size({index.code})", "int")
        base = self.expr(node.value)
        if base.kind == "tuple" and base.items is not None:
            if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, int):
                position = node.slice.value
                if -len(base.items) <= position < len(base.items):
                    return base.items[position]
                raise LoweringError(node, f"region `{self.region.name}`: index {position} is out of range for a tuple of {len(base.items)}")
            if isinstance(node.slice, ast.Slice) and all(
                p is None or (isinstance(p, ast.Constant) and isinstance(p.value, int))
                or (isinstance(p, ast.UnaryOp) and isinstance(p.operand, ast.Constant))
                for p in (node.slice.lower, node.slice.upper, node.slice.step)
            ):
                bounds = [None if p is None else ast.literal_eval(p) for p in (node.slice.lower, node.slice.upper, node.slice.step)]
                return CExpr("", "tuple", items=tuple(base.items[slice(*bounds)]))
            raise LoweringError(node, f"region `{self.region.name}`: a tuple can only be indexed by a literal")
        base = unwrap(base, ast.unparse(node.value))
        if base.kind in ("ints", "tensors"):
            kind = "int" if base.kind == "ints" else "tensor"
            if isinstance(node.slice, ast.Slice):
                parts = [self._optional_int(p) for p in (node.slice.lower, node.slice.upper, node.slice.step)]
                return CExpr(f"ppy::slice({base.code}, {', '.join(parts)})", base.kind)
            index = unwrap(self.expr(node.slice), "index")
            if index.kind != "int":
                raise LoweringError(node, f"region `{self.region.name}`: a sequence index must be an int")
            return CExpr(f"ppy::at({base.code}, {index.code})", kind)
        if base.kind == "tensor":
            self.headers.add("ATen/TensorIndexing.h")
            return CExpr(f"{_paren(base.code)}.index({self.indices(node.slice)})", "tensor")
        raise LoweringError(node, f"region `{self.region.name}`: cannot index a {base.kind}")

    def _optional_int(self, node: ast.expr | None) -> str:
        if node is None:
            return "::std::nullopt"
        value = unwrap(self.expr(node), "slice bound")
        if value.kind != "int":
            raise LoweringError(node, f"region `{self.region.name}`: slice bounds must be ints")
        return f"::std::optional<int64_t>({value.code})"

    def indices(self, node: ast.expr) -> str:
        """Python indexing as at::indexing::TensorIndex values: the same rules, applied by ATen."""
        parts = node.elts if isinstance(node, ast.Tuple) else [node]
        rendered = []
        for part in parts:
            if isinstance(part, ast.Slice):
                bounds = []
                for bound in (part.lower, part.upper, part.step):
                    if bound is None:
                        bounds.append("::std::nullopt")
                    else:
                        value = unwrap(self.expr(bound), "slice bound")
                        if value.kind != "int":
                            raise LoweringError(bound, f"region `{self.region.name}`: slice bounds must be ints")
                        bounds.append(f"c10::SymInt({value.code})")
                rendered.append(f"at::indexing::Slice({', '.join(bounds)})")
                continue
            value = self.expr(part)
            if value.kind == "none":
                rendered.append("at::indexing::None")
            elif value.kind == "ellipsis":
                rendered.append("at::indexing::Ellipsis")
            elif value.kind in ("int", "bool", "tensor"):
                rendered.append(f"at::indexing::TensorIndex({value.code})")
            elif value.kind == "opt_int":
                rendered.append(f"at::indexing::TensorIndex(ppy::value({value.code}, \"index\"))")
            else:
                raise LoweringError(part, f"region `{self.region.name}`: cannot index a tensor with a {value.kind}")
        return "{" + ", ".join(rendered) + "}"

    # --- operators ---------------------------------------------------------

    def binary(self, op: ast.operator, left: CExpr, right: CExpr, node: ast.AST) -> CExpr:
        left_kind = left.kind[4:] if left.kind.startswith("opt_") else left.kind
        right_kind = right.kind[4:] if right.kind.startswith("opt_") else right.kind
        if "tensor" in (left_kind, right_kind):
            return self.tensor_operator(op, unwrap(left, "operand"), unwrap(right, "operand"), node)
        left, right = unwrap(left, "operand"), unwrap(right, "operand")
        if left.kind in ("tuple", "ints") and right.kind in ("tuple", "ints") and isinstance(op, ast.Add):
            if left.kind == "tuple" and right.kind == "tuple" and left.items is not None and right.items is not None:
                return CExpr("", "tuple", items=left.items + right.items)
            return CExpr(f"ppy::concat({self._ints(left, node)}, {self._ints(right, node)})", "ints")
        numbers = ("int", "float", "bool")
        if left.kind not in numbers or right.kind not in numbers:
            raise LoweringError(node, f"region `{self.region.name}`: `{type(op).__name__}` of a {left.kind} and a {right.kind} cannot be lowered")
        is_float = "float" in (left.kind, right.kind)
        a, b = left.code, right.code
        if isinstance(op, ast.Div):
            return CExpr(f"(static_cast<double>({a}) / static_cast<double>({b}))", "float")
        if isinstance(op, ast.FloorDiv):
            return CExpr(f"ppy::floordiv({a}, {b})", "float" if is_float else "int")
        if isinstance(op, ast.Mod):
            return CExpr(f"ppy::mod({a}, {b})", "float" if is_float else "int")
        if isinstance(op, ast.Pow):
            return CExpr(f"ppy::power({a}, {b})", "float" if is_float else "int")
        symbol = INT_OPERATORS.get(type(op))
        if symbol is None or (is_float and symbol in "&|^<<>>"):
            raise LoweringError(node, f"region `{self.region.name}`: `{type(op).__name__}` on numbers cannot be lowered")
        kind = "float" if is_float else "int"
        cast = "static_cast<double>" if is_float else "static_cast<int64_t>"
        return CExpr(f"({cast}({a}) {symbol} {cast}({b}))", kind)

    def _ints(self, value: CExpr, node: ast.AST) -> str:
        if value.kind == "ints":
            return value.code
        if value.items is not None and all(i.kind == "int" for i in value.items):
            return "::std::vector<int64_t>{" + ", ".join(i.code for i in value.items) + "}"
        raise LoweringError(node, f"region `{self.region.name}`: only tuples of ints can be concatenated")

    def tensor_operator(self, op: ast.operator, left: CExpr, right: CExpr, node: ast.AST, in_place: bool = False) -> CExpr:
        method = BINARY_METHODS.get(type(op))
        if method is None:
            raise LoweringError(node, f"region `{self.region.name}`: `{type(op).__name__}` on tensors cannot be lowered")
        if in_place:
            return self.invoke_method(method + "_", left, [right], {}, node, shown=f"{method}_")
        if left.kind == "tensor":
            return self.invoke_method(method, left, [right], {}, node, shown=method)
        # A number on the left: Tensor's reflected operators (torch/_tensor.py).
        if method in ("add", "mul", "bitwise_and", "bitwise_or", "bitwise_xor"):
            return self.invoke_method(method, right, [left], {}, node, shown=method)
        if method == "sub":
            return self.invoke_function("torch", "rsub", [right, left], {}, node)
        if method == "div":
            reciprocal = self.invoke_method("reciprocal", right, [], {}, node, shown="reciprocal")
            return self.invoke_method("mul", reciprocal, [left], {}, node, shown="mul")
        if method in ("floor_divide", "remainder", "pow"):
            return self.invoke_function("torch", method, [left, right], {}, node)
        raise LoweringError(node, f"region `{self.region.name}`: a number on the left of `{type(op).__name__}` with a tensor cannot be lowered")

    def unary(self, node: ast.UnaryOp) -> CExpr:
        operand = unwrap(self.expr(node.operand), "operand")
        if operand.kind == "tensor":
            method = {ast.USub: "neg", ast.Invert: "bitwise_not", ast.UAdd: "positive", ast.Not: None}[type(node.op)]
            if method is None:
                raise LoweringError(node, f"region `{self.region.name}`: `not` on a tensor reads its value back into Python")
            return self.invoke_method(method, operand, [], {}, node, shown=method)
        if isinstance(node.op, ast.Not):
            return CExpr(f"(!{_paren(operand.code)})", "bool")
        if operand.kind not in ("int", "float", "bool"):
            raise LoweringError(node, f"region `{self.region.name}`: cannot negate a {operand.kind}")
        if isinstance(node.op, ast.USub) and operand.literal is not None and not isinstance(operand.literal, bool):
            return literal(-operand.literal)  # type: ignore[operator]
        symbol = {ast.USub: "-", ast.UAdd: "+", ast.Invert: "~"}[type(node.op)]
        kind = "int" if operand.kind == "bool" else operand.kind
        return CExpr(f"({symbol}{_paren(operand.code)})", kind)

    def compare(self, node: ast.Compare) -> CExpr:
        if len(node.ops) != 1:
            raise LoweringError(node, f"region `{self.region.name}`: chained comparisons are a branch in disguise; split them")
        left = unwrap(self.expr(node.left), "operand")
        right = unwrap(self.expr(node.comparators[0]), "operand")
        op = node.ops[0]
        if isinstance(op, (ast.Is, ast.IsNot, ast.In, ast.NotIn)):
            raise LoweringError(node, f"region `{self.region.name}`: `{type(op).__name__}` comparisons cannot be lowered")
        method = COMPARE_METHODS[type(op)]
        if left.kind == "tensor":
            return self.invoke_method(method, left, [right], {}, node, shown=method)
        if right.kind == "tensor":
            return self.invoke_method(MIRRORED[method], right, [left], {}, node, shown=MIRRORED[method])
        if left.kind in ("int", "float", "bool") and right.kind in ("int", "float", "bool"):
            return CExpr(f"({left.code} {C_COMPARE[type(op)]} {right.code})", "bool")
        raise LoweringError(node, f"region `{self.region.name}`: cannot compare a {left.kind} with a {right.kind}")

    # --- calls -------------------------------------------------------------

    def call(self, node: ast.Call) -> CExpr:
        func = node.func
        if isinstance(func, ast.Attribute):
            dotted = self.dotted(func)
            if dotted is None:
                receiver = self.expr(func.value)
                return self.method_call(func.attr, receiver, node)
            return self.function_call(dotted, node)
        if isinstance(func, ast.Name) and func.id not in self.env:
            dotted = self.region.scope.resolve(func)
            if dotted is not None:
                return self.function_call(dotted, node)
        raise LoweringError(node, f"region `{self.region.name}`: `{ast.unparse(func)}` cannot be called in a region")

    def arguments(self, node: ast.Call) -> tuple[list[CExpr], dict[str, CExpr]]:
        if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            raise LoweringError(node, f"region `{self.region.name}`: `*`/`**` unpacking in a call cannot be lowered")
        args = [self.expr(a) for a in node.args]
        kwargs = {k.arg: self.expr(k.value) for k in node.keywords if k.arg is not None}
        return args, kwargs

    def function_call(self, dotted: str, node: ast.Call) -> CExpr:
        shown = ast.unparse(node.func).replace(ATEN + ".", "aten.").replace(TORCH + ".", "torch.")
        if dotted.startswith(ATEN + "."):
            args, kwargs = self.arguments(node)
            return self.invoke(self.catalog.native(dotted[len(ATEN) + 1:]), None, args, kwargs, node, shown)
        dotted = normalise_dotted(dotted)
        if dotted in ("builtins.float", "builtins.int", "builtins.bool"):
            return self.conversion(dotted.split(".")[1], node)
        namespace, _, name = dotted.rpartition(".")
        wrapper = lookup(namespace, name)
        if wrapper is not None:
            expansion = expand(wrapper, node)
            if isinstance(expansion, Unsupported):
                raise LoweringError(node, f"region `{self.region.name}`: `{shown}`: {expansion.why}")
            return self.expr(expansion)
        args, kwargs = self.arguments(node)
        return self.invoke_function(namespace, name, args, kwargs, node, shown)

    def _mutated(self, name: str) -> str:
        mutation = self.mutation
        return mutation[2] if len(mutation) == 3 and mutation[0] == "swap" and mutation[1] == name else name

    def invoke_function(self, namespace: str, name: str, args: list[CExpr], kwargs: dict[str, CExpr],
                        node: ast.AST, shown: str | None = None) -> CExpr:
        overloads = self.catalog.function(namespace, self._mutated(name))
        return self.invoke(overloads, None, args, kwargs, node, shown or f"{namespace}.{name}")

    def method_call(self, name: str, receiver: CExpr, node: ast.Call) -> CExpr:
        shown = f"{ast.unparse(node.func)}"
        receiver = unwrap(receiver, ast.unparse(node.func.value) if isinstance(node.func, ast.Attribute) else "receiver")
        if receiver.kind != "tensor":
            raise LoweringError(node, f"region `{self.region.name}`: `{shown}` is a method of a {receiver.kind}")
        wrapper = lookup("Tensor", name)
        if wrapper is not None:
            assert isinstance(node.func, ast.Attribute)
            expansion = expand(wrapper, node, receiver=node.func.value)
            if isinstance(expansion, Unsupported):
                raise LoweringError(node, f"region `{self.region.name}`: `{shown}`: {expansion.why}")
            return self.expr(expansion)
        args, kwargs = self.arguments(node)
        if name == "size":
            if kwargs or len(args) > 1:
                raise LoweringError(node, f"region `{self.region.name}`: `size` takes one dimension")
            if not args:
                return CExpr(f"{_paren(receiver.code)}.sizes().vec()", "ints")
            return CExpr(f"{_paren(receiver.code)}.size({unwrap(args[0], 'dim').code})", "int")
        if name in ("dim", "ndimension", "numel", "element_size", "is_contiguous") and not args and not kwargs:
            kind = "bool" if name == "is_contiguous" else "int"
            return CExpr(f"{_paren(receiver.code)}.{name}()", kind)
        return self.invoke_method(name, receiver, args, kwargs, node, shown=shown)

    def invoke_method(self, name: str, receiver: CExpr, args: list[CExpr], kwargs: dict[str, CExpr],
                      node: ast.AST, shown: str) -> CExpr:
        return self.invoke(self.catalog.method(self._mutated(name)), receiver, args, kwargs, node, shown)

    def conversion(self, target: str, node: ast.Call) -> CExpr:
        if len(node.args) != 1 or node.keywords:
            raise LoweringError(node, f"region `{self.region.name}`: `{target}()` takes one argument here")
        if isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str) and target == "float":
            return literal(float(node.args[0].value))
        value = unwrap(self.expr(node.args[0]), "argument")
        if value.kind not in ("int", "float", "bool"):
            raise LoweringError(node, f"region `{self.region.name}`: `{target}()` of a {value.kind} cannot be lowered")
        if value.literal is not None:
            return literal({"float": float, "int": int, "bool": bool}[target](value.literal))  # type: ignore[arg-type]
        ctype = {"float": "double", "int": "int64_t", "bool": "bool"}[target]
        code = f"static_cast<{ctype}>({value.code})"
        if target == "int" and value.kind == "float":
            code = f"static_cast<int64_t>(::std::trunc({value.code}))"
        return CExpr(code, target)

    def invoke(self, overloads: tuple[Overload, ...], receiver: CExpr | None, args: list[CExpr],
               kwargs: dict[str, CExpr], node: ast.AST, shown: str) -> CExpr:
        if not overloads:
            raise LoweringError(node, f"region `{self.region.name}`: `{shown}` has no ATen lowering")
        for numbers_as_tensors in (False, True):
            for overload in overloads:
                emitted = self.try_overload(overload, receiver, args, kwargs, numbers_as_tensors, shown)
                if emitted is not None:
                    return emitted
        given = ", ".join([a.kind for a in args] + [f"{k}={v.kind}" for k, v in kwargs.items()])
        tried = "; ".join(o.signature.signature_str(symint=False) for o in overloads[:4])
        raise LoweringError(node, f"region `{self.region.name}`: no overload of `{shown}` takes ({given}); torch has: {tried}")

    def try_overload(self, overload: Overload, receiver: CExpr | None, args: list[CExpr], kwargs: dict[str, CExpr],
                     numbers_as_tensors: bool, shown: str) -> CExpr | None:
        from torchgen.api import cpp

        signature = overload.signature
        positional = list(signature.input_args)
        keyword_only = list(signature.input_kwargs) + list(signature.tensor_options_args)
        bound: dict[str, CExpr] = {}
        if len(positional) == 1 and str(positional[0].type).startswith(("int[", "SymInt[")) and (
            len(args) > 1 or (len(args) == 1 and args[0].kind == "int" and "[]" in str(positional[0].type))
        ):
            args = [CExpr("", "tuple", items=tuple(args))]  # x.view(b, l, d): varargs into an int list
        if len(args) > len(positional):
            return None
        for parameter, value in zip(positional, args):
            bound[parameter.name] = value
        names = {p.name for p in positional + keyword_only}
        out: CExpr | None = None
        for key, value in kwargs.items():
            if key == "out":
                out = value
                continue
            name = "self" if key == "input" and "self" in names and "input" not in names else key
            if name not in names or name in bound:
                return None
            bound[name] = value
        if out is not None and overload.outplace is None:
            return None
        requires_grad = bound.pop("requires_grad", None)
        if requires_grad is not None and requires_grad.literal not in (False,):
            return None
        native = overload.outplace if out is not None else overload.base
        cpp_signature = _cpp_signature(native, receiver is not None)
        rendered: list[str] = []
        # Trailing arguments left at their defaults are omitted where C++ has the same
        # default: spelling them out can make an overloaded C++ call ambiguous.
        omittable: list[bool] = []
        schema_arguments = {a.name: a for a in native.func.arguments.flat_all}
        try:
            for name, cpp_default in zip(cpp_signature.argument_names, cpp_signature.has_cpp_default):
                if receiver is not None and name == "self":
                    continue
                omittable.append(cpp_default and name not in bound and not (out is not None and name == "out"))
                schema_arg = schema_arguments.get(name)
                if schema_arg is None:
                    return None
                if schema_arg.is_write and out is not None and name in ("out",):
                    if out.kind != "tensor":
                        return None
                    rendered.append(self.lvalue(out))
                    continue
                if schema_arg.is_write and out is not None:
                    return None  # several out= tensors: not supported
                value = bound.pop(name, None)
                if value is None:
                    if schema_arg.default is None:
                        return None
                    rendered.append(cpp.default_expr(schema_arg.default, schema_arg.type, symint=False))
                    continue
                text = convert(value, str(schema_arg.type), numbers_as_tensors=numbers_as_tensors, what=name)
                if schema_arg.is_write:
                    text = self.lvalue(CExpr(text, "tensor"))
                rendered.append(text)
        except TypeMismatch:
            return None
        if bound:
            return None  # a Python-only argument the C++ signature does not take
        while rendered and omittable and omittable[-1]:
            rendered.pop()
            omittable.pop()
        writes = any(a.is_write for a in native.func.arguments.flat_all)
        if writes and self.mutation == ("drop-writes",) and not native.func.is_out_fn():
            return receiver if receiver is not None else args[0]
        effectful = native.func.is_out_fn() or writes or any(
            "nondeterministic_seeded" in str(tag) for tag in native.tags
        )
        self.calls_in_statement += 1
        self.overloads.add(str(native.func.name))
        if effectful:
            self.effectful_seen = True
        call_args = ", ".join(rendered)
        if receiver is not None:
            code = f"{_paren(receiver.code)}.{cpp_signature.name()}({call_args})"
        else:
            self.headers.add(f"ATen/ops/{native.root_name}.h")
            code = f"at::{cpp_signature.name()}({call_args})"
        returns = [(r.name, str(r.type)) for r in native.func.returns]
        try:
            value = result_value(code, returns)
        except TypeMismatch as error:
            raise LoweringError(self.region.node, f"region `{self.region.name}`: `{shown}` returns {error}, which has no C++ form here") from None
        if self.one_call_per_line and value.kind != "none":
            return self.materialize(value, native.root_name)
        return value

    def lvalue(self, value: CExpr) -> str:
        """A tensor an op writes through a non-const reference must be a named, non-const variable.

        A copy of an at::Tensor is a second handle on the same storage, so the
        write still reaches the caller's tensor.
        """
        if _is_identifier(value.code) and value.code not in self.param_names:
            if value.code in {v.code for v in self.env.values() if v.kind == "tensor"}:
                return value.code
        self.temps += 1
        name = f"ppy_written_{self.temps}"
        self.emit(f"at::Tensor {name} = {value.code};")
        return name


_CPP_KEYWORDS = frozenset(
    "alignas alignof and and_eq asm auto bitand bitor bool break case catch char class compl const constexpr "
    "const_cast continue decltype default delete do double dynamic_cast else enum explicit export extern false "
    "float for friend goto if inline int long mutable namespace new noexcept not not_eq nullptr operator or "
    "or_eq private protected public register reinterpret_cast return short signed sizeof static static_assert "
    "static_cast struct switch template this thread_local throw true try typedef typeid typename union unsigned "
    "using virtual void volatile wchar_t while xor xor_eq at std c10 torch ppy".split()
)


def _is_identifier(code: str) -> bool:
    return code.replace("_", "a").isalnum() and not code[:1].isdigit()


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text)


def _paren(code: str) -> str:
    return code if _is_identifier(code) or (code.endswith(")") and code.count("(") == 1 and code.startswith(("at::", "ppy::"))) else f"({code})"


_SIGNATURES: dict[tuple[str, bool], Any] = {}


def _cpp_signature(native: Any, method: bool) -> Any:
    key = (str(native.func.name), method)
    if key not in _SIGNATURES:
        _SIGNATURES[key] = _render_signature(native, method)
    return _SIGNATURES[key]


def _render_signature(native: Any, method: bool) -> Any:
    """The C++ signature torchgen derives, with dtype/layout/device split out where the op takes them."""
    from torchgen.api.types import CppSignatureGroup
    from torchgen.context import native_function_manager

    with native_function_manager(native):
        group = CppSignatureGroup.from_native_function(native, method=method)
        signature = group.faithful_signature or group.signature
        # Render now, inside the manager: torchgen's settings are per native function.
        arguments = list(signature.arguments())
        return _RenderedSignature(
            signature.name(),
            tuple(getattr(b.argument, "name", b.name) for b in arguments),
            tuple(b.default is not None for b in arguments),
        )


@dataclass(frozen=True)
class _RenderedSignature:
    cpp_name: str
    argument_names: tuple[str, ...]
    has_cpp_default: tuple[bool, ...]

    def name(self) -> str:
        return self.cpp_name


def lower_region(region: Region, catalog: Catalog, module_tag: str) -> LoweredRegion:
    return Lowerer(region, catalog, module_tag).lower()
