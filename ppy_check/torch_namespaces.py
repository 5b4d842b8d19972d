"""torch's namespaces whose builtins live in a C module of their own under a prefixed name: what the op data's
generator reads schemas from and its probe wraps (a leaf both import)."""

from __future__ import annotations

# Python namespace -> (module path, C module holding its builtins, prefix of the
# native names in that C module).
PREFIXED_NAMESPACES = {
    "torch.special": ("torch.special", "torch._C._special", "special_"),
    "torch.linalg": ("torch.linalg", "torch._C._linalg", "linalg_"),
    "torch.fft": ("torch.fft", "torch._C._fft", "fft_"),
}
