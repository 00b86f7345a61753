"""Kernel parameters named from a CUDA source whose kernels are templates in namespaces
(nvcc -G): every name c++filt demangles gives the kernel's base name, or the mangled
spelling where it names no plain function (operators, a lambda's call operator)."""

from __future__ import annotations

import shutil
import subprocess

import pytest
from conftest import CASES

from ptx2py import cli
from ptx2py.sugar.sources import _base_name

CASE = CASES / "nvcc_templates"
CU = CASE / "templates_in_namespaces.cu"
PTX = CASE / "templates_in_namespaces.G.sm_80.ptx"   # nvcc 13.0 -G -arch=sm_80 --extended-lambda -ptx


@pytest.mark.parametrize("spelling,base", [
    ("_ZN5outer5inner5scaleIfLi3EEEvPKT_PS2_i", "scale"),                  # templates in nested namespaces
    ("_ZN37_GLOBAL__N__0a4b11ea_5_ns_cu_ab0bdee210plain_anonEPf", "plain_anon"),  # (anonymous namespace)::
    ("_ZN37_GLOBAL__N__0a4b11ea_5_ns_cu_ab0bdee26hiddenILi4EEEvPf", "hidden"),
    ("_ZN5outer5inner5applyIZ6launchPfiEUlfE_EEvT_S2_i", "apply"),         # a lambda as template argument
    ("_ZN5outer8plain_nsEPf", "plain_ns"),
    ("_ZNK3VecplERKS_", "_ZNK3VecplERKS_"),                                 # Vec::operator+ const
    ("_ZNK5outer5inner2OpIfLi3EEclEff", "_ZNK5outer5inner2OpIfLi3EEclEff"),  # operator() const
    ("_ZZ6launchPfiENKUlfE_clEf", "_ZZ6launchPfiENKUlfE_clEf"),             # a lambda's operator()
    ("_Z3foov", "foo"),
    ("_Znot_a_mangling", "_Znot_a_mangling"),
])
def test_base_name_of_each_demangled_construct(spelling, base):
    assert _base_name(spelling) == base


def _sugar(ptx, source, out):
    return cli.ptx2py_main([str(ptx), "--sugar", "--source", str(source), "-o", str(out)])


def test_nvcc_G_templates_in_namespaces_get_their_source_names_and_round_trip(tmp_path):
    out = tmp_path / "k.py"
    assert _sugar(PTX, CU, out) == 0
    text = out.read_text()
    for kernel, names in [("_ZN5outer5inner5scaleIfLi3EEEvPKT_PS2_i", "x y n"),
                          ("_ZN37_GLOBAL__N__0a4b11ea_5_ns_cu_ab0bdee210plain_anonEPf", "y"),
                          ("_ZN5outer5inner5applyIZ6launchPfiEUlfE_EEvT_S2_i", "f y n")]:
        assert f'"{kernel}", params="{names}"' in text
    back = tmp_path / "k.ptx"
    assert cli.py2ptx_main([str(out), "-o", str(back)]) == 0
    assert back.read_bytes() == PTX.read_bytes()


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc builds the fresh copy")
def test_a_fresh_nvcc_G_build_sugars_without_a_traceback(tmp_path):
    cu = tmp_path / "k.cu"
    cu.write_text(CU.read_text())
    ptx = tmp_path / "k.ptx"
    subprocess.run(["nvcc", "-G", "-arch=sm_80", "--extended-lambda", "-ptx", str(cu), "-o", str(ptx)], check=True)
    assert _sugar(ptx, cu, tmp_path / "k.py") == 0
