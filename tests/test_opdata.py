"""The shipped operator data matches the installed torch, and says what the rules rely on."""

from __future__ import annotations

from ppy_check import gen_opdata, ops


def test_shipped_file_matches_installed_torch() -> None:
    assert gen_opdata.render(gen_opdata.build()) == ops.DATA_PATH.read_text(encoding="utf-8"), (
        "ppy_check/opdata.json is stale: run `python -m ppy_check.gen_opdata`"
    )


def test_facts_come_from_schemas() -> None:
    assert ops.method("add_").writes == (("self", -1),)
    assert ops.method("add").writes == ()
    assert ops.method("view").views == (("self", -1),)
    assert ops.function("torch", "narrow").views == (("self", 0),)
    assert ops.function("torch.nn.functional", "linear").native == "linear"
    assert ops.function("torch.special", "erf").native == "special_erf"
    assert ops.method("split").returns == "T"
    assert ops.function("torch", "print") is None
    assert ops.method("item") is None
