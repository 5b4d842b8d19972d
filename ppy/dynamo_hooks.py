"""What Dynamo must be told about ppy, told once torch._dynamo is loaded.

Registering with Dynamo (`torch.compiler.substitute_in_graph`,
`assume_constant_result`) imports torch._dynamo, more than a second of
start-up that a program which never compiles should not pay. So each
registration waits: it runs at once if Dynamo is loaded, else right after
Dynamo's module first executes (a post-import hook), before anything traces.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
import threading
import types
from collections.abc import Callable, Sequence
from typing import Any

DYNAMO = "torch._dynamo"

_pending: list[Callable[[], None]] = []
_lock = threading.Lock()


def when_loaded(action: Callable[[], None]) -> None:
    """Run ``action`` now if torch._dynamo is loaded, else as soon as it is."""
    with _lock:
        if DYNAMO not in sys.modules:
            _pending.append(action)
            if not any(isinstance(finder, _AfterImport) for finder in sys.meta_path):
                sys.meta_path.insert(0, _AfterImport())
            return
    action()


def _run_pending() -> None:
    with _lock:
        actions = list(_pending)
        _pending.clear()
    for action in actions:
        action()


class _AfterImport(importlib.abc.MetaPathFinder):
    """Finds torch._dynamo with the finders after it, and runs the pending registrations once it executed."""

    def find_spec(self, name: str, path: Sequence[str] | None, target: types.ModuleType | None = None) -> Any:
        if name != DYNAMO:
            return None
        sys.meta_path.remove(self)  # done: the real finder answers, now and from now on
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        execute = spec.loader.exec_module

        def exec_module(module: types.ModuleType) -> None:
            execute(module)
            _run_pending()

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec
