"""GPT-2: one ATen region per transformer block.

Every block is seventeen weights and one straight line of tensor operations,
which is exactly what a region is. The Python loop over blocks stays in
Python; what leaves it is the ten dispatcher round trips inside each block.
"""

import time
from collections.abc import Iterator

import ppy
import torch
import torch.nn.functional as F

EPS: float = 1e-5


@ppy.opt(3)
def block(
    x: torch.Tensor,
    ln1_w: torch.Tensor,
    ln1_b: torch.Tensor,
    q_w: torch.Tensor,
    q_b: torch.Tensor,
    k_w: torch.Tensor,
    k_b: torch.Tensor,
    v_w: torch.Tensor,
    v_b: torch.Tensor,
    o_w: torch.Tensor,
    o_b: torch.Tensor,
    ln2_w: torch.Tensor,
    ln2_b: torch.Tensor,
    fc_w: torch.Tensor,
    fc_b: torch.Tensor,
    proj_w: torch.Tensor,
    proj_b: torch.Tensor,
    batch: int,
    length: int,
    heads: int,
    head_dim: int,
    width: int,
    eps: float,
) -> torch.Tensor:
    """One pre-norm block: attention with a causal mask, then the MLP."""
    # A region takes every weight as a parameter of its own: that is what a
    # region is, and seventeen tensors beside six dimensions is the shape of
    # one transformer block.
    # pylint: disable=too-many-arguments,too-many-positional-arguments,too-many-locals
    h = torch.layer_norm(x, (width,), ln1_w, ln1_b, eps)
    q = F.linear(h, q_w, q_b).reshape((batch, length, heads, head_dim)).transpose(1, 2)
    k = F.linear(h, k_w, k_b).reshape((batch, length, heads, head_dim)).transpose(1, 2)
    v = F.linear(h, v_w, v_b).reshape((batch, length, heads, head_dim)).transpose(1, 2)
    a = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    merged = a.transpose(1, 2).reshape((batch, length, width))
    attended = torch.add(x, F.linear(merged, o_w, o_b))
    n = torch.layer_norm(attended, (width,), ln2_w, ln2_b, eps)
    f = F.gelu(F.linear(n, fc_w, fc_b), approximate="tanh")
    return torch.add(attended, F.linear(f, proj_w, proj_b))


@ppy.opt(3)
def step(
    x: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    ln1_w: torch.Tensor,
    ln1_b: torch.Tensor,
    q_w: torch.Tensor,
    q_b: torch.Tensor,
    k_w: torch.Tensor,
    k_b: torch.Tensor,
    v_w: torch.Tensor,
    v_b: torch.Tensor,
    o_w: torch.Tensor,
    o_b: torch.Tensor,
    ln2_w: torch.Tensor,
    ln2_b: torch.Tensor,
    fc_w: torch.Tensor,
    fc_b: torch.Tensor,
    proj_w: torch.Tensor,
    proj_b: torch.Tensor,
    batch: int,
    length: int,
    heads: int,
    head_dim: int,
    width: int,
    eps: float,
    causal: bool,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The same block, keeping its own key and value.

    It hands back three tensors, so the cache never leaves the region to be
    reassembled in Python; `causal` is a parameter rather than a constant, so
    one compiled function prefills a prompt and then decodes a token at a
    time out of what it built.
    """
    # A region takes every weight as a parameter of its own: that is what a
    # region is, and seventeen tensors beside six dimensions is the shape of
    # one transformer block.
    # pylint: disable=too-many-arguments,too-many-positional-arguments,too-many-locals
    h = torch.layer_norm(x, (width,), ln1_w, ln1_b, eps)
    q = F.linear(h, q_w, q_b).reshape((batch, length, heads, head_dim)).transpose(1, 2)
    k = F.linear(h, k_w, k_b).reshape((batch, length, heads, head_dim)).transpose(1, 2)
    v = F.linear(h, v_w, v_b).reshape((batch, length, heads, head_dim)).transpose(1, 2)
    k_all = torch.cat((k_cache, k), 2)
    v_all = torch.cat((v_cache, v), 2)
    a = F.scaled_dot_product_attention(q, k_all, v_all, is_causal=causal)
    merged = a.transpose(1, 2).reshape((batch, length, width))
    attended = torch.add(x, F.linear(merged, o_w, o_b))
    n = torch.layer_norm(attended, (width,), ln2_w, ln2_b, eps)
    f = F.gelu(F.linear(n, fc_w, fc_b), approximate="tanh")
    return torch.add(attended, F.linear(f, proj_w, proj_b)), k_all, v_all


@ppy.opt(3)
def step_into(
    x: torch.Tensor,
    k_cache: torch.Tensor,
    v_cache: torch.Tensor,
    ln1_w: torch.Tensor,
    ln1_b: torch.Tensor,
    q_w: torch.Tensor,
    q_b: torch.Tensor,
    k_w: torch.Tensor,
    k_b: torch.Tensor,
    v_w: torch.Tensor,
    v_b: torch.Tensor,
    o_w: torch.Tensor,
    o_b: torch.Tensor,
    ln2_w: torch.Tensor,
    ln2_b: torch.Tensor,
    fc_w: torch.Tensor,
    fc_b: torch.Tensor,
    proj_w: torch.Tensor,
    proj_b: torch.Tensor,
    batch: int,
    position: int,
    length: int,
    heads: int,
    head_dim: int,
    width: int,
    eps: float,
    causal: bool,
) -> torch.Tensor:
    """The same block over a preallocated cache: it writes its key and value into a slot.

    `torch.narrow(k_cache, 2, position, length).copy_(k)` fills the slot in
    place, so the caller's buffers are the cache and nothing is reallocated as
    it grows. That is a write through a parameter: this region cannot be
    `@ppy.pure`, and the checker says so by name if it is marked so.
    """
    # pylint: disable=too-many-arguments,too-many-positional-arguments,too-many-locals
    h = torch.layer_norm(x, (width,), ln1_w, ln1_b, eps)
    q = F.linear(h, q_w, q_b).reshape((batch, length, heads, head_dim)).transpose(1, 2)
    k = F.linear(h, k_w, k_b).reshape((batch, length, heads, head_dim)).transpose(1, 2)
    v = F.linear(h, v_w, v_b).reshape((batch, length, heads, head_dim)).transpose(1, 2)
    torch.narrow(k_cache, 2, position, length).copy_(k)
    torch.narrow(v_cache, 2, position, length).copy_(v)
    k_all = torch.narrow(k_cache, 2, 0, position + length)
    v_all = torch.narrow(v_cache, 2, 0, position + length)
    a = F.scaled_dot_product_attention(q, k_all, v_all, is_causal=causal)
    merged = a.transpose(1, 2).reshape((batch, length, width))
    attended = torch.add(x, F.linear(merged, o_w, o_b))
    n = torch.layer_norm(attended, (width,), ln2_w, ln2_b, eps)
    f = F.gelu(F.linear(n, fc_w, fc_b), approximate="tanh")
    return torch.add(attended, F.linear(f, proj_w, proj_b))


def scaled(rows: int, columns: int, spread: float, device: str) -> torch.Tensor:
    """A weight of the given shape, small enough that 48 blocks stay finite."""
    return torch.mul(torch.randn(rows, columns), spread).to(device)


class Block:  # pylint: disable=too-many-instance-attributes
    """The seventeen weights one block's region takes, in the order it takes them."""

    def __init__(self, width: int, device: str) -> None:
        inner: int = 4 * width
        spread: float = 0.02
        self.ln1_w: torch.Tensor = torch.ones(width).to(device)
        self.ln1_b: torch.Tensor = torch.zeros(width).to(device)
        self.q_w: torch.Tensor = scaled(width, width, spread, device)
        self.q_b: torch.Tensor = torch.zeros(width).to(device)
        self.k_w: torch.Tensor = scaled(width, width, spread, device)
        self.k_b: torch.Tensor = torch.zeros(width).to(device)
        self.v_w: torch.Tensor = scaled(width, width, spread, device)
        self.v_b: torch.Tensor = torch.zeros(width).to(device)
        self.o_w: torch.Tensor = scaled(width, width, spread, device)
        self.o_b: torch.Tensor = torch.zeros(width).to(device)
        self.ln2_w: torch.Tensor = torch.ones(width).to(device)
        self.ln2_b: torch.Tensor = torch.zeros(width).to(device)
        self.fc_w: torch.Tensor = scaled(inner, width, spread, device)
        self.fc_b: torch.Tensor = torch.zeros(inner).to(device)
        self.proj_w: torch.Tensor = scaled(width, inner, spread, device)
        self.proj_b: torch.Tensor = torch.zeros(width).to(device)


class Model:  # pylint: disable=too-many-instance-attributes
    """GPT-2's shape: embeddings, a stack of blocks, and a tied output head."""

    def __init__(self, layers: int, heads: int, head_dim: int, vocab: int, device: str) -> None:
        width: int = heads * head_dim
        self.layers: int = layers
        self.heads: int = heads
        self.head_dim: int = head_dim
        self.width: int = width
        self.vocab: int = vocab
        self.wte: torch.Tensor = scaled(vocab, width, 0.02, device)
        self.wpe: torch.Tensor = scaled(1024, width, 0.01, device)
        self.lnf_w: torch.Tensor = torch.ones(width).to(device)
        self.lnf_b: torch.Tensor = torch.zeros(width).to(device)
        self.blocks: list[Block] = [Block(width, device) for _i in range(layers)]
        #: The key and value of every layer so far, and how many tokens that is.
        self.position: int = 0
        self.ks: list[torch.Tensor] = []
        self.vs: list[torch.Tensor] = []

    def reset(self, batch: int, device: str) -> None:
        """An empty cache per layer, and the position the next token sits at."""
        self.position = 0
        empty = torch.zeros(batch, self.heads, 0, self.head_dim).to(device)
        self.ks = [empty for _i in range(self.layers)]
        self.vs = [empty for _i in range(self.layers)]

    def run(self, ids: torch.Tensor, batch: int, length: int, causal: bool) -> torch.Tensor:
        """Prefill when `length` is the prompt, one decode step when it is 1."""
        start: int = self.position
        h: torch.Tensor = torch.add(self.wte[ids], self.wpe[start : start + length])
        for index in range(self.layers):
            layer = self.blocks[index]
            h, k_all, v_all = step(
                h,
                self.ks[index],
                self.vs[index],
                layer.ln1_w,
                layer.ln1_b,
                layer.q_w,
                layer.q_b,
                layer.k_w,
                layer.k_b,
                layer.v_w,
                layer.v_b,
                layer.o_w,
                layer.o_b,
                layer.ln2_w,
                layer.ln2_b,
                layer.fc_w,
                layer.fc_b,
                layer.proj_w,
                layer.proj_b,
                batch,
                length,
                self.heads,
                self.head_dim,
                self.width,
                EPS,
                causal,
            )
            self.ks[index] = k_all
            self.vs[index] = v_all
        self.position = start + length
        normed: torch.Tensor = torch.layer_norm(h, (self.width,), self.lnf_w, self.lnf_b, EPS)
        return torch.matmul(normed, self.wte.t())

    def run_into(self, ids: torch.Tensor, batch: int, length: int, causal: bool, ks: list[torch.Tensor],
                 vs: list[torch.Tensor]) -> torch.Tensor:
        """`run`, but writing each layer's key and value into preallocated caches."""
        start: int = self.position
        h: torch.Tensor = torch.add(self.wte[ids], self.wpe[start : start + length])
        for index in range(self.layers):
            layer = self.blocks[index]
            h = step_into(
                h,
                ks[index],
                vs[index],
                layer.ln1_w,
                layer.ln1_b,
                layer.q_w,
                layer.q_b,
                layer.k_w,
                layer.k_b,
                layer.v_w,
                layer.v_b,
                layer.o_w,
                layer.o_b,
                layer.ln2_w,
                layer.ln2_b,
                layer.fc_w,
                layer.fc_b,
                layer.proj_w,
                layer.proj_b,
                batch,
                start,
                length,
                self.heads,
                self.head_dim,
                self.width,
                EPS,
                causal,
            )
        self.position = start + length
        normed: torch.Tensor = torch.layer_norm(h, (self.width,), self.lnf_w, self.lnf_b, EPS)
        return torch.matmul(normed, self.wte.t())

    def slots(self, batch: int, capacity: int, device: str) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
        """Preallocated key and value caches for `run_into`, one pair per layer."""
        self.position = 0
        shape = (batch, self.heads, capacity, self.head_dim)
        return (
            [torch.zeros(shape).to(device) for _i in range(self.layers)],
            [torch.zeros(shape).to(device) for _i in range(self.layers)],
        )

    def forward(self, ids: torch.Tensor, batch: int, length: int) -> torch.Tensor:
        """Logits for every position, the way the reference implementation computes them."""
        h: torch.Tensor = torch.add(self.wte[ids], self.wpe[0:length])
        for layer in self.blocks:
            h = block(
                h,
                layer.ln1_w,
                layer.ln1_b,
                layer.q_w,
                layer.q_b,
                layer.k_w,
                layer.k_b,
                layer.v_w,
                layer.v_b,
                layer.o_w,
                layer.o_b,
                layer.ln2_w,
                layer.ln2_b,
                layer.fc_w,
                layer.fc_b,
                layer.proj_w,
                layer.proj_b,
                batch,
                length,
                self.heads,
                self.head_dim,
                self.width,
                EPS,
            )
        normed: torch.Tensor = torch.layer_norm(h, (self.width,), self.lnf_w, self.lnf_b, EPS)
        return torch.matmul(normed, self.wte.t())


# What `pytest --ppy-verify` checks each region on, on each device: a prompt, then one token on a filled cache.
_HEADS, _HEAD_DIM = 2, 8
_WIDTH = _HEADS * _HEAD_DIM


def _weights(device: str) -> list[torch.Tensor]:
    torch.manual_seed(0)
    return list(vars(Block(_WIDTH, device)).values())  # assigned in the order the regions take them


@block.samples
def _(device: str) -> Iterator[tuple[object, ...]]:
    yield (torch.randn(1, 5, _WIDTH, device=device), *_weights(device), 1, 5, _HEADS, _HEAD_DIM, _WIDTH, EPS)


@step.samples
def _(device: str) -> Iterator[tuple[object, ...]]:
    empty = torch.zeros(1, _HEADS, 0, _HEAD_DIM, device=device)
    yield (torch.randn(1, 5, _WIDTH, device=device), empty, empty, *_weights(device), 1, 5, _HEADS, _HEAD_DIM, _WIDTH,
           EPS, True)
    cached = torch.randn(1, _HEADS, 5, _HEAD_DIM, device=device)
    yield (torch.randn(1, 1, _WIDTH, device=device), cached, torch.randn_like(cached), *_weights(device), 1, 1, _HEADS,
           _HEAD_DIM, _WIDTH, EPS, False)


@step_into.samples
def _(device: str) -> Iterator[tuple[object, ...]]:
    for position, length, causal in ((0, 5, True), (5, 1, False)):
        cache = [torch.randn(1, _HEADS, 8, _HEAD_DIM, device=device) for _ in range(2)]
        yield (torch.randn(1, length, _WIDTH, device=device), *cache, *_weights(device), 1, position, length, _HEADS,
               _HEAD_DIM, _WIDTH, EPS, causal)


def measure(model: Model, ids: torch.Tensor, batch: int, length: int, rounds: int) -> float:
    """The best of `rounds` forward passes, in milliseconds."""
    best: float = 1e9
    for _round in range(rounds):
        if ids.is_cuda:
            torch.cuda.synchronize()
        start: float = time.perf_counter()
        model.forward(ids, batch, length)
        if ids.is_cuda:
            torch.cuda.synchronize()
        elapsed: float = (time.perf_counter() - start) * 1000.0
        best = elapsed if elapsed < best else best
    return best


def answer(logits: torch.Tensor) -> str:
    """Three aggregates: what the paths in `compare/` agree on to three decimals."""
    wide = logits.float()
    return (
        f"mean={float(wide.mean()):.3f} "
        f"absmean={float(wide.abs().mean()):.3f} "
        f"meansq={float(torch.mul(wide, wide).mean()):.3f}"
    )


def main() -> None:
    on_cuda: bool = torch.cuda.is_available()
    device: str = "cuda" if on_cuda else "cpu"
    # GPT-2 XL where there is a device for it, and a stack short enough to run
    # on a CPU in a few seconds where there is not.
    layers: int = 48 if on_cuda else 6
    heads: int = 25 if on_cuda else 12
    vocab: int = 50257 if on_cuda else 8192
    length: int = 512 if on_cuda else 128
    batch: int = 1

    print("torch", torch.__version__, "| cuda", on_cuda)
    # Build ahead of the first call, so the answer is known before anything runs.
    # (With PPY_DISABLE=1 nothing is built and the regions run as Python.)
    active = all([block.build(), step.build(), step_into.build()])
    print("# region active:", active)
    print(f"# {layers} layers, {heads} heads, width {heads * 64}, batch {batch}, length {length}")

    torch.manual_seed(0)
    model = Model(layers, heads, 64, vocab, device)
    ids = torch.remainder(torch.arange(batch * length).reshape((batch, length)), vocab).to(device)

    warm = model.forward(ids, batch, length)
    print(answer(warm))
    print(f"# forward: {measure(model, ids, batch, length, 5):.3f} ms")

    # The same weights through the cache: prefill all but the last token, then
    # take that one step incrementally. The two paths compute the same logits,
    # which is the check that the cache the region keeps is the right one.
    model.reset(batch, device)
    model.run(ids[:, 0 : length - 1], batch, length - 1, True)
    stepped = model.run(ids[:, length - 1 : length], batch, 1, False)
    whole = warm[:, length - 1 : length]
    # `allclose` takes `rtol` before `atol`, and a logit near zero fails a
    # relative test that a difference of 1e-6 has no business failing.
    matches: bool = bool(torch.allclose(stepped, whole, 1e-4, 1e-4))
    print("cached decode matches the whole forward:", matches)

    # And through caches the region writes in place.
    ks, vs = model.slots(batch, length, device)
    model.run_into(ids[:, 0 : length - 1], batch, length - 1, True, ks, vs)
    slotted = model.run_into(ids[:, length - 1 : length], batch, 1, False, ks, vs)
    print("slot-cache decode matches the whole forward:", bool(torch.allclose(slotted, whole, 1e-4, 1e-4)))


if __name__ == "__main__":
    main()
