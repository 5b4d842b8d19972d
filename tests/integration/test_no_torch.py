"""ppy-check runs where neither torch nor mypy is installed (pre-commit's own environment)."""

from __future__ import annotations

import json
import os
import subprocess
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_checker_without_torch(tmp_path: Path) -> None:
    env_dir = tmp_path / "bare"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    probe = subprocess.run([str(python), "-c", "import torch"], capture_output=True)
    assert probe.returncode != 0, "the bare environment must not see torch"
    target = tmp_path / "r.py"
    target.write_text("import ppy, torch\n\n@ppy.opt(3)\ndef f(x: torch.Tensor) -> torch.Tensor:\n    print(x)\n    return x\n")
    code = (
        "import sys, runpy; sys.argv = ['ppy-check', '--output-format', 'json', sys.argv[1]];"
        "import ppy_check.cli as c; rc = c.main(sys.argv[1:]);"
        "assert 'torch' not in sys.modules and 'mypy' not in sys.modules, 'heavy import';"
        "import ppy; assert 'torch' not in sys.modules; sys.exit(rc)"
    )
    result = subprocess.run(
        [str(python), "-c", code, str(target)], capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    assert result.returncode == 1, result.stderr
    assert json.loads(result.stdout)[0]["code"] == "ppy-unsupported"
