"""The one build cache every test, and every process a test starts, shares: set up once, when first imported."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Every test, and every process a test starts, shares this cache: a module is
# built once per session (and kept between local runs; CI starts empty).
# PPY_TEST_CACHE_DIR names another (bench/gpu_run.py's, under /tmp, shared with its own builds).
if os.environ.get("PPY_TEST_CACHE_DIR"):
    SESSION_CACHE = Path(os.environ["PPY_TEST_CACHE_DIR"])
    SESSION_CACHE.mkdir(parents=True, exist_ok=True, mode=0o700)
else:
    SESSION_CACHE = ROOT / ".ppy-cache" / "tests"
    SESSION_CACHE.mkdir(parents=True, exist_ok=True, mode=0o700)
    os.chmod(SESSION_CACHE.parent, 0o700)


def _trusted(folder: Path) -> bool:
    from ppy_check import safedir

    try:
        os.close(safedir.open_dir(folder))
    except (safedir.Untrusted, OSError):
        return False
    return True


if not _trusted(SESSION_CACHE):
    # A checkout another user owns (as some CI runners mount it): the cache would
    # refuse it and every process would build alone. Use one of our own instead.
    SESSION_CACHE = Path(tempfile.mkdtemp(prefix="ppy-test-cache-"))
    atexit.register(shutil.rmtree, SESSION_CACHE, True)
os.environ["PPY_CACHE_DIR"] = str(SESSION_CACHE)
# ppy-check's kept results (ppy_check/result_cache.py) would answer a test that patches the checker in-process
# with what an unpatched run found; tests/checker/test_result_cache.py turns them on for itself.
os.environ["PPY_CHECK_NO_CACHE"] = "1"
os.environ.setdefault("PPY_QUIET", "1")
# The suite asks for compiled code on the first call; tests/compiler/test_background.py covers background builds.
os.environ.setdefault("PPY_BUILD", "wait")


def seeded_cache(root: Path, toolchain_entries: list[str]) -> Path:
    """A new cache at ``root`` holding only the session's once-per-torch artifacts: its builds (hard links) and,
    under a torch other than the shipped op data's, the op data made for it (copies: a test may alter its own).
    Without the op data, a region's first call in such a cache would wait while it is made, once per machine and
    torch release, which is not what a test of a first call measures."""
    from ppy_check.installed_opdata import FOLDER, in_use
    from ppy_compile.cache import Cache

    cache = Cache.open(root)
    for key in toolchain_entries:
        shutil.copytree(SESSION_CACHE / "builds" / key, cache.build_dir(key), copy_function=os.link)
    data = in_use()
    if data.made and data.data.parent.parent == SESSION_CACHE / FOLDER:
        (root / FOLDER).mkdir(mode=0o700, exist_ok=True)
        shutil.copytree(data.data.parent, root / FOLDER / data.data.parent.name)
    return root
