"""The wheel as a user installs it: its name, the top-level names it claims, and ppy-check without torch."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest

from ppy_compile import cpp_files

ROOT = Path(__file__).resolve().parents[2]
OWN_NAMES = {"ppy", "ppy_check", "ppy_compile", "ppy_mypy"}


@pytest.fixture(scope="module")
def sdist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The sdist, as `python -m build` makes it (setuptools' PEP 517 hook), from a copy of the sources
    (an in-tree build would write build/ and *.egg-info into the checkout)."""
    source = tmp_path_factory.mktemp("source")
    setuptools = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(ROOT / name, source / name)
    folders = {setuptools["package-dir"].get(p.split(".")[0], p.split(".")[0]) for p in setuptools["packages"]}
    for folder in folders:
        shutil.copytree(ROOT / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path_factory.mktemp("sdist")
    result = subprocess.run([sys.executable, "-c", f"from setuptools import build_meta; build_meta.build_sdist({str(out)!r})"],
                            capture_output=True, text=True, cwd=source)
    assert result.returncode == 0, result.stderr
    (built,) = out.glob("*.tar.gz")
    return built


@pytest.fixture(scope="module")
def wheel(sdist: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel built from the unpacked sdist, as `python -m build` does: a file the sdist lacks is missing here too."""
    unpacked = tmp_path_factory.mktemp("unpacked")
    with tarfile.open(sdist) as archive:
        archive.extractall(unpacked, filter="data")
    (source,) = unpacked.iterdir()
    out = tmp_path_factory.mktemp("wheel")
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "--quiet", "-w", str(out), str(source)],
        capture_output=True, text=True,
    )
    assert result.returncode == 0, result.stderr
    (built,) = out.glob("*.whl")
    return built


def _metadata(wheel: Path) -> str:
    names = zipfile.ZipFile(wheel).namelist()
    (metadata,) = [n for n in names if n.endswith(".dist-info/METADATA")]
    return zipfile.ZipFile(wheel).read(metadata).decode()


def test_sdist_is_named_and_holds_the_readme(sdist: Path) -> None:
    assert sdist.name.startswith("ppy_regions-")
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert {"pyproject.toml", "README.md", "PKG-INFO", "ppy_check/opdata.json", "mypy_plugin/__init__.py"} <= names


def test_torch_extra_brings_numpy_and_names_no_address(wheel: Path) -> None:
    """torch warns on every start without numpy; ppy has no published address, so the metadata invents none."""
    metadata = _metadata(wheel)
    torch_extra = [line for line in metadata.splitlines() if line.startswith("Requires-Dist:") and 'extra == "torch"' in line]
    assert any(line.startswith("Requires-Dist: numpy") for line in torch_extra), torch_extra
    assert "Project-URL:" not in metadata and "pypi.org" not in metadata


def test_wheel_is_ppy_regions_and_claims_only_ppy_names(wheel: Path) -> None:
    assert wheel.name.startswith("ppy_regions-")
    names = zipfile.ZipFile(wheel).namelist()
    tops = {name.split("/")[0] for name in names}
    (dist_info,) = [t for t in tops if t.endswith(".dist-info")]
    assert tops - {dist_info} == OWN_NAMES
    metadata = zipfile.ZipFile(wheel).read(f"{dist_info}/METADATA").decode()
    assert "\nName: ppy-regions\n" in metadata
    entry_points = zipfile.ZipFile(wheel).read(f"{dist_info}/entry_points.txt").decode()
    assert "ppy-check = ppy_check.cli:main" in entry_points and "ppy = ppy.cli:main" in entry_points


def test_wheel_holds_every_source_file(wheel: Path) -> None:
    """The packages are listed by hand in pyproject.toml (to rename mypy_plugin/): a new sub-package must be listed too;
    and the C++ runtime (ppy_compile/cpp/), package data, must be listed there to ship."""
    names = set(zipfile.ZipFile(wheel).namelist())
    renames = {"mypy_plugin": "ppy_mypy"}
    for folder in ("ppy", "ppy_check", "ppy_compile", "mypy_plugin"):
        for path in (ROOT / folder).rglob("*"):
            if path.suffix in (".py", ".json", ".typed", ".h", ".cpp") and "__pycache__" not in path.parts:
                relative = path.relative_to(ROOT).as_posix()
                installed = renames.get(folder, folder) + relative[len(folder):]
                assert installed in names, f"{relative} is not in the wheel"


def _top_level(site: Path) -> set[str]:
    return {p.name for p in site.iterdir() if p.name != "__pycache__"}


def test_installed_without_torch(wheel: Path, tmp_path: Path) -> None:
    env = tmp_path / "env"
    venv.EnvBuilder(with_pip=False).create(env)
    python = env / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               capture_output=True, text=True, check=True).stdout.strip())
    before = _top_level(site)
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index",
                              "--quiet", str(wheel)], capture_output=True, text=True)
    assert install.returncode == 0, install.stderr
    added = _top_level(site) - before
    assert {name for name in added if not name.endswith(".dist-info")} == OWN_NAMES
    assert [name for name in added if name.endswith(".dist-info")] == [wheel.name.split("-py3")[0] + ".dist-info"]

    probe = subprocess.run([str(python), "-c", "import torch"], capture_output=True)
    assert probe.returncode != 0, "the fresh environment must not see torch"
    target = tmp_path / "r.py"
    target.write_text("import ppy, torch\n\n@ppy.opt(3)\ndef f(x: torch.Tensor) -> torch.Tensor:\n    print(x)\n    return x\n")
    # A clean environment: nothing of this checkout's on the path.
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    result = subprocess.run([str(env / "bin" / "ppy-check"), "--no-config", "--output-format", "json", str(target)],
                            capture_output=True, text=True, cwd=tmp_path, env=clean)
    assert result.returncode == 1, result.stderr
    assert json.loads(result.stdout)[0]["code"] == "ppy-unsupported"
    located = subprocess.run([str(python), "-c", "import ppy_check; print(ppy_check.__file__)"],
                             capture_output=True, text=True, cwd=tmp_path, env=clean)
    assert located.stdout.startswith(str(site))
    # The installed package finds its C++ files (no torch needed to read them), and they are this checkout's.
    read = "from ppy_compile import cpp_files; print(cpp_files.FOLDER); print(cpp_files.every_digest())"
    shipped = subprocess.run([str(python), "-c", read], capture_output=True, text=True, cwd=tmp_path, env=clean)
    assert shipped.returncode == 0, shipped.stderr
    folder, digest = shipped.stdout.splitlines()
    assert folder.startswith(str(site)) and digest == cpp_files.every_digest()


def test_mypy_plugin_from_the_installed_wheel(wheel: Path, tmp_path: Path) -> None:
    """`plugins = ["ppy"]` finds the plugin under its installed name; mypy comes from this environment."""
    pytest.importorskip("mypy")
    env = tmp_path / "env"
    venv.EnvBuilder(with_pip=False).create(env)
    python = env / "bin" / "python"
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index",
                              "--quiet", str(wheel)], capture_output=True, text=True)
    assert install.returncode == 0, install.stderr
    project = tmp_path / "project"
    project.mkdir()
    (project / "m.py").write_text("import ppy\n\n\n@ppy.opt(3)\ndef f(n: int) -> int:\n    while n:\n        n = n - 1\n    return n\n")
    (project / "mypy.ini").write_text("[mypy]\nplugins = ppy\n")
    # This environment's site-packages after the fresh one's own: mypy from here, ppy from the wheel
    # (the checkout's editable install is a .pth file, which a PYTHONPATH entry does not read).
    mypy_site = Path(sysconfig.get_path("purelib"))
    code = f"import sys; sys.path.append({str(mypy_site)!r}); from mypy.main import main; main(args=['m.py'])"
    result = subprocess.run([str(python), "-c", code], capture_output=True, text=True, cwd=project,
                            env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert "m.py:6: error: region `f`: `while` loop on `n`" in result.stdout, result.stdout + result.stderr
    assert "[ppy-loop]" in result.stdout
    which = subprocess.run([str(python), "-c", f"import sys; sys.path.append({str(mypy_site)!r}); import ppy; "
                            "print(ppy.plugin('1').__module__)"], capture_output=True, text=True, cwd=project)
    assert which.stdout.strip() == "ppy_mypy", which.stderr


def test_mypy_plugin_from_the_checkout() -> None:
    """`make venv`'s editable install (a plain path in a .pth file) has the folder under its own name."""
    pytest.importorskip("mypy")
    import ppy

    assert ppy.plugin("1").__module__ == "mypy_plugin"


def test_wheel_runs_ppy_build_and_the_pytest_plugin(wheel: Path, tmp_path: Path, toolchain_entries: list[str]) -> None:
    """The torch-needing commands from the installed wheel. torch, pytest and the rest come from this environment's
    site-packages, reached after the fresh one's own (a .pth line: nothing is downloaded, and the checkout's
    editable install, itself a .pth file there, is not read); the build cache is the session's, so only what no
    other test built is compiled."""
    env = tmp_path / "env"
    venv.EnvBuilder(with_pip=False).create(env)
    python = env / "bin" / "python"
    site = Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                               capture_output=True, text=True, check=True).stdout.strip())
    install = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps", "--no-index",
                              "--quiet", str(wheel)], capture_output=True, text=True)
    assert install.returncode == 0, install.stderr
    (site / "dev_environment.pth").write_text(sysconfig.get_path("purelib") + "\n")
    clean = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    located = subprocess.run([str(python), "-c", "import ppy, ppy_compile, torch; print(ppy.__file__, ppy_compile.__file__)"],
                             capture_output=True, text=True, cwd=tmp_path, env=clean)
    assert located.returncode == 0, located.stderr
    assert all(path.startswith(str(site)) for path in located.stdout.split()), located.stdout

    project = tmp_path / "project"
    project.mkdir()
    shutil.copy(ROOT / "tests" / "regions" / "tiny.py", project / "tiny.py")
    (project / "pyproject.toml").write_text('[tool.pytest.ini_options]\nppy_devices = ["cpu"]\n')
    built = subprocess.run([str(env / "bin" / "ppy"), "build", "tiny.py"], capture_output=True, text=True, cwd=project,
                           env=clean, timeout=600)
    assert built.returncode == 0, built.stderr
    assert "ppy build: 1 of 1 region compiled, in 1 file" in built.stderr
    collected = subprocess.run([str(python), "-m", "pytest", "--ppy-verify", "--co", "-q", "-p", "no:cacheprovider"],
                               capture_output=True, text=True, cwd=project, env=clean, timeout=600)
    assert "tiny.py::scale_shift[cpu]" in collected.stdout, collected.stdout + collected.stderr
