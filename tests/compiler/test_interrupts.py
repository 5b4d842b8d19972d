"""Builds stopped from outside (a signal to ninja or the compiler, Ctrl-C, a suspended peer, cache maintenance
while a build runs): none leaves a verdict on the regions, none hangs, and the next run compiles and answers as
Python does."""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.process_table import descendants

from ppy.cli import main as ppy_main
from ppy_compile import index, pipeline
from ppy_compile import cache as caches
from ppy_compile.cache import Cache, LockWaitEnded

HERE = Path(__file__).resolve().parents[1]
ROOT = HERE.parent

MODEL = '''
import ppy, torch


@ppy.opt(1)
def shifted(x: torch.Tensor) -> torch.Tensor:
    return torch.tanh(x) * 3 - x


@ppy.opt(1)
def scaled(x: torch.Tensor, k: float) -> torch.Tensor:
    return x * k + 1
'''

# Calls both regions, says whether they ran compiled, and prints what they answered.
PROGRAM = """
    import signal, sys, torch, warnings
    # Ctrl-C as a terminal's program gets it: a suite started in the background (`make test &` in a script)
    # hands its children SIGINT ignored, which Python and, through exec, ninja and the compilers would keep.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    sys.path.insert(0, {folder!r})
    warnings.simplefilter("always")
    import model
    x = torch.linspace(-2, 2, 5)
    if {build!r}:
        model.shifted.build(); model.scaled.build()
    answer = [round(v, 4) for v in (model.shifted(x) + model.scaled(x, 0.5)).tolist()]
    print(model.shifted.__ppy_region__ and model.scaled.__ppy_region__, answer, flush=True)
"""

def _python_answer() -> str:
    import torch

    x = torch.linspace(-2, 2, 5)
    return str([round(v, 4) for v in ((torch.tanh(x) * 3 - x) + (x * 0.5 + 1)).tolist()])


def _environment(cache: Path, **env: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "PPY_CACHE_DIR": str(cache), "PPY_QUIET": "", **env}


def _start(folder: Path, cache: Path, wait: bool = True, **env: str) -> subprocess.Popen[str]:
    """The program in a session of its own (its process group is what a terminal's Ctrl-C or Ctrl-Z reaches)."""
    code = textwrap.dedent(PROGRAM.format(folder=str(folder), build=wait))
    return subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=_environment(cache, PPY_BUILD="wait" if wait else "background", **env),
                            start_new_session=True)


def _run(folder: Path, cache: Path, wait: bool = True, **env: str) -> subprocess.CompletedProcess[str]:
    program = _start(folder, cache, wait, **env)
    out, err = program.communicate(timeout=600)
    return subprocess.CompletedProcess(program.args, program.returncode, out, err)


def _next_run_compiles(folder: Path, cache: Path) -> None:
    """After whatever stopped a build: the next run builds, runs compiled, and answers as Python does."""
    again = _run(folder, cache)
    assert again.returncode == 0, again.stderr
    assert again.stdout.strip() == f"True {_python_answer()}", again.stdout + again.stderr
    assert "runs as Python" not in again.stderr, again.stderr


def _nothing_recorded(folder: Path, cache: Path) -> None:
    """No verdict on the regions: no index entry for the file, no log that reads as a failed build."""
    from ppy.runtime import build_options

    opened = Cache.open(cache)
    origin = str(folder / "model.py")
    key = index.index_key(origin, (folder / "model.py").read_text(), build_options())
    assert opened.read_index(key) is None
    assert opened.logs() == []
    assert opened.info()["staging"]["logs"][0] == 0


def _wait_for(program: subprocess.Popen[str], name: str) -> int:
    """The pid of the program's first descendant called ``name`` (a compile, once it runs)."""
    deadline = time.monotonic() + 300
    while True:
        assert program.poll() is None, program.communicate()
        assert time.monotonic() < deadline, f"no {name} started"
        found = [pid for pid, found in descendants(program.pid).items() if found.startswith(name)]
        if found:
            return found[0]
        time.sleep(0.01)


@contextlib.contextmanager
def _reaped(program: subprocess.Popen[str]) -> Iterator[None]:
    """Whatever the test does, nothing it started keeps running (or stopped) after it."""
    try:
        yield
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(program.pid, signal.SIGCONT)
        if program.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(program.pid, signal.SIGKILL)
            program.communicate()


@pytest.fixture
def model(tmp_path: Path) -> Path:
    folder = tmp_path / "program"
    folder.mkdir()
    (folder / "model.py").write_text(MODEL, encoding="utf-8")
    return folder


# --- a step that a signal ended -------------------------------------------------------------------------


def _compiler_that(tmp_path: Path, body: str) -> Path:
    compiler = tmp_path / "c++"
    compiler.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
    compiler.chmod(0o755)
    return compiler


@pytest.mark.parametrize("body", [
    pytest.param("kill -KILL $$", id="compiler-SIGKILL"),  # the OOM killer's way
    pytest.param("kill -INT $$", id="compiler-SIGINT"),
    pytest.param("kill -TERM $$", id="compiler-SIGTERM"),
    pytest.param("kill -INT $PPID", id="ninja-SIGINT"),  # ninja runs the command: its parent
    pytest.param("kill -KILL $PPID", id="ninja-SIGKILL"),
    pytest.param("echo \"c++: fatal error: cannot execute 'cc1plus': execvp: No such file or directory\" >&2; exit 1",
                 id="missing-tool"),
])
def test_a_build_stopped_from_outside_records_nothing(fresh_cache: Path, model: Path, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch, body: str) -> None:
    """No verdict, no log: the build raises BuildInterrupted (not CompileError), and the next build compiles."""
    from ppy_compile import toolchain as toolchains
    from ppy_compile.toolchain import BuildInterrupted, CompileError

    real = toolchains.toolchain()
    stopped = dataclasses.replace(real, cxx=str(_compiler_that(tmp_path, body)))
    monkeypatch.setattr(toolchains, "toolchain", lambda: stopped)
    cache = Cache.open(fresh_cache)
    origin = str(model / "model.py")
    with pytest.raises(BuildInterrupted, match="the build was stopped") as caught:
        pipeline.build_module(origin, MODEL, cache)
    assert not isinstance(caught.value, CompileError)
    assert "nothing was recorded" in str(caught.value)
    _nothing_recorded(model, fresh_cache)
    monkeypatch.setattr(toolchains, "toolchain", lambda: real)
    _next_run_compiles(model, fresh_cache)


def test_a_compiler_error_is_still_a_verdict_with_its_log(tmp_path: Path) -> None:
    """The other side of the line: the compiler ran to its end and printed an error for the file."""
    from ppy_compile.toolchain import CompileError, CompilerCrash, run_ninja, toolchain, write_ninja

    folder = tmp_path / "staging"
    folder.mkdir()
    (folder / "bad.cpp").write_text("int f() { return not_declared; }\n", encoding="utf-8")
    write_ninja(folder, toolchain(), "bad.cpp", "bad.so", 0, [])
    with pytest.raises(CompileError) as caught:
        run_ninja(folder, toolchain())
    assert not isinstance(caught.value, CompilerCrash) and caught.value.errors[0][0] == 1
    assert "not_declared" in (tmp_path / "staging.log").read_text()


# --- real signals to a real build -----------------------------------------------------------------------


@pytest.mark.parametrize("target, signum", [
    pytest.param("cc1", signal.SIGKILL, id="compiler-SIGKILL"),
    pytest.param("ninja", signal.SIGINT, id="ninja-SIGINT"),
    pytest.param("ninja", signal.SIGKILL, id="ninja-SIGKILL"),
    pytest.param("group", signal.SIGINT, id="Ctrl-C"),
])
def test_a_signal_mid_build_leaves_no_verdict(fresh_cache: Path, model: Path, target: str, signum: int) -> None:
    program = _start(model, fresh_cache)
    with _reaped(program):
        compiler = _wait_for(program, "cc1")
        if target == "group":
            os.killpg(program.pid, signum)
        else:
            os.kill(compiler if target == "cc1" else _wait_for(program, "ninja"), signum)
        out, err = program.communicate(timeout=300)
    if target == "group":  # the program itself was interrupted
        assert program.returncode != 0 and "KeyboardInterrupt" in err
    else:
        assert program.returncode == 0, err
        assert out.strip() == f"False {_python_answer()}", out + err  # this run: Python's answers
        assert "the build was stopped" in err and "nothing was recorded" in err, err
    assert "does not compile" not in err and "ppy bug" not in err, err
    _nothing_recorded(model, fresh_cache)
    _next_run_compiles(model, fresh_cache)


def test_ctrl_c_at_exit_skips_the_build_and_leaves_nothing(fresh_cache: Path, model: Path) -> None:
    """The program's last output, then one line saying ppy finishes its builds; Ctrl-C there ends it at once,
    with no traceback, and nothing that later reads as a failed build."""
    program = _start(model, fresh_cache, wait=False)
    with _reaped(program):
        assert program.stdout is not None and program.stderr is not None
        assert program.stdout.readline().strip() == f"False {_python_answer()}"
        lines: list[str] = []
        while "finishing" not in (line := program.stderr.readline()):
            assert line, "".join(lines)
            lines.append(line)
        assert line.strip() == "ppy: finishing 1 build so the next run starts compiled (Ctrl-C skips)"
        os.killpg(program.pid, signal.SIGINT)  # a terminal's Ctrl-C: the program, ninja and the compilers
        out, err = program.communicate(timeout=120)
    assert "Traceback" not in err and "failed" not in err, err
    assert "ppy: skipped; the next run builds them" in err
    _nothing_recorded(model, fresh_cache)
    _next_run_compiles(model, fresh_cache)


def test_a_program_that_ends_says_it_finishes_its_build(fresh_cache: Path, model: Path) -> None:
    """Left alone, the wait at exit finishes the build: the next run starts compiled, building nothing."""
    ended = _run(model, fresh_cache, wait=False)
    assert ended.returncode == 0, ended.stderr
    assert "ppy: finishing 1 build so the next run starts compiled (Ctrl-C skips)" in ended.stderr
    warm = _run(model, fresh_cache, wait=False)
    assert warm.stdout.strip() == f"True {_python_answer()}", warm.stdout + warm.stderr
    assert "finishing" not in warm.stderr and "background" not in warm.stderr


# --- a suspended peer -----------------------------------------------------------------------------------


def test_a_suspended_peer_neither_hangs_a_program_nor_its_exit(fresh_cache: Path, model: Path) -> None:
    """Ctrl-Z on a program mid-build: a second run answers and exits (it never waits on another process's build at
    exit); one that must wait gives up at its bound, naming the stopped process; resumed, the first finishes."""
    first = _start(model, fresh_cache)
    with _reaped(first):
        _wait_for(first, "cc1")
        os.killpg(first.pid, signal.SIGSTOP)  # what Ctrl-Z does
        second = _run(model, fresh_cache, wait=False)
        assert second.returncode == 0, second.stderr
        assert second.stdout.strip() == f"False {_python_answer()}", second.stdout + second.stderr
        assert f"process {first.pid} (stopped)" in second.stderr and "was not waited for" in second.stderr
        assert "Traceback" not in second.stderr, second.stderr
        bounded = _run(model, fresh_cache, PPY_LOCK_TIMEOUT="1")
        assert bounded.returncode == 0, bounded.stderr
        assert bounded.stdout.strip() == f"False {_python_answer()}", bounded.stdout + bounded.stderr
        assert "gave up after 1 s waiting for" in bounded.stderr and f"process {first.pid} (stopped)" in bounded.stderr
        assert "PPY_LOCK_TIMEOUT" in bounded.stderr and "Traceback" not in bounded.stderr
        os.killpg(first.pid, signal.SIGCONT)
        out, err = first.communicate(timeout=300)
    assert out.strip() == f"True {_python_answer()}", out + err
    _next_run_compiles(model, fresh_cache)


# --- cache maintenance while a build runs ---------------------------------------------------------------


def test_clear_all_and_prune_during_a_build_leave_it_whole(fresh_cache: Path, model: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """`ppy cache clear --all` then `ppy cache prune` while a module compiles: the bridge and header it compiles
    against, its locks and its staging folder all stay; the build finishes compiled."""
    program = _start(model, fresh_cache)
    with _reaped(program):
        compiler = _wait_for(program, "cc1")
        os.kill(compiler, signal.SIGSTOP)  # mid-compile for as long as the commands take
        try:
            staging = Path(os.readlink(f"/proc/{compiler}/cwd"))  # ninja runs the compiler in the staging folder
            assert staging.parent == fresh_cache / "builds" and staging.name.startswith(".")
            assert ppy_main(["cache", "clear", "--all"]) == 0
            assert ppy_main(["cache", "prune"]) == 0
            out = capsys.readouterr().out
            assert "kept 2 builds in use by a build in progress" in out, out  # the bridge and the header
            assert "removed 0 leftovers of killed builds" in out, out
            assert staging.is_dir()
            held = _open_locks(program.pid)
            assert held and all(path.exists() for path in held), held  # no lock a live build holds was removed
        finally:
            os.kill(compiler, signal.SIGCONT)
        out, err = program.communicate(timeout=300)
    assert program.returncode == 0, err
    assert out.strip() == f"True {_python_answer()}", out + err
    warm = _run(model, fresh_cache)
    assert warm.stdout.strip() == f"True {_python_answer()}" and "building" not in warm.stderr, warm.stderr


def _open_locks(pid: int) -> list[Path]:
    """The lock files process ``pid`` has open (a removed one's link ends in " (deleted)")."""
    found = []
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            if target.endswith(".lock") or target.endswith(".lock (deleted)"):
                found.append(Path(target))
    return found


# --- the lock protocol ----------------------------------------------------------------------------------

KEY = "ab" * 32

HOLDER = """
    import sys, time
    from ppy_compile.cache import Cache
    cache = Cache.open(sys.argv[1])
    with cache.locked(sys.argv[2]), cache.staging(sys.argv[2]) as folder:
        print(folder, flush=True)
        sys.stdin.readline()
"""


@contextlib.contextmanager
def _held_elsewhere(root: Path, key: str = KEY) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    """Another process holding ``key``'s lock with a staging folder open, until the block ends."""
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(HOLDER), str(root), key], text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=_environment(root))
    try:
        assert holder.stdout is not None
        yield holder, Path(holder.stdout.readline().strip())
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(holder.pid, signal.SIGCONT)
        holder.kill()
        holder.communicate()


def test_maintenance_keeps_a_held_lock_file_and_its_staging_folder(tmp_path: Path) -> None:
    cache = Cache.open(tmp_path / "cache")
    with _held_elsewhere(cache.root) as (_, staging):
        lock = cache.root / "locks" / f"{KEY}.lock"
        cache.clear(everything=True)
        assert lock.exists()
        assert cache.prune()["leftovers"] == [] and staging.is_dir()
    # Killed holding it: the lock is free, so the folder is a leftover, and a lock nobody holds is removed.
    assert len(cache.prune()["leftovers"]) == 1 and not staging.exists()
    cache.clear(everything=True)
    assert not lock.exists()


def _open_here(path: Path) -> int:
    """How many of this process's descriptors are open on ``path``."""
    count = 0
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            count += os.readlink(f"/proc/self/fd/{fd}") == str(path)
    return count


def test_a_waiter_takes_only_the_lock_file_in_place(tmp_path: Path) -> None:
    """A lock file removed while a builder waited on it is not the lock: once it has it, the builder finds it is
    no longer in place and takes the one that is, waiting while another builder holds that."""
    cache = Cache.open(tmp_path / "cache")
    lock = cache.root / "locks" / f"{KEY}.lock"
    taken = threading.Event()
    first = cache.locked(KEY)
    first.__enter__()

    def waiter() -> None:
        with cache.locked(KEY):
            taken.set()

    thread = threading.Thread(target=waiter)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while _open_here(lock) < 2:  # the first hold's descriptor, and the waiter's
            assert time.monotonic() < deadline
            time.sleep(0.01)
        os.unlink(lock)  # as an older `ppy cache clear --all` did
        with _held_elsewhere(cache.root) as _:  # a new lock file in place, held by another process
            first.__exit__(None, None, None)  # the waiter now holds the removed file: it must not count
            assert not taken.wait(0.5)
        assert taken.wait(30)
    finally:
        thread.join(30)


def test_a_wait_on_another_process_has_a_bound_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = Cache.open(tmp_path / "cache")
    monkeypatch.setenv("PPY_LOCK_TIMEOUT", "0.2")
    with _held_elsewhere(cache.root) as (holder, _):
        with pytest.raises(LockWaitEnded, match=rf"gave up after 0 s waiting for process {holder.pid} to finish"):
            with cache.locked(KEY):
                pass
        os.kill(holder.pid, signal.SIGSTOP)
        with pytest.raises(LockWaitEnded, match=rf"process {holder.pid} \(stopped\).*resume or end it"):
            with cache.locked(KEY):
                pass


def test_at_exit_no_wait_on_another_process_at_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = Cache.open(tmp_path / "cache")
    exiting = threading.Event()
    monkeypatch.setattr(caches, "_exiting", exiting)
    with _held_elsewhere(cache.root) as (holder, _):
        caches.end_waits()
        assert exiting.is_set()
        with pytest.raises(LockWaitEnded, match=rf"the program ended while process {holder.pid} was building"):
            with cache.locked(KEY):
                pass
    with cache.locked(KEY):  # free now: nothing to wait for
        pass
