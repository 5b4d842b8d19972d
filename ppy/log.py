"""PPY_LOG for the runtime: the topics and their lines live in ppy_check.log, below ppy_compile, which logs
its build steps and cache decisions through the same switch."""
from __future__ import annotations

from ppy_check.log import TOPICS, emit, emit_once, enabled, on

__all__ = ["TOPICS", "emit", "emit_once", "enabled", "on"]
