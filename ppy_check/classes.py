"""What each attribute of a class holds, read from the class's source: the model of a module region's ``self``.

A method region reaches tensors and settings through ``self``; each attribute
path it reads (``self.attn.c_proj.weight``, ``self.eps``) becomes an input of
the compiled function, read from the object at every call. What the build
needs to know statically is the *kind* each attribute holds for every
instance of the class, and that is written in the class's source: the
assignments of ``__init__`` (``self.w = nn.Parameter(...)``, ``self.eps =
eps`` with ``eps: float``), ``register_buffer``/``register_parameter`` calls,
class-level annotations (which also serve dataclass fields, and are how a
user settles an attribute the checker cannot type), and base classes.
torch.nn's own classes come from ``nn_classes`` (a table checked against real
instances), their methods from torch's shipped source.

Nothing here imports the user's code. An attribute whose kind the source does
not settle (assigned outside ``__init__``, of different kinds on different
paths, from an expression the checker cannot type) is an ``UnknownField``
naming why, and becomes a finding only when a region reads it.
"""

from __future__ import annotations

import ast
import dataclasses
import enum
import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from weakref import WeakKeyDictionary

from ppy_check import messages as m
from ppy_check import nn_classes, reads, torch_python
from ppy_check.annotations import AnnotationError, parse_annotation
from ppy_check.messages import refusals
from ppy_check.model import types as t
from ppy_check.scope import BindingKind, ModuleScope

MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})
PARAMETER_CLASSES = frozenset({"torch.nn.Parameter", "torch.nn.parameter.Parameter", "torch.nn.Buffer",
                               "torch.nn.parameter.Buffer"})
# The type of a literal of each Python class an attribute may be assigned.
_LITERALS: dict[type, t.Type] = {bool: t.BOOL, int: t.INT, float: t.FLOAT, str: t.STR}
_CONVERSIONS: dict[str, t.Type] = {"builtins.int": t.INT, "builtins.float": t.FLOAT, "builtins.bool": t.BOOL,
                                   "builtins.str": t.STR}
_DTYPES = frozenset({"float32", "float", "float64", "double", "float16", "half", "bfloat16", "int8", "int16", "int32",
                     "int64", "long", "int", "uint8", "bool", "complex64", "complex128"})


@dataclass(frozen=True)
class ValueField:
    """A value every instance holds (a tensor, a number, a tuple, a dtype...): an input read at each call."""

    type: t.Type


@dataclass(frozen=True)
class ModuleField:
    """A submodule (or other object of a class ppy reads) reached through the attribute."""

    cls: ClassModel


@dataclass(frozen=True)
class UnknownField:
    """An attribute whose kind the class's source does not settle, and why."""

    why: m.Message


Field = ValueField | ModuleField | UnknownField


@dataclass(frozen=True, eq=False)
class ClassModel:
    """One class as the checker reads it: its attributes' kinds and its methods, inherited ones included."""

    name: str  # the qualified name, as the runtime compares it (`Block`, `torch.nn.Linear`)
    path: str  # the file it is defined in (for torch.nn's classes, the shipped module's)
    scope: ModuleScope  # of that file, to resolve names its methods read
    fields: Mapping[str, Field]
    methods: Mapping[str, ast.FunctionDef]
    torch_module: str | None = None  # the shipped module whose source holds it, for torch.nn's classes
    is_module: bool = False  # an nn.Module: `self.training` is an attribute, and calls run `forward`
    # torch.nn's containers, as one construction made them: each item's class by its key ("0", "1"... or a
    # ModuleDict's key) where the construction lists them, or the one class of every item of a ModuleList made by a
    # comprehension (how many is known only at run time).
    container: Container | None = None
    uniform: ClassModel | None = None
    bases: tuple[ClassModel, ...] = ()  # the user's class's bases ppy reads, in order (for `super()`)
    unread_bases: tuple[str, ...] = ()  # bases it cannot read (of a package): their attributes are unknown
    # Of a class in another file of the project: the sha256 of the bytes it was read from (a dependency of every
    # region that reaches it, as a helper's file is).
    digest: str | None = None

    def guard(self, region_path: str) -> str:
        """How the runtime finds the class to compare an object's with: torch.nn's by name, one of the region's
        file by its name there, one of another file by that file's path (whatever the module is called there)."""
        if self.library or self.path == region_path:
            return self.name
        return f"{self.path}::{self.name}"
    own: frozenset[str] = frozenset()  # the methods the class itself defines

    def mro(self) -> list[ClassModel]:
        """The class and its bases ppy reads, in the order Python looks a method up (depth first, each once: the
        C3 order wherever the hierarchy has no diamond)."""
        order: list[ClassModel] = []
        for cls in [self, *(c for base in self.bases for c in base.mro())]:
            if all(cls is not seen for seen in order):
                order.append(cls)
        return order

    @property
    def library(self) -> bool:
        return self.torch_module is not None

    def field(self, name: str) -> Field | None:
        return self.fields.get(name)


class Container(enum.Enum):
    SEQUENTIAL = "torch.nn.Sequential"
    MODULE_LIST = "torch.nn.ModuleList"
    MODULE_DICT = "torch.nn.ModuleDict"


_CONTAINERS = {kind.value: kind for kind in Container} | {
    f"torch.nn.modules.container.{kind.value.rpartition('.')[2]}": kind for kind in Container}


def _container(kind: Container, items: dict[str, ClassModel], uniform: ClassModel | None = None) -> ClassModel:
    from ppy_check.scope import ModuleScope as _Scope

    fields: dict[str, Field] = {key: ModuleField(item) for key, item in items.items()}
    fields["training"] = ValueField(t.BOOL)
    return ClassModel(kind.value, "<torch>/torch/nn/modules/container.py", _Scope(), fields, {},
                      "torch.nn.modules.container", True, kind, uniform)


def torch_class(dotted: str) -> ClassModel | None:
    """torch.nn's class ``dotted`` (``torch.nn.Linear``), when the table describes it and its source ships."""
    return _torch_class(dotted)


@functools.cache
def _torch_class(dotted: str) -> ClassModel | None:
    entry = nn_classes.torch_class(dotted)
    if entry is None:
        return None
    fields: dict[str, Field] = {name: ValueField(kind) for name, kind in entry.fields}
    for name, sub in entry.submodules:
        found = _torch_class(sub)
        fields[name] = ModuleField(found) if found is not None else UnknownField(refusals.ATTRIBUTE_CLASS_UNREAD(name=sub))
    return _shipped_class(entry.module, entry.name, f"torch.nn.{entry.name}", fields)


@functools.cache
def _private_base(module: str, name: str) -> ClassModel | None:
    """A base of torch.nn's classes that is no public class (`_BatchNorm`, `_ConvNd`): its methods, which the table
    of its public subclasses gives the attributes of."""
    return _shipped_class(module, name, f"{module}.{name}", {})


def _shipped_class(module_name: str, name: str, shown: str, fields: dict[str, Field]) -> ClassModel | None:
    node = torch_python.nn_class(module_name, name)
    module = torch_python.module(module_name)
    if node is None or module is None:
        return None
    own = {s.name: s for s in node.body if isinstance(s, ast.FunctionDef)}
    methods = dict(own)
    bases = tuple(_torch_bases(node, module_name, module.scope))
    for base in bases:
        for method_name, method in base.methods.items():
            methods.setdefault(method_name, method)
    return ClassModel(shown, module.path, module.scope, fields, methods, module_name, True, bases=bases,
                      own=frozenset(own))


def _torch_bases(node: ast.ClassDef, module: str, scope: ModuleScope) -> Iterator[ClassModel]:
    """The shipped classes a torch.nn class derives from (`_BatchNorm` of `BatchNorm2d`), for their methods: those
    its own module defines (torch.nn.Module, which does not ship, adds nothing a forward runs)."""
    for base in node.bases:
        if isinstance(base, ast.Name) and base.id in scope.bindings and scope.bindings[base.id].kind is BindingKind.CLASS:
            found = _torch_class(f"torch.nn.{base.id}") or _private_base(module, base.id)
            if found is not None:
                yield found


def class_named(expr: ast.expr, scope: ModuleScope, path: str) -> ClassModel | None:
    """The class an expression names (`Block`, `nn.Linear`), when ppy can read it."""
    if isinstance(expr, ast.Name) and expr.id in scope.bindings:
        binding = scope.bindings[expr.id]
        if binding.kind is BindingKind.CLASS and isinstance(binding.node, ast.ClassDef) and \
                id(binding.node) not in _READING:  # a class holding an instance of itself has no fixed depth
            return user_class(binding.node, scope, path)
        return None
    dotted = scope.resolve_type(expr)
    if dotted is None:
        return None
    return torch_class(dotted) or _project_class(path, dotted)


def _project_class(importer: str, dotted: str) -> ClassModel | None:
    """A class another file of the project defines (`from .layers import Attention`), read as a helper's file is."""
    from ppy_check.imports import find_module, load_file

    module_name, _, name = dotted.rpartition(".")
    if not module_name or dotted.startswith("torch."):
        return None
    path = find_module(importer, module_name)
    found = load_file(path) if path is not None else None
    if path is None or found is None or found.module.tree is None:
        return None
    binding = found.module.scope.bindings.get(name)
    if binding is None or binding.kind is not BindingKind.CLASS or not isinstance(binding.node, ast.ClassDef) or \
            id(binding.node) in _READING:
        return None
    cls = user_class(binding.node, found.module.scope, path)
    return cls if cls.digest == found.source.digest else dataclasses.replace(cls, digest=found.source.digest)


# Kept per class statement, for as long as its tree lives: every region of a class asks for it. A class is in one
# file, so its node alone is the key.
# With it, what reading it read of other files (its fields' classes, imported): it is reused while those read the
# same, and every file reusing it depends on them as much as the first (``reads.kept_apart``).
_READ: WeakKeyDictionary[ast.ClassDef, tuple[ClassModel, reads.Reads]] = WeakKeyDictionary()
_READING: set[int] = set()


def _reads_the_same(read: reads.Reads) -> bool:
    from ppy_check.imports import reads_the_same

    return reads_the_same(read.files.items(), ((importer, module, found)
                                               for (importer, module), found in read.lookups.items()))


def user_class(node: ast.ClassDef, scope: ModuleScope, path: str) -> ClassModel:
    """The user's class, read from its source."""
    found = _READ.get(node)
    if found is not None and found[1].repeatable and _reads_the_same(found[1]):
        return found[0]
    _READING.add(id(node))
    try:
        with reads.kept_apart() as read:
            model = _user_class(node, scope, path)
        _READ[node] = (model, read)
    finally:
        _READING.discard(id(node))
    return model


def _user_class(node: ast.ClassDef, scope: ModuleScope, path: str) -> ClassModel:
    fields: dict[str, Field] = {}
    methods: dict[str, ast.FunctionDef] = {}
    is_module = False
    init_bases: list[ClassModel] = []
    unread: list[str] = []
    for base in node.bases:
        dotted = scope.resolve_type(base)
        if dotted in MODULE_BASES:
            is_module = True
            continue
        found = class_named(base, scope, path)
        if found is None:
            if not (isinstance(base, ast.Name) and base.id == "object"):
                unread.append(ast.unparse(base))
            continue
        is_module = is_module or found.is_module
        init_bases.append(found)
        for name, method in found.methods.items():
            methods.setdefault(name, method)
    own_methods = {s.name: s for s in node.body if isinstance(s, ast.FunctionDef)}
    methods = {**methods, **own_methods}
    if "__init__" not in own_methods:
        for base_class in init_bases:
            for name, field in base_class.fields.items():
                fields.setdefault(name, field)
    else:
        reader = _InitReader(node.name, own_methods["__init__"], scope, path, init_bases)
        fields.update(reader.read())
    for name, field in _annotated(node, scope, path).items():
        fields[name] = field  # the class's own declaration settles what __init__ could not
    for name in _assigned_elsewhere(node, own_methods):
        fields.setdefault(name, UnknownField(refusals.ATTRIBUTE_OUTSIDE_INIT(name=name)))
    if is_module:
        fields.setdefault("training", ValueField(t.BOOL))
    return ClassModel(node.name, path, scope, fields, methods, None, is_module, bases=tuple(init_bases),
                      own=frozenset(own_methods), unread_bases=tuple(unread))


def _annotated(node: ast.ClassDef, scope: ModuleScope, path: str) -> dict[str, Field]:
    """Class-level annotations (`eps: float`, `act: nn.GELU`, dataclass fields)."""
    found: dict[str, Field] = {}
    for statement in node.body:
        if not (isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name)):
            continue
        name = statement.target.id
        cls = class_named(statement.annotation, scope, path)
        if cls is not None:
            found[name] = ModuleField(cls)
            continue
        try:
            found[name] = ValueField(parse_annotation(statement.annotation, scope.resolve_type))
        except AnnotationError:
            found[name] = UnknownField(refusals.ATTRIBUTE_ANNOTATION_UNREAD(name=name,
                                                                           annotation=ast.unparse(statement.annotation)))
    return found


def _assigned_elsewhere(node: ast.ClassDef, methods: Mapping[str, ast.FunctionDef]) -> Iterator[str]:
    """Attributes a method other than `__init__` assigns: their kind may change between calls."""
    for name, method in methods.items():
        if name == "__init__" or not method.args.args:
            continue
        me = method.args.args[0].arg
        for child in ast.walk(method):
            targets = child.targets if isinstance(child, ast.Assign) else \
                [child.target] if isinstance(child, (ast.AugAssign, ast.AnnAssign)) else []
            for target in targets:
                if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == me:
                    yield target.attr


class _InitReader:
    """The kinds `__init__` gives each attribute, path by path (an `if` whose two ways disagree is a union)."""

    def __init__(self, class_name: str, init: ast.FunctionDef, scope: ModuleScope, path: str,
                 bases: list[ClassModel]):
        self.class_name = class_name
        self.init = init
        self.scope = scope
        self.path = path
        self.bases = bases
        self.me = init.args.args[0].arg if init.args.args else "self"
        self.params: dict[str, ast.arg] = {a.arg: a for a in init.args.posonlyargs + init.args.args + init.args.kwonlyargs}
        positional = init.args.posonlyargs + init.args.args
        self.defaults: dict[str, ast.expr] = dict(zip([a.arg for a in positional[len(positional) - len(init.args.defaults):]],
                                                      init.args.defaults))
        for arg, default in zip(init.args.kwonlyargs, init.args.kw_defaults):
            if default is not None:
                self.defaults[arg.arg] = default
        # Local names bound to what a constructor call names (`norm_layer = nn.BatchNorm2d`, torchvision's `if
        # norm_layer is None: norm_layer = nn.BatchNorm2d`), as far as statement order settles them.
        self.locals: dict[str, ast.expr] = {}

    def read(self) -> dict[str, Field]:
        return self.block(self.init.body, {})

    def block(self, statements: list[ast.stmt], fields: dict[str, Field]) -> dict[str, Field]:
        fields = dict(fields)
        for statement in statements:
            if isinstance(statement, ast.If):
                fields = self.branches(statement, fields)
            elif isinstance(statement, (ast.For, ast.While, ast.AsyncFor)):
                for name in self.assigned(statement):
                    fields[name] = UnknownField(refusals.ATTRIBUTE_IN_LOOP(name=name))
            elif isinstance(statement, (ast.With, ast.Try)):
                inner = statement.body if isinstance(statement, ast.With) else statement.body + statement.finalbody
                fields = self.block(inner, fields)
            else:
                self.statement(statement, fields)
        return fields

    def branches(self, statement: ast.If, fields: dict[str, Field]) -> dict[str, Field]:
        """Both ways of an `if`, merged. A local either way binds stays bound only where both ways bind it to the
        same text; `if name is None: name = <default>` on a parameter binds the default, as the name then holds it
        unless the caller passed one (which the run-time class check sees)."""
        before = dict(self.locals)
        then_fields = self.block(statement.body, fields)
        then_locals, self.locals = self.locals, dict(before)
        else_fields = self.block(statement.orelse, fields)
        else_locals = self.locals
        self.locals = {name: value for name, value in then_locals.items()
                       if name in else_locals and ast.dump(else_locals[name]) == ast.dump(value)}
        defaulted = _defaulted_when_none(statement)
        if defaulted is not None and defaulted[0] in self.params:
            self.locals[defaulted[0]] = defaulted[1]
        return _merge(then_fields, else_fields)

    def assigned(self, statement: ast.stmt) -> Iterator[str]:
        for child in ast.walk(statement):
            if isinstance(child, ast.Attribute) and isinstance(child.ctx, ast.Store) and self.is_me(child.value):
                yield child.attr

    def is_me(self, node: ast.expr) -> bool:
        return isinstance(node, ast.Name) and node.id == self.me

    def statement(self, statement: ast.stmt, fields: dict[str, Field]) -> None:
        if isinstance(statement, ast.Assign):
            for target in statement.targets:
                self.assign(target, statement.value, fields)
        elif isinstance(statement, ast.AnnAssign) and statement.value is not None:
            self.assign(statement.target, statement.value, fields, statement.annotation)
        elif isinstance(statement, ast.AugAssign) and isinstance(statement.target, ast.Attribute) and \
                self.is_me(statement.target.value):
            fields[statement.target.attr] = UnknownField(refusals.ATTRIBUTE_OUTSIDE_INIT(name=statement.target.attr))
        elif isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
            self.call(statement.value, fields)

    def assign(self, target: ast.expr, value: ast.expr, fields: dict[str, Field],
               annotation: ast.expr | None = None) -> None:
        if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
            for item, item_value in zip(target.elts, value.elts):
                self.assign(item, item_value, fields)
            return
        if isinstance(target, ast.Name):
            self.locals.pop(target.id, None)
            if isinstance(value, (ast.Name, ast.Attribute)) and class_named(value, self.scope, self.path) is not None:
                self.locals[target.id] = value
            return
        if not (isinstance(target, ast.Attribute) and self.is_me(target.value)):
            return
        if annotation is not None:
            declared = _annotated(ast.ClassDef(self.class_name, [], [], [ast.AnnAssign(ast.Name(target.attr), annotation,
                                                                                       None, 1)], []),
                                  self.scope, self.path).get(target.attr)
            if declared is not None and not isinstance(declared, UnknownField):
                fields[target.attr] = declared
                return
        fields[target.attr] = self.kind(value, fields, target.attr)

    def call(self, call: ast.Call, fields: dict[str, Field]) -> None:
        func = call.func
        if isinstance(func, ast.Attribute) and self.is_me(func.value) and func.attr in (
                "register_buffer", "register_parameter", "add_module", "register_module"):
            if len(call.args) < 2 or not (isinstance(call.args[0], ast.Constant) and isinstance(call.args[0].value, str)):
                return
            name = call.args[0].value
            if func.attr in ("add_module", "register_module"):
                fields[name] = self.kind(call.args[1], fields, name)
                return
            value = call.args[1]
            fields[name] = ValueField(t.OptionalT(t.TENSOR)) if _is_none(value) else ValueField(t.TENSOR)
            return
        if _is_super_init(func):
            for base in self.bases:
                for name, field in base.fields.items():
                    fields.setdefault(name, field)

    def kind(self, value: ast.expr, fields: Mapping[str, Field], name: str) -> Field:
        """The kind an attribute assigned ``value`` holds."""
        if _is_none(value):
            return ValueField(t.NONE)
        if isinstance(value, ast.IfExp):  # `nn.Parameter(...) if bias else None`: what both ways give
            return _merge({name: self.kind(value.body, fields, name)}, {name: self.kind(value.orelse, fields, name)})[name]
        helper = self.helper_result(value)
        if helper is not None:  # `conv3x3(inplanes, planes)`: a module-level function returning a module
            return self.kind(helper, fields, name)
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in self.locals:
            # `norm_layer(planes)`: a call of the class the local was bound to
            return self.kind(ast.Call(self.locals[value.func.id], value.args, value.keywords), fields, name)
        if isinstance(value, ast.Name) and value.id in self.params and self.params[value.id].annotation is not None:
            annotation = self.params[value.id].annotation
            assert annotation is not None
            cls = class_named(annotation, self.scope, self.path)
            if cls is not None and (cls.container is not None or cls.name in _CONTAINERS):
                # Built by the caller: which modules it holds is nowhere in this class's source.
                return UnknownField(refusals.ATTRIBUTE_CONTAINER_PASSED(name=name, cls=cls.name.rpartition(".")[2],
                                                                        param=value.id))
            if cls is not None:
                return ModuleField(cls)  # a config object (`config: GPTConfig`) or a module passed in
            inner = _optional_of(annotation)
            if inner is not None and class_named(inner, self.scope, self.path) is not None:
                return UnknownField(refusals.ATTRIBUTE_OPTIONAL_MODULE(name=name, param=value.id,
                                                                       annotation=ast.unparse(annotation)))
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in self.params:
            # `self.act = act_layer()`: the class the parameter defaults to (the entry checks the one passed).
            default = self.defaults.get(value.func.id)
            cls = class_named(default, self.scope, self.path) if default is not None else None
            return ModuleField(cls) if cls is not None else UnknownField(refusals.ATTRIBUTE_KIND_UNKNOWN(
                name=name, value=ast.unparse(value), example="nn.GELU"))
        if isinstance(value, ast.Call):
            dotted = self.scope.resolve(value.func)
            if dotted in PARAMETER_CLASSES:
                return ValueField(t.TENSOR)
            if dotted in _CONTAINERS:
                return self.container(_CONTAINERS[dotted], value, fields, name)
            cls = class_named(value.func, self.scope, self.path)
            if cls is not None:
                return ModuleField(cls)
            if dotted is not None and dotted.startswith("torch.") and not dotted.startswith("torch.nn."):
                return ValueField(t.TENSOR)  # a factory: torch.zeros, torch.randn, torch.arange...
            if dotted in _CONVERSIONS:
                return ValueField(_CONVERSIONS[dotted])
            if dotted is not None and dotted.startswith("torch.nn."):
                return UnknownField(refusals.ATTRIBUTE_CLASS_UNREAD(name=dotted))
        value_type = self.value_type(value, fields)
        if value_type is not None:
            return ValueField(value_type)
        example = _example(value)
        return UnknownField(refusals.ATTRIBUTE_KIND_UNKNOWN(name=name, value=ast.unparse(value), example=example))

    def helper_result(self, value: ast.expr) -> ast.expr | None:
        """What a call of a module-level function of one `return <constructor call>` statement returns."""
        if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Name)):
            return None
        binding = self.scope.bindings.get(value.func.id)
        node = binding.node if binding is not None and binding.kind is BindingKind.FUNCTION else None
        body = [s for s in node.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))] \
            if isinstance(node, ast.FunctionDef) else []
        if len(body) == 1 and isinstance(body[0], ast.Return) and isinstance(body[0].value, ast.Call) and \
                class_named(body[0].value.func, self.scope, self.path) is not None:
            return body[0].value
        return None

    def container(self, kind: Container, call: ast.Call, fields: Mapping[str, Field], name: str) -> Field:
        """A Sequential, ModuleList or ModuleDict: the class of each item, as the construction lists them."""
        if call.keywords:
            return UnknownField(refusals.ATTRIBUTE_KIND_UNKNOWN(name=name, value=ast.unparse(call), example="nn.Linear"))
        items: list[tuple[str, ast.expr]] = []
        if kind is Container.SEQUENTIAL and len(call.args) == 1 and isinstance(call.args[0], ast.Call) and \
                self.scope.resolve(call.args[0].func) in ("collections.OrderedDict", "typing.OrderedDict"):
            return UnknownField(refusals.SEQUENTIAL_NAMED(name=name, value=ast.unparse(call)))
        if kind is Container.SEQUENTIAL:
            items = [(str(index), arg) for index, arg in enumerate(call.args)]
        elif len(call.args) == 1 and kind is Container.MODULE_LIST and isinstance(call.args[0], (ast.List, ast.Tuple)):
            items = [(str(index), arg) for index, arg in enumerate(call.args[0].elts)]
        elif len(call.args) == 1 and kind is Container.MODULE_DICT and isinstance(call.args[0], ast.Dict):
            for key_node, value_node in zip(call.args[0].keys, call.args[0].values):
                if not (isinstance(key_node, ast.Constant) and isinstance(key_node.value, str)):
                    return UnknownField(refusals.ATTRIBUTE_KIND_UNKNOWN(name=name, value=ast.unparse(call),
                                                                        example="nn.ModuleDict"))
                items.append((key_node.value, value_node))
        elif len(call.args) == 1 and kind is Container.MODULE_LIST and isinstance(call.args[0], ast.ListComp):
            each = self.kind(call.args[0].elt, fields, name)
            if isinstance(each, ModuleField):
                return ModuleField(_container(kind, {}, each.cls))
            return each if isinstance(each, UnknownField) else \
                UnknownField(refusals.ATTRIBUTE_KIND_UNKNOWN(name=name, value=ast.unparse(call), example="nn.ModuleList"))
        elif call.args:
            return UnknownField(refusals.ATTRIBUTE_KIND_UNKNOWN(name=name, value=ast.unparse(call), example="nn.Sequential"))
        classes: dict[str, ClassModel] = {}
        for key, item_node in items:
            found = self.kind(item_node, fields, f"{name}[{key!r}]")
            if not isinstance(found, ModuleField):
                return found if isinstance(found, UnknownField) else \
                    UnknownField(refusals.ATTRIBUTE_KIND_UNKNOWN(name=name, value=ast.unparse(call), example="nn.Sequential"))
            classes[key] = found.cls
        return ModuleField(_container(kind, classes))

    def value_type(self, value: ast.expr, fields: Mapping[str, Field]) -> t.Type | None:
        if isinstance(value, ast.Constant):
            return _LITERALS.get(type(value.value))
        if isinstance(value, ast.Name) and value.id in self.params:
            return self.param_type(value.id)
        if isinstance(value, ast.Attribute) and self.is_me(value.value):
            field = fields.get(value.attr)
            return field.type if isinstance(field, ValueField) else None
        if isinstance(value, ast.Attribute) and isinstance(value.value, ast.Name) and value.value.id in self.params:
            # `config.n_embd` of a config object whose class ppy reads (a dataclass, a plain class).
            annotation = self.params[value.value.id].annotation
            cls = class_named(annotation, self.scope, self.path) if annotation is not None else None
            field = cls.field(value.attr) if cls is not None else None
            return field.type if isinstance(field, ValueField) else None
        if isinstance(value, ast.Attribute):
            dotted = self.scope.resolve(value)
            if dotted is not None and dotted.startswith("torch.") and dotted.rpartition(".")[2] in _DTYPES:
                return t.DTYPE
            return None
        if isinstance(value, ast.UnaryOp) and isinstance(value.op, (ast.USub, ast.UAdd)):
            inner = self.value_type(value.operand, fields)
            return inner if inner in (t.INT, t.FLOAT) else None
        if isinstance(value, ast.BinOp):
            left, right = self.value_type(value.left, fields), self.value_type(value.right, fields)
            if left not in (t.INT, t.FLOAT) or right not in (t.INT, t.FLOAT):
                return None
            if isinstance(value.op, ast.Div):
                return t.FLOAT
            if isinstance(value.op, ast.Pow):
                negative = isinstance(value.right, ast.UnaryOp) and isinstance(value.right.op, ast.USub)
                # int ** int is a float for a negative power, which a literal `** -0.5` shows
                return t.FLOAT if t.FLOAT in (left, right) or negative else None
            return t.FLOAT if t.FLOAT in (left, right) else t.INT
        if isinstance(value, ast.Tuple):
            items = [self.value_type(item, fields) for item in value.elts]
            return None if any(i is None for i in items) else t.TupleT(tuple(i for i in items if i is not None))
        if isinstance(value, ast.IfExp):
            body, orelse = self.value_type(value.body, fields), self.value_type(value.orelse, fields)
            if body is None or orelse is None:
                return None
            merged = _merge_types(body, orelse)
            return merged
        return None

    def param_type(self, name: str) -> t.Type | None:
        annotation = self.params[name].annotation
        if annotation is not None:
            try:
                return parse_annotation(annotation, self.scope.resolve_type)
            except AnnotationError:
                return None
        default = self.defaults.get(name)
        if isinstance(default, ast.Constant) and default.value is not None:
            return _LITERALS.get(type(default.value))
        return None


def _example(value: ast.expr) -> str:
    """A declaration to suggest for an attribute assigned ``value``: the kind its text suggests."""
    text = ast.unparse(value)
    if "None" in text:
        return "torch.Tensor | None"
    if isinstance(value, ast.Call):
        name = ast.unparse(value.func).rpartition(".")[2]
        return f"nn.{name}" if name[:1].isupper() else "torch.Tensor"
    if any(isinstance(n, ast.Constant) and isinstance(n.value, float) for n in ast.walk(value)) or \
            any(isinstance(n, (ast.Div, ast.Pow)) for n in ast.walk(value)):
        return "float"
    return "int"


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None


def _optional_of(annotation: ast.expr) -> ast.expr | None:
    """What `X | None`, `None | X` or `Optional[X]` makes optional."""
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        if _is_none(annotation.right):
            return annotation.left
        if _is_none(annotation.left):
            return annotation.right
    if isinstance(annotation, ast.Subscript) and ast.unparse(annotation.value).rpartition(".")[2] == "Optional":
        return annotation.slice
    return None


def _defaulted_when_none(statement: ast.If) -> tuple[str, ast.expr] | None:
    """`if name is None: name = <class>` with no `else`: the name and the class it then holds."""
    test = statement.test
    if statement.orelse or len(statement.body) != 1 or not isinstance(test, ast.Compare) or len(test.ops) != 1 or \
            not isinstance(test.ops[0], ast.Is) or not isinstance(test.left, ast.Name) or \
            not _is_none(test.comparators[0]):
        return None
    body = statement.body[0]
    if isinstance(body, ast.Assign) and len(body.targets) == 1 and isinstance(body.targets[0], ast.Name) and \
            body.targets[0].id == test.left.id and isinstance(body.value, (ast.Name, ast.Attribute)):
        return test.left.id, body.value
    return None


def _is_super_init(func: ast.expr) -> bool:
    return isinstance(func, ast.Attribute) and func.attr == "__init__" and isinstance(func.value, ast.Call) and \
        isinstance(func.value.func, ast.Name) and func.value.func.id == "super"


def _merge_types(first: t.Type, second: t.Type) -> t.Type | None:
    if first == second:
        return first
    if isinstance(first, t.NoneT):
        return second if isinstance(second, t.OptionalT) else t.OptionalT(second)
    if isinstance(second, t.NoneT):
        return first if isinstance(first, t.OptionalT) else t.OptionalT(first)
    if isinstance(first, t.OptionalT) and first.inner == second or isinstance(second, t.OptionalT) and second.inner == first:
        return first if isinstance(first, t.OptionalT) else second
    if {first, second} == {t.INT, t.FLOAT}:
        return t.NUMBER
    return None


def _merge(first: dict[str, Field], second: dict[str, Field]) -> dict[str, Field]:
    """The kinds after an `if`: what both ways agree on; a value on one way and None on the other is Optional."""
    merged = dict(first)
    for name, field in second.items():
        other = merged.get(name)
        if other is None:
            merged[name] = UnknownField(refusals.ATTRIBUTE_ON_ONE_WAY(name=name))
        elif other == field:
            merged[name] = field
        elif isinstance(other, ValueField) and isinstance(field, ValueField):
            kind = _merge_types(other.type, field.type)
            merged[name] = ValueField(kind) if kind is not None else \
                UnknownField(refusals.ATTRIBUTE_KINDS_DIFFER(name=name, first=str(other.type), second=str(field.type)))
        elif isinstance(other, UnknownField):
            continue
        elif isinstance(field, UnknownField):
            merged[name] = field
        else:
            merged[name] = UnknownField(refusals.ATTRIBUTE_KINDS_DIFFER(name=name, first=_shown(other), second=_shown(field)))
    for name in set(first) - set(second):
        merged[name] = UnknownField(refusals.ATTRIBUTE_ON_ONE_WAY(name=name))
    return merged


def _shown(field: Field) -> str:
    if isinstance(field, ValueField):
        return str(field.type)
    if isinstance(field, ModuleField):
        return field.cls.name
    return "unknown"
