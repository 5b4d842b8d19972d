"""Which files may hold a region: the test every file gets before anything is parsed.

Apart from the engine, so that a tree of files without regions (torch's own source) is read and tested without
importing the model builder at all.
"""

from __future__ import annotations

import re

# A file that never imports ppy cannot hold a region; most files stop here.
_MAY_HOLD_REGION = re.compile(rb"^[ \t]*(?:from[ \t]+ppy\b|import[ \t]+[^\n#]*\bppy\b)", re.MULTILINE)


def may_hold_region(data: bytes) -> bool:
    # Both of the pattern's forms spell `ppy`: a substring test (memchr-fast) spares most files the regex, which
    # tries every line start and was most of a check of torch's own source tree.
    return b"ppy" in data and _MAY_HOLD_REGION.search(data) is not None
