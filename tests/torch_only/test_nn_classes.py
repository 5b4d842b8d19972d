"""ppy_check/nn_classes.py's table against the installed torch: every field fits what real instances hold, every
`self.<name>` the shipped `forward`s read is in it, and the shipped class source is the installed torch's."""

from __future__ import annotations

import ast
import importlib
import inspect
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

import pytest
import torch
from torch import nn

from ppy_check import nn_classes, torch_python
from ppy_check.gen_opdata import NN_MODULES, PYTHON_SOURCES
from ppy_check.model import types as t
from ppy_check.nn_classes import TORCH_CLASSES, TorchClass

def _ranked(*classes: Any) -> list[tuple[int, Any]]:
    """The classes of ranks 1, 2, 3... (typed Any: their constructors take tuples of their own rank's length)."""
    return list(enumerate(classes, start=1))


# Each class's instances: typical arguments, then every argument that changes what an attribute holds.
INSTANCES: dict[str, list[Callable[[], nn.Module]]] = {
    "Linear": [lambda: nn.Linear(3, 4), lambda: nn.Linear(3, 4, bias=False)],
    "Bilinear": [lambda: nn.Bilinear(2, 3, 4), lambda: nn.Bilinear(2, 3, 4, bias=False)],
    "Identity": [lambda: nn.Identity(), lambda: nn.Identity(54, unused="argument")],
    "LayerNorm": [lambda: nn.LayerNorm(4), lambda: nn.LayerNorm([3, 4], eps=1e-6),
                  lambda: nn.LayerNorm(4, bias=False), lambda: nn.LayerNorm((4,), elementwise_affine=False),
                  lambda: nn.LayerNorm(4, eps=1)],
    "RMSNorm": [lambda: nn.RMSNorm(4), lambda: nn.RMSNorm([3, 4], eps=1e-6),
                lambda: nn.RMSNorm(4, elementwise_affine=False), lambda: nn.RMSNorm(4, eps=1)],
    "LocalResponseNorm": [lambda: nn.LocalResponseNorm(2), lambda: nn.LocalResponseNorm(3, alpha=1, beta=1, k=2)],
    "GroupNorm": [lambda: nn.GroupNorm(2, 4), lambda: nn.GroupNorm(2, 4, affine=False),
                  lambda: nn.GroupNorm(2, 4, bias=False), lambda: nn.GroupNorm(1, 4, eps=1)],
    **{f"BatchNorm{n}d": [
        partial(cls, 4), partial(cls, 4, affine=False), partial(cls, 4, bias=False),
        partial(cls, 4, track_running_stats=False), partial(cls, 4, momentum=None, eps=1), partial(cls, 4, momentum=1)]
       for n, cls in _ranked(nn.BatchNorm1d, nn.BatchNorm2d, nn.BatchNorm3d)},
    "Embedding": [lambda: nn.Embedding(10, 3), lambda: nn.Embedding(10, 3, padding_idx=0),
                  lambda: nn.Embedding(10, 3, padding_idx=-1), lambda: nn.Embedding(10, 3, max_norm=1.0),
                  lambda: nn.Embedding(10, 3, max_norm=1, norm_type=1, scale_grad_by_freq=True, sparse=True)],
    "EmbeddingBag": [lambda: nn.EmbeddingBag(10, 3), lambda: nn.EmbeddingBag(10, 3, mode="sum", padding_idx=2),
                     lambda: nn.EmbeddingBag(10, 3, max_norm=1.0, include_last_offset=True),
                     lambda: nn.EmbeddingBag(10, 3, mode="max", max_norm=2, norm_type=1)],
    **{f"Conv{n}d": [
        partial(cls, 2, 4, 3), partial(cls, 2, 4, 3, stride=2, padding=1, bias=False),
        partial(cls, 2, 4, (3,) * n, padding=tuple(range(n)), dilation=(2,) * n, groups=2),
        partial(cls, 2, 4, 3, padding=1, padding_mode="reflect")]
       for n, cls in _ranked(nn.Conv1d, nn.Conv2d, nn.Conv3d)},
    **{f"ConvTranspose{n}d": [
        partial(cls, 2, 4, 3), partial(cls, 2, 4, 3, stride=2, padding=1, output_padding=1, bias=False),
        partial(cls, 2, 4, (3,) * n, padding=(1,) * n, dilation=(2,) * n, groups=2)]
       for n, cls in _ranked(nn.ConvTranspose1d, nn.ConvTranspose2d, nn.ConvTranspose3d)},
    **{name: [partial(getattr(nn, name)), partial(getattr(nn, name), 0.2, inplace=True), partial(getattr(nn, name), p=0)]
       for name in ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout")},
    "Threshold": [lambda: nn.Threshold(0.1, 20.0), lambda: nn.Threshold(0, 1, inplace=True)],
    "ReLU": [lambda: nn.ReLU(), lambda: nn.ReLU(inplace=True)],
    "RReLU": [lambda: nn.RReLU(), lambda: nn.RReLU(0, 1, inplace=True)],
    "Hardtanh": [lambda: nn.Hardtanh(), lambda: nn.Hardtanh(-2, 2, inplace=True)],
    "ReLU6": [lambda: nn.ReLU6(), lambda: nn.ReLU6(inplace=True)],
    "Sigmoid": [lambda: nn.Sigmoid()],
    "Hardsigmoid": [lambda: nn.Hardsigmoid(), lambda: nn.Hardsigmoid(inplace=True)],
    "Tanh": [lambda: nn.Tanh()],
    "SiLU": [lambda: nn.SiLU(), lambda: nn.SiLU(inplace=True)],
    "Mish": [lambda: nn.Mish(), lambda: nn.Mish(inplace=True)],
    "Hardswish": [lambda: nn.Hardswish(), lambda: nn.Hardswish(inplace=True)],
    "ELU": [lambda: nn.ELU(), lambda: nn.ELU(alpha=2, inplace=True)],
    "CELU": [lambda: nn.CELU(), lambda: nn.CELU(alpha=2, inplace=True)],
    "SELU": [lambda: nn.SELU(), lambda: nn.SELU(inplace=True)],
    "GLU": [lambda: nn.GLU(), lambda: nn.GLU(dim=1)],
    "GELU": [lambda: nn.GELU(), lambda: nn.GELU(approximate="tanh")],
    "Hardshrink": [lambda: nn.Hardshrink(), lambda: nn.Hardshrink(1)],
    "LeakyReLU": [lambda: nn.LeakyReLU(), lambda: nn.LeakyReLU(0.2, inplace=True), lambda: nn.LeakyReLU(0)],
    "LogSigmoid": [lambda: nn.LogSigmoid()],
    "Softplus": [lambda: nn.Softplus(), lambda: nn.Softplus(beta=2, threshold=10)],
    "Softshrink": [lambda: nn.Softshrink(), lambda: nn.Softshrink(1)],
    "PReLU": [lambda: nn.PReLU(), lambda: nn.PReLU(4, init=0.1)],
    "Softsign": [lambda: nn.Softsign()],
    "Tanhshrink": [lambda: nn.Tanhshrink()],
    "Softmin": [lambda: nn.Softmin(), lambda: nn.Softmin(dim=1)],
    "Softmax": [lambda: nn.Softmax(), lambda: nn.Softmax(dim=-1)],
    "Softmax2d": [lambda: nn.Softmax2d()],
    "LogSoftmax": [lambda: nn.LogSoftmax(), lambda: nn.LogSoftmax(dim=1)],
    "Flatten": [lambda: nn.Flatten(), lambda: nn.Flatten(0, 2)],
    "Unflatten": [lambda: nn.Unflatten(1, (2, 5)), lambda: nn.Unflatten(-1, (2, 3, 4))],
    "PixelShuffle": [lambda: nn.PixelShuffle(2)],
    "PixelUnshuffle": [lambda: nn.PixelUnshuffle(3)],
    "Sequential": [lambda: nn.Sequential(), lambda: nn.Sequential(nn.Linear(2, 3), nn.ReLU())],
    "ModuleList": [lambda: nn.ModuleList(), lambda: nn.ModuleList([nn.Linear(2, 3)])],
    "ModuleDict": [lambda: nn.ModuleDict(), lambda: nn.ModuleDict({"fc": nn.Linear(2, 3)})],
}


def fits(value: Any, kind: t.Type) -> bool:
    """Whether a run-time value is one the static type describes (exact Python types: a bool is no int)."""
    if isinstance(kind, t.TensorT):
        return isinstance(value, torch.Tensor)
    if isinstance(kind, t.OptionalT):
        return value is None or fits(value, kind.inner)
    if isinstance(kind, t.NumberT):
        return type(value) in (int, float)
    exact = {t.IntT: int, t.FloatT: float, t.BoolT: bool, t.StrT: str}
    if type(kind) in exact:
        return type(value) is exact[type(kind)]
    if isinstance(kind, t.TupleT):
        return (type(value) is tuple and len(value) == len(kind.items)
                and all(fits(item, item_kind) for item, item_kind in zip(value, kind.items)))
    if isinstance(kind, t.SeqT):
        return type(value) is tuple and all(fits(item, kind.item) for item in value)
    raise AssertionError(f"the table holds no {kind}")


def misfits(module: nn.Module, entry: TorchClass) -> list[str]:
    missing = object()
    return [f"{name}: {getattr(module, name, missing)!r} is not {kind}" for name, kind in entry.fields
            if not fits(getattr(module, name, missing), kind)]


def test_fits_tells_the_kinds_apart() -> None:
    assert fits(1, t.INT) and not fits(True, t.INT) and not fits(1.0, t.INT) and fits(1.0, t.FLOAT)
    assert not fits(1, t.FLOAT) and fits(1, t.NUMBER) and fits(1.0, t.NUMBER) and not fits(True, t.NUMBER)
    assert fits(None, t.OptionalT(t.TENSOR)) and not fits(None, t.TENSOR) and fits(torch.ones(1), t.TENSOR)
    assert fits((1, 2), t.TupleT((t.INT, t.INT))) and not fits((1,), t.TupleT((t.INT, t.INT)))
    assert not fits([1, 2], t.TupleT((t.INT, t.INT))) and fits((), t.SeqT(t.INT)) and not fits([1], t.SeqT(t.INT))


def test_every_entry_has_instances_and_every_instance_an_entry() -> None:
    assert {f"torch.nn.{name}" for name in INSTANCES} == set(TORCH_CLASSES)


@pytest.mark.parametrize("name", sorted(INSTANCES))
@pytest.mark.opdata_torch  # the instances are built with that release's arguments (`bias=` of the norms)
def test_fields_fit_real_instances(name: str) -> None:
    entry = TORCH_CLASSES[f"torch.nn.{name}"]
    for make in INSTANCES[name]:
        module = make()
        assert type(module) is getattr(nn, name)
        assert not misfits(module, entry), (module, misfits(module, entry))
        assert not module.eval().training and not misfits(module, entry)


@pytest.mark.opdata_torch  # as above
def test_some_variant_reaches_each_optional_field_s_none_and_each_number_s_int() -> None:
    """The variants are the ones that change kinds: an Optional field is None in one of them, and a NUMBER
    field holds an int in one of them where the constructor stores what it is given."""
    unreached = []
    for name, makers in INSTANCES.items():
        modules = [make() for make in makers]
        for field, kind in TORCH_CLASSES[f"torch.nn.{name}"].fields:
            if isinstance(kind, t.OptionalT) and not any(getattr(m, field) is None for m in modules):
                unreached.append(f"{name}.{field} is never None")
            if t.strip_optional(kind) == t.NUMBER and not any(type(getattr(m, field)) is int for m in modules):
                unreached.append(f"{name}.{field} never holds an int")
    assert not unreached, unreached


@pytest.mark.parametrize("cls", [nn.Conv1d, nn.Conv2d, nn.Conv3d])
@pytest.mark.parametrize("padding", ["same", "valid"])
def test_a_padding_string_is_the_documented_mismatch(cls: type[nn.Module], padding: str) -> None:
    """nn_classes' docstring: a str padding stays a str, and the reversed padding is then a list."""
    entry = nn_classes.torch_class(f"torch.nn.{cls.__name__}")
    assert entry is not None
    module = cls(2, 4, 3, padding=padding)
    assert misfits(module, entry) == [
        f"padding: {padding!r} is not {entry.field('padding')}",
        f"_reversed_padding_repeated_twice: {module._reversed_padding_repeated_twice!r} is not "
        f"{entry.field('_reversed_padding_repeated_twice')}"]
    assert isinstance(module._reversed_padding_repeated_twice, list)
    assert all(type(item) is int for item in module._reversed_padding_repeated_twice)
    assert "padding=\"same\" | \"valid\"" in (nn_classes.__doc__ or "")


def test_an_unflattened_size_list_is_the_documented_mismatch() -> None:
    entry = TORCH_CLASSES["torch.nn.Unflatten"]
    assert misfits(nn.Unflatten(1, [2, 5]), entry) == ["unflattened_size: [2, 5] is not tuple[int, ...]"]
    assert "Unflatten(dim, [2, 5])" in (nn_classes.__doc__ or "")


def _chain(entry: TorchClass) -> list[ast.ClassDef]:
    """The class and its torch.nn bases whose source ships, in method resolution order (single inheritance)."""
    found = torch_python.nn_class(entry.module, entry.name)
    assert found is not None, f"{entry.module} ships no class {entry.name}"
    chain = [found]
    while chain[-1].bases:
        assert len(chain[-1].bases) == 1 and isinstance(chain[-1].bases[0], ast.Name), ast.dump(chain[-1])
        base = torch_python.nn_class(entry.module, chain[-1].bases[0].id)
        if base is None:  # Module, whose source does not ship
            assert chain[-1].bases[0].id == "Module", chain[-1].bases[0].id
            break
        chain.append(base)
    return chain


def _methods(entry: TorchClass) -> dict[str, tuple[ast.ClassDef, ast.FunctionDef]]:
    methods: dict[str, tuple[ast.ClassDef, ast.FunctionDef]] = {}
    for cls in _chain(entry):
        for statement in cls.body:
            if isinstance(statement, ast.FunctionDef):
                methods.setdefault(statement.name, (cls, statement))
    return methods


def _followed(entry: TorchClass) -> Iterator[tuple[str, ast.ClassDef, ast.FunctionDef, set[str]]]:
    """``forward`` and every method it reaches through ``self``: name, defining class, definition, the names it
    reads through ``self``."""
    methods, seen, queue = _methods(entry), set(), ["forward"]
    while queue:
        name = queue.pop()
        if name in seen or name not in methods:
            continue
        seen.add(name)
        cls, definition = methods[name]
        reads = {node.attr for node in ast.walk(definition) if isinstance(node, ast.Attribute)
                 and isinstance(node.value, ast.Name) and node.value.id == "self"}
        queue += sorted(reads & set(methods))
        yield name, cls, definition, reads


@pytest.mark.parametrize("dotted", sorted(TORCH_CLASSES))
def test_every_self_read_of_the_shipped_forward_is_in_the_table(dotted: str) -> None:
    entry = TORCH_CLASSES[dotted]
    methods = _methods(entry)
    known = {name for name, _ in entry.fields} | {name for name, _ in entry.submodules} | set(methods)
    followed = list(_followed(entry))
    if entry.name in ("ModuleList", "ModuleDict"):  # no forward: Module's raises
        assert not followed and getattr(nn, entry.name).forward is nn.Module.forward
        return
    assert followed and followed[0][0] == "forward"
    unknown = {f"{name} reads self.{read}" for name, _, _, reads in followed for read in reads - known}
    assert not unknown, sorted(unknown)


def test_the_walk_follows_self_methods_through_the_bases() -> None:
    conv = {name: cls.name for name, cls, _, _ in _followed(TORCH_CLASSES["torch.nn.Conv2d"])}
    assert conv == {"forward": "Conv2d", "_conv_forward": "Conv2d"}
    batch = {name: cls.name for name, cls, _, _ in _followed(TORCH_CLASSES["torch.nn.BatchNorm2d"])}
    assert batch == {"forward": "_BatchNorm", "_check_input_dim": "BatchNorm2d"}
    transposed = {name: cls.name for name, cls, _, _ in _followed(TORCH_CLASSES["torch.nn.ConvTranspose1d"])}
    assert transposed == {"forward": "ConvTranspose1d", "_output_padding": "_ConvTransposeNd"}


@pytest.mark.parametrize("dotted", sorted(TORCH_CLASSES))
@pytest.mark.opdata_torch  # the shipped sources are that release's
def test_the_shipped_methods_are_the_installed_torch_s(dotted: str) -> None:
    entry = TORCH_CLASSES[dotted]
    module = importlib.import_module(entry.module)
    path = PYTHON_SOURCES / f"{entry.module}.py.txt"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    for name, cls, definition, _ in _followed(entry):
        start = min([definition.lineno, *(d.lineno for d in definition.decorator_list)])
        assert definition.end_lineno is not None
        shipped = "".join(lines[start - 1:definition.end_lineno])
        assert shipped == inspect.getsource(vars(getattr(module, cls.name))[name]), f"{cls.name}.{name}"


@pytest.mark.parametrize("dotted_module", NN_MODULES)
@pytest.mark.opdata_torch  # the shipped sources are that release's
def test_the_shipped_modules_are_the_installed_torch_s(dotted_module: str) -> None:
    shipped = (PYTHON_SOURCES / f"{dotted_module}.py.txt").read_text(encoding="utf-8")
    assert shipped == inspect.getsource(importlib.import_module(dotted_module)), "run `make opdata`"


def test_every_module_class_of_the_shipped_modules_is_in_the_table_or_skipped_with_its_reason() -> None:
    unlisted = []
    for dotted_module in NN_MODULES:
        for name, value in vars(importlib.import_module(dotted_module)).items():
            if (isinstance(value, type) and issubclass(value, nn.Module) and value.__module__ == dotted_module
                    and not name.startswith("_") and f"torch.nn.{name}" not in TORCH_CLASSES
                    and f"``{name}``" not in (nn_classes.__doc__ or "")):
                unlisted.append(f"{dotted_module}.{name}")
    assert not unlisted, unlisted
    for dotted, entry in TORCH_CLASSES.items():
        assert getattr(nn, entry.name).__module__ == entry.module, dotted
