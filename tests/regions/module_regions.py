"""nn.Module classes whose methods are regions: what they read through `self` is read at each call."""

# torch types a module's call as Any, and these classes are written as models write them (`return self.proj(x)`).
# mypy: disable-error-code="no-any-return"

from __future__ import annotations

import typing
from collections.abc import Iterator
from typing import Any

import ppy
import torch
import torch.nn as nn
import torch.nn.functional as F


class Mlp(nn.Module):
    def __init__(self, width: int, hidden: int, eps: float = 1e-5):
        super().__init__()
        self.fc = nn.Linear(width, hidden)
        self.proj = nn.Linear(hidden, width, bias=False)
        self.gain = nn.Parameter(torch.ones(width))
        self.register_buffer("shift", torch.zeros(width))
        self.eps = eps

    @ppy.opt(3)
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(F.gelu(self.fc(x), approximate="tanh")) * self.gain + self.shift + self.eps


class Block(nn.Module):
    def __init__(self, width: int, dropout: float = 0.1):
        super().__init__()
        self.ln = nn.LayerNorm(width)
        self.mlp = Mlp(width, 4 * width)
        self.drop = nn.Dropout(dropout)
        self.act = nn.ReLU()

    @ppy.opt(3)
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.drop(self.act(self.mlp(self.ln(x))))

    @ppy.opt(3)
    def twice(self, x: torch.Tensor) -> torch.Tensor:
        return self.forward(self.forward(x))


class Scaled(Block):
    """A subclass that reuses its parent's `__init__` and adds a region of its own."""

    @ppy.opt(3)
    def scaled(self, x: torch.Tensor, factor: float) -> torch.Tensor:
        return self.mlp(x) * factor


class Embedder(nn.Module):
    def __init__(self, vocab: int, width: int):
        super().__init__()
        self.wte = nn.Embedding(vocab, width)
        self.norm = nn.LayerNorm(width, elementwise_affine=False)

    @ppy.opt(3)
    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        # nn.Embedding's own forward passes `padding_idx`, an Optional[int] torch's code tests at run time.
        return self.norm(F.embedding(tokens, self.wte.weight))


@Block.forward.samples
def _(device: str) -> Iterator[tuple[Block, torch.Tensor]]:
    torch.manual_seed(0)
    yield Block(8).to(device).eval(), torch.randn(2, 3, 8, device=device)


@Embedder.forward.samples
def _(device: str) -> Iterator[tuple[Embedder, torch.Tensor]]:
    torch.manual_seed(0)
    yield Embedder(11, 8).to(device), torch.randint(0, 11, (2, 5), device=device)


class ScaledNorm(nn.LayerNorm):
    """A subclass of torch.nn's own class: its attributes, and `super().forward`."""

    def __init__(self, width: int, scale: float) -> None:
        super().__init__(width)
        self.scale = scale

    @ppy.opt(3)
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return super().forward(x) * self.scale + self.normalized_shape[0]


class Stack(nn.Module):
    """Containers: a Sequential called, ModuleList and ModuleDict items by literal keys."""

    def __init__(self, width: int, depth: int) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(width, 2 * width), nn.GELU(), nn.Linear(2 * width, width))
        self.layers = nn.ModuleList([nn.Linear(width, width) for _ in range(depth)])
        self.heads = nn.ModuleDict({"left": nn.Linear(width, 1), "right": nn.Linear(width, 1)})
        self.pair = nn.ModuleList([nn.Tanh(), nn.SiLU()])

    @ppy.opt(3)
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.layers[1](self.layers[0](self.net(x)))
        return self.pair[-1](self.heads["left"](y) + self.heads["right"](self.pair[0](y)))


class Config:
    """A plain config object, as HF-style models pass one."""

    def __init__(self, width: int, eps: float) -> None:
        self.width = width
        self.eps = eps


class Configured(nn.Module):
    def __init__(self, config: Config) -> None:
        super().__init__()
        self.config = config
        self.proj = nn.Linear(config.width, config.width)

    @ppy.opt(3)
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.layer_norm(self.proj(x), (self.config.width,), eps=self.config.eps)


class WithActivation(nn.Module):
    """timm's style: the activation's class is a constructor argument, typed from its default."""

    def __init__(self, width: int, act_layer: type[nn.Module] = nn.GELU) -> None:
        super().__init__()
        self.fc = nn.Linear(width, width)
        self.act = act_layer()

    @ppy.opt(3)
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.act(self.fc(x))


class TorchZoo(nn.Module):
    """torch.nn's own classes, each inlined from its shipped `forward` (Optional settings tested at run time)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.gn = nn.GroupNorm(2, 4)
        self.act = nn.SiLU()
        self.shuffle = nn.PixelShuffle(2)
        self.flat = nn.Flatten()
        self.up = nn.ConvTranspose2d(4, 2, 2, stride=2)
        self.rms = nn.RMSNorm(16)
        self.bil = nn.Bilinear(16, 16, 4)
        self.lrelu = nn.LeakyReLU(0.2)
        self.glu = nn.GLU()
        self.softmax = nn.Softmax(dim=-1)
        self.emb = nn.Embedding(10, 2, padding_idx=0)

    @ppy.opt(3)
    def forward(self, x: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
        h = self.act(self.gn(self.conv(x)))
        y = self.rms(self.flat(self.shuffle(h))[:, :16])
        z = self.softmax(self.glu(self.lrelu(self.bil(y, y))))
        return z.sum() + self.up(h).mean() + self.emb(tokens).sum()


@TorchZoo.forward.samples
def _(device: str) -> Iterator[tuple[TorchZoo, torch.Tensor, torch.Tensor]]:
    torch.manual_seed(0)
    yield TorchZoo().to(device), torch.randn(2, 3, 6, 6, device=device), torch.randint(0, 10, (2, 3), device=device)


class Normed(nn.Module):
    """torchvision's style: `norm_layer` defaults to BatchNorm2d when None; BatchNorm's own `forward` is inlined, its
    running statistics updated in training (a cumulative average when `momentum` is None)."""

    def __init__(self, channels: int, norm_layer: type[nn.Module] | None = None, momentum: float | None = 0.1,
                 track_running_stats: bool = True) -> None:
        super().__init__()
        if norm_layer is None:
            norm_layer = nn.BatchNorm2d
        self.conv = nn.Conv2d(channels, channels, 3, padding=1, bias=False)
        self.bn = norm_layer(channels, momentum=momentum, track_running_stats=track_running_stats)

    @ppy.opt(3)
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.bn(self.conv(x)))


class Aliased(nn.Module):
    """A class with a lookup of its own: each read through `self` asks it, as Python does."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.scale = nn.Parameter(torch.ones(width))

    def __getattr__(self, name: str) -> Any:
        found = super().__getattr__(name)
        return typing.cast(torch.Tensor, found) * 10 if name == "scale" else found

    @ppy.opt(3)
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * self.scale


@Aliased.forward.samples
def _(device: str) -> Iterator[tuple[Aliased, torch.Tensor]]:
    yield Aliased(4).to(device), torch.randn(2, 4, device=device)


class Stepped(nn.Module):
    """A static method and a method the region calls through `self`."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.lin = nn.Linear(width, width)

    @staticmethod
    def squash(t: torch.Tensor) -> torch.Tensor:
        return torch.tanh(t)

    def shift(self, t: torch.Tensor) -> torch.Tensor:
        return t + 1

    @ppy.opt(3)
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.shift(self.squash(self.lin(x)))


@Stepped.forward.samples
def _(device: str) -> Iterator[tuple[Stepped, torch.Tensor]]:
    yield Stepped(4).to(device), torch.randn(2, 4, device=device)


@Normed.forward.samples
def _(device: str) -> Iterator[tuple[Normed, torch.Tensor]]:
    torch.manual_seed(0)
    for momentum in (0.1, None):
        yield Normed(3, momentum=momentum).to(device).eval(), torch.randn(2, 3, 5, 5, device=device)


# Samples of the other classes: `--ppy-verify` compares each, and torch.library's opcheck tries each class's
# region as its torch operator, whose fake kernel runs the body on a stand-in of the instance (tests/integration).
@Mlp.forward.samples
def _(device: str) -> Iterator[tuple[Mlp, torch.Tensor]]:
    torch.manual_seed(0)
    yield Mlp(6, 12, eps=0.5).to(device), torch.randn(2, 6, device=device)


@Block.twice.samples
def _(device: str) -> Iterator[tuple[Block, torch.Tensor]]:
    torch.manual_seed(0)
    yield Block(8).to(device).eval(), torch.randn(3, 8, device=device)


@Scaled.scaled.samples
def _(device: str) -> Iterator[tuple[Scaled, torch.Tensor, float]]:
    torch.manual_seed(0)
    yield Scaled(8).to(device), torch.randn(3, 8, device=device), 0.5


@ScaledNorm.forward.samples
def _(device: str) -> Iterator[tuple[ScaledNorm, torch.Tensor]]:
    torch.manual_seed(0)
    yield ScaledNorm(6, 0.5).to(device), torch.randn(2, 6, device=device)


@Stack.forward.samples
def _(device: str) -> Iterator[tuple[Stack, torch.Tensor]]:
    torch.manual_seed(0)
    yield Stack(6, depth=3).to(device), torch.randn(2, 6, device=device)


@Configured.forward.samples
def _(device: str) -> Iterator[tuple[Configured, torch.Tensor]]:
    torch.manual_seed(0)
    yield Configured(Config(6, 1e-3)).to(device), torch.randn(2, 6, device=device)


@WithActivation.forward.samples
def _(device: str) -> Iterator[tuple[WithActivation, torch.Tensor]]:
    torch.manual_seed(0)
    yield WithActivation(6).to(device), torch.randn(2, 6, device=device)
