"""The wait at exit (ppy/runtime.py `_finish_at_exit`) and builds started while the interpreter exits: a build that
finishes in the wait and went without the precompiled header has the header made there, never abandoned; where no
thread can start (Python 3.12, in that wait), the work runs in the thread at hand; a header that fails is tried
once."""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from ppy import runtime
from ppy_compile import cache as caches
from ppy_compile import shared
from ppy_compile.at_once import at_once


class _Finishing:
    """A background build that ends during the wait, having gone without the header (what `_compile_plan` does
    on an exiting interpreter: `_precompile_after` sets `_pch_at_exit`)."""

    def __init__(self) -> None:
        self.done = threading.Event()
        threading.Timer(0.5, self._end).start()

    def _end(self) -> None:
        runtime._pch_at_exit = True
        self.done.set()


@pytest.fixture
def exit_state(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    made: list[str] = []
    # This process goes on after the test: its lock waits must not give up as a program's that exits would.
    monkeypatch.setattr(caches, "_exiting", threading.Event())
    monkeypatch.setattr(runtime, "_started", [])
    monkeypatch.setattr(runtime, "_pch_at_exit", False)
    monkeypatch.setattr(runtime, "_pch_failed", False)
    monkeypatch.setattr(runtime, "_make_pch", lambda: made.append("header"))
    monkeypatch.delenv("PPY_QUIET", raising=False)
    return made


def test_a_build_that_finishes_in_the_wait_at_exit_has_the_header_made_there(
        exit_state: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    runtime._started.append(_Finishing())  # type: ignore[arg-type]
    runtime._finish_at_exit()
    assert exit_state == ["header"]
    err = capsys.readouterr().err
    assert err.splitlines() == ["ppy: finishing 1 build so the next run starts compiled (Ctrl-C skips)",
                                "ppy: finishing torch's precompiled header, so that later builds are faster "
                                "(Ctrl-C skips)"]


def test_a_header_that_failed_is_not_tried_again(exit_state: list[str], monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    from ppy.errors import BuildError

    tries: list[int] = []

    def failing() -> None:
        tries.append(1)
        raise BuildError("the compiler is gone")

    monkeypatch.setattr(runtime, "_make_pch", failing)
    runtime._precompile_now()
    assert runtime._pch_failed and "precompiling torch's headers failed" in capsys.readouterr().err
    runtime._precompile_after(type("Built", (), {"precompile_next": True})())
    runtime._pch_at_exit = True
    runtime._finish_at_exit()
    assert tries == [1]


def test_a_build_ending_after_the_program_leaves_the_header_to_the_wait_at_exit(
        exit_state: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """No thread is started once the main thread has ended (Python 3.12 refuses one): the wait makes it."""
    monkeypatch.setattr(runtime, "_precompiling", None)
    monkeypatch.setattr(threading, "main_thread", lambda: threading.Thread())  # one that is not alive
    runtime._precompile_after(type("Built", (), {"precompile_next": True})())
    assert runtime._pch_at_exit and runtime._precompiling is None
    runtime._finish_at_exit()
    assert exit_state == ["header"] and not runtime._pch_at_exit


def _no_threads(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(self: threading.Thread) -> None:
        raise RuntimeError("can't create new thread at interpreter shutdown")

    monkeypatch.setattr(threading.Thread, "start", refuse)


def test_calls_at_once_run_in_turn_where_no_thread_can_start(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_threads(monkeypatch)
    calls: list[Callable[[], Any]] = [lambda: 1, lambda: 2, lambda: 3]
    assert at_once(calls) == [1, 2, 3]

    def fails() -> int:
        raise KeyError("the first error")

    with pytest.raises(KeyError):
        at_once([lambda: 1, fails])


def test_the_bridge_is_built_in_the_thread_at_hand_where_no_thread_can_start(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_threads(monkeypatch)
    built: list[object] = []
    monkeypatch.setattr(shared, "ensure_shared", lambda cache, what, progress=True: built.append(what))

    class Missing:
        def valid(self, key: str) -> None:
            return None

    bridge = shared.BridgeBuild(Missing())  # type: ignore[arg-type]
    assert built == [shared.BRIDGE] and not bridge.building and bridge.ready() == bridge.key


def test_a_thread_that_cannot_start_runs_its_work_and_is_not_waited_for(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_threads(monkeypatch)
    ran: list[str] = []
    runtime._start(threading.Thread(), lambda: ran.append("ran"))
    assert ran == ["ran"]


def test_a_header_another_process_is_making_is_no_failure(exit_state: list[str], monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """At exit a wait on another process's lock gives up (cache.end_waits): that process makes the header, so
    nothing is said and the header is not taken for one that fails."""
    from ppy_compile.cache import LockWaitEnded

    def waited() -> None:
        raise LockWaitEnded("the program ended while process 4242 was building the same code")

    monkeypatch.setattr(runtime, "_make_pch", waited)
    runtime._precompile_now()
    assert not runtime._pch_failed and capsys.readouterr().err == ""


def test_a_file_is_planned_where_no_thread_can_start(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    """A region first called after the program's main thread ended (a worker thread's, under Python 3.12): the
    plan checks the shared builds in the build itself, instead of in a thread of its own."""
    from ppy_compile import pipeline
    from ppy_compile.cache import Cache

    source = tmp_path / "model.py"
    source.write_text("import ppy, torch\n\n\n@ppy.opt(1)\ndef twice(x: torch.Tensor) -> torch.Tensor:\n"
                      "    return x * 2\n", encoding="utf-8")
    _no_threads(monkeypatch)
    plan = pipeline.plan_module(str(source), source.read_text(), cache=Cache.open(tmp_path / "cache"))
    assert [region.model.name for region in plan.regions] == ["twice"] and plan.shared_checked is None
