"""Assemble one translation unit from the models of one Python module's regions.

The unit holds the shared preamble, each region as a plain C++ function (what
``ppy show`` prints), and for each a CPython entry point that takes its
arguments only when each is exactly the type its annotation names (anything
else, an ``int`` where a ``bool`` is declared, a list for a tuple, a tensor
subclass with ``__torch_function__``, runs the Python body instead, so the
answer is always the one Python gives), releases the GIL around the call, and
converts the result back.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ppy_check.model import types as t
from ppy_check.model.ir import RegionModel, Span
from ppy_compile.cpp_types import comment, cpp_type, string_literal
from ppy_compile.emit import Printer
from ppy_compile.options import BuildOptions
from ppy_compile.runtime_cpp import PREAMBLE

from ppy_compile.options import MODULE_NAME


@dataclass(frozen=True)
class UnitRegion:
    model: RegionModel
    symbol: str  # the C++ function's name (RegionSite.cpp_symbol)


@dataclass(frozen=True)
class Unit:
    source: str
    # For each region symbol, the unit's lines it owns (first, last), to blame a compiler error on one region.
    owned: dict[str, list[tuple[int, int]]]
    # For each unit line inside a region's function, the Python source span it came from.
    spans: dict[int, Span]
    # Regions ppy could not print as C++ (a ppy bug), by symbol: left out of the unit, with why.
    failed: dict[str, str] = field(default_factory=dict)


def _entry(region: UnitRegion, name: str, first: int, prologue: list[str], run: str) -> str:
    """A CPython fast-call function: check the count, take each argument, run the region, convert back."""
    model = region.model
    count = len(model.params) + first
    shown = string_literal(model.name)
    lines = [
        f"static PyObject* {name}(PyObject*, PyObject* const* args, Py_ssize_t nargs) {{",
        f"    if (nargs != {count}) return ppy::wrong_count({shown}, {count}, nargs);",
        *prologue,
    ]
    names = []
    for index, param in enumerate(model.params):
        source = f"args[{index + first}]"
        if isinstance(param.type, t.TensorT):
            # Borrowed from its Python object, which lives as long as the call.
            lines.append(f"    const at::Tensor* a{index} = ppy_bridge::borrow_plain_tensor({source});")
            lines.append(f"    if (a{index} == nullptr) return ppy::fallback();")
            names.append(f"*a{index}")
            continue
        initial = "{at::kCPU}" if isinstance(param.type, t.DeviceT) else "{}"
        lines.append(f"    {cpp_type(param.type)} a{index}{initial};")
        lines.append(f"    if (int taken = ppy::take({source}, a{index}); taken <= 0) return taken < 0 ? nullptr : ppy::fallback();")
        names.append(f"a{index}")
    call = f"{region.symbol}({', '.join(names)})"
    lines.append("    try {")
    if isinstance(model.returns, t.NoneT):
        lines.append(f"        {{ ppy::WithoutGil released; {run.replace('{call}', call)}; }}")
        lines.append("        Py_RETURN_NONE;")
    else:
        lines.append(f"        auto result = [&] {{ ppy::WithoutGil released; {run.replace('{call}', call)} }}();")
        # Python hands some results back as a tuple subclass (torch.Size, torch.return_types.max): so does the region.
        lines.append("        PyObject* converted = ppy::to_python(result);")
        for index, (path, kind) in enumerate(model.result_classes):
            where = ", ".join(str(i) for i in path)
            lines.append(f"        static PyObject* ppy_class_{index} = nullptr;")
            lines.append(f"        converted = ppy::as_class(converted, {{{where}}}, ppy_class_{index}, "
                         f"{string_literal(kind.module)}, {string_literal(kind.name)});")
        lines.append("        return converted;")
    lines += ["    } catch (const ppy::PythonError& error) {", "        return error.raise();",
              "    } catch (...) {", "        return ppy_bridge::raise_current();", "    }", "}"]
    return "\n".join(lines)


def translation_unit(regions: list[UnitRegion], origin: str, options: BuildOptions, precompiled: bool = False) -> Unit:
    """The unit's source, which lines each region owns, and where each function line came from.

    With ``precompiled``, the unit starts with the precompiled header (it must
    come first to be used); the includes after it are then already satisfied.
    """
    printed = []
    headers: set[str] = set()
    failed: dict[str, str] = {}
    for region in regions:
        printer = Printer(region.model, region.symbol, options)
        try:
            text, line_spans = printer.function()
        except Exception as error:  # a ppy bug in one region's lowering: that region alone runs as Python
            failed[region.symbol] = f"{type(error).__name__}: {error}"
            continue
        headers |= printer.headers
        printed.append((region, text, line_spans))
    regions = [region for region in regions if region.symbol not in failed]
    parts = ['#include "ppy_pch.h"'] if precompiled else []
    parts.append(comment(f"Generated by ppy from {origin}. Do not edit: edit the regions and rebuild."))
    parts.append(PREAMBLE.strip())
    parts.extend(f"#include <{header}>" for header in sorted(headers))
    parts.append("")
    owned: dict[str, list[tuple[int, int]]] = {r.symbol: [] for r in regions}
    spans: dict[int, Span] = {}

    def add(region: UnitRegion, text: str) -> int:
        first = sum(part.count("\n") + 1 for part in parts) + 1
        parts.append(text)
        owned[region.symbol].append((first, first + text.count("\n")))
        return first

    for region, text, line_spans in printed:
        first = add(region, text)
        for offset, span in enumerate(line_spans):
            if span is not None:
                spans[first + offset] = span
    table = []
    for region, _, _ in printed:
        run = "{call}" if isinstance(region.model.returns, t.NoneT) else "return {call};"
        add(region, _entry(region, f"py_{region.symbol}", 0, [], run) + "\n")
        table.append(_method(region.symbol, f"py_{region.symbol}"))
        if options.repeat_entry:
            prologue = ["    int64_t count = 0;",
                        "    if (ppy::take(args[0], count) <= 0) { PyErr_SetString(PyExc_TypeError, \"count\"); return nullptr; }"]
            run = ("for (int64_t i = 1; i < count; ++i) (void){call}; return {call};"
                   if not isinstance(region.model.returns, t.NoneT) else "for (int64_t i = 0; i < count; ++i) {call}")
            add(region, _entry(region, f"py_repeat_{region.symbol}", 1, prologue, run) + "\n")
            table.append(_method(f"__ppy_repeat_{region.symbol}", f"py_repeat_{region.symbol}"))
    rows = ",\n".join(table)
    parts.append(f"static PyMethodDef ppy_methods[] = {{\n{rows},\n    {{nullptr, nullptr, 0, nullptr}}\n}};")
    parts.append(f'static PyModuleDef ppy_module = {{PyModuleDef_HEAD_INIT, "{MODULE_NAME}", nullptr, -1, ppy_methods}};')
    parts.append(f"PyMODINIT_FUNC PyInit_{MODULE_NAME}() {{ return PyModule_Create(&ppy_module); }}")
    return Unit("\n".join(parts) + "\n", owned, spans, failed)


def _method(name: str, function: str) -> str:
    return (f'    {{"{name}", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>({function})), '
            "METH_FASTCALL, nullptr}")
