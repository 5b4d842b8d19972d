"""The C++ lines every CPython entry of a region is built from: taking its arguments as their annotated types,
the guard that runs the body below autograd, and the entry's row in the module's method table."""

from __future__ import annotations

from ppy_check.model import types as t
from ppy_check.model.ir import RegionModel
from ppy_compile.cpp_types import cpp_type


def take_arguments(model: RegionModel, source: str, bail: str) -> tuple[list[str], list[str]]:
    """The lines that take each argument from ``source[i]``, and the C++ names of the taken values."""
    lines, names = [], []
    for index, param in enumerate(model.params):
        item = f"{source}[{index}]"
        if isinstance(param.type, t.TensorT):
            # Borrowed from its Python object, which lives as long as the call.
            lines.append(f"    const at::Tensor* a{index} = ppy_bridge::borrow_plain_tensor({item});")
            lines.append(f"    if (a{index} == nullptr) return {bail};")
            names.append(f"*a{index}")
            continue
        # ppy::blank: at::Device has no default constructor, nor has a tuple holding one.
        declared = cpp_type(param.type)
        lines.append(f"    {declared} a{index} = ppy::blank<{declared}>();")
        taker = f"take_{_passed(param.type)}" if _passed(param.type) != "tuple" else "take"
        lines.append(f"    if (int taken = ppy::{taker}({item}, a{index}); taken <= 0) "
                     f"return taken < 0 ? nullptr : {bail};")
        names.append(f"a{index}")
    return lines, names


def _passed(kind: t.Type) -> str:
    """What a sequence parameter is passed as (``t.SeqT.passed``): a torch.Size, a list or tuple, or a tuple."""
    inner = kind.inner if isinstance(kind, t.OptionalT) else kind
    return inner.passed if isinstance(inner, t.SeqT) else "tuple"


def below_autograd(below: str | None, names: list[str]) -> list[str]:
    """Lines that put the body's call below autograd when this call qualifies (``below``: the guard's type)."""
    if below is None:
        return []
    arguments = ", ".join(names)
    return [f"std::optional<{below}> below;", f"if (ppy::autograd_idle({arguments})) below.emplace();"]


def method_row(name: str, function: str, flags: str) -> str:
    return (f'    {{"{name}", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)(void)>({function})), '
            f"{flags}, nullptr}}")
