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

@dataclass(frozen=True)
class Overload:
    """One Python-visible overload: its Python signature and the native functions behind it."""

    signature: Any  # torchgen.api.python.PythonSignature
    base: Any  # torchgen.model.NativeFunction
    outplace: Any | None  # the out= variant, when there is one


@dataclass(frozen=True)
class Catalog:
    methods: dict[str, tuple[Overload, ...]]
    by_native: dict[str, tuple[Overload, ...]]  # native function name (no overload) -> overloads

    def function(self, namespace: str, name: str) -> tuple[Overload, ...]:
        """Overloads of ``namespace.name`` (``torch.add``, ``F.gelu``), in the order torch tries them.

        Which native function a Python name is bound to comes from the same
        data the checker uses (``F.logsigmoid`` is ``log_sigmoid``).
        """
        from ppy_check import ops

        facts = ops.function(namespace, name)
        if facts is None:
            return ()
        return self.native(facts.native)

    def native(self, name: str) -> tuple[Overload, ...]:
        """Overloads of a native function by its own name, whatever Python module it sits in."""
        return self.by_native.get(name, ())

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


def _pairs(functions: list[Any], method: bool) -> list[Any]:
    """Python signatures for schemas torch binds by hand; a schema no Python signature can express is left out."""
    from torchgen.api.python import PythonSignatureNativeFunctionPair, signature
    from torchgen.context import native_function_manager

    pairs = []
    for function in functions:
        try:
            with native_function_manager(function):
                pairs.append(PythonSignatureNativeFunctionPair(signature(function, method=method, pyi=False), function))
        except (ValueError, AssertionError):
            continue
    return pairs


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
    # Where torch binds a name by hand (`to`, `contiguous`, `copy_`), every overload of its schema.
    generated = {str(f.func.name.name) for f in bound}
    by_hand = [
        f for f in parsed.native_functions
        if str(f.func.name.name) not in generated and not str(f.func.name.name).startswith("_")
        and not f.func.is_out_fn() and f.python_module is None
    ]
    function_pairs = [
        p for p in load_signatures(bound, deprecated, method=False, skip_deprecated=True) if Variant.function in p.function.variants
    ] + _pairs([f for f in by_hand if Variant.function in f.variants], method=False)
    method_pairs = [
        p for p in load_signatures(bound, deprecated, method=True, skip_deprecated=True) if Variant.method in p.function.variants
    ] + _pairs([f for f in by_hand if Variant.method in f.variants], method=True)
    functions = _groups(function_pairs)
    methods = {name: overloads for (_, name), overloads in _groups(method_pairs).items()}
    by_native = {python_name: overloads for (_, python_name), overloads in functions.items()}
    return Catalog(methods, by_native)
