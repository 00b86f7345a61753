"""The DSL spellings the nvcc sugar writes: a kernel's local statics (`k.var...`), the
shared entries of the trivia table (tuple keys) and the `.file` table (`source_files`)."""

from __future__ import annotations

import pytest

from ptx2py import transpile
from ptx2py.transpile.dsl import DSLError
from ptx2py.transpile.dsl.control import kernel_name
from ptx2py.transpile.dsl.trivia_table import TriviaTable

HEAD = 'from ptx2py.dsl import *  # noqa: F401,F403\n\nptx.version("9.0")\nptx.target("sm_80")\nptx.address_size(64)\n'


@pytest.mark.parametrize("spelling,local,name", [
    ("_Z17mma_pipeline_gemmILi3EEvPK6__halfS2_Pfiii", "As", "_ZZ17mma_pipeline_gemmILi3EEvPK6__halfS2_PfiiiE2As"),
    ("pipeline_primitives_copy", "buf", "_ZZ24pipeline_primitives_copyE3buf"),
    ("_ZN3cub11DeviceKernelEv", "temp_storage", "_ZZN3cub11DeviceKernelEvE12temp_storage"),
])
def test_a_kernels_local_static_is_named_by_the_cxx_mangling(spelling, local, name):
    assert kernel_name(spelling, params=0).static(local) == name


def test_k_var_declares_the_mangled_name_and_a_var_parameter_shadows_it():
    src = HEAD + ('k = kernel_name("_Z1kv", params=0)\nwith k.entry(visible=True):\n'
                  '    tile = k.var.shared.align(4).b8("tile", dims=(512,))\n    ptx.ret()\n')
    assert ".shared .align 4 .b8 _ZZ1kvE4tile[512];" in transpile.python_to_ptx(src)
    assert kernel_name("f", params="var n").var == "f_param_0"
    with pytest.raises(DSLError):
        kernel_name("f", params=0).static("not a name")


def test_trivia_keys_share_an_entry_under_a_tuple_and_a_key_given_twice_is_refused():
    table = TriviaTable({("a", "b"): {"indent": "\t"}, "c": {"lead": ""}})
    assert table.entry("a") == table.entry("b") == {"indent": "\t"} and table.entry("c") == {"lead": ""}
    with pytest.raises(DSLError, match="given twice"):
        TriviaTable({("a", "b"): {"indent": "\t"}, "b": {"lead": ""}})
    with pytest.raises(DSLError):
        TriviaTable({(1, "b"): {"indent": "\t"}})


def test_source_files_records_one_file_directive_each_from_first():
    src = HEAD + ('with ptx.entry("k", params=[], visible=True):\n    ptx.ret()\n'
                  'source_files("/x/a.cu", "/x/b.h", first=3)\n')
    assert transpile.python_to_ptx(src).endswith('.file 3 "/x/a.cu"\n.file 4 "/x/b.h"\n')
    with pytest.raises(DSLError):
        transpile.python_to_ptx(src.replace("first=3", "first=-1"))


@pytest.mark.parametrize("params,scoped", [('"a n"', True), ("3", True), ('"var n"', False), (None, True)])
def test_declarations_go_through_a_kernel_only_where_no_parameter_is_named_var(params, scoped):
    from ptx2py.sugar.demoted import _kernel
    from ptx2py.sugar.ir import Call, Kw, stmt

    items = ['"f"'] + ([] if params is None else [Kw("params", params)])
    assert (_kernel(stmt(Call("kernel_name", items), 0, "f = ")) == ("f", "f")) is scoped
