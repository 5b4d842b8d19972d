"""Check a compiled region against its own Python body, on one call.

Both run on their own clones of the inputs, a method region's instance
included (a copy each: the module state a call writes, BatchNorm's running
statistics, moves once, in the caller's own call, and each side starts alike).
Compared: every output (shape, dtype, device, values within a dtype-aware
tolerance; integers and bools exactly), every tensor parameter and the
instance's parameters and buffers afterwards (so an in-place write the compiled
code misses is caught), and, where the call writes nothing, the gradients of
the floating inputs through a backward pass with one random cotangent. For a
``@ppy.pure`` region, a tensor argument whose version counter moved during
either call is a write the static check missed.
"""

from __future__ import annotations

import contextlib
import copy
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from ppy.decorators import Call, Region

# (rtol, atol) as torch.testing.assert_close uses them by default.
TOLERANCES = {
    "float64": (1e-7, 1e-7), "float32": (1.3e-6, 1e-5), "float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5),
    "complex128": (1e-7, 1e-7), "complex64": (1.3e-6, 1e-5), "complex32": (1e-3, 1e-5),
}


@dataclass(frozen=True)
class Mismatch:
    what: str  # "output 0", "parameter `k_cache`", "gradient of `x`"
    detail: str  # a sentence a person can act on
    max_abs: float = math.nan
    max_rel: float = math.nan
    tolerance: tuple[float, float] | None = None
    verb: str = "differs"  # how the headline ends: "output 0 differs", "parameter `x` was written"


@dataclass(frozen=True)
class Outcome:
    mismatches: tuple[Mismatch, ...]
    # The largest error of the outputs and parameters, and the tolerance it was held to
    # (gradients are held to a looser one and only their mismatches are kept).
    max_abs: float
    tolerance: tuple[float, float] | None
    # What the Python body raised when both sides raised alike: nothing was compared.
    raised: BaseException | None = None
    # The compiled code did not take the arguments (one is not exactly its annotated type, an int beyond 64
    # bits): a call of the region gives them to the Python body, so nothing was compared.
    declined: bool = False


def tolerance_for(dtype: Any, scale: float = 1.0) -> tuple[float, float] | None:
    name = str(dtype).replace("torch.", "")
    found = TOLERANCES.get(name)
    return None if found is None else (found[0] * scale, found[1] * scale)


def _clone(value: Any, requires_grad: bool = False) -> Any:
    import torch

    if isinstance(value, torch.Tensor):
        copy = value.detach().clone()
        if requires_grad and copy.is_floating_point():
            copy.requires_grad_(True)
        return copy
    if isinstance(value, torch.Size):  # ints, and a torch.Size to the region (a plain tuple is another type)
        return value
    if isinstance(value, tuple):
        return tuple(_clone(v, requires_grad) for v in value)
    if isinstance(value, list):
        return [_clone(v, requires_grad) for v in value]
    return value


def _to(value: Any, device: str) -> Any:
    import torch

    if isinstance(value, torch.Tensor):
        return value.to(device)
    if isinstance(value, (tuple, list)):
        return type(value)(_to(v, device) for v in value)
    return value


def _flatten(value: Any, prefix: str) -> list[tuple[str, Any]]:
    if isinstance(value, (tuple, list)):
        out = []
        for index, item in enumerate(value):
            out.extend(_flatten(item, f"{prefix}[{index}]" if prefix != "output" else f"output {index}"))
        return out
    return [(prefix if prefix != "output" else "output", value)]


def _structure(value: Any) -> Any:
    """The containers of a result (a tuple, a list, ``torch.return_types.max``), without the leaves."""
    if isinstance(value, (tuple, list)):
        kind = type(value)
        return f"{kind.__module__}.{kind.__qualname__}", tuple(_structure(item) for item in value)
    return None


def compare_values(what: str, expected: Any, actual: Any, scale: float = 1.0) -> tuple[Mismatch | None, float, tuple[float, float] | None]:
    """One value against its reference: a mismatch (or None), the largest absolute error, the tolerance used."""
    import torch

    if not isinstance(expected, torch.Tensor):
        if isinstance(expected, float) and isinstance(actual, float):
            if math.isclose(expected, actual, rel_tol=1e-12, abs_tol=0.0) or (math.isnan(expected) and math.isnan(actual)):
                return None, abs(expected - actual) if not math.isnan(expected) else 0.0, None
        elif expected == actual and type(expected) is type(actual):
            return None, 0.0, None
        return Mismatch(what, f"expected {expected!r}, got {actual!r}"), math.nan, None
    if not isinstance(actual, torch.Tensor):
        return Mismatch(what, f"expected a tensor, got {type(actual).__name__}"), math.nan, None
    for attribute in ("shape", "dtype", "device"):
        if getattr(expected, attribute) != getattr(actual, attribute):
            return Mismatch(what, f"{attribute} differs: expected {getattr(expected, attribute)}, got {getattr(actual, attribute)}"), math.nan, None
    tolerance = tolerance_for(expected.dtype, scale)
    if expected.dtype == torch.complex32:
        # Most kernels (torch.equal, abs) have no complex32 form: compare as complex64, within half's tolerance.
        expected, actual = expected.to(torch.complex64), actual.to(torch.complex64)
    if expected.numel() == 0:
        return None, 0.0, tolerance
    if tolerance is None:
        equal = torch.equal(expected, actual)
        if equal:
            return None, 0.0, None
        differs = (expected != actual).nonzero()
        where = tuple(differs[0].tolist())
        return Mismatch(what, f"values differ exactly-compared at {where}: expected {expected[where].item()}, got {actual[where].item()}"), math.nan, None
    rtol, atol = tolerance
    e, a = expected.detach().to(torch.complex128 if expected.is_complex() else torch.float64), actual.detach().to(
        torch.complex128 if actual.is_complex() else torch.float64)
    difference = (e - a).abs()
    both_nan = torch.isnan(e) & torch.isnan(a) if not e.is_complex() else torch.zeros_like(difference, dtype=torch.bool)
    same_inf = (e == a)
    difference = torch.where(both_nan | same_inf, torch.zeros_like(difference), difference)
    difference = torch.nan_to_num(difference, nan=math.inf)
    allowed = atol + rtol * e.abs()
    bad = difference > allowed
    max_abs = float(difference.max())
    relative = difference / e.abs().clamp_min(1e-30)
    max_rel = float(relative.max())
    if not bool(bad.any()):
        return None, max_abs, tolerance
    index = int(torch.argmax(torch.where(bad, difference, torch.zeros_like(difference))))
    where = tuple(int(i) for i in torch.unravel_index(torch.tensor(index), e.shape)) if e.dim() else ()
    detail = (
        f"max abs error {max_abs:.3g}, max rel error {max_rel:.3g} (at {where}: expected "
        f"{complex(e[where]) if e.is_complex() else float(e[where]):.6g}, got "
        f"{complex(a[where]) if a.is_complex() else float(a[where]):.6g}); tolerance rtol={rtol:g}, atol={atol:g}"
    )
    return Mismatch(what, detail, max_abs, max_rel, tolerance), max_abs, tolerance


def compare_call(region: Region[Any, Any], call: Call, device: str | None = "cpu", gradients: bool = True,
                 scale: float = 1.0) -> Outcome:
    """Run ``call`` through the Python body and the compiled region and compare everything.

    ``device`` moves the inputs there first; None leaves them where they are.
    """
    import inspect

    import torch

    form = region.compiled_form
    if form is None:
        raise RuntimeError(f"region `{region.site.qualname}` is not compiled")
    compiled = form.entry
    if device is None:
        args, kwargs = call.args, dict(call.kwargs)
        tensors = [v for v in list(args) + list(kwargs.values()) if isinstance(v, torch.Tensor)]
        device = tensors[0].device.type if tensors else "cpu"
    else:
        args = _to(call.args, device)
        kwargs = {k: _to(v, device) for k, v in call.kwargs.items()}
    signature = inspect.signature(region.python)
    # A method region's first parameter is its instance, which `_clone` passes as it is: every run here would
    # write its state (BatchNorm's running statistics, in training) before the caller's own call writes it again.
    instance = next(iter(signature.parameters)) if form.instance is not None else None
    mismatches: list[Mismatch] = []
    worst = 0.0
    worst_tolerance: tuple[float, float] | None = None

    def note(found: tuple[Mismatch | None, float, tuple[float, float] | None]) -> None:
        nonlocal worst, worst_tolerance
        mismatch, error, tolerance = found
        if mismatch is not None:
            mismatches.append(mismatch)
        if not math.isnan(error) and error >= worst:
            worst = error
            worst_tolerance = tolerance or worst_tolerance

    def run(function: Any, with_grad: bool) -> tuple[Any, inspect.BoundArguments, Exception | None]:
        bound = _bind(signature, args, kwargs, with_grad, instance)
        if region.pure:
            versions = _versions(bound)
        try:
            with _seeded(device == "cuda"):
                if function is compiled:
                    return function(*bound.arguments.values()), bound, None
                return function(*bound.args, **bound.kwargs), bound, None
        except Exception as error:  # compared below: both must fail alike
            return None, bound, error
        finally:
            if region.pure:
                side = "the compiled call" if function is compiled else "the Python body"
                mismatches.extend(_pure_writes(versions, _versions(bound), side))

    expected, expected_args, expected_error = run(region.python, False)
    actual, actual_args, actual_error = run(compiled, False)
    if actual is NotImplemented and actual_error is None:
        return Outcome(tuple(mismatches), worst, worst_tolerance, declined=True)
    if expected_error is not None or actual_error is not None:
        if type(expected_error) is not type(actual_error):
            mismatches.append(Mismatch("call", f"Python raised {expected_error!r}; compiled raised {actual_error!r}"))
        return Outcome(tuple(mismatches), worst, worst_tolerance, expected_error)
    if _structure(expected) != _structure(actual):
        mismatches.append(Mismatch("output", f"the result is built differently: expected {_structure(expected)}, "
                                   f"got {_structure(actual)}"))
    for (what, e), (_, a) in zip(_flatten(expected, "output"), _flatten(actual, "output")):
        note(compare_values(what, e, a, scale))
    if len(_flatten(expected, "output")) != len(_flatten(actual, "output")):
        mismatches.append(Mismatch("output", "a different number of outputs"))
    original = signature.bind(*args, **kwargs)
    original.apply_defaults()
    written = False
    for name in signature.parameters:
        before, e, a = original.arguments[name], expected_args.arguments[name], actual_args.arguments[name]
        if isinstance(e, torch.Tensor):
            if isinstance(before, torch.Tensor) and not torch.equal(e, before):
                written = True
            note(compare_values(f"parameter `{name}`", e, a, scale))
        elif name == instance:
            found = _state(a)
            for path, value in _state(e).items():
                note(compare_values(f"attribute `{name}.{path}`", value, found.get(path), scale))
    if gradients and not written and not mismatches:
        mismatches.extend(m for m, _, _ in _gradients(region, compiled, signature, args, kwargs, scale, instance)
                          if m is not None)
    return Outcome(tuple(mismatches), worst, worst_tolerance)


def _bind(signature: Any, args: Any, kwargs: dict[str, Any], with_grad: bool, instance: str | None) -> Any:
    """One run's arguments: clones of the tensors, and a copy of the instance (``instance``: its parameter) of the
    run's own. A copy, not a snapshot put back after: writing the caller's parameters back in place would bump
    their version counters under any graph the caller's earlier calls saved them in."""
    bound = signature.bind(*_clone(args, with_grad), **{k: _clone(v, with_grad) for k, v in kwargs.items()})
    bound.apply_defaults()
    if instance is not None:
        try:
            bound.arguments[instance] = copy.deepcopy(bound.arguments[instance])
        except Exception as error:  # pylint: disable=broad-except
            raise RuntimeError(f"`{instance}` cannot be copied for the comparison (copy.deepcopy raised {error!r}), "
                               "and the runs would write the caller's own object") from error
    return bound


def _state(instance: Any) -> dict[str, Any]:
    """The tensors a method region's call may write through its instance: a module's parameters and buffers, by
    their paths (`bn.running_mean`), or another object's tensor attributes."""
    import torch

    if isinstance(instance, torch.nn.Module):
        return {**dict(instance.named_parameters()), **dict(instance.named_buffers())}
    return {name: value for name, value in getattr(instance, "__dict__", {}).items() if isinstance(value, torch.Tensor)}


def _versions(bound: Any) -> dict[str, int]:
    """Each tensor argument's version counter, which every in-place write moves."""
    import torch

    return {what: value._version for name, argument in bound.arguments.items()
            for what, value in _flatten(argument, name) if isinstance(value, torch.Tensor)}


def _pure_writes(before: dict[str, int], after: dict[str, int], side: str) -> list[Mismatch]:
    return [Mismatch(f"parameter `{name}`", f"the region is @ppy.pure, but {side} wrote `{name}` "
                     f"(its version counter moved from {version} to {after[name]})", verb="was written")
            for name, version in before.items() if after.get(name, version) != version]


@contextlib.contextmanager
def _seeded(cuda: bool) -> Iterator[None]:
    """Both sides draw the same random numbers (seed 1234), and the caller's generators are as they were after: a
    session's call verified on the way must not move the random numbers its test draws next."""
    import torch

    state = torch.random.get_rng_state()
    # torch.manual_seed reseeds every device's generator: each that is in use is put back.
    cuda_state = torch.cuda.get_rng_state_all() if cuda or torch.cuda.is_initialized() else None  # type: ignore[no-untyped-call]
    try:
        torch.manual_seed(1234)
        if cuda:
            torch.cuda.manual_seed(1234)
        yield
    finally:
        torch.random.set_rng_state(state)
        if cuda_state is not None:
            torch.cuda.set_rng_state_all(cuda_state)


def _gradients(region: Region[Any, Any], compiled: Any, signature: Any, args: Any, kwargs: dict[str, Any], scale: float,
               instance: str | None) -> list[Any]:
    import torch

    def forward(function: Any) -> tuple[list[Any], dict[str, Any]]:
        bound = _bind(signature, args, kwargs, True, instance)
        on_cuda = any(isinstance(v, torch.Tensor) and v.is_cuda for v in bound.arguments.values())
        with _seeded(on_cuda):
            result = function(*bound.arguments.values()) if function is compiled else function(*bound.args, **bound.kwargs)
        outputs = [v for _, v in _flatten(result, "output") if isinstance(v, torch.Tensor) and v.requires_grad]
        return outputs, {n: v for n, v in bound.arguments.items() if isinstance(v, torch.Tensor) and v.requires_grad}

    try:
        expected_outputs, expected_inputs = forward(region.python)
    except RuntimeError:
        return []  # the Python body itself does not differentiate (an in-place op on a leaf, say)
    if not expected_outputs or not expected_inputs:
        return []
    actual_outputs, actual_inputs = forward(compiled)
    generator = torch.Generator(device="cpu").manual_seed(99)
    cotangents = [torch.randn(o.shape, generator=generator, dtype=o.dtype if o.is_floating_point() else torch.float32).to(o.device)
                  for o in expected_outputs]
    found = []
    try:
        expected_grads = torch.autograd.grad(expected_outputs, list(expected_inputs.values()), cotangents, allow_unused=True)
    except RuntimeError:
        return []  # no derivative for some op of the Python body: nothing to compare against
    try:
        actual_grads = torch.autograd.grad(actual_outputs, list(actual_inputs.values()), cotangents, allow_unused=True)
    except RuntimeError as error:
        return [(Mismatch("gradient", f"the compiled region does not differentiate: {error}"), math.nan, None)]
    for name, e, a in zip(expected_inputs, expected_grads, actual_grads):
        if e is None and a is None:
            continue
        if e is None or a is None:
            found.append((Mismatch(f"gradient of `{name}`", "one side has no gradient"), math.nan, None))
            continue
        found.append(compare_values(f"gradient of `{name}`", e, a, scale * 4))
    return found


def describe(region: Region[Any, Any], device: str, mismatch: Mismatch, source: str) -> str:
    """A failure a person can act on: which region, where, what, by how much, and the C++ line behind it."""
    lines = [f"region `{region.site.qualname}` on {device}, {source}: {mismatch.what} {mismatch.verb}",
             f"  {mismatch.detail}"]
    origin = _cpp_origin(region, mismatch.what)
    if origin:
        lines.append(f"  generated C++: {origin}")
    return "\n".join(lines)


def _cpp_origin(region: Region[Any, Any], what: str) -> str | None:
    """The generated line most likely to have produced a value: the one computing the return, or the writes to a parameter."""
    try:
        path = region.cpp_source_path
        symbol = region.cpp_symbol
        if path is None or symbol is None:
            return None
        from ppy.cli import extract_function

        function = extract_function(path.read_text(encoding="utf-8"), symbol)
    except (OSError, TypeError, ImportError):
        return None
    if function is None:
        return None
    body = [line.strip() for line in function.splitlines()[1:-1]]
    if what.startswith("parameter `"):
        name = what.split("`")[1]
        handles = {line.split(" = ", 1)[0].split()[-1] for line in body if line.endswith(f" = {name};")}
        writes = [line for line in body if "index_put_" in line or "::call(" in line
                  and any(f"({handle}," in line or f", {handle})" in line or f", {handle}," in line or f"({handle})" in line
                          for handle in handles | {name})
                  and ("__" in line.split("::call(")[0] or "_out" in line.split("::call(")[0] or "index_put_" in line)]
        return " / ".join(writes) if writes else None
    returns = [line for line in body if line.startswith("return")]
    if not returns:
        return None
    # A return names a variable (the body is one operation a line): point at the line that computed it.
    returned = returns[-1].removeprefix("return").strip(" ;")
    defining = [line for line in body if line.split(" = ", 1)[0].endswith(f" {returned}")]
    return defining[-1] if defining else returns[-1]
