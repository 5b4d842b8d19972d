"""Regenerate ``ppy_check/opdata.json`` from the installed torch.

    python -m ppy_check.gen_opdata            # rewrite the shipped file
    python -m ppy_check.gen_opdata --check    # exit 1 if it is out of date

The checker must run where torch is absent (pre-commit hooks live in their own
environment), so what it needs to know about ATen is frozen into a JSON file
here: which Python names reach a native function, and which of their arguments
an overload writes (``Tensor(a!)``) or returns a view of (``Tensor(a)``).
Everything comes from torch itself: the Python bindings are found by object
identity and the alias facts from torchgen's ``native_functions.yaml``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

DATA_PATH = Path(__file__).with_name("opdata.json")

# Python namespace -> (module path, C module holding its builtins, prefix of the
# native names in that C module).
_NAMESPACES = {
    "torch.special": ("torch.special", "torch._C._special", "special_"),
    "torch.linalg": ("torch.linalg", "torch._C._linalg", "linalg_"),
    "torch.fft": ("torch.fft", "torch._C._fft", "fft_"),
}

# Tensor methods that torch binds by hand rather than from a schema, or that
# cannot be lowered: they hand a Python object back or sync with the host.
_NOT_LOWERABLE_METHODS = frozenset({"item", "tolist", "numpy", "data_ptr", "backward", "storage_offset"})


def _native_functions() -> list[Any]:
    import torchgen
    from torchgen.gen import parse_native_yaml

    root = os.path.join(os.path.dirname(torchgen.__file__), "packaged", "ATen", "native")
    parsed = parse_native_yaml(
        os.path.join(root, "native_functions.yaml"), os.path.join(root, "tags.yaml")
    )
    return list(parsed.native_functions)


_RETURN_CODES = {"Tensor": "t", "Tensor[]": "T", "int": "i", "SymInt": "i", "float": "f", "bool": "b", "Scalar": "s"}


def _returns_shape(returns: Any) -> str:
    """What a schema hands back, one letter a value: ``t`` a tensor, ``T`` a list of them,
    ``i``/``f``/``b``/``s`` an int, float, bool or Scalar, ``?`` anything else."""
    return "".join(_RETURN_CODES.get(str(r.type), "?") for r in returns)


def _alias_facts(functions: Iterable[Any], method: bool) -> dict[str, Any]:
    """Union over overloads of the written and viewed arguments, by name and position.

    Position is the index among the Python positional arguments; a method's
    receiver is position -1. ``out=`` overloads are left out: an ``out=``
    keyword is visible in the syntax and reported from there.
    """
    writes: dict[str, int] = {}
    views: dict[str, int] = {}
    for function in functions:
        schema = function.func
        if schema.is_out_fn():
            continue
        positional = [a.name for a in schema.arguments.flat_positional]
        if method and positional and positional[0] == "self":
            positions = {name: index - 1 for index, name in enumerate(positional)}
        else:
            positions = {name: index for index, name in enumerate(positional)}
        for argument in schema.arguments.flat_all:
            annotation = getattr(argument, "annotation", None)
            if annotation is not None and annotation.is_write:
                writes[argument.name] = positions.get(argument.name, -2)
        returned_sets = {
            frozenset(r.annotation.alias_set) for r in schema.returns if r.annotation is not None
        }
        for argument in schema.arguments.flat_all:
            annotation = getattr(argument, "annotation", None)
            if annotation is not None and frozenset(annotation.alias_set) in returned_sets:
                views[argument.name] = positions.get(argument.name, -2)
    facts: dict[str, Any] = {}
    shapes = {_returns_shape(f.func.returns) for f in functions if not f.func.is_out_fn()}
    if shapes and shapes != {"t"}:
        facts["r"] = shapes.pop() if len(shapes) == 1 else "?"
    if writes:
        facts["w"] = sorted([name, pos] for name, pos in writes.items())
    if views:
        facts["v"] = sorted([name, pos] for name, pos in views.items())
    return facts


def build() -> dict[str, Any]:
    import importlib

    import torch
    from torchgen.model import Variant

    by_name: dict[str, list[Any]] = {}
    for function in _native_functions():
        by_name.setdefault(str(function.func.name.name), []).append(function)

    def facts(native: str, method: bool) -> dict[str, Any]:
        variant = Variant.method if method else Variant.function
        return _alias_facts([f for f in by_name.get(native, []) if variant in f.variants], method)

    variable_functions = torch._C._VariableFunctions
    # Python namespace -> Python name -> native function name. The alias facts
    # live once per native name under "aten".
    bindings: dict[str, dict[str, str]] = {"torch": {}, "torch.nn.functional": {}, "torch._C._nn": {}}
    for name in dir(variable_functions):
        if not name.startswith("_") and name in by_name and getattr(torch, name, None) is getattr(variable_functions, name):
            bindings["torch"][name] = name
    for name in dir(torch._C._nn):
        if not name.startswith("_") and name in by_name:
            bindings["torch._C._nn"][name] = name
    functional = importlib.import_module("torch.nn.functional")
    for name in dir(functional):
        obj = getattr(functional, name)
        if name.startswith("_") or type(obj).__name__ != "builtin_function_or_method":
            continue
        native = getattr(obj, "__name__", name)
        if native in by_name and any(getattr(h, native, None) is obj for h in (torch._C._nn, variable_functions)):
            bindings["torch.nn.functional"][name] = native
    for namespace, (module_name, c_module_name, prefix) in _NAMESPACES.items():
        module = importlib.import_module(module_name)
        c_module = importlib.import_module(c_module_name)
        bindings[namespace] = {
            name: prefix + name
            for name in dir(module)
            if not name.startswith("_")
            and prefix + name in by_name
            and getattr(c_module, prefix + name, None) is getattr(module, name)
        }

    # Natives a Python wrapper reaches (torch.einsum -> _VariableFunctions.einsum)
    # belong too: the wrapper table in ppy_check/wrappers.py calls them as `aten.NAME`.
    reachable = {name for name in dir(variable_functions) if not name.startswith("_") and name in by_name}
    natives = sorted(reachable | {native for names in bindings.values() for native in names.values()})
    aten = {native: facts(native, method=False) for native in natives}

    methods: dict[str, Any] = {}
    for name in dir(torch._C.TensorBase):
        if name in _NOT_LOWERABLE_METHODS or name not in by_name:
            continue
        if name.startswith("_") and not (name.startswith("__") and name.endswith("__")):
            continue
        if any(Variant.method in f.variants for f in by_name[name]):
            methods[name] = facts(name, method=True)

    namespaces: dict[str, Any] = {"aten": aten, "Tensor": methods}
    for namespace, names in bindings.items():
        namespaces[namespace] = {name: native for name, native in names.items()}
    return {
        "torch_version": str(torch.__version__).split("+")[0],
        "namespaces": {ns: dict(sorted(ops.items())) for ns, ops in sorted(namespaces.items())},
    }


def render(data: dict[str, Any]) -> str:
    # One op a line: diffs against a new torch stay readable.
    lines = ["{", f'  "torch_version": {json.dumps(data["torch_version"])},', '  "namespaces": {']
    spaces = list(data["namespaces"].items())
    for index, (namespace, ops) in enumerate(spaces):
        lines.append(f"    {json.dumps(namespace)}: {{")
        items = list(ops.items())
        for op_index, (name, facts) in enumerate(items):
            comma = "," if op_index < len(items) - 1 else ""
            lines.append(f"      {json.dumps(name)}: {json.dumps(facts, sort_keys=True)}{comma}")
        lines.append("    }" + ("," if index < len(spaces) - 1 else ""))
    lines += ["  }", "}", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ppy_check.gen_opdata", description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the shipped file differs from the installed torch")
    parser.add_argument("--output", type=Path, default=DATA_PATH, help="where to write (default: the shipped file)")
    args = parser.parse_args(argv)
    try:
        text = render(build())
    except ImportError as error:
        print(f"gen_opdata: needs torch and PyYAML installed: {error}", file=sys.stderr)
        return 2
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
        if current != text:
            print(f"{args.output} is out of date; run: python -m ppy_check.gen_opdata", file=sys.stderr)
            return 1
        print(f"{args.output} matches the installed torch")
        return 0
    args.output.write_text(text, encoding="utf-8")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
