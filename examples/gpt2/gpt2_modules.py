"""GPT-2 as nn.Modules, with `@ppy.opt` on the forward methods people already write.

The same model as gpt2.py, written the way a PyTorch project writes it: each
block an `nn.Module` of `nn.Linear`s and `nn.LayerNorm`s. The block's
`forward` is a region: what it reads through `self` (`self.attn.q.weight`,
`self.ln1.eps`, `self.attn.heads`) is read from the object at each call, so
one build serves all the blocks, whatever their weights. Run as a script, it
loads gpt2.py's weights and checks that both forms compute the same logits,
to the bit.
"""

from collections.abc import Iterator

import ppy
import torch
import torch.nn as nn
import torch.nn.functional as F

import gpt2


class SelfAttention(nn.Module):
    """Causal self-attention over a key and value cache the caller keeps."""

    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads = heads
        self.head_dim = width // heads
        self.width = width
        self.q = nn.Linear(width, width)
        self.k = nn.Linear(width, width)
        self.v = nn.Linear(width, width)
        self.o = nn.Linear(width, width)

    def split(self, t: torch.Tensor, batch: int, length: int) -> torch.Tensor:
        return t.reshape((batch, length, self.heads, self.head_dim)).transpose(1, 2)

    def forward(self, h: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                causal: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        batch, length = h.size(0), h.size(1)
        q = self.split(self.q(h), batch, length)
        k_all = torch.cat((k_cache, self.split(self.k(h), batch, length)), 2)
        v_all = torch.cat((v_cache, self.split(self.v(h), batch, length)), 2)
        a = F.scaled_dot_product_attention(q, k_all, v_all, is_causal=causal)
        return self.o(a.transpose(1, 2).reshape((batch, length, self.width))), k_all, v_all


class Mlp(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.fc = nn.Linear(width, 4 * width)
        self.proj = nn.Linear(4 * width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(F.gelu(self.fc(x), approximate="tanh"))


class Block(nn.Module):
    def __init__(self, width: int, heads: int, eps: float = gpt2.EPS) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(width, eps=eps)
        self.attn = SelfAttention(width, heads)
        self.ln2 = nn.LayerNorm(width, eps=eps)
        self.mlp = Mlp(width)

    @ppy.opt(3)
    def forward(self, x: torch.Tensor, k_cache: torch.Tensor, v_cache: torch.Tensor,
                causal: bool) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """gpt2.step as a method: one pre-norm block, returning its key and value with its output."""
        attended, k_all, v_all = self.attn(self.ln1(x), k_cache, v_cache, causal)
        h = torch.add(x, attended)
        return torch.add(h, self.mlp(self.ln2(h))), k_all, v_all


@Block.forward.samples
def _(device: str) -> Iterator[tuple[Block, torch.Tensor, torch.Tensor, torch.Tensor, bool]]:
    """What `pytest --ppy-verify` checks the block on, on each device: the instance first, then the arguments
    (a prompt on an empty cache, then one token on a filled one)."""
    torch.manual_seed(0)
    block = Block(16, 2).to(device).eval()
    empty = torch.zeros(1, 2, 0, 8, device=device)
    yield block, torch.randn(1, 5, 16, device=device), empty, empty, True
    cached = torch.randn(1, 2, 5, 8, device=device)
    yield block, torch.randn(1, 1, 16, device=device), cached, torch.randn_like(cached), False


class GPT2(nn.Module):
    def __init__(self, layers: int, heads: int, head_dim: int, vocab: int) -> None:
        super().__init__()
        width = heads * head_dim
        self.heads, self.head_dim = heads, head_dim
        self.wte = nn.Embedding(vocab, width)
        self.wpe = nn.Embedding(1024, width)
        self.blocks = nn.ModuleList([Block(width, heads) for _ in range(layers)])
        self.lnf = nn.LayerNorm(width, eps=gpt2.EPS)

    def forward(self, ids: torch.Tensor, causal: bool = True) -> torch.Tensor:
        """Logits for every position, from an empty cache (the loop over blocks stays in Python)."""
        batch, length = ids.shape
        h = torch.add(self.wte.weight[ids], self.wpe.weight[0:length])
        empty = torch.zeros(batch, self.heads, 0, self.head_dim, device=ids.device)
        for layer in self.blocks:
            h, _, _ = layer(h, empty, empty, causal)
        return torch.matmul(self.lnf(h), self.wte.weight.t())

    @torch.no_grad()
    def load(self, model: gpt2.Model) -> "GPT2":
        """gpt2.py's weights, tensor for tensor (nn.Linear keeps `weight` as F.linear takes it)."""
        self.wte.weight.copy_(model.wte)
        self.wpe.weight.copy_(model.wpe)
        self.lnf.weight.copy_(model.lnf_w)
        self.lnf.bias.copy_(model.lnf_b)
        for mine, theirs in zip(self.blocks, model.blocks):
            pairs = [(mine.ln1.weight, theirs.ln1_w), (mine.ln1.bias, theirs.ln1_b),
                     (mine.ln2.weight, theirs.ln2_w), (mine.ln2.bias, theirs.ln2_b),
                     (mine.mlp.fc.weight, theirs.fc_w), (mine.mlp.fc.bias, theirs.fc_b),
                     (mine.mlp.proj.weight, theirs.proj_w), (mine.mlp.proj.bias, theirs.proj_b)]
            for name in "qkvo":
                linear = getattr(mine.attn, name)
                pairs += [(linear.weight, getattr(theirs, f"{name}_w")), (linear.bias, getattr(theirs, f"{name}_b"))]
            for target, source in pairs:
                target.copy_(source)
        return self


def main() -> None:
    layers, heads, vocab, length = 6, 12, 8192, 128
    print("# region active:", all([Block.forward.build(), gpt2.block.build()]))
    torch.manual_seed(0)
    functions = gpt2.Model(layers, heads, 64, vocab, "cpu")
    modules = GPT2(layers, heads, 64, vocab).load(functions).eval()
    ids = torch.remainder(torch.arange(length).reshape((1, length)), vocab)
    with torch.no_grad():
        expected = functions.forward(ids, 1, length)
        actual = modules(ids)
    print(gpt2.answer(actual))
    print("nn.Module regions match the free-function regions to the bit:", bool(torch.equal(actual, expected)))


if __name__ == "__main__":
    main()
