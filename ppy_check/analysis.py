"""One pass over a region's straight-line body: what each name holds and what each call is.

The pass runs the body in order, as Python would, keeping for every local a
``Value``: its kind (tensor, int, a tuple of tensors...) and the tensor
parameters it may alias. From that it knows, for every call, which native
function or method it reaches (or why none), which parameters an in-place op
writes through a view, and which free names the body reads. The rules report
from these facts; the compiler lowers from them.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import NamedTuple

from ppy_check import ops
from ppy_check.expand import ATEN, TORCH, Unsupported, dotted_name, expand, normalise_dotted
from ppy_check.region import Region
from ppy_check.scope import BUILTIN_NAMES, is_literal
from ppy_check.types import FLOAT_CONSTANTS, TORCH_DTYPES, Optional, RegionType, Scalar, Tuple
from ppy_check.wrappers import lookup

# Reads on a tensor that lower to C++ (`x.shape` is `x.sizes()`, `x.T` is `x.t()`...).
TENSOR_ATTRIBUTES = {
    "shape": "shape", "dtype": "dtype", "device": "device", "ndim": "int", "is_cuda": "bool",
    "requires_grad": "bool", "T": "tensor", "mT": "tensor", "H": "tensor", "mH": "tensor",
    "real": "tensor", "imag": "tensor",
}
VIEW_ATTRIBUTES = frozenset({"T", "mT", "H", "mH", "real", "imag"})
INTRINSIC_METHODS = frozenset({"size", "dim", "numel", "element_size"})
NOT_LOWERABLE_METHODS = {
    "item": "it reads a value back into Python",
    "tolist": "it builds a Python list",
    "numpy": "numpy runs outside torch's dispatcher",
    "backward": "autograd runs outside the region",
    "data_ptr": "it reads a raw address",
    "register_hook": "hooks are Python callbacks",
    "__len__": "it reads a value back into Python",
}
CONVERSIONS = {"builtins.float": "float", "builtins.int": "int", "builtins.bool": "bool"}
MODULE_ROOTS = ("torch", "math")


class Value(NamedTuple):
    """What an expression holds: a kind and the tensor parameters it may alias.

    Kinds: tensor, tensors (a list), tuple, record (the named tuple a multi-output
    op returns), shape, int, float, bool, number, str, dtype, device, none, slice,
    module, unknown. A named tuple rather than a dataclass: one is made for every
    expression, and making them is a good part of a check's cost.
    """

    kind: str
    aliases: frozenset[str] = frozenset()
    items: tuple[Value, ...] | None = None


UNKNOWN = Value("unknown")


class Callee(NamedTuple):
    """What a call reaches. ``kind``: function, method, wrapper, convert, intrinsic or unsupported."""

    kind: str
    display: str
    facts: ops.OpFacts | None = None
    why: str = ""
    expansion: ast.expr | None = None


@dataclass(frozen=True)
class Write:
    node: ast.AST
    param: str
    op: str
    how: str  # "op" (an in-place op), "out" (an out= argument) or "store" (x[i] = y, x += y)


@dataclass(frozen=True)
class Capture:
    node: ast.AST
    name: str
    origin: str  # global, imported, closure, attribute, undefined
    detail: str


@dataclass(frozen=True)
class Unlowerable:
    node: ast.AST
    name: str
    why: str
    attribute: bool = False


@dataclass
class RegionFacts:
    writes: list[Write] = field(default_factory=list)
    captures: list[Capture] = field(default_factory=list)
    unlowerable: list[Unlowerable] = field(default_factory=list)


def value_of(kind: RegionType | None, name: str | None) -> Value:
    """The value a parameter of this type holds on entry."""
    aliases = frozenset({name}) if name else frozenset()
    if kind is None:
        return Value("unknown", aliases)
    if isinstance(kind, Scalar):
        return Value("tensor", aliases) if kind.name == "Tensor" else Value(kind.name)
    if isinstance(kind, Optional):
        inner = value_of(kind.inner, name)
        return Value(inner.kind, inner.aliases, inner.items)
    if isinstance(kind, Tuple):
        if kind.variadic:
            item = value_of(kind.items[0], name)
            return Value("tensors" if item.kind == "tensor" else "tuple", item.aliases)
        items = tuple(value_of(item, name) for item in kind.items)
        return Value("tuple", frozenset().union(*(i.aliases for i in items)), items)
    return Value("none")


def _literal_kind(value: object) -> str:
    if value is None:
        return "none"
    if isinstance(value, bool):
        return "bool"
    return {int: "int", float: "float", str: "str"}.get(type(value), "unknown")


def chain_text(node: ast.expr) -> str:
    """Source text of a name or attribute chain, cheaply; anything else through ast.unparse."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return display(node) + "".join("." + p for p in reversed(parts))
    head = {ATEN: "aten", TORCH: "torch"}.get(node.id, node.id)
    return ".".join([head, *reversed(parts)])


def display(node: ast.AST) -> str:
    text = ast.unparse(node).replace(ATEN + ".", "aten.").replace(TORCH + ".", "torch.")
    return text if len(text) <= 60 else text[:57] + "..."


class Analyzer:
    def __init__(self, region: Region):
        self.region = region
        self.scope = region.scope
        self.locals = region.locals
        self.env: dict[str, Value] = {p.name: value_of(p.type, p.name) for p in region.params}
        self.facts = RegionFacts()
        self.receiver: Value | None = None

    # statements -------------------------------------------------------

    def run(self) -> RegionFacts:
        self.block(self.region.node.body)
        return self.facts

    def block(self, statements: list[ast.stmt]) -> None:
        for statement in statements:
            self.statement(statement)

    def statement(self, node: ast.stmt) -> None:
        if isinstance(node, ast.Expr):
            self.eval(node.value)
        elif isinstance(node, ast.Assign):
            value = self.eval(node.value)
            for target in node.targets:
                self.assign(target, value, node)
        elif isinstance(node, ast.AnnAssign):
            if node.value is not None:
                self.assign(node.target, self.eval(node.value), node)
        elif isinstance(node, ast.AugAssign):
            self.augmented(node)
        elif isinstance(node, ast.Return):
            if node.value is not None:
                self.eval(node.value)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            self.env[node.name] = UNKNOWN
        elif isinstance(node, (ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal, ast.Pass, ast.Break, ast.Continue)):
            return
        else:
            # Control flow the other rules reject: still look inside, so one
            # report lists every problem rather than one a run.
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.expr):
                    if isinstance(node, (ast.For, ast.AsyncFor)) and child is node.target:
                        self.assign(child, UNKNOWN, node)
                    else:
                        self.eval(child)
                elif isinstance(child, ast.withitem):
                    self.eval(child.context_expr)
                    if child.optional_vars is not None:
                        self.assign(child.optional_vars, UNKNOWN, node)
                elif isinstance(child, ast.stmt):
                    self.statement(child)
                elif isinstance(child, (ast.ExceptHandler, ast.match_case)):
                    # Exception types and match patterns are not values the region computes.
                    for inner in child.body:
                        self.statement(inner)

    def assign(self, target: ast.expr, value: Value, statement: ast.stmt) -> None:
        if isinstance(target, ast.Name):
            self.env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            if value.items is not None and len(value.items) == len(target.elts) and value.kind in ("tuple", "record"):
                for item, item_value in zip(target.elts, value.items):
                    self.assign(item, item_value, statement)
            else:
                element = Value(_element_kind(value), value.aliases)
                for item in target.elts:
                    self.assign(item, element, statement)
        elif isinstance(target, ast.Starred):
            self.assign(target.value, Value("tuple", value.aliases), statement)
        elif isinstance(target, (ast.Subscript, ast.Attribute)):
            base = self.eval(target.value)
            if isinstance(target, ast.Subscript):
                self.eval(target.slice)
            self.store(base, statement, target)

    def store(self, base: Value, statement: ast.stmt, target: ast.expr) -> None:
        text = display(statement) if isinstance(statement, (ast.Assign, ast.AugAssign, ast.AnnAssign)) else display(target)
        for param in sorted(base.aliases):
            self.facts.writes.append(Write(statement, param, text, "store"))

    def augmented(self, node: ast.AugAssign) -> None:
        target = node.target
        if isinstance(target, ast.Name):
            current = self.eval(ast.copy_location(ast.Name(id=target.id, ctx=ast.Load()), target))
            other = self.eval(node.value)
            if current.kind in ("tensor", "unknown") and current.aliases:
                self.store(current, node, target)
            self.env[target.id] = Value(_binop_kind(node.op, current, other), current.aliases if current.kind == "tensor" else frozenset())
        else:
            self.eval(node.value)
            self.assign(target, UNKNOWN, node)

    # expressions ------------------------------------------------------

    def eval(self, node: ast.expr) -> Value:
        if isinstance(node, ast.Constant):
            return Value(_literal_kind(node.value))
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.Attribute):
            return self.attribute(node)
        if isinstance(node, ast.Subscript):
            return self.subscript(node)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.BinOp):
            left, right = self.eval(node.left), self.eval(node.right)
            return Value(_binop_kind(node.op, left, right))
        if isinstance(node, ast.UnaryOp):
            operand = self.eval(node.operand)
            if isinstance(node.op, ast.Not):
                return Value("bool")
            return Value("int" if operand.kind == "bool" else operand.kind)
        if isinstance(node, ast.Compare):
            values = [self.eval(node.left)] + [self.eval(c) for c in node.comparators]
            return Value("tensor" if any(v.kind == "tensor" for v in values) else "bool")
        if isinstance(node, (ast.Tuple, ast.List)):
            items = tuple(self.eval(item) for item in node.elts)
            return Value("tuple", frozenset().union(*(i.aliases for i in items)), items)
        if isinstance(node, ast.Starred):
            return self.eval(node.value)
        if isinstance(node, ast.IfExp):
            self.eval(node.test)
            body, orelse = self.eval(node.body), self.eval(node.orelse)
            return Value(body.kind if body.kind == orelse.kind else "unknown", body.aliases | orelse.aliases)
        if isinstance(node, ast.Slice):
            for part in (node.lower, node.upper, node.step):
                if part is not None:
                    self.eval(part)
            return Value("slice")
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            return self.comprehension(node)
        if isinstance(node, ast.Lambda):
            saved = dict(self.env)
            for arg in node.args.posonlyargs + node.args.args + node.args.kwonlyargs:
                self.env[arg.arg] = UNKNOWN
            self.eval(node.body)
            self.env = saved
            return UNKNOWN
        if isinstance(node, ast.NamedExpr):
            value = self.eval(node.value)
            self.env[node.target.id] = value
            return value
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.eval(child)
        return Value("str") if isinstance(node, ast.JoinedStr) else UNKNOWN

    def comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp) -> Value:
        saved = dict(self.env)
        for generator in node.generators:
            self.eval(generator.iter)
            self.assign(generator.target, UNKNOWN, ast.Pass())
            for condition in generator.ifs:
                self.eval(condition)
        for part in ((node.key, node.value) if isinstance(node, ast.DictComp) else (node.elt,)):
            self.eval(part)
        self.env = saved
        return UNKNOWN

    def name(self, node: ast.Name) -> Value:
        if node.id in (ATEN, TORCH):
            return Value("module")
        if node.id in self.env:
            return self.env[node.id]
        if node.id in self.locals:
            return UNKNOWN
        return self.free_name(node)

    def free_name(self, node: ast.Name) -> Value:
        name = node.id
        scope = self.scope
        if name in scope.imports:
            target = scope.imports[name]
            if name in scope.modules:
                return Value("module")
            special = self._dotted_value(target)
            if special is not None:
                return special
            origin = target.rsplit(".", 1)[0]
            self.facts.captures.append(Capture(node, name, "imported", origin))
            return UNKNOWN
        if name in scope.bindings:
            binding = scope.bindings[name]
            if binding.kind == "constant" and binding.value is not None:
                return self._constant_value(binding.value)
            self.facts.captures.append(Capture(node, name, "global", str(binding.line)))
            return UNKNOWN
        for scope_name, names in reversed(self.region.enclosing):
            if name in names:
                self.facts.captures.append(Capture(node, name, "closure", scope_name))
                return UNKNOWN
        if name in BUILTIN_NAMES:
            self.facts.unlowerable.append(Unlowerable(node, name, "a Python builtin used as a value", attribute=True))
            return UNKNOWN
        self.facts.captures.append(Capture(node, name, "undefined", ""))
        return UNKNOWN

    def _constant_value(self, node: ast.expr) -> Value:
        if isinstance(node, ast.Constant):
            return Value(_literal_kind(node.value))
        if isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant):
            return Value(_literal_kind(node.operand.value))
        if isinstance(node, ast.Tuple) and is_literal(node):
            return Value("tuple", items=tuple(self._constant_value(item) for item in node.elts))
        return UNKNOWN

    def _dotted_value(self, dotted: str) -> Value | None:
        """The value of a module attribute a region may read: a dtype or a float constant."""
        dotted = normalise_dotted(dotted)
        if dotted.startswith("torch.") and dotted[len("torch."):] in TORCH_DTYPES:
            return Value("dtype")
        if dotted in FLOAT_CONSTANTS:
            return Value("float")
        return None

    def dotted(self, node: ast.expr) -> str | None:
        """The dotted name of a module attribute chain (``F.linear``), or None for a local chain."""
        return dotted_name(node, self.scope.imports, lambda name: name in self.env or name in self.locals)

    def attribute(self, node: ast.Attribute) -> Value:
        dotted = self.dotted(node)
        if dotted is not None:
            special = self._dotted_value(dotted)
            if special is not None:
                return special
            if normalise_dotted(dotted) in _MODULE_PATHS:
                return Value("module")
            oracle = self.region.oracle
            if oracle is not None and oracle.module_variable(dotted):
                module, _, name = dotted.rpartition(".")
                self.facts.captures.append(Capture(node, display(node), "imported", module))
                return UNKNOWN
            self.facts.unlowerable.append(Unlowerable(node, display(node), "not a value a region can read", attribute=True))
            return UNKNOWN
        base = self.eval(node.value)
        if base.kind in ("tensor", "unknown") and node.attr in TENSOR_ATTRIBUTES:
            kind = TENSOR_ATTRIBUTES[node.attr]
            return Value(kind, base.aliases if node.attr in VIEW_ATTRIBUTES else frozenset())
        if base.kind == "unknown" and isinstance(node.value, ast.Name) and self._is_untyped_param(node.value.id):
            self.facts.captures.append(Capture(node, node.value.id, "attribute", node.attr))
            return UNKNOWN
        if base.kind == "record" or (base.kind == "unknown" and isinstance(node.value, ast.Call)):
            return Value("unknown", base.aliases)  # a named field of a multi-output op: .values, .indices
        if base.kind == "unknown":
            return UNKNOWN
        why = "not a tensor attribute ppy can lower" if base.kind == "tensor" else f"an attribute of a {base.kind} value"
        self.facts.unlowerable.append(Unlowerable(node, display(node), why, attribute=True))
        return UNKNOWN

    def _is_untyped_param(self, name: str) -> bool:
        return any(p.name == name and p.type is None for p in self.region.params)

    def subscript(self, node: ast.Subscript) -> Value:
        base = self.eval(node.value)
        index = self.eval(node.slice)
        if base.kind == "shape":
            return Value("shape" if index.kind == "slice" else "int")
        if base.kind in ("tuple", "record") and base.items is not None and isinstance(node.slice, ast.Constant):
            position = node.slice.value
            if isinstance(position, int) and -len(base.items) <= position < len(base.items):
                return base.items[position]
        if base.kind in ("tuple", "record", "tensors"):
            return Value(_element_kind(base), base.aliases)
        if base.kind in ("tensor", "unknown"):
            return Value(base.kind, base.aliases)
        return UNKNOWN

    # calls ------------------------------------------------------------

    def call(self, node: ast.Call) -> Value:
        self.receiver = None
        callee = self.resolve_call(node)
        receiver = self.receiver  # set by resolve_call when the call is a method call
        if callee.kind == "wrapper":
            assert callee.expansion is not None
            return self.eval(callee.expansion)
        args = [self.eval(a) for a in node.args]
        keywords = {k.arg: self.eval(k.value) for k in node.keywords}
        if callee.kind == "unsupported":
            self.facts.unlowerable.append(Unlowerable(node.func, callee.display, callee.why))
            return UNKNOWN
        if callee.kind == "convert":
            kind = callee.display
            if any(a.kind in ("tensor", "tensors") for a in args):
                self.facts.unlowerable.append(
                    Unlowerable(node.func, kind, f"`{kind}()` of a tensor reads its value back into Python; use `.to()`")
                )
            return Value(kind)
        if callee.kind == "intrinsic":
            if isinstance(node.func, ast.Attribute) and node.func.attr == "size" and not node.args:
                return Value("shape")
            return Value("int")
        facts = callee.facts
        assert facts is not None

        def argument(name: str, position: int) -> tuple[ast.expr, Value] | None:
            if position == -1 and receiver is not None and isinstance(node.func, ast.Attribute):
                return node.func.value, receiver
            if 0 <= position < len(node.args):
                return node.args[position], args[position]
            for keyword in node.keywords:
                if keyword.arg == name:
                    return keyword.value, keywords[name]
            return None

        for name, position in facts.writes:
            found = argument(name, position)
            if found is not None:
                for param in sorted(found[1].aliases):
                    self.facts.writes.append(Write(node, param, chain_text(node.func), "op"))
        if "out" in keywords:
            for param in sorted(keywords["out"].aliases):
                self.facts.writes.append(Write(node, param, chain_text(node.func), "out"))
        viewed: frozenset[str] = frozenset()
        for name, position in facts.views:
            found = argument(name, position)
            if found is not None:
                viewed |= found[1].aliases
        return _result(facts.returns, viewed)

    def resolve_call(self, node: ast.Call) -> Callee:
        func = node.func
        if isinstance(func, ast.Attribute):
            dotted = self.dotted(func)
            if dotted is not None:
                return self.resolve_dotted(dotted, node)
            receiver = self.eval(func.value)
            self.receiver = receiver
            return self.resolve_method(func, receiver, node)
        if isinstance(func, ast.Name):
            if func.id in self.env or func.id in self.locals:
                return Callee("unsupported", func.id, why=f"`{func.id}` is a local value, not a torch op")
            resolved = self.scope.resolve(func)
            if resolved is not None:
                return self.resolve_dotted(resolved, node, shown=func.id)
            binding = self.scope.bindings.get(func.id)
            if binding is not None:
                what = {"function": f"a plain Python function (line {binding.line})", "class": f"a class (line {binding.line})"}
                return Callee("unsupported", func.id, why=what.get(binding.kind, f"a module-level value (line {binding.line})"))
            for scope_name, names in reversed(self.region.enclosing):
                if func.id in names:
                    return Callee("unsupported", func.id, why=f"a local of the enclosing function `{scope_name}`")
            return Callee("unsupported", func.id, why="not defined in this module")
        self.eval(func)
        return Callee("unsupported", display(func), why="only torch functions and tensor methods can be called")

    def resolve_dotted(self, dotted: str, node: ast.Call, shown: str | None = None) -> Callee:
        callee = self._resolve_dotted(dotted, node)
        if callee.kind in ("unsupported", "wrapper"):  # only these show the call's source text
            return callee._replace(display=shown or chain_text(node.func))
        return callee

    def _resolve_dotted(self, dotted: str, node: ast.Call) -> Callee:
        shown = "?"
        if dotted.startswith(ATEN + "."):
            native = dotted[len(ATEN) + 1:]
            facts = ops.native_function(native)
            if facts is None:
                return Callee("unsupported", shown, why=f"torch {ops.torch_version()} has no native `{native}`")
            return Callee("function", shown, facts)
        dotted = normalise_dotted(dotted)
        if dotted in CONVERSIONS:
            return Callee("convert", CONVERSIONS[dotted])
        if dotted.startswith("builtins."):
            return Callee("unsupported", shown, why="a Python builtin, which runs in the interpreter")
        namespace, _, name = dotted.rpartition(".")
        wrapper = lookup(namespace, name)
        if wrapper is not None:
            return self.expanded(shown, expand(wrapper, node))
        if namespace in ops.FUNCTION_NAMESPACES:
            facts = ops.function(namespace, name)
            if facts is not None:
                return Callee("function", shown, facts)
            return Callee("unsupported", shown, why=f"`{namespace}.{name}` is not a torch operator with a C++ API")
        root = dotted.split(".")[0]
        if root == "torch":
            return Callee("unsupported", shown, why=f"`{dotted}` is not a torch operator with a C++ API")
        if root == "ppy":
            return Callee("unsupported", shown, why="ppy's own API cannot be called inside a region")
        return Callee("unsupported", shown, why=f"`{root}` is not torch; only torch operators lower to ATen")

    def resolve_method(self, func: ast.Attribute, receiver: Value, node: ast.Call) -> Callee:
        callee = self._resolve_method(func, receiver, node)
        if callee.kind == "unsupported":
            return Callee("unsupported", chain_text(func), why=callee.why)
        return callee

    def _resolve_method(self, func: ast.Attribute, receiver: Value, node: ast.Call) -> Callee:
        name = func.attr
        shown = "." + name  # the full text is computed only when a message needs it
        if receiver.kind not in ("tensor", "unknown"):
            return Callee("unsupported", shown, why=f"a method of a {receiver.kind} value")
        if receiver.kind == "unknown" and isinstance(func.value, ast.Name) and self._is_untyped_param(func.value.id):
            return Callee("unsupported", shown, why=f"a method of `{func.value.id}`, which is not a tensor")
        if name in NOT_LOWERABLE_METHODS:
            return Callee("unsupported", shown, why=NOT_LOWERABLE_METHODS[name])
        if name in INTRINSIC_METHODS:
            return Callee("intrinsic", shown)
        wrapper = lookup("Tensor", name)
        if wrapper is not None:
            return self.expanded(shown, expand(wrapper, node, receiver=func.value))
        facts = ops.method(name)
        if facts is not None:
            return Callee("method", shown, facts)
        return Callee("unsupported", shown, why=f"`Tensor.{name}` is not a tensor method with a C++ API")

    @staticmethod
    def expanded(shown: str, expansion: ast.expr | Unsupported) -> Callee:
        if isinstance(expansion, Unsupported):
            return Callee("unsupported", shown, why=expansion.why)
        return Callee("wrapper", shown, expansion=expansion)


_MODULE_PATHS = frozenset({"torch", "torch.nn", "torch.nn.functional", "torch.special", "torch.linalg", "torch.fft", "math"})


def _element_kind(value: Value) -> str:
    if value.kind == "tensors":
        return "tensor"
    if value.kind == "shape":
        return "int"
    if value.items:
        kinds = {item.kind for item in value.items}
        return kinds.pop() if len(kinds) == 1 else "unknown"
    return "unknown"


def _binop_kind(op: ast.operator, left: Value, right: Value) -> str:
    kinds = {left.kind, right.kind}
    if "tensor" in kinds or isinstance(op, ast.MatMult):
        return "tensor"
    if "unknown" in kinds:
        return "unknown"
    if kinds <= {"int", "bool"}:
        return "float" if isinstance(op, ast.Div) else "int"
    if kinds <= {"int", "bool", "float"}:
        return "float"
    if kinds == {"str"} and isinstance(op, ast.Add):
        return "str"
    if kinds <= {"tuple", "shape"} and isinstance(op, ast.Add):
        return "tuple"
    return "unknown"


_RESULT_KINDS = {"t": "tensor", "T": "tensors", "i": "int", "f": "float", "b": "bool", "s": "number", "?": "unknown"}


def _result(returns: str, viewed: frozenset[str]) -> Value:
    if returns == "":
        return Value("none")
    if len(returns) == 1:
        kind = _RESULT_KINDS[returns]
        return Value(kind, viewed if kind in ("tensor", "tensors", "unknown") else frozenset())
    items = tuple(_result(letter, viewed) for letter in returns)
    return Value("record", viewed, items)


def analyse(region: Region) -> RegionFacts:
    return Analyzer(region).run()
