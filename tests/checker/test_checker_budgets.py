"""ppy-check never runs away: each pathological file ends in a finding naming its region, within seconds.

Each file is checked in a process of its own under a wall-clock bound generous
enough for a loaded machine (the checker takes a second or two for each);
before the budgets, each of these ran for minutes, exhausted memory, or ended
in "internal error" and lost the file's findings.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ppy_check import messages as m
from ppy_check.engine import check_source
from ppy_check.model import budgets
from ppy_check.model.builder import Analysis, build_model
from ppy_check.model.builder.calls import Calls
from ppy_check.model.builder.facts import _range_length
from ppy_check.model.builder.inlining import Inliner
from ppy_check.model.builder.statements import Statements
from ppy_check.model.builder.text import display
from ppy_check.model.ir import Let

ROOT = Path(__file__).resolve().parents[2]
BOUND = 60  # seconds: minutes or a MemoryError before the budgets
HEAD = "import math\n\nimport ppy\nimport torch\n\n\n"
REGION = "@ppy.opt(3)\ndef r(x: torch.Tensor, n: int) -> torch.Tensor:\n"


def check(tmp_path: Path, text: str, **env: str) -> list[dict[str, object]]:
    """The findings of one file, checked by ppy-check in a process of its own (killed past BOUND)."""
    (tmp_path / "m.py").write_text(text)
    command = [sys.executable, "-m", "ppy_check", "--no-config", "--output-format", "json", "m.py"]
    result = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=BOUND,
                            env={**os.environ, "PYTHONPATH": str(ROOT), **env})
    assert "Traceback" not in result.stderr and "cannot check" not in result.stderr, result.stderr
    assert result.returncode in (0, 1), result.stderr
    findings: list[dict[str, object]] = json.loads(result.stdout)
    return findings


def only(findings: list[dict[str, object]]) -> tuple[str, str]:
    assert len(findings) == 1, findings
    return str(findings[0]["code"]), str(findings[0]["message"])


def doubling_chain(levels: int) -> str:
    """Helpers each calling the next twice: 2 ** levels inlined calls."""
    helpers = "".join(f"def h{i}(x):\n    return h{i + 1}(x) + h{i + 1}(x)\n\n\n" for i in range(levels))
    return HEAD + helpers + f"def h{levels}(x):\n    return x * 2\n\n\n" + REGION + "    return h0(x)\n"


def test_helpers_calling_each_other_twice_end_in_the_step_budget(tmp_path: Path) -> None:
    code, message = only(check(tmp_path, doubling_chain(30)))
    assert code == m.UNSUPPORTED
    assert message == m.BUDGET_STEPS.format(region="r", subject="h0(x)", limit=budgets.MAX_STEPS)


# Folded values whose size has no bound, and the expression each finding names.
HUGE_FOLDS = {
    "power": ("    return x * (10 ** 10 ** 8)\n", "10 ** 10 ** 8", m.BUDGET_INT_BITS, budgets.MAX_INT_BITS),
    "power_inside_a_shape": ("    return x.reshape(10 ** 10 ** 8)\n", "10 ** 10 ** 8", m.BUDGET_INT_BITS,
                             budgets.MAX_INT_BITS),
    "str_of_a_power": ("    s = str(10 ** 100000)\n    return x\n", "10 ** 100000", m.BUDGET_INT_BITS,
                       budgets.MAX_INT_BITS),
    "f_string_of_a_power": ("    s = f'{10 ** 100000}'\n    return x\n", "10 ** 100000", m.BUDGET_INT_BITS,
                            budgets.MAX_INT_BITS),
    "shift": ("    return x * (1 << 10 ** 9)\n", "1 << 10 ** 9", m.BUDGET_INT_BITS, budgets.MAX_INT_BITS),
    "tuple_repetition": ("    s = (1, 1) * 30 * 2 ** 20\n    return x\n", "(1, 1) * 30 * 2 ** 20", m.BUDGET_ITEMS,
                         budgets.MAX_ITEMS),
    "shape_repetition": ("    return x.reshape((n,) * 10 ** 8)\n", "(n,) * 10 ** 8", m.BUDGET_ITEMS,
                         budgets.MAX_ITEMS),
    "nested_tuples": ("    t = ((1,) * 1000,) * 1000\n    return x\n", "((1,) * 1000,) * 1000", m.BUDGET_ITEMS,
                      budgets.MAX_ITEMS),
    "tuples_nested_by_doubling": ("    t = (1,)\n" + "    t = (t, t)\n" * 40 + "    return x\n", "(t, t)",
                                  m.BUDGET_ITEMS, budgets.MAX_ITEMS),
    "tuples_joined_by_doubling": ("    t = (1,)\n" + "    t = t + t\n" * 40 + "    return x\n", "t + t",
                                  m.BUDGET_ITEMS, budgets.MAX_ITEMS),
    "strings_joined_by_doubling": ("    s = 'ab'\n" + "    s = s + s\n" * 40 + "    return x\n", "s + s",
                                   m.BUDGET_TEXT, budgets.MAX_TEXT),
    "string_replace_growing": ("    s = 'aaaaaaaaaa'\n" + "    s = s.replace('', s)\n" * 5 + "    return x\n",
                               "s.replace", m.BUDGET_TEXT, budgets.MAX_TEXT),
}


@pytest.mark.parametrize("name", sorted(HUGE_FOLDS))
def test_a_huge_folded_value_ends_in_its_budget(tmp_path: Path, name: str) -> None:
    body, subject, template, limit = HUGE_FOLDS[name]
    code, message = only(check(tmp_path, HEAD + REGION + body))
    assert code == m.UNSUPPORTED
    assert message == template.format(region="r", subject=subject, limit=limit)


def test_round_to_a_huge_negative_digit_count_folds_exactly(tmp_path: Path) -> None:
    """Python computes 10 ** 10 ** 9 for it (minutes); every digit is rounded off, so ppy folds it to 0 at once."""
    assert check(tmp_path, HEAD + REGION + "    return x * round(5, -10 ** 9) + x * round(15, -1)\n") == []
    from ppy_check.model import hostmath
    from ppy_check.model.ir import HostOp

    for value, digits in [(5, -1), (15, -1), (12345, -4), (12345, -5), (12345, -6), (-55555, -6), (True, -3)]:
        assert hostmath.fold(HostOp.ROUND_DIGITS, [value, digits]) == round(value, digits)


def test_a_huge_int_in_a_message_is_shortened(tmp_path: Path) -> None:
    code, message = only(check(tmp_path, HEAD + REGION + "    return x.reshape(2 ** 9000)\n"))
    assert code == m.TYPE and "(2710 digits)" in message and len(message) < 300


def test_a_zero_slice_step_of_a_tuple_is_a_finding(tmp_path: Path) -> None:
    code, message = only(check(tmp_path, HEAD + REGION + "    t = (1, 2, 3)\n    return x * t[::0][0]\n"))
    assert code == m.TYPE and "always raises ValueError (slice step cannot be zero)" in message


def test_a_long_linear_helper_chain_ends_in_the_depth_budget(tmp_path: Path) -> None:
    helpers = "".join(f"def h{i}(x):\n    return h{i + 1}(x)\n\n\n" for i in range(3000))
    text = HEAD + helpers + "def h3000(x):\n    return x\n\n\n" + REGION + "    return h0(x)\n"
    code, message = only(check(tmp_path, text))
    assert code == m.UNSUPPORTED and message == m.BUDGET_DEPTH.format(region="r", subject="h0(x)")


def test_a_deep_expression_is_checked_in_seconds(tmp_path: Path) -> None:
    """Each level's message text was the whole expression unparsed: a 2,000-deep sum took half a minute."""
    text = HEAD + REGION + "    return " + " + ".join(["x"] * 2000) + "\n"
    assert check(tmp_path, text) == []


def test_a_deeper_expression_than_python_compiles_is_a_syntax_finding(tmp_path: Path) -> None:
    """20,000 levels: Python's own compiler refuses the file too (RecursionError; 3.11 and 3.12 already at 5,000,
    3.13 between the two), so it is a ppy-syntax finding."""
    text = HEAD + REGION + "    return " + " + ".join(["x"] * 20000) + "\n"
    with pytest.raises(RecursionError):
        compile(text, "m.py", "exec")
    code, message = only(check(tmp_path, text))
    assert code == m.SYNTAX and "cannot parse" in message


def test_what_only_the_compiler_refuses_besides_depth_is_no_finding(tmp_path: Path) -> None:
    """A repeated parameter parses (the compiler refuses it): no ppy-syntax finding on any release, 3.10 too,
    where the checker asks the compiler about depth."""
    assert check(tmp_path, HEAD + "def g(a, a):\n    return a\n") == []


def test_the_file_time_budget_refuses_what_it_did_not_finish(tmp_path: Path) -> None:
    """With no time left, a region that needs more than a glance is refused, by name, not passed."""
    total = " + ".join(["x"] * 100)
    text = HEAD + REGION + f"    y = {total}\n    return y\n\n\n" + REGION.replace("def r(", "def small(") + \
        "    return x\n"
    findings = check(tmp_path, text, **{budgets.FILE_SECONDS_VARIABLE: "0"})
    code, message = only(findings)
    assert code == m.UNSUPPORTED
    assert message == m.BUDGET_TIME.format(region="r", subject=display(ast.parse(total).body[0].value),
                                           limit=0)
    assert check(tmp_path, text) == []


def test_a_builder_failure_is_the_regions_finding_and_the_file_keeps_its_others(
        monkeypatch: pytest.MonkeyPatch) -> None:
    real = Calls.invoke_method

    def failing(self: Calls, name: str, *args: object, **kwargs: object) -> object:
        if name == "sin":
            raise KeyError("a builder bug")
        return real(self, name, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Calls, "invoke_method", failing)
    text = HEAD + REGION + "    return x.sin()\n\n\n" + REGION.replace("def r(", "def g(") + \
        "    for i in range(n):\n        x = x * 2\n    return x\n"
    found = check_source(text, "m.py")
    assert [d.code for d in found if d.region == "r"] == [m.UNSUPPORTED]
    assert m.LOOP in {d.code for d in found if d.region == "g"}
    assert found[0].message == m.BUILDER_FAILED.format(region="r", subject="x.sin()", error="KeyError: 'a builder bug'")


def test_a_range_of_more_items_than_a_machine_word_counts_is_measured() -> None:
    """``len(range(10 ** 30))`` raises OverflowError; the unrolling of torch's loops measures it without len()."""
    for numbers in (range(10 ** 30), range(5, -10 ** 30, -7), range(2, 10 ** 40, 10 ** 9), range(3, 3),
                    range(5, 3)):
        # Indexing and truth take any size: the last item counts the items.
        expected = (numbers[-1] - numbers.start) // numbers.step + 1 if numbers else 0
        assert _range_length(numbers) == expected
    for numbers in (range(0, 10, 3), range(10, 0, -3), range(-4, 9), range(9, -4, -1), range(0), range(1, 0, 2)):
        assert _range_length(numbers) == len(numbers)


def test_displaying_a_deep_expression_spells_only_its_first_part() -> None:
    """Every level of an expression is displayed for its messages; unparsing each whole was quadratic (and past
    Python's recursion limit, a RecursionError)."""
    import ast

    deep: ast.expr = ast.Name(id="x", ctx=ast.Load())
    for _ in range(100_000):
        deep = ast.BinOp(left=deep, op=ast.Add(), right=ast.Name(id="y", ctx=ast.Load()))
    text = display(deep)
    assert len(text) == 60 and text.endswith("...") and "y" in text
    small = ast.parse("f(a, b)[1:2] + g(*c, k=-1) * 2", mode="eval").body
    assert display(small) == ast.unparse(small)


REUSED_HELPERS = HEAD + '''from typing import Optional

import torch.nn.functional as F


def scale(x, k):
    return x * k + k ** 2


def bump_(x):
    x.add_(1)
    return x


def shape_of(x):
    return x.shape


def pair(x, y):
    return (x.sum(), y)


def soft(x, dim):
    return F.softmax(x, dim) + x.sum(dim, keepdim=True)


def twice(x):
    return scale(x, 2) + scale(x, 2)


@ppy.opt(3)
def numbers(x: torch.Tensor, y: torch.Tensor, n: int, f: float) -> torch.Tensor:
    a = scale(x, 2) + scale(x, 3) + scale(x, n) + scale(x, f) + scale(y, 2) + scale(x, 2)
    b = scale(n, 2) + scale(n, 2) + scale(2, 2) + scale(2.0, 2)
    return a * b + twice(x) + twice(y)


@ppy.opt(3)
def writes(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    u = bump_(x)
    v = bump_(y)
    w = bump_(x.clone())
    return u + v + w + bump_(w)


@ppy.opt(3)
def shapes(x: torch.Tensor, y: torch.Tensor) -> tuple[int, ...]:
    return shape_of(x) + shape_of(y)


@ppy.opt(3)
def tuples(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    a, b = pair(x, y)
    c, d = pair(y, x)
    e, g = pair(x, x)
    return a + b + c + d + e + g + soft(x, 0) + soft(y, 0) + soft(x, 1)


@ppy.pure
def pure(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return bump_(x.clone()) + bump_(y)
'''


def _normalized(analysis: Analysis) -> str:
    """A model's text with its variables numbered by first appearance (reuse numbers them otherwise)."""
    import re

    model = analysis.model
    assert model is not None
    text = repr((model.body, model.writes, sorted(model.natives), model.random))
    numbers: dict[str, str] = {}
    return re.sub(r"index=(\d+)", lambda match: numbers.setdefault(match.group(1), f"index={len(numbers)}"), text)


def test_a_reused_helper_model_is_the_model_inlining_builds(monkeypatch: pytest.MonkeyPatch) -> None:
    from ppy_check.module import ModuleRegions

    def models() -> dict[str, str]:
        module = ModuleRegions.load("m.py", REUSED_HELPERS)
        return {region.name: _normalized(build_model(region)) for region in module.regions if region.name != "pure"}

    reused = models()
    monkeypatch.setattr(Inliner, "template_key", lambda self, helper, bound: None)
    assert models() == reused and len(reused) == 4
    monkeypatch.undo()
    found = check_source(REUSED_HELPERS, "m.py")
    assert [(d.region, d.code, d.line) for d in found] == [("pure", m.IMPURE, REUSED_HELPERS.count("\n", 0, REUSED_HELPERS.index("x.add_(1)")) + 1)]


def test_a_helper_is_interpreted_once_per_kind_of_arguments(monkeypatch: pytest.MonkeyPatch) -> None:
    """Helpers that each call the next twice: 2 ** 15 inlined calls, 15 helper bodies interpreted."""
    from ppy_check.module import ModuleRegions

    interpreted: list[int] = []
    real = Statements.statements

    def statements(self: Statements, body: list[object]) -> None:
        interpreted.append(id(body))
        real(self, body)  # type: ignore[arg-type]

    monkeypatch.setattr(Statements, "statements", statements)
    (region,) = ModuleRegions.load("m.py", doubling_chain(14)).regions
    analysis = build_model(region)
    assert analysis.model is not None and not analysis.problems
    assert len(interpreted) == 16  # the region's body and each helper's, once
    # The model is still every call's: 2 ** 14 products `x * 2`, and the 2 ** 14 - 1 sums of them.
    assert sum(isinstance(s, Let) for s in analysis.model.body) == 2 ** 14 + 2 ** 14 - 1
