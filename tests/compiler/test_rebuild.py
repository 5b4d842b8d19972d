"""Editing a file rebuilds only what changed: each region is a module of its own, keyed by its C++.

A region whose C++ is unchanged (an edit elsewhere in the file, or lines
added above it) is not rebuilt; a comment reworded is a cache hit that models
nothing; a region's traceback follows it to where it now stands.
"""

from __future__ import annotations

import json
import traceback
from collections.abc import Iterator
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from tests.support.session_cache import seeded_cache  # noqa: E402
from tests.support.generated import load_module  # noqa: E402
from ppy import runtime  # noqa: E402
from ppy_compile import build  # noqa: E402

SOURCE = '''import ppy
import torch


@ppy.opt(0)
def first(x: torch.Tensor) -> torch.Tensor:
    return x + 1  # the first region


@ppy.opt(0)
def second(x: torch.Tensor) -> torch.Tensor:
    return x * 2


@ppy.opt(0)
def third(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    y = x - 1
    return y @ w
'''


def _modules(cache: Path) -> dict[str, list[str]]:
    """The cache's region modules: entry name -> the regions it holds."""
    found = {}
    for entry in (cache / "builds").iterdir():
        manifest = entry / "manifest.json"
        if not entry.name.startswith(".") and manifest.exists():
            data = json.loads(manifest.read_text())
            if data.get("kind") == "module":
                found[entry.name] = sorted(data["regions"])
    return found


def _build(path: Path, text: str) -> build.BuiltModule:
    path.write_text(text, encoding="utf-8")
    return build.build_module(str(path), text)


@pytest.fixture(scope="module")
def built_once(tmp_path_factory: pytest.TempPathFactory, toolchain_entries: list[str]) -> Iterator[tuple[Path, Path]]:
    """The file and a cache of this module's own, where the file's three regions are built once."""
    folder = tmp_path_factory.mktemp("rebuild")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PPY_CACHE_DIR", str(seeded_cache(folder / "cache", toolchain_entries)))
        path = folder / "layers.py"
        assert set(_build(path, SOURCE).functions) == {"first:5", "second:10", "third:15"}
        yield path, folder / "cache"


@pytest.fixture
def project(built_once: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The file as first written (each test edits it), its cache as the environment's."""
    path, cache = built_once
    monkeypatch.setenv("PPY_CACHE_DIR", str(cache))
    monkeypatch.delenv("PPY_QUIET", raising=False)  # the build's progress line is what some tests read
    path.write_text(SOURCE, encoding="utf-8")
    yield path
    path.write_text(SOURCE, encoding="utf-8")


@pytest.fixture
def cache_dir(built_once: tuple[Path, Path]) -> Path:
    return built_once[1]


def test_editing_one_region_rebuilds_only_it(project: Path, cache_dir: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    before = _modules(cache_dir)
    assert sorted(name for names in before.values() for name in names) == ["first", "second", "third"]
    capsys.readouterr()
    built = _build(project, SOURCE.replace("return x * 2", "return x * 3"))
    added = {name: region for name, region in _modules(cache_dir).items() if name not in before}
    assert list(added.values()) == [["second"]]
    assert "ppy: building 1 region of layers.py (-O0; 2 unchanged)" in capsys.readouterr().err
    assert torch.equal(built.functions["second:10"](torch.ones(2)), torch.full((2,), 3.0))
    # The others are the very modules built before.
    assert {built.cpp_sources[key].parent.name for key in ("first:5", "third:15")} <= set(before)


def test_a_reworded_comment_models_nothing(project: Path, cache_dir: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    def modelled(*args: object) -> None:
        raise AssertionError("a comment-only edit modelled the file again")

    monkeypatch.setattr(build, "_model_all", modelled)
    edited = SOURCE.replace("# the first region", "# the first region, reworded at length") + "# a new last line\n"
    assert set(_build(project, edited).functions) == {"first:5", "second:10", "third:15"}


def test_a_suppression_comment_is_not_a_mere_comment(project: Path) -> None:
    """`# ppy: ignore` changes what runs compiled, so adding one is a new index entry (modelled again)."""
    edited = SOURCE.replace("# the first region", "# ppy: ignore[ppy-loop]")
    assert build.index_key(str(project), edited, build.BuildOptions()) != \
        build.index_key(str(project), SOURCE, build.BuildOptions())


def test_a_region_that_moved_is_not_rebuilt_and_its_traceback_follows(
        project: Path, cache_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    before = _modules(cache_dir)
    moved = SOURCE.replace("import torch\n", "import torch\n\n# Two lines added above every region:\n# none is rebuilt.\n")
    capsys.readouterr()
    built = _build(project, moved)
    assert _modules(cache_dir) == before
    assert "ppy: building" not in capsys.readouterr().err
    assert set(built.functions) == {"first:8", "second:13", "third:18"}
    observer = runtime._observer
    runtime.set_observer(None)  # the compiled entry itself, not the verifier's comparison
    try:
        module = load_module(project, "moved_layers")
        assert module.third.build()
        with pytest.raises(RuntimeError) as caught:
            module.third(torch.ones(2, 3), torch.ones(4, 5))
    finally:
        runtime.set_observer(observer)
    last = traceback.extract_tb(caught.value.__traceback__)[-1]
    assert (last.filename, last.lineno, last.name) == (str(project), 21, "third")
    assert "line 21: return y @ w" in str(caught.value)


def test_a_record_naming_another_module_is_not_believed(project: Path, cache_dir: Path) -> None:
    """Which module holds a region is read back only if that module's own manifest lists the region."""
    from ppy_compile.cache import Cache

    cache = Cache.open(cache_dir)
    holders = sorted((cache_dir / "holders").iterdir())
    modules = {cache.read_holder(path.name) for path in holders}
    assert len(holders) >= 3 and all(key is not None for key in modules)
    for path in holders:
        others = sorted(modules - {cache.read_holder(path.name)})
        if others:
            path.write_text(others[0])
            assert build._holder(cache, path.name) is None
    path = holders[0]
    path.write_text("../../elsewhere")
    assert cache.read_holder(path.name) is None and not path.exists()  # not a key: discarded


def test_prune_keeps_only_records_their_modules_confirm(project: Path, cache_dir: Path) -> None:
    from ppy_compile.cache import Cache

    cache = Cache.open(cache_dir)
    cache.clear()  # modules and records as a build makes them, whatever an earlier test did to them
    _build(project, SOURCE)
    planted = cache_dir / "holders" / ("0" * 64)
    planted.write_text(next(iter(_modules(cache_dir))))  # a real module, which does not list this digest
    kept = {path.name for path in (cache_dir / "holders").iterdir()} - {planted.name}
    cache.prune()
    assert not planted.exists()
    assert len(kept) == 3 and {path.name for path in (cache_dir / "holders").iterdir()} == kept
    assert all(build._holder(cache, name) is not None for name in kept)


def test_prune_removes_what_a_killed_writer_of_a_record_left(cache_dir: Path) -> None:
    import os
    import time

    from ppy_compile.cache import STALE_SECONDS, Cache

    left = [cache_dir / "holders" / ".holder-0123456789ab", cache_dir / "index" / ".index-0123456789ab"]
    for path in left:
        path.write_text("half")
        past = time.time() - STALE_SECONDS - 60
        os.utime(path, (past, past))
    Cache.open(cache_dir).prune()
    assert not any(path.exists() for path in left)


def test_a_region_runs_the_text_it_was_defined_from(project: Path) -> None:
    """The compiled code is the file's text when the region was defined: an edit reloaded compiles anew, and
    an edit not yet imported leaves the region on the Python that is loaded."""
    from ppy.runtime import RegionFallbackWarning

    observer = runtime._observer
    runtime.set_observer(None)  # the compiled entry itself, not the verifier's comparison
    try:
        first = load_module(project, "defined_first")
        assert torch.equal(first.second(torch.ones(2)), torch.full((2,), 2.0)) and first.second.__ppy_region__
        project.write_text(SOURCE.replace("return x * 2", "return x * 3"), encoding="utf-8")
        reloaded = load_module(project, "reloaded")  # as importlib.reload or autoreload do after an edit
        assert torch.equal(reloaded.second(torch.ones(2)), torch.full((2,), 3.0)) and reloaded.second.__ppy_region__
        imported = load_module(project, "edited_after_import")
        project.write_text(SOURCE.replace("return x * 2", "return x * 4"), encoding="utf-8")
        with pytest.warns(RegionFallbackWarning, match="changed since it was imported"):
            assert torch.equal(imported.second(torch.ones(2)), torch.full((2,), 3.0))
        assert not imported.second.__ppy_region__
    finally:
        runtime.set_observer(observer)
