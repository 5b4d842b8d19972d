"""Shared set-up: one build cache for the whole test session, so nothing is built twice."""

from __future__ import annotations

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent / "regions"))

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
    from ppy_compile import safedir

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
os.environ.setdefault("PPY_QUIET", "1")
# The suite asks for compiled code on the first call; tests/test_background.py covers background builds.
os.environ.setdefault("PPY_BUILD", "wait")


@pytest.fixture(scope="session")
def toolchain_entries() -> list[str]:
    """The once-per-torch builds (bridge, precompiled header), built or found once in the session cache."""
    from ppy_compile.build import _ensure_bridge, _ensure_pch, use_pch
    from ppy_compile.cache import Cache

    cache = Cache.open(SESSION_CACHE)
    keys = [_ensure_bridge(cache)]
    if use_pch():
        keys.append(_ensure_pch(cache))
    return keys


@pytest.fixture
def fresh_cache(tmp_path: Path, toolchain_entries: list[str], monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache of this test's own, holding only the session's once-per-torch builds (hard links)."""
    root = seeded_cache(tmp_path / "cache", toolchain_entries)
    monkeypatch.setenv("PPY_CACHE_DIR", str(root))
    return root


def seeded_cache(root: Path, toolchain_entries: list[str]) -> Path:
    """A new cache at ``root`` holding only the session's once-per-torch builds (hard links)."""
    from ppy_compile.cache import Cache

    cache = Cache.open(root)
    for key in toolchain_entries:
        shutil.copytree(SESSION_CACHE / "builds" / key, cache.build_dir(key), copy_function=os.link)
    return root


# What each test file needs, so that a run can pick by need (`pytest -m checker`).
NEEDS = {
    "test_checker_budgets.py": "checker", "test_checker_robustness.py": "checker", "test_cli.py": "checker",
    "test_layers.py": "checker", "test_memo.py": "checker",
    "test_progress.py": "checker", "test_refusals.py": "checker", "test_rules.py": "checker", "test_source.py": "checker",
    "test_explain_show.py": "torch", "test_opdata.py": "torch",
    "test_background.py": "compiler", "test_observe.py": "compiler", "test_build_steps.py": "compiler", "test_cache.py": "compiler",
    "test_compile_ops.py": "compiler", "test_concurrency.py": "compiler", "test_corpus.py": "compiler",
    "test_decorators.py": "compiler",
    "test_escaping.py": "compiler", "test_fast_path.py": "compiler", "test_gpt2.py": "compiler",
    "test_interrupts.py": "compiler",
    "test_host_math_properties.py": "compiler", "test_host_numbers.py": "compiler", "test_library_messages.py": "compiler",
    "test_sequence_properties.py": "compiler", "test_opinfo.py": "compiler", "test_operator_exceptions.py": "compiler",
    "test_properties.py": "compiler", "test_rebinding.py": "compiler", "test_rebuild.py": "compiler", "test_runtime.py": "compiler",
    "test_security.py": "compiler", "test_torch_python.py": "compiler", "test_tracebacks.py": "compiler",
    "test_verify_compare.py": "compiler",
    "test_file_selection.py": "integration", "test_gpu_run.py": "integration", "test_mypy_plugin.py": "integration",
    "test_no_torch.py": "integration", "test_packaging.py": "integration",
    "test_pytest_plugin.py": "integration", "test_torch_stack.py": "integration", "test_typing.py": "integration",
    "test_verify_collect.py": "integration", "test_verify_config.py": "integration",
    "test_verify_regions.py": "integration",
}


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        need = NEEDS.get(item.path.name) if item.path is not None else None
        if need is not None:
            item.add_marker(need)

