"""Entries a unit gets only for benchmarks (``BuildOptions.repeat_entry``, which bench/region_speed.py passes):
the region run n times in C++, and its arguments converted with nothing run. (The probe of what one op costs is
the shipped cpp/ppy_probe.h.)"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ppy_compile.cpp_types import string_literal
from ppy_compile.entry_parts import below_autograd, take_arguments

if TYPE_CHECKING:
    from ppy_compile.unit import UnitRegion

def bench_entries(region: UnitRegion, below: str | None) -> list[tuple[str, str, str]]:
    """For benchmarks (``BuildOptions.repeat_entry``), each taking every argument positionally:

    ``__ppy_repeat_<symbol>(n, *args)`` runs the body n times in C++ through the
    full dispatcher (the C++ floor); ``__ppy_repeat_below_<symbol>(n, *args)``
    does the same as a call that qualifies for the fast path would (below
    autograd, when the arguments allow); ``__ppy_convert_<symbol>(*args)``
    takes the arguments as the entry does and runs nothing.
    """
    model = region.model
    count = len(model.params)
    shown = string_literal(model.name)

    def positional(name: str, arity: int, body: list[str]) -> str:
        return "\n".join([f"static PyObject* {name}(PyObject*, PyObject* const* args, Py_ssize_t nargs) {{",
                          f"    if (nargs != {arity}) return ppy::wrong_count({shown}, {arity}, nargs);", *body, "}"])

    taken, names = take_arguments(model, "(args + 1)", "ppy::fallback()")
    call = f"{region.symbol}({', '.join(names)})"
    entries = []
    for label, guarded in (("repeat", False), ("repeat_below", True)):
        guard = "".join(f" {line}" for line in below_autograd(below if guarded else None, names))
        name = f"py_{label}_{region.symbol}"
        entries.append((f"__ppy_{label}_{region.symbol}", name, positional(name, count + 1, [
            "    int64_t count = 0;",
            "    if (ppy::take(args[0], count) <= 0) { PyErr_SetString(PyExc_TypeError, \"count\"); return nullptr; }",
            *taken,
            "    try {",
            f"        {{ ppy::WithoutGil released;{guard} for (int64_t i = 0; i < count; ++i) (void){call}; }}",
            "        Py_RETURN_NONE;",
            "    } catch (...) {",
            "        return ppy_bridge::raise_current();",
            "    }",
        ])))
    taken, _ = take_arguments(model, "args", "ppy::fallback()")
    name = f"py_convert_{region.symbol}"
    entries.append((f"__ppy_convert_{region.symbol}", name, positional(name, count, [*taken, "    Py_RETURN_NONE;"])))
    return entries

