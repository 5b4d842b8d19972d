"""`pytest --ppy-verify`: every region of the project checked against its own Python body.

Registered through the ``pytest11`` entry point. Without ``--ppy-verify`` this
module adds its options and nothing else: like Hypothesis's plugin it imports
nothing heavy (no torch, no compiler) unless the flag is on. With the flag it
validates the settings (a bad value is a usage error, exit 4) and registers
the verifier (``ppy.verify_session``), which does the rest:

- ``ppy.pytest_settings``: the validated options, and the key the verifier is stashed under;
- ``ppy.verify_collect``: which files hold regions, found statically as pytest
  collects (``--ignore``, ``norecursedirs``, ``testpaths``, paths given);
- ``ppy.verify_item``: one item per region and device, run after the tests;
- ``ppy.verify_session``: the calls the tests make, and the summary table;
- ``ppy.verify``: one call compared, compiled against Python.
"""

from __future__ import annotations

import pytest

from ppy.pytest_settings import DEVICES, UNOBSERVED, VERIFIER, Settings


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("ppy", "ppy region verification")
    group.addoption("--ppy-verify", action="store_true", default=False,
                    help="check every compiled region against its Python body")
    group.addoption("--ppy-verify-strict", action="store_true", default=False,
                    help="fail regions that have no samples and were never called")
    group.addoption("--ppy-devices", default=None, metavar="cpu,cuda",
                    help="devices to verify on (default: the ppy_devices ini key, else cpu,cuda)")
    group.addoption("--ppy-tolerance-scale", default=None, metavar="FACTOR",
                    help="multiply the dtype-aware tolerances (default: the ppy_tolerance_scale ini key, else 1)")
    parser.addini("ppy_paths", "folders holding regions, collected beside testpaths when pytest is given no paths",
                  type="paths", default=[])
    parser.addini("ppy_devices", "devices to verify regions on", type="args", default=list(DEVICES))
    parser.addini("ppy_tolerance_scale", "factor on the dtype-aware tolerances", default="1.0")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "ppy_region: a region verified against its Python body (pytest --ppy-verify)")
    config.addinivalue_line("markers", f"{UNOBSERVED}: the calls this test makes of regions are not judged by "
                                       "--ppy-verify (the test checks them itself)")
    if not config.getoption("--ppy-verify"):
        return
    settings = Settings.from_config(config)
    # Imported only with --ppy-verify, for start-up speed: a plain test run loads none of the verifier.
    from ppy.verify_session import Verifier

    verifier = Verifier(config, settings)
    config.stash[VERIFIER] = verifier
    config.pluginmanager.register(verifier, "ppy-verifier")
