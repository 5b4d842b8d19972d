"""The held-out first-write corpus (issue #23's measure): real functions from projects ppy's tests never saw.

Each module holds free functions of well-known projects that neither
``tests/corpus/``, ``tests/module_corpus/`` nor issue #23's own probe use
(Whisper, EnCodec, segment-anything, detectron2 and Mask2Former, YOLOv5 and
ultralytics, denoising-diffusion-pytorch and vit-pytorch, latent diffusion's
and taming-transformers' losses, torchmetrics, kornia, Hyena, RetNet, MPT's
ALiBi, fairseq, Flux, the Switch Transformer's and Mixtral's routers), written
from memory as their authors wrote them and ported the way a user first ports:
``import ppy``, ``@ppy.opt(3)`` on the function and type annotations on its
parameters, nothing else. Their asserts, checks, helper calls and idioms stay
as written. A method's body appears as a free function only where its file's
docstring says so (its ``self.x`` turned into a parameter ``x``).

The functions were committed before ppy ever ran on them, and are frozen:
a function is never edited to make it pass. The only edits allowed after that
commit fix a port that differs from its project's code (or whose Python body
fails), and each is listed in its file's docstring. Samples may be fixed where
they are invalid for the function in plain Python.

Each module's ``KIND`` names the functions that loop, or branch or assert on
tensor values, by design: ``{"name": "by-design"}``; the first-write rate
leaves those out. A branch or an assert on a host value (a flag, a string, a
shape) is a first write like any other line.

``tests/compiler/test_corpus_heldout.py`` checks, builds and verifies every
function; ``bench/first_write.py --corpus heldout`` counts how many work as
first written, and what stopped the others. ``pyproject.toml`` excludes this
folder from the repository's own ``ppy-check``, ruff and ``--ppy-verify`` runs.
"""

BY_DESIGN = "by-design"
