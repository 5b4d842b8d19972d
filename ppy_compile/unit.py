"""Print regions as C++ and assemble them into translation units, each one module.

A unit holds the shared preamble, each region as a plain C++ function (what
``ppy show`` prints), and for each a CPython entry point. The entry binds the
call's arguments as Python would (keywords and defaults included) and takes
each only when it is exactly the type its annotation names; anything else (an
``int`` where a ``bool`` is declared, a list for a tuple, a tensor subclass with
``__torch_function__``) runs the Python body instead, so the answer is always
the one Python gives. It releases the GIL around the call, runs the body below
autograd when autograd would record nothing for this call (see ``_below``),
and converts the result back. When the body raises, the Python traceback gains
the region's own line (``ppy_bridge::located``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ppy_check.model import ir
from ppy_check.model import types as t
from ppy_check.model.ir import GradMode, RegionModel
from ppy_compile import cpp_files
from ppy_compile.bench_entries import bench_entries
from ppy_compile.cpp_types import comment, string_literal
from ppy_compile.emit import Printer
from ppy_compile.entry_parts import below_autograd, method_row, take_arguments
from ppy_compile.options import BuildOptions

from ppy_compile.options import MODULE_NAME


@dataclass(frozen=True)
class UnitRegion:
    model: RegionModel
    symbol: str  # the C++ function's name (RegionSite.cpp_symbol)


# Ops that exist for autograd itself: a region calling one needs autograd's layers on every call.
_AUTOGRAD_OPS = frozenset({"_make_dual", "_make_dual_copy", "_unpack_dual", "_fw_primal", "_fw_primal_copy",
                           "retain_grad"})
BELOW_AUTOGRAD = "at::AutoDispatchBelowAutograd"
BELOW_AD_INPLACE_OR_VIEW = "at::AutoDispatchBelowADInplaceOrView"


def _nodes(node: Any) -> Iterator[Any]:
    """Every model record under ``node``, itself included (not the schema objects a call points at)."""
    if isinstance(node, (tuple, list)):
        for item in node:
            yield from _nodes(item)
        return
    if not dataclasses.is_dataclass(node) or type(node).__module__ != ir.__name__:
        return
    yield node
    for field in dataclasses.fields(node):
        yield from _nodes(getattr(node, field.name))


def _may_be_view(value: Any, lets: dict[int, Any]) -> bool:
    """Whether a returned value may be a view (or the very tensor) of something the body saw; a parameter
    handed back as itself is not: the caller gets its own tensor."""
    if isinstance(value, ir.Param):
        return False
    if isinstance(value, ir.Read):
        return value.var.index not in lets or _may_be_view(lets[value.var.index], lets)
    if isinstance(value, ir.Call):
        return any(r.alias is not None for r in value.native.returns) or bool(value.native.effects.aliases)
    if isinstance(value, ir.MakeTuple):
        return any(_may_be_view(item, lets) for item in value.items)
    if isinstance(value, ir.MakeSeq):
        return any(_may_be_view(part, lets) for part, _ in value.parts)
    if isinstance(value, (ir.Item, ir.Unwrap, ir.SeqIndex, ir.SeqSlice)):
        return _may_be_view(value.base, lets)
    return not isinstance(value, (ir.Const, ir.Host, ir.Length, ir.TensorQuery, ir.IsNone))


def _below(model: RegionModel) -> str | None:
    """The guard a call runs the body under when autograd would record nothing for it, or None: never.

    Below autograd nothing records a graph. ADInplaceOrView, the layer under
    it, bumps the version counters of tensors written in place and gives
    views their view metadata (a base, a shared version counter, how they
    were made); a body that writes nothing in place and returns no view has
    nothing there anyone could see, so it skips that layer too. A body that
    itself makes a tensor require grad, or enables grad, needs autograd on
    every call.
    """
    nodes = list(_nodes(model.body))
    calls = [n for n in nodes if isinstance(n, ir.Call)]
    if model.grad_mode is GradMode.ENABLE_GRAD or any(
            c.requires_grad is not None or c.native.name in _AUTOGRAD_OPS for c in calls):
        return None
    lets = {s.var.index: s.value for s in model.body if isinstance(s, ir.Let)}
    writes = (model.writes or any(isinstance(n, ir.Store) for n in nodes)
              or any(c.native.writes or c.native.effects.writes for c in calls))
    views = any(_may_be_view(s.value, lets) for s in model.body if isinstance(s, ir.Return) and s.value is not None)
    return BELOW_AUTOGRAD if writes or views else BELOW_AD_INPLACE_OR_VIEW


def _entry(region: UnitRegion, name: str, below: str | None) -> str:
    """The region's CPython vectorcall entry (see the module docstring); ``self`` is its module or a region context."""
    model = region.model
    count = len(model.params)
    bail = "ppy_bridge::not_taken(self, args, nargsf, kwnames)"
    taken, names = take_arguments(model, "argv", bail)
    call = f"{region.symbol}({', '.join(names)})"
    lines = [
        f"static PyObject* {name}(PyObject* self, PyObject* const* args, size_t nargsf, PyObject* kwnames) {{",
        f"    PyObject* bound[{max(count, 1)}];",
        "    PyObject* const* argv = args;",
        # A module constant, helper or torch function the build assumed was rebound: Python's answer, not the build's.
        "    int current = ppy_bridge::names_current(self);",
        f"    if (current <= 0) return current < 0 ? nullptr : {bail};",
        # Every parameter given positionally, in order, is the call that needs no binding.
        f"    if ({'true' if any(p.kwonly for p in model.params) else f'kwnames != nullptr || PyVectorcall_NARGS(nargsf) != {count}'}) {{",
        f"        int ready = ppy_bridge::bind(self, {string_literal(model.name)}, args, nargsf, kwnames, {count}, bound);",
        "        if (ready <= 0) return ready < 0 ? nullptr : ppy_bridge::slow_call(self, args, nargsf, kwnames);",
        "        argv = bound;",
        "    }",
        *taken,
        "    try {",
    ]
    guard = "".join(f" {line}" for line in below_autograd(below, names))
    if isinstance(model.returns, t.NoneT):
        lines.append(f"        {{ ppy::WithoutGil released;{guard} {call}; }}")
        lines.append("        Py_RETURN_NONE;")
    else:
        lines.append(f"        auto result = [&] {{ ppy::WithoutGil released;{guard} return {call}; }}();")
        # Python hands some results back as a tuple subclass (torch.Size, torch.return_types.max): so does the region.
        lines.append("        PyObject* converted = ppy::to_python(result);")
        for index, (path, kind) in enumerate(model.result_classes):
            where = ", ".join(str(i) for i in path)
            lines.append(f"        static PyObject* ppy_class_{index} = nullptr;")
            lines.append(f"        converted = ppy::as_class(converted, {{{where}}}, ppy_class_{index}, "
                         f"{string_literal(kind.module)}, {string_literal(kind.name)});")
        lines.append("        return converted;")
    lines += ["    } catch (const ppy::PythonError& error) {",
              "        error.raise();",
              "        return ppy_bridge::located(self, ppy::take_failed_line());",
              "    } catch (...) {",
              "        ppy_bridge::raise_current();",
              "        return ppy_bridge::located(self, ppy::take_failed_line());",
              "    }", "}"]
    return "\n".join(lines)


class Unprintable(Exception):
    """ppy could not print a region as C++ (a ppy bug in its lowering): that region runs as Python."""


@dataclass(frozen=True)
class PrintedRegion:
    """One region as C++: its function and entries (``text``), the headers they need and its method rows.

    ``text`` with ``headers`` is all a region adds to a unit: its digest decides
    whether a build already holds the region, whatever unit it was built in.
    """

    region: UnitRegion
    text: str
    headers: frozenset[str]
    methods: tuple[str, ...]


def print_region(region: UnitRegion, options: BuildOptions) -> PrintedRegion:
    """The region's C++ function and CPython entry (and the benchmark entries, when asked for)."""
    printer = Printer(region.model, region.symbol, options)
    try:
        function = printer.function()
    except Exception as error:
        raise Unprintable(f"{type(error).__name__}: {error}") from error
    below = _below(region.model)
    if below == BELOW_AD_INPLACE_OR_VIEW and options.mutation is not None:
        # A deliberate miscompilation (ppy's verifier tests) may write where the model does not:
        # the version counters that catch it come from ADInplaceOrView.
        below = BELOW_AUTOGRAD
    parts = [function, _entry(region, f"py_{region.symbol}", below) + "\n"]
    methods = [method_row(region.symbol, f"py_{region.symbol}", "METH_FASTCALL | METH_KEYWORDS")]
    if options.repeat_entry:
        for name, entry, text in bench_entries(region, below):
            parts.append(text + "\n")
            methods.append(method_row(name, entry, "METH_FASTCALL"))
    return PrintedRegion(region, "\n".join(parts), frozenset(printer.headers), tuple(methods))


@dataclass(frozen=True)
class Unit:
    source: str
    shipped: tuple[str, ...]  # the shipped C++ files (cpp_files) its source includes, which its build copies
    # For each region symbol, the unit's lines it owns (first, last), to blame a compiler error on one region.
    owned: dict[str, tuple[int, int]]


def translation_unit(printed: list[PrintedRegion], origin: str, options: BuildOptions,
                     precompiled: bool = False) -> Unit:
    """One module holding the printed regions (their symbols distinct): the shipped helpers' includes, each
    region's function and entry, and the module's method table.

    With ``precompiled``, the unit starts with the precompiled header (it must
    come first to be used); the includes after it are then already satisfied.
    """
    headers = set().union(*(p.headers for p in printed))
    # A region asks for ppy's own headers (ppy_indexing.h) as for torch's; the benchmarks' probe (`__ppy_probe`)
    # is a shipped file, which includes the op headers it calls.
    helpers = sorted(header for header in headers if header in cpp_files.HELPERS)
    shipped = (cpp_files.RUNTIME, *helpers, *((cpp_files.PROBE,) if options.repeat_entry else ()))
    parts = ['#include "ppy_pch.h"'] if precompiled else []
    parts.append(comment(f"Generated by ppy from {origin}. Do not edit: edit the regions and rebuild."))
    parts.extend(f'#include "{name}"' for name in shipped)
    parts.extend(f"#include <{header}>" for header in sorted(headers - set(helpers)))
    # Internal linkage: regions of one name in two loaded modules never resolve to each other's code.
    parts.append("namespace {")
    owned: dict[str, tuple[int, int]] = {}
    for region in printed:
        first = sum(part.count("\n") + 1 for part in parts) + 1
        parts.append(region.text)
        owned[region.region.symbol] = (first, first + region.text.count("\n"))
    table = [row for region in printed for row in region.methods]
    if options.repeat_entry:
        table.append(method_row("__ppy_probe", "py_probe", "METH_FASTCALL"))
    parts.append("}  // namespace")
    rows = ",\n".join(table)
    parts.append(f"static PyMethodDef ppy_methods[] = {{\n{rows},\n    {{nullptr, nullptr, 0, nullptr}}\n}};")
    parts.append(f'static PyModuleDef ppy_module = {{PyModuleDef_HEAD_INIT, "{MODULE_NAME}", nullptr, -1, ppy_methods}};')
    parts.append(f"PyMODINIT_FUNC PyInit_{MODULE_NAME}() {{ ppy::read_flags(); return PyModule_Create(&ppy_module); }}")
    return Unit("\n".join(parts) + "\n", shipped, owned)
