"""The no-grad fast path and the C-level entry, against each region's own Python body.

When autograd would record nothing for a call, the compiled body runs below autograd (and, where that
is unobservable, below ADInplaceOrView too). Whatever those layers still owe the caller must come out
the same as Python's: outputs, in-place writes, version counters, views and how they were made, the
error a later backward raises. And a compiled call reaches its C++ from the caller's frame, binding
keywords and defaults as Python does.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import pytest

torch = pytest.importorskip("torch")

import fast_regions  # noqa: E402
from ppy import runtime  # noqa: E402
from tests.support.frames import python_frames  # noqa: E402
from tests.support.old_dynamo import skip_if_calls_take_python  # noqa: E402
from ppy.decorators import Region  # noqa: E402
from torch.autograd import forward_ad  # noqa: E402

REGIONS = (fast_regions.mlp, fast_regions.write_slot, fast_regions.scale_in_place, fast_regions.windows,
           fast_regions.written_temporary, fast_regions.makes_leaf, fast_regions.step_through_data)


@pytest.fixture(autouse=True)
def entry() -> Iterator[None]:
    """Calls reach the compiled entry: `--ppy-verify`'s observer, which routes them through the runtime, is
    set aside here (it checks these regions through their samples)."""
    observer = runtime._observer
    runtime.set_observer(None)
    for region in REGIONS:
        assert region.build(), f"{region.__name__} did not compile"
    try:
        yield
    finally:
        runtime.set_observer(observer)


def guard(region: Region[..., Any]) -> str | None:
    """The guard the region's entry runs its body under when autograd has nothing to record."""
    source = region.cpp_source
    assert source is not None
    entry = re.search(rf"static PyObject\* py_{region.cpp_symbol}\(PyObject\* self.*?\n}}\n", source, re.S)
    assert entry is not None
    found = re.search(r"std::optional<([\w:]+)> below;", entry.group(0))
    return found.group(1) if found else None


def test_each_region_gets_the_lowest_guard_nothing_observable_is_lost_under() -> None:
    below_all = "at::AutoDispatchBelowADInplaceOrView"
    below_autograd = "at::AutoDispatchBelowAutograd"
    assert guard(fast_regions.mlp) == below_all  # fresh results, nothing written: no layer has anything to do
    assert guard(fast_regions.write_slot) == below_autograd  # the write must bump `cache`'s version
    assert guard(fast_regions.scale_in_place) == below_autograd
    assert guard(fast_regions.windows) == below_autograd  # its results are views, with their metadata
    assert guard(fast_regions.written_temporary) == below_autograd  # its result's version counter is visible
    assert guard(fast_regions.makes_leaf) is None  # it makes a leaf that requires grad: autograd always
    assert guard(fast_regions.step_through_data) == below_autograd  # it writes, and returns an alias


def clone(value: Any, requires_grad: bool = False) -> Any:
    if isinstance(value, torch.Tensor):
        copy = value.detach().clone()
        return copy.requires_grad_(requires_grad) if copy.is_floating_point() else copy
    return value


def both(region: Region[..., Any], args: tuple[Any, ...], mode: Callable[[], AbstractContextManager[Any]],
         requires_grad: bool = False, **kwargs: Any) -> list[tuple[Any, tuple[Any, ...]]]:
    """(result, the arguments afterwards) of the compiled call and of the Python body, each on its own clones."""
    runs = []
    for function in (region, region.python):
        mine = tuple(clone(a, requires_grad) for a in args)
        with mode():
            runs.append((function(*mine, **kwargs), mine))
    return runs


def flat(value: Any) -> list[Any]:
    return list(value) if isinstance(value, tuple) else [value]


MODES = {"no_grad": torch.no_grad, "inference_mode": torch.inference_mode, "grad, nothing requires it": nullcontext}


@pytest.mark.parametrize("mode", MODES)
def test_outputs_agree_in_every_mode(mode: str) -> None:
    args = (torch.randn(2, 4), torch.randn(3, 4), torch.randn(3), 0.5)
    (compiled, _), (python, _) = both(fast_regions.mlp, args, MODES[mode], approximate="none")
    torch.testing.assert_close(compiled, python)
    assert (compiled.is_inference(), compiled.requires_grad) == (python.is_inference(), python.requires_grad)
    assert compiled.is_inference() == (mode == "inference_mode")


@pytest.mark.parametrize("mode", ["no_grad", "grad, nothing requires it"])
def test_in_place_writes_and_version_counters_agree(mode: str) -> None:
    cache, k = torch.randn(3, 4), torch.randn(1, 4)
    (compiled, after), (python, expected) = both(fast_regions.write_slot, (cache, k, 2), MODES[mode])
    torch.testing.assert_close(compiled, python)
    torch.testing.assert_close(after[0], expected[0])
    assert after[0]._version == expected[0]._version == 1
    (compiled, after), (python, expected) = both(fast_regions.scale_in_place, (torch.randn(5), 3.0), MODES[mode])
    assert compiled is after[0] and python is expected[0]  # the parameter itself comes back
    torch.testing.assert_close(after[0], expected[0])
    assert after[0]._version == expected[0]._version == 2


def test_returned_views_agree() -> None:
    (compiled, after), (python, expected) = both(fast_regions.windows, (torch.randn(4, 3), 1, 2), torch.no_grad)
    for mine, theirs in zip(compiled, python):
        torch.testing.assert_close(mine, theirs)
        assert mine._is_view() == theirs._is_view()
        assert (mine._base is after[0]) == (theirs._base is expected[0])
    # A write through a returned view is a write to the parameter, and its version counter says so.
    for outputs, cache in ((compiled, after[0]), (python, expected[0])):
        outputs[0].add_(1.0)
        assert cache._version == outputs[1]._version == outputs[2]._version == 1
    torch.testing.assert_close(after[0], expected[0])
    (compiled, _), (python, _) = both(fast_regions.written_temporary, (torch.randn(3),), torch.no_grad)
    assert compiled._version == python._version == 1 and not compiled._is_view()


def test_a_write_to_a_parameter_a_graph_saved_fails_its_backward_as_in_eager() -> None:
    messages = []
    for run in (fast_regions.write_slot, fast_regions.write_slot.python):
        w, cache = torch.randn(3, 4, requires_grad=True), torch.randn(3, 4)
        loss = (w * cache).sum()  # saves `cache` for w's gradient
        with torch.no_grad():
            run(cache, torch.randn(1, 4), 0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation") as caught:
            loss.backward()
        messages.append(str(caught.value))
    assert messages[0] == messages[1]


@pytest.mark.parametrize("mode", MODES)
def test_a_write_through_data_is_unseen_by_autograd_as_in_eager(mode: str) -> None:
    """`p.data` shares `p`'s storage but not its version counter or graph: the step writes `p`, a graph that saved
    `p` still runs backward, and the tensor handed back is a new leaf that does not require grad, as in eager."""
    outcomes, start = [], torch.randn(4)
    for run in (fast_regions.step_through_data, fast_regions.step_through_data.python):
        p = start.clone().requires_grad_(mode != "inference_mode")
        before = p.detach().clone()
        loss = (p * p).sum()  # saves `p`
        with MODES[mode]():
            data = run(p, torch.ones(4), 0.5)
        if p.requires_grad:
            loss.backward()  # no "modified by an inplace operation": `.data` writes are not seen
        outcomes.append((p.detach().clone(), p._version, data.requires_grad, data.is_leaf, data._is_view(),
                         data.data_ptr() == p.data_ptr(), None if p.grad is None else p.grad.clone()))
        assert torch.equal(p.detach(), before - 0.5)
    for mine, theirs in zip(*outcomes):
        assert torch.equal(mine, theirs) if isinstance(mine, torch.Tensor) else mine == theirs


def test_a_view_made_in_no_grad_mode_refuses_an_in_place_write_under_grad_as_in_eager() -> None:
    messages = []
    for run in (fast_regions.windows, fast_regions.windows.python):
        cache = torch.randn(4, 3, requires_grad=True)
        with torch.no_grad():
            window, _, _ = run(cache, 0, 2)
        with pytest.raises(RuntimeError) as caught:
            window.mul_(2.0)
        messages.append(str(caught.value))
    assert messages[0] == messages[1] and "no_grad" in messages[0]


def test_no_grad_results_are_ordinary_tensors_later_autograd_can_use() -> None:
    x, w, b = torch.randn(2, 4), torch.randn(3, 4), torch.randn(3)
    with torch.no_grad():
        out = fast_regions.mlp(x, w, b)
    assert not out.is_inference() and not out.requires_grad
    v = torch.randn(6, requires_grad=True)
    (out * v).sum().backward()
    torch.testing.assert_close(v.grad, out)


def test_with_grad_the_graph_and_the_gradients_are_pythons() -> None:
    args = (torch.randn(2, 4), torch.randn(3, 4), torch.randn(3), 0.5)
    gradients = []
    for (result, inputs) in both(fast_regions.mlp, args, nullcontext, requires_grad=True):
        assert result.grad_fn is not None
        result.sum().backward()
        gradients.append([t.grad for t in inputs if isinstance(t, torch.Tensor)])
    for mine, theirs in zip(*gradients):
        torch.testing.assert_close(mine, theirs)
    # A leaf made inside the region requires grad whatever the caller's mode allows.
    (compiled, _), (python, _) = both(fast_regions.makes_leaf, (torch.randn(3), True), nullcontext)
    assert compiled.requires_grad and python.requires_grad and compiled.grad_fn is not None


def test_forward_mode_and_function_transforms_see_every_op() -> None:
    x, w, b, tangent = torch.randn(2, 4), torch.randn(3, 4), torch.randn(3), torch.randn(2, 4)
    tangents = []
    for run in (fast_regions.mlp, fast_regions.mlp.python):
        with forward_ad.dual_level():
            out = run(forward_ad.make_dual(x, tangent), w, b)
            tangents.append(forward_ad.unpack_dual(out).tangent)
    assert tangents[0] is not None
    torch.testing.assert_close(tangents[0], tangents[1])
    grads = [torch.func.grad(lambda v, f=f: f(v, w, b).sum())(x) for f in (fast_regions.mlp, fast_regions.mlp.python)]
    torch.testing.assert_close(grads[0], grads[1])
    # Under vmap the region sees batched tensors that do not require grad themselves, while the
    # tensors they wrap do: the graph must still be recorded.
    xs = torch.randn(5, 2, 4)
    mapped = []
    for f in (fast_regions.mlp, fast_regions.mlp.python):
        batch = xs.clone().requires_grad_()
        out = torch.vmap(lambda v, f=f: f(v, w, b))(batch)
        out.sum().backward()
        mapped.append((out.detach(), batch.grad))
    torch.testing.assert_close(mapped[0], mapped[1])


def test_a_write_under_inference_mode_bumps_an_ordinary_parameter_as_in_eager() -> None:
    (_, after), (_, expected) = both(fast_regions.write_slot, (torch.randn(3, 4), torch.randn(1, 4), 0),
                                     torch.inference_mode)
    assert after[0]._version == expected[0]._version == 1


# --- the C-level entry ------------------------------------------------------------------------


def test_a_compiled_call_binds_keywords_and_defaults_with_no_python_frame() -> None:
    skip_if_calls_take_python()
    x, w, b = torch.randn(2, 4), torch.randn(3, 4), torch.randn(3)
    mlp = fast_regions.mlp
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        ((x, w, b), {}), ((x, w, b, 2.0), {}), ((x,), {"b": b, "w": w}), ((x, w, b), {"approximate": "none"}),
        ((x, w), {"scale": 0.25, "b": b, "approximate": "none"}),
    ]
    for args, kwargs in calls:
        assert python_frames(lambda: mlp(*args, **kwargs)) == [f"{__file__}:<lambda>"]
        torch.testing.assert_close(mlp(*args, **kwargs), mlp.python(*args, **kwargs))


def test_what_the_entry_does_not_take_is_pythons_to_answer() -> None:
    x, w, b = torch.randn(2, 4), torch.randn(3, 4), torch.randn(3)
    mlp = fast_regions.mlp
    # Not exactly the annotated type: the Python body runs, on the arguments as given.
    with pytest.raises(TypeError, match="linear"):
        mlp("x", w, b)

    class Logged(torch.Tensor):
        seen = 0

        @classmethod
        def __torch_function__(cls, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            cls.seen += 1
            return super().__torch_function__(func, types, args, kwargs or {})

    out = mlp(x.as_subclass(Logged), w, b=b)
    assert Logged.seen > 0 and isinstance(out, Logged)
    # A call that does not bind: Python's own words, naming the region.
    for call, message in (
        (lambda: mlp(x, w), "mlp() missing 1 required positional argument: 'b'"),
        (lambda: mlp(x, w, b, 1.0, "tanh"), "mlp() takes from 3 to 4 positional arguments but 5 were given"),
        (lambda: mlp(x, w, b, scal=1.0), "mlp() got an unexpected keyword argument 'scal'"),
        (lambda: mlp(x, w, b, x=x), "mlp() got multiple values for argument 'x'"),
    ):
        with pytest.raises(TypeError) as caught:
            call()
        assert str(caught.value) == message


def test_an_observer_sees_every_call_while_it_is_set() -> None:
    skip_if_calls_take_python()
    x, w, b = torch.randn(2, 4), torch.randn(3, 4), torch.randn(3)
    mlp = fast_regions.mlp
    seen: list[tuple[Any, ...]] = []
    runtime.set_observer(lambda region, args, kwargs: seen.append((region, args, kwargs)))
    try:
        mlp(x, w, b=b)
        assert seen == [(mlp, (x, w), {"b": b})]
        assert type(mlp) is Region
    finally:
        runtime.set_observer(None)
    mlp(x, w, b)
    assert len(seen) == 1 and isinstance(mlp, Region) and type(mlp) is not Region
    assert repr(mlp).endswith("(opt 2, compiled)>")
