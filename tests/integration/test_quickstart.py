"""README's Quickstart, run as a newcomer would: its code in a fresh folder, then each of its commands.

The first screen of the README has to work as written; this reads the code
and the command lines out of that section, so an edit that breaks either
fails here.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def _quickstart() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    start = text.index("## Quickstart")
    return text[start:text.index("\n## ", start + 1)]


def _commands(section: str) -> list[str]:
    """The command lines of the section's shell blocks, without their comments (the install line aside)."""
    lines = []
    for block in re.findall(r"```sh\n(.*?)```", section, re.S):
        lines += [line.split("#", 1)[0].strip() for line in block.splitlines()]
    return [line for line in lines if line and not line.startswith(("git ", "pip "))]


def test_the_quickstart_works_as_written(tmp_path: Path) -> None:
    section = _quickstart()
    code = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(code) == 1 and code[0].startswith("# model.py\n")
    (tmp_path / "model.py").write_text(code[0], encoding="utf-8")
    # The program the section runs under PPY_PROFILE: any caller of the region.
    (tmp_path / "train.py").write_text("import torch\nfrom model import block\n\n"
                                       "for _ in range(3):\n"
                                       "    block(torch.randn(4, 8), torch.randn(8), torch.randn(8), 8, 1e-5)\n",
                                       encoding="utf-8")
    commands = _commands(section)
    assert [c.split()[0] for c in commands] == ["ppy-check", "ppy", "PPY_PROFILE=1", "pytest", "ppy"]
    env = {**os.environ, "PPY_BUILD": "wait", "PYTHONPATH": str(tmp_path)}
    outputs = {}
    for command in commands:
        words = command.split()
        extra = dict(w.split("=", 1) for w in words if re.fullmatch(r"[A-Z_]+=\S*", w))
        words = [w for w in words if not re.fullmatch(r"[A-Z_]+=\S*", w)]
        program = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *words[1:]] if words[0] == "pytest" \
            else [sys.executable, *words[1:]] if words[0] == "python" else [str(BIN / words[0]), *words[1:]]
        done = subprocess.run(program, cwd=tmp_path, env={**env, **extra}, capture_output=True, text=True,
                              timeout=600)
        assert done.returncode == 0, f"{command}:\n{done.stdout}\n{done.stderr}"
        outputs[command] = done.stdout + done.stderr
    profile = next(out for command, out in outputs.items() if command.startswith("PPY_PROFILE"))
    assert re.search(r"block\s+│\s+3\s+│\s+3\s+│\s+0\s+│", profile), profile  # three calls, all compiled
    verified = next(out for command, out in outputs.items() if command.startswith("pytest"))
    assert re.search(r"model\.py::block\s+│\s+cpu\s+│\s+1\b.*passed", verified), verified
    explained = next(out for command, out in outputs.items() if command.startswith("ppy explain"))
    assert "block (line 7): compiled at -O3" in explained, explained
