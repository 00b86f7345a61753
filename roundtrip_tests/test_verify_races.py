"""`verify --races` on broken edits: each one reported with a witness at the edited line, also
where the base's first race (a same-warp duplicate store) hides the edit's from SentryWard."""

from __future__ import annotations

import importlib.util

import pytest
from conftest import CORPUS, ROOT

from ptx2py.verify import race_report, races


def _corpus_script():
    spec = importlib.util.spec_from_file_location("races_corpus", ROOT / "scripts" / "races_corpus.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _needs_sentryward():
    if races.sentryward_available():
        pytest.skip(races.sentryward_available())


def _race(first, second):
    """A SentryWard race: each end (mode, actor, line)."""
    return {"region": {"address_space": "shared", "bytes": 4, "offset": 0},
            **{side: {"mode": m, "bytes": 4, "actor": a, "location": {"file": "/t/kernel.ptx", "line": ln, "column": 9}}
               for side, (m, a, ln) in (("first", first), ("second", second))}}


def test_one_store_per_warp_keeps_every_line_and_the_store_guard():
    ptx = "a;\n\tst.shared.b32 [%r1], %r2;\n\t@!%p3 st.shared.v2.b32 [%r4], {%r5, %r6};\r\nb;\n"
    out = races.one_store_per_warp(ptx, {2, 3})
    lines = out.splitlines(keepends=True)
    assert len(lines) == 4 and lines[0] == "a;\n" and lines[3] == "b;\n" and lines[2].endswith("}\r\n")
    assert lines[1].startswith("\t{ ") and "mov.u32 %dedup_l, %laneid;" in lines[1]
    assert "setp.eq.u32 %dedup_p, %dedup_l, 0; @%dedup_p st.shared.b32 [%r1], %r2; }" in lines[1]
    assert "setp.eq.and.u32 %dedup_p, %dedup_l, 0, !%p3; @%dedup_p st.shared.v2.b32 [%r4], {%r5, %r6}; }" in lines[2]


def test_carried_lines_follow_a_removed_line():
    assert race_report.carried_lines("a\nb\nc\nd\n", "a\nc\nd\n") == {1: 1, 3: 2, 4: 3}


def test_a_race_behind_the_bases_duplicate_store_is_found_and_brackets_the_edit(monkeypatch):
    """SentryWard stubbed: it reports the duplicate store at line 2 first while that store is
    made by every lane, then the edited kernel's write 2 / read 4 once it is made by lane 0."""
    base = "l1\n\tst.shared.b32 [%r1], %r2;\n\tbar.sync 0;\n\tld.shared.b32 %r3, [%r4];\n"
    edited = base.replace("\tbar.sync 0;\n", "")
    runs = []

    def fake(ptx, doc, timeout):
        runs.append(ptx)
        dedup = "%laneid" in ptx.splitlines()[1]
        if not dedup:
            return {"result": "potential_race", "races": [_race(("write", 0, 2), ("write", 1, 2))]}
        if "bar.sync" in ptx:
            return {"result": "race_free", "races": []}
        return {"result": "potential_race", "races": [_race(("write", 0, 2), ("read", 33, 3))]}
    monkeypatch.setattr(races, "run_sentryward", fake)
    monkeypatch.setattr(races, "input_json", lambda text, spec, cap: (
        {"launch": {"block_dim": [64, 1, 1]}}, {"grid": [[1], [1]], "values": {}, "cap": cap}))
    b = races.race_one({}, base, "k.ptx")
    assert b["verdict"] == "potential_race" and b["dedup"]["lines"] == [2] and b["dedup"]["verdict"] == "race_free"
    e = races.race_one({}, edited, "k.ptx", base={"ptx": base, "result": b})
    assert e["verdict"] == "potential_race" and e["race_counts"] is None and len(runs) == 4
    beyond = [w for w in e["witnesses"] if w.get("beyond_duplicates") and "endpoint" in w]
    # only a rewritten line has its column put back
    assert [(w["endpoint"], w["ptx_line"], w["column"]) for w in beyond] == [("first", 2, 2), ("second", 3, 9)]
    edit = [w for w in e["witnesses"] if w.get("role") == "edit"]
    assert [w["ptx_line"] for w in edit] == [3]
    assert any("the base is race_free, the edited kernel potential_race" in x for x in e["lines"])
    row = _corpus_script().summarize("k.ptx", "removed bar.sync", 3, e, 0)
    assert row["witness_at_edit"] and "past the base's same-warp duplicate stores" in row["at_edit"]


EXPECTED_EDITS = {"removed bar.sync": 700, "removed mbarrier wait": 199, "removed MMA-completion wait": 463}


@pytest.mark.slow
def test_each_edit_kind_is_reported_with_a_witness_at_the_edited_line():
    """matmul_tma_fp16_sm100 (TMA + tcgen05, 806 lines): the bar.sync before the epilogue's TMA
    store, the first TMA-load wait and the wait after the last tcgen05.commit (before the
    accumulator is read from tensor memory), each removed."""
    _needs_sentryward()
    from ptx2py.ptxgrammar import read_ptx

    path = CORPUS / "triton" / "matmul_tma_fp16_sm100.ptx"
    text = read_ptx(str(path))
    lines = text.splitlines()
    assert lines[699].strip() == "bar.sync \t0;" and "mbarrier.try_wait" in lines[198] + lines[462]
    script = _corpus_script()
    spec = races.launch_spec(str(path))
    base = races.race_one(spec, text, "mm.ptx")
    assert base["verdict"] == "race_free"
    found = {}
    for kind, line, edited in script.edits(text):
        e = races.race_one(spec, edited, "mm.ptx", base={"ptx": text, "result": base})
        edit = [w["ptx_line"] for w in e["witnesses"] if w.get("role") == "edit"]
        found[kind] = line
        assert e["finding"] and edit == [line], (kind, e["lines"])
        if kind == "removed bar.sync":       # the race's two ends lie either side of the removed barrier
            ends = [w["ptx_line"] for w in e["witnesses"] if "endpoint" in w]
            assert e["verdict"] == "potential_race" and ends[0] < line <= ends[1], e["lines"]
        else:
            assert e["verdict"] == "invalid_lifecycle", e["lines"]
    assert found == EXPECTED_EDITS


@pytest.mark.slow
def test_a_removed_barrier_behind_a_duplicate_store_gets_its_own_witness():
    """row_reduce_fp32_sm120: every lane stores the warp's reduced value to one shared address
    (line 184), which SentryWard reports first in the base and in the edit alike; with those
    stores taken as one per warp the base is race-free and the edit's race straddles it."""
    _needs_sentryward()
    from ptx2py.ptxgrammar import read_ptx

    path = CORPUS / "triton" / "row_reduce_fp32_sm120.ptx"
    text = read_ptx(str(path))
    lines = text.splitlines(keepends=True)
    i = next(k for k, x in enumerate(lines) if x.strip() == "bar.sync \t0;")
    assert i + 1 == 185 and "st.shared" in lines[i - 1] and "ld.shared" in lines[i + 4]
    spec = races.launch_spec(str(path))
    base = races.race_one(spec, text, "rr.ptx")
    assert base["verdict"] == "potential_race" and base["classification"] == "same_warp_duplicate_store"
    assert base["dedup"]["verdict"] == "race_free" and 184 in base["dedup"]["lines"]
    e = races.race_one(spec, "".join(lines[:i] + lines[i + 1:]), "rr.ptx", base={"ptx": text, "result": base})
    assert e["verdict"] == "potential_race" and e["dedup"]["verdict"] == "potential_race"
    ends = [(w["endpoint"], w["ptx_line"]) for w in e["witnesses"] if w.get("beyond_duplicates") and "endpoint" in w]
    assert ends == [("first", 184), ("second", 188)]       # the store, and the load now one line up
    assert [w["ptx_line"] for w in e["witnesses"] if w.get("role") == "edit"] == [185]


def test_unsupported_says_what_sentryward_does_not_model_and_where():
    ptx = ("x\n\t@%p1 atom.global.gpu.acq_rel.add.u32 %r9, [%rd9], %r10;\n"
           "\t@%p2 atom.global.gpu.acq_rel.add.u32 %r1, [%rd1], %r2;\n")
    said = {"code": "atomic_add_memory_semantics_unsupported", "message": "Atomic add memory semantics are unsupported"}
    result = {"result": "unsupported", "diagnostics": [dict(said, details={"ptx_line": 3}),
                                                       dict(said, details={"ptx_line": 2})]}
    r = race_report.read_result(result, ptx, "k.ptx", None)
    assert not r["finding"] and r["lines"][-1] == (
        "  SentryWard does not model this kernel: Atomic add memory semantics are unsupported "
        "(@%p2 atom.global.gpu.acq_rel.add.u32 %r1, [%rd1], %r2; at PTX line 3); "
        "run it on the CPU engine instead: ptx2py verify --run cpu BASE EDITED")


def test_a_flat_launch_shrinks_the_per_cta_buffers_and_keeps_a_shared_one_whole():
    """rmsnorm: 4096 CTAs, one row of 2048 each; the weight vector (2048) is read by every CTA,
    so it and the row length keep their size while the rows shrink to two CTAs' worth."""
    path = CORPUS / "triton" / "rmsnorm_fp16_b2048_w8_sm100.ptx"
    doc, shrunk = races.input_json(path.read_text(), races.launch_spec(str(path)), ctas=2)
    assert doc["launch"]["grid_dim"] == [2, 1, 1]
    assert shrunk["values"] == {"8388608": 4096}
    assert 2048 in {x["value"] for x in doc["arguments"]}
