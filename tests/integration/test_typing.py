"""ppy's API under `mypy --strict`, with the ppy plugin and without.

A user's module that uses the whole API type-checks, and each misuse in it is
the mypy error it should be; the example and the test regions are clean. With
the plugin, the only further errors are ppy's findings, the same as ppy-check's.
"""

from __future__ import annotations

import re
import runpy
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from ppy_check.engine import check_source
from ppy_check.selection import Selection

ROOT = Path(__file__).resolve().parents[2]
MYPY = Path(sys.executable).parent / "mypy"
PROJECT = sorted([ROOT / "examples" / "gpt2" / "gpt2.py", *(ROOT / "tests" / "regions").glob("*.py"),
                  *(ROOT / "tests" / "fixtures" / "runtime").glob("*.py")])
# An error without a code is counted too (under the code ""), so that none can slip by.
ERROR = re.compile(r"^(?P<path>.+?):(?P<line>\d+):\d+: error: (?P<message>.*?)(?:  \[(?P<code>[a-z0-9-]+)\])?$")
EXPECTED = re.compile(r"# error: (?P<code>[a-z0-9-]+)$")
CONFIGS = {"plain": "", "plugin": "plugins = ppy\n"}
# Beside tests/integration/test_mypy_plugin.py's, and one per configuration: options and plugins are part of
# mypy's cache key, so a shared one would re-analyse torch (most of a run) at every switch.
CACHES = {name: ROOT / ".ppy-cache" / f"mypy-strict-{name}" for name in CONFIGS}

USER_CODE = '''\
"""A user's module: regions in every spelling, their samples, and calls of them."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import ppy
import torch
import torch.nn.functional as F
from typing_extensions import assert_type


@ppy.opt(3)
def block(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, width: int, eps: float) -> torch.Tensor:
    return F.gelu(torch.layer_norm(x, (width,), w, b, eps), approximate="tanh")


@ppy.opt
def doubled(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@ppy.pure
@ppy.opt(2)
def shifted(x: torch.Tensor, factor: float = 2.0, *, shift: int = 0) -> torch.Tensor:
    return x * factor + shift


@ppy.opt(1, compile=False)
@ppy.pure
def halves(x: torch.Tensor, y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return x + y, x - y


# A region calling regions: ppy inlines them, and the types flow through.
@ppy.opt
def chained(x: torch.Tensor) -> torch.Tensor:
    return doubled(shifted(x, 0.5, shift=1))


class Model:
    # A method is a region: `self` needs no annotation, and this one reads nothing through it.
    @ppy.pure
    @ppy.opt
    def scaled(self, x: torch.Tensor, n: int) -> torch.Tensor:
        return x * n


@block.samples
def _(device: str) -> Iterator[tuple[torch.Tensor, torch.Tensor, torch.Tensor, int, float]]:
    yield torch.randn(2, 8, device=device), torch.ones(8, device=device), torch.zeros(8, device=device), 8, 1e-5


@shifted.samples
def _() -> Iterator[ppy.Call]:
    yield ppy.Call(torch.randn(3), factor=0.5, shift=2)


def warm(*regions: ppy.Region[..., object]) -> bool:
    return all([region.build() for region in regions])


x = torch.randn(2, 8)
w, b = torch.ones(8), torch.zeros(8)
assert_type(block(x, w, b, 8, 1e-5), torch.Tensor)
assert_type(block(x, w, b, width=8, eps=1e-5), torch.Tensor)
assert_type(shifted(x), torch.Tensor)
assert_type(halves(x, x), tuple[torch.Tensor, torch.Tensor])
assert_type(chained(x), torch.Tensor)
assert_type(Model().scaled(x, 3), torch.Tensor)
assert_type(Model.scaled(Model(), x, 3), torch.Tensor)
assert_type(block.python(x, w, b, 8, 1e-5), torch.Tensor)
assert_type(warm(block, doubled, halves, Model.scaled), bool)
assert_type(block.build(), bool)
assert_type(block.__ppy_region__, bool)
assert_type(block.cpp_source, str | None)
assert_type(block.site.path, str)
assert_type(block.level, int)
assert_type(shifted.sample_calls("cpu"), list[ppy.Call])
as_function: Callable[[torch.Tensor], torch.Tensor] = doubled
bound: Callable[[torch.Tensor, int], torch.Tensor] = Model().scaled
one_tensor: ppy.Region[[torch.Tensor], torch.Tensor] = doubled


def misuse() -> None:
    block(x, w, b, 8, epsilon=1e-5)  # error: call-arg
    block(x, w)  # error: call-arg
    block(x, w, b, "8", 1e-5)  # error: arg-type
    count: int = block(x, w, b, 8, 1e-5)  # error: assignment
    shifted(x, shift=1.5)  # error: arg-type
    halves(x)  # error: call-arg
    Model().scaled(x, "3")  # error: arg-type
    Model().scaled(x, 3, 4)  # error: call-arg
    block.python(x)  # error: call-arg
    block.nope  # error: attr-defined
    block.samples(3)  # error: type-var
    wrong: ppy.Region[[int], torch.Tensor] = doubled  # error: assignment
    ppy.opt("3")  # error: call-overload
    ppy.opt(3, compile="no")  # error: call-overload
'''


def _errors(stdout: str, cwd: Path) -> Counter[tuple[str, int, str]]:
    found: Counter[tuple[str, int, str]] = Counter()
    for line in stdout.splitlines():
        match = ERROR.match(line)
        if match:
            found[(str((cwd / match["path"]).resolve()), int(match["line"]), match["code"] or "")] += 1
    return found


def _ppy_check(path: Path) -> Counter[tuple[str, int, str]]:
    return Counter((str(path), d.line, d.code) for d in check_source(path.read_text(encoding="utf-8"), str(path)))


@pytest.fixture(scope="module")
def user_code(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("typing") / "user_code.py"
    path.write_text(USER_CODE)
    return path.resolve()


@pytest.fixture(scope="module")
def strict(user_code: Path) -> dict[str, tuple[Counter[tuple[str, int, str]], str]]:
    """Each configuration's errors over the user's module and the project's files: one mypy run each."""
    results = {}
    cwd = user_code.parent
    for name, config in CONFIGS.items():
        (cwd / f"{name}.ini").write_text("[mypy]\nshow_column_numbers = True\n" + config)
        run = subprocess.run([str(MYPY), "--strict", "--config-file", f"{name}.ini",
                              "--cache-dir", str(CACHES[name]),
                              user_code.name, *map(str, PROJECT)], cwd=cwd, capture_output=True, text=True, timeout=600)
        assert run.returncode in (0, 1) and not run.stderr, run.stderr + run.stdout[-3000:]
        results[name] = (_errors(run.stdout, cwd), run.stdout)
    return results


def _only(errors: Counter[tuple[str, int, str]], paths: list[Path]) -> Counter[tuple[str, int, str]]:
    wanted = {str(p) for p in paths}
    return Counter({key: count for key, count in errors.items() if key[0] in wanted})


def test_user_code_type_checks_and_each_misuse_is_an_error(strict: dict, user_code: Path) -> None:
    intended: Counter[tuple[str, int, str]] = Counter()
    for number, line in enumerate(USER_CODE.splitlines(), 1):
        match = EXPECTED.search(line)
        if match:
            intended[(str(user_code), number, match["code"])] += 1
    assert len(intended) == 14
    plain, stdout = strict["plain"]
    assert _only(plain, [user_code]) == intended, stdout
    # The misuses are read as calls of the function itself, `self` bound on an instance.
    assert 'Unexpected keyword argument "epsilon"' in stdout
    assert 'Missing positional arguments "b", "width", "eps"' in stdout
    assert 'Argument 2 has incompatible type "str"; expected "int"' in stdout


def test_with_the_plugin_the_only_further_errors_are_ppy_check_findings(strict: dict, user_code: Path) -> None:
    plain, _ = strict["plain"]
    with_plugin, stdout = strict["plugin"]
    findings = _ppy_check(user_code)
    # A method under both decorators, a region calling regions: no finding.
    assert not findings
    assert _only(with_plugin, [user_code]) == _only(plain, [user_code]) + findings, stdout


def test_example_and_test_regions_pass_strict(strict: dict) -> None:
    plain, stdout = strict["plain"]
    assert not _only(plain, PROJECT), stdout
    with_plugin, stdout = strict["plugin"]
    # The plugin selects files as ppy-check walking the project does: [tool.ppy] excludes tests/fixtures.
    selection = Selection()
    selected = [path for path in PROJECT if selection.selected(path)]
    assert len(selected) < len(PROJECT), "pyproject.toml's [tool.ppy] excludes tests/fixtures"
    expected = sum((_ppy_check(path) for path in selected), Counter())
    assert _only(with_plugin, PROJECT) == expected, stdout
    assert not _only(plain, selected) and _only(with_plugin, selected) == expected


def test_user_code_runs_as_written(user_code: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Every spelling above is real at run time too (as Python: nothing to build here).
    monkeypatch.setenv("PPY_DISABLE", "1")
    namespace = runpy.run_path(str(user_code))
    assert namespace["warm"](namespace["block"]) is False
    assert [type(c).__name__ for c in namespace["shifted"].sample_calls("cpu")] == ["Call"]
    assert namespace["bound"](namespace["x"], 3).shape == (2, 8)
