"""PPY_LOG=cache's reasons for a miss: told apart from what the file's last build was keyed by."""
from __future__ import annotations

import hashlib
from pathlib import Path

from ppy_compile.index import changed_dependency, why_missed


def test_a_miss_names_what_changed_since_the_last_build() -> None:
    now = {"identity": "a", "code": "b"}
    assert why_missed(None, now) == "no entry"
    assert why_missed({"identity": "other", "code": "b"}, now) == "the options or torch changed"
    assert why_missed({"identity": "a", "code": "other"}, now) == "the file changed"
    assert why_missed(dict(now), now) == "no entry"  # the same key, yet no entry: it was removed


def test_the_changed_helper_file_is_named(tmp_path: Path) -> None:
    helper = tmp_path / "helper.py"
    helper.write_text("x = 1\n")
    digest = hashlib.sha256(helper.read_bytes()).hexdigest()
    assert changed_dependency({str(helper): digest}) is None
    helper.write_text("x = 2\n")
    assert changed_dependency({str(helper): digest}) == str(helper)
    assert changed_dependency(None) == "the index entry"
