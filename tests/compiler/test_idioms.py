"""The idioms of tests/regions/idioms.py (functools, computed index tuples, shapes' extremes...), built once, each
against its Python body on its samples: values, exceptions and gradients."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")

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
        assert not outcome.declined, f"{name}: the compiled code declined the sample, so nothing was compared"


# Calls whose Python body raises (a sample must run, so these are not samples): the build raises alike, with Python's
# message, from the check it compiled.
RAISING = [
    ("shape_extremes", ppy.Call(torch.tensor(1.0)), ValueError),
    ("contracted", ppy.Call(torch.ones(2, 3), torch.ones(3, 5), -1), RuntimeError),
    ("contracted", ppy.Call(torch.ones(2, 3), torch.ones(3), 2), RuntimeError),
    ("resized_by_mode", ppy.Call(torch.ones(1, 2, 4, 4), (6, 7), "nearest"), ValueError),
    ("resized_by_mode", ppy.Call(torch.ones(1, 2, 4), (6, 7), "bilinear"), ValueError),
    ("resized_by_mode", ppy.Call(torch.ones(1, 2, 4, 4), (6, 7), "linear"), NotImplementedError),
]


@pytest.mark.parametrize(("name", "call", "error"), RAISING, ids=[f"{n}-{i}" for i, (n, _, _) in enumerate(RAISING)])
def test_region_raises_as_python(built: dict[str, ppy.Region], name: str, call: ppy.Call,
                                 error: type[Exception]) -> None:
    outcome = compare_call(built[name], call)
    assert not outcome.mismatches, "\n".join(f"{m.what}: {m.detail}" for m in outcome.mismatches)
    assert isinstance(outcome.raised, error), outcome.raised
    with pytest.raises(error) as compiled:
        built[name](*call.args, **call.kwargs)
    # Python's message, then where in the region the compiled check stands.
    assert str(compiled.value).startswith(str(outcome.raised)), (str(compiled.value), str(outcome.raised))


def test_a_torch_size_parameter_takes_torch_size_alone(built: dict[str, ppy.Region]) -> None:
    """`x_shape: torch.Size`: the compiled code answers torch.Size's values (its slices, and itself, torch.Size); a
    plain tuple, or a tuple subclass of the same name, runs the Python body, whose answers are then tuples."""
    region = built["sized"]
    a, index = torch.randn(20), torch.tensor([3, 0, 19])
    impostor = type("torch.Size", (tuple,), {})
    for shape, compiled in ((torch.Size((3, 4, 5, 5)), True), ((3, 4, 5, 5), False), (impostor((3, 4, 5, 5)), False)):
        with ppy.profile(print_on_exit=False) as profile:
            out, tail, whole = region(a, index, shape)
        expected = region.python(a, index, shape)
        assert torch.equal(out, expected[0])
        assert (type(tail), type(whole)) == (type(expected[1]), type(expected[2])), shape
        assert [(r.calls, r.compiled) for r in profile.rows()] == [(1, int(compiled))], shape
