"""What a call came to, as a comparable pair: the result's type and repr, or the exception's type and message."""

from __future__ import annotations

from typing import Any


def outcome(function: Any, *args: Any) -> tuple[str, Any]:
    try:
        result = function(*args)
    except Exception as error:  # noqa: BLE001 - compared below
        return type(error).__name__, str(error).split("\n  in region `")[0]
    return type(result).__name__, repr(result)
