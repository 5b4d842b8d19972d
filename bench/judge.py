"""Check, build and verify one file of regions, region by region: what the first-write bench, the OpInfo
sweep and their tests share.

Each region gets one verdict:

- ``refused``: ppy-check reports findings for it (they are kept);
- ``not compiled``: ppy-check passed it but it did not build (it runs as Python): a ppy bug;
- ``raised``: its Python body raised on a call, or verifying the call did;
- ``wrong``: the compiled region and its Python body disagree (values, dtypes, writes or gradients): a ppy bug;
- ``unverified``: it compiled, but there was no call to check it on;
- ``matched``: it compiled and every call matched.
"""

from __future__ import annotations

import platform
import re
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ppy_check.diagnostic import Diagnostic

STATUSES = ("matched", "refused", "not compiled", "raised", "wrong", "unverified")


@dataclass
class Verdict:
    name: str
    status: str
    findings: list[Diagnostic] = field(default_factory=list)
    detail: str = ""  # the first failure's
    calls: int = 0  # calls checked
    failures: dict[int, tuple[str, str]] = field(default_factory=dict)  # call index: (status, detail)


def check_file(path: Path) -> tuple[list[str], dict[str, list[Diagnostic]]]:
    """The file's region names, in source order, and ppy-check's findings for each (none: an empty list)."""
    from ppy_check.engine import check_source
    from ppy_check.module import ModuleRegions

    text = path.read_text(encoding="utf-8")
    names = [region.name for region in ModuleRegions.load(str(path), text).regions]
    findings: dict[str, list[Diagnostic]] = {name: [] for name in names}
    for diagnostic in check_source(text, str(path)):
        findings.setdefault(diagnostic.region, []).append(diagnostic)
    return names, findings


def judge_file(path: Path, calls: Callable[[Any], list[Any]] | None = None) -> dict[str, Verdict]:
    """Every region of ``path`` (whose module must be imported already): checked, built, verified on ``calls(region)``.

    ``calls`` defaults to the region's own samples on the CPU (from a fixed
    seed). Building one region builds the whole file, once.
    """
    from ppy.decorators import live_regions

    names, findings = check_file(path)
    live = {region.site.qualname: region for region in live_regions(str(path))}
    verdicts = {}
    for name in names:
        if findings[name]:
            verdicts[name] = Verdict(name, "refused", findings[name])
        elif name not in live:
            verdicts[name] = Verdict(name, "raised", detail="the region object does not exist: is its module imported?")
        else:
            verdicts[name] = _run(live[name], calls(live[name]) if calls is not None else _samples(live[name]))
    return verdicts


def _samples(region: Any) -> list[Any]:
    """The region's own samples on the CPU, drawn from a fixed seed so that a rerun checks the same numbers."""
    import torch

    torch.manual_seed(0)
    calls: list[Any] = region.sample_calls("cpu")  # the region is a ppy region, typed Any here
    return calls


def _run(region: Any, calls: list[Any]) -> Verdict:
    from ppy.errors import RegionError
    from ppy.runtime import RegionFallbackWarning

    name = region.site.qualname
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", RegionFallbackWarning)
        try:
            compiled = region.build()
        except RegionError as error:
            return Verdict(name, "not compiled", detail=f"ppy-check passed it, but building refused it: {error}")
    if not compiled:
        reasons = [str(w.message) for w in caught if issubclass(w.category, RegionFallbackWarning)]
        return Verdict(name, "not compiled", detail=reasons[0] if reasons else "it runs as Python (no reason given)")
    failures = {}
    for index, call in enumerate(calls):
        failure = _check_call(region, call)
        if failure is not None:
            failures[index] = failure
    if not failures:
        return Verdict(name, "matched" if calls else "unverified", calls=len(calls))
    index, (status, detail) = next(iter(failures.items()))
    return Verdict(name, status, detail=f"call {index}: {detail}", calls=len(calls), failures=failures)


def _check_call(region: Any, call: Any) -> tuple[str, str] | None:
    """None when the call matches; else ("raised" or "wrong", what happened)."""
    from ppy.verify import compare_call

    problem = _python_error(region, call)
    if problem is not None:
        return "raised", f"the Python body raised {problem}"
    try:
        outcome = compare_call(region, call)
    except Exception as error:  # the verifier itself failed on this call: report it, keep judging the rest
        return "raised", f"verifying raised {type(error).__name__}: {error}"
    if outcome.mismatches:
        first = outcome.mismatches[0]
        return "wrong", f"{first.what} {first.verb}: {first.detail}"
    return None


def _python_error(region: Any, call: Any) -> str | None:
    """What the Python body raises on (copies of) the call's arguments, or None.

    ``compare_call`` counts a call on which both sides raise the same error as
    agreeing; here a body that raises is its own verdict.
    """
    try:
        region.python(*copy(call.args), **{k: copy(v) for k, v in call.kwargs.items()})
    except Exception as error:  # reported, not raised: the verdict says what it was
        return f"{type(error).__name__}: {error}".splitlines()[0]
    return None


def copy(value: Any) -> Any:
    """``value`` with every tensor in it (in tuples and lists too) replaced by a detached clone."""
    import torch

    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    if isinstance(value, (tuple, list)):
        return type(value)(copy(v) for v in value)
    return value


def pattern(message: str) -> str:
    """A finding or failure with its particulars taken out, so that one cause counts once across regions.

    The region's name goes (and the fallback warning's preamble), each
    backquoted name becomes `…`, each file name <file>, each number N, and
    only the first clause (up to a semicolon) stays.
    """
    text = re.sub(r"^ppy: region `[^`]*` runs as Python: ", "", message.strip().splitlines()[0])
    text = re.sub(r"^region `[^`]*`:? ", "", text)
    text = re.sub(r"[\w./-]+\.py\b", "<file>", text)
    text = text.split("; ", 1)[0]
    text = re.sub(r"`[^`]*`", "`…`", text)
    text += ")" * (text.count("(") - text.count(")"))  # a clause cut inside parentheses
    return re.sub(r"\d+", "N", text)


def example(message: str) -> str:
    """The name a finding is about: its first backquoted name after the region's."""
    names = re.findall(r"`([^`]*)`", re.sub(r"^region `[^`]*`:? ", "", message))
    return names[0] if names else ""


def machine() -> str:
    """Processor, cores, Python and torch: what a reader needs to compare a rerun."""
    import torch
    from publish import cpu

    return f"{cpu()}, Python {platform.python_version()}, torch {torch.__version__}"
