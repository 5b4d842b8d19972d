"""What the first-write corpus tests (tests/corpus and tests/corpus_heldout) hold each function to: its findings
well formed; refused by a code of the by-design kind where it loops or branches on values by design; otherwise
refused (an expected failure where a list names it) or built and matching its Python body. The module corpus's
test (tests/module_corpus) takes its cases' expected failures from here too."""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

import pytest


class Refused(Exception):
    """ppy-check refuses the function, and every finding is well formed."""


def param(file: str, name: str, refused: Mapping[str, str], bugs: Mapping[str, str], refused_as: str,
          refusal: type[BaseException] = Refused, bug: type[BaseException] = AssertionError) -> Any:
    """The test case of one function (or class) of a corpus file: a strict expected failure raising ``refusal``
    where ``refused`` (why it is refused, shown as ``refused_as``) names it, or raising ``bug`` where ``bugs`` (what
    goes wrong) does."""
    key = f"{file}.{name}"
    marks = []
    if key in refused:
        marks.append(pytest.mark.xfail(strict=True, raises=refusal, reason=f"{refused_as}: {refused[key]}"))
    elif key in bugs:
        marks.append(pytest.mark.xfail(strict=True, raises=bug, reason=f"ppy bug: {bugs[key]}"))
    return pytest.param(file, name, id=key, marks=marks)


def hold(entry: Any, by_design_codes: Collection[str], all_codes: Collection[str]) -> None:
    """Raise Refused, or fail, unless the judged ``entry`` (bench/first_write.py's Entry) is as it must be."""
    verdict = entry.verdict
    for finding in verdict.findings:
        assert finding.code in all_codes, finding
        assert finding.region == entry.name and f"`{entry.name}`" in finding.message, finding
    if entry.by_design:
        codes = {f.code for f in verdict.findings}
        assert codes & set(by_design_codes), (
            f"{entry.key} loops, branches or asserts on values by design, but ppy-check gave "
            f"{sorted(codes) or 'no finding'}")
        return
    if verdict.status == "refused":
        raise Refused("; ".join(f"{f.code} {f.message}" for f in verdict.findings))
    assert verdict.status == "matched", f"{entry.key} passes ppy-check but is {verdict.status}: {verdict.detail}"
