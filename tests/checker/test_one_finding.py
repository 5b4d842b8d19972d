"""One mistake, one finding, in every output: a helper's finding is reported once, at the helper, naming every
region that inlines it (the text itself: the fixture rules/shared_helper.py and its snapshot)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from ppy_check.cli import main

SHARED = textwrap.dedent(
    """\
    import ppy
    import torch


    def helper(x: torch.Tensor) -> torch.Tensor:
        if x.sum() > 0:
            return x
        return -x


    @ppy.opt(1)
    def one(x: torch.Tensor) -> torch.Tensor:
        return helper(x) + 1


    @ppy.opt(1)
    def two(x: torch.Tensor) -> torch.Tensor:
        return helper(x) * 2


    @ppy.opt(1)
    def alone(x: torch.Tensor) -> torch.Tensor:
        for _ in range(2):
            x = x + 1
        return x
    """
)
MERGED = ("regions `one` and `two`: `if` on `x.sum() > 0` is a branch; pass both results' inputs and use "
          "`torch.where`, or branch in the caller (`one`: in `helper`, called at line 13; `two`: in `helper`, "
          "called at line 18)")


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.py").write_text(SHARED)
    return tmp_path


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["--no-config", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_concise_says_the_helpers_finding_once(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(["m.py"], capsys)
    assert code == 1
    lines = out.splitlines()
    assert [line for line in lines if line.startswith("m.py:6:")] == [f"m.py:6:5: ppy-branch {MERGED}"]
    assert "Found 3 findings in 1 file." in err  # the branch once, and `alone`'s loop and its range


def test_json_names_every_region_that_reaches_it(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = _run(["--output-format", "json", "m.py"], capsys)
    findings = json.loads(out)
    shared = [f for f in findings if f["line"] == 6]
    assert len(shared) == 1
    # `region` stays one region's name (the first to reach it), so a reader keyed by region still works.
    assert shared[0]["region"] == "one" and shared[0]["regions"] == ["one", "two"]
    assert shared[0]["message"] == MERGED
    for finding in findings:
        assert set(finding) >= {"path", "line", "column", "code", "message", "region", "regions"}
        if finding["line"] != 6:
            assert finding["regions"] == [finding["region"]] == ["alone"]


def test_sarif_gives_each_region_a_logical_location(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = _run(["--output-format", "sarif", "m.py"], capsys)
    results = json.loads(out)["runs"][0]["results"]
    shared = [r for r in results if r["locations"][0]["physicalLocation"]["region"]["startLine"] == 6]
    assert len(shared) == 1
    assert shared[0]["locations"][0]["logicalLocations"] == [{"name": "one", "kind": "function"},
                                                              {"name": "two", "kind": "function"}]


def test_one_region_reaching_it_keeps_its_own_words(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "m.py").write_text(SHARED.replace("return helper(x) * 2", "return x * 2"))
    _, out, _ = _run(["m.py"], capsys)
    assert "m.py:6:5: ppy-branch region `one`: `if` on `x.sum() > 0` is a branch; pass both results' inputs and " \
           "use `torch.where`, or branch in the caller (in `helper`, called at line 13)\n" in out


def test_a_suppression_at_the_helper_silences_it_for_every_region(project: Path,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    (project / "m.py").write_text(SHARED.replace("if x.sum() > 0:", "if x.sum() > 0:  # ppy: ignore[ppy-branch]"))
    _, out, _ = _run(["--extend-select", "ppy-unused-ignore", "m.py"], capsys)
    assert "m.py:6:" not in out and "ppy-unused-ignore" not in out


def test_ppy_build_says_it_once(project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("torch")
    from ppy.cli import main as ppy_main

    monkeypatch.setenv("PPY_CACHE_DIR", str(project / "cache"))
    (project / "m.py").write_text(SHARED.split("\n\n\n@ppy.opt(1)\ndef alone")[0] + "\n")
    assert ppy_main(["build", "--no-config", "m.py"]) == 1
    lines = capsys.readouterr().err.splitlines()
    assert [line for line in lines if line.startswith("m.py:")] == [f"m.py:6:5: ppy-branch {MERGED}"]
    assert lines[-1] == "ppy build: 0 of 2 regions compiled, in 1 file"
