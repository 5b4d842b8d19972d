"""The shipped ``opdata.json`` read entry by entry: a check touches a few dozen of its thousands of ops.

``gen_opdata.render`` writes one entry a line inside each section (``"natives"``,
``"functions"``, ...) and each top-level scalar on a line of its own, so an entry
is found by its quoted name at a line start within its section and only that
line is decoded. The text is JSON throughout, so the whole file still parses as
it always did (``OpData.raw``); tests/torch_only/test_opdata.py checks every entry read this
way equals the whole parse.
"""

from __future__ import annotations

import json
from typing import Any

_ENTRY_INDENT = "\n    "
_SECTION_INDENT = "\n  "


class OpDataLines:
    """Sections and top-level values of a file laid out as ``gen_opdata.render`` lays it out."""

    @staticmethod
    def laid_out(text: str) -> bool:
        """Whether ``text`` has render's layout, each section's first entry whole on its line (a file rewritten
        some other way is parsed whole instead)."""
        if not text.startswith('{\n  "format": '):
            return False
        for section in ("natives", "functions", "methods"):
            opening = f'{_SECTION_INDENT}"{section}": {{{_ENTRY_INDENT}'
            at = text.find(opening)
            if at < 0:
                return False
            line = text[at + len(opening) - len(_ENTRY_INDENT) + 1:text.find("\n", at + len(opening))]
            try:
                json.loads("{" + line.removesuffix(",") + "}")
            except ValueError:
                return False
        return True

    def __init__(self, text: str):
        self.text = text
        self._bounds: dict[str, tuple[int, int]] = {}
        self._entries: dict[tuple[str, str], Any] = {}

    def _section(self, section: str) -> tuple[int, int]:
        bounds = self._bounds.get(section)
        if bounds is None:
            opening = f"{_SECTION_INDENT}{json.dumps(section)}: {{"
            start = self.text.find(opening)
            if start < 0:
                bounds = (0, 0)
            else:
                start += len(opening)
                bounds = (start, self.text.index(f"{_SECTION_INDENT}}}", start))
            self._bounds[section] = bounds
        return bounds

    def entry(self, section: str, name: str) -> Any:
        """The decoded value of ``name`` in ``section``, or None where the section lacks it."""
        key = (section, name)
        if key in self._entries:
            return self._entries[key]
        start, end = self._section(section)
        prefix = f"{_ENTRY_INDENT}{json.dumps(name)}: "
        at = self.text.find(prefix, start, end)
        value = None
        if at >= 0:
            begin = at + len(prefix)
            stop = self.text.find("\n", begin, end + 1)
            value = json.loads(self.text[begin:stop].removesuffix(","))
        self._entries[key] = value
        return value

    def has(self, section: str, name: str) -> bool:
        return self.entry(section, name) is not None

    def value(self, name: str, default: Any = None) -> Any:
        """A top-level value written on a line of its own (``"torch_version"``, ``"bindings"``)."""
        prefix = f"{_SECTION_INDENT}{json.dumps(name)}: "
        at = self.text.find(prefix)
        if at < 0:
            return default
        begin = at + len(prefix)
        return json.loads(self.text[begin:self.text.index("\n", begin)].removesuffix(","))

    def decoded(self) -> dict[str, Any]:
        whole: dict[str, Any] = json.loads(self.text)
        return whole


class DecodedOpData:
    """The same questions asked of op data already decoded (the probe's, a test's edited copy)."""

    def __init__(self, raw: dict[str, Any]):
        self.raw = raw

    def entry(self, section: str, name: str) -> Any:
        return self.raw.get(section, {}).get(name)

    def has(self, section: str, name: str) -> bool:
        return name in self.raw.get(section, {})

    def value(self, name: str, default: Any = None) -> Any:
        return self.raw.get(name, default)

    def decoded(self) -> dict[str, Any]:
        return self.raw


OpDataSource = OpDataLines | DecodedOpData
