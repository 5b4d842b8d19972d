"""Audio models as first written: OpenAI's Whisper (sinusoidal positions, the log-Mel spectrogram,
attention's qkv step, padding or trimming audio) and Meta's EnCodec (padding and unpadding a 1-D
signal, the codebook's Laplace smoothing and its EMA).

Changed from the projects' code: ``import ppy``, ``@ppy.opt(3)`` and parameter annotations only.
Two bodies are methods or read module state in their project, turned into free functions here:
``qkv_attention`` (Whisper's ``MultiHeadAttention.qkv_attention``: ``self.n_head`` is the parameter
``n_head``) and ``log_mel_spectrogram`` (Whisper loads its Mel filterbank from a file in the package
and accepts a path or an array: ``filters`` is a parameter, and the tensor path is the one kept).

Fixed after the corpus was frozen: one of ``pad_or_trim``'s samples passed its keyword-only ``axis``
positionally (invalid in plain Python); the function itself is unchanged.
"""

from typing import Optional, Tuple

import numpy as np
import ppy
import torch
import torch.nn.functional as F

N_FFT = 400
HOP_LENGTH = 160
N_SAMPLES = 480000

KIND: dict[str, str] = {}


@ppy.opt(3)
def sinusoids(length: int, channels: int, max_timescale: int = 10000) -> torch.Tensor:
    """Returns sinusoids for positional embedding"""
    assert channels % 2 == 0
    log_timescale_increment = np.log(max_timescale) / (channels // 2 - 1)
    inv_timescales = torch.exp(-log_timescale_increment * torch.arange(channels // 2))
    scaled_time = torch.arange(length)[:, np.newaxis] * inv_timescales[np.newaxis, :]
    return torch.cat([torch.sin(scaled_time), torch.cos(scaled_time)], dim=1)


@sinusoids.samples
def _(device):
    yield 6, 8
    yield 4, 12, 500


@ppy.opt(3)
def log_mel_spectrogram(audio: torch.Tensor, filters: torch.Tensor, padding: int = 0) -> torch.Tensor:
    if padding > 0:
        audio = F.pad(audio, (0, padding))
    window = torch.hann_window(N_FFT).to(audio.device)
    stft = torch.stft(audio, N_FFT, HOP_LENGTH, window=window, return_complex=True)
    magnitudes = stft[..., :-1].abs() ** 2

    mel_spec = filters @ magnitudes

    log_spec = torch.clamp(mel_spec, min=1e-10).log10()
    log_spec = torch.maximum(log_spec, log_spec.max() - 8.0)
    log_spec = (log_spec + 4.0) / 4.0
    return log_spec


@log_mel_spectrogram.samples
def _(device):
    filters = torch.rand(8, N_FFT // 2 + 1, device=device) * 0.1
    yield torch.randn(1600, device=device) * 0.1, filters
    yield torch.randn(1200, device=device) * 0.1, filters, 400


@ppy.opt(3)
def qkv_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, n_head: int,
                  mask: Optional[torch.Tensor] = None) -> Tuple[torch.Tensor, torch.Tensor]:
    n_batch, n_ctx, n_state = q.shape
    scale = (n_state // n_head) ** -0.25
    q = q.view(*q.shape[:2], n_head, -1).permute(0, 2, 1, 3)
    k = k.view(*k.shape[:2], n_head, -1).permute(0, 2, 1, 3)
    v = v.view(*v.shape[:2], n_head, -1).permute(0, 2, 1, 3)

    qk = (q * scale) @ (k * scale).transpose(-1, -2)
    if mask is not None:
        qk = qk + mask[:n_ctx, :n_ctx]
    qk = qk.float()

    w = F.softmax(qk, dim=-1).to(q.dtype)
    out = (w @ v).permute(0, 2, 1, 3).flatten(start_dim=2)
    qk = qk.detach()
    return out, qk


@qkv_attention.samples
def _(device):
    q, k, v = (torch.randn(2, 5, 16, device=device) for _ in range(3))
    mask = torch.empty(8, 8, device=device).fill_(-np.inf).triu_(1)
    yield q, k, v, 4
    yield q, k, v, 4, mask


@ppy.opt(3)
def pad_or_trim(array: torch.Tensor, length: int = N_SAMPLES, *, axis: int = -1) -> torch.Tensor:
    """
    Pad or trim the audio array to N_SAMPLES, as expected by the encoder.
    """
    if torch.is_tensor(array):
        if array.shape[axis] > length:
            array = array.index_select(dim=axis, index=torch.arange(length, device=array.device))

        if array.shape[axis] < length:
            pad_widths = [(0, 0)] * array.ndim
            pad_widths[axis] = (0, length - array.shape[axis])
            array = F.pad(array, [pad for sizes in pad_widths[::-1] for pad in sizes])
    else:
        if array.shape[axis] > length:
            array = array.take(indices=range(length), axis=axis)

        if array.shape[axis] < length:
            pad_widths = [(0, 0)] * array.ndim
            pad_widths[axis] = (0, length - array.shape[axis])
            array = np.pad(array, pad_widths)

    return array


@pad_or_trim.samples
def _(device):
    yield torch.randn(2, 50, device=device), 40
    yield torch.randn(2, 30, device=device), 40
    yield ppy.Call(torch.randn(3, 7, device=device), 10, axis=0)


@ppy.opt(3)
def pad1d(x: torch.Tensor, paddings: Tuple[int, int], mode: str = 'constant', value: float = 0.) -> torch.Tensor:
    """Tiny wrapper around F.pad, just to allow for reflect padding on small input.
    If this is the case, we insert extra 0 padding to the right before the reflection happen.
    """
    length = x.shape[-1]
    padding_left, padding_right = paddings
    assert padding_left >= 0 and padding_right >= 0, (padding_left, padding_right)
    if mode == 'reflect':
        max_pad = max(padding_left, padding_right)
        extra_pad = 0
        if length <= max_pad:
            extra_pad = max_pad - length + 1
            x = F.pad(x, (0, extra_pad))
        padded = F.pad(x, paddings, mode, value)
        end = padded.shape[-1] - extra_pad
        return padded[..., :end]
    else:
        return F.pad(x, paddings, mode, value)


@pad1d.samples
def _(device):
    yield torch.randn(2, 3, 10, device=device), (2, 3)
    yield torch.randn(2, 3, 10, device=device), (2, 3), 'reflect'
    yield torch.randn(2, 3, 4, device=device), (5, 2), 'reflect'


@ppy.opt(3)
def unpad1d(x: torch.Tensor, paddings: Tuple[int, int]) -> torch.Tensor:
    """Remove padding from x, handling properly zero padding. Only for 1d!"""
    padding_left, padding_right = paddings
    assert padding_left >= 0 and padding_right >= 0, (padding_left, padding_right)
    assert (padding_left + padding_right) <= x.shape[-1]
    end = x.shape[-1] - padding_right
    return x[..., padding_left: end]


@unpad1d.samples
def _(device):
    yield torch.randn(2, 3, 10, device=device), (2, 3)
    yield torch.randn(2, 3, 10, device=device), (0, 0)


@ppy.opt(3)
def laplace_smoothing(x: torch.Tensor, n_categories: int, epsilon: float = 1e-5) -> torch.Tensor:
    return (x + epsilon) / (x.sum() + n_categories * epsilon)


@laplace_smoothing.samples
def _(device):
    yield torch.rand(16, device=device) * 3, 16


@ppy.opt(3)
def ema_inplace(moving_avg: torch.Tensor, new: torch.Tensor, decay: float) -> None:
    moving_avg.data.mul_(decay).add_(new, alpha=(1 - decay))


@ema_inplace.samples
def _(device):
    yield torch.randn(16, 8, device=device), torch.randn(16, 8, device=device), 0.99
