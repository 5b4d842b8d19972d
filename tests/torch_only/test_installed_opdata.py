"""Op data and torch's Python source made for the installed torch where it is not the shipped data's release.

Only one torch is installed here (the shipped data's), so another release is simulated the other way round: the
shipped data is replaced by a copy that says it comes from torch 2.12.0, with some overloads' schemas and effects
altered. ppy must then make data for the installed torch into the cache, reusing the effects of every overload
whose schema reads as in that copy and probing only the altered ones, and what it makes must be exactly the real
shipped data (the installed torch *is* its release). Each case runs in a process of its own, as a user's would.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from ppy_check import gen_opdata
from ppy_check.installed_opdata import SHIPPED_DATA, SHIPPED_SOURCES, STAMP

ROOT = Path(__file__).resolve().parents[2]
ALTERED = ("add.Tensor", "batch_norm", "type_as")  # no effect; a write OpInfo shows; an alias a synthesized call shows
PROGRESS = "ppy: making operator data for torch {} (once per torch version) ..."

# What a process sees: the shipped data replaced as the test says, then what ppy reads and reports.
SCRIPT = """
import json, sys
from pathlib import Path
from ppy_check import installed_opdata, torch_python
installed_opdata.SHIPPED_DATA = Path(sys.argv[1])
from ppy_check.schema import opdata
from ppy_compile.drift import drift
used = installed_opdata.in_use()
print(json.dumps({"made": used.made, "data": str(used.data), "sources": str(torch_python.sources()),
                  "identity": used.identity, "reason": used.reason, "torch_version": opdata().torch_version,
                  "add": [o.native.key for o in opdata().function("add")], "drift": drift().summary(),
                  "same": drift().same}))
"""


def installed() -> str:
    import torch

    return str(torch.__version__)


def fake_shipped(folder: Path, altered: tuple[str, ...] = ALTERED) -> Path:
    """The shipped data as if made from torch 2.12.0, the overloads ``altered`` with another schema and no
    effects."""
    data = json.loads(SHIPPED_DATA.read_text(encoding="utf-8"))
    data["torch_version"] = "2.12.0"
    for key in altered:
        data["natives"][key]["args"] = data["natives"][key]["args"][:1]
        data["effects"].pop(key, None)
    path = folder / f"opdata-{len(altered)}.json"
    path.write_text(gen_opdata.render(data), encoding="utf-8")
    return path


def run(shipped: Path, cache: Path, extra_env: dict[str, str] | None = None) -> tuple[dict[str, object], str]:
    env = {key: value for key, value in os.environ.items() if key != "PPY_QUIET"}
    env.update({"PPY_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT), **(extra_env or {})})
    done = subprocess.run([sys.executable, "-c", SCRIPT, str(shipped)], env=env, capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1]), done.stderr


def entry(cache: Path) -> Path:
    return cache / "opdata" / installed()


def assert_is_the_shipped_data(cache: Path) -> None:
    made = entry(cache)
    assert (made / "opdata.json").read_text(encoding="utf-8") == SHIPPED_DATA.read_text(encoding="utf-8")
    shipped_sources = sorted(p.name for p in SHIPPED_SOURCES.glob("*.py.txt"))
    assert sorted(p.name for p in (made / "torch_python").iterdir()) == shipped_sources
    for name in shipped_sources:
        assert (made / "torch_python" / name).read_bytes() == (SHIPPED_SOURCES / name).read_bytes(), name


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, object], str]:
    """A cache holding data made for the installed torch from the altered copy: (cache, copy, report, stderr)."""
    folder = tmp_path_factory.mktemp("made")
    shipped = fake_shipped(folder)
    report, stderr = run(shipped, folder / "cache")
    return folder / "cache", shipped, report, stderr


@pytest.fixture
def cheap_shipped(tmp_path: Path) -> Path:
    """The shipped data said to come from torch 2.12.0, nothing else altered: making data probes nothing."""
    return fake_shipped(tmp_path, altered=())


@pytest.mark.opdata_torch  # made data equals the shipped only under the shipped release
def test_made_data_is_the_installed_releases_probing_only_the_changed_overloads(
        made: tuple[Path, Path, dict[str, object], str]) -> None:
    cache, _, report, stderr = made
    assert PROGRESS.format(installed()) in stderr
    assert "done in" in stderr and f"{len(ALTERED)} new or changed overloads probed" in stderr
    assert report["made"] and report["torch_version"] == installed().split("+")[0]
    assert report["data"] == str(entry(cache) / "opdata.json")
    assert report["sources"] == str(entry(cache) / "torch_python")
    stamp = json.loads((entry(cache) / STAMP).read_text(encoding="utf-8"))
    assert stamp["probed"] == sorted(ALTERED) and stamp["unprobed"] == []  # never a full probe
    # Generation reproduces the shipped data exactly, re-probed effects included.
    assert_is_the_shipped_data(cache)
    # What drift and `ppy explain` say: no drift, and which data.
    assert report["same"] and "op data made for torch" in str(report["drift"])
    for path in [entry(cache), *entry(cache).rglob("*")]:
        assert not path.stat().st_mode & (stat.S_IWGRP | stat.S_IWOTH), path


def test_a_second_process_reads_what_the_first_made(made: tuple[Path, Path, dict[str, object], str]) -> None:
    cache, shipped, first, _ = made
    again, stderr = run(shipped, cache)
    assert "making operator data" not in stderr, stderr
    assert again == first


@pytest.mark.parametrize("damage", ["corrupt", "group_writable", "symlink", "foreign", "stale"])
@pytest.mark.opdata_torch  # as above
def test_an_entry_that_fails_a_rule_is_made_again(made: tuple[Path, Path, dict[str, object], str], tmp_path: Path,
                                                  cheap_shipped: Path, damage: str) -> None:
    cache = tmp_path / "cache"
    shutil.copytree(made[0], cache, symlinks=True)
    data = entry(cache) / "opdata.json"
    source = entry(cache) / "torch_python" / "torch.nn.functional.py.txt"
    if damage == "corrupt":
        source.write_text(source.read_text(encoding="utf-8") + "\ndef injected(): ...\n", encoding="utf-8")
    elif damage == "group_writable":
        data.chmod(0o664)
    elif damage == "symlink":
        data.unlink()
        data.symlink_to(SHIPPED_DATA)
    elif damage == "foreign":
        if os.geteuid() != 0:
            pytest.skip("giving a file to another user needs root")
        os.chown(source, 65534, 65534)  # nobody: neither this user nor root
    else:
        stamp = entry(cache) / STAMP
        written = json.loads(stamp.read_text(encoding="utf-8"))
        stamp.write_text(json.dumps({**written, "ppy": "0.0.0+another"}), encoding="utf-8")
    report, stderr = run(cheap_shipped, cache)
    assert PROGRESS.format(installed()) in stderr, stderr
    assert report["made"] and report["identity"] == made[2]["identity"]
    assert_is_the_shipped_data(cache)


def test_a_cache_others_may_write_is_refused_for_the_shipped_data(tmp_path: Path, cheap_shipped: Path) -> None:
    cache = tmp_path / "cache"
    cache.mkdir()
    cache.chmod(0o777)  # not sticky: anyone could swap an entry
    report, stderr = run(cheap_shipped, cache)
    assert not report["made"] and report["identity"] == "shipped" and report["torch_version"] == "2.12.0"
    assert "other users can write" in str(report["reason"])
    lines = [line for line in stderr.splitlines() if line.startswith("ppy:")]
    assert lines == [f"ppy: using the shipped operator data of torch 2.12.0 under torch {installed()}: "
                     f"{report['reason']}"], stderr
    assert not report["same"] and str(report["reason"]) in str(report["drift"])
    assert not (cache / "opdata").exists()


def test_where_making_fails_the_shipped_data_serves_and_says_why(tmp_path: Path, cheap_shipped: Path) -> None:
    # PyYAML missing, as torchgen needs it: a module of that name that fails to import, first on the path.
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "yaml.py").write_text("raise ImportError('No module named yaml')\n", encoding="utf-8")
    report, stderr = run(cheap_shipped, tmp_path / "cache", {"PYTHONPATH": f"{ROOT}{os.pathsep}{broken}"})
    assert not report["made"] and report["identity"] == "shipped"
    assert "PyYAML" in str(report["reason"]), report
    assert PROGRESS.format(installed()) in stderr and ": failed after" in stderr
    assert f"using the shipped operator data of torch 2.12.0 under torch {installed()}" in stderr
    assert not [p for p in (tmp_path / "cache" / "opdata").iterdir() if not p.name.endswith(".lock")]


@pytest.mark.opdata_torch  # made data equals the shipped only under the shipped release
def test_two_processes_make_the_data_once(tmp_path: Path, cheap_shipped: Path) -> None:
    env = {key: value for key, value in os.environ.items() if key != "PPY_QUIET"}
    env.update({"PPY_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(ROOT)})
    command = [sys.executable, "-c", SCRIPT, str(cheap_shipped)]
    both = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)]
    outputs = [process.communicate(timeout=600) for process in both]
    assert [process.returncode for process in both] == [0, 0], outputs
    reports = [json.loads(out.splitlines()[-1]) for out, _ in outputs]
    assert reports[0] == reports[1] and reports[0]["made"]
    assert sum(PROGRESS.format(installed()) in err for _, err in outputs) == 1, outputs
    assert_is_the_shipped_data(tmp_path / "cache")


@pytest.mark.opdata_torch  # made data equals the shipped only under the shipped release
def test_the_shipped_release_reads_the_shipped_files_and_touches_no_cache(tmp_path: Path) -> None:
    report, stderr = run(SHIPPED_DATA, tmp_path / "cache")
    assert not report["made"] and report["identity"] == "shipped" and report["reason"] is None
    assert report["data"] == str(SHIPPED_DATA) and report["sources"] == str(SHIPPED_SOURCES)
    assert "ppy:" not in stderr and not (tmp_path / "cache").exists()
