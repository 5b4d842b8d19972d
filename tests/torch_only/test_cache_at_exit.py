"""The cache in a program's last moments: a build that goes on after the atexit hooks (Ctrl-C skipped the wait
for it) still has its cache folder, not a descriptor the interpreter's finalizers closed."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# The first hook registered runs last: after the finalizers' own hook, which the cache's first use registers.
PROGRAM = """
    import atexit, os, threading
    go, said = threading.Event(), []

    def build_after_the_hooks() -> None:
        go.wait()
        try:
            with cache.staging("0" * 64) as folder:
                (folder / "module.cpp").write_text("int x;")
            said.append("staged")
        except BaseException as error:
            said.append(repr(error))

    def last_hook() -> None:
        go.set()
        worker.join(30)
        os.write(1, (said[0] if said else "still building").encode())

    atexit.register(last_hook)
    from ppy_compile.cache import Cache
    cache = Cache.open({root!r})
    cache.valid("1" * 64)  # opens the root
    worker = threading.Thread(target=build_after_the_hooks, daemon=True)
    worker.start()
"""


def test_a_build_after_the_exit_hooks_still_has_its_cache_folder(tmp_path: Path) -> None:
    code = textwrap.dedent(PROGRAM.format(root=str(tmp_path / "cache")))
    ended = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                           env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert ended.returncode == 0, ended.stderr
    assert ended.stdout == "staged", ended.stdout + ended.stderr
