"""The decorators at run time: stacking, levels, the per-region off switch, errors, and call binding."""

from __future__ import annotations

import importlib.util
import os
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

import ppy
from ppy import runtime
from ppy.decorators import disabled_for


def double(x: int) -> int:
    return x * 2


def test_stack_in_either_order() -> None:
    a = ppy.pure(ppy.opt(2)(double))
    b = ppy.opt(1)(ppy.pure(double))
    assert (a.level, a.pure) == (2, True)
    assert (b.level, b.pure) == (1, True)
    assert a.python is double and a.__name__ == "double"


def test_bare_opt_is_level_three() -> None:
    assert ppy.opt(double).level == 3


def test_a_region_is_generic_and_a_method_binds_its_instance() -> None:
    assert ppy.Region[[int], int].__origin__ is ppy.Region  # what annotations spell, at run time too
    assert isinstance(Holder.method, ppy.Region) and Holder().method(5) == 5


def test_a_region_an_instance_holds_is_a_function_not_a_descriptor() -> None:
    """`self.block = block` keeps a function region a function: its class has no __get__, which torch 2.11's Dynamo
    would take for a class attribute (and stop at: "could not find name in object's mro"). A region defined in a
    class body binds its instance, as a function defined there does."""
    region = ppy.opt(double)
    holder = Holder()
    holder.held = region  # type: ignore[attr-defined]
    assert holder.held is region and holder.held(4) == 8
    assert not hasattr(type(region), "__get__")
    assert hasattr(type(vars(Holder)["method"]), "__get__")
    nested = ppy.opt(_nested())
    assert not hasattr(type(nested), "__get__") and nested(3) == 3


def _nested() -> Callable[[int], int]:
    def inner(x: int) -> int:
        return x

    return inner


@pytest.mark.parametrize("level", [-1, 4, 10])
def test_bad_level_is_a_clear_error(level: int) -> None:
    with pytest.raises(ValueError, match="level must be 0, 1, 2 or 3"):
        ppy.opt(level)


def test_non_int_level() -> None:
    with pytest.raises(TypeError, match="must be an int"):
        ppy.opt("3")  # type: ignore[call-overload]
    with pytest.raises(TypeError, match="must be an int"):
        ppy.opt(True)


# --- compile=False and PPY_DISABLE ------------------------------------------------------


def test_compile_false_survives_stacking() -> None:
    above = ppy.pure(ppy.opt(1, compile=False)(double))
    below = ppy.opt(2, compile=False)(ppy.pure(double))
    assert [(r.level, r.pure, r.compile) for r in (above, below)] == [(1, True, False), (2, True, False)]
    assert ppy.opt(double).compile and ppy.opt(2)(double).compile
    assert not above.compile_enabled() and "compile=False" in repr(above)


def test_compile_must_be_a_bool() -> None:
    with pytest.raises(TypeError, match="compile must be True or False, not int 0"):
        ppy.opt(3, compile=0)  # type: ignore[call-overload]


def test_compile_false_never_builds(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_build(*args: object) -> None:
        raise AssertionError("a region with compile=False was built")

    monkeypatch.setattr(runtime, "_built", no_build)
    monkeypatch.delenv("PPY_DISABLE", raising=False)
    region = ppy.opt(3, compile=False)(double)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # running as Python on purpose is no fallback to warn about
        assert region(4) == 8 and region(x=5) == 10
        assert region.build() is False and region.cpp_source is None and not region.__ppy_region__


class Holder:
    def _method(self, x: int) -> int:
        return x

    # Applied by call, not as a decorator: `pytest --ppy-verify` finds regions in
    # the source, and one whose `self` is no region type would be a broken one.
    method = ppy.opt(3, compile=False)(_method)


HERE = Path(__file__).resolve()


@pytest.mark.parametrize("value, function, method", [
    ("", False, False),
    ("0", False, False),
    ("1", True, True),
    ("all", True, True),
    ("double", True, False),
    ("other, double ,", True, False),
    ("_method", False, True),
    ("Holder._method", False, True),
    ("test_decorators.double", True, False),
    ("test_decorators.Holder._method", False, True),
    (f"{HERE}::double", True, False),
    ("tests/compiler/test_decorators.py::double", True, False),
    ("test_decorators.py::Holder._method", False, True),
    ("doubl", False, False),
    ("est_decorators.py::double", False, False),
    ("test_runtime.py::double", False, False),
    ("test_decorators.py::_method", False, False),  # after a path, the qualified name
])
def test_ppy_disable_names_regions(monkeypatch: pytest.MonkeyPatch, value: str, function: bool, method: bool) -> None:
    monkeypatch.setenv("PPY_DISABLE", value)
    region = ppy.opt(3)(double)
    assert (disabled_for(region), disabled_for(Holder.method)) == (function, method)
    assert region.compile_enabled() is not function


# --- through the compiler ---------------------------------------------------------------

REGIONS = '''\
import ppy
import torch


@ppy.opt(1)
def block(x: torch.Tensor, w: torch.Tensor, eps: float) -> torch.Tensor:
    return x * w + eps


@ppy.opt(1)
def shift(x: torch.Tensor, by: float = 1.0, *, scale: float = 1.0) -> torch.Tensor:
    return x * scale + by


@ppy.opt(1, compile=False)
def scaled(x: torch.Tensor, by: float) -> torch.Tensor:
    return x * by
'''


@pytest.fixture(scope="module")
def regions_file() -> Path:
    # The generated C++ names its source file: a path that stays the same keeps the build a cache hit between runs.
    path = HERE.parents[2] / ".ppy-cache" / "sources" / "switch_regions.py"
    if not path.exists() or path.read_text() != REGIONS:
        path.parent.mkdir(parents=True, exist_ok=True)
        staged = path.with_name(f"{path.name}.{os.getpid()}")
        staged.write_text(REGIONS)
        staged.replace(path)
    return path


@pytest.fixture
def load(regions_file: Path) -> Iterator[Callable[[], ModuleType]]:
    """Fresh region objects for each load: each decides anew whether it compiles (the build is shared)."""
    def loader() -> ModuleType:
        spec = importlib.util.spec_from_file_location("switch_regions", regions_file)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    yield loader


def test_compile_false_runs_python_beside_compiled_regions(load: Callable[[], ModuleType],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    monkeypatch.delenv("PPY_DISABLE", raising=False)
    module = load()
    x = torch.randn(4)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert module.block.build() and module.shift.build()
        assert not module.scaled.build() and module.scaled.cpp_source is None
        assert torch.equal(module.scaled(x, 3.0), x * 3.0)


@pytest.mark.parametrize("value", ["shift", "switch_regions.shift", "switch_regions.py::shift", "sources/switch_regions.py::shift"])
def test_ppy_disable_switches_off_only_the_named_region(load: Callable[[], ModuleType], monkeypatch: pytest.MonkeyPatch,
                                                        regions_file: Path, value: str) -> None:
    import torch

    monkeypatch.setenv("PPY_DISABLE", value)
    module = load()
    x = torch.randn(4)
    assert module.block.build() and not module.shift.build()
    assert torch.equal(module.shift(x, 2.0, scale=3.0), x * 3.0 + 2.0)
    monkeypatch.setenv("PPY_DISABLE", f"block,{regions_file}::shift")
    module = load()
    assert not module.block.build() and not module.shift.build()


def _message(call: Callable[[], Any]) -> str:
    with pytest.raises(TypeError) as caught:
        call()
    # Raised in place of the runtime's own binding error, not chained to it.
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
    return str(caught.value)


def test_binding_errors_name_the_region_and_the_argument(load: Callable[[], ModuleType],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    monkeypatch.delenv("PPY_DISABLE", raising=False)
    module = load()
    block, shift = module.block, module.shift
    assert block.build() and shift.build()
    x = torch.randn(3)
    assert _message(lambda: block(x, x, epsilon=1e-5)) == "block() got an unexpected keyword argument 'epsilon'"
    assert _message(lambda: block(x, x)) == "block() missing 1 required positional argument: 'eps'"
    assert _message(lambda: block(x)) == "block() missing 2 required positional arguments: 'w' and 'eps'"
    assert _message(lambda: block(x, x, 1.0, 2.0)) == "block() takes 3 positional arguments but 4 were given"
    assert _message(lambda: block(x, x, 1.0, x=x)) == "block() got multiple values for argument 'x'"
    assert _message(lambda: shift(x, 1.0, 2.0)) == "shift() takes from 1 to 2 positional arguments but 3 were given"
    # The same words for a region that runs as Python.
    assert _message(lambda: module.scaled(x, bye=2.0)) == "scaled() got an unexpected keyword argument 'bye'"
    # Arguments that bind but are not of their annotated types run the Python body: its own error, untouched.
    with pytest.raises(TypeError) as compiled:
        block("x", x, eps=1.0)
    with pytest.raises(TypeError) as python:
        block.python("x", x, eps=1.0)
    assert str(compiled.value) == str(python.value)


def test_an_exact_positional_call_skips_the_runtime(load: Callable[[], ModuleType],
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    import torch

    monkeypatch.delenv("PPY_DISABLE", raising=False)
    module = load()
    assert module.block.build()
    observer = runtime._observer
    runtime.set_observer(None)  # `--ppy-verify` routes every call through the runtime; not for this one
    try:
        monkeypatch.setattr(runtime, "call", lambda *args: pytest.fail("the fast path went through the runtime"))
        x = torch.randn(3)
        assert torch.equal(module.block(x, x, 0.5), x * x + 0.5)
    finally:
        runtime.set_observer(observer)
