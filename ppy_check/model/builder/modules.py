"""What a method region reaches through ``self``: attribute inputs, submodule calls, method calls.

Every attribute path the region reads that holds a value (``self.attn.c_proj.weight``, ``self.eps``,
``self.training``) is one more input of the compiled function, read from the object at each call
(``AttributeRead``); nothing of an instance is built in, so one build serves every instance of the class. A
path that holds a submodule is a ``ModuleValue``: calling it inlines its class's ``forward`` (torch.nn's from
torch's shipped source, in the library dialect; the user's own as a helper is), and the class it was read as is
a guard the entry checks at every call.
"""

from __future__ import annotations

import ast

from ppy_check.classes import ClassModel, Container, ModuleField, UnknownField, ValueField
from ppy_check.messages import refusals
from ppy_check.model import types as t
from ppy_check.model.bind import Argument
from ppy_check.model.builder.facts import _carries_tensors
from ppy_check.model.builder.part import Part
from ppy_check.model.builder.text import display
from ppy_check.model.builder.values import Helper, ModuleValue, Value
from ppy_check.model.ir import Const, Expr, Param, Span


class Modules(Part):
    """Attributes read, and methods and submodules called, through a method region's instance."""

    def instance(self, cls: ClassModel, name: str) -> ModuleValue:
        """The region's own instance (`self`), whose exact class the entry checks."""
        self.state.module_classes.setdefault(name, cls)
        return ModuleValue(cls, name)

    def attribute(self, base: ModuleValue, attr: str, span: Span) -> Value:
        path = f"{base.path}.{attr}"
        field = base.cls.field(attr)
        if field is None:
            method = base.cls.methods.get(attr)
            if method is not None:
                getter = any(display(d).split(".")[-1] in ("property", "cached_property", "getter")
                             for d in method.decorator_list)
                return self.state.type_problem(span, path, refusals.PROPERTY_NOT_READ(cls=base.cls.name) if getter
                                               else refusals.METHOD_NOT_VALUE(cls=base.cls.name, path=path))
            if base.cls.unread_bases:
                return self.state.type_problem(span, path, refusals.ATTRIBUTE_OF_UNREAD_BASE(
                    cls=base.cls.name, base=base.cls.unread_bases[0], name=attr))
            return self.state.type_problem(span, path, refusals.ATTRIBUTE_NOT_ASSIGNED(cls=base.cls.name, name=attr))
        if isinstance(field, UnknownField):
            return self.state.type_problem(span, path, refusals.ATTRIBUTE_UNSETTLED(why=field.why))
        if isinstance(field, ModuleField):
            return self.submodule(base, attr, field.cls)
        return self.read(path, field, span)

    def path_of(self, node: ast.Attribute) -> str | None:
        """`self.bn.momentum` as the path of the input it reads, when its base is an instance the region reaches."""
        names = [node.attr]
        base: ast.expr = node.value
        while isinstance(base, ast.Attribute):
            names.append(base.attr)
            base = base.value
        found = self.state.env.get(base.id) if isinstance(base, ast.Name) else None
        if not isinstance(found, ModuleValue):
            return None
        return ".".join([found.path, *reversed(names)])

    def read(self, path: str, field: ValueField, span: Span) -> Value:
        """The input that holds ``path``'s value: one per path, however often the region reads it."""
        narrowed = self.state.narrowed_attributes.get(path)
        if narrowed is not None:
            return narrowed
        found = self.state.attributes.get(path)
        if found is not None:
            return found
        kind = _as_input(field.type)
        if isinstance(kind, t.NoneT):
            return Const(None, t.NONE, span)
        aliases = frozenset({path}) if _carries_tensors(kind) else frozenset()
        index = len(self.state.region.params) + len(self.state.attributes)
        value = self.state.attributes[path] = Param(path, index, kind, span, aliases)
        if isinstance(kind, (t.TupleT, t.SeqT)):
            # The entry takes a tuple there and declines a list (Python's `isinstance(self.padding, tuple)` holds).
            self.state.mark(value, "tuple")
        return value

    def call_member(self, receiver: ModuleValue, attr: str, args: list[Argument], keywords: dict[str, Expr],
                    span: Span, shown: str) -> Value:
        """`self.proj(x)`: a submodule called; `self.helper(x)`: a method of the class, run on the same instance."""
        field = receiver.cls.field(attr)
        if field is None and attr in receiver.cls.methods:
            return self.run_method(receiver, receiver.cls.methods[attr], args, keywords, span, shown)
        target = self.attribute(receiver, attr, span)
        if isinstance(target, ModuleValue):
            return self.call_module(target, args, keywords, span, shown)
        if isinstance(target, Param):
            return self.state.type_problem(span, target.name, refusals.ATTRIBUTE_NOT_CALLABLE(type=target.type))
        return target

    def item(self, container: ModuleValue, index: ast.expr, span: Span) -> Value:
        """`self.layers[0]`, `self.heads["q"]`: an item of a torch.nn container, by a literal key."""
        cls = container.cls
        key = index.value if isinstance(index, ast.Constant) else None
        if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub) and isinstance(index.operand, ast.Constant):
            key = -index.operand.value if isinstance(index.operand.value, int) else None
        if cls.container is None:
            return self.state.type_problem(span, container.path, refusals.MODULE_NOT_INDEXED(cls=cls.name))
        if cls.container is Container.MODULE_DICT:
            if not isinstance(key, str) or not key.isidentifier():  # the runtime reads it as an attribute path
                return self.state.type_problem(span, container.path, refusals.CONTAINER_KEY_LITERAL(cls=cls.name))
            found = cls.field(key)
            if not isinstance(found, ModuleField):
                return self.state.type_problem(span, f"{container.path}[{key!r}]",
                                               refusals.CONTAINER_NO_KEY(cls=cls.name, key=repr(key)))
            return self.submodule(container, key, found.cls)
        if not isinstance(key, int) or isinstance(key, bool):
            return self.state.type_problem(span, container.path, refusals.CONTAINER_KEY_LITERAL(cls=cls.name))
        if cls.uniform is not None:
            if key < 0:  # how many items there are is known only at run time
                return self.state.type_problem(span, f"{container.path}[{key}]",
                                               refusals.CONTAINER_NEGATIVE_UNKNOWN(cls=cls.name))
            return self.submodule(container, str(key), cls.uniform)
        count = len(cls.fields) - 1  # its items, and `training`
        position = key + count if key < 0 else key
        if key < 0:  # counted from the end as the construction makes it: another count is another item
            self.state.container_lengths.setdefault(container.path, count)
        found = cls.field(str(position))
        if not 0 <= position < count or not isinstance(found, ModuleField):
            return self.state.type_problem(span, f"{container.path}[{key}]",
                                           refusals.CONTAINER_OUT_OF_RANGE(cls=cls.name, count=count))
        return self.submodule(container, str(position), found.cls)

    def submodule(self, parent: ModuleValue, key: str, cls: ClassModel) -> ModuleValue:
        path = f"{parent.path}.{key}"
        self.state.module_classes.setdefault(path, cls)
        if cls.digest is not None:  # another file's class: an edit there rebuilds the region, as a helper's does
            self.state.dependencies.setdefault(cls.path, cls.digest)
        return ModuleValue(cls, path)

    def call_module(self, module: ModuleValue, args: list[Argument], keywords: dict[str, Expr], span: Span,
                    shown: str) -> Value:
        if module.cls.container is Container.SEQUENTIAL:
            return self.sequence(module, args, keywords, span, shown)
        forward = module.cls.methods.get("forward") if module.cls.is_module else module.cls.methods.get("__call__")
        if forward is None:
            return self.state.type_problem(span, module.path, refusals.MODULE_NO_FORWARD(cls=module.cls.name))
        return self.run_method(module, forward, args, keywords, span, shown)

    def sequence(self, module: ModuleValue, args: list[Argument], keywords: dict[str, Expr], span: Span,
                 shown: str) -> Value:
        """A Sequential called: each item on what the one before gave, as its `forward` loops."""
        cls = module.cls
        if keywords or len(args) != 1 or args[0].spread:
            return self.state.type_problem(span, module.path, refusals.SEQUENTIAL_ONE_ARGUMENT())
        value: Value = args[0].value
        # Its forward runs every item: an item appended or deleted since the construction is another model.
        self.state.container_lengths.setdefault(module.path, len(cls.fields) - 1)
        for key in range(len(cls.fields) - 1):
            found = cls.field(str(key))
            assert isinstance(found, ModuleField)  # a Sequential's items are modules (classes._container)
            if not isinstance(value, Expr):
                return value
            value = self.call_module(self.submodule(module, str(key), found.cls), [Argument(value)], {}, span, shown)
        return value

    def call_super(self, receiver: ModuleValue, current: ast.FunctionDef, name: str, args: list[Argument],
                   keywords: dict[str, Expr], span: Span, shown: str) -> Value:
        """`super().forward(x)` in a method: the method of the next class in the instance's MRO after the one
        that defines the running method, on the same instance."""
        mro = receiver.cls.mro()
        owner = next((i for i, c in enumerate(mro) if c.methods.get(current.name) is current and current.name in c.own),
                     None)
        found = None if owner is None else next((c.methods[name] for c in mro[owner + 1:] if name in c.own), None)
        if found is None:
            return self.state.type_problem(span, shown, refusals.SUPER_METHOD_UNREAD(name=name, cls=receiver.cls.name))
        return self.run_method(receiver, found, args, keywords, span, shown)

    def run_method(self, receiver: ModuleValue, method: ast.FunctionDef, args: list[Argument],
                   keywords: dict[str, Expr], span: Span, shown: str) -> Value:
        cls = receiver.cls
        self.state.methods_run.add((receiver.path, method.name))
        static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in method.decorator_list)
        helper = Helper(method, cls.scope, cls.path, library=cls.library)
        if static:
            return self.inliner.inline(helper, args, keywords, span, shown)
        return self.inliner.inline(helper, args, keywords, span, shown, receiver=(method.args.args[0].arg, receiver))


def _as_input(kind: t.Type) -> t.Type:
    """An attribute's type as an input: a float attribute may hold an int at run time (`nn.LayerNorm(d, eps=0)`),
    so it is what a `float` parameter is (a number known only at run time)."""
    if isinstance(kind, t.FloatT):
        return t.NUMBER
    if isinstance(kind, t.OptionalT):
        return t.OptionalT(_as_input(kind.inner))
    if isinstance(kind, t.TupleT):
        return t.TupleT(tuple(_as_input(item) for item in kind.items), kind.names, kind.structseq)
    if isinstance(kind, t.SeqT):
        return t.SeqT(_as_input(kind.item))
    return kind
