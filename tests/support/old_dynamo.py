"""Whether this process's regions take Region.__call__, a Python frame, on every call: under a torch before 2.13
once torch._dynamo is loaded, whose Dynamo cannot trace a class whose ``__call__`` is a C function (README, "The
torch range"). A test of the C entry's own frames then has nothing to test."""

from __future__ import annotations

import pytest

from ppy import runtime


def skip_if_calls_take_python() -> None:
    if runtime._dynamo_needs_python_call:
        pytest.skip("torch before 2.13 with Dynamo loaded: a region's call takes Region.__call__, a Python frame")
