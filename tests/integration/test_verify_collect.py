"""Which regions `pytest --ppy-verify` collects, and under which node ids: collection only, nothing imported.

Regions are found where pytest looks (its arguments, else ``testpaths``) and in
``ppy_paths``, through pytest's ``--ignore``, ``--ignore-glob`` and
``norecursedirs``; the count in the header, ``-k`` and ``--co`` see them.
"""

from __future__ import annotations

import textwrap

import pytest

from tests.support.pytester_runs import run
from tests.support.region_sites import SITES

pytest_plugins = ["pytester"]

REGION = "import ppy\nimport torch\n\n\n@ppy.opt(1)\ndef {name}(x: torch.Tensor) -> torch.Tensor:\n    return x + 1\n"

NESTED = SITES + textwrap.dedent(
    '''

    FAST = True

    if FAST:
        @ppy.opt(1)
        def pick(x: torch.Tensor) -> torch.Tensor:
            return x
    else:
        @ppy.opt(1)
        def pick(x: torch.Tensor) -> torch.Tensor:
            return -x
    '''
)

# The two `pick`s are told apart by their decorator's line.
_lines = NESTED.splitlines()
PICKS = [i for i, line in enumerate(_lines, 1) if "@ppy.opt" in line and "def pick" in _lines[i]]

ALL = {
    "tests/test_a.py::test_a",
    "tests/nested.py::twice[cpu]",
    "tests/nested.py::A.twice[cpu]",
    "tests/nested.py::outer.<locals>.inner[cpu]",
    f"tests/nested.py::pick:{PICKS[0]}[cpu]",
    f"tests/nested.py::pick:{PICKS[1]}[cpu]",
    "tests/skipme/skipped.py::skipped[cpu]",
    "src/lib.py::lib[cpu]",
    "src/vendor/vendored.py::vendored[cpu]",
}


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    pytester.makepyprojecttoml(textwrap.dedent(
        '''
        [tool.pytest.ini_options]
        testpaths = ["tests"]
        ppy_paths = ["src"]
        ppy_devices = ["cpu"]

        [tool.ppy]
        exclude = ["tests/fixtures"]
        '''))
    files = {
        "tests/test_a.py": "def test_a():\n    pass\n",
        "tests/nested.py": NESTED,
        "tests/helper.py": "import ppy\n",  # may hold a region, holds none
        "tests/fixtures/broken.py": REGION.format(name="broken"),  # excluded by [tool.ppy]
        "tests/skipme/skipped.py": REGION.format(name="skipped"),
        "scripts/danger.py": REGION.format(name="danger"),  # outside testpaths
        "src/lib.py": REGION.format(name="lib"),
        "src/test_in_src.py": "def test_in_src():\n    pass\n",  # ppy_paths brings regions, not tests
        "src/vendor/vendored.py": REGION.format(name="vendored"),
    }
    for name, text in files.items():
        path = pytester.path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return pytester


def collected(project: pytest.Pytester, *args: str) -> set[str]:
    result = run(project, "--ppy-verify", "--co", "-q", *args)
    assert result.ret == pytest.ExitCode.OK, result.stdout.str() + result.stderr.str()
    return {line for line in result.stdout.lines if "::" in line}


def test_regions_are_collected_where_pytest_looks_and_in_ppy_paths(project: pytest.Pytester) -> None:
    assert collected(project) == ALL
    header = run(project, "--ppy-verify", "--co")
    header.stdout.fnmatch_lines([f"collected {len(ALL)} items"])


def test_the_count_and_k_see_region_items(project: pytest.Pytester) -> None:
    assert collected(project, "-k", "twice") == {"tests/nested.py::twice[cpu]", "tests/nested.py::A.twice[cpu]"}
    assert collected(project, "-m", "ppy_region") == ALL - {"tests/test_a.py::test_a"}


def test_ignore_ignore_glob_and_norecursedirs_are_honoured(project: pytest.Pytester) -> None:
    outside = {"tests/skipme/skipped.py::skipped[cpu]", "src/vendor/vendored.py::vendored[cpu]"}
    assert collected(project, "--ignore=tests/skipme", "--ignore-glob=*/vendor") == ALL - outside
    assert collected(project, "-o", "norecursedirs=skipme vendor") == ALL - outside


def test_paths_on_the_command_line_replace_testpaths_and_ppy_paths(project: pytest.Pytester) -> None:
    assert collected(project, "tests/nested.py") == {i for i in ALL if i.startswith("tests/nested.py")}
    assert collected(project, "tests/nested.py::A.twice[cpu]") == {"tests/nested.py::A.twice[cpu]"}
    # The rootdir given by name: the scripts folder pytest was told to skip holds no item.
    everything = collected(project, ".", "--ignore=scripts")
    assert not any(i.startswith("scripts/") for i in everything)
    assert ALL <= everything and "src/test_in_src.py::test_in_src" in everything


def test_without_the_flag_no_region_is_collected(project: pytest.Pytester) -> None:
    result = run(project, "--co", "-q")
    assert {line for line in result.stdout.lines if "::" in line} == {"tests/test_a.py::test_a"}


def test_files_are_read_as_python_reads_them(project: pytest.Pytester) -> None:
    """A file starting with a byte-order mark (whose `import ppy` the prefilter missed: its regions went unverified,
    silently) and a latin-1 file are collected; a file Python cannot decode is ppy-check's to report."""
    src = project.path / "src"
    (src / "bom.py").write_bytes(b"\xef\xbb\xbf" + REGION.format(name="bom").encode())
    (src / "latin.py").write_bytes(("# -*- coding: latin-1 -*-\n" + REGION.format(name="caf\u00e9")).encode("latin-1"))
    (src / "undecodable.py").write_bytes(b"import ppy\nx = '\xff'\n")
    assert collected(project) == ALL | {"src/bom.py::bom[cpu]", "src/latin.py::caf\u00e9[cpu]"}
