"""The held-out first-write corpus (tests/corpus_heldout/, issue #23's measure): real functions of projects
no other test saw, checked, built and verified as first written.

For each function: ppy-check's engine runs on its file. A function it passes
must build and match its Python body on every sample, values and gradients:
never a wrong answer. A function it refuses must be refused well: every
finding carries a rule code and names the function.

Strict both ways: KNOWN_GAPS lists the first-write functions that do not work
as written today (ppy-check refuses them), each strictly expected to still
fail, so that a feature that lands shows here (delete its entry) and a
function that used to work and stops fails. A function ppy-check passes that
does not build or does not match is a ppy bug, never a gap: KNOWN_BUGS, also
strictly expected to fail, with what goes wrong. The functions that loop, or
branch or assert on tensor values by design (each module's ``KIND``) must be
refused as ``ppy-loop`` or ``ppy-branch``.

``bench/first_write.py --corpus heldout`` counts the same verdicts as the
held-out first-try rate; ``test_first_try_rate`` prints it (``-s``) and holds
its floor. One build per corpus file, through the session cache.
"""

from __future__ import annotations

import os
import subprocess
import sys
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from first_write import BY_DESIGN_CODES, Entry, corpus_files, judge_corpus_file  # noqa: E402
from judge import check_file  # noqa: E402
from ppy_check.messages import ALL_CODES  # noqa: E402
from tests.support.first_write_checks import hold, param  # noqa: E402

CORPUS = "heldout"
FOLDER = ROOT / "tests" / "corpus_heldout"

# First-write functions that do not work as written today (file.function), and what stops them, as ppy-check says
# it (its first two findings). Delete an entry when its feature lands. By cause, on the corpus's first run (a
# function can have several): 30 branch on a host value (`if` or a conditional expression on an int, bool, str or
# Optional parameter, a shape, a dtype: `if padding > 0`, `if xywh`), 14 of them with nothing else in the way; 6
# assert on one (`assert dim % 2 == 0`), 4 with nothing else; 6 raise a checked error (kornia's isinstance and shape
# checks, torchmetrics' `_check_same_shape`); 6 take a parameter no region could then (List[int], Sequence[...],
# torch.Size, **kwargs; the Sequence and torch.Size ones now work); a few use what has no region form (a dict of
# lambdas, `torch.no_grad()`, a function's attribute, numpy, `torch.tensor` of a parameter).
KNOWN_GAPS: dict[str, str] = {
    'audio.sinusoids': 'ppy-branch `assert channels % 2 == 0` is a branch; ppy-unsupported `np.log` has no ATen '
                       'lowering (`numpy` is not torch) (+1 more)',
    'audio.log_mel_spectrogram': 'ppy-branch `if` on `padding > 0` is a branch',
    'audio.qkv_attention': 'ppy-branch `if` on `mask is not None` is a branch on whether `mask` is None, which '
                           '`torch.where` cannot choose',
    'audio.pad_or_trim': 'ppy-branch `if` on `torch.is_tensor(array)` is a branch; ppy-unsupported `torch.is_tensor`'
                         " has no ATen lowering (it asks about a Python object's type) (+5 more)",
    'audio.pad1d': 'ppy-branch `assert padding_left >= 0 and padding_right >= 0` is a branch; ppy-branch `and` in '
                   '`padding_left >= 0 and padding_right >= 0` short-circuits, which is a branch (+2 more)',
    'detectron2.point_sample': 'ppy-untyped `**kwargs` is not allowed; ppy-branch `if` on `point_coords.dim() == 3` '
                               'is a branch (+2 more)',
    'fairseq.label_smoothed_nll_loss': 'ppy-branch `if` on `target.dim() == lprobs.dim() - 1` is a branch; ppy-'
                                       'branch `if` on `ignore_index is not None` is a branch on whether '
                                       '`ignore_index` is None, which `torch.where` cannot choose (+1 more)',
    'fairseq.gelu_accurate': "ppy-branch `if` on `not hasattr(gelu_accurate, '_a')` is a branch; ppy-unsupported "
                             '`hasattr` has no ATen lowering (a Python builtin, which runs in the interpreter) (+2 '
                             'more)',
    'fairseq.get_embedding': 'ppy-branch `if` on `embedding_dim % 2 == 1` is a branch; ppy-branch `if` on '
                             '`padding_idx is not None` is a branch on whether `padding_idx` is None, which '
                             '`torch.where` cannot choose',
    'fairseq.softmax': 'ppy-branch `if` on `onnx_trace` is a branch',
    'flux_moe.load_balancing_loss_func': 'ppy-branch `if` on `expert_indices.dtype != torch.int64` is a branch; ppy-'
                                         'branch `if` on `len(expert_indices.shape) == 2` is a branch',
    'kornia.rgb_to_grayscale': 'ppy-branch `if` on `not isinstance(x, Tensor)` is a branch; ppy-unsupported '
                               '`isinstance` has no ATen lowering (a Python builtin, which runs in the interpreter) '
                               '(in `KORNIA_CHECK_IS_TENSOR`, called at line 63) (+13 more)',
    'kornia.total_variation': 'ppy-branch `if` on `not isinstance(x, Tensor)` is a branch; ppy-unsupported '
                              '`isinstance` has no ATen lowering (a Python builtin, which runs in the interpreter) '
                              '(in `KORNIA_CHECK_IS_TENSOR`, called at line 189) (+18 more)',
    'kornia.create_meshgrid': 'ppy-branch `if` on `normalized_coordinates` is a branch',
    'metrics._mean_squared_error_update': 'ppy-branch `if` on `preds.shape != target.shape` is a branch; ppy-branch '
                                          "`raise RuntimeError(f'Predictions and targets are expe...` is a branch) "
                                          '(+3 more)',
    'metrics._cosine_similarity_compute': "ppy-unsupported `{'sum': torch.sum, 'mean': torch.mean, 'none': lambda x:"
                                          ' ...` has no ATen lowering (a dict has no region type); ppy-syntax a '
                                          '`lambda` cannot appear in a region',
    'metrics._binary_stat_scores_update': "ppy-branch conditional expression on `multidim_average == 'global'` is a "
                                          'branch',
    'metrics._safe_divide': 'ppy-branch conditional expression on `num.is_floating_point()` is a branch; ppy-branch '
                            'conditional expression on `denom.is_floating_point()` is a branch (+1 more)',
    'metrics._psnr_compute': 'ppy-unsupported `tensor` has no ATen lowering (`torch.tensor` is not a torch operator '
                             'with a C++ API)',
    'sam.batched_mask_to_box': 'ppy-branch `if` on `torch.numel(masks) == 0` is a branch; ppy-branch `if` on '
                               '`len(shape) > 2` is a branch (+1 more)',
    'sam.uncrop_boxes_xyxy': 'ppy-untyped parameter `crop_box` is annotated `List[int]`, which a region cannot take '
                             '(lists are mutable; annotate `tuple[int, ...]` or `Sequence[int]`); ppy-branch `if` on '
                             '`len(boxes.shape) == 3` is a branch',
    'sam.uncrop_points': 'ppy-untyped parameter `crop_box` is annotated `List[int]`, which a region cannot take '
                         '(lists are mutable; annotate `tuple[int, ...]` or `Sequence[int]`); ppy-branch `if` on '
                         '`len(points.shape) == 3` is a branch',
    'sam.is_box_near_crop_edge': 'ppy-untyped parameter `crop_box` is annotated `List[int]`, which a region cannot '
                                 'take (lists are mutable; annotate `tuple[int, ...]` or `Sequence[int]`); ppy-untyped '
                                 'parameter `orig_box` is annotated '
                                 '`List[int]`, which a region cannot take (lists are mutable; annotate `tuple[int, ...]` or '
                                 '`Sequence[int]`)',
    'sam.get_rel_pos': 'ppy-branch `if` on `rel_pos.shape[0] != max_rel_dist` is a branch',
    'sam.add_decomposed_rel_pos': 'ppy-branch `if` on `rel_pos.shape[0] != max_rel_dist` is a branch',
    'sequence.fftconv': 'ppy-branch `if` on `len(u.shape) > 3` is a branch',
    'sequence.gen_slopes': 'ppy-branch `if` on `_n_heads != n_heads` is a branch; ppy-branch `if` on `return_1d` is '
                           'a branch',
    'sequence.build_alibi_bias': 'ppy-branch `if` on `_n_heads != n_heads` is a branch; ppy-branch `if` on '
                                 '`full` is a branch',
    'yolo.xywh2xyxy': 'ppy-branch conditional expression on `isinstance(x, torch.Tensor)` is a branch; ppy-'
                      'unsupported `isinstance` has no ATen lowering (a Python builtin, which runs in the '
                      'interpreter)',
    'yolo.bbox_iou': 'ppy-branch `if` on `xywh` is a branch; ppy-branch `if` on `CIoU or DIoU or GIoU` is a branch '
                     '(+6 more)',
    'yolo.dist2bbox': 'ppy-branch `if` on `xywh` is a branch',
}
# Functions ppy-check passes that do not build or do not match today: ppy bugs, with what goes wrong.
KNOWN_BUGS: dict[str, str] = {}
# The first-try rate measured when the corpus was first run (the functions frozen before that run).
RATE_FLOOR = 31 / 62  # 2026-12-02: 29 of 62 work as first written (22 before checks compiled); 31 with torch.Size and
# Sequence[...] parameters; no wrong answer


def _functions() -> list[tuple[str, str]]:
    return [(path.stem, name) for path in corpus_files(CORPUS) for name in check_file(path)[0]]


def _param(file: str, name: str) -> object:
    return param(file, name, KNOWN_GAPS, KNOWN_BUGS, "gap")


@cache
def _judged(file: str) -> dict[str, Entry]:
    return {entry.name: entry for entry in judge_corpus_file(FOLDER / f"{file}.py")}


@pytest.mark.parametrize(("file", "name"), [_param(*f) for f in _functions()])
def test_heldout_function(file: str, name: str) -> None:
    hold(_judged(file)[name], BY_DESIGN_CODES, ALL_CODES)


def test_lists_name_heldout_functions() -> None:
    """KNOWN_GAPS and KNOWN_BUGS name first-write functions of the corpus, each in one list."""
    functions = {f"{file}.{name}" for file, name in _functions()}
    assert set(KNOWN_GAPS) <= functions and set(KNOWN_BUGS) <= functions
    assert not set(KNOWN_GAPS) & set(KNOWN_BUGS)


def test_first_try_rate() -> None:
    """The share of first-write functions that pass ppy-check, build and match as written, printed; never
    below the floor, and never a wrong answer."""
    entries = [entry for file in sorted({f for f, _ in _functions()}) for entry in _judged(file).values()]
    first = [e for e in entries if not e.by_design]
    matched = [e for e in first if e.verdict.status == "matched"]
    wrong = [e.key for e in first if e.verdict.status == "wrong"]
    rate = len(matched) / len(first)
    print(f"held-out corpus: {len(matched)} of {len(first)} first-write functions work as first written "
          f"({rate:.0%}); {len(entries) - len(first)} by design")
    assert not set(wrong) - set(KNOWN_BUGS), f"wrong answers: {wrong}"
    assert rate >= RATE_FLOOR


def test_heldout_runs_as_python() -> None:
    """Every function is valid eager code: with ppy switched off, each runs on each of its samples (at least one)."""
    script = (
        "import importlib, sys\n"
        "sys.path.insert(0, 'tests')\n"
        "import ppy, torch\n"
        "from first_write import corpus_files\n"
        "count = 0\n"
        f"for path in corpus_files({CORPUS!r}):\n"
        "    module = importlib.import_module(f'corpus_heldout.{path.stem}')\n"
        "    for region in ppy.decorators.live_regions(str(path)):\n"
        "        torch.manual_seed(0)\n"
        "        calls = region.sample_calls('cpu')\n"
        "        assert calls, f'{path.stem}.{region.__name__} has no samples'\n"
        "        for call in calls:\n"
        "            region(*call.args, **call.kwargs)\n"
        "        count += 1\n"
        "print(count)\n"
    )
    env = {**os.environ, "PPY_DISABLE": "1", "PYTHONPATH": str(ROOT / "bench")}
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    assert int(result.stdout.split()[-1]) == len(_functions())
