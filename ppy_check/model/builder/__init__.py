"""Build a region's model: run its body once, as Python would, on static types.

For each statement, in order, the builder evaluates the expressions Python
would evaluate, in Python's order, and records what each is: a call bound to
the torch overload Python's argument parser would pick, scalar arithmetic
with Python's own result types, indexing, tuple building. Values carry the
parameters they may alias, so writes through views land on the parameter they
reach. A construct the builder cannot give a complete meaning becomes a
problem (a finding); then the region has no model, and nothing downstream can
compile something the checker did not accept.

torch's Python-level functions (``F.softmax``, ``F.cross_entropy``,
``Tensor.unique``) are inlined from torch's own source (``torch_python.py``)
as a helper is, over arguments already evaluated once; tests on literal
arguments (``inplace``, ``reduction == "mean"``) fold at build time.

How the builder is put together (as mypy's checker is): one shared state
(``state.BuildState``: the frame stack, the model being built, counters,
problems) and parts, each a separate object holding every other part and
calling it only through the small typed API of ``api.py`` (a protocol per
part, of what other parts call on it). ``assemble()`` makes and wires them
once per region. The parts, by syntax category:

- ``statements.Statements``: statements, assignment targets, ``return``;
- ``expressions.Expressions``: expression dispatch, names, constants, f-strings;
- ``members.Members``: attributes, tensor properties, subscripts and indexes;
- ``operators.Operators``: binary, unary and comparison operators;
- ``calls.Calls``: calls, arguments, binding to torch's overloads;
- ``host_math.HostMath``: Python builtins and ``math`` on host values;
- ``inlining.Inliner``: helpers and regions inlined, and their templates;
- ``einops_lowering.EinopsLowering``: ``einops`` calls;
- ``modules.Modules``: what a method region reaches through ``self`` (attribute inputs, submodule calls).

Dialects: a frame (``frame.Frame``) holds the dialect its function is
written in, and the parts ask it wherever the two languages differ instead
of testing a flag: ``region_dialect.RegionDialect`` (a user's region, under
the rules, and its refusals) and ``library_dialect.LibraryDialect`` (torch's
own Python source: folding, run-time decisions, unrolling, imports). Both
answer the ``dialect.Dialect`` protocol. A third dialect (methods of
``nn.Module`` as regions, say) is a new part module with a class answering
``Dialect``, one more field in ``part.Wiring`` and in ``assemble()``, and a
frame that is given it; the other dialects' code is not touched.
"""

from __future__ import annotations

from ppy_check import reads
from ppy_check.model.budgets import Budget, Exceeded
from ppy_check.model.builder.calls import Calls
from ppy_check.model.builder.control import _OutOfBudget
from ppy_check.model.builder.einops_lowering import EinopsLowering
from ppy_check.model.builder.expressions import Expressions
from ppy_check.model.builder.frame import Analysis
from ppy_check.model.builder.host_math import HostMath
from ppy_check.model.builder.inlining import Inliner
from ppy_check.model.builder.library_dialect import LibraryDialect
from ppy_check.model.builder.members import Members
from ppy_check.model.builder.modules import Modules
from ppy_check.model.builder.operators import Operators
from ppy_check.model.builder.part import Wiring
from ppy_check.model.builder.region_dialect import RegionDialect
from ppy_check.model.builder.state import BuildState
from ppy_check.model.builder.statements import Statements
from ppy_check.model.builder.text import _short
from ppy_check.region import Region
from ppy_check.schema import OpData


def assemble(region: Region, data: OpData | None = None, deadline: float | None = None) -> BuildState:
    """The builder of one region: its shared state and its parts, wired to each other once."""
    state = BuildState(region, data, deadline)
    stmts = Statements(state)
    exprs = Expressions(state)
    members = Members(state)
    ops = Operators(state)
    calls = Calls(state)
    host_math = HostMath(state)
    inliner = Inliner(state)
    einops_lowering = EinopsLowering(state)
    modules = Modules(state)
    region_dialect = RegionDialect(state)
    library_dialect = LibraryDialect(state)
    wiring = Wiring(
        state=state,
        stmts=stmts,
        exprs=exprs,
        members=members,
        ops=ops,
        calls=calls,
        host_math=host_math,
        inliner=inliner,
        einops_lowering=einops_lowering,
        modules=modules,
        region_dialect=region_dialect,
        library_dialect=library_dialect,
    )
    for part in (
        state,
        stmts,
        exprs,
        members,
        ops,
        calls,
        host_math,
        inliner,
        einops_lowering,
        modules,
        region_dialect,
        library_dialect,
    ):
        part.connect(wiring)
    return state


def build_model(region: Region, deadline: float | None = None) -> Analysis:
    """The region's model. Whatever stops the builder is the region's one finding, never an exception: a budget
    running out (``budgets``; ``deadline``, a time.monotonic(), is ppy-check's budget for the file), a body nested
    too deeply for this recursive builder, memory, or a failure of the builder itself."""
    import os
    import sys

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, 20000))
    builder = assemble(region, deadline=deadline)
    try:
        return builder.build()
    except _OutOfBudget as stop:
        return builder.stopped(stop.exceeded)
    except RecursionError:
        reads.unrepeatable()  # how deep the stack already was decides it: another process may finish
        return builder.stopped(Exceeded(Budget.DEPTH, 0))
    except MemoryError:
        reads.unrepeatable()
        return builder.stopped(Exceeded(Budget.MEMORY, 0))
    except Exception as error:  # a builder bug: this region's alone, refused, and the rest of the file is checked
        reads.unrepeatable()  # a fixed checker answers otherwise, and one failing on memory it could not get
        if os.environ.get("PPY_DEBUG"):
            import traceback  # only for this rare failure: its import (and textwrap's) is a tenth of a small check

            traceback.print_exc()
        return builder.stopped(None, f"{type(error).__name__}: {_short(str(error))}")
    finally:
        builder.release()
        sys.setrecursionlimit(limit)


__all__ = ["Analysis", "assemble", "build_model"]
