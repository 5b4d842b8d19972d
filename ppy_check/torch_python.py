"""torch's own Python functions (`F.smooth_l1_loss`, `torch.nn._reduction.get_enum`), read from shipped source.

Most of torch's public functions are builtins bound to one ATen operator; the
rest are Python, and change with every torch release. Rather than keep a
table of what each does, ppy ships their modules' source
(``torch_python/``, written by ``gen_opdata`` from the installed torch) and
the model builder inlines a call of one as it inlines a project helper: the
tests on literal arguments fold (``reduction == "mean"``, ``weight is
None``, ``has_torch_function(...)``), and whatever depends on a value known
only at run time is refused, naming the test.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
from pathlib import Path

from ppy_check.module import ModuleRegions
from ppy_check.node_memo import per_node_and_name
from ppy_check.source import read_source

SOURCES = Path(__file__).with_name("torch_python")  # the shipped copy; sources() says which one is read
OVERRIDES = Path(__file__).with_name("torch_python_overrides.py")
# torch's private helpers that loop or look a dtype up in a dict, followed in ppy's straight-line versions
# (torch_python_overrides.py), and torch.einsum.
OVERRIDDEN = frozenset({"torch.nn.functional._verify_batch_size", "torch.nn.functional._verify_spatial_size",
                        "torch.nn.modules.utils._list_with_default", "torch._prims_common.corresponding_real_dtype",
                        # Where it asks opt_einsum for a contraction path: a question for when the region runs.
                        "torch.einsum", "torch.functional.einsum"})

# Namespaces whose Python functions are defined in another module, the one whose source ships.
REEXPORTS = {"torch": "torch.functional", "torch.signal.windows": "torch.signal.windows.windows",
             "torch.masked": "torch.masked._ops"}


def sources() -> Path:
    """The folder of the sources read: the shipped copy, or, where a torch of another release is installed,
    that release's, made once into the cache with its op data (``installed_opdata``): the checker and the
    compiler, reading the same, agree on what a region is, and a region computes, checks and raises as the
    installed torch's Python does (2.11's ``F.interpolate`` has no ``lanczos`` mode, 2.13's has)."""
    from ppy_check.installed_opdata import in_use

    return in_use().sources


@functools.cache
def module(dotted: str) -> ModuleRegions | None:
    """The parsed source of torch's Python module ``dotted``, when ppy ships it (``sources()``: which copy).

    Where that copy is not the installed torch's (making one failed), ppy_compile/drift.py's warning names the
    modules whose installed source differs (``installed_module_file``)."""
    path = sources() / f"{dotted}.py.txt"
    if not path.is_file():
        return None
    return ModuleRegions.load(f"<torch>/{dotted.replace('.', '/')}.py", read_source(path).text)


@functools.cache
def _installed_torch() -> Path | None:
    try:
        spec = importlib.util.find_spec("torch")  # a top-level package: found on sys.path, not imported
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or []) if spec is not None else []
    return Path(locations[0]) if locations else None


def installed_module_file(dotted: str) -> Path | None:
    """The installed torch's file of module ``dotted`` (``torch.nn.functional``); None without one."""
    root = _installed_torch()
    if root is None or not dotted.startswith("torch."):
        return None
    relative = Path(*dotted.split(".")[1:])
    for candidate in (root / relative.with_suffix(".py"), root / relative / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


@functools.cache
def nn_class(dotted_module: str, name: str) -> ast.ClassDef | None:
    """The definition of torch.nn's module class ``name`` in the shipped module ``dotted_module``
    (``torch.nn.modules.linear``, ``Linear``): the last top-level one, as Python binds it."""
    found = module(dotted_module)
    if found is None or found.tree is None:
        return None
    return next((statement for statement in reversed(found.tree.body)
                 if isinstance(statement, ast.ClassDef) and statement.name == name), None)


@functools.cache
def _overrides() -> ModuleRegions:
    return ModuleRegions.load(str(OVERRIDES), read_source(OVERRIDES).text)


def override(dotted: str) -> tuple[ast.FunctionDef, ModuleRegions] | None:
    """ppy's straight-line version of one of torch's looping helpers, and the module it is read from."""
    if dotted not in OVERRIDDEN:
        return None
    overrides = _overrides()
    found = function(overrides, dotted.rpartition(".")[2])
    return None if found is None else (found, overrides)


def module_of(path: str) -> str:
    """``torch.nn.functional`` for the path ``module`` gives a shipped module's source."""
    return path.removeprefix("<torch>/").removesuffix(".py").replace("/", ".")


def shipped(dotted: str) -> bool:
    return (sources() / f"{dotted}.py.txt").is_file()


def function(module: ModuleRegions, name: str) -> ast.FunctionDef | None:
    """The definition of ``name`` that runs: the last one (``@overload`` stubs come first), skipping typing stubs
    under ``if TYPE_CHECKING``; None when a later assignment rebinds the name."""
    assert module.tree is not None
    return _defined(module.tree, name)


@per_node_and_name
def _defined(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    # Every call of a torch function asks this of the same shipped module: the walk is kept per (module, name).
    found = None
    for statement in tree.body:
        if isinstance(statement, ast.FunctionDef) and statement.name == name:
            found = statement
        elif isinstance(statement, ast.If) and ast.unparse(statement.test) in ("TYPE_CHECKING", "typing.TYPE_CHECKING"):
            found = next((s for s in statement.orelse if isinstance(s, ast.FunctionDef) and s.name == name), found)
        elif isinstance(statement, (ast.Assign, ast.AnnAssign, ast.AugAssign)) and any(
                isinstance(target, ast.Name) and target.id == name
                for target in (statement.targets if isinstance(statement, ast.Assign) else [statement.target])):
            found = None
    return found


@functools.cache
def tensor_method(name: str) -> tuple[ast.FunctionDef, ModuleRegions] | str | None:
    """A Python-level method of ``torch.Tensor`` (``torch/_tensor.py``), and the module it is read from; or the
    name of the builtin method it is bound to there (``__pow__ = ...(_C.TensorBase.pow)``)."""
    tensor_module = module("torch._tensor")
    if tensor_module is None or tensor_module.tree is None:
        return None
    for statement in tensor_module.tree.body:
        if isinstance(statement, ast.ClassDef) and statement.name == "Tensor":
            return _class_member(statement, name, tensor_module)
    return None


# What torch/_tensor.py wraps a method in without changing what it computes.
_TRANSPARENT = frozenset({"cast", "_handle_torch_function_and_wrap_type_error_to_not_implemented"})


def _class_member(cls: ast.ClassDef, name: str, tensor_module: ModuleRegions,
                  ) -> tuple[ast.FunctionDef, ModuleRegions] | str | None:
    found: tuple[ast.FunctionDef, ModuleRegions] | str | None = None
    for statement in cls.body:
        if isinstance(statement, ast.FunctionDef) and statement.name == name:
            found = (statement, tensor_module)
        elif isinstance(statement, ast.Assign) and any(isinstance(target, ast.Name) and target.id == name
                                                       for target in statement.targets):
            found = _assigned(cls, statement.value, tensor_module)
    return found


def _assigned(cls: ast.ClassDef, value: ast.expr, tensor_module: ModuleRegions,
              ) -> tuple[ast.FunctionDef, ModuleRegions] | str | None:
    """What a class-level ``name = value`` of ``Tensor`` binds: another method, or a builtin of ``TensorBase``."""
    if isinstance(value, ast.Name):
        return _class_member(cls, value.id, tensor_module)
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id in _TRANSPARENT and value.args:
        return _assigned(cls, value.args[-1], tensor_module)
    if isinstance(value, ast.Attribute) and ast.unparse(value.value) == "_C.TensorBase":
        return value.attr
    return None


_GENERATOR = "it reads or changes the global random generator; do that in the caller"
_SETTING = "it reads or changes a global setting of torch; do that in the caller, and pass what the region needs"
_TRANSFORM = "it transforms functions, computing no tensor; a region is compiled already"
_TYPE_TEST = "it asks about a Python object's type; a region's parameters are typed"
# Why ppy refuses a Python-level function of torch whose source it does not follow (a name, or a prefix ending in
# "." or "_"), where it can say more than that the function is not an operator.
NOT_FOLLOWED: dict[str, str] = {
    "torch.masked.maskedtensor.": "it works on MaskedTensor, a tensor subclass regions do not take",
    "torch.eig": "torch removed it (calling it raises RuntimeError)",
    "torch.lstsq": "torch removed it (calling it raises RuntimeError)",
    "torch.solve": "torch removed it (calling it raises RuntimeError)",
    "torch.symeig": "torch removed it (calling it raises RuntimeError)",
    "torch.matrix_rank": "torch removed it (calling it raises RuntimeError)",
    "torch._linalg_utils.": "torch removed it (calling it raises RuntimeError)",
    "torch.lobpcg": "it iterates until it converges, a loop of run-time length",
    "torch.pca_lowrank": "it draws a random projection and iterates a loop",
    "torch.svd_lowrank": "it draws a random projection and iterates a loop",
    "torch.autograd._functions.": "it runs an autograd Function written in Python",
    "torch._refs._broadcast_shapes": "torch's Python code loops over the shapes' run-time lengths",
    "functorch.dim.": "first-class dimensions are Python objects, not tensors",
    # What computes no tensor at all: a region calls none of them.
    "torch.nn.functional.boolean_dispatch": "it makes a function that picks one of two; torch's own modules use it",
    "torch.nn.functional.handle_torch_function": "it dispatches to `__torch_function__` overrides, which a region's "
                                                 "plain tensors do not have",
    "torch.manual_seed": _GENERATOR, "torch.seed": _GENERATOR, "torch.initial_seed": _GENERATOR,
    "torch.get_rng_state": _GENERATOR, "torch.set_rng_state": _GENERATOR, "torch.thread_safe_generator": _GENERATOR,
    "torch.set_": _SETTING, "torch.get_": _SETTING, "torch.use_deterministic_algorithms": _SETTING,
    "torch.are_deterministic_algorithms_enabled": _SETTING, "torch.is_deterministic_algorithms_warn_only_enabled":
        _SETTING, "torch.is_warn_always_enabled": _SETTING, "torch.compiled_with_cxx11_abi": _SETTING,
    "torch.prepare_multiprocessing_environment": _SETTING, "torch.profiler_allow_cudagraph_cupti_lazy_reinit_cuda12":
        _SETTING,
    "torch.save": "it writes a file; save in the caller", "torch.load": "it reads a file; load in the caller",
    "torch.from_dlpack": "it takes in another library's tensor; convert it in the caller",
    "torch.compile": _TRANSFORM, "torch.vmap": _TRANSFORM, "torch.classproperty": _TRANSFORM,
    "torch.cond": "it is control flow for torch.compile; a region is straight-line (choose with `torch.where`)",
    "torch.while_loop": "it is control flow for torch.compile; a region is straight-line (loop in the caller)",
    "torch.sym_": "it is a helper of torch.compile's symbolic shapes; on a region's numbers write `float()`, "
                  "`int()`, `max()`, `min()`, `not` or `math.sqrt()`",
    "torch.is_tensor": _TYPE_TEST, "torch.is_storage": _TYPE_TEST, "torch.typename": _TYPE_TEST,
    "torch.masked.is_masked_tensor": _TYPE_TEST,
    "torch.masked.as_masked_tensor": "it makes a MaskedTensor, a subclass regions do not take",
    "torch.masked.masked_tensor": "it makes a MaskedTensor, a subclass regions do not take",
}

_MASKED = ("fill what the mask hides with the operation's identity and call the plain operation, as in "
           "`torch.where(mask, input, 0).sum(dim)` or `torch.where(mask, input, float('-inf')).softmax(dim)`")
_UPSAMPLE = ("call the ATen operator for the input's rank and mode with the output size, as in "
             "`torch._C._nn.upsample_nearest2d(input, (h, w))` or `torch._C._nn.upsample_bilinear2d(input, (h, w), "
             "align_corners)`")
_UPSAMPLE_MODE = ("write `mode` as a literal (`mode=\"bilinear\"`, `mode=\"nearest\"`), one region per mode: torch's "
                  "Python code picks the ATen operator by it at run time, but also `align_corners`' default and, with "
                  "`scale_factor`, whether it computes the output size (for `\"area\"`) in a loop over the rank")
# A refused call whose argument picks what torch's Python code does, that argument known only at run time: its
# name, its position, and what to write instead (rather than ALTERNATIVES', which take the choice as made).
RUN_TIME_CHOICES: dict[str, tuple[str, int, str]] = {
    "torch.nn.functional.interpolate": ("mode", 3, _UPSAMPLE_MODE),
    "torch.nn.functional.upsample": ("mode", 3, _UPSAMPLE_MODE),
}
# What to write instead of a Python-level function of torch that ppy refuses, by the function the user's call
# reaches: a finding refusing that call ends with it.
ALTERNATIVES: dict[str, str] = {
    "torch.nn.functional.interpolate": _UPSAMPLE,
    "torch.nn.functional.upsample": _UPSAMPLE,
    "torch.nn.functional.upsample_nearest": _UPSAMPLE,
    "torch.nn.functional.upsample_bilinear": _UPSAMPLE,
    "torch.nn.functional.embedding_bag": "`torch.embedding_bag(weight, input, offsets, scale_grad_by_freq, mode, "
                                         "sparse, per_sample_weights, include_last_offset, padding_idx)[0]` "
                                         "(mode 0: sum, 1: mean, 2: max)",
    "torch.nn.functional.fractional_max_pool2d": "pass `_random_samples` (an (N, C, 2) tensor of uniform samples)",
    "torch.nn.functional.fractional_max_pool2d_with_indices": "pass `_random_samples` (an (N, C, 2) tensor of "
                                                              "uniform samples)",
    "torch.nn.functional.fractional_max_pool3d": "pass `_random_samples` (an (N, C, 3) tensor of uniform samples)",
    "torch.nn.functional.fractional_max_pool3d_with_indices": "pass `_random_samples` (an (N, C, 3) tensor of "
                                                              "uniform samples)",
    "torch.nn.functional.gaussian_nll_loss": "check `var` in the caller and write the loss out, "
                                             "`0.5 * (torch.log(var) + (input - target) ** 2 / var)`, reduced",
    "torch.nn.functional.binary_cross_entropy": "`torch._C._nn.binary_cross_entropy(input, target, "
                                                "weight.expand_as(target), 1)` (1: mean, 2: sum, 0: none)",
    "torch.nn.functional.linear_cross_entropy": "`F.cross_entropy(F.linear(input, linear_weight, linear_bias), "
                                                "target)`",
    "torch.nn.functional.multi_head_attention_forward": "write the projections with `F.linear` and the attention "
                                                        "with `F.scaled_dot_product_attention`",
    "torch.nn.functional.scaled_mm": "`torch._scaled_mm`",
    "torch.nn.functional.scaled_grouped_mm": "`torch._scaled_grouped_mm`",
    "torch.broadcast_shapes": "broadcast the tensors themselves, `torch.broadcast_tensors(a, b)`",
    "torch.finfo": "read the attribute where the object is made, as in `torch.finfo(x.dtype).min`",
    "torch.iinfo": "read the attribute where the object is made, as in `torch.iinfo(x.dtype).max`",
    "torch.norm": "`torch.linalg.vector_norm(input, p, dim, keepdim)` or `torch.linalg.matrix_norm`",
    "torch.unravel_index": "divide by each dimension's stride: `torch.div(indices, stride, rounding_mode='floor') "
                           "% size`",
    "torch.eig": "`torch.linalg.eig`",
    "torch.lstsq": "`torch.linalg.lstsq`",
    "torch.solve": "`torch.linalg.solve`",
    "torch.symeig": "`torch.linalg.eigh`",
    "torch.matrix_rank": "`torch.linalg.matrix_rank`",
    "torch.lobpcg": "`torch.linalg.eigh`",
    "torch.pca_lowrank": "`torch.linalg.svd`",
    "torch.svd_lowrank": "`torch.linalg.svd`",
    "torch.Tensor.eig": "`torch.linalg.eig`",
    "torch.Tensor.lstsq": "`torch.linalg.lstsq`",
    "torch.Tensor.solve": "`torch.linalg.solve`",
    "torch.Tensor.symeig": "`torch.linalg.eigh`",
    "torch.Tensor.__contains__": "`(input == element).any()`",
    "torch.Tensor.__iter__": "`input.unbind(0)`",
    "torch.Tensor.__reversed__": "`input.flip(0)`",
    "torch.Tensor.index": "index with `input[...]`",
    "torch.Tensor.reinforce": "sample with `torch.distributions`",
    "torch.Tensor.resize": "`input.reshape(sizes)`",
    "torch.Tensor.resize_as": "`input.reshape_as(other)`",
    **{f"torch.masked.{name}": _MASKED for name in (
        "amax", "amin", "argmax", "argmin", "cumprod", "cumsum", "log_softmax", "logaddexp", "logsumexp", "mean",
        "median", "norm", "normalize", "prod", "softmax", "softmin", "std", "sum", "var")},
}


def not_followed(dotted: str) -> str | None:
    """Why ppy does not follow ``dotted``, a Python-level function of torch whose source it does not ship."""
    if dotted in NOT_FOLLOWED:
        return NOT_FOLLOWED[dotted]
    return next((why for name, why in NOT_FOLLOWED.items() if name.endswith((".", "_")) and dotted.startswith(name)),
                None)
