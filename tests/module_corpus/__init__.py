"""The module corpus: real nn.Module classes, as their authors wrote them, with ``@ppy.opt(3)`` on ``forward``.

Each file groups classes of one project family, written from memory of the
real projects: only ``import ppy``, the decorator, and annotations on
``forward`` (and on ``__init__`` where the original has none) are added;
branches on configuration are resolved the way the config at hand goes, with a
comment saying so. Each file's ``cases()`` returns, per class, a module factory
and an example input factory (small, CPU, seeded).

``tests/compiler/test_module_corpus.py`` checks, builds and verifies every
class; ``pyproject.toml`` excludes this folder from the repository's own
``ppy-check``, ruff and ``pytest --ppy-verify`` runs: part of it is refused.
"""
