"""Python's operators on tensors, compiled, against Python: the same result, or the same exception and message.

Python runs ``a + b`` through ``Tensor``'s dunders: some are defined in Python in torch/_tensor.py (``__rsub__``,
``__rdiv__``, ``__rpow__``, ``__floordiv__``, ``__rlshift__``, ``__rmatmul__``...), some in C, and some of those
check the dtype before they dispatch (``__invert__`` refuses a float tensor with TypeError, where
``bitwise_not`` raises NotImplementedError). This is a sweep, not a list: every operator Python has (binary,
augmented, unary, comparison) with every kind of operand a region takes (a tensor of each dtype kind, int, float,
bool), written as one region each; what ppy-check accepts is built and held to the Python body on every dtype and
on values that make torch raise (a zero divisor, a negative power); what it refuses must raise TypeError in Python
for every dtype, since the refusal cannot depend on one.
"""

from __future__ import annotations

import ast
import functools
import itertools
from collections.abc import Callable, Iterator
from typing import Any

import pytest

torch = pytest.importorskip("torch")

from tests.support.generated import load_module, write_source  # noqa: E402

import ppy  # noqa: E402
from ppy_check.engine import check_source  # noqa: E402

BINARY = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.Pow: "**",
          ast.MatMult: "@", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^", ast.LShift: "<<", ast.RShift: ">>"}
COMPARE = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
UNARY = {ast.USub: "-", ast.UAdd: "+", ast.Invert: "~"}
KINDS = {"T": "torch.Tensor", "int": "int", "float": "float", "bool": "bool"}


def test_the_sweep_covers_every_operator_python_has() -> None:
    # A Python that adds an operator fails here until the sweep writes it.
    assert set(BINARY) == set(ast.operator.__subclasses__())
    assert set(COMPARE) == {op for op in ast.cmpop.__subclasses__() if op not in (ast.Is, ast.IsNot, ast.In, ast.NotIn)}
    assert set(UNARY) == set(ast.unaryop.__subclasses__()) - {ast.Not}


def _regions() -> Iterator[tuple[str, str, str]]:
    """(name, signature, body) of one region per operator and pair of operand kinds."""
    pairs = [(a, b) for a, b in itertools.product(KINDS, repeat=2) if "T" in (a, b)]
    for op, symbol in BINARY.items():
        for a, b in pairs:
            yield f"binary_{op.__name__}_{a}_{b}", f"a: {KINDS[a]}, b: {KINDS[b]}", f"return a {symbol} b"
        for b in KINDS:
            yield f"augmented_{op.__name__}_T_{b}", f"a: torch.Tensor, b: {KINDS[b]}", f"a {symbol}= b\n    return a"
    for comparison, symbol in COMPARE.items():
        for a, b in pairs:
            yield f"compare_{comparison.__name__}_{a}_{b}", f"a: {KINDS[a]}, b: {KINDS[b]}", f"return a {symbol} b"
    for unary, symbol in UNARY.items():
        yield f"unary_{unary.__name__}_T", "a: torch.Tensor", f"return {symbol}a"


def _source(names: set[str] | None = None) -> str:
    """The module of every region (or only of those ``names``)."""
    lines = ["import ppy", "import torch", ""]
    for name, signature, body in _regions():
        if names is None or name in names:
            lines += ["", "@ppy.opt(1)", f"def {name}({signature}) -> torch.Tensor:", f"    {body}", ""]
    return "\n".join(lines)


@functools.cache
def _refused() -> dict[str, str]:
    """What ppy-check refuses, and its finding: those regions are left out of the module that is built."""
    return {finding.region or "": finding.message for finding in check_source(_source(), "operator_regions.py")}


def _tensors() -> list[torch.Tensor]:
    # 2 x 2, so that `@` multiplies; zeros, so that an integer division by a tensor divides by zero.
    return [torch.tensor([[1.5, -2.0], [0.0, 3.0]]), torch.tensor([[1 + 1j, 2], [0, -3j]]),
            torch.tensor([[True, False], [False, True]]), torch.tensor([[3, -2], [0, 5]])]


SCALARS: dict[str, list[Any]] = {"int": [3, 0, -2], "float": [2.5, 0.0], "bool": [True, False]}


def _operands(kind: str) -> list[Any]:
    return _tensors() if kind == "T" else SCALARS[kind]


def _outcome(function: Callable[..., Any], args: tuple[Any, ...]) -> tuple[Any, ...]:
    """How a call ended: the result's dtype, shape and values, or the exception's type and message."""
    args = tuple(a.clone() if isinstance(a, torch.Tensor) else a for a in args)
    try:
        result = function(*args)
    except Exception as error:  # noqa: BLE001 - compared below
        return type(error).__name__, str(error).split("\n  in region `")[0]
    if not isinstance(result, torch.Tensor):
        return type(result).__name__, repr(result)
    values = torch.view_as_real(result).tolist() if result.is_complex() else result.tolist()
    return "Tensor", str(result.dtype), tuple(result.shape), repr(values), [repr(a) for a in args]


@pytest.fixture(scope="module")
def operators() -> Any:
    accepted = {name for name, _, _ in _regions() if name not in _refused()}
    return load_module(write_source("operator_regions", _source(accepted)), "operator_regions")


def _cases(name: str) -> list[tuple[Any, ...]]:
    kinds = name.split("_")[2:]
    return list(itertools.product(*(_operands(kind) for kind in kinds)))


def test_each_operator_is_pythons_or_refused_where_python_always_refuses(operators: Any) -> None:
    wrong = []
    refused = []
    for name, signature, body in _regions():
        cases = _cases(name)
        if name in _refused():
            namespace: dict[str, Any] = {"torch": torch}
            parameters = ", ".join(part.split(":")[0] for part in signature.split(", "))
            exec(f"def {name}({parameters}):\n    {body}", namespace)  # the region's body, as Python runs it
            answers = [_outcome(namespace[name], args) for args in cases]
            if any(answer[0] != "TypeError" for answer in answers):
                refused.append(f"{name} ({body!r}) is refused, but Python runs some of its calls: {answers}\n  "
                               f"{_refused()[name]}")
            continue
        region: ppy.Region[..., Any] = getattr(operators, name)
        assert region.build(), f"{name} did not compile: {region.fallback_reason}"
        for args in cases:
            compiled, python = _outcome(region, args), _outcome(region.python, args)
            if compiled != python:
                shown = ", ".join(f"{a.dtype} tensor" if isinstance(a, torch.Tensor) else repr(a) for a in args)
                wrong.append(f"{body!r} on ({shown}):\n  Python   {python}\n  compiled {compiled}")
    assert not refused, "\n".join(refused)
    assert not wrong, f"{len(wrong)} calls differ:\n" + "\n".join(wrong[:40])
