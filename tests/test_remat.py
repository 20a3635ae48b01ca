"""Rematerialisation (``fusionlab.passes.remat``): a map whose output only a later block reads
moves into that block and is recomputed there. Structure (what moves, what is contracted,
how many kernels, each refusal's reason) and values against NumPy, on the histogram
workload and on random programs with a producer map read after a barrier, some with the
map's input overwritten or freed in between (the move is then illegal)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fusionlab import parse
from fusionlab.capture import capture
from fusionlab.backend.numba.plan import plan, run_plan
from fusionlab.runtime.reference import Externals, Storage
from fusionlab.partition import partition
from fusionlab.passes.remat import CHECKS, SinkRefusal, rematerialise, sink_maps
from fusionlab.workloads import get_workload

from kernels import CHECKED as CACHE   # bounds-checked kernels: this file tests a pass, not the kernels (tests/kernels.py)

N = 5000   # above min_size: parallel kernels


def _decisions(program, blocks):
    return {d.output: d.refusal for d in rematerialise(program, blocks).decisions}


def test_histogram_numerator_is_recomputed_in_the_z_kernel():
    cap = capture(get_workload("histogram_equalize").script("tiny"), {"__name__": "__main__"})
    batch = cap.batches[1]
    blocks = partition(batch, "greedy", "bohrium").blocks
    got = rematerialise(batch, blocks)
    why = {d.output: d.refusal for d in got.decisions}
    assert why["t26"] is None                                  # values - mean: moved to z's block
    assert why["index_1"] is SinkRefusal.OUTPUT_ALIVE          # the user's name: stored anyway
    assert why["scaled_1"] is SinkRefusal.OUTPUT_ALIVE
    assert why["t21"] is SinkRefusal.INPUT_OVERWRITTEN         # astype's input freed before its reader
    assert why["t18"] is SinkRefusal.SAME_BLOCK
    assert sum(d.moved for d in got.decisions) == 1
    assert len(got.blocks) == len(blocks)                      # no block gained or lost
    assert sorted(i for b in got.blocks for i in b) == list(range(len(batch)))   # the batch's own order
    before = [b.kernel for b in plan(batch, blocks, min_size=0).blocks if b.kernel is not None]
    after = [b.kernel for b in plan(batch, got.blocks, min_size=0).blocks if b.kernel is not None]
    assert len(before) == len(after)
    writes = lambda ks, name: [k for k in ks if any(v.base.name == name for v in k.arguments)]
    assert len(writes(before, "t26")) == 2 and not any("t26" in k.contracted for k in before)
    assert writes(after, "t26") == [] and sum("t26" in k.contracted for k in after) == 1


def _program(pieces: list[str], tail: str) -> str:
    head = (f"ARRAY x float64[{N}]\nARRAY y float64[{N}]\nARRAY c float64[]\nARRAY s float64[]\n"
            f"ARRAY d float64[{N}]\nARRAY z float64[{N}]\nARRAY w float64[{N}]\n")
    return head + "\n".join(pieces) + "\n" + tail


BARRIER = "ADD_REDUCE s, x, axis=None"          # the reader needs s: another kernel
READER = "DIVIDE z, d, s\nDEL d\nSYNC z\nSYNC x\nSYNC y\nSYNC s"


def test_refusals_carry_their_reason():
    cases = {
        SinkRefusal.INPUT_OVERWRITTEN: ["SUBTRACT d, x, c", BARRIER, "MULTIPLY x, x, 2.0", READER],
        SinkRefusal.MORE_BYTES: ["SUBTRACT d, x, y", BARRIER, READER],
        SinkRefusal.PARTIAL_OUTPUT: ["COPY d, 1.0", "ADD d, d, x", BARRIER, READER],
    }
    for reason, lines in cases.items():
        p = parse(_program(lines[:-1], lines[-1]))
        blocks = [[i] for i in range(len(p))]
        assert _decisions(p, blocks)["d"] is reason, reason
    in_place = parse(_program(["MULTIPLY w, w, 2.0", BARRIER], "DIVIDE z, w, s\nDEL w\nSYNC z\nSYNC s"))
    assert _decisions(in_place, [[i] for i in range(len(in_place))])["w"] is SinkRefusal.IN_PLACE
    alive = parse(_program(["SUBTRACT d, x, c", BARRIER], "DIVIDE z, d, s\nSYNC d\nSYNC z\nSYNC s"))
    assert _decisions(alive, [[i] for i in range(len(alive))])["d"] is SinkRefusal.OUTPUT_ALIVE
    legal = parse(_program(["SUBTRACT d, x, c", BARRIER], READER))
    assert _decisions(legal, [[0, 1], list(range(2, len(legal)))])["d"] is None
    # the same move into a block of another shape is refused, not attempted
    other = parse(f"ARRAY x float64[{N}]\nARRAY d float64[{N}]\nARRAY s float64[]\nARRAY e float64[100]\n"
                  "MULTIPLY d, x, 2.0\nADD_REDUCE s, x, axis=None\nADD e, d[:100], s\nDEL d\nSYNC e")
    assert _decisions(other, [[0, 1], [2, 3, 4]])["d"] is SinkRefusal.SHAPE


def test_sink_maps_keeps_every_reader_after_its_producer():
    p = parse(_program(["SUBTRACT d, x, c", BARRIER, "COPY w, 3.0", "DEL w"], READER))
    got = sink_maps(p)
    names = [ins.opcode.name for ins in got.program]
    assert names.index("SUBTRACT") == names.index("DIVIDE") - 1
    assert sorted(got.order) == list(range(len(p)))


def test_the_check_budget_refuses_beyond_it():
    lines, reads = [], []
    for k in range(CHECKS + 2):
        lines.append(f"ARRAY d{k} float64[{N}]")
    body = [f"SUBTRACT d{k}, x, c" for k in range(CHECKS + 2)] + [BARRIER]
    body += [f"DIVIDE z, d{k}, s\nDEL d{k}" for k in range(CHECKS + 2)]
    text = _program(lines + body, "SYNC z\nSYNC x\nSYNC y\nSYNC s")
    p = parse(text)
    maps = list(range(CHECKS + 2))
    blocks = [maps + [CHECKS + 2], list(range(CHECKS + 3, len(p)))]
    got = rematerialise(p, blocks)
    refused = [d.refusal for d in got.decisions if d.output.startswith("d")]
    assert refused.count(None) == CHECKS and refused.count(SinkRefusal.BUDGET) == 2


# --- random programs: a producer map, a barrier, things in between, its reader -------------------

MAPS = {"SUBTRACT d, x, c": lambda x, y, c: x - c, "MULTIPLY d, x, 3.0": lambda x, y, c: x * 3.0,
        "ADD d, x, y": lambda x, y, c: x + y, "SQRT d, x": lambda x, y, c: np.sqrt(x)}
BETWEEN = {"MULTIPLY x, x, 2.0": "x", "ADD y, y, 1.0": "y", "COPY w, 7.0": None, "ADD_REDUCE c, y, axis=None": "c"}


@settings(max_examples=25, deadline=None)
@given(producer=st.sampled_from(sorted(MAPS)), between=st.lists(st.sampled_from(sorted(BETWEEN)), max_size=3),
       seed=st.integers(0, 1000), greedy=st.booleans())
def test_random_producer_read_after_a_barrier_equals_numpy(producer, between, seed, greedy):
    rng = np.random.default_rng(seed)
    x0, y0, c0 = rng.random(N) + 0.5, rng.random(N), np.array(0.25)
    p = parse(_program([producer, BARRIER, *between], READER))
    blocks = partition(p, "greedy", "bohrium").blocks if greedy else [[i] for i in range(len(p))]
    got = rematerialise(p, blocks)
    why = {d.output: d for d in got.decisions}["d"]
    overwritten = any(BETWEEN[b] in producer.split(", ", 1)[1] for b in between if BETWEEN[b])
    if overwritten:
        assert why.refusal is SinkRefusal.INPUT_OVERWRITTEN
    elif producer == "ADD d, x, y":
        assert why.refusal is SinkRefusal.MORE_BYTES
    if why.moved:   # the map now shares its reader's kernel and d is never stored
        kernels = [b.kernel for b in plan(p, got.blocks, min_size=0).blocks if b.kernel is not None]
        assert any("d" in k.contracted for k in kernels)
    # plain NumPy
    x, y, c = x0.copy(), y0.copy(), c0.copy()
    d = MAPS[producer](x, y, c)
    s = x.sum()
    for b in between:
        if b.startswith("MULTIPLY x"):
            x *= 2.0
        elif b.startswith("ADD y"):
            y += 1.0
        elif b.startswith("ADD_REDUCE c"):
            c = np.array(y.sum())
    z = d / s
    out = run_plan(plan(p, got.blocks, min_size=0),
                   Storage({"x": x0.copy(), "y": y0.copy(), "c": c0.copy()}), Externals(), CACHE)
    np.testing.assert_allclose(out["z"], z, rtol=1e-12)
    np.testing.assert_allclose(out["x"], x, rtol=0)
    np.testing.assert_allclose(out["y"], y, rtol=0)
