"""What a method region's compiled code takes from its instance at each call, and the checks before it.

A method region's build reads attributes through ``self`` (``self.attn.c_proj.weight``, ``self.eps``,
``self.training``): each is an input of the compiled function, taken from the object at every call, so one
build serves every instance and nothing is baked in. The build also assumed the class of each object it
inlined code from (the instance, each submodule called): another class there (a LoRA wrapper swapped in, a
subclass) or a forward hook on one of them has other Python behaviour than the inlined code, so that call runs
the Python body, with one warning naming the attribute. A value of another kind than the build assumed (a
tensor attribute set to a float, a tensor subclass) is declined by the compiled entry itself; ``declined``
then says which attribute it was.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

# Module.__call__ runs these around forward; inlined code would skip them.
_HOOK_DICTS = ("_forward_hooks", "_forward_pre_hooks", "_backward_hooks", "_backward_pre_hooks")


def _global_hooks() -> bool:
    """Hooks every module's call runs (``register_module_forward_hook`` and friends)."""
    from torch.nn.modules import module

    return bool(module._global_forward_hooks or module._global_forward_pre_hooks or module._global_backward_hooks
                or module._global_backward_pre_hooks)


@dataclass(frozen=True)
class Mismatch:
    """Why this call of a method region runs its Python body: the attribute, and what is not as built."""

    path: str
    why: str


@dataclass(frozen=True)
class InstanceReader:
    """The reads and checks of one method region, resolved once when its compiled form is settled."""

    name: str  # the instance's parameter, as the messages name paths (`self.attn`)
    reads: tuple[str, ...]  # attribute paths from the instance, in the order of the compiled inputs
    types: tuple[str, ...]  # the type the build assumed of each, for messages
    checks: tuple[tuple[str, type], ...]  # (path, exact class), the instance itself at ""
    read_all: Callable[[Any], Any]
    # The compiled function's entry, which takes the region's arguments and then the reads (see `taking`).
    raw: Callable[..., Any] = lambda *values: NotImplemented

    def taking(self, raw: Callable[..., Any]) -> InstanceReader:
        return dataclasses.replace(self, raw=raw)

    def entry(self, instance: Any, *arguments: Any) -> Any:
        """The compiled region as a function of the instance and the region's arguments, all positional (what
        verify and torch's operator call): NotImplemented where the instance is not as built."""
        taken = self.arguments(instance)
        if not isinstance(taken, tuple):
            return NotImplemented
        return self.raw(*arguments, *taken)

    @classmethod
    def of(cls, name: str, reads: Sequence[Sequence[str]], classes: Sequence[Sequence[str]],
           namespace: dict[str, Any]) -> InstanceReader:
        """Resolve the classes the build read (``classes``: [path, name]) in the region's module (``namespace``) or
        torch.nn; raises LookupError naming one that is not there."""
        checks = []
        for path, class_name in classes:
            checks.append((path, _resolve_class(class_name, namespace)))
        paths = tuple(path for path, _ in reads)
        getter: Callable[[Any], Any]
        if not paths:
            getter = _no_reads
        elif len(paths) == 1:
            one = operator.attrgetter(paths[0])
            getter = lambda instance: (one(instance),)  # noqa: E731  attrgetter of one path gives the value alone
        else:
            getter = operator.attrgetter(*paths)
        return cls(name, paths, tuple(kind for _, kind in reads), tuple(checks), getter)

    def arguments(self, instance: Any) -> tuple[Any, ...] | Mismatch:
        """The compiled function's inputs read from ``instance``, or what makes this call Python's."""
        for path, expected in self.checks:
            found = operator.attrgetter(path)(instance) if path else instance
            if type(found) is not expected:
                return Mismatch(self.shown(path), f"it is a {_class_name(type(found))}, and the build inlined the code "
                                                   f"of {_class_name(expected)}")
            if isinstance(found, torch.nn.Module) and any(getattr(found, hooks) for hooks in _HOOK_DICTS):
                return Mismatch(self.shown(path), "it has a hook, which its call would run and the inlined code skips")
        if self.checks and _global_hooks():
            return Mismatch(self.name, "a global module hook is registered, which every module's call runs")
        try:
            values: tuple[Any, ...] = self.read_all(instance)
        except AttributeError as error:
            return Mismatch(self.name, f"reading it failed ({error})")
        return values

    def declined(self, values: Sequence[Any]) -> Mismatch:
        """Which attribute made the compiled entry decline a call: its value is not what the build assumed."""
        for path, kind, value in zip(self.reads, self.types, values):
            if not _fits(kind, value):
                return Mismatch(self.shown(path), f"it holds a {_class_name(type(value))}, and the build assumed "
                                                  f"{kind}")
        return Mismatch(self.name, "an argument or attribute is not exactly its type")

    def shown(self, path: str) -> str:
        return f"{self.name}.{path}" if path else self.name


def _no_reads(instance: Any) -> tuple[Any, ...]:
    return ()


def _resolve_class(name: str, namespace: dict[str, Any]) -> type:
    if name.startswith("torch.nn."):
        found: Any = torch.nn
        parts = name.split(".")[2:]
    else:
        parts = name.split(".")
        if parts[0] not in namespace:
            raise LookupError(f"the class `{name}` the build read is not defined in the region's module")
        found = namespace[parts[0]]
        parts = parts[1:]
    for part in parts:
        found = getattr(found, part, None)
    if not isinstance(found, type):
        raise LookupError(f"`{name}`, which the build read as a class, is not one")
    return found


def _class_name(kind: type) -> str:
    return kind.__qualname__ if kind.__module__ in ("builtins", "__main__") else f"{kind.__module__}.{kind.__qualname__}"


def _fits(kind: str, value: Any) -> bool:
    """A coarse test of a value against the type the build assumed (for the message only)."""
    plain = type(value) in (torch.Tensor, torch.nn.Parameter)
    answers: dict[str, bool] = {
        "torch.Tensor": plain,
        "torch.Tensor | None": value is None or plain,
        "int": type(value) is int,
        "float": type(value) in (int, float),
        "bool": type(value) is bool,
        "str": type(value) is str,
        "torch.dtype": isinstance(value, torch.dtype),
    }
    return answers.get(kind, True)
