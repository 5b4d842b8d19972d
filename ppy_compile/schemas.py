"""torch's operator schemas, as its own Python binding generator sees them.

Everything here comes from torchgen, which ships with torch: the native
functions of ``native_functions.yaml``, the Python signatures the argument
parser uses, in the order it tries them, and the C++ signatures torchgen
derives. Loading takes about a second, so it happens only when a region must
be lowered (a cache miss), never on a warm start.
"""

from __future__ import annotations

import functools
import os
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

# Python module of a native function (its `python_module:` in the yaml) by the
# namespace a region calls it through.
PYTHON_MODULES = {
    "torch": None,
    "torch._C._VariableFunctions": None,
    "torch.nn.functional": "nn",
    "torch._C._nn": "nn",
    "torch.special": "special",
    "torch.linalg": "linalg",
    "torch.fft": "fft",
}
# Prefix a namespace's Python names carry on the native function.
NATIVE_PREFIX = {"special": "special_", "linalg": "linalg_", "fft": "fft_"}


@dataclass(frozen=True)
class Overload:
    """One Python-visible overload: its Python signature and the native functions behind it."""

    signature: Any  # torchgen.api.python.PythonSignature
    base: Any  # torchgen.model.NativeFunction
    outplace: Any | None  # the out= variant, when there is one

    @property
    def schema(self) -> str:
        return str(self.base.func)


@dataclass(frozen=True)
class Catalog:
    functions: dict[tuple[str | None, str], tuple[Overload, ...]]
    methods: dict[str, tuple[Overload, ...]]
    natives: dict[str, Any]  # native name (e.g. "add.Tensor") -> NativeFunction

    def function(self, namespace: str, name: str) -> tuple[Overload, ...]:
        """Overloads of ``namespace.name`` (``torch.add``, ``F.gelu``), in the order torch tries them."""
        module = PYTHON_MODULES.get(namespace, "__none__")
        if module == "__none__":
            return ()
        found = self.functions.get((module, NATIVE_PREFIX.get(module or "", "") + name))
        if found is None and module == "nn":
            # Some functional builtins are bound from the torch namespace (F.conv2d is torch.conv2d).
            found = self.functions.get((None, name))
        return found or ()

    def native(self, name: str) -> tuple[Overload, ...]:
        """Overloads of a native function by its own name, whatever Python module it sits in."""
        for (module, python_name), overloads in self.functions.items():
            if python_name == name:
                return overloads
        return ()

    def method(self, name: str) -> tuple[Overload, ...]:
        return self.methods.get(name, ())


def _groups(pairs: Sequence[Any]) -> dict[Any, tuple[Overload, ...]]:
    from torchgen.packaged.autograd.gen_python_functions import group_overloads, sort_overloads

    by_name: dict[Any, list[Any]] = defaultdict(list)
    for pair in pairs:
        key = (pair.function.python_module, pair.signature.name)
        by_name[key].append(pair)
    result = {}
    for key, members in by_name.items():
        groups = sort_overloads(group_overloads(members, symint=False), symint=False)
        overloads = tuple(
            Overload(g.signature, g.base, g.outplace)
            for g in groups
            if not any("Dimname" in str(a.type) for a in g.signature.arguments())
        )
        if overloads:
            result[key] = overloads
    return result


@functools.lru_cache(maxsize=1)
def catalog() -> Catalog:
    import torchgen
    from torchgen.gen import parse_native_yaml
    from torchgen.model import Variant
    from torchgen.packaged.autograd.gen_python_functions import load_signatures, should_generate_py_binding

    root = os.path.dirname(torchgen.__file__)
    native = os.path.join(root, "packaged", "ATen", "native")
    parsed = parse_native_yaml(os.path.join(native, "native_functions.yaml"), os.path.join(native, "tags.yaml"))
    bound = [f for f in parsed.native_functions if should_generate_py_binding(f)]
    deprecated = os.path.join(root, "packaged", "autograd", "deprecated.yaml")
    function_pairs = [
        p for p in load_signatures(bound, deprecated, method=False, skip_deprecated=True)
        if Variant.function in p.function.variants
    ]
    method_pairs = [
        p for p in load_signatures(bound, deprecated, method=True, skip_deprecated=True)
        if Variant.method in p.function.variants
    ]
    functions = _groups(function_pairs)
    methods = {name: overloads for (_, name), overloads in _groups(method_pairs).items()}
    natives = {str(f.func.name): f for f in parsed.native_functions}
    return Catalog(functions, methods, natives)


def torch_version() -> str:
    import torch

    return str(torch.__version__)
