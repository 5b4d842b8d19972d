"""Random well-typed regions: the syntax a region may use, over torch's operators, seeded.

Each region takes the same parameters (tensors of one shape, an int, a float,
a bool, an optional tensor, a tuple of ints), so one set of samples serves
all, and every tensor expression keeps the shape (3, 4), so any two can meet
in an operator. The generator covers operators and method chains, keyword
arguments, slicing and indexing, starred arguments, tuples and their
unpacking, int and float arithmetic with Python's semantics, comparisons,
multi-output ops, in-place ops on fresh tensors, optional arguments and
Python-level torch functions. tests/compiler/test_properties.py checks that what the
checker accepts compiles and computes what its Python body computes.
"""

from __future__ import annotations

import random
from collections.abc import Callable

PARAMETERS = ("x: torch.Tensor, y: torch.Tensor, w: torch.Tensor, n: int, f: float, b: bool, "
              "m: torch.Tensor | None, dims: tuple[int, ...]")
HEADER = "import math\n\nimport ppy\nimport torch\nimport torch.nn.functional as F\n\n\n"


class RegionGenerator:
    def __init__(self, seed: int):
        self.rng = random.Random(seed)
        self.locals: list[str] = []
        self.fresh = 0

    def choose(self, options: list[Callable[[int], str]], depth: int) -> str:
        return self.rng.choice(options)(depth)

    # --- ints, floats, bools --------------------------------------------------------

    def integer(self, depth: int) -> str:
        leaves = [lambda d: "n", lambda d: str(self.rng.randint(-3, 5)), lambda d: "x.shape[0]", lambda d: "x.size(-1)",
                  lambda d: "x.dim()", lambda d: "len(dims)", lambda d: "dims[0]"]
        if depth <= 0:
            return self.choose(leaves, 0)
        a, b = self.integer(depth - 1), self.integer(depth - 1)
        nodes = leaves + [
            lambda d: f"({a} + {b})", lambda d: f"({a} * {b})", lambda d: f"({a} - {b})",
            lambda d: f"({a} // {self.rng.choice(['2', '3', '-2'])})", lambda d: f"({a} % {self.rng.choice(['2', '3', '-3'])})",
            lambda d: f"max({a}, {b})", lambda d: f"min({a}, {b}, 4)", lambda d: f"abs({a})", lambda d: f"({a} ** 2)",
            lambda d: f"int({self.number(depth - 1)})", lambda d: f"round({self.number(depth - 1)})",
            lambda d: f"(-{a})", lambda d: f"math.floor({self.number(depth - 1)})",
        ]
        return self.choose(nodes, depth)

    def number(self, depth: int) -> str:
        leaves = [lambda d: "f", lambda d: repr(round(self.rng.uniform(-2, 2), 3)), lambda d: "1.5", lambda d: "math.pi"]
        if depth <= 0:
            return self.choose(leaves, 0)
        a, b = self.number(depth - 1), self.number(depth - 1)
        nodes = leaves + [
            lambda d: f"({a} + {b})", lambda d: f"({a} * {self.integer(depth - 1)})", lambda d: f"({self.integer(depth - 1)} / 4)",
            lambda d: f"math.sqrt(abs({a}) + 1)", lambda d: f"float({self.integer(depth - 1)})", lambda d: f"({a} - 0.5)",
            lambda d: f"math.exp(min({a}, 2.0))", lambda d: f"max({a}, {b})", lambda d: f"({a} ** 2)",
        ]
        return self.choose(nodes, depth)

    def boolean(self, depth: int) -> str:
        a, b = self.integer(max(depth - 1, 0)), self.integer(max(depth - 1, 0))
        options = [lambda d: "b", lambda d: f"({a} > {b})", lambda d: "(not b)", lambda d: "(m is None)",
                   lambda d: "(m is not None)", lambda d: f"(0 < {a} < 4)", lambda d: f"({a} in (1, 2))",
                   lambda d: f"({a} == {b})", lambda d: "(b == True)"]
        return self.choose(options, depth)

    # --- tensors of shape (3, 4) -------------------------------------------------------

    def tensor(self, depth: int) -> str:
        leaves = [lambda d: "x", lambda d: "y"] + [lambda d, name=name: name for name in self.locals]
        if depth <= 0:
            return self.choose(leaves, 0)
        t = lambda: self.tensor(depth - 1)  # noqa: E731
        i = lambda: self.integer(depth - 1)  # noqa: E731
        s = lambda: self.number(depth - 1)  # noqa: E731
        nodes = leaves + [
            lambda d: f"({t()} + {t()})", lambda d: f"({t()} * {s()})", lambda d: f"({s()} - {t()})",
            lambda d: f"({t()} / ({t()}.abs() + 1))", lambda d: f"({i()} * {t()})", lambda d: f"({t()} ** 2)",
            lambda d: f"(-{t()})", lambda d: f"({t()} @ w)", lambda d: f"torch.relu({t()})", lambda d: f"{t()}.abs()",
            lambda d: f"torch.tanh({t()})", lambda d: f"F.silu({t()})", lambda d: f"F.gelu({t()}, approximate='tanh')",
            lambda d: f"F.softmax({t()}, dim=-1)", lambda d: f"F.layer_norm({t()}, (4,))", lambda d: f"{t()}.exp().log1p()",
            lambda d: f"torch.where({t()} > 0, {t()}, {s()})", lambda d: f"torch.maximum({t()}, {t()})",
            lambda d: f"{t()}.clamp(min=-1.0, max={s()} + 2)", lambda d: f"{t()}.sum(-1, keepdim=True).expand(3, 4)",
            lambda d: f"({t()} + {t()}.mean(0))", lambda d: f"{t()}.transpose(0, 1).transpose(0, 1)",
            lambda d: f"{t()}.reshape(*{t()}.shape)", lambda d: f"{t()}.view({t()}.shape[0], -1)",
            lambda d: f"{t()}.reshape(-1).view(3, 4)", lambda d: f"torch.cat(({t()}, {t()}), 0)[:3]",
            lambda d: f"torch.stack(({t()}, {t()})).mean(0)", lambda d: f"{t()}.unsqueeze(0).squeeze(0)",
            lambda d: f"{t()}.clone().mul_(2)", lambda d: f"{t()}.to(torch.float64).float()",
            lambda d: f"{t()}.masked_fill({t()} > 0, 0.5)", lambda d: f"torch.max({t()}, 1, keepdim=True).values.expand(3, 4)",
            lambda d: f"torch.sort({t()}, -1, descending=b).values", lambda d: f"{t()}[:, [0, 1, 2, 3]]",
            lambda d: f"{t()}.flip(0)[[2, 1, 0]]", lambda d: f"(({t()} > 0) & ({t()} < 1)).float()",
            lambda d: f"torch.addcmul({t()}, {t()}, {t()}, value={s()})", lambda d: f"F.linear({t()}, w, m)",
            lambda d: f"{t()}.pow({self.rng.choice(['2', 'n', '0.5'])}).nan_to_num()",
            lambda d: f"F.dropout({t()}, p=0.5, training=False)", lambda d: f"(torch.ones_like({t()}) * {i()})",
            lambda d: f"({t()}.new_zeros(3, 4) + {t()})", lambda d: f"torch.full((3, 4), {s()}, device={t()}.device)",
            lambda d: f"{t()}.cumsum(1)", lambda d: f"{t()}.roll(1, 0)", lambda d: f"torch.lerp({t()}, {t()}, 0.25)",
            lambda d: f"{t()}.split(2, 1)[0].repeat(1, 2)", lambda d: f"torch.einsum('ij,jk->ik', {t()}, w)",
        ]
        return self.choose(nodes, depth)

    # --- statements ---------------------------------------------------------------------

    def region(self, index: int) -> str:
        self.locals = []
        lines = []
        for _ in range(self.rng.randint(0, 3)):
            name = f"v{len(self.locals)}"
            kind = self.rng.random()
            if kind < 0.15:
                lines.append(f"    {name}, {name}_rest = {self.tensor(2)}.split(2, 1)")
                lines.append(f"    {name} = torch.cat(({name}, {name}_rest), 1)")
            elif kind < 0.25:
                lines.append(f"    {name} = {self.tensor(2)}")
                lines.append(f"    {name} += {self.tensor(1)}")
            elif kind < 0.32:
                lines.append(f"    {name} = {self.tensor(1)}.clone()")
                lines.append(f"    {name}[0] = {self.number(1)}")
            else:
                lines.append(f"    {name} = {self.tensor(3)}")
            self.locals.append(name)
        shape = self.rng.random()
        if shape < 0.6:
            returns, value = "torch.Tensor", self.tensor(3)
        elif shape < 0.8:
            returns, value = "tuple[torch.Tensor, int, float]", f"{self.tensor(2)}, {self.integer(2)}, {self.number(2)}"
        else:
            returns, value = "tuple[torch.Tensor, bool]", f"{self.tensor(2)}, {self.boolean(2)}"
        body = "\n".join(lines + [f"    return {value}"])
        return f"@ppy.opt(1)\ndef region_{index}({PARAMETERS}) -> {returns}:\n{body}\n"

    def module(self, count: int) -> str:
        return HEADER + "\n\n".join(self.region(i) for i in range(count))
