"""torch's Python-level functions (inlined from torch's own source) and hand-bound Tensor methods, against eager.

Each sample becomes a region calling the function the way a user would
(tensors as parameters, literals as literals, since torch's tests on literal
arguments fold); all of them build as one module, and each is checked
against its own Python body, which is the eager call.
"""

from __future__ import annotations

from typing import Any

import pytest
import torch
import torch.nn.functional as F
from generated import load_module, write_source

import ppy
from ppy.verify import compare_call
from ppy_check.engine import check_source
from ppy_check.gen_opdata import HAND_BOUND


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
    ("Tensor", "unflatten"): [((t(2, 6), 1, (2, 3)), {})],
}
# Tensor methods torch binds by hand (ppy_check/gen_opdata.py's HAND_BOUND), one sample per signature.
HAND_BOUND_SAMPLES: dict[str, list[tuple[tuple[Any, ...], dict[str, Any]]]] = {
    "to": [((t(2), "cpu"), {}), ((t(2), "cpu", torch.float64), {}), ((t(2), torch.int32), {}), ((t(2), t(3).double()), {}),
           ((t(2),), {"dtype": torch.float16, "copy": True})],
    "copy_": [((t(3), t(3)), {}), ((t(3), t(1).double()), {"non_blocking": False})],
    "type": [((t(2), torch.float64), {})],
    "cpu": [((t(2),), {})],
    **{method: [((t(2) * 10,), {})] for method in ("float", "double", "half", "bfloat16", "long", "int", "short", "char",
                                                 "bool", "cfloat", "cdouble")},
    "byte": [((t(2).abs() * 10,), {})],
}

MODULES = {"torch.nn.functional": "F", "torch": "torch"}


def _literal(value: Any) -> str | None:
    """A sample argument as region source text, when it is a literal a region writes as one."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return repr(value)
    if isinstance(value, torch.dtype):
        return str(value)
    if isinstance(value, (tuple, list)) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return repr(tuple(value))
    return None


def _region(index: int, callee: str, method: bool, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[str, list[Any]]:
    """One sample as a region's source, and the tensors it takes as parameters."""
    params: list[Any] = []
    names: list[str] = []

    def spell(value: Any) -> str:
        literal = _literal(value)
        if literal is not None:
            return literal
        if isinstance(value, (tuple, list)):
            return "(" + "".join(spell(v) + ", " for v in value) + ")"
        assert isinstance(value, torch.Tensor), value
        params.append(value)
        names.append(f"t{len(params) - 1}")
        return names[-1]

    spelled = [spell(a) for a in args] + [f"{key}={spell(value)}" for key, value in kwargs.items()]
    call = f"{spelled[0]}.{callee}({', '.join(spelled[1:])})" if method else f"{callee}({', '.join(spelled)})"
    probe = (getattr(args[0], callee)(*[_clone(a) for a in args[1:]], **kwargs) if method
             else eval(callee, {"torch": torch, "F": F})(*[_clone(a) for a in args], **kwargs))
    returns = "torch.Tensor" if isinstance(probe, torch.Tensor) else "tuple[torch.Tensor, ...]"
    signature = ", ".join(f"{name}: torch.Tensor" for name in names)
    return f"@ppy.opt(1)\ndef sample_{index}({signature}) -> {returns}:\n    return {call}\n", params


def _clone(value: Any) -> Any:
    return value.clone() if isinstance(value, torch.Tensor) else value


def _cases() -> list[tuple[str, str, bool, tuple[Any, ...], dict[str, Any]]]:
    cases = []
    for (namespace, name), samples in SAMPLES.items():
        method = namespace == "Tensor"
        callee = name if method else f"{MODULES[namespace]}.{name}"
        cases += [(f"{namespace}.{name}", callee, method, args, kwargs) for args, kwargs in samples]
    for name, samples in HAND_BOUND_SAMPLES.items():
        cases += [(f"Tensor.{name}", name, True, args, kwargs) for args, kwargs in samples]
    return cases


CASES = _cases()


def test_every_hand_bound_method_has_samples() -> None:
    assert set(HAND_BOUND_SAMPLES) == set(HAND_BOUND)


@pytest.fixture(scope="module")
def compiled() -> list[tuple[str, ppy.Region, list[Any]]]:
    torch.manual_seed(0)
    sources, params = [], []
    for index, (_, callee, method, args, kwargs) in enumerate(CASES):
        source, tensors = _region(index, callee, method, args, kwargs)
        sources.append(source)
        params.append(tensors)
    text = "import ppy\nimport torch\nimport torch.nn.functional as F\n\n\n" + "\n\n".join(sources)
    path = write_source("torch_python_samples", text)
    findings = check_source(text, str(path))
    assert not findings, "\n".join(d.concise() for d in findings)
    module = load_module(path, "torch_python_samples")
    return [(CASES[i][0], getattr(module, f"sample_{i}"), params[i]) for i in range(len(CASES))]


@pytest.mark.parametrize("index", range(len(CASES)), ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_compiled_matches_eager(compiled: list[tuple[str, ppy.Region, list[Any]]], index: int) -> None:
    name, region, params = compiled[index]
    assert region.build(), f"{name} did not compile"
    outcome = compare_call(region, ppy.Call(*params))
    assert not outcome.mismatches, "\n".join(f"{m.what}: {m.detail}" for m in outcome.mismatches)


def test_unsupported_forms_say_why() -> None:
    source = ("import ppy, torch\nimport torch.nn.functional as F\n\n@ppy.opt\ndef f(x: torch.Tensor, v: torch.Tensor) "
              "-> torch.Tensor:\n    return F.pixel_unshuffle(x, 2) + F.gaussian_nll_loss(x, x, v)\n")
    messages = [d.message for d in check_source(source, "f.py")]
    assert any("`F.gaussian_nll_loss` has no ATen lowering (torch's Python code checks `torch.any(var < 0)`, which "
               "reads a tensor's value back into Python)" in m for m in messages), messages
