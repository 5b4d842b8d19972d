"""An error inside a compiled region points at the region's own line, as Cython's do for .pyx lines.

The traceback gains a frame `File "<the region's file>", line N, in <region>` for the statement that
raised, right below the caller's frame (no frame of ppy's between), where the Python body's own frame
would be; the message keeps torch's text and adds the statement.
"""

from __future__ import annotations

import importlib.util
import linecache
import traceback
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import Any

import pytest

torch = pytest.importorskip("torch")

import failing_regions  # noqa: E402
from tests.support.old_dynamo import skip_if_calls_take_python  # noqa: E402
from ppy import runtime  # noqa: E402


@pytest.fixture(autouse=True)
def entry() -> Iterator[None]:
    """Calls reach the compiled entry (`--ppy-verify`'s observer, set aside here, would add its own frames)."""
    observer = runtime._observer
    runtime.set_observer(None)
    for region in (failing_regions.project, failing_regions.first_part, failing_regions.spread,
                   failing_regions.through_helpers, failing_regions.looked_up):
        assert region.build(), f"{region.__name__} did not compile"
    try:
        yield
    finally:
        runtime.set_observer(observer)


def raised(call: Callable[[], Any]) -> BaseException:
    with pytest.raises(Exception) as caught:
        call()
    return caught.value


def frames(error: BaseException) -> list[tuple[str, int, str]]:
    """(file, line, function) of each traceback entry, outermost first."""
    entries = []
    tb: TracebackType | None = error.__traceback__
    while tb is not None:
        entries.append((tb.tb_frame.f_code.co_filename, tb.tb_lineno, tb.tb_frame.f_code.co_name))
        tb = tb.tb_next
    return entries


def line_of(text: str) -> int:
    with open(failing_regions.__file__, encoding="utf-8") as source:
        return next(number for number, line in enumerate(source, 1) if text in line)


CASES = {
    # An ATen error: torch's message and type.
    "aten": (failing_regions.project, (torch.randn(2, 3), torch.randn(5, 4)), "y = torch.matmul(h, w)"),
    # ppy's own Python arithmetic: ZeroDivisionError, as Python raises it.
    "arithmetic": (failing_regions.first_part, (torch.randn(6), 0), "size = x.shape[0] // parts"),
    # A statement over several lines: the line where the failing call starts, as Python reports it.
    "multi-line": (failing_regions.spread, (torch.randn(3, 3), torch.randn(4, 4)), ") + torch.matmul("),
}


@pytest.mark.parametrize("case", CASES)
def test_the_innermost_frame_is_the_regions_statement(case: str) -> None:
    skip_if_calls_take_python()
    region, args, statement = CASES[case]
    compiled, python = raised(lambda: region(*args)), raised(lambda: region.python(*args))
    assert type(compiled) is type(python)
    line = line_of(statement)
    here = frames(compiled)
    assert here[-1] == (failing_regions.__file__, line, region.__name__) == frames(python)[-1]
    # Right below the caller's frame: nothing of ppy's in between.
    assert [entry[2] for entry in here] == ["raised", "<lambda>", region.__name__]
    # Torch's (or Python's) own message, then the statement.
    message, theirs = str(compiled), str(python)
    assert message.startswith(theirs)
    assert message[len(theirs):] == f"\n  in region `{region.__qualname__}`, line {line}: {statement.strip()}"
    # linecache finds the line, as for any Python frame.
    printed = "".join(traceback.format_exception(compiled))
    assert f'File "{failing_regions.__file__}", line {line}, in {region.__name__}\n    {statement.strip()}' in printed


def test_the_frame_comes_through_the_runtime_too() -> None:
    # `pytest --ppy-verify` watches every call, routing it through ppy.runtime (and `region.compiled`).
    region, args, statement = CASES["aten"]
    seen: list[Any] = []
    runtime.set_observer(lambda *call: seen.append(call))
    try:
        error = raised(lambda: region(*args))
    finally:
        runtime.set_observer(None)
    assert seen and frames(error)[-1] == (failing_regions.__file__, line_of(statement), region.__name__)


def test_a_call_that_succeeds_after_a_failure_is_not_blamed() -> None:
    region, args, _ = CASES["aten"]
    raised(lambda: region(*args))
    x, w = torch.randn(2, 3), torch.randn(3, 4)
    torch.testing.assert_close(region(x, w), region.python(x, w))
    # A failure outside any statement (here the Python body's, for an argument the entry does not take)
    # carries no region frame of the entry's own.
    error = raised(lambda: region("x", w))
    assert [entry[2] for entry in frames(error)].count(region.__name__) == 1


@pytest.mark.parametrize("args", [(torch.randn(2, 3), torch.randn(3, 4), 5), (torch.randn(2, 3), torch.randn(5, 4), -1)],
                         ids=["in torch's F.softmax", "in a helper"])
def test_a_statement_inlined_from_elsewhere_is_never_put_on_a_wrong_line(args: tuple[Any, ...]) -> None:
    # The model holds such a statement at the helper's (or torch's) own lines, not at the region's call:
    # its frame may be left out, but a region frame, if any, stands at the call.
    region = failing_regions.through_helpers
    compiled, python = raised(lambda: region(*args)), raised(lambda: region.python(*args))
    assert type(compiled) is type(python) and str(compiled).startswith(str(python))
    calls = {line_of("p = F.softmax(x, dim=dim)"), line_of("return scaled_product(p, w)")}
    assert {line for _, line, name in frames(compiled) if name == region.__name__} <= calls


def test_without_its_source_the_frame_and_the_line_still_come(tmp_path: Any) -> None:
    path = tmp_path / "gone.py"
    path.write_text("import ppy\nimport torch\n\n\n@ppy.opt(1)\ndef gone(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:\n"
                    "    return torch.matmul(x, w)\n")
    spec = importlib.util.spec_from_file_location("ppy_traceback_gone", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.gone.build()
    path.unlink()
    linecache.clearcache()
    error = raised(lambda: module.gone(torch.randn(2, 3), torch.randn(4, 5)))
    assert frames(error)[-1] == (str(path), 7, "gone")
    assert str(error).endswith("\n  in region `gone`, line 7")


def test_a_key_error_keeps_its_key() -> None:
    """A KeyError's argument is the key a handler reads; the region's line is the traceback's alone."""
    for call in (failing_regions.looked_up, failing_regions.looked_up.python):
        error = raised(lambda: call(torch.ones(2), "y"))
        assert isinstance(error, KeyError) and error.args == ("y",), error.args
    error = raised(lambda: failing_regions.looked_up(torch.ones(2), "y"))
    assert frames(error)[-1] == (failing_regions.__file__, line_of("if name != \"x\":"), "looked_up")
