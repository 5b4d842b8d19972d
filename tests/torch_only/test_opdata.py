"""The shipped operator data matches the installed torch, and says what the model relies on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ppy_check import gen_opdata
from ppy_check.model import types as t
from ppy_check.schema import DATA_PATH, Base, BaseType, ListType, opdata




@pytest.mark.opdata_torch
def test_shipped_schemas_match_installed_torch() -> None:
    shipped = DATA_PATH.read_text(encoding="utf-8")
    regenerated = gen_opdata.render(gen_opdata.build(probe=False, previous=json.loads(shipped)))
    assert regenerated == shipped, "ppy_check/opdata.json is stale: run `python -m ppy_check.gen_opdata`"


@pytest.mark.opdata_torch  # opdata() is the installed torch's data, the whole parse the shipped file
def test_entries_read_one_by_one_equal_the_whole_parse() -> None:
    # The checker reads op data entry by entry (ppy_check/opdata_lines.py); the whole parse is the reference.
    from ppy_check.schema import OpData

    by_entry, whole = opdata(), OpData(json.loads(DATA_PATH.read_text(encoding="utf-8")))
    raw = whole.raw
    assert [by_entry.native(key) for key in raw["natives"]] == [whole.native(key) for key in raw["natives"]]
    assert [by_entry.function(name) for name in raw["functions"]] == [whole.function(name) for name in raw["functions"]]
    assert [by_entry.method(name) for name in raw["methods"]] == [whole.method(name) for name in raw["methods"]]
    assert (by_entry.bindings, by_entry.properties, by_entry.torch_version) == (
        whole.bindings, whole.properties, whole.torch_version)
    assert not by_entry.has_function("not_an_op") and by_entry.method("not_an_op") == ()
    assert by_entry.has_method("add") and by_entry.has_function("add")
    with pytest.raises(KeyError):
        by_entry.native("not_an_op.Tensor")


def test_only_renders_layout_is_read_entry_by_entry() -> None:
    from ppy_check.opdata_lines import OpDataLines

    shipped = DATA_PATH.read_text(encoding="utf-8")
    assert OpDataLines.laid_out(shipped)
    assert not OpDataLines.laid_out(json.dumps(json.loads(shipped), indent=2))
    assert not OpDataLines.laid_out(json.dumps(json.loads(shipped)))


def test_writes_and_views_come_from_schemas() -> None:
    data = opdata()
    add_ = data.method("add_")[0].native
    assert add_.arg["self"].is_write and not data.method("add")[0].native.writes
    view = data.method("view")[0].native
    assert view.returns[0].alias is not None and view.returns[0].alias.sets == view.arg["self"].alias.sets
    assert data.function("narrow")[0].native.returns[0].alias is not None


def test_python_names_reach_their_natives() -> None:
    data = opdata()
    assert data.binding("torch.nn.functional", "linear") == "linear"
    assert data.binding("torch.nn.functional", "logsigmoid") == "log_sigmoid"
    assert data.binding("torch.special", "erf") == "special_erf"
    assert data.binding("torch", "print") is None
    assert not data.has_method("item") and not data.has_method("tolist")
    assert data.function("split")[1].native.returns[0].type == ListType(BaseType(Base.Tensor), None)


def test_overloads_keep_torchs_order_and_python_spelling() -> None:
    data = opdata()
    add = data.function("add")[0]
    assert [p.name for p in add.params] == ["input", "other", "alpha"] and add.params[2].kwonly
    assert add.numbers_as_tensors and add.out is not None and add.outputs == ("out",)
    sums = data.function("sum")
    assert [o.native.key for o in sums] == ["sum", "sum.dim_IntList"]


def test_properties_and_hand_bound_methods() -> None:
    data = opdata()
    assert {"mT", "T", "shape", "data", "grad"} <= data.properties
    to = data.method("to")
    assert [o.native.key for o in to] == ["to.dtype_layout", "to.dtype", "to.other"]
    assert to[0].params[0].name == "device" and not to[0].params[0].kwonly
    assert to[2].params[0].name == "tensor" and to[2].params[0].schema_name == "other"
    assert data.method("float")[0].fixed[0][0] == "dtype"


def test_probed_effects_ship() -> None:
    data = opdata()
    batch_norm = data.function("batch_norm")[0].native.effects
    assert {(w.arg, w.when) for w in batch_norm.writes} == {("running_mean", ("training", True)),
                                                            ("running_var", ("training", True))}
    assert (0, "self") in data.method("type_as")[0].native.effects.aliases
    assert (0, "self") in data.method("unsafe_chunk")[0].native.effects.aliases
    assert (0, "tensors") in data.function("einsum")[0].native.effects.aliases


def test_the_probe_observes_what_schemas_leave_out() -> None:
    """The probe itself, on a few ops: writes by value (batch_norm does not bump version counters)."""
    from ppy_check.probe import probe_effects

    effects = probe_effects(opdata().raw, only=frozenset({"nn.functional.batch_norm", "batch_norm", "type_as", "atleast_1d", "einsum"}))
    assert effects["batch_norm"]["writes"] == [["running_mean", ["training", True]], ["running_var", ["training", True]]]
    assert effects["type_as"] == {"aliases": [[0, "self"]]}
    assert effects["atleast_1d"] == {"aliases": [[0, "self"]]}
    # From the probe's own samples: OpInfo's einsum equations all compute something new.
    assert effects["einsum"] == {"aliases": [[0, "tensors"]]}


def test_model_types_of_results() -> None:
    from ppy_check.model.builder.facts import _schema_result

    assert _schema_result(BaseType(Base.Scalar)) == t.NUMBER
    assert _schema_result(ListType(BaseType(Base.Tensor), None)) == t.SeqT(t.TENSOR)


def test_another_torch_is_named_with_what_differs(monkeypatch: pytest.MonkeyPatch) -> None:
    from ppy_compile import drift as module
    from ppy_check.schema import OpData

    raw = dict(opdata().raw)
    raw["torch_version"] = "2.12.0"
    raw["natives"] = {**raw["natives"], "gone_in_this_torch.Tensor": raw["natives"]["add.Tensor"]}
    monkeypatch.setattr("ppy_check.schema.opdata", lambda: OpData(raw))
    module.drift.cache_clear()
    try:
        found = module.drift()
        # Under another torch than the op data's, its own missing overloads are listed too.
        assert not found.same and "gone_in_this_torch.Tensor" in found.missing
        assert f"op data comes from torch 2.12.0: {len(found.missing)} operator overloads it knows are missing here" \
            in found.summary()
        with pytest.warns(module.TorchVersionWarning, match="op data comes from torch 2.12.0"):
            module.warn_once.cache_clear()
            module.warn_once()
    finally:
        module.drift.cache_clear()
        module.warn_once.cache_clear()


@pytest.mark.opdata_torch
def test_the_shipped_python_sources_are_the_op_data_torchs() -> None:
    from ppy_compile.drift import differing_sources

    assert differing_sources() == (), "ppy_check/torch_python/ is stale: run `python -m ppy_check.gen_opdata`"


def test_python_modules_that_differ_are_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from ppy_check import torch_python
    from ppy_compile import drift as module

    edited = tmp_path / "functional.py"
    edited.write_text((torch_python.SOURCES / "torch.nn.functional.py.txt").read_text(encoding="utf-8") + "# edited\n",
                      encoding="utf-8")
    real = torch_python.installed_module_file
    monkeypatch.setattr(torch_python, "installed_module_file",
                        lambda dotted: edited if dotted == "torch.nn.functional" else real(dotted))
    found = module.Drift("2.12.0", "2.13.0", (), (), module.differing_sources())
    assert found.sources == ("torch.nn.functional",)
    assert "1 of torch's Python modules regions inline differ here from torch 2.12.0's (torch.nn.functional): " \
           "compiled calls into them behave as in torch 2.12.0 (install it for exact agreement)" in found.summary()
    # The model reads the shipped copy all the same: the checker, without torch, says what the compiler builds.
    assert torch_python.module("torch.nn.functional") is not None
    assert torch_python.module("torch.nn.functional").lines[-1] != "# edited"
