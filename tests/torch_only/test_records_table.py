"""This Python's table of ppy's dataclass methods is current: every record of ppy's modules (torch's included,
so it runs where torch is) is in it as dataclasses writes it now. A record changed without `make records`
fails here, where it would only have made every start slower."""
from __future__ import annotations

import sys

import pytest

from ppy_check import gen_records


def test_this_pythons_table_holds_every_record_as_it_is_now(capsys: pytest.CaptureFixture[str]) -> None:
    if not gen_records.TABLE.exists():
        pytest.fail(f"no {gen_records.TABLE.name} for Python {sys.version_info[0]}.{sys.version_info[1]}: "
                    "run `make records`")
    assert gen_records.main(["--check"]) == 0, capsys.readouterr().err
