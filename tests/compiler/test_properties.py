"""Accepted implies builds implies the same answer: random regions from the region syntax and torch's ops.

`PPY_PROPERTY_CASES` (default 120) regions from `PPY_PROPERTY_SEED` (default 0)
go into one module, built once. For each: if ppy-check accepts it, it must
compile and match its Python body on every sample (values, dtypes, writes,
gradients; an exception must be the same type on both sides); if ppy-check
refuses it, its Python body must fail too on every sample, or the refusal is
a gap. A longer run: `PPY_PROPERTY_CASES=3000 PPY_PROPERTY_SEED=7 pytest
tests/compiler/test_properties.py`. Every failure found becomes a region in
tests/regions/constructs.py.
"""

from __future__ import annotations

import os
from typing import Any

import torch
from tests.support.generated import load_module, write_source
from tests.support.region_generator import RegionGenerator

import ppy
from ppy.verify import compare_call
from ppy_check.engine import check_source

CASES = int(os.environ.get("PPY_PROPERTY_CASES", "120"))
SEED = int(os.environ.get("PPY_PROPERTY_SEED", "0"))


def _samples() -> list[ppy.Call]:
    generator = torch.Generator().manual_seed(SEED)

    def r(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=generator)

    return [
        ppy.Call(r(3, 4), r(3, 4), r(4, 4), 2, 0.75, True, None, (2, 3)),
        ppy.Call(r(3, 4), r(3, 4), r(4, 4), 3, 2, False, r(4), (1,)),
    ]


def _python_fails_everywhere(region: ppy.Region[..., Any], samples: list[ppy.Call]) -> bool:
    for call in samples:
        try:
            region.python(*call.args, **call.kwargs)
        except Exception:  # noqa: BLE001 - any failure of the Python body justifies a refusal
            continue
        return False
    return True


def test_accepted_regions_build_and_match() -> None:
    text = RegionGenerator(SEED).module(CASES)
    path = write_source(f"property_regions_{SEED}_{CASES}", text)
    findings: dict[str, list[str]] = {}
    for diagnostic in check_source(text, str(path)):
        findings.setdefault(diagnostic.region, []).append(diagnostic.concise())
    module = load_module(path, "property_regions")
    samples = _samples()
    problems = []
    for index in range(CASES):
        name = f"region_{index}"
        region = getattr(module, name)
        if name in findings:
            if not _python_fails_everywhere(region, samples):
                problems.append(f"{name}: refused, but its Python body runs:\n  " + "\n  ".join(findings[name]))
            continue
        if not region.build():
            problems.append(f"{name}: accepted but did not compile")
            continue
        for number, call in enumerate(samples):
            outcome = compare_call(region, call)
            for mismatch in outcome.mismatches:
                problems.append(f"{name}, sample {number}: {mismatch.what}: {mismatch.detail}")
    accepted = CASES - len(findings)
    assert accepted >= CASES * 0.8, f"only {accepted} of {CASES} generated regions accepted: {findings}"
    assert not problems, f"{path}\n" + "\n".join(problems)
