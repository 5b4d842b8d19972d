"""The first-write corpus: model code written the way people first write it, each function a region.

Each module holds functions in the idioms of well-known projects (nanoGPT,
LLaMA, a model hub's transformers, torchvision's ops, diffusers, timm, mamba),
written for this corpus, not copied. Every function is marked ``@ppy.opt(3)``
exactly as a user would first mark it, weights and configuration turned into
parameters, and registers samples (``@fn.samples``) so that it can be verified
against its own Python body.

Each module's ``KIND`` names the functions that use loops, value branches or
asserts on purpose: ``{"name": "by-design"}``. The rules refuse those by design
(``ppy-loop``, ``ppy-branch``), and the first-write rate leaves them out. Every
other region of the module is a first write that ppy should take as it is,
whether or not it does yet: it may need a feature the compiler lacks (calling
a helper or another region, ``math.*``, ``min``/``max`` on numbers,
``F.interpolate``, einops, starred arguments...).

``tests/compiler/test_corpus.py`` checks, builds and verifies every function;
``bench/first_write.py`` counts how many work as first written, and what
stopped the others. ``pyproject.toml`` excludes this folder from the
repository's own ``ppy-check`` and ``pytest --ppy-verify`` runs: part of it is
refused on purpose.
"""

BY_DESIGN = "by-design"
