"""A broad set of regions (tests/regions/ops_regions.py), built once, each checked against its Python body."""

from __future__ import annotations

import pytest

import ppy
import ops_regions
from ppy.verify import compare_call

REGIONS = {name: value for name, value in vars(ops_regions).items() if isinstance(value, ppy.Region)}


@pytest.fixture(scope="module")
def built() -> dict[str, ppy.Region]:
    # Built without the precompiled header, as the first build on a new machine is (it does not wait for the
    # header): a module then sees only the headers it includes itself, so one it lacks is a compile error here.
    with pytest.MonkeyPatch.context() as env:
        env.setenv("PPY_PCH", "0")
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


def test_coverage_is_broad() -> None:
    """Well over a hundred distinct native overloads, from torch.*, F.*, special/linalg/fft and methods."""
    from pathlib import Path

    from ppy_compile.plan import model_all

    path = Path(ops_regions.__file__)
    regions, errors, _, _ = model_all(path.read_text(encoding="utf-8"), str(path))
    assert not errors
    overloads = set().union(*(region.model.natives for region in regions))
    assert len(overloads) >= 150, len(overloads)
    assert {"special_erf", "linalg_vector_norm", "fft_rfft", "scaled_dot_product_attention", "layer_norm"} <= {
        o.split(".")[0] for o in overloads}


def test_no_view_argument_points_into_a_lambdas_locals() -> None:
    """An optional region value passed where an op takes a view (``int[1]?``, ``int[]?``, ``SymInt[]?``, ``str?``,
    ``float[]?``, ``Tensor[]?``): a lambda returning the view (an ArrayRef, a string_view) would leave it pointing
    into storage the lambda made and destroyed before the call (`x.sum(dim)` of an `int | None` read garbage dims).
    Checked for every such parameter type in the op data, with every kind of value a region could pass there."""
    import re

    from ppy_check.model import types as t
    from ppy_check.schema import ListType, OptionalType, opdata
    from ppy_compile.cpp_types import NoCppForm, argument

    data = opdata()
    kinds = {arg.type for key in data.raw["natives"] for arg in data.native(key).args
             if isinstance(arg.type, OptionalType)}
    values: tuple[t.Type, ...] = (t.INT, t.FLOAT, t.STR, t.TENSOR, t.TupleT((t.INT, t.INT)), t.TupleT((t.FLOAT, t.FLOAT)),
                                  t.TupleT((t.TENSOR, t.TENSOR)), t.SeqT(t.INT), t.SeqT(t.FLOAT), t.SeqT(t.TENSOR))
    printed = 0
    for kind in kinds:
        for value in values:
            try:
                code = argument("ppy_v", t.OptionalT(value), kind)
            except (NoCppForm, KeyError, AssertionError):
                continue  # no such argument in a checked region
            printed += 1
            for returned in re.findall(r"\[&\]\(\) -> (.*?) \{", code):
                assert not re.search(r"ArrayRef|string_view|TensorList", returned), (kind, value, code)
    assert printed > 20 and any(isinstance(k.elem, ListType) for k in kinds), printed
