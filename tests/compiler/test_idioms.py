"""The idioms of tests/regions/idioms.py (functools, computed index tuples, shapes' extremes...), built once, each
against its Python body on its samples: values, exceptions and gradients."""

from __future__ import annotations

import pytest

pytest.importorskip("torch")

import idioms  # noqa: E402

import ppy  # noqa: E402
from ppy.verify import compare_call  # noqa: E402

REGIONS = {name: value for name, value in vars(idioms).items() if isinstance(value, ppy.Region)}


@pytest.fixture(scope="module")
def built() -> dict[str, ppy.Region]:
    for region in REGIONS.values():
        region.build()
    return REGIONS


@pytest.mark.parametrize("name", sorted(REGIONS))
def test_region_matches_python(built: dict[str, ppy.Region], name: str) -> None:
    region = built[name]
    assert region.__ppy_region__, f"{name} did not compile"
    calls = region.sample_calls("cpu")
    assert calls, f"{name} has no samples"
    for call in calls:
        outcome = compare_call(region, call)
        assert not outcome.mismatches, "\n".join(f"{m.what}: {m.detail}" for m in outcome.mismatches)
