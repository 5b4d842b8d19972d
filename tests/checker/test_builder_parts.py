"""The builder's parts are wired from one list: what a part declares it reaches is what the wiring hands it."""

from __future__ import annotations

from ppy_check.model.builder import part


def test_every_reference_a_part_declares_is_wired_and_dropped() -> None:
    assert part._PART_NAMES == tuple(part.Part.__annotations__)
