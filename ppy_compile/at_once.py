"""Run calls at the same time, each in a thread of its own, and hand back their results or the first error; and
start a thread where the interpreter still starts one."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


def start_thread(thread: threading.Thread) -> bool:
    """Start ``thread``; False where no thread can start (Python 3.12 refuses one once the interpreter is
    exiting, as in the wait at exit for a background build), and the caller does its work itself."""
    try:
        thread.start()
    except RuntimeError:  # "can't create new thread at interpreter shutdown"
        return False
    return True


def at_once(calls: list[Callable[[], T]]) -> list[T]:
    """Each call's result, the calls run at the same time in threads of their own; the first error raised.

    Plain threads, not a pool: a pool refuses work once the interpreter is shutting down, which is when the
    background build of a program that already ended goes on. Where even a thread cannot start then (Python
    3.12 refuses one in the wait at exit), the calls run one after another here.
    """
    results: list[Any] = [None] * len(calls)
    errors: list[BaseException | None] = [None] * len(calls)

    def run(index: int) -> None:
        try:
            results[index] = calls[index]()
        except BaseException as error:  # handed to the caller's thread below
            errors[index] = error

    threads = [threading.Thread(target=run, args=(index,), name="ppy build") for index in range(len(calls))]
    running = []
    for index, thread in enumerate(threads):
        if start_thread(thread):
            running.append(thread)
        else:
            run(index)
    for thread in running:
        thread.join()
    for error in errors:
        if error is not None:
            raise error
    return results
