"""torch.nn's module classes as static data: what each attribute a class's ``forward`` reads holds.

A module region (``@ppy.opt`` on ``nn.Module.forward``) reads ``self.<attr>`` as
inputs of the compiled function, and a call of a submodule (``self.fc(x)``)
inlines that class's ``forward`` from torch's shipped source
(``torch_python.nn_class``). To type those reads the builder needs each
attribute's kind: a tensor always present, a tensor that may be None, an int, a
tuple of ints of fixed or instance-dependent length...

Why a table rather than reading ``__init__``: torch's constructors build their
attributes through ``factory_kwargs``, ``register_parameter(name, None)``,
``register_buffer`` and branches on the constructor's arguments
(``if bias: ... else: self.register_parameter("bias", None)``), which the
checker does not interpret. The kinds here are written once per class and kept
honest by ``tests/torch_only/test_nn_classes.py``: it constructs real instances
with the arguments that change kinds (``bias=False``, ``affine=False``,
``track_running_stats=False``, ``padding_idx=None``, ...) and checks every
field's value fits its type, and it walks the shipped source of each class's
``forward`` (and the methods it calls through ``self``, in the class or its
torch.nn bases) checking that every ``self.<name>`` it reads is a field here
or a method.

How the kinds are chosen:

- ``training`` (every nn.Module) is on every class.
- A float attribute the constructor stores as it was passed (``self.eps =
  eps``) is ``t.NUMBER``: a caller may pass an ``int`` (``eps=1``,
  ``p=0``), as for a region parameter annotated ``float``. Only where the
  constructor itself supplies the float (``ReLU6``'s ``0.0, 6.0``) is it
  ``t.FLOAT``.
- Inherited attributes (``_ConvNd``, ``_NormBase``, ``_BatchNorm``,
  ``_DropoutNd``, ``Hardtanh`` for ``ReLU6``) are flattened into each public
  class's entry.
- Fields also list the public attributes a user's ``forward`` may read of a
  submodule (``self.fc.out_features``), not only those torch's ``forward``
  reads.

Documented mismatches (an instance whose value does not fit its field; the test
asserts each is exactly as stated here, so a change in torch shows):

- ``ConvNd(padding="same" | "valid")``: ``padding`` is the str, and
  ``_reversed_padding_repeated_twice`` a list. The table records the integer
  form every other instance has (a tuple of N ints; 2N ints reversed and
  repeated); the builder must read such an instance's ``padding`` as a str.
- ``Unflatten(dim, [2, 5])``: ``unflattened_size`` stays the list it was
  given; the table records the tuple.

Skipped, each for its reason (the torch test fails on a public module class of
a shipped module that is neither in the table nor named here):

- ``MultiheadAttention``: its ``forward`` picks a fast path by testing the
  run-time state of its tensors and of autograd (``torch.is_grad_enabled()``,
  ``query.is_nested``, devices), and holds ``out_proj`` and optional
  projection weights whose presence depends on ``_qkv_same_embed_dim``.
- ``LazyLinear``, ``LazyConv1d``, ``LazyConv2d``, ``LazyConv3d``,
  ``LazyConvTranspose1d``, ``LazyConvTranspose2d``, ``LazyConvTranspose3d``,
  ``LazyBatchNorm1d``, ``LazyBatchNorm2d``, ``LazyBatchNorm3d``: their
  parameters are uninitialised until the first call, which changes their class.
- ``SyncBatchNorm``: its ``forward`` asks the process group at run time whether
  to reduce across processes.
- ``CrossMapLRN2d``: its ``forward`` runs an autograd Function written in Python.
- ``NonDynamicallyQuantizableLinear``: not in ``torch.nn``'s namespace; it is
  ``Linear`` under another name, for ``MultiheadAttention``'s ``out_proj``.
- ``Container`` (deprecated), ``ParameterList``, ``ParameterDict``: they have no
  ``forward``.

Kinds say what an attribute holds, not what a ``forward`` does with it:
``_BatchNorm.forward`` writes ``num_batches_tracked`` in training
(``add_(1)``), ``ConvTransposeNd.forward`` tests ``isinstance(self.padding,
tuple)`` and loops in ``_output_padding`` when given an ``output_size``, and
``Sequential.forward`` iterates over ``self``.

Sequential, ModuleList and ModuleDict hold modules by index or key, which the
builder handles itself: their entries have ``training`` only.

To add a class: its module must be in ``gen_opdata.NN_MODULES`` (its source
ships); add an entry with every attribute its ``forward`` reads and what
``__init__`` stores there (every branch), and the instances that reach each
branch to ``INSTANCES`` in the torch test.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from ppy_check.model import types as t


@dataclass(frozen=True)
class TorchClass:
    """One of torch.nn's module classes: where its source ships and what each attribute it reads holds."""

    name: str  # "Linear"
    module: str  # "torch.nn.modules.linear": the shipped module whose source defines it
    fields: tuple[tuple[str, t.Type], ...]  # attribute -> static type
    submodules: tuple[tuple[str, str], ...] = ()  # attribute -> dotted torch.nn class, for classes holding modules

    @property
    def dotted(self) -> str:
        return f"torch.nn.{self.name}"

    def field(self, name: str) -> t.Type | None:
        return dict(self.fields).get(name)


_TENSOR_OR_NONE = t.OptionalT(t.TENSOR)
_TRAINING = (("training", t.BOOL),)


def _ints(count: int) -> t.Type:
    return t.TupleT((t.INT,) * count)


def _entry(name: str, module: str, *fields: tuple[str, t.Type]) -> TorchClass:
    return TorchClass(name, f"torch.nn.modules.{module}", _TRAINING + fields)


def _conv(dims: int) -> TorchClass:
    # _ConvNd's attributes; every tuple is one int per spatial dimension (`_single`, `_pair`, `_triple`).
    return _entry(
        f"Conv{dims}d", "conv", ("weight", t.TENSOR), ("bias", _TENSOR_OR_NONE), ("in_channels", t.INT),
        ("out_channels", t.INT), ("kernel_size", _ints(dims)), ("stride", _ints(dims)), ("padding", _ints(dims)),
        ("dilation", _ints(dims)), ("output_padding", _ints(dims)), ("transposed", t.BOOL), ("groups", t.INT),
        ("padding_mode", t.STR), ("_reversed_padding_repeated_twice", _ints(2 * dims)))


def _conv_transpose(dims: int) -> TorchClass:
    # _ConvTransposeNd turns padding into a tuple always (`_single(padding)`): no str form.
    return _entry(
        f"ConvTranspose{dims}d", "conv", ("weight", t.TENSOR), ("bias", _TENSOR_OR_NONE), ("in_channels", t.INT),
        ("out_channels", t.INT), ("kernel_size", _ints(dims)), ("stride", _ints(dims)), ("padding", _ints(dims)),
        ("dilation", _ints(dims)), ("output_padding", _ints(dims)), ("transposed", t.BOOL), ("groups", t.INT),
        ("padding_mode", t.STR))


def _batch_norm(dims: int) -> TorchClass:
    # _NormBase: affine=False drops weight and bias, track_running_stats=False the three buffers.
    return _entry(
        f"BatchNorm{dims}d", "batchnorm", ("weight", _TENSOR_OR_NONE), ("bias", _TENSOR_OR_NONE),
        ("running_mean", _TENSOR_OR_NONE), ("running_var", _TENSOR_OR_NONE),
        ("num_batches_tracked", _TENSOR_OR_NONE), ("num_features", t.INT), ("eps", t.NUMBER),
        ("momentum", t.OptionalT(t.NUMBER)), ("affine", t.BOOL), ("track_running_stats", t.BOOL))


def _dropout(name: str) -> TorchClass:
    # _DropoutNd stores both (the alpha dropouts' forwards read only p).
    return _entry(name, "dropout", ("p", t.NUMBER), ("inplace", t.BOOL))


def _activation(name: str, *fields: tuple[str, t.Type]) -> TorchClass:
    return _entry(name, "activation", *fields)


_INPLACE = ("inplace", t.BOOL)
_DIM_OR_NONE = ("dim", t.OptionalT(t.INT))

_CLASSES = (
    _entry("Linear", "linear", ("weight", t.TENSOR), ("bias", _TENSOR_OR_NONE), ("in_features", t.INT),
           ("out_features", t.INT)),
    _entry("Bilinear", "linear", ("weight", t.TENSOR), ("bias", _TENSOR_OR_NONE), ("in1_features", t.INT),
           ("in2_features", t.INT), ("out_features", t.INT)),
    _entry("Identity", "linear"),
    _entry("LayerNorm", "normalization", ("weight", _TENSOR_OR_NONE), ("bias", _TENSOR_OR_NONE),
           ("normalized_shape", t.SeqT(t.INT)), ("eps", t.NUMBER), ("elementwise_affine", t.BOOL)),
    _entry("RMSNorm", "normalization", ("weight", _TENSOR_OR_NONE), ("normalized_shape", t.SeqT(t.INT)),
           ("eps", t.OptionalT(t.NUMBER)), ("elementwise_affine", t.BOOL)),
    _entry("LocalResponseNorm", "normalization", ("size", t.INT), ("alpha", t.NUMBER), ("beta", t.NUMBER),
           ("k", t.NUMBER)),
    _entry("GroupNorm", "normalization", ("weight", _TENSOR_OR_NONE), ("bias", _TENSOR_OR_NONE),
           ("num_groups", t.INT), ("num_channels", t.INT), ("eps", t.NUMBER), ("affine", t.BOOL)),
    *(_batch_norm(dims) for dims in (1, 2, 3)),
    _entry("Embedding", "sparse", ("weight", t.TENSOR), ("num_embeddings", t.INT), ("embedding_dim", t.INT),
           ("padding_idx", t.OptionalT(t.INT)), ("max_norm", t.OptionalT(t.NUMBER)), ("norm_type", t.NUMBER),
           ("scale_grad_by_freq", t.BOOL), ("sparse", t.BOOL)),
    # EmbeddingBag keeps padding_idx as given (None, or an int; a negative one is made positive).
    _entry("EmbeddingBag", "sparse", ("weight", t.TENSOR), ("num_embeddings", t.INT), ("embedding_dim", t.INT),
           ("padding_idx", t.OptionalT(t.INT)), ("max_norm", t.OptionalT(t.NUMBER)), ("norm_type", t.NUMBER),
           ("scale_grad_by_freq", t.BOOL), ("mode", t.STR), ("sparse", t.BOOL), ("include_last_offset", t.BOOL)),
    *(_conv(dims) for dims in (1, 2, 3)),
    *(_conv_transpose(dims) for dims in (1, 2, 3)),
    _dropout("Dropout"), _dropout("Dropout1d"), _dropout("Dropout2d"), _dropout("Dropout3d"),
    _dropout("AlphaDropout"), _dropout("FeatureAlphaDropout"),
    _activation("Threshold", ("threshold", t.NUMBER), ("value", t.NUMBER), _INPLACE),
    _activation("ReLU", _INPLACE),
    _activation("RReLU", ("lower", t.NUMBER), ("upper", t.NUMBER), _INPLACE),
    _activation("Hardtanh", ("min_val", t.NUMBER), ("max_val", t.NUMBER), _INPLACE),
    _activation("ReLU6", ("min_val", t.FLOAT), ("max_val", t.FLOAT), _INPLACE),
    _activation("Sigmoid"),
    _activation("Hardsigmoid", _INPLACE),
    _activation("Tanh"),
    _activation("SiLU", _INPLACE),
    _activation("Mish", _INPLACE),
    _activation("Hardswish", _INPLACE),
    _activation("ELU", ("alpha", t.NUMBER), _INPLACE),
    _activation("CELU", ("alpha", t.NUMBER), _INPLACE),
    _activation("SELU", _INPLACE),
    _activation("GLU", ("dim", t.INT)),
    _activation("GELU", ("approximate", t.STR)),
    _activation("Hardshrink", ("lambd", t.NUMBER)),
    _activation("LeakyReLU", ("negative_slope", t.NUMBER), _INPLACE),
    _activation("LogSigmoid"),
    _activation("Softplus", ("beta", t.NUMBER), ("threshold", t.NUMBER)),
    _activation("Softshrink", ("lambd", t.NUMBER)),
    _activation("PReLU", ("weight", t.TENSOR), ("num_parameters", t.INT)),
    _activation("Softsign"),
    _activation("Tanhshrink"),
    _activation("Softmin", _DIM_OR_NONE),
    _activation("Softmax", _DIM_OR_NONE),
    _activation("Softmax2d"),
    _activation("LogSoftmax", _DIM_OR_NONE),
    _entry("Flatten", "flatten", ("start_dim", t.INT), ("end_dim", t.INT)),
    _entry("Unflatten", "flatten", ("dim", t.INT), ("unflattened_size", t.SeqT(t.INT))),
    _entry("PixelShuffle", "pixelshuffle", ("upscale_factor", t.INT)),
    _entry("PixelUnshuffle", "pixelshuffle", ("downscale_factor", t.INT)),
    _entry("Sequential", "container"),
    _entry("ModuleList", "container"),
    _entry("ModuleDict", "container"),
)

TORCH_CLASSES: Mapping[str, TorchClass] = MappingProxyType({cls.dotted: cls for cls in _CLASSES})
# The defining module's name too: a class is reached as `torch.nn.modules.linear.Linear` where a file imports it so.
_BY_ANY_NAME: Mapping[str, TorchClass] = MappingProxyType(
    {**TORCH_CLASSES, **{f"{cls.module}.{cls.name}": cls for cls in _CLASSES}})


def torch_class(dotted: str) -> TorchClass | None:
    """The entry of ``torch.nn.Linear`` (or ``torch.nn.modules.linear.Linear``), when the table has one."""
    return _BY_ANY_NAME.get(dotted)
