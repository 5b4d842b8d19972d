"""ppy's dataclasses made from the precompiled table (ppy_check/records.py): this Python's table is current, each
entry is what its text compiles to, ppy's classes take it, every other class and every text the table lacks is
compiled as before."""
from __future__ import annotations

import dataclasses
import importlib
import py_compile
import subprocess
import sys
import textwrap
import types
from pathlib import Path

import pytest

from ppy_check import gen_records, records

ROOT = Path(__file__).resolve().parents[2]
TABLES = sorted((ROOT / "ppy_check").glob("_records_py*.py"))


@pytest.fixture(autouse=True)
def _table_compiled() -> None:
    """The table as an install has it, compiled to bytecode (records.py takes none it would compile at every
    start: under PYTHONDONTWRITEBYTECODE a checkout has no .pyc)."""
    table = ROOT / "ppy_check" / f"{records.TABLE_MODULE.rpartition('.')[2]}.py"
    if table.exists():
        py_compile.compile(str(table), doraise=True)


def _codes(code: types.CodeType) -> list[tuple[object, ...]]:
    """What a code object computes, nested functions included (not where it was written)."""
    found = [(code.co_name, code.co_code, code.co_names, code.co_varnames, code.co_freevars, code.co_cellvars,
              tuple(c for c in code.co_consts if not isinstance(c, types.CodeType)))]
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            found += _codes(const)
    return found


def test_this_pythons_table_holds_every_record_as_it_is_now(capsys: pytest.CaptureFixture[str]) -> None:
    """A record changed without `make records` fails here (it would only have made every start slower). The table
    is made from the standard library and ppy alone, so this holds whatever else is installed."""
    if not gen_records.TABLE.exists():
        pytest.fail(f"no {gen_records.TABLE.name} for Python {sys.version_info[0]}.{sys.version_info[1]}: "
                    "run `make records`")
    assert gen_records.main(["--check"]) == 0, capsys.readouterr().err


def test_there_is_a_table_for_each_supported_python() -> None:
    assert [table.name for table in TABLES] == [f"_records_py3{minor}.py" for minor in (10, 11, 12, 13)]


def _this_pythons_table() -> dict[str, types.FunctionType]:
    try:
        return importlib.import_module(records.TABLE_MODULE).MADE  # type: ignore[no-any-return]
    except ModuleNotFoundError:
        pytest.skip(f"no table for Python {sys.version_info[0]}.{sys.version_info[1]}")


def test_each_entry_of_this_pythons_table_is_what_its_text_compiles_to() -> None:
    for text, made in _this_pythons_table().items():
        namespace: dict[str, object] = {}
        exec(compile(text, "<string>", "exec", dont_inherit=True), {}, namespace)
        compiled = namespace["__create_fn__"]
        assert isinstance(compiled, types.FunctionType)
        assert _codes(made.__code__) == _codes(compiled.__code__), text.splitlines()[1]


TAKES_THE_TABLE = """
import dataclasses
from ppy_check import records
from ppy_check.model import ir

ours = [cls for cls in vars(ir).values() if dataclasses.is_dataclass(cls) and cls.__module__ == ir.__name__]
assert ours
print(sorted({cls.__init__.__code__.co_filename.rpartition("/")[2] for cls in ours}))


@dataclasses.dataclass(frozen=True)
class Theirs:  # this module is not ppy's: compiled from its text, as dataclasses does
    x: int


assert Theirs(1) == Theirs(1) and repr(Theirs(2)).endswith("Theirs(x=2)")
print(Theirs.__init__.__code__.co_filename)
"""


def test_ppys_records_take_the_table_and_others_are_compiled() -> None:
    """In a fresh process, as a start has it (this one's classes were made before the fixture compiled it)."""
    _this_pythons_table()
    done = subprocess.run([sys.executable, "-c", TAKES_THE_TABLE], capture_output=True, text=True, cwd=ROOT,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [str([records.TABLE_MODULE.rpartition(".")[2] + ".py"]), "<string>"]


def test_a_record_the_table_lacks_is_compiled_and_behaves_as_a_dataclass(monkeypatch: pytest.MonkeyPatch) -> None:
    """A class changed since the table was made (here, one it never saw) in one of ppy's own modules."""
    fake = types.ModuleType("ppy_check.model.not_in_the_table")
    monkeypatch.setitem(sys.modules, fake.__name__, fake)
    module = vars(fake)
    module["dataclasses"] = dataclasses
    source = textwrap.dedent("""
        @dataclasses.dataclass(frozen=True)
        class Novel:
            first_field_no_table_has: int
            second: str = "b"
    """)
    exec(compile(source, "novel.py", "exec", dont_inherit=True), module)
    assert novel_annotations_are_types(module)
    novel = module["Novel"]
    assert isinstance(novel, type)
    made = novel(1)
    assert made == novel(1, "b") and hash(made) == hash(novel(1)) and repr(made).endswith("Novel(first_field_no_table_has=1, second='b')")
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.second = "c"  # type: ignore[attr-defined]
    assert novel.__init__.__code__.co_filename == "<string>"


def novel_annotations_are_types(module: dict[str, object]) -> bool:
    """The compiled __init__ has the annotations dataclasses gave it, not strings (no future flag inherited)."""
    novel = module["Novel"]
    return novel.__init__.__annotations__["first_field_no_table_has"] is int  # type: ignore[attr-defined]


def test_a_table_record_is_frozen_equal_and_hashed_as_its_dataclass() -> None:
    from ppy_check.model.assumptions import Assumption

    fields = dataclasses.fields(Assumption)
    values = [f"v{index}" for index in range(len(fields))]
    one, two = Assumption(*values), Assumption(*values)
    assert one == two and hash(one) == hash(two) and one is not two
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(one, fields[0].name, "other")
    assert repr(one).startswith("Assumption(")


def test_a_table_without_its_bytecode_is_not_compiled_where_none_is_written(tmp_path: Path) -> None:
    code = textwrap.dedent("""
        import dataclasses, importlib.util, os, sys
        from ppy_check import records
        spec = importlib.util.find_spec(records.TABLE_MODULE)
        spec.cached = os.path.join(sys.argv[1], "absent.pyc")
        print(records._bytecode_at_hand(spec))
        sys.dont_write_bytecode = False
        print(records._bytecode_at_hand(spec))
    """)
    done = subprocess.run([sys.executable, "-B", "-c", code, str(tmp_path)], capture_output=True, text=True, cwd=ROOT,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["False", "True"]


def test_install_leaves_a_python_without_a_table_as_it_was() -> None:
    code = textwrap.dedent("""
        import dataclasses, sys
        from ppy_check import gen_records, records
        records.TABLE_MODULE = "ppy_check._records_py_none"  # no such table
        records._made = None
        from ppy_check.model import types
        cls = next(v for v in vars(types).values() if dataclasses.is_dataclass(v) and v.__module__ == types.__name__)
        print(cls.__init__.__code__.co_filename)
    """)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "<string>"
