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
    return CallEffects(tuple(dict.fromkeys(writes)), frozenset(aliases), native.seeded or native.effects.random)
