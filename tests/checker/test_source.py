"""The one source reader (ppy_check/source.py): the text Python reads from a file's bytes, and caches by content.

Every part of ppy reads region and helper files through it, so each tricky
file here is held to what Python itself reads: ``tokenize.open`` for the text,
``compile`` of the bytes for the syntax tree (string constants included), and
Python's refusal where it refuses.
"""

from __future__ import annotations

import ast
import os
import tokenize
from pathlib import Path

import pytest

from ppy_check.imports import load_file, load_module, one_read
from ppy_check.source import ByContent, Source, SourceError, decode, python_lines, read_bytes, read_source

# name -> bytes; each is valid Python once decoded as Python decodes it.
READABLE = {
    "utf8": "x = 'caf\u00e9'\n".encode("utf-8"),
    "bom": b"\xef\xbb\xbfimport ppy\nx = '\xc3\xa9'\n",
    "bom_and_utf8_cookie": b"\xef\xbb\xbf# -*- coding: utf-8 -*-\nx = '\xc3\xa9'\n",
    "latin1_cookie_line_1": b"# -*- coding: latin-1 -*-\nx = '\xc3\xa9'\n",
    "cookie_line_2_after_shebang": b"#!/usr/bin/env python\n# coding=iso-8859-15\nx = '\xa4'\n",
    "cookie_line_2_after_blank": b"\n# coding: latin-1\nx = '\xe9'\n",
    "vim_cookie": b"# vim: set fileencoding=cp1252 :\nx = '\x80'\n",
    "crlf_latin1": b"# coding: latin-1\r\nx = '\xe9'\r\ny = 2\r\n",
    "lone_cr": b"x = 1\ry = 2\r",
    "form_feed": b"x = 1\n\x0c\ny = 2\n",
    "line_separator_in_a_string": "x = 'a\u2028b'\ny = 2\n".encode("utf-8"),
    "cookie_on_line_3_ignored": b"# one\n# two\n# coding: latin-1\nx = 'caf\xc3\xa9'\n",
}
# name -> (bytes, the line and column of the SourceError, a part of its message)
REFUSED = {
    "bom_with_latin1_cookie": (b"\xef\xbb\xbf# coding: latin-1\nx = 1\n", 1, 1, "byte-order mark"),
    "unknown_encoding": (b"# coding: no-such-codec\nx = 1\n", 1, 1, "`no-such-codec`"),
    "unknown_encoding_line_2": (b"#!/usr/bin/env python\n# coding: nope\nx = 1\n", 2, 1, "`nope`"),
    "not_ascii_compatible": (b"# coding: utf-16\nx = 1\n", 1, 1, "`utf-16` is not ASCII-compatible"),
    "bad_utf8_first_line": (b"x = '\xff'\n", 1, 6, "byte 0xff is not UTF-8"),
    "bad_utf8_line_3": (b"x = 1\ny = 2\nz = '\xc3\xa9\xe9'\n", 3, 7, "byte 0xe9 is not UTF-8"),
    "cookie_after_code_ignored": (b"x = 1\n# coding: latin-1\ny = '\xe9'\n", 3, 6, "byte 0xe9 is not UTF-8"),
    "bad_latin_bytes_in_ascii": (b"# coding: ascii\nx = '\xe9'\n", 2, 6, "byte 0xe9 is not ascii"),
}


def _python_text(path: Path) -> str:
    with tokenize.open(path) as opened:
        return opened.read()


@pytest.mark.parametrize("name", sorted(READABLE))
def test_the_reader_reads_what_python_reads(tmp_path: Path, name: str) -> None:
    path = tmp_path / f"{name}.py"
    path.write_bytes(READABLE[name])
    source = read_source(path)
    assert source.text == _python_text(path)
    assert source.data == READABLE[name]
    # The same tree Python compiles from the bytes: the string constants are Python's.
    assert ast.dump(ast.parse(source.text)) == ast.dump(compile(READABLE[name], str(path), "exec", ast.PyCF_ONLY_AST))


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_bytes_python_refuses_are_a_finding_at_their_place(tmp_path: Path, name: str) -> None:
    data, line, column, words = REFUSED[name]
    with pytest.raises(SyntaxError):
        compile(data, "refused.py", "exec")  # Python's import fails on these bytes too
    path = tmp_path / f"{name}.py"
    path.write_bytes(data)
    with pytest.raises(SourceError) as raised:
        read_source(path)
    error = raised.value
    assert (error.path, error.line, error.column) == (str(path), line, column)
    assert words in error.message and "coding" in error.message  # and it says what to write instead
    finding = error.diagnostic()
    assert (finding.code, finding.line, finding.column, finding.region) == ("ppy-syntax", line, column, "")


def test_the_digest_is_of_the_bytes_the_text_came_from(tmp_path: Path) -> None:
    import hashlib

    data = READABLE["crlf_latin1"]
    path = tmp_path / "m.py"
    path.write_bytes(data)
    source = read_source(path)
    assert source.digest == hashlib.sha256(data).hexdigest() and source.encoding == "iso-8859-1"


def test_only_regular_files_are_read(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.py")  # opening it to read would block until a writer came
    with pytest.raises(OSError, match="not a regular file"):
        read_bytes(tmp_path / "pipe.py")
    with pytest.raises(OSError):
        read_bytes(tmp_path)


@pytest.mark.parametrize("name", ["form_feed", "line_separator_in_a_string", "crlf_latin1", "lone_cr"])
@pytest.mark.parametrize("read", [True, False], ids=["read", "as-given"])
def test_lines_are_numbered_as_python_numbers_them(name: str, read: bool) -> None:
    """Whether the text came through the reader or was handed to the checker as it is (its newlines untouched)."""
    text = decode(READABLE[name]).text if read else READABLE[name].decode("latin-1")
    lines = python_lines(text)
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            line = lines[node.lineno - 1].encode("utf-8")
            assert line[node.col_offset:node.end_col_offset].decode("utf-8") == node.id


def _rewrite_keeping_stat(path: Path, text: str) -> None:
    """Rewrite to the same size with the modification time put back, as `touch -d`, a checkout or a restore do."""
    before = path.stat()
    assert len(text.encode()) == before.st_size
    path.write_text(text, encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))


def test_what_a_file_derives_is_kept_by_its_content_not_its_stat(tmp_path: Path) -> None:
    path = tmp_path / "m.py"
    path.write_text("x = 1\n", encoding="utf-8")
    derived: list[str] = []

    def derive(source: Source) -> str:
        derived.append(source.text)
        return source.text

    cache = ByContent(derive)
    assert cache.get(str(path)) == "x = 1\n" and cache.get(str(path)) == "x = 1\n" and len(derived) == 1
    _rewrite_keeping_stat(path, "x = 2\n")
    assert cache.get(str(path)) == "x = 2\n" and len(derived) == 2


HELPER = "import torch\n\n\ndef scale(x, by):\n    return x * by\n"


def _returned(path: Path) -> str:
    module = load_module(str(path))
    assert module is not None and module.tree is not None
    function = module.tree.body[-1]
    assert isinstance(function, ast.FunctionDef) and isinstance(function.body[-1], ast.Return)
    return ast.unparse(function.body[-1])


def test_the_builders_parse_of_a_helper_follows_an_edit_that_kept_the_stat(tmp_path: Path) -> None:
    """The issue's case: a helper rewritten to the same size with its mtime put back inlined the old text."""
    path = tmp_path / "layers.py"
    path.write_text(HELPER, encoding="utf-8")
    assert _returned(path) == "return x * by"
    _rewrite_keeping_stat(path, HELPER.replace("x * by", "x - by"))
    assert _returned(path) == "return x - by"
    found = load_file(str(path))
    assert found is not None and found.source.digest == read_source(path).digest


def test_one_build_reads_each_helper_once(tmp_path: Path) -> None:
    """Within one file's build every region sees the same read of a helper's file: the one whose digest it records."""
    path = tmp_path / "layers.py"
    path.write_text(HELPER, encoding="utf-8")
    with one_read():
        first = load_file(str(path))
        path.write_text(HELPER.replace("x * by", "x * by * 2"), encoding="utf-8")
        again = load_file(str(path))
    assert first is not None and again is first and _returned(path) == "return x * by * 2"
    assert first.source.data == HELPER.encode()
