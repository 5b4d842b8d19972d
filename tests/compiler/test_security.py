"""No code another user could have planted runs: what the cache trusts, tried as an attacker would.

The suite runs as root in CI. "Another user" is nobody, acting in a forked
child (tests/support/other_user.py), so what they plant is really theirs.

A swap between a check and a use cannot be timed from a test; what closes it
is the mechanism, tested here directly: the cache is reached from one open,
checked descriptor of its root (so renaming a folder afterwards changes
nothing), every level below is opened relative to the one above with
O_NOFOLLOW and checked through its own descriptor, and a shared object is
loaded through the descriptor its digest was computed from
(/proc/self/fd/N names that open inode, not a path). The tests swap files at
exactly the moment a race would, and check that each level refuses a link,
another owner and a mode others can write.
"""

from __future__ import annotations

import ctypes
import hashlib
import json
import os
import shutil
import signal
import subprocess
import warnings
from pathlib import Path

import pytest

import ppy_compile.build
from tests.support.other_user import NOBODY, as_nobody, is_root, shared_folder
from ppy_compile.build import _load_bridge
from ppy_compile.cache import Cache, CacheError, CacheWarning, sha256_fd

KEY = "a" * 64  # any 64 hex digits: the cache does not care what was hashed

@pytest.fixture(autouse=True)
def _nothing_loaded_yet(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test loads its own libraries under one key: none may find another test's already loaded."""
    monkeypatch.setattr(ppy_compile.build, "_loaded", {})


needs_root = pytest.mark.skipif(not is_root(), reason="changing owners needs root (CI runs the suite as root)")


def _library(path: Path, marker: Path, word: str) -> Path:
    """A shared object that appends ``word`` to ``marker`` when loaded: proof of which one ran."""
    source = path.with_suffix(".c")
    source.write_text(
        "#include <stdio.h>\n"
        "__attribute__((constructor)) static void loaded(void) {\n"
        f'    FILE* out = fopen("{marker}", "a");\n'
        f'    if (out) {{ fputs("{word}\\n", out); fclose(out); }}\n'
        "}\n"
    )
    subprocess.run(["cc", "-shared", "-fPIC", "-o", str(path), str(source)], check=True)
    return path


@pytest.fixture
def libraries(tmp_path: Path) -> tuple[Path, Path, Path]:
    marker = tmp_path / "loaded.txt"
    return _library(tmp_path / "good.so", marker, "good"), _library(tmp_path / "evil.so", marker, "evil"), marker


def _publish(cache: Cache, library: Path, key: str = KEY) -> None:
    with cache.locked(key), cache.staging(key) as folder:
        shutil.copy(library, folder / "lib.so")
        cache.publish(key, folder, "lib.so", {"kind": "bridge", "soname": "ppy_test.so"})


def _manifest_for(data: bytes) -> str:
    return json.dumps({"artifact": "lib.so", "sha256": hashlib.sha256(data).hexdigest(), "size": len(data),
                       "kind": "bridge", "soname": "ppy_test.so"})


# --- folders another user can change -------------------------------------------


def test_entry_planted_through_a_world_writable_folder_never_loads(libraries: tuple[Path, Path, Path]) -> None:
    _, evil, marker = libraries
    with shared_folder() as base:
        root = base / "cache"
        Cache.open(root)
        os.chmod(root, 0o755)
        os.chmod(root / "builds", 0o777)  # the mistake: anyone may add entries
        shutil.copy(evil, base / "evil.so")
        os.chmod(base / "evil.so", 0o644)

        def plant() -> int:
            # With a manifest carrying the right digest, as the attacker wrote it.
            entry = root / "builds" / KEY
            entry.mkdir()
            data = (base / "evil.so").read_bytes()
            (entry / "lib.so").write_bytes(data)
            (entry / "manifest.json").write_text(_manifest_for(data))
            return entry.stat().st_uid

        assert as_nobody(plant) == NOBODY.pw_uid
        with pytest.warns(CacheWarning, match=f"not using the cache folder {root}: other users can write to {root}/builds"):
            refused = Cache.open(root)
        assert refused.root != root
        with pytest.raises(CacheError, match="other users can write"):
            Cache(root).open_artifact(KEY)
        # The mode put right, the entry nobody made is still not root's to load.
        os.chmod(root / "builds", 0o755)
        with pytest.raises(FileNotFoundError):
            _load_bridge(Cache.open(root), KEY)
        assert not (root / "builds" / KEY).exists()
    assert not marker.exists()


def test_cache_inside_another_users_folder_is_refused() -> None:
    with shared_folder() as base:
        shared = base / "shared"
        shared.mkdir()
        os.chown(shared, NOBODY.pw_uid, NOBODY.pw_gid)  # nobody's folder
        root = shared / "ppy"
        root.mkdir(mode=0o700)  # root's own cache, but nobody can rename it and put theirs in its place
        with pytest.warns(CacheWarning, match=rf"{shared} is owned by another user \(uid {NOBODY.pw_uid}\)"):
            cache = Cache.open(root)
        assert cache.root != root

        def swap() -> None:
            os.rename(root, shared / "aside")
            os.mkdir(root, 0o700)

        as_nobody(swap)  # what the refusal guards against: nobody can do this at any time
        with pytest.warns(CacheWarning, match="is owned by another user"):
            assert Cache.open(root).root != root


@pytest.mark.parametrize("points_to", ["their folder", "a folder root made"])
def test_another_users_link_as_the_cache_root_is_refused(points_to: str) -> None:
    with shared_folder() as base:
        sticky = base / "tmp"
        sticky.mkdir()
        os.chmod(sticky, 0o1777)  # like /tmp
        roots = base / "roots"
        roots.mkdir(mode=0o700)  # a folder that passes every rule

        def plant() -> None:
            theirs = sticky / "theirs"
            theirs.mkdir(mode=0o700)
            (sticky / "ppy").symlink_to(theirs if points_to == "their folder" else roots)

        as_nobody(plant)
        with pytest.warns(CacheWarning, match=r"ppy: it is a symbolic link owned by another user \(uid 65534\), who can point it anywhere"):
            cache = Cache.open(sticky / "ppy")
        assert cache.root != sticky / "ppy"
        assert not (roots / "builds").exists()


def test_a_folder_planted_in_a_sticky_folder_is_refused() -> None:
    with shared_folder() as base:
        sticky = base / "tmp"
        sticky.mkdir()
        os.chmod(sticky, 0o1777)
        as_nobody(os.mkdir, sticky / "ppy", 0o700)  # made before root's first run
        with pytest.warns(CacheWarning, match=rf"it is owned by another user \(uid {NOBODY.pw_uid}\)"):
            assert Cache.open(sticky / "ppy").root != sticky / "ppy"


def test_own_link_to_a_safe_folder_is_followed(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(real)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        cache = Cache.open(tmp_path / "link")
    assert cache.root == tmp_path / "link" and (real / "builds").is_dir()


def test_own_link_into_a_folder_others_can_write_is_refused(tmp_path: Path) -> None:
    open_to_all = tmp_path / "open"
    open_to_all.mkdir()
    os.chmod(open_to_all, 0o777)  # not sticky: anyone may rename what is inside
    (open_to_all / "ppy").mkdir(mode=0o700)
    (tmp_path / "link").symlink_to(open_to_all / "ppy")
    with pytest.warns(CacheWarning, match=f"other users can write to {open_to_all}"):
        assert Cache.open(tmp_path / "link").root != tmp_path / "link"


# --- every level below the root -------------------------------------------------

LEVELS = {  # what each level is, relative to the cache root
    "root": "",
    "builds": "builds",
    "entry": f"builds/{KEY}",
    "manifest": f"builds/{KEY}/manifest.json",
    "artifact": f"builds/{KEY}/lib.so",
}


def _attack(target: Path, how: str) -> None:
    if how == "link":  # the real thing moved aside, a link (root's own) in its place
        aside = target.with_name(target.name + ".real")
        os.rename(target, aside)
        target.symlink_to(aside)
    elif how == "owner":
        os.lchown(target, NOBODY.pw_uid, NOBODY.pw_gid)
    else:
        os.chmod(target, 0o777 if target.is_dir() else 0o666)


# The root may be one's own link (test_own_link_to_a_safe_folder_is_followed);
# another user's is test_another_users_link_as_the_cache_root_is_refused.
ATTACKS = [(level, how) for level in LEVELS for how in ("link", "owner", "mode") if (level, how) != ("root", "link")]


@needs_root
@pytest.mark.parametrize(("level", "how"), ATTACKS)
def test_every_level_refuses_a_link_another_owner_and_a_mode_others_can_write(
        tmp_path: Path, libraries: tuple[Path, Path, Path], level: str, how: str) -> None:
    good, _, marker = libraries
    root = tmp_path / "cache"
    _publish(Cache.open(root), good)
    _attack(root / LEVELS[level], how)
    if level in ("root", "builds"):
        with pytest.raises(CacheError):
            Cache(root).open_artifact(KEY)
        with pytest.warns(CacheWarning):
            assert Cache.open(root).root != root
    else:
        cache = Cache.open(root)
        assert cache.open_artifact(KEY) is None
        assert not os.path.lexists(root / "builds" / KEY)  # removed, to be built again
    assert not marker.exists()


@pytest.mark.parametrize("name", ["../lib.so", "/etc/passwd", ".hidden", "manifest.json", "a/b", "", None, 7, "x" * 200])
def test_an_artifact_name_must_be_a_plain_name(tmp_path: Path, libraries: tuple[Path, Path, Path], name: object) -> None:
    good, _, _ = libraries
    cache = Cache.open(tmp_path / "cache")
    _publish(cache, good)
    manifest = cache.build_dir(KEY) / "manifest.json"
    manifest.write_text(json.dumps({**json.loads(manifest.read_text()), "artifact": name}))
    assert cache.open_artifact(KEY) is None
    assert not cache.build_dir(KEY).exists()


@pytest.mark.parametrize("key", ["../../etc", "A" * 64, "a" * 63, "/" + "a" * 63, None])
def test_a_key_must_be_64_hex_digits(tmp_path: Path, key: object) -> None:
    cache = Cache.open(tmp_path / "cache")
    for use in (cache.valid, cache.build_dir, cache.read_index, cache.open_artifact):
        with pytest.raises(CacheError, match="not a cache key"):
            use(key)  # type: ignore[arg-type]


def test_a_fifo_planted_as_a_manifest_does_not_hang(tmp_path: Path, libraries: tuple[Path, Path, Path]) -> None:
    good, _, _ = libraries
    cache = Cache.open(tmp_path / "cache")
    _publish(cache, good)
    (cache.build_dir(KEY) / "manifest.json").unlink()
    os.mkfifo(cache.build_dir(KEY) / "manifest.json")
    signal.alarm(20)  # a hang fails the test instead of the suite
    try:
        assert cache.open_artifact(KEY) is None
    finally:
        signal.alarm(0)


# --- between the check and the load --------------------------------------------


def test_a_swap_after_the_check_loads_what_was_checked(tmp_path: Path, libraries: tuple[Path, Path, Path],
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    good, evil, marker = libraries
    cache = Cache.open(tmp_path / "cache")
    _publish(cache, good)
    entry = cache.build_dir(KEY)
    checked = cache.open_artifact

    def checked_then_swapped(key: str) -> object:
        artifact = checked(key)
        # The attacker wins the race every time: the entry changes right after the check.
        os.rename(entry, entry.with_name("aside"))
        entry.mkdir()
        shutil.copy(evil, entry / "lib.so")
        return artifact

    monkeypatch.setattr(cache, "open_artifact", checked_then_swapped)
    _load_bridge(cache, KEY)
    assert marker.read_text() == "good\n"


def test_the_cache_root_is_held_open_from_the_check_on(tmp_path: Path, libraries: tuple[Path, Path, Path]) -> None:
    good, evil, marker = libraries
    root = tmp_path / "cache"
    cache = Cache.open(root)
    _publish(cache, good)
    os.rename(root, tmp_path / "aside")  # the whole cache swapped after it was opened
    planted = Cache.open(root)
    _publish(planted, evil)
    artifact = cache.open_artifact(KEY)
    assert artifact is not None
    assert sha256_fd(artifact.fd) == hashlib.sha256(good.read_bytes()).hexdigest()
    ctypes.CDLL(artifact.path)
    assert marker.read_text() == "good\n"
