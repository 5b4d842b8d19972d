"""The Python frames a call runs: how a test tells that a call took the compiled path and not Python's."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any


def python_frames(call: Callable[[], Any]) -> list[str]:
    """The Python functions that run during ``call``, as `file:function` (C functions are not frames)."""
    seen: list[str] = []

    def profile(frame: Any, event: str, _: Any) -> None:
        if event == "call":
            seen.append(f"{frame.f_code.co_filename}:{frame.f_code.co_name}")

    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return seen
