"""The C++ runtime ships as files: one include list, read once, and every byte a build compiles is in its key."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest

from ppy_compile import cpp_files
from ppy_compile.keys import light_identity
from ppy_compile.shared import BRIDGE, PCH, SharedBuild
from ppy_compile.options import BuildOptions
from ppy_compile.unit import translation_unit

TOOL = SimpleNamespace(identity="a toolchain")  # a shared build's key reads only the toolchain's identity
SYSTEM_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*<([^>\n]+)>', re.MULTILINE)


@pytest.fixture
def copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The shipped files, copied to a folder ppy reads them from instead."""
    folder = tmp_path / "cpp"
    shutil.copytree(cpp_files.FOLDER, folder)
    monkeypatch.setattr(cpp_files, "FOLDER", folder)
    return folder


def _keys() -> tuple[str, str, str]:
    return BRIDGE.key(TOOL), PCH.key(TOOL), light_identity(BuildOptions())


def _touch(folder: Path, name: str) -> None:
    path = folder / name
    path.write_bytes(path.read_bytes() + b"// one more byte, and the builds that include it are others\n")


def _keys_once_changed(copy: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str, str]:
    """The keys with ``name`` changed by a byte: read from another folder (a process reads a folder's files once),
    as a process started after the change would."""
    changed = copy.parent / "changed"
    shutil.copytree(copy, changed)
    _touch(changed, name)
    monkeypatch.setattr(cpp_files, "FOLDER", changed)
    return _keys()


# Headers that include every op's declarations (or pybind11 and autograd's): parsing one is most of a build, so a
# module that does not index, and the bridge, never include them (cold start on a new machine waits on both).
EVERY_OP = {"ATen/ATen.h", "ATen/Functions.h", "ATen/NativeFunctions.h", "ATen/ScalarOps.h", "ATen/TensorIndexing.h",
            "torch/extension.h", "torch/csrc/autograd/python_variable.h", "torch/csrc/Size.h",
            "torch/csrc/Exceptions.h", "pybind11/pybind11.h"}


def _system_includes(name: str) -> set[str]:
    return set(SYSTEM_INCLUDE.findall(cpp_files.read(name).decode()))


def test_the_include_list_is_one_header_that_the_others_include() -> None:
    """ppy_includes.h is the modules' one list: the precompiled header adds torch's every-op header and what
    ppy_indexing.h includes, the helpers add none, so a module built with the precompiled header and one without
    see alike."""
    assert "ATen/core/Tensor.h" in _system_includes("ppy_includes.h")
    assert _system_includes(cpp_files.PRECOMPILED) == {"ATen/Functions.h"} | _system_includes(cpp_files.INDEXING)
    assert _system_includes(cpp_files.RUNTIME) == set()
    for root in (cpp_files.PRECOMPILED, cpp_files.RUNTIME, cpp_files.INDEXING, cpp_files.PROBE):
        assert "ppy_includes.h" in cpp_files.needed([root])
    # The bridge includes the header that declares what it defines, the one every module includes too.
    assert all("ppy_bridge.h" in cpp_files.needed([root]) for root in (cpp_files.BRIDGE, cpp_files.RUNTIME))


def test_only_indexing_and_the_precompiled_header_parse_every_op() -> None:
    heavy = {name: _system_includes(name) & EVERY_OP for name in cpp_files.needed(
        [cpp_files.BRIDGE, cpp_files.RUNTIME, cpp_files.PROBE, cpp_files.INDEXING, cpp_files.PRECOMPILED])}
    assert {name for name, found in heavy.items() if found} == {cpp_files.INDEXING, cpp_files.PRECOMPILED}


def test_a_build_needs_what_its_files_include() -> None:
    assert cpp_files.needed([cpp_files.BRIDGE]) == ("bridge.cpp", "ppy_bridge.h")
    assert cpp_files.needed([cpp_files.PRECOMPILED]) == ("ppy_includes.h", "precompiled.h")
    assert cpp_files.needed([cpp_files.RUNTIME]) == ("ppy_bridge.h", "ppy_includes.h", "ppy_runtime.h")
    assert cpp_files.needed([cpp_files.INDEXING]) == ("ppy_bridge.h", "ppy_includes.h", "ppy_indexing.h",
                                                      "ppy_runtime.h")


@pytest.mark.parametrize("name", ["ppy_includes.h", "ppy_bridge.h"])
def test_a_changed_shared_header_changes_every_key_that_compiles_it(copy: Path, name: str,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    bridge, pch, identity = _keys()
    changed = _keys_once_changed(copy, name, monkeypatch)
    assert changed[2] != identity  # every module includes both
    assert (changed[0] != bridge) == (name == "ppy_bridge.h")  # the bridge parses only its declarations' headers
    assert (changed[1] != pch) == (name == "ppy_includes.h")  # the precompiled header has no bridge in it


def test_a_changed_bridge_source_rebuilds_the_bridge_and_not_the_precompiled_header(
        copy: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    bridge, pch, identity = _keys()
    changed = _keys_once_changed(copy, cpp_files.BRIDGE, monkeypatch)
    assert changed[0] != bridge and changed[1] == pch and changed[2] != identity


@pytest.mark.parametrize("name", [cpp_files.RUNTIME, cpp_files.PROBE, cpp_files.INDEXING])
def test_a_changed_module_header_changes_the_modules_keys_only(copy: Path, name: str,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """light_identity is in every region's digest and every index key: a module including it builds anew."""
    bridge, pch, identity = _keys()
    changed = _keys_once_changed(copy, name, monkeypatch)
    assert changed[:2] == (bridge, pch) and changed[2] != identity


def test_a_build_compiles_the_bytes_its_key_was_taken_of(copy: Path, tmp_path: Path) -> None:
    """Read once per process: a file changed on disk afterwards (ppy reinstalled under a running program) is not
    what the build copies, so the copy always matches its key."""
    key = PCH.key(TOOL)
    shipped = (copy / "ppy_includes.h").read_bytes()
    _touch(copy, "ppy_includes.h")
    assert PCH.key(TOOL) == key
    out = tmp_path / "out"
    out.mkdir()
    cpp_files.write_into(out, [PCH.source], renamed={PCH.source: PCH.source_name})
    assert sorted(p.name for p in out.iterdir()) == ["ppy_includes.h", "ppy_pch.h"]
    assert (out / "ppy_includes.h").read_bytes() == shipped
    assert (out / "ppy_pch.h").read_bytes() == (copy / cpp_files.PRECOMPILED).read_bytes()


@pytest.mark.parametrize(("missing", "shared"), [("ppy_includes.h", PCH), ("bridge.cpp", BRIDGE)])
def test_a_missing_file_is_a_build_error_naming_it(copy: Path, missing: str, shared: SharedBuild) -> None:
    (copy / missing).unlink()
    with pytest.raises(cpp_files.CppFileError, match=re.escape(str(copy / missing)) + r".*reinstall"):
        shared.key(TOOL)


def test_an_unreadable_folder_is_a_build_error_naming_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cpp_files, "FOLDER", tmp_path / "gone")
    with pytest.raises(cpp_files.CppFileError, match=re.escape(str(tmp_path / "gone"))):
        cpp_files.every_digest()


@pytest.mark.parametrize("repeat_entry", [False, True])
def test_a_unit_includes_the_shipped_helpers_by_name(repeat_entry: bool) -> None:
    unit = translation_unit([], "m.py", BuildOptions(repeat_entry=repeat_entry), precompiled=True)
    expected = (cpp_files.RUNTIME, cpp_files.PROBE) if repeat_entry else (cpp_files.RUNTIME,)
    assert unit.shipped == expected
    lines = unit.source.splitlines()
    assert lines[0] == '#include "ppy_pch.h"'  # first, or GCC does not use the precompiled header
    assert [line for line in lines if line.startswith('#include "')][1:] == [f'#include "{n}"' for n in expected]
    assert "namespace ppy {" not in unit.source  # included, not pasted


def test_a_unit_that_indexes_includes_the_indexing_helpers_after_the_runtime() -> None:
    """A region asks for ppy_indexing.h among its headers; the unit includes it by name, as a shipped file the
    build copies, never as a system header."""
    printed = SimpleNamespace(headers=frozenset({cpp_files.INDEXING, "ATen/ops/add_ops.h"}), text="",
                              region=SimpleNamespace(symbol="r"), methods=())
    unit = translation_unit([printed], "m.py", BuildOptions())  # type: ignore[list-item]
    assert unit.shipped == (cpp_files.RUNTIME, cpp_files.INDEXING)
    includes = [line for line in unit.source.splitlines() if line.startswith("#include")]
    assert includes == ['#include "ppy_runtime.h"', '#include "ppy_indexing.h"', "#include <ATen/ops/add_ops.h>"]
