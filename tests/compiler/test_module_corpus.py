"""The module corpus (tests/module_corpus/): real nn.Module classes, as written, with their forward a region.

For each class: ppy-check's engine checks its ``forward`` (from the file's
text, without importing it). One it passes must build and, in eval mode, match
its Python body's output and the parameters' gradients, with every
``RegionDeclinedWarning`` an error (no call may quietly run Python).

The issue's measure resolves branches on configuration first:
``module_corpus/config_resolved.py`` holds the gap classes whose only gap is
such a branch, each with that branch resolved the way its case's config goes.
Both rates are measured; the resolved copies must all pass.

Strict both ways: KNOWN_GAPS lists the classes that do not work today, each
expected to still fail (a fix shows here: delete its entry); every other class
must pass. A class that ppy-check passes, that builds and that computes a
different value is a ppy bug, never a gap: WRONG_VALUES, also strictly expected
to fail.
"""

from __future__ import annotations

import copy
import importlib
import sys
import warnings
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import torch

from ppy.runtime import RegionDeclinedWarning
from tests.support.first_write_checks import param

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "tests" / "module_corpus"

# Class (file.case) -> what stops it today, verbatim enough to recognise. Delete an entry when its feature lands.
KNOWN_GAPS: dict[str, str] = {
    # `if self.downsample is not None` on an Optional submodule is a branch (resolved in config_resolved.py); with
    # a downsample, the Sequential is built by the caller, so which modules it holds is not in the class's source.
    "convnets_diffusion.BasicBlock": "ppy-branch `if` on `self.downsample is not None` is a branch",
    "convnets_diffusion.BasicBlock+downsample": "ppy-branch `if` on `self.downsample is not None` is a branch; "
                                                "ppy-type `self.downsample` may be None",
    # repeat_kv's early return on `n_rep == 1` (a config value) is a branch.
    "hf_transformers.LlamaAttention": "ppy-branch `if` on `n_rep == 1` is a branch (in `repeat_kv`)",
    # A branch on a parameter's dtype (static per build).
    "hf_transformers.T5LayerNorm": "ppy-branch `if` on `self.weight.dtype in [torch.float16, torch.bflo...` is a branch",
    # `dropout_p=self.dropout if self.training else 0`: a conditional expression on self.training.
    "nanogpt.CausalSelfAttention": "ppy-branch conditional expression on `self.training` is a branch",
    # Its CausalSelfAttention's branch.
    "nanogpt.Block": "ppy-branch conditional expression on `self.training` is a branch (in `forward`)",
    # A conditional expression on a bool config attribute (`x.mul_(g) if self.inplace else x * g`).
    "timm_vision.LayerScale": "ppy-branch conditional expression on `self.inplace` is a branch",
    # drop_path's early return on `drop_prob == 0. or not training` (config and self.training).
    "timm_vision.DropPath": "ppy-branch `if` on `drop_prob == 0.0 or not training` is a branch; "
                            "ppy-branch `or` in `drop_prob == 0.0 or not training` short-circuits, which is a branch; "
                            "ppy-branch `if` on `keep_prob > 0.0 and scale_by_keep` is a branch; "
                            "ppy-branch `and` in `keep_prob > 0.0 and scale_by_keep` short-circuits, which is a branch",
    # `if self.gamma is not None` on an Optional parameter is a branch.
    "timm_vision.ConvNeXtBlock": "ppy-branch `if` on `self.gamma is not None` is a branch",
}
# Class -> how its compiled forward differs from its Python body: ppy bugs, for the integrator.
WRONG_VALUES: dict[str, str] = {}
# The fraction of the corpus's classes that work as written, measured when this file was written.
RATE_FLOOR = 12 / 21  # 2026-12-02: 12 of 21 cases work as written (10 when the corpus was written); the other 9 branch
# With configuration-only branches resolved (config_resolved.py): the criterion is 80%.
RESOLVED_FLOOR = 17 / 21  # 2026-12-02: 17 of 21; the other 4 branch on self.training or take a caller's Sequential
RESOLVED = "config_resolved"

# Gradients: allclose at float32's default tolerances, not equal. The compiled forward calls the same ATen
# ops, but its backward may accumulate a tensor's gradient from its uses in another order than eager's
# autograd (three slices of one split, an inlined helper's reuse), which moves the last bits.
GRAD_RTOL, GRAD_ATOL = 1.3e-6, 1e-5


class Gap(Exception):
    """The class does not work today: ppy-check refuses it, or it does not build, or a call declined."""


class Wrong(AssertionError):
    """ppy-check passes the class, it builds, and it computes a different value than its Python body."""


@dataclass(frozen=True)
class Outcome:
    status: str  # "pass", "gap" or "wrong"
    detail: str = ""


def _files() -> list[Path]:
    return sorted(p for p in CORPUS.glob("*.py") if p.stem not in ("__init__", RESOLVED))


def _module(path: Path) -> Any:
    if str(ROOT / "tests") not in sys.path:
        sys.path.insert(0, str(ROOT / "tests"))
    return importlib.import_module(f"module_corpus.{path.stem}")


def _class_name(case: str) -> str:
    return case.split("+", 1)[0]  # "BasicBlock+downsample": a second case of one class


@cache
def _findings(stem: str) -> dict[str, list[str]]:
    """ppy-check's findings for each region of the file, by the region's qualname (``Block.forward``)."""
    from ppy_check.engine import check_region
    from ppy_check.module import ModuleRegions

    path = CORPUS / f"{stem}.py"
    module = ModuleRegions.load(str(path), path.read_text(encoding="utf-8"))
    return {region.site.qualname: [f"{d.code} {d.message}" for d in check_region(region, module.path, module.lines)]
            for region in module.regions}


def _cases() -> list[tuple[str, str]]:
    found = []
    for path in _files():
        found += [(path.stem, case) for case in _module(path).cases()]
    return found


def _compare(label: str, mine: Any, theirs: Any) -> str | None:
    if isinstance(mine, torch.Tensor) and isinstance(theirs, torch.Tensor):
        if mine.shape != theirs.shape or mine.dtype != theirs.dtype:
            return f"{label}: {mine.dtype}{list(mine.shape)} against {theirs.dtype}{list(theirs.shape)}"
        if not torch.allclose(mine, theirs, rtol=GRAD_RTOL, atol=GRAD_ATOL, equal_nan=True):
            return f"{label}: max difference {(mine - theirs).abs().max().item():.3g}"
        return None
    return None if mine == theirs else f"{label}: {mine!r} against {theirs!r}"


@cache
def _outcome(stem: str, case: str) -> Outcome:
    name = _class_name(case)
    findings = _findings(stem).get(f"{name}.forward")
    assert findings is not None, f"{stem}.{name}.forward is not a region"
    if findings:
        return Outcome("gap", "; ".join(findings))
    module_factory, input_factory = _module(CORPUS / f"{stem}.py").cases()[case]
    region = getattr(_module(CORPUS / f"{stem}.py"), name).forward
    if not region.build():
        return Outcome("gap", f"ppy-check passed it, but it did not build: {region.fallback_reason}")
    torch.manual_seed(0)
    module = module_factory().eval()
    twin = copy.deepcopy(module)
    args = input_factory()
    with warnings.catch_warnings():
        warnings.simplefilter("error", RegionDeclinedWarning)
        try:
            mine = module(*args)
        except RegionDeclinedWarning as warning:
            return Outcome("gap", f"the call ran Python: {warning}")
    theirs = region.python(twin, *args)
    # Outputs must be equal: the same ATen calls on the same inputs, forward only.
    if not (isinstance(mine, torch.Tensor) and isinstance(theirs, torch.Tensor)) or not torch.equal(mine, theirs):
        return Outcome("wrong", _compare("output", mine, theirs) or "output not equal")
    weights = torch.randn(mine.shape, generator=torch.Generator().manual_seed(1))
    (mine * weights).sum().backward()
    (theirs * weights).sum().backward()
    for (key, a), (_, b) in zip(module.named_parameters(), twin.named_parameters()):
        if (a.grad is None) != (b.grad is None):
            return Outcome("wrong", f"{key}.grad: {a.grad is None and 'None' or 'a tensor'} against eager's")
        if a.grad is not None:
            problem = _compare(f"{key}.grad", a.grad, b.grad)
            if problem is not None:
                return Outcome("wrong", problem)
    return Outcome("pass")


def _param(stem: str, case: str) -> Any:
    return param(stem, case, KNOWN_GAPS, WRONG_VALUES, "gap", refusal=Gap, bug=Wrong)


def _resolved_cases() -> dict[str, str]:
    """The resolved copies' cases, each by the case as written that it resolves (``hf_transformers.T5LayerNorm``)."""
    return {written: case for case, written in _module(CORPUS / f"{RESOLVED}.py").RESOLVES.items()}


@pytest.mark.parametrize(("stem", "case"), [_param(*c) for c in _cases()])
def test_corpus_class(stem: str, case: str) -> None:
    outcome = _outcome(stem, case)
    key = f"{stem}.{case}"
    if outcome.status == "gap":
        raise Gap(outcome.detail)
    if outcome.status == "wrong":
        raise Wrong(f"{key}: ppy-check passes it and it builds, but {outcome.detail}")


@pytest.mark.parametrize("written", sorted(_resolved_cases()))
def test_resolved_class(written: str) -> None:
    """Each class with its configuration branch resolved works: checked clean, built, equal to its Python body."""
    outcome = _outcome(RESOLVED, _resolved_cases()[written])
    assert outcome.status == "pass", f"{written}, configuration resolved: {outcome.detail}"


def test_resolved_copies_resolve_gaps() -> None:
    """A resolved copy stands for a case that has a gap as written (else there is nothing to resolve), and differs
    from it only where a `# config resolved:` comment says."""
    for written, case in _resolved_cases().items():
        assert written in KNOWN_GAPS, f"{written} works as written: drop its resolved copy"
        stem = written.split(".", 1)[0]
        mine = _module(CORPUS / f"{RESOLVED}.py")
        theirs = _module(CORPUS / f"{stem}.py")
        assert type(mine.cases()[case][0]()).__init__.__code__.co_code == \
            type(theirs.cases()[case][0]()).__init__.__code__.co_code, f"{written}: __init__ differs"
        assert "# config resolved:" in Path(mine.__file__).read_text(encoding="utf-8")


def test_lists_name_corpus_classes() -> None:
    """KNOWN_GAPS and WRONG_VALUES name cases of the corpus, each in one list; the corpus holds 20 classes."""
    keys = {f"{stem}.{case}" for stem, case in _cases()}
    assert set(KNOWN_GAPS) <= keys and set(WRONG_VALUES) <= keys
    assert not set(KNOWN_GAPS) & set(WRONG_VALUES)
    assert len({(stem, _class_name(case)) for stem, case in _cases()}) >= 20


def test_working_rate_holds() -> None:
    outcomes = {f"{stem}.{case}": _outcome(stem, case) for stem, case in _cases()}
    working = sum(o.status == "pass" for o in outcomes.values())
    rate = working / len(outcomes)
    print(f"module corpus: {working} of {len(outcomes)} cases work as written ({rate:.0%}); "
          f"{sum(o.status == 'gap' for o in outcomes.values())} gaps, "
          f"{sum(o.status == 'wrong' for o in outcomes.values())} wrong values")
    assert rate >= RATE_FLOOR
    resolved = _resolved_cases()
    working_resolved = working + sum(_outcome(RESOLVED, resolved[key]).status == "pass" for key in outcomes
                                     if key in resolved and outcomes[key].status != "pass")
    print(f"with configuration-only branches resolved: {working_resolved} of {len(outcomes)} "
          f"({working_resolved / len(outcomes):.0%})")
    assert working_resolved / len(outcomes) >= RESOLVED_FLOOR


# opcheck differentiates the operator itself, whose backward says once that it draws again.
@pytest.mark.filterwarnings("ignore::ppy.torch_op.TorchOpRandomWarning")
def test_working_classes_are_torch_operators_under_compile() -> None:
    """Each case that works is, under torch.compile (no_grad: a region that may draw or write is its body with
    gradients on), one operator node per call whose fake kernel runs the body on a stand-in of the instance
    (torch.library.opcheck's fake-tensor and AOT tests)."""
    from torch._dynamo.testing import CompileCounterWithBackend

    from ppy import torch_op

    operators = []
    for stem, case in [*_cases(), *((RESOLVED, c) for c in _resolved_cases().values())]:
        if _outcome(stem, case).status != "pass":
            continue
        key = f"{stem}.{case}"
        module_factory, input_factory = _module(CORPUS / f"{stem}.py").cases()[case]
        region = getattr(_module(CORPUS / f"{stem}.py"), _class_name(case)).forward
        torch.manual_seed(0)
        module, args = module_factory().eval(), input_factory()
        operator = torch_op.op(region)
        flat = torch_op.flat_arguments(region, (module, *args), {})
        if region._ppy_torch_op.mutates:  # type: ignore[attr-defined]
            # Without gradients: an operator that may write (an `inplace` read at the call) is differentiated by none.
            flat = tuple(v.detach() if isinstance(v, torch.Tensor) else v for v in flat)
        torch.library.opcheck(operator, flat, test_utils=["test_schema", "test_faketensor", "test_aot_dispatch_dynamic"])
        counter = CompileCounterWithBackend("eager")
        with torch.no_grad():
            assert torch.equal(torch.compile(module, fullgraph=True, backend=counter)(*args), module(*args)), key
        assert [sum(n.target is operator for n in graph.graph.nodes) for graph in counter.graphs] == [1], key
        operators.append(key)
    assert len(operators) >= 17, operators
