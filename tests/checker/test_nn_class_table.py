"""The table of torch.nn's module classes resolves without torch: each entry's module ships, and its class is
found in that module's shipped source (tests/torch_only/test_nn_classes.py checks the table against torch)."""

from __future__ import annotations

import ast

from ppy_check import torch_python
from ppy_check.model import types as t
from ppy_check.nn_classes import TORCH_CLASSES, torch_class


def test_linear_resolves_by_either_name_and_its_module_ships() -> None:
    linear = torch_class("torch.nn.Linear")
    assert linear is not None and linear.name == "Linear" and linear.module == "torch.nn.modules.linear"
    assert torch_class("torch.nn.modules.linear.Linear") is linear
    assert linear.field("weight") == t.TENSOR and linear.field("bias") == t.OptionalT(t.TENSOR)
    assert linear.field("training") == t.BOOL and linear.field("no_such_field") is None
    assert torch_python.shipped(linear.module)
    assert torch_class("torch.nn.Linearr") is None and torch_class("torch.nn.modules.conv.Linear") is None


def test_every_entry_s_class_is_in_its_shipped_module() -> None:
    for dotted, entry in TORCH_CLASSES.items():
        assert dotted == f"torch.nn.{entry.name}" and torch_python.shipped(entry.module), dotted
        found = torch_python.nn_class(entry.module, entry.name)
        assert isinstance(found, ast.ClassDef) and found.name == entry.name, dotted
        assert torch_class(f"{entry.module}.{entry.name}") is entry


def test_every_entry_has_training_and_each_field_once() -> None:
    for dotted, entry in TORCH_CLASSES.items():
        names = [name for name, _ in entry.fields]
        assert names[0] == "training" and len(set(names)) == len(names), dotted
        assert not {name for name, _ in entry.submodules} & set(names), dotted


def test_nn_class_finds_bases_and_refuses_what_is_not_shipped() -> None:
    base = torch_python.nn_class("torch.nn.modules.conv", "_ConvNd")
    assert base is not None and any(isinstance(s, ast.FunctionDef) and s.name == "__init__" for s in base.body)
    assert torch_python.nn_class("torch.nn.modules.conv", "_single") is None  # a name, not a class defined there
    assert torch_python.nn_class("torch.nn.modules.module", "Module") is None  # its source does not ship
    assert torch_python.nn_class("torch.nn.modules.linear", "Linear") is torch_python.nn_class(
        "torch.nn.modules.linear", "Linear")
