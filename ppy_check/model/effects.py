"""What one resolved call does besides computing its result: writes, aliases, random draws.

From the schema: an argument annotated ``Tensor(a!)`` is written, and a
return annotated with an argument's alias set is that argument or a view of
it. From the probe (``opdata.json``'s effects): writes the schema leaves out
(batch_norm's running statistics, only when ``training`` is true), returns
that may be an argument itself (``type_as`` when nothing changes,
``unsafe_chunk``), and random draws. A value carries the set of parameters
it may alias, so a write through any chain of views lands on the right one.
"""

from __future__ import annotations

from dataclasses import dataclass

from ppy_check.model.ir import Const, Expr, WriteKind
from ppy_check.schema import MISSING, Native


@dataclass(frozen=True)
class CallEffects:
    writes: tuple[tuple[str, WriteKind], ...]  # (parameter, how) for each parameter the call may write
    aliases: frozenset[str]  # parameters the result may alias
    random: bool


def _argument_value(native: Native, values: dict[str, Expr], name: str) -> object:
    """The literal an argument has at this call (its default when not given), or MISSING when not known."""
    value = values.get(name)
    if value is None:
        arg = native.arg.get(name)
        return MISSING if arg is None else arg.default
    return value.value if isinstance(value, Const) else MISSING


def effects_of(native: Native, values: dict[str, Expr], out_args: tuple[str, ...] = ()) -> CallEffects:
    """The effects of calling ``native`` with these argument values (by schema argument name)."""
    writes: list[tuple[str, WriteKind]] = []

    def written(name: str, kind: WriteKind) -> None:
        value = values.get(name)
        if value is not None:
            writes.extend((param, kind) for param in sorted(value.aliases))

    for arg in native.args:
        if arg.is_write:
            written(arg.name, WriteKind.OUT if arg.name in out_args else WriteKind.OP)
    for hidden in native.effects.writes:
        if hidden.when is not None:
            condition, expected = hidden.when
            actual = _argument_value(native, values, condition)
            if actual is not MISSING and bool(actual) != expected:
                continue  # `training=False`: batch_norm leaves the running statistics alone
        written(hidden.arg, WriteKind.HIDDEN)
    aliases: set[str] = set()
    for returned in native.returns:
        if returned.alias is None:
            continue
        for arg in native.args:
            if arg.alias is not None and arg.alias.sets & returned.alias.sets and arg.name in values:
                aliases |= values[arg.name].aliases
    for _index, name in native.effects.aliases:
        if name in values:
            aliases |= values[name].aliases
    return CallEffects(tuple(dict.fromkeys(writes)), frozenset(aliases), _draws(native, values))


# A dropout draws its mask only when it drops something: a probability known to be 0 (scaled_dot_product_attention's
# `dropout_p`, by default 0.0) or a dropout known not to be training leaves the generator alone, as torch's
# kernels skip the draw then. (`p` and `train` name that only in the dropout ops: bernoulli's `p` still draws.)
_IDLE_WHEN = {"dropout_p": 0}
_DROPOUT_IDLE_WHEN = {"p": 0, "train": False}


def _draws(native: Native, values: dict[str, Expr]) -> bool:
    """Whether the call may draw random numbers: the op can (its schema's tag or the probe), at these arguments."""
    if not (native.seeded or native.effects.random):
        return False
    idle = {**_IDLE_WHEN, **(_DROPOUT_IDLE_WHEN if "dropout" in native.name else {})}
    for name, value in idle.items():
        if name in native.arg:
            actual = _argument_value(native, values, name)
            if actual is not MISSING and actual is not None and not isinstance(actual, str) and actual == value:
                return False
    return True
