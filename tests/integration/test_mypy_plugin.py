"""The mypy front-end: the shared rule fixtures agree with ppy-check, and mypy's own machinery works."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from ppy_check.engine import check_source
from tests.support.fixtures_support import fixture_files, snapshot, snapshot_lines
from tests.support.mypy_runs import findings, mypy


def test_fixtures_agree_with_ppy_check(tmp_path: Path) -> None:
    for path in fixture_files():
        shutil.copy(path, tmp_path / path.name)
    result = mypy(sorted(p.name for p in fixture_files()), tmp_path)
    through_mypy = findings(result.stdout)
    through_check = sorted(
        (path.name, d.line, d.column, d.code, d.message)
        for path in fixture_files() for d in check_source(path.read_text(encoding="utf-8"), str(path))
    )
    assert through_mypy == through_check, result.stdout[-3000:]
    assert len(through_check) > 50
    for path in fixture_files():  # the whole messages, as the fixture's snapshot holds them
        assert snapshot_lines([found[1:] for found in through_mypy if found[0] == path.name]) == snapshot(path)


PROJECT = {
    "config.py": "import torch\n\nscale = torch.ones(3)\n",
    "main.py": textwrap.dedent(
        """\
        import config
        import ppy
        import torch
        from typing import TYPE_CHECKING

        if TYPE_CHECKING:  # bound twice: the syntax alone cannot tell what Tensor is, mypy can
            Tensor = torch.Tensor
        else:
            Tensor = torch.Tensor


        @ppy.opt(3)
        def aliased(x: Tensor, n: int) -> Tensor:
            return x * n


        @ppy.opt(3)
        def uses_global(x: torch.Tensor) -> torch.Tensor:
            return x * config.scale


        @ppy.opt(3)
        def loops(x: torch.Tensor, n: int) -> torch.Tensor:
            for i in range(n):  # type: ignore[ppy-unsupported]
                x = x * 2
            return x


        @ppy.opt(3)
        def clean(x: torch.Tensor) -> torch.Tensor:
            return x + 1  # type: ignore[ppy-loop]
        """
    ),
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for name, text in PROJECT.items():
        (tmp_path / name).write_text(text)
    return tmp_path


def test_mypy_knows_more_than_the_syntax(project: Path) -> None:
    codes = [(f[1], f[3]) for f in findings(mypy(["main.py"], project).stdout)]
    # An alias the syntax cannot resolve is a tensor to mypy; config.scale is a tensor of another module.
    assert (13, "ppy-untyped") not in codes
    assert (19, "ppy-captured") in codes
    assert codes.count((24, "ppy-loop")) == 1
    from ppy_check.engine import check_source as syntax_only

    plain = {(d.line, d.code) for d in syntax_only((project / "main.py").read_text(), "main.py")}
    assert (13, "ppy-untyped") in plain and (19, "ppy-unsupported") in plain


def test_codes_are_mypy_error_codes(project: Path) -> None:
    # One run (each change of options costs mypy a re-analysis of torch): a code disabled in the
    # config, another on the command line, and unused ignores reported.
    result = mypy(["--disable-error-code", "ppy-captured", "main.py"], project,
                  config="warn_unused_ignores = True\ndisable_error_code = ppy-loop\n")
    codes = {f[3] for f in findings(result.stdout)}
    assert not codes & {"ppy-loop", "ppy-captured"}, result.stdout
    assert 'main.py:31: error: Unused "type: ignore" comment' in result.stdout
    assert "main.py:24:" not in result.stdout  # `# type: ignore[ppy-unsupported]` silenced `range`


def test_cached_run_notices_a_rules_upgrade(project: Path) -> None:
    cache = ["--cache-dir", str(project / ".cache")]
    first = findings(mypy([*cache, "main.py"], project).stdout)
    again = findings(mypy([*cache, "main.py"], project).stdout)
    assert first == again and any(f[3] == "ppy-loop" for f in first)
    # Different rules (standing in for a ppy upgrade): the cached errors must not be replayed.
    upgraded = findings(mypy([*cache, "main.py"], project, env={"PPY_MYPY_DISABLE": "ppy-loop"}).stdout)
    assert not any(f[3] == "ppy-loop" for f in upgraded)


def test_dmypy_follows_edits(project: Path) -> None:
    env = {"PPY_QUIET": "1"}
    status = project / ".dmypy.json"
    run = ["--status-file", str(status), "run", "--", "main.py"]
    try:
        start = findings(mypy(run, project, env=env, command="dmypy").stdout)
        assert (19, "ppy-captured") in [(f[1], f[3]) for f in start]
        # An edit to the region: its loop goes away.
        text = (project / "main.py").read_text().replace(
            "    for i in range(n):  # type: ignore[ppy-unsupported]\n        x = x * 2\n", "    x = x * n\n")
        (project / "main.py").write_text(text)
        edited = findings(mypy(run, project, env=env, command="dmypy").stdout)
        assert not any(f[3] == "ppy-loop" for f in edited)
        # An edit to the module defining the captured global: a function is no variable to capture.
        (project / "config.py").write_text("def scale() -> float:\n    return 2.0\n")
        changed = findings(mypy(run, project, env=env, command="dmypy").stdout)
        assert (19, "ppy-captured") not in [(f[1], f[3]) for f in changed]
        assert (19, "ppy-unsupported") in [(f[1], f[3]) for f in changed]
    finally:
        mypy(["--status-file", str(status), "stop"], project, command="dmypy")


ENCODED_REGION = textwrap.dedent(
    """\
    import ppy
    import torch


    @ppy.opt(3)
    def f(x: torch.Tensor, n: int) -> torch.Tensor:
        for \u00e9t\u00e9 in range(n):
            x = x * 2
        return x
    """
)


def test_the_plugin_reads_a_file_as_python_and_ppy_check_do(tmp_path: Path) -> None:
    """A coding comment and a byte-order mark: the plugin reads the text Python reads, so its findings are
    ppy-check's, names and columns included (it read UTF-8 alone, and found no region in either file)."""
    files = {
        "latin.py": ("# -*- coding: latin-1 -*-\n" + ENCODED_REGION).encode("latin-1"),
        "bom.py": b"\xef\xbb\xbf" + ENCODED_REGION.encode("utf-8"),
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    result = mypy(sorted(files), tmp_path, env={"PYTHONIOENCODING": "utf-8"})
    from ppy_check.messages import ALL_CODES
    from ppy_check.runner import Target, run

    checked = run([Target(name, ALL_CODES, tmp_path / name) for name in sorted(files)]).diagnostics
    through_check = sorted((d.path, d.line, d.column, d.code, d.message) for d in checked)
    assert {f[0] for f in through_check} == set(files) and any("`\u00e9t\u00e9`" in f[4] for f in through_check)
    assert findings(result.stdout) == through_check, result.stdout[-3000:]


BINDINGS = textwrap.dedent(
    """\
    import ppy
    import torch
    import torch.nn.functional as F


    def helper(x: torch.Tensor, n: int) -> torch.Tensor:
        return x * n


    @ppy.opt(3)
    def misspelt(x: torch.Tensor) -> torch.Tensor:
        return F.softmax(x, axis=-1)


    @ppy.opt(3)
    def too_few(x: torch.Tensor) -> torch.Tensor:
        return helper(x)


    @ppy.opt(3)
    def through_torch(x: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.softmax(x, axis=-1)


    def unannotated(x):
        return helper(x)


    @ppy.opt(3)
    def through_an_unannotated_helper(x: torch.Tensor) -> torch.Tensor:
        return unannotated(x)


    @ppy.opt(3)
    def a_method(x: torch.Tensor) -> torch.Tensor:
        return x.split(2, dimm=0)[0]


    @ppy.opt(3)
    def a_method_of_a_rebound_name(x: torch.Tensor) -> torch.Tensor:
        x = x + 1
        return x.split(2, dimm=0)[0]
    """
)


def test_a_binding_mypy_checks_is_mypys_error_alone(tmp_path: Path) -> None:
    """`F.softmax(x, axis=-1)`: mypy says `[call-arg]` itself, so the plugin does not add `[ppy-type]`, where
    mypy checks the call (an annotated region calling a def mypy knows, or a method of a parameter's class);
    elsewhere ppy-check's finding stands."""
    (tmp_path / "m.py").write_text(BINDINGS)
    result = mypy(["m.py"], tmp_path)
    errors = [line for line in result.stdout.splitlines() if ": error:" in line]
    mypys = sorted(int(line.split(":")[1]) for line in errors if line.endswith("[call-arg]"))
    assert mypys == [12, 17, 22, 36, 42], result.stdout
    ppys = {(f[1], f[3]) for f in findings(result.stdout)}
    # A method of a parameter (`x.split`, a def mypy has) too; once the name is rebound, ppy cannot tell what
    # mypy takes it to be, and its own finding stays.
    assert {line for line, code in ppys if code == "ppy-type"} & {12, 17, 22, 36, 42} == {42}, result.stdout
    # mypy does not check an unannotated function's body: ppy's finding is the only one there.
    assert (26, "ppy-type") in ppys, result.stdout
    through_check = {(d.line, d.code) for d in check_source(BINDINGS, "m.py")}
    assert {(12, "ppy-type"), (17, "ppy-type"), (22, "ppy-type"), (26, "ppy-type"), (36, "ppy-type"),
            (42, "ppy-type")} <= through_check
    # With mypy's own check off, the plugin says it.
    quiet = mypy(["m.py"], tmp_path, config="disable_error_code = call-arg\n")
    assert {(12, "ppy-type"), (17, "ppy-type")} <= {(f[1], f[3]) for f in findings(quiet.stdout)}, quiet.stdout


KEPT = textwrap.dedent(
    """\
    import ppy
    import torch

    from helpers import scale


    class Mine(torch.Tensor):
        def split(self, split_size, axis=0):  # type: ignore[no-untyped-def, override]
            return super().split(split_size, axis)


    def helper(x: torch.Tensor, n: int) -> torch.Tensor:
        return x * n


    @ppy.opt(3)
    def subclass(x: Mine) -> torch.Tensor:
        return x.split(2, axis=0)[0]


    @ppy.opt(3)
    def stubbed(x: torch.Tensor) -> torch.Tensor:
        return scale(x)


    @ppy.opt(3)
    def silenced(x: torch.Tensor) -> torch.Tensor:
        return x.split(2, dimm=0)[0]  # type: ignore[call-arg]


    @ppy.opt(3)
    def twice(x: torch.Tensor) -> torch.Tensor:
        return helper(x, 2, n=3)
    """
)


def test_a_binding_mypy_may_not_report_keeps_ppys_finding(tmp_path: Path) -> None:
    """ppy's finding stays wherever mypy's own check may pass or be off: a subclass's own method (not the
    `torch.Tensor` one ppy binds), a stub that takes what its source refuses, a line that silences mypy, and
    a value given twice (mypy's `misc`) with `misc` switched off."""
    (tmp_path / "helpers.py").write_text("def scale(x, n):\n    return x * n\n")
    (tmp_path / "helpers.pyi").write_text("from typing import Any\n\ndef scale(x: Any, n: int = ...) -> Any: ...\n")
    (tmp_path / "m.py").write_text(KEPT)
    result = mypy(["m.py"], tmp_path)
    assert {line for _, line, _, code, _ in findings(result.stdout) if code == "ppy-type"} == {18, 23, 28}, result.stdout
    assert "m.py:33:12: error: " in result.stdout and "[misc]" in result.stdout, result.stdout  # mypy says it: once
    quiet = mypy(["m.py"], tmp_path, config="disable_error_code = misc\n")
    assert (33, "ppy-type") in {(f[1], f[3]) for f in findings(quiet.stdout)}, quiet.stdout
