"""The values the builder passes around beside model expressions: references, helpers, poison."""

from __future__ import annotations

import ast
import enum
import typing
from dataclasses import dataclass
from typing import TypeGuard, TypeVar

from ppy_check.classes import ClassModel
from ppy_check.model.bind import Argument
from ppy_check.model.ir import Expr, ShownSeq
from ppy_check.scope import ModuleScope

# The pieces of an exception's message: literal text, and run-time values formatted into it.
Message = tuple[str | Expr | ShownSeq, ...]


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
class Partial:
    """``functools.partial(func, *args, **keywords)``: known where the region is built (the value of a
    ``Const`` of ``FunctionT``), so a call of it is a call of ``func`` with these arguments first."""

    func: object  # what is called: a FunctionRef, a BooleanDispatch or another Partial
    args: tuple[Argument, ...]
    keywords: tuple[tuple[str, Expr], ...]


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
class ModuleValue:
    """An object a method region reaches through ``self`` (the instance, a submodule): not a value, a path whose
    attributes are the region's inputs (``self.attn.c_proj``)."""

    cls: ClassModel
    path: str  # as written from the region's instance: `self`, `self.attn.c_proj`


@dataclass(frozen=True)
class Poisoned:
    """A value whose problem is already reported: anything computed from it is not reported again."""


POISON = Poisoned()


Value = (Expr | ModuleRef | FunctionRef | ProjectModule | LibraryModule | BooleanDispatch | KeywordDict | UntypedParam
         | ModuleValue | Poisoned)


# A value handed back as it came (Builder.mark): an Expr stays an Expr for the caller.
_ValueT = TypeVar("_ValueT", bound=Value)


class RestTaken(enum.Enum):
    """What library_if did with the statements after an `if` of torch's code."""

    YES = "compiled inside the branch"
    NO = "left to run after it"
    NOT_HANDLED = "the `if` is a check or a warning, for library_statement"


_EXPRESSIONS: tuple[type, ...] = typing.get_args(Expr)


def _is_expr(value: object) -> TypeGuard[Expr]:
    return isinstance(value, _EXPRESSIONS)
