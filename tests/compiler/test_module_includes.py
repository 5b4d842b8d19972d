"""A module compiled without the precompiled header (the first build on a new machine) sees every type its calls
pass: the includes of ppy_includes.h and the op headers are enough, whatever the precompiled header adds."""

from __future__ import annotations

import shlex
import subprocess
from pathlib import Path

from ppy_compile import cpp_files
from ppy_compile.options import BuildOptions
from ppy_compile.plan import model_all
from ppy_compile.toolchain import toolchain
from ppy_compile.unit import print_region, translation_unit

# One region per way a call passes a list or an optional that the op headers only declare: tensor lists as
# ITensorListRef (cat) and as TensorList (stack), an optional Generator (bernoulli, dropout's), int and SymInt
# lists, float and Scalar lists, a tuple of bools, and lists of optional tensors (advanced indexing).
SOURCE = '''
import ppy
import torch
import torch.nn.functional as F


@ppy.opt(2)
def joined(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.cat((x, y), 0) + torch.stack([x, y]).sum(0).repeat(2, 1)


@ppy.opt(2)
def random(x: torch.Tensor, p: float) -> torch.Tensor:
    return torch.bernoulli(x.sigmoid()) * F.dropout(x, p, True)


@ppy.opt(2)
def lists(x: torch.Tensor, n: int) -> torch.Tensor:
    return F.pad(x, (1, n)).sum((0, 1), keepdim=True) + x.view(n, -1).flip([0]).mean()


@ppy.opt(2)
def quantiles(x: torch.Tensor) -> torch.Tensor:
    return torch.quantile(x.flatten(), torch.tensor([0.25, 0.5]))


@ppy.opt(2)
def gathered(x: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
    return torch.index_put(x, (rows,), torch.ones(()), accumulate=True)
'''


def test_each_unit_compiles_without_the_precompiled_header(tmp_path: Path) -> None:
    regions, errors, _, _ = model_all(SOURCE, str(tmp_path / "forms.py"))
    assert not errors and len(regions) == 5
    printed = [print_region(region, BuildOptions()) for region in regions]
    indexing = [p for p in printed if cpp_files.INDEXING in p.headers]
    plain = [p for p in printed if cpp_files.INDEXING not in p.headers]
    assert [p.region.model.name for p in indexing] == ["gathered"]  # a list of optional tensors: c10::List
    tool = toolchain()
    for group in (plain, indexing):
        unit = translation_unit(group, "forms.py", BuildOptions())
        (tmp_path / "module.cpp").write_text(unit.source, encoding="utf-8")
        cpp_files.write_into(tmp_path, unit.shipped)
        compiled = subprocess.run([*shlex.split(tool.cxx.replace("$$", "$")), *tool.compile_flags(0), "-fsyntax-only",
                                   str(tmp_path / "module.cpp")], capture_output=True, text=True)
        assert compiled.returncode == 0, compiled.stderr[-3000:]


# What the printer writes for the host computations torch's own Python code makes (emit.py, `Printer.host`), each
# called by name: declared by what a unit includes without the precompiled header, which declares far more.
HOST_CALLS = '''
#include "ppy_runtime.h"

void uses(at::IntArrayRef a, at::IntArrayRef b, at::ScalarType dtype) {
    (void)at::infer_size(a, b);  // torch._C._infer_size (2.11's weighted binary_cross_entropy)
    (void)c10::typeMetaToScalarType(c10::get_default_dtype());
    (void)::std::string(c10::DeviceTypeName(at::kCPU, /*lower_case=*/true));
    (void)(at::isFloatingType(dtype) && at::isComplexType(dtype) && at::isSignedType(dtype));
}
'''


def test_the_host_calls_torchs_python_code_lowers_to_are_declared_without_the_precompiled_header(
        tmp_path: Path) -> None:
    (tmp_path / "host.cpp").write_text(HOST_CALLS, encoding="utf-8")
    cpp_files.write_into(tmp_path, [cpp_files.RUNTIME])
    tool = toolchain()
    compiled = subprocess.run([*shlex.split(tool.cxx.replace("$$", "$")), *tool.compile_flags(0), "-fsyntax-only",
                               str(tmp_path / "host.cpp")], capture_output=True, text=True)
    assert compiled.returncode == 0, compiled.stderr[-3000:]
