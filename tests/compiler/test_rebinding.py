"""Names a region reads from outside its body are Python's at every call: a rebinding is never silent.

The build bakes in a module constant, `F`, `F.gelu`, a helper and a builtin; Python reads each again at every
call. A rebinding before the first call (proved against when the region is prepared) or after it (the compiled
entry's guards) gives Python's answer, with one warning naming the name.
"""

from __future__ import annotations

import builtins
import importlib.util
import sys
import types
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from ppy import runtime
from ppy.runtime import RegionFallbackWarning

FIXTURE = Path(__file__).parents[1] / "fixtures" / "rebinding" / "rebinding.py"


@pytest.fixture
def mod(request: pytest.FixtureRequest) -> Iterator[types.ModuleType]:
    """The fixture file as a module of this test's own (its regions share one build: the file is the same)."""
    name = f"rebinding_{request.node.name}"
    spec = importlib.util.spec_from_file_location(name, FIXTURE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    observer = runtime._observer
    runtime.set_observer(None)  # the compiled entry itself, not the verifier's comparison
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        runtime.set_observer(observer)
        del sys.modules[name]


def x() -> torch.Tensor:
    return torch.tensor([1.0, -2.0, 3.0])


def test_the_common_case_runs_compiled(mod: types.ModuleType) -> None:
    for region, args in ((mod.scaled, ()), (mod.activated, ()), (mod.largest, (2, 5)), (mod.shifted, ()),
                         (mod.nudged, ()), (mod.sized, (3,))):
        assert torch.equal(region(x(), *args), region.python(x(), *args))
        assert region.__ppy_region__, region.fallback_reason


def test_a_constant_set_by_a_caller_before_the_first_call(mod: types.ModuleType) -> None:
    mod.SCALE = 5
    with pytest.warns(RegionFallbackWarning, match=r"region `scaled` runs as Python: `SCALE` is 5 now, not the 2"):
        assert mod.scaled(x()).tolist() == [5.0, -10.0, 15.0]
    assert not mod.scaled.__ppy_region__


def test_a_constant_rebound_through_globals_after_a_compiled_call(mod: types.ModuleType) -> None:
    assert mod.scaled(x()).tolist() == [2.0, -4.0, 6.0] and mod.scaled.__ppy_region__
    mod.rebind("SCALE", 3)
    with pytest.warns(RegionFallbackWarning, match=r"`SCALE` is 3 now, not the 2 the build baked in"):
        assert mod.scaled(x()).tolist() == [3.0, -6.0, 9.0]
    assert not mod.scaled.__ppy_region__
    assert mod.scaled(x()).tolist() == [3.0, -6.0, 9.0]  # and from then on, without another warning


def test_a_constant_rebound_by_exec(mod: types.ModuleType) -> None:
    assert mod.scaled(x()).tolist() == [2.0, -4.0, 6.0]
    mod.run("SCALE = 3")
    with pytest.warns(RegionFallbackWarning, match=r"`SCALE` is 3 now"):
        assert mod.scaled(x()).tolist() == [3.0, -6.0, 9.0]


def test_a_constant_of_another_type_is_not_the_same_constant(mod: types.ModuleType) -> None:
    assert mod.scaled(x()).dtype == torch.float32
    mod.SCALE = 2.0  # equal, but a float: Python's answer is the same here, an int * int tensor's would not be
    with pytest.warns(RegionFallbackWarning, match=r"`SCALE` is 2.0 now, not the 2"):
        mod.scaled(x())
    assert not mod.scaled.__ppy_region__


def test_a_new_object_of_the_same_value_stays_compiled(mod: types.ModuleType) -> None:
    assert mod.nudged(x()).tolist() == [1.5, -1.5, 3.5] and mod.nudged.__ppy_region__
    mod.EPS = float("0.5")  # another float object, the same value: proved again, and the guards take it
    assert mod.nudged(x()).tolist() == [1.5, -1.5, 3.5] and mod.nudged.__ppy_region__


def test_a_shadowed_builtin(mod: types.ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    assert mod.largest(x(), 2, 5).tolist() == [5.0, -10.0, 15.0] and mod.largest.__ppy_region__
    with monkeypatch.context() as patch:
        patch.setattr(builtins, "max", min)
        with pytest.warns(RegionFallbackWarning, match=r"`builtins.max` is .*min.* now, not Python's own `max`"):
            result = mod.largest(x(), 2, 5)
    assert result.tolist() == [2.0, -4.0, 6.0] and not mod.largest.__ppy_region__


def test_a_builtin_shadowed_in_the_module(mod: types.ModuleType) -> None:
    mod.max = min
    with pytest.warns(RegionFallbackWarning, match=r"`max` is .*min.* in the module now"):
        assert mod.largest(x(), 2, 5).tolist() == [2.0, -4.0, 6.0]


def test_a_monkeypatched_torch_function(mod: types.ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    assert mod.activated(x()).tolist() == mod.activated.python(x()).tolist() and mod.activated.__ppy_region__

    def my_gelu(t: torch.Tensor) -> torch.Tensor:
        return t * 0

    with monkeypatch.context() as patch:
        patch.setattr(torch.nn.functional, "gelu", my_gelu)
        with pytest.warns(RegionFallbackWarning, match=r"`torch.nn.functional.gelu` was replaced by .*my_gelu"):
            assert mod.activated(x()).tolist() == (x() + 2.0).tolist()
    assert not mod.activated.__ppy_region__


@pytest.mark.parametrize("patched", ["torch.add", "math.sqrt", "F"])
def test_other_library_names_rebound_before_the_first_call(
        mod: types.ModuleType, monkeypatch: pytest.MonkeyPatch, patched: str) -> None:
    import math

    if patched == "torch.add":
        monkeypatch.setattr(torch, "add", torch.sub)
    elif patched == "math.sqrt":
        monkeypatch.setattr(math, "sqrt", math.exp)
    else:
        mod.F = types.SimpleNamespace(gelu=torch.relu)
    with pytest.warns(RegionFallbackWarning, match=rf"`{patched}`"):
        assert mod.activated(x()).tolist() == mod.activated.python(x()).tolist()
    assert not mod.activated.__ppy_region__


@pytest.mark.parametrize("patched", ["Size", "finfo", "iinfo"])
def test_a_torch_class_a_region_calls_replaced(
        mod: types.ModuleType, monkeypatch: pytest.MonkeyPatch, patched: str) -> None:
    """torch's own classes (torch.Size, torch.finfo, torch.iinfo) are called as its functions are: proved to be
    torch's, so the region runs compiled, and one put in their place is Python's to call."""
    assert mod.sized(x(), 3).tolist() == mod.sized.python(x(), 3).tolist() and mod.sized.__ppy_region__

    class Size(tuple):  # type: ignore[type-arg]  # torch's own name and module, but a class of Python's
        __module__ = "torch"

    def finfo(dtype: torch.dtype) -> types.SimpleNamespace:
        return types.SimpleNamespace(eps=0.5)

    def iinfo(dtype: torch.dtype) -> types.SimpleNamespace:
        return types.SimpleNamespace(max=2)

    with monkeypatch.context() as patch:
        patch.setattr(torch, patched, {"Size": Size, "finfo": finfo, "iinfo": iinfo}[patched])
        with pytest.warns(RegionFallbackWarning, match=rf"`torch.{patched}` was replaced by"):
            assert mod.sized(x(), 3).tolist() == mod.sized.python(x(), 3).tolist()
    assert not mod.sized.__ppy_region__


def test_a_helper_rebound(mod: types.ModuleType) -> None:
    assert mod.shifted(x()).tolist() == [4.0, -2.0, 8.0] and mod.shifted.__ppy_region__
    mod.shift = lambda t: t - 1
    with pytest.warns(RegionFallbackWarning, match=r"`shift` is .*lambda.* now, not the function `shift`"):
        assert mod.shifted(x()).tolist() == [0.0, -6.0, 4.0]
    assert not mod.shifted.__ppy_region__


def test_the_positional_entry_is_guarded_too(mod: types.ModuleType) -> None:
    """`region.compiled` (what verify and torch's operator call) answers NotImplemented once a name is rebound."""
    assert mod.scaled(x()).tolist() == [2.0, -4.0, 6.0]
    compiled = mod.scaled.compiled
    mod.SCALE = 7
    with pytest.warns(RegionFallbackWarning, match=r"`SCALE` is 7 now"):
        assert compiled(x()) is NotImplemented


GUARD_PACKAGE = {
    "__init__.py": "",
    "layers.py": "import torch\n\n\ndef scale(x, by):\n    return x * by\n",
    "model.py": "import ppy\nimport torch\nimport guardpkg.layers as layers\n\n\n@ppy.opt(1)\n"
                "def block(x: torch.Tensor) -> torch.Tensor:\n    return layers.scale(x, 2.0) + 1\n",
}


def test_a_helper_file_edited_and_imported_again_after_a_compiled_call(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`layers.scale` is read through the module at every call: reloading an edit of its file gives the
    module a function of other code, which the compiled region (built from the old text) is not."""
    package = tmp_path / "guardpkg"
    package.mkdir()
    for name, text in GUARD_PACKAGE.items():
        (package / name).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    observer = runtime._observer
    runtime.set_observer(None)
    try:
        model = importlib.import_module("guardpkg.model")
        assert model.block(torch.ones(2)).tolist() == [3.0, 3.0] and model.block.__ppy_region__
        layers = importlib.import_module("guardpkg.layers")
        importlib.reload(layers)  # the same text: equal code, still the build's
        assert model.block(torch.ones(2)).tolist() == [3.0, 3.0] and model.block.__ppy_region__
        (package / "layers.py").write_text(GUARD_PACKAGE["layers.py"].replace("x * by", "x * by * 2"))
        importlib.reload(layers)
        with pytest.warns(RegionFallbackWarning, match=r"`scale` is a function `scale` of other code now"):
            assert model.block(torch.ones(2)).tolist() == [5.0, 5.0]
        assert not model.block.__ppy_region__
    finally:
        runtime.set_observer(observer)
        for name in [name for name in sys.modules if name.startswith("guardpkg")]:
            del sys.modules[name]


def test_an_unreadable_record_of_the_build_proves_nothing(mod: types.ModuleType) -> None:
    """A cache index holding a record ppy does not write (say, edited by hand) is no traceback: Python's answer."""
    from ppy.guard import Rebound, prove

    for row in (["", "SCALE", "no such kind", "2"], ["", "SCALE", "literal", "2 +"], ["", "SCALE", "literal", "(("]):
        row[0] = str(FIXTURE)
        with pytest.raises(Rebound, match=r"the build's record of what `SCALE` is cannot be read"):
            prove(mod.scaled, [row], {})
