"""The machine's processes as /proc shows them, for tests that find a build's compiler or ninja to signal."""

from __future__ import annotations

import os
from pathlib import Path


def processes() -> dict[int, tuple[int, str, str]]:
    """pid -> (parent pid, name, state) of every process."""
    found = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                text = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            # The name is in parentheses and may itself hold spaces or parentheses: split around the last one.
            name, rest = text[text.index("(") + 1:text.rindex(")")], text[text.rindex(")") + 2:].split()
            found[int(entry)] = (int(rest[1]), name, rest[0])
    return found


def descendants(pid: int) -> dict[int, str]:
    """pid -> name of every process below ``pid``, however deep."""
    table = processes()
    found = {}
    for candidate, (_, name, _) in table.items():
        chain = candidate
        while chain in table and chain > 1:
            chain = table[chain][0]
            if chain == pid:
                found[candidate] = name
                break
    return found
