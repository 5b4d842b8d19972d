"""Every entry of the wrapper table, expanded and run in eager PyTorch, against the wrapper itself."""

from __future__ import annotations

import ast
from typing import Any

import pytest
import torch
import torch.nn.functional as F

from ppy_check.expand import ATEN, TORCH, Unsupported, expand
from ppy_check.wrappers import WRAPPERS


class Natives:
    """`aten.NAME` in an expansion: the native function, found where torch binds it."""

    def __getattr__(self, name: str) -> Any:
        for holder in (torch._C._VariableFunctions, torch._C._nn, torch._C._special, torch._C._linalg, torch._C._fft):
            if hasattr(holder, name):
                return getattr(holder, name)
        raise AttributeError(name)


def t(*shape: int) -> torch.Tensor:
    return torch.randn(*shape)


ids = torch.tensor([[0, 2], [1, 0]])
target = torch.tensor([1, 0, 2])
SAMPLES: dict[tuple[str, str], list[tuple[tuple[Any, ...], dict[str, Any]]]] = {
    ("torch.nn.functional", "relu"): [((t(5),), {}), ((t(5),), {"inplace": True})],
    ("torch.nn.functional", "relu6"): [((t(5) * 8,), {}), ((t(5) * 8,), {"inplace": True})],
    ("torch.nn.functional", "silu"): [((t(5),), {}), ((t(5),), {"inplace": True})],
    ("torch.nn.functional", "mish"): [((t(5),), {}), ((t(5),), {"inplace": True})],
    ("torch.nn.functional", "hardswish"): [((t(5),), {})],
    ("torch.nn.functional", "hardsigmoid"): [((t(5),), {})],
    ("torch.nn.functional", "elu"): [((t(5), 0.5), {})],
    ("torch.nn.functional", "celu"): [((t(5),), {"alpha": 2.0})],
    ("torch.nn.functional", "selu"): [((t(5),), {})],
    ("torch.nn.functional", "leaky_relu"): [((t(5), 0.2), {}), ((t(5),), {"inplace": True})],
    ("torch.nn.functional", "hardtanh"): [((t(5), -0.5, 0.5), {})],
    ("torch.nn.functional", "threshold"): [((t(5), 0.1, 2.0), {})],
    ("torch.nn.functional", "glu"): [((t(4, 6),), {}), ((t(4, 6), 0), {})],
    ("torch.nn.functional", "sigmoid"): [((t(5),), {})],
    ("torch.nn.functional", "tanh"): [((t(5),), {})],
    ("torch.nn.functional", "softsign"): [((t(5),), {})],
    ("torch.nn.functional", "tanhshrink"): [((t(5),), {})],
    ("torch.nn.functional", "softmax"): [((t(3, 4), 1), {}), ((t(3, 4),), {"dim": 0, "dtype": torch.float64})],
    ("torch.nn.functional", "log_softmax"): [((t(3, 4), -1), {})],
    ("torch.nn.functional", "softmin"): [((t(3, 4), 1), {})],
    ("torch.nn.functional", "layer_norm"): [((t(2, 4), (4,), t(4), t(4)), {}), ((t(2, 4), (4,)), {"eps": 1e-3})],
    ("torch.nn.functional", "rms_norm"): [((t(2, 4), (4,), t(4)), {}), ((t(2, 4), (4,)), {"eps": 1e-3})],
    ("torch.nn.functional", "group_norm"): [((t(2, 4, 3), 2, t(4), t(4)), {})],
    ("torch.nn.functional", "dropout"): [((t(5),), {"training": False}), ((t(5), 0.3), {})],
    ("torch.nn.functional", "embedding"): [((ids, t(3, 4)), {}), ((ids, t(3, 4)), {"padding_idx": 0})],
    ("torch.nn.functional", "pad"): [((t(2, 3), (1, 2)), {}), ((t(2, 3), (1, 1)), {"value": 3.0})],
    ("torch.nn.functional", "normalize"): [((t(3, 4),), {}), ((t(3, 4),), {"p": 1.0, "dim": 0})],
    ("torch.nn.functional", "max_pool2d"): [((t(1, 2, 6, 6), 2), {}), ((t(1, 2, 6, 6), (3, 3)), {"stride": 1, "padding": 1})],
    ("torch.nn.functional", "avg_pool2d"): [((t(1, 2, 6, 6), 2), {}), ((t(1, 2, 6, 6), 3), {"stride": 2, "padding": 1})],
    ("torch.nn.functional", "adaptive_avg_pool2d"): [((t(1, 2, 6, 6), 2), {}), ((t(1, 2, 6, 6), (3, 1)), {})],
    ("torch.nn.functional", "mse_loss"): [((t(3), t(3)), {}), ((t(3), t(3)), {"reduction": "sum"})],
    ("torch.nn.functional", "l1_loss"): [((t(3), t(3)), {"reduction": "none"})],
    ("torch.nn.functional", "cross_entropy"): [((t(3, 4), target), {}), ((t(3, 4), target), {"label_smoothing": 0.1, "reduction": "sum"})],
    ("torch.nn.functional", "nll_loss"): [((F.log_softmax(t(3, 4), 1), target), {}), ((F.log_softmax(t(3, 4), 1), target), {"ignore_index": 0})],
    ("torch", "split"): [((t(5, 2), 2), {}), ((t(5, 2), [1, 4]), {"dim": 0})],
    ("torch", "einsum"): [(("ij,jk->ik", t(2, 3), t(3, 4)), {})],
    ("torch", "broadcast_tensors"): [((t(3, 1), t(1, 4)), {})],
    ("torch", "atleast_1d"): [((torch.tensor(1.0),), {})],
    ("torch", "atleast_2d"): [((t(3),), {})],
    ("torch", "atleast_3d"): [((t(3),), {})],
    ("torch", "block_diag"): [((t(2, 2), t(1, 3)), {})],
    ("torch", "cartesian_prod"): [((t(2), t(3)), {})],
    ("torch", "cdist"): [((t(3, 2), t(4, 2)), {}), ((t(3, 2), t(4, 2), 1.0), {})],
    ("Tensor", "float"): [((t(2).double(),), {})],
    ("Tensor", "double"): [((t(2),), {})],
    ("Tensor", "half"): [((t(2),), {})],
    ("Tensor", "bfloat16"): [((t(2),), {})],
    ("Tensor", "long"): [((t(2) * 10,), {})],
    ("Tensor", "int"): [((t(2) * 10,), {})],
    ("Tensor", "short"): [((t(2) * 10,), {})],
    ("Tensor", "char"): [((t(2) * 10,), {})],
    ("Tensor", "byte"): [((t(2).abs() * 10,), {})],
    ("Tensor", "bool"): [((t(2),), {})],
    ("Tensor", "unflatten"): [((t(2, 6), 1, (2, 3)), {})],
}

MODULES = {"torch.nn.functional": F, "torch": torch}


def _clone(value: Any) -> Any:
    return value.clone() if isinstance(value, torch.Tensor) else value


def _run_expansion(namespace: str, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    env: dict[str, Any] = {ATEN: Natives(), TORCH: torch}

    def node(name: str, value: Any) -> ast.expr:
        # Literals are written as literals, as a region would: the wrapper folds on them.
        if value is None or isinstance(value, (bool, int, float, str)):
            return ast.Constant(value=value)
        if isinstance(value, tuple) and all(isinstance(v, int) for v in value):
            return ast.Tuple(elts=[ast.Constant(value=v) for v in value], ctx=ast.Load())
        env[name] = value
        return ast.Name(id=name, ctx=ast.Load())

    positional = [node(f"a{i}", value) for i, value in enumerate(args)]
    keywords = [ast.keyword(arg=key, value=node(f"k_{key}", value)) for key, value in kwargs.items()]
    if namespace == "Tensor":
        call = ast.Call(func=ast.Attribute(value=positional[0], attr=name, ctx=ast.Load()), args=positional[1:], keywords=keywords)
        expansion = expand(WRAPPERS[namespace][name], call, receiver=positional[0])
    else:
        call = ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=positional, keywords=keywords)
        expansion = expand(WRAPPERS[namespace][name], call)
    assert not isinstance(expansion, Unsupported), expansion
    for item in ast.walk(expansion):
        item.lineno, item.col_offset, item.end_lineno, item.end_col_offset = 1, 0, 1, 0  # type: ignore[attr-defined]
    code = compile(ast.Expression(expansion), "<expansion>", "eval")
    return eval(code, env)


def _eager(namespace: str, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if namespace == "Tensor":
        return getattr(args[0], name)(*args[1:], **kwargs)
    return getattr(MODULES[namespace], name)(*args, **kwargs)


ENTRIES = [(ns, name) for ns, table in WRAPPERS.items() for name in table]


def test_every_entry_has_samples() -> None:
    assert set(SAMPLES) == set(ENTRIES)


@pytest.mark.parametrize("entry", ENTRIES, ids=lambda e: f"{e[0]}.{e[1]}")
def test_expansion_matches_eager(entry: tuple[str, str]) -> None:
    namespace, name = entry
    for args, kwargs in SAMPLES[entry]:
        torch.manual_seed(0)
        expected_args = tuple(_clone(a) for a in args)
        expected = _eager(namespace, name, expected_args, dict(kwargs))
        torch.manual_seed(0)
        actual_args = tuple(_clone(a) for a in args)
        actual = _run_expansion(namespace, name, actual_args, dict(kwargs))
        torch.testing.assert_close(actual, expected)
        for before, after in zip(expected_args, actual_args):  # in-place forms write the same input
            if isinstance(before, torch.Tensor):
                torch.testing.assert_close(after, before)


def test_unsupported_forms_say_why() -> None:
    call = ast.parse("softmax(x)", mode="eval").body
    assert expand(WRAPPERS["torch.nn.functional"]["softmax"], call) == Unsupported("pass `dim`")
    call = ast.parse("relu(x, inplace=flag)", mode="eval").body
    assert expand(WRAPPERS["torch.nn.functional"]["relu"], call) == Unsupported("`inplace` must be a literal here")
