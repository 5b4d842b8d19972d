"""Regenerate ``ppy_check/opdata.json`` from the installed torch.

    python -m ppy_check.gen_opdata            # rewrite the shipped file
    python -m ppy_check.gen_opdata --check    # exit 1 if it is out of date
    python -m ppy_check.gen_opdata --no-probe # schemas only, keep the probed effects

The checker runs where torch is absent (pre-commit hooks live in their own
environment), so everything it and the compiler need to know about ATen is
frozen here, from torch itself:

- every Python-visible overload, in the order torch's Python argument parser
  tries them (torchgen's ``gen_python_functions``), with each argument's
  name, type, default and keyword-only mark;
- each native function's schema: alias and write annotations, returns, tags,
  and the C++ signature torchgen derives for it (name, argument order, which
  arguments C++ can leave out);
- which Python names reach which native function (found by object identity);
- effects the schemas do not annotate, observed by running torch's own
  OpInfo samples through every builtin (``probe.py``): composite ops that
  write an argument (batch_norm's running statistics), that may hand back
  their input or a view of it (``type_as``, ``unsafe_chunk``), or that draw
  random numbers.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import json
import os
import sys
from pathlib import Path
from typing import Any

from ppy_check.torch_namespaces import PREFIXED_NAMESPACES

DATA_PATH = Path(__file__).with_name("opdata.json")
FORMAT = 2

# Methods that hand a Python object back or read a value to the host: they have
# schemas but can never be part of a compiled region.
_HOST_METHODS = frozenset({"item", "tolist", "numpy", "data_ptr", "backward", "storage_offset"})

# The Python argument parser lets numbers bind to Tensor parameters of these
# functions only (python_arg_parser.cpp, should_allow_numbers_as_tensors).
NUMBERS_AS_TENSORS = frozenset({
    "add", "add_", "div", "div_", "divide", "divide_", "mul", "mul_", "multiply", "multiply_", "sub", "sub_",
    "subtract", "subtract_", "true_divide", "true_divide_", "to", "_to_copy", "copy_", "floor_divide",
    "floor_divide_",
})


def encode_type(kind: Any) -> Any:
    """A torchgen type as JSON: a base type's name, ``["?", T]`` or ``["[]", T, size]``."""
    from torchgen.model import BaseType, ListType, OptionalType

    if isinstance(kind, BaseType):
        return kind.name.name
    if isinstance(kind, OptionalType):
        return ["?", encode_type(kind.elem)]
    if isinstance(kind, ListType):
        return ["[]", encode_type(kind.elem), kind.size]
    raise TypeError(f"unknown torchgen type {kind!r}")


def encode_default(text: str) -> Any:
    """A schema default as JSON: Python literals as themselves, named constants as {"name": ...}."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return {"name": text}


def _alias(annotation: Any) -> Any:
    if annotation is None:
        return None
    return [sorted(annotation.alias_set), bool(annotation.is_write)]


def _native_functions() -> list[Any]:
    import torchgen
    from torchgen.gen import parse_native_yaml

    root = os.path.join(os.path.dirname(torchgen.__file__), "packaged", "ATen", "native")
    parsed = parse_native_yaml(os.path.join(root, "native_functions.yaml"), os.path.join(root, "tags.yaml"))
    return list(parsed.native_functions)


def _native_entry(native: Any) -> dict[str, Any]:
    from torchgen.api import cpp

    schema = native.func

    def argument(a: Any) -> list[Any]:
        row = [a.name, encode_type(a.type), _alias(a.annotation)]
        if a.default is not None:
            row += [encode_default(a.default), cpp.default_expr(a.default, a.type, symint=True)]
        return row

    entry: dict[str, Any] = {
        "ops": schema.name.unambiguous_name(),
        "header": native.root_name,
        "args": [argument(a) for a in schema.arguments.flat_all],
        "returns": [[r.name or "", encode_type(r.type), _alias(r.annotation)] for r in schema.returns],
    }
    tags = sorted(str(t) for t in native.tags if str(t) in ("nondeterministic_seeded", "inplace_view"))
    if tags:
        entry["tags"] = tags
    return entry


def _python_args(signature: Any, native: Any, method: bool) -> list[list[Any]]:
    """The Python-visible parameters in order: [python name, schema name, type, kwonly, default?]."""
    schema_args = {a.name: a for a in native.func.arguments.flat_all}
    rows = []

    def add(argument: Any, kwonly: bool) -> None:
        schema_arg = schema_args.get(argument.name)
        python_name = "input" if argument.name == "self" and not method else argument.name
        row: list[Any] = [python_name, argument.name, encode_type(argument.type), kwonly]
        if schema_arg is not None and schema_arg.default is not None:
            row.append(encode_default(schema_arg.default))
        elif argument.default is not None:
            # Tensor options: optional in Python even where the schema has no default.
            row.append(None if argument.default in ("None", "::std::nullopt") else encode_default(argument.default))
        rows.append(row)

    for argument in signature.input_args:
        add(argument, False)
    for argument in signature.input_kwargs:
        add(argument, True)
    for argument in signature.tensor_options_args:
        add(argument, True)
    return rows


def _overload_entry(group: Any, method: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {"native": _key(group.base), "args": _python_args(group.signature, group.base, method)}
    if group.outplace is not None and group.signature.output_args is not None:
        entry["out"] = _key(group.outplace)
        entry["outputs"] = [a.name for a in group.signature.output_args.outputs]
    if str(group.signature.name) in NUMBERS_AS_TENSORS:
        entry["numbers_as_tensors"] = True
    return entry


# Tensor methods torch binds by hand (python_variable_methods.cpp) rather than
# from a schema: each Python signature, in torch's order, as the native overload
# it reaches. (Python parameters in schema syntax, native, schema names of
# renamed parameters, schema arguments the method sets itself.) A test calls
# every entry against eager torch.
_CASTS = {
    "float": "Float", "double": "Double", "half": "Half", "bfloat16": "BFloat16", "long": "Long", "int": "Int",
    "short": "Short", "char": "Char", "byte": "Byte", "bool": "Bool", "cfloat": "ComplexFloat", "cdouble": "ComplexDouble",
}
_TO_OPTIONS = "bool non_blocking=False, bool copy=False, *, MemoryFormat? memory_format=None"
HAND_BOUND: dict[str, list[tuple[str, str, dict[str, str], dict[str, Any]]]] = {
    "to": [
        ("Device? device=None, ScalarType? dtype=None, " + _TO_OPTIONS, "to.dtype_layout", {}, {}),
        ("ScalarType dtype, " + _TO_OPTIONS, "to.dtype", {}, {}),
        ("Tensor tensor, " + _TO_OPTIONS, "to.other", {"tensor": "other"}, {}),
    ],
    "copy_": [("Tensor other, bool non_blocking=False", "copy_", {"other": "src"}, {})],
    "type": [("ScalarType dtype, bool non_blocking=False, *, MemoryFormat? memory_format=None", "to.dtype", {}, {})],
    "cpu": [("*, MemoryFormat? memory_format=None", "to.dtype_layout", {}, {"device": {"name": "cpu"}})],
    **{
        method: [("*, MemoryFormat? memory_format=None", "to.dtype", {}, {"dtype": {"name": dtype}})]
        for method, dtype in _CASTS.items()
    },
}


def _hand_bound_entries(natives: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    from torchgen.model import Argument

    result = {}
    for method, signatures in HAND_BOUND.items():
        entries = []
        for params, native_key, renamed, fixed in signatures:
            native = natives[native_key]
            schema_args = {a.name: a for a in native.func.arguments.flat_all}
            rows, kwonly = [], False
            for text in filter(None, (part.strip() for part in params.split(","))):
                if text == "*":
                    kwonly = True
                    continue
                argument = Argument.parse(text)
                schema_name = renamed.get(argument.name, argument.name)
                assert schema_name in schema_args, f"{method}: {native_key} has no argument {schema_name}"
                row: list[Any] = [argument.name, schema_name, encode_type(argument.type), kwonly]
                if argument.default is not None:
                    row.append(encode_default(argument.default))
                rows.append(row)
            entry: dict[str, Any] = {"native": native_key, "args": rows}
            if fixed:
                entry["fixed"] = fixed
            if method in NUMBERS_AS_TENSORS:
                entry["numbers_as_tensors"] = True
            entries.append(entry)
        result[method] = entries
    return result


def _key(native: Any) -> str:
    name = native.func.name
    return f"{name.name}.{name.overload_name}" if name.overload_name else str(name.name)


def _signature_groups(natives: list[Any]) -> tuple[dict[str, list[Any]], dict[str, list[Any]]]:
    """Python signature groups by name, for functions and methods, in torch's own resolution order."""
    from collections import defaultdict

    import torchgen
    from torchgen.api.python import PythonSignatureNativeFunctionPair, signature
    from torchgen.context import native_function_manager
    from torchgen.model import Variant
    from torchgen.packaged.autograd.gen_python_functions import (
        group_overloads, load_signatures, should_generate_py_binding, sort_overloads,
    )

    root = os.path.dirname(torchgen.__file__)
    deprecated = os.path.join(root, "packaged", "autograd", "deprecated.yaml")
    bound = [f for f in natives if should_generate_py_binding(f)]
    generated = {str(f.func.name.name) for f in bound}
    # Names torch binds by hand (`to`, `contiguous`, `copy_`): their schemas, in
    # case a wrapper expansion calls the native directly.
    by_hand = [
        f for f in natives
        if str(f.func.name.name) not in generated and not str(f.func.name.name).startswith("_")
        and not f.func.is_out_fn() and f.python_module is None
    ]

    def pairs(method: bool) -> list[Any]:
        variant = Variant.method if method else Variant.function
        found = [p for p in load_signatures(bound, deprecated, method=method, skip_deprecated=True)
                 if variant in p.function.variants]
        for function in by_hand:
            if variant not in function.variants:
                continue
            try:
                with native_function_manager(function):
                    found.append(PythonSignatureNativeFunctionPair(signature(function, method=method, pyi=False), function))
            except (ValueError, AssertionError):
                continue
        return found

    def grouped(method: bool) -> dict[str, list[Any]]:
        by_name: dict[tuple[Any, str], list[Any]] = defaultdict(list)
        for pair in pairs(method):
            by_name[(pair.function.python_module, pair.signature.name)].append(pair)
        result: dict[str, list[Any]] = {}
        for (_, name), members in sorted(by_name.items(), key=lambda kv: (str(kv[0][0]), kv[0][1])):
            groups = sort_overloads(group_overloads(members, symint=False), symint=False)
            kept = [g for g in groups if not any("Dimname" in str(a.type) for a in g.signature.arguments())]
            if kept:
                result.setdefault(name, []).extend(kept)
        return result

    return grouped(method=False), grouped(method=True)


def _bindings(function_names: set[str]) -> dict[str, dict[str, str]]:
    """Which Python names are builtins of which native signature, by object identity."""
    import torch

    variable_functions = torch._C._VariableFunctions
    bindings: dict[str, dict[str, str]] = {"torch": {}, "torch.nn.functional": {}, "torch._C._nn": {},
                                           "torch._C._VariableFunctions": {}}
    # Private builtins too (`torch._lu_with_info`, `torch._C._nn._upsample_bicubic2d_aa`): torch's own Python code
    # calls them, and ppy inlines that code. `torch._X` is bound where it is the builtin itself.
    for name in dir(variable_functions):
        if not name.startswith("__") and name in function_names:
            same = getattr(torch, name, None) is getattr(variable_functions, name)
            # torch.X may be Python (torch.functional.norm) around the builtin torch's own code calls as _VF.X.
            bindings["torch" if same else "torch._C._VariableFunctions"][name] = name
    for name in dir(torch._C._nn):
        if not name.startswith("__") and name in function_names:
            bindings["torch._C._nn"][name] = name
    functional = importlib.import_module("torch.nn.functional")
    for name in dir(functional):
        obj = getattr(functional, name)
        if name.startswith("_") or type(obj).__name__ != "builtin_function_or_method":
            continue
        native = getattr(obj, "__name__", name)
        if native in function_names and any(getattr(h, native, None) is obj for h in (torch._C._nn, variable_functions)):
            bindings["torch.nn.functional"][name] = native
    for namespace, (module_name, c_module_name, prefix) in PREFIXED_NAMESPACES.items():
        module = importlib.import_module(module_name)
        c_module = importlib.import_module(c_module_name)
        bindings[namespace] = {
            name: prefix + name
            for name in dir(module)
            if not name.startswith("_") and prefix + name in function_names
            and getattr(c_module, prefix + name, None) is getattr(module, name)
        }
    return bindings


def _tensor_properties() -> list[str]:
    """Attributes of torch.Tensor that are data, not methods (`x.mT`, never `x.mT()`)."""
    import inspect
    import types

    import torch

    descriptors = (property, types.GetSetDescriptorType, types.MemberDescriptorType)
    return sorted(name for name in dir(torch.Tensor) if not name.startswith("_")
                  and isinstance(inspect.getattr_static(torch.Tensor, name), descriptors))


def build_schemas() -> dict[str, Any]:
    import torch

    natives = _native_functions()
    functions, methods = _signature_groups(natives)
    properties = _tensor_properties()
    methods = {name: groups for name, groups in methods.items()
               if name not in _HOST_METHODS
               and (not name.startswith("_") or (name.startswith("__") and name.endswith("__")))}
    by_key = {_key(n): n for n in natives}
    hand_bound = _hand_bound_entries(by_key)
    used = {key: by_key[key] for entries in hand_bound.values() for entry in entries for key in [entry["native"]]}
    for groups in list(functions.values()) + list(methods.values()):
        for group in groups:
            for native in (group.base, group.outplace):
                if native is not None:
                    used[_key(native)] = native
    method_entries = {name: [_overload_entry(g, method=True) for g in groups] for name, groups in methods.items()}
    method_entries.update(hand_bound)
    return {
        "format": FORMAT,
        "torch_version": str(torch.__version__).split("+")[0],
        "natives": {key: _native_entry(native) for key, native in sorted(used.items())},
        "functions": {name: [_overload_entry(g, method=False) for g in groups] for name, groups in sorted(functions.items())},
        "methods": dict(sorted(method_entries.items())),
        "bindings": {ns: dict(sorted(names.items())) for ns, names in sorted(_bindings(set(functions)).items())},
        "properties": properties,
        "python_functions": python_functions(),
    }


# torch.nn's modules defining the module classes whose `forward` a module region inlines (nn_classes.py).
NN_MODULES = tuple(f"torch.nn.modules.{name}" for name in (
    "linear", "normalization", "activation", "dropout", "sparse", "flatten", "batchnorm", "conv", "container",
    "pixelshuffle"))

# torch's own Python modules whose functions a region may call: their source ships (torch_python/), and
# the model builder inlines a function of them as it inlines a helper, folding the tests on literal
# arguments (`if reduction == "mean"`).
PYTHON_MODULES = ("torch.nn.functional", "torch.functional", "torch.nn._reduction", "torch.nn.modules.utils",
                  "torch._tensor", "torch.signal.windows.windows", "torch.masked._ops", *NN_MODULES)
PYTHON_SOURCES = Path(__file__).with_name("torch_python")


def python_sources() -> dict[str, str]:
    """The shipped source text of each of torch's Python modules ppy inlines from."""
    import inspect

    return {name: inspect.getsource(importlib.import_module(name)) for name in PYTHON_MODULES}


# The namespaces whose Python-level functions a region may call, and so must each lower or be refused.
PYTHON_NAMESPACES = ("torch.nn.functional", "torch", "torch.masked", "torch.linalg", "torch.signal.windows")


def python_functions() -> dict[str, list[str]]:
    """The public Python-level functions of torch's namespaces (not builtins), and the Python-level methods of
    ``torch.Tensor`` (``torch/_tensor.py``, dunders included): what regions may call there."""
    import types

    import torch

    found = {}
    for namespace in PYTHON_NAMESPACES:
        module = importlib.import_module(namespace)
        found[namespace] = sorted(
            name for name, value in vars(module).items()
            if not name.startswith("_") and isinstance(value, types.FunctionType)
            and getattr(value, "__module__", "").startswith("torch"))
    found["torch.Tensor"] = sorted(
        name for name, value in vars(torch.Tensor).items()
        if isinstance(value, types.FunctionType) and getattr(value, "__module__", "") == "torch._tensor"
        and (not name.startswith("_") or (name.startswith("__") and name.endswith("__"))))
    return found


def build(probe: bool = True, previous: dict[str, Any] | None = None) -> dict[str, Any]:
    data = build_schemas()
    if probe:
        from ppy_check.probe import probe_effects  # probing needs expecttest: only when asked to probe

        data["effects"] = probe_effects(data)
    else:
        data["effects"] = (previous or {}).get("effects", {})
    return data


def build_for_installed(shipped: dict[str, Any]) -> tuple[dict[str, Any], list[str], list[str]]:
    """Op data for the installed torch, made from it, probing only what ``shipped`` cannot answer.

    The probed effects of a native overload whose schema entry reads exactly as in ``shipped`` are taken
    from there (probing every op takes minutes; these a second or so); the new and changed overloads are
    probed (``probe_effects(natives=...)``), or, where probing cannot run (no ``expecttest``, which torch's
    OpInfo samples import), left with no effects and listed as unprobed. Returns the data, the overloads
    probed and those left unprobed.
    """
    data = build_schemas()
    same_format = shipped.get("format") == FORMAT
    known: dict[str, Any] = shipped.get("natives", {}) if same_format else {}
    changed = frozenset(key for key, entry in data["natives"].items() if known.get(key) != entry)
    effects = {key: value for key, value in (shipped.get("effects", {}) if same_format else {}).items()
               if key in data["natives"] and key not in changed}
    probed: list[str] = []
    unprobed: list[str] = []
    if changed and importlib.util.find_spec("expecttest") is None:
        unprobed = sorted(changed)
    elif changed:
        from ppy_check.probe import probe_effects

        effects.update(probe_effects({**data, "effects": effects}, natives=changed))
        probed = sorted(changed)
    data["effects"] = dict(sorted(effects.items()))
    return data, probed, unprobed


def write_entry(folder: Path, shipped_path: Path) -> dict[str, Any]:
    """Write op data and torch's Python sources for the installed torch into ``folder`` (the cache's staging
    folder, ``installed_opdata.py``), and a report of what was probed and how long each part took."""
    import time

    started = time.perf_counter()
    data, probed, unprobed = build_for_installed(json.loads(shipped_path.read_text(encoding="utf-8")))
    built = time.perf_counter()
    written = [folder / "opdata.json"]
    written[0].write_text(render(data), encoding="utf-8")
    (folder / "torch_python").mkdir(mode=0o700)
    for name, source in python_sources().items():
        written.append(folder / "torch_python" / f"{name}.py.txt")
        written[-1].write_text(source, encoding="utf-8")
    for path in written:
        path.chmod(0o600)  # the cache trusts no file others may write, whatever the umask made it
    import torch

    report = {"torch": str(torch.__version__), "probed": probed, "unprobed": unprobed,
              "seconds": {"data": round(built - started, 2), "sources": round(time.perf_counter() - built, 2)}}
    (folder / "report.json").write_text(json.dumps(report), encoding="utf-8")
    return report


def render(data: dict[str, Any]) -> str:
    # One entry a line: a new torch's diff stays readable.
    lines = ["{", f'  "format": {json.dumps(data["format"])},', f'  "torch_version": {json.dumps(data["torch_version"])},']
    sections = [key for key in ("natives", "functions", "methods", "effects") if key in data]
    for key in sections:
        items = list(data[key].items())
        lines.append(f"  {json.dumps(key)}: {{")
        for index, (name, value) in enumerate(items):
            comma = "," if index < len(items) - 1 else ""
            lines.append(f"    {json.dumps(name)}: {json.dumps(value, sort_keys=True, separators=(',', ':'))}{comma}")
        lines.append("  },")
    lines.append(f'  "properties": {json.dumps(data["properties"])},')
    lines.append(f'  "python_functions": {json.dumps(data["python_functions"], sort_keys=True)},')
    lines.append(f'  "bindings": {json.dumps(data["bindings"], sort_keys=True, separators=(",", ":"))}')
    lines += ["}", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ppy_check.gen_opdata", description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the shipped file differs from the installed torch")
    parser.add_argument("--no-probe", action="store_true",
                        help="regenerate the schemas only and keep the shipped probed effects (fast)")
    parser.add_argument("--output", type=Path, default=DATA_PATH, help="where to write (default: the shipped file)")
    parser.add_argument("--cache-entry", type=Path, metavar="FOLDER",
                        help="write op data and sources for the installed torch into FOLDER, reusing the effects "
                             "of --shipped's unchanged overloads (what ppy runs once per torch version)")
    parser.add_argument("--shipped", type=Path, default=DATA_PATH, help="the op data to reuse effects from")
    args = parser.parse_args(argv)
    if args.cache_entry is not None:
        try:
            report = write_entry(args.cache_entry, args.shipped)
        except ImportError as error:
            print(f"gen_opdata: needs torch and PyYAML installed: {error}", file=sys.stderr)
            return 2
        print(json.dumps(report))
        return 0
    current = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
    previous = json.loads(current) if current else None
    try:
        text = render(build(probe=not args.no_probe, previous=previous))
    except ImportError as error:
        print(f"gen_opdata: needs torch, PyYAML and (to probe) expecttest installed: {error}", file=sys.stderr)
        return 2
    sources = python_sources()
    if args.check:
        stale = current != text or any(
            not (PYTHON_SOURCES / f"{name}.py.txt").exists()
            or (PYTHON_SOURCES / f"{name}.py.txt").read_text(encoding="utf-8") != source
            for name, source in sources.items())
        if stale:
            print(f"{args.output} is out of date; run: python -m ppy_check.gen_opdata", file=sys.stderr)
            return 1
        print(f"{args.output} matches the installed torch")
        return 0
    args.output.write_text(text, encoding="utf-8")
    PYTHON_SOURCES.mkdir(exist_ok=True)
    for name, source in sources.items():
        (PYTHON_SOURCES / f"{name}.py.txt").write_text(source, encoding="utf-8")
    print(f"wrote {args.output} and {PYTHON_SOURCES}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
