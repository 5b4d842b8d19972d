"""One region on one device, as a pytest item: built, run on its samples, judged with the calls the tests made.

The item finds its region by site (file, qualified name, first line) among the
live region objects, so a method or a region defined inside a function is
verified like a module-level one. Its module is imported the way pytest
imports test modules (``--import-mode``), unless something imported it already.
Each item ends with a status (passed, failed, invalid, python fallback,
unverified, skipped) in its ``user_properties``, which reach the summary table
also from pytest-xdist workers.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
import warnings
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

import pytest

from ppy.decorators import Region
from ppy.pytest_settings import VERIFIER
from ppy_check.compat import add_note
from ppy_check.site import RegionSite

if TYPE_CHECKING:
    from ppy.verify_session import Record, Verifier

# Frames of these say nothing about the user's region or samples: pytest, pluggy, importlib, this file.
_INTERNAL = tuple(os.path.dirname(m.__file__ or "") + os.sep
                  for m in (pytest, sys.modules["_pytest"], sys.modules["pluggy"], importlib)) + (__file__, "<frozen")


class RegionVerificationError(Exception):
    """A finding about the region, shown as its message alone."""


class RegionItem(pytest.Item):
    def __init__(self, *, site: RegionSite, device: str, **kwargs: Any):
        super().__init__(**kwargs)
        self.site = site
        self.device = device
        self.status = "failed"
        self.add_marker(pytest.mark.ppy_region)

    @property
    def region_name(self) -> str:
        """``path::qualname``: the node id without the device."""
        return self.nodeid.rsplit("[", 1)[0]

    def describe(self, detail: str) -> str:
        return f"region `{self.site.qualname}` on {self.device}: {detail}"

    def runtest(self) -> None:
        verifier = self.config.stash[VERIFIER]
        record = verifier.record(self.site, self.device)
        try:
            self._verify(verifier, record)
        finally:
            self.user_properties.extend(verifier.properties(self, record))

    def _verify(self, verifier: Verifier, record: Record) -> None:
        import torch

        from ppy.decorators import disabled

        if self.device == "cuda" and not torch.cuda.is_available():
            self.status = "skipped"
            pytest.skip("CUDA is not available on this machine")
        if disabled():
            self.status = "skipped"
            pytest.skip("PPY_DISABLE=1: every region runs as Python")
        region = self._live_region()
        if region is not None:
            self._build(region)
            self._run_samples(verifier, record, region)
        if record.failures:
            raise RegionVerificationError("\n".join(record.failures))
        if record.calls == 0 and record.unchecked:
            # Called, but no call compared a value: passing would claim a check that was never made.
            raise RegionVerificationError(self.describe(f"no value was compared: {record.nothing_compared()}"))
        if record.calls == 0:
            self.status = "unverified"
            if region is None:
                enclosing = self.site.qualname.rpartition(".<locals>.")[0]
                reason = f"it never came to exist: `{enclosing}` never ran" if enclosing else "its definition never ran"
            elif record.unobserved:
                reason = "no samples, and the session called it only in tests marked ppy_unobserved"
            else:
                reason = "no samples, and the session never called it"
            message = self.describe(f"unverified ({reason})")
            if verifier.settings.strict:
                raise RegionVerificationError(message + "; --ppy-verify-strict")
            pytest.skip(message)
        self.status = "passed"

    def _live_region(self) -> Region[Any, Any] | None:
        """The region object defined at this site, once its module ran; None when it never came to exist."""
        from ppy.decorators import live_regions

        self._import()
        found = [r for r in live_regions(str(self.path))
                 if (r.site.qualname, r.site.line) == (self.site.qualname, self.site.line)]
        return found[0] if found else None

    def _import(self) -> ModuleType:
        from _pytest.pathlib import import_path

        wanted = os.path.realpath(self.path)
        for module in list(sys.modules.values()):
            file = getattr(module, "__file__", None)
            if file and os.path.basename(file) == self.path.name and os.path.realpath(file) == wanted:
                return module
        return import_path(self.path, mode=self.config.getoption("importmode"), root=self.config.rootpath,
                           consider_namespace_packages=self.config.getini("consider_namespace_packages"))

    def _build(self, region: Region[Any, Any]) -> None:
        from ppy.errors import BuildError, RegionError
        from ppy.runtime import RegionFallbackWarning

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", RegionFallbackWarning)
            try:
                compiled = region.build()
            except RegionError:
                self.status = "invalid"
                raise
            except BuildError as error:  # PPY_STRICT=1
                self.status = "python fallback"
                raise RegionVerificationError(self.describe(f"did not compile: {error}")) from None
        if not compiled:
            self.status = "python fallback"
            reasons = [str(w.message) for w in caught if issubclass(w.category, RegionFallbackWarning)]
            raise RegionVerificationError(self.describe(
                "did not compile; it runs as Python" + (f"\n  {reasons[0]}" if reasons else " (see the warnings)")))

    def _run_samples(self, verifier: Verifier, record: Record, region: Region[Any, Any]) -> None:
        from ppy.decorators import Call

        try:
            calls: list[Call] = region.sample_calls(self.device)
        except Exception as error:
            add_note(error, self.describe("producing its samples raised this"))
            raise
        signature = inspect.signature(region.python)
        for index, call in enumerate(calls):
            source = f"sample {index}"
            try:
                signature.bind(*call.args, **call.kwargs)
            except TypeError as error:  # Python's message names the argument
                record.failures.append(self.describe(f"{source}: {error}"))
                continue
            verifier.check(record, region, call, self.device, self.device, source, must_run=True)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        from ppy.errors import RegionError

        if isinstance(excinfo.value, (RegionVerificationError, RegionError)):
            return str(excinfo.value)
        # Anything else came from the user's module or samples (or ppy): show those frames only.
        excinfo.traceback = excinfo.traceback.filter(lambda entry: not str(entry.path).startswith(_INTERNAL))
        return super().repr_failure(excinfo, style="short")

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, self.site.line - 1, f"ppy region {self.site.qualname} [{self.device}]"
