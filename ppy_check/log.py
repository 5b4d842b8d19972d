"""PPY_LOG: which topics of ppy's events to write to stderr, one whole line each (a leaf module, in the lowest
layer, so that the build steps of ppy_compile log through it as the runtime does)."""
from __future__ import annotations

import os
import sys
import threading

# Only topics that log something: a topic that printed nothing would read as "nothing happened".
TOPICS: tuple[str, ...] = ("fallback", "calls", "build", "cache")


def _parse(value: str) -> frozenset[str]:
    names = {name.strip().lower() for name in value.split(",") if name.strip()}
    if "all" in names:
        return frozenset(TOPICS)
    unknown = sorted(names - set(TOPICS))
    if unknown:
        # One line naming every unknown topic, so a typo does not silently log nothing (a plain line: a
        # warning would point at ppy's own source, which tells the user nothing).
        sys.stderr.write(f"ppy: warning: PPY_LOG: unknown topic(s) {', '.join(unknown)}; "
                         f"topics are {', '.join(TOPICS)}, all\n")
    return frozenset(names & set(TOPICS))


enabled: frozenset[str] = _parse(os.environ.get("PPY_LOG", ""))
_once: set[tuple[str, str]] = set()
_lock = threading.Lock()


def on(topic: str) -> bool:
    return topic in enabled


def emit(topic: str, message: str) -> None:
    """One line to stderr under the topic, written in one call so threads do not interleave within a line."""
    if topic in enabled:
        sys.stderr.write(f"ppy[{topic}]: {message}\n")
        sys.stderr.flush()


def emit_once(topic: str, key: str, message: str) -> None:
    """``emit`` for an event that repeats per call (a declined argument): logged once per key."""
    if topic not in enabled:
        return
    with _lock:
        if (topic, key) in _once:
            return
        _once.add((topic, key))
    emit(topic, message)
