"""The build cache: concurrent builders, corrupted entries, unsafe or unusable folders, maintenance."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from ppy.cli import main as ppy_main
from ppy_compile.cache import Cache, CacheWarning

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

BUILD_TINY = """
    import torch, tiny
    assert tiny.scale_shift.build(), "not compiled"
    print(tiny.scale_shift(torch.ones(2), 3.0, 1).tolist())
"""


def _start(code: str, cache: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": f"{ROOT}:{HERE / 'regions'}", "PPY_CACHE_DIR": str(cache)}
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env)


def _modules(cache: Path) -> list[Path]:
    return [p for p in (cache / "builds").iterdir() if (p / "module.so").exists()]


def test_concurrent_builders_make_one_good_build(fresh_cache: Path) -> None:
    builders = [_start(BUILD_TINY, fresh_cache) for _ in range(3)]
    results = [b.communicate(timeout=300) for b in builders]
    for builder, (out, err) in zip(builders, results):
        assert builder.returncode == 0, err
        assert out.strip() == "[4.0, 4.0]"
    assert len(_modules(fresh_cache)) == 1
    leftovers = [p for p in (fresh_cache / "builds").iterdir() if p.name.startswith(".") and p.is_dir()]
    assert leftovers == []


def test_corrupted_entry_is_detected_and_rebuilt(fresh_cache: Path) -> None:
    first = _start(BUILD_TINY, fresh_cache)
    assert first.communicate(timeout=300)[0].strip() == "[4.0, 4.0]"
    (built,) = _modules(fresh_cache)
    library = built / "module.so"
    library.write_bytes(library.read_bytes()[: 1000])  # truncated, as by a crash mid-copy
    again = _start(BUILD_TINY, fresh_cache)
    out, err = again.communicate(timeout=300)
    assert again.returncode == 0, err
    assert out.strip() == "[4.0, 4.0]"
    assert Cache(fresh_cache).valid(built.name) is not None


def test_folder_other_users_can_write_is_refused(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    with pytest.warns(CacheWarning, match="other users can write to it"):
        cache = Cache.open(shared)
    assert cache.root != shared


def test_folder_that_cannot_be_created_falls_back(tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    with pytest.warns(CacheWarning, match="cannot be created"):
        cache = Cache.open(blocker / "cache")
    assert cache.root.is_dir() and os.access(cache.root, os.W_OK)


@pytest.mark.skipif(hasattr(os, "geteuid") and os.geteuid() == 0, reason="root writes anywhere")
def test_read_only_folder_falls_back(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    os.chmod(locked, 0o500)
    with pytest.warns(CacheWarning, match="not writable"):
        Cache.open(locked)


def test_cache_info_and_clear(fresh_cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    entries = len(list((fresh_cache / "builds").iterdir()))
    assert ppy_main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert str(fresh_cache) in out and f"builds: {entries}" in out
    assert ppy_main(["cache", "clear"]) == 0
    assert f"removed {entries} builds" in capsys.readouterr().out
    assert list((fresh_cache / "builds").iterdir()) == []


def test_ppy_build_ahead_of_time(fresh_cache: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = ppy_main(["build", str(HERE / "regions" / "tiny.py"), str(HERE / "fixtures" / "runtime")])
    err = capsys.readouterr().err
    assert code == 1  # the fixture folder holds a region that breaks the rules
    assert "ppy-loop" in err and "2 of 3 regions compiled, in 2 files" in err
    assert len(_modules(fresh_cache)) == 2
