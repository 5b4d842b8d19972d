"""The OpInfo sweep (bench/opinfo_sweep.py) on a bounded, seeded subset of torch's operator database.

Each OpInfo of the subset has its first samples written as one-op regions,
checked, built and verified against eager. A sample ppy-check refuses is a
measured gap (the bench counts them), not a failure; one it passes must
compile and match: a compile failure or a wrong answer is a ppy bug. Known
ones are listed in KNOWN_BUGS, strictly expected to fail, so that a fix shows.

The regions are generated under build/opinfo/test/ (a fixed path, so a rerun
finds its builds in the cache).
"""

from __future__ import annotations

import random
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from opinfo_sweep import FOLDER, Generated, NotExpressible, _Writer, float32_ops, op_key, spelling, sweep  # noqa: E402

SEED = 11
OPS = 40
SAMPLES_PER_OP = 3
REGIONS_PER_FILE = 20  # small units: a file whose build fails as a whole is halved until its culprit stands alone
# Failures are these statuses; "refused" (a ppy-check finding) and "not expressible" are measured, not failed.
FAILURES = ("not compiled", "wrong", "raised", "unverified")
# OpInfos of the subset whose samples ppy-check passes but which fail today: ppy bugs, with what goes wrong.
KNOWN_BUGS: dict[str, str] = {}


def _subset() -> list[object]:
    ops = sorted(float32_ops(), key=op_key)
    return sorted(random.Random(SEED).sample(ops, min(OPS, len(ops))), key=op_key)


SUBSET = _subset()


@cache
def _swept() -> Generated:
    return sweep(SUBSET, FOLDER / "test", SAMPLES_PER_OP, REGIONS_PER_FILE)


def _param(op: object) -> object:
    key = op_key(op)
    marks = [pytest.mark.xfail(strict=True, raises=AssertionError, reason=f"ppy bug: {KNOWN_BUGS[key]}")] \
        if key in KNOWN_BUGS else []
    return pytest.param(key, id=key, marks=marks)


@pytest.mark.parametrize("key", [_param(op) for op in SUBSET])
def test_opinfo_samples(key: str) -> None:
    samples = [s for s in _swept().samples if s.op == key]
    assert samples, f"{key}: no sample was generated"
    failed = [f"sample {s.index} ({s.region}): {s.status}: {s.detail}" for s in samples if s.status in FAILURES]
    assert not failed, f"{key}: ppy-check passed these, so they must compile and match:\n" + "\n".join(failed)


def test_subset_is_measured() -> None:
    """The generator writes most samples as regions and ppy takes most of them: a sweep that wrote nothing fails."""
    samples = _swept().samples
    expressible = [s for s in samples if s.status != "not expressible"]
    matched = [s for s in expressible if s.status == "matched"]
    assert len(expressible) >= 0.6 * len(samples), (len(expressible), len(samples))
    assert len(matched) >= 0.5 * len(expressible), (len(matched), len(expressible))


def test_known_bugs_are_in_the_subset() -> None:
    assert set(KNOWN_BUGS) <= {op_key(op) for op in SUBSET}


@pytest.mark.parametrize(("name", "expected"), [
    ("add", ("function", "torch.add")),
    ("nn.functional.conv2d", ("function", "F.conv2d")),
    ("special.erfcx", ("function", "torch.special.erfcx")),
    ("linalg.vector_norm", ("function", "torch.linalg.vector_norm")),
    ("expand", ("method", "expand")),
    ("__rsub__", ("operator", "-")),
    ("__getitem__", ("subscript", "")),
])
def test_spelling(name: str, expected: tuple[str, str]) -> None:
    """Each OpInfo is called by the public name a user writes."""
    (op,) = [op for op in float32_ops() if op_key(op) == name]
    assert spelling(op) == expected


def _first_sample_written(name: str) -> str:
    import torch

    (op,) = [op for op in float32_ops() if op_key(op) == name]
    torch.manual_seed(0)
    return _Writer().call(op, next(iter(op.sample_inputs("cpu", torch.float32))))


@pytest.mark.parametrize(("name", "expected"), [
    ("mT", "t0.mT"),
    ("zero_", "torch.zero_(t0.clone())"),
    ("einsum", "torch.einsum('i->', [t0])"),
    ("nn.functional.embedding", "torch.nn.functional.embedding(t1, t0)"),  # the lambda swaps them back
])
def test_a_lambda_is_written_as_its_body(name: str, expected: str) -> None:
    """An OpInfo whose op is a lambda over public torch calls is the call a user writes: the lambda's body,
    its parameters bound to the sample (a body broken over lines, as op_db writes some, too)."""
    assert _first_sample_written(name) == expected


def test_wrappers_and_private_ops_are_not_expressible() -> None:
    by_key = {op_key(op): op for op in float32_ops()}
    with pytest.raises(NotExpressible, match="private"):
        spelling(by_key["_softmax_backward_data"])
    # Its lambda seeds the generator around the call: what a region would compute is not the sample's answer.
    with pytest.raises(NotExpressible, match="random"):
        _first_sample_written("bernoulli")
    with pytest.raises(NotExpressible, match="random"):
        _first_sample_written("nn.functional.scaled_dot_product_attention")
