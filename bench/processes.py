"""Child processes that end with the bench that started them, even when it is killed outright.

A bench stops a child past its limit by its process group (start_new_session), which takes the child's
own children along. But a child in a session of its own outlives a parent killed with SIGKILL (by the
device tool's own time limit, say), and on a lent GPU machine such a process runs on, holding the GPU,
until the machine goes back. So the child starts through a trampoline that asks the kernel to kill it when
its parent dies (PR_SET_PDEATHSIG), as ppy_compile/toolchain.py does for ninja: preexec_fn would do the
same, but is unsafe in a process with threads.
"""

from __future__ import annotations

import os
import sys

_DIE_WITH_PARENT = """
import ctypes, os, signal, sys
ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
if os.getppid() != int(sys.argv[1]):
    sys.exit("bench: the parent process is gone")
os.execvp(sys.argv[2], sys.argv[2:])
"""


def dying_with_this_process(command: list[str]) -> list[str]:
    """``command``, started so that it is killed when this process dies (on Linux; elsewhere as it is)."""
    if sys.platform != "linux" or not sys.executable:
        return command
    # -I -S: the trampoline reads no environment and no site; the command it becomes keeps both.
    return [sys.executable, "-I", "-S", "-c", _DIE_WITH_PARENT, str(os.getpid()), *command]
