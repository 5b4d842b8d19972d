"""A region's own checks, compiled: the calls that pass them give the Python body's values and gradients, the calls
that fail them raise the Python body's exception with its message, and `python -O` skips the asserts (and only
them) in the compiled code as Python skips them in the body. The regions are tests/regions/checks.py."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import warnings
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")

import checks  # noqa: E402
import ppy  # noqa: E402
from ppy_check.engine import check_source  # noqa: E402
from ppy_compile.pipeline import build_module  # noqa: E402
from tests.support.outcomes import outcome  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]


def compiled_outcome(region: ppy.Region[..., Any], *args: Any) -> tuple[str, Any]:
    """What the compiled entry itself gives (never the Python body)."""
    entry = region.compiled
    assert entry is not None, f"{region.__name__} did not compile"
    return outcome(lambda *a: entry(*a), *args)


def same_as_python(region: ppy.Region[..., Any], cases: list[tuple[Any, ...]]) -> list[tuple[str, Any]]:
    assert region.build(), f"{region.__name__} did not compile"
    found = []
    for args in cases:
        torch.manual_seed(0)
        expected = outcome(region.python, *args)
        torch.manual_seed(0)
        assert compiled_outcome(region, *args) == expected, args
        found.append(expected)
    return found


def test_an_assert_raises_pythons_assertion_error() -> None:
    found = same_as_python(checks.last_dim, [(torch.randn(2, 3), 3), (torch.randn(2, 3), 4), (torch.randn(()), 1)])
    assert [kind for kind, _ in found] == ["Tensor", "AssertionError", "IndexError"]
    found = same_as_python(checks.rank_four, [(torch.randn(2, 3, 4, 5),), (torch.randn(2, 3),)])
    assert found[1] == ("AssertionError", "expected (batch, heads, seq, dim)")


def test_if_raise_formats_its_message_as_python_does() -> None:
    x = torch.randn(1, 2, 4, 4)
    found = same_as_python(checks.image_input, [(x, 0.5), (torch.randn(2, 4), 0.5), (x, -1), (x, 0), (x, -2.5),
                                                (x, -1e300), (x, float("-inf"))])
    assert found[1] == ("ValueError", "expected 4D input, got 2D input of shape torch.Size([2, 4])")
    assert found[2] == ("ValueError", "scale must be positive, got -1")
    assert found[4] == ("ValueError", "scale must be positive, got -2.5")


def test_and_or_not_short_circuit_as_pythons_do() -> None:
    # `x.shape[-1] % heads` is computed only where `heads > 0`; `x.shape[1]` only where `x.ndim == 4`.
    found = same_as_python(checks.heads_divide, [
        (torch.randn(2, 5, 8), 2, True), (torch.randn(2, 5, 8), 3, True), (torch.randn(2, 5, 8), 0, True),
        (torch.randn(2, 5, 8), -2, False), (torch.randn(()), 2, True), (torch.randn(2, 2, 5, 6), 3, False),
        (torch.randn(2, 1, 5, 6), 3, False), (torch.randn(2, 1025, 4), 2, True), (torch.randn(2, 1025, 4), 2, False),
        (torch.randn(8), 2, False)])
    assert found[2] == ("AssertionError", "8 features do not split into 0 heads")
    assert found[4][0] == "IndexError"
    assert found[5] == ("RuntimeError", "expected (batch, seq, features) or (batch, 1, seq, features)")
    assert found[7] == ("NotImplementedError", "causal attention over 1025 positions")
    assert found[9][0] == "RuntimeError"


def test_type_and_dtype_tests() -> None:
    found = same_as_python(checks.float_only, [
        (torch.randn(2, 3), torch.randn(3, 4)),
        (torch.ones(2, 3, dtype=torch.long), torch.ones(3, 4, dtype=torch.long)),
        (torch.randn(2, 3), torch.randn(3, 4, dtype=torch.float64))])
    assert found[2] == ("TypeError", "expected two floating tensors of one dtype, got torch.float32 and torch.float64")
    found = same_as_python(checks.optional_given, [(torch.randn(3), torch.randn(3), 0.5), (torch.randn(3), None, 0.5),
                                                   (torch.randn(3), torch.randn(3), 2), (torch.randn(3), torch.randn(3), 1.5),
                                                   (torch.randn(3), torch.randn(3), float("nan"))])
    assert found[1] == ("AssertionError", "this region takes a mask")
    assert found[2] == ("ValueError", "p must be in [0, 1], got 2")
    assert found[4] == ("ValueError", "p must be in [0, 1], got nan")


def test_a_run_time_str_in_a_message_keeps_every_character() -> None:
    x = torch.randn(2, 3)
    found = same_as_python(checks.named_value, [(torch.randn(3), "a\x00b", "mean"), (torch.randn(3), "\x00", "sum"),
                                                (x, "a", "mean\x00junk"), (x, "a", "\x00")])
    assert found[0] == ("ValueError", "got a\x00b!")
    assert found[1] == ("ValueError", "got \x00!")
    assert found[2] == ("ValueError", "mean\x00junk is not a valid value for reduction")


def test_every_dtype_in_a_message_reads_as_pythons_str() -> None:
    dtypes = {value for value in vars(torch).values() if isinstance(value, torch.dtype)}
    cases = []
    for dtype in sorted(dtypes, key=str):
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # the quantized dtypes' deprecation
                cases.append((torch.empty(2, dtype=dtype),))
        except (RuntimeError, TypeError):  # a dtype no tensor can have here (torch.empty refuses it)
            continue
    assert len(cases) > 20, cases  # the float8s, the unsigned ints and the quantized ones among them
    found = same_as_python(checks.shown_dtype, cases)
    assert [message for _, message in found] == [f"unsupported dtype {x.dtype}" for (x,) in cases]


def test_a_str_with_a_lone_surrogate_runs_the_python_body() -> None:
    assert checks.echoed.build()
    x = torch.randn(2)
    for text in ("a\udcffb", "\ud800"):
        assert checks.echoed(x, text) == (text, 1)  # not the compiled entry's UnicodeEncodeError
        assert checks.echoed.compiled is not None
        assert checks.echoed.compiled(x, text) is NotImplemented  # the entry declines: its caller runs Python
    assert checks.echoed.compiled(x, "a\x00\u00e9") == ("a\x00\u00e9", 1)


def test_a_helpers_check_and_gradients_through_it() -> None:
    found = same_as_python(checks.through_helper, [(torch.randn(3, 4), torch.randn(4, 3))])
    assert found == [("ValueError", "shapes differ: torch.Size([3, 4]) and torch.Size([4, 3])")]
    a, b = torch.randn(3, 4, requires_grad=True), torch.randn(3, 4, requires_grad=True)
    checks.through_helper.python(a, b).backward()
    expected = (a.grad.clone(), b.grad.clone())
    a.grad = b.grad = None
    entry = checks.through_helper.compiled
    assert entry is not None
    entry(a, b).backward()
    torch.testing.assert_close((a.grad, b.grad), expected, rtol=0, atol=0)


def test_a_helpers_assert_called_twice() -> None:
    found = same_as_python(checks.two_matrices, [(torch.randn(2, 3), torch.randn(3, 4)), (torch.randn(3), torch.randn(3, 4)),
                                                 (torch.randn(2, 3), torch.randn(3, 4, 1))])
    assert found[1:] == [("AssertionError", "a must be a matrix, not 1-D"), ("AssertionError", "b must be a matrix, not 3-D")]


def test_a_module_region_checks_its_attribute() -> None:
    module = checks.Scale(4)
    assert checks.Scale.forward.build()
    x = torch.randn(2, 4)
    torch.testing.assert_close(module(x), x * module.weight)
    assert outcome(module, torch.randn(2, 3)) == ("AssertionError", "expected 4 features, got 3")
    module.dim = 3  # an attribute input: read at each call
    assert outcome(module, torch.randn(2, 3))[0] == "RuntimeError"  # the weight's 4 against 3: torch's own error


def test_what_ppy_check_accepts_in_the_fixture_compiles() -> None:
    path = ROOT / "tests" / "fixtures" / "rules" / "checks.py"
    text = path.read_text(encoding="utf-8")
    refused = {d.region for d in check_source(text, str(path))}
    built = build_module(str(path), text)
    accepted = {"checks_on_host_values", "type_tests_the_types_answer", "helper_checks", "forward"}
    assert accepted.isdisjoint(refused)
    assert accepted <= {key.split(":")[0].rpartition(".")[2] for key in built.functions}, built.functions


OPTIMIZED = textwrap.dedent("""
    # Run under -O, which strips this script's own asserts too: it fails by SystemExit.
    import sys
    import torch
    import checks
    from tests.support.outcomes import outcome
    if sys.flags.optimize != 1:
        sys.exit("not under -O")
    for region in (checks.last_dim, checks.image_input, checks.optional_given, checks.two_matrices):
        if not region.build():
            sys.exit(f"{region.__name__} did not compile")
    def both(region, *args):
        python = outcome(region.python, *args)
        compiled = outcome(lambda *a: region.compiled(*a), *args)
        if compiled != python:
            sys.exit(f"{region.__name__}: compiled {compiled}, Python {python}")
        return python[0]
    x = torch.randn(2, 3)
    # Python skips the asserts, their tests too (no IndexError from `x.shape[-1]` of a 0-d tensor) ...
    print(both(checks.last_dim, x, 4), both(checks.last_dim, torch.randn(()), 1),
          both(checks.optional_given, torch.randn(3), None, 0.5), both(checks.two_matrices, torch.randn(3), torch.randn(3, 4)))
    # ... and never an `if ...: raise`.
    print(both(checks.image_input, torch.randn(2, 4), 0.5), both(checks.optional_given, torch.randn(3), None, 2))
""")


def test_python_dash_o_skips_asserts_but_not_raises() -> None:
    environment = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(ROOT / "tests" / "regions")]))
    environment.pop("PYTHONOPTIMIZE", None)
    run = subprocess.run([sys.executable, "-O", "-c", OPTIMIZED], capture_output=True, text=True, env=environment,
                         cwd=ROOT, timeout=900)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["Tensor", "Tensor", "Tensor", "Tensor", "ValueError", "ValueError"], run.stdout
