"""Progress lines: a whole line when a step starts (a CI log shows what runs) and one naming it again with its time
when it ends, each in one write, so no other output lands inside one; literal text."""

from __future__ import annotations

import io
import sys
import threading

import pytest

from ppy_compile import progress
from ppy_compile.progress import building


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


def test_a_step_is_named_before_it_runs_and_timed_when_it_ends(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PPY_QUIET", raising=False)
    stream = _Stream(tty=False)
    monkeypatch.setattr(sys, "stderr", stream)
    with building("ppy: building 2 regions of model.py (-O2)"):
        assert stream.getvalue() == "ppy: building 2 regions of model.py (-O2) ...\n"
    lines = stream.getvalue().splitlines()
    assert len(lines) == 2 and lines[1].startswith("ppy: building 2 regions of model.py (-O2): done in ")
    assert lines[1].endswith(" s")


def test_a_failed_step_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PPY_QUIET", raising=False)
    stream = _Stream(tty=False)
    monkeypatch.setattr(sys, "stderr", stream)
    with pytest.raises(KeyError), building("ppy: precompiling torch's headers"):
        raise KeyError("x")
    assert "\nppy: precompiling torch's headers: failed after " in stream.getvalue()


def test_a_step_that_ends_after_the_program_said_its_builds_are_skipped_says_nothing(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C at exit skips the wait for a build whose thread goes on until the interpreter ends: "skipped" is
    the last line, never a step's "failed" or "done" after it."""
    monkeypatch.delenv("PPY_QUIET", raising=False)
    monkeypatch.setattr(progress, "_hushed", threading.Event())
    stream = _Stream(tty=False)
    monkeypatch.setattr(sys, "stderr", stream)
    with pytest.raises(OSError), building("ppy: building 2 regions of model.py (-O1)"):
        progress.hush("ppy: skipped; the next run builds them")
        progress.say("ppy: anything")
        raise OSError("the interpreter ended under the build")
    assert stream.getvalue() == "ppy: building 2 regions of model.py (-O1) ...\nppy: skipped; the next run builds them\n"


def test_a_spinner_on_the_terminal_stops_when_the_builds_are_skipped(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ctrl-C at exit while a build's spinner runs: the spinner is taken down (the terminal gets its cursor back)
    before the last line, and redraws nothing after it."""
    pytest.importorskip("rich")
    monkeypatch.delenv("PPY_QUIET", raising=False)
    monkeypatch.setattr(progress, "_hushed", threading.Event())
    stream = _Stream(tty=True)
    monkeypatch.setattr(sys, "stderr", stream)
    with building("ppy: building 1 region of model.py (-O2)"):
        assert len(progress._spinning) == 1
        spinner = next(iter(progress._spinning))
        progress.hush("ppy: skipped; the next run builds them")
        assert not spinner.live.is_started
        after = stream.getvalue()
    assert not progress._spinning and stream.getvalue() == after
    assert after.endswith("ppy: skipped; the next run builds them\n") and "\x1b[?25h" in after  # cursor shown


def test_a_step_begun_after_the_program_ended_is_shown_in_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    """No spinner once the main thread has ended: its redraw thread is one Python 3.12 does not start then."""
    monkeypatch.delenv("PPY_QUIET", raising=False)
    stream = _Stream(tty=True)
    monkeypatch.setattr(sys, "stderr", stream)
    monkeypatch.setattr(threading, "main_thread", lambda: threading.Thread())  # one that is not alive
    with building("ppy: building 1 region of model.py (-O2)"):
        pass
    lines = stream.getvalue().splitlines()
    assert lines[0] == "ppy: building 1 region of model.py (-O2) ..." and "done in" in lines[1]


def test_a_terminal_shows_the_text_as_written(monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("rich")  # the spinner is the builds' (the torch extra's), not the checker's
    monkeypatch.delenv("PPY_QUIET", raising=False)
    stream = _Stream(tty=True)
    monkeypatch.setattr(sys, "stderr", stream)
    with building("ppy: building 1 region of [bold]odd[/bold] :smile:.py"):
        pass
    assert "ppy: building 1 region of [bold]odd[/bold] :smile:.py: done in " in stream.getvalue()


def test_quiet_is_quiet(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PPY_QUIET", "1")
    stream = _Stream(tty=False)
    monkeypatch.setattr(sys, "stderr", stream)
    with building("ppy: anything"):
        pass
    assert stream.getvalue() == ""


def test_a_line_said_during_a_step_stands_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    """ppy's line at exit ("finishing 1 build ...") while a step runs: a line of its own between the step's two."""
    from ppy_compile.progress import say

    monkeypatch.delenv("PPY_QUIET", raising=False)
    stream = _Stream(tty=False)
    monkeypatch.setattr(sys, "stderr", stream)
    with building("ppy: building 1 region of model.py (-O1)"):
        say("ppy: finishing 1 build so the next run starts compiled (Ctrl-C skips)")
        say("ppy: a second line")
    lines = stream.getvalue().splitlines()
    assert lines[:3] == ["ppy: building 1 region of model.py (-O1) ...",
                         "ppy: finishing 1 build so the next run starts compiled (Ctrl-C skips)", "ppy: a second line"]
    assert lines[3].startswith("ppy: building 1 region of model.py (-O1): done in ") and len(lines) == 4


class _Writes(_Stream):
    """A stream that records each write: a line split over two writes could be split by whoever writes between."""

    def __init__(self) -> None:
        super().__init__(tty=False)
        self.writes: list[str] = []

    def write(self, text: str) -> int:
        self.writes.append(text)
        return super().write(text)


def test_each_line_is_one_write(monkeypatch: pytest.MonkeyPatch) -> None:
    """In a pipe, what the program prints between a step's start and end (or another process on the same stream)
    lands between whole lines: every write is a line, ended."""
    from ppy_compile.progress import say

    monkeypatch.delenv("PPY_QUIET", raising=False)
    stream = _Writes()
    monkeypatch.setattr(sys, "stderr", stream)
    with building("ppy: building 1 region of model.py (-O1)"):
        say("ppy: said meanwhile")
    with pytest.raises(KeyError), building("ppy: another step"):
        raise KeyError("x")
    assert len(stream.writes) == 5
    assert all(text.endswith("\n") and text.count("\n") == 1 for text in stream.writes), stream.writes


def test_a_step_stopped_from_outside_is_not_a_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    from ppy_compile.toolchain import BuildInterrupted

    monkeypatch.delenv("PPY_QUIET", raising=False)
    stream = _Stream(tty=False)
    monkeypatch.setattr(sys, "stderr", stream)
    with pytest.raises(BuildInterrupted), building("ppy: building 1 region of model.py (-O1)"):
        raise BuildInterrupted("the build was stopped: interrupted (SIGINT, Ctrl-C or kill)")
    assert "\nppy: building 1 region of model.py (-O1): stopped after " in stream.getvalue()
    assert "failed" not in stream.getvalue()
