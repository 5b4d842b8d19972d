"""Loading built shared objects into this process: the bridge and the region modules an index names, each
once per process, through the descriptor its digest was checked through."""

from __future__ import annotations

import ctypes
import importlib.machinery
import importlib.util
import os
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ppy_check.diagnostic import Diagnostic
from ppy_check.errors import BuildError
from ppy_compile.cache import Artifact, Cache
from ppy_compile.options import MODULE_NAME


@dataclass
class BuiltModule:
    functions: dict[str, Callable[..., Any]] = field(default_factory=dict)  # site key -> compiled entry
    errors: dict[str, list[Diagnostic]] = field(default_factory=dict)
    cpp_sources: dict[str, Path] = field(default_factory=dict)  # site key -> the unit that holds it
    symbols: dict[str, str] = field(default_factory=dict)  # site key -> C++ symbol
    fallbacks: dict[str, str] = field(default_factory=dict)  # site key -> why it runs as Python
    # site key -> what the region does besides its result: {"writes": [parameter...], "random": bool}
    effects: dict[str, dict[str, Any]] = field(default_factory=dict)
    built: bool = False  # False when it came from the cache
    # Its build compiled a module without the precompiled header, which was missing: whoever ran the build
    # makes the header next (ppy_compile.shared.ensure_pch), for the builds after it.
    precompile_next: bool = False
    bridge: Any = None  # the bridge's Python module, when the regions are compiled
    dependencies: dict[str, str] = field(default_factory=dict)  # other files the regions reached -> their sha256
    # site key -> the names from outside its body the build took as fixed: [namespace, name, assumed, expected]
    # (ppy_check.model.ir.Assumption), which the runtime proves before it runs the compiled code (ppy/guard.py).
    assumptions: dict[str, list[list[str]]] = field(default_factory=dict)
    # site key -> what a method region reads through its instance: {"reads": [[path, type]...], "classes":
    # [[path, class name]...]} (ppy_check.model.ir.InstanceReads), which ppy/instance.py reads and checks per call.
    instances: dict[str, dict[str, list[list[str]]]] = field(default_factory=dict)


# What this process loaded, by build key. A shared object is loaded through
# the descriptor its digest was checked through (`Artifact.path`, a
# /proc/self/fd path naming that open inode), so nothing can be swapped in
# between the check and the load. The descriptor stays open for good: the
# dynamic loader and Python know a library by its path, and a reused number
# would name another file.
_loaded: dict[str, tuple[Artifact, Any]] = {}


# Loading is checked and recorded under one lock: two threads (a background build finishing while the
# program prepares another file) would otherwise each load their own copy, and a second copy of the bridge
# registers its pybind11 types twice.
_loading = threading.RLock()


def _new_loading_lock_in_child() -> None:
    """A forked child has no thread that could release a hold its parent's threads had at the fork."""
    global _loading
    _loading = threading.RLock()


os.register_at_fork(after_in_child=_new_loading_lock_in_child)


def load_bridge(cache: Cache, key: str) -> None:
    with _loading:
        _load_bridge_locked(cache, key)


def _load_bridge_locked(cache: Cache, key: str) -> None:
    if key in _loaded:
        return
    artifact = cache.open_artifact(key)
    if artifact is None:
        raise FileNotFoundError(key)
    try:
        # Global symbols: the region modules resolve the bridge's functions against it, and
        # their dependency on it by its soname, which matches this copy without opening a file.
        handle = ctypes.CDLL(artifact.path, mode=os.RTLD_NOW | os.RTLD_GLOBAL)
    except BaseException:
        artifact.close()
        raise
    _loaded[key] = (artifact, handle)


class BridgeRefused(BuildError):
    """The bridge loaded but refused to start in this torch (its check of the tensor layout it reads, in
    bridge.cpp): no region can run compiled under this torch, which is no fault of the regions or a ppy bug."""


def bridge_module(key: str) -> Any:
    """The bridge's Python side (its extension module), imported from the very copy `load_bridge` loaded."""
    with _loading:
        if key not in _bridge_modules:
            try:
                _bridge_modules[key] = import_extension(_loaded[key][0].path, "ppy_bridge")
            except ImportError as error:
                import torch

                raise BridgeRefused(f"{error} (torch {torch.__version__})") from None
        return _bridge_modules[key]


_bridge_modules: dict[str, Any] = {}


def load_module(cache: Cache, key: str) -> Any:
    with _loading:
        return _load_module_locked(cache, key)


def _load_module_locked(cache: Cache, key: str) -> Any:
    if key in _loaded:
        return _loaded[key][1]
    artifact = cache.open_artifact(key)
    if artifact is None:
        raise FileNotFoundError(key)
    try:
        module = import_extension(artifact.path, MODULE_NAME)
    except BaseException:
        artifact.close()
        raise
    _loaded[key] = (artifact, module)
    return module


def import_extension(path: str, name: str) -> Any:
    """The extension module at ``path``, initialised as ``name`` (its PyInit_<name>)."""
    loader = importlib.machinery.ExtensionFileLoader(name, path)
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def _assumptions_json(found: Any) -> dict[str, list[list[str]]]:
    """An index's assumptions, checked for shape: a region's list of [namespace, name, assumed, expected] strings."""
    if not isinstance(found, dict) or not all(
            isinstance(key, str) and isinstance(rows, list) and all(
                isinstance(row, list) and len(row) == 4 and all(isinstance(part, str) for part in row) for row in rows)
            for key, rows in found.items()):
        raise ValueError("an index whose assumptions are not lists of four strings")
    return found


def _instances_json(found: Any) -> dict[str, dict[str, list[list[str]]]]:
    """An index's instance reads, checked for shape: each path a dotted run of plain attribute names."""
    def rows(value: Any) -> bool:
        return isinstance(value, list) and all(
            isinstance(row, list) and len(row) == 2 and all(isinstance(part, str) for part in row) and
            all((name.isidentifier() or name.isdigit()) and not name.startswith("__")
                for name in row[0].split(".") if row[0])
            for row in value)

    if not isinstance(found, dict) or not all(
            isinstance(key, str) and isinstance(entry, dict) and set(entry) == {"reads", "classes", "methods", "lengths"}
            and all(rows(v) for v in entry.values()) and all(count.isdigit() for _, count in entry["lengths"])
            for key, entry in found.items()):
        raise ValueError("an index whose instance reads are not [path, text] pairs of attribute paths")
    # ("methods" rows are [path, name], "lengths" rows [path, count]: one shape for every list of the entry.)
    return found


def from_index(cache: Cache, index: dict[str, Any]) -> BuiltModule:
    """The file's regions as its index entry records them, their modules (and the bridge) loaded."""
    result = BuiltModule(
        errors={rid: [Diagnostic.from_json(d) for d in found] for rid, found in index["errors"].items()},
        symbols=dict(index["symbols"]),
        fallbacks=dict(index["fallbacks"]),
        effects=dict(index["effects"]),
        dependencies=dict(index["dependencies"]),
        assumptions=_assumptions_json(index["assumptions"]),
        instances=_instances_json(index.get("instances", {})),
    )
    builds = index["builds"]
    if not isinstance(builds, dict) or set(builds) != set(result.symbols):
        raise ValueError("an index whose builds are not its regions'")
    if not builds:
        return result
    load_bridge(cache, index["bridge"])
    result.bridge = bridge_module(index["bridge"])
    for rid, build_key in builds.items():
        result.functions[rid] = getattr(load_module(cache, build_key), result.symbols[rid])
        result.cpp_sources[rid] = cache.build_dir(build_key) / "module.cpp"
    return result
