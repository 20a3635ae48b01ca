"""Dead parts of element-wise writes (``fusionlab.passes.deadwrites``): an instruction restricted to
the slabs of its output that something reads before they are overwritten. Differential
against NumPy (the reference executor runs each instruction with NumPy) on random programs
that write boxes, overwrite parts of them and read in between; each refusal; and the
structure of the Jacobi sweep the pass was made for (its per-sweep ``u.copy()`` removed)."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fusionlab import parse
from fusionlab.ir.bytecode import Base, Instruction, Literal, Opcode, Program, View
from fusionlab.capture import capture
from fusionlab.passes.deadwrites import WALK, DeadRefusal, drop_dead_writes, rewrites_of
from fusionlab.passes.rewrites import WRITE_KINDS, RewriteKind
from fusionlab.runtime.reference import run_reference
from fusionlab.pipeline.runner import run
from fusionlab.partition import partition
from fusionlab.ir.text import format_view
from fusionlab.workloads import get_workload

from kernels import planned

# kernels bounds-checked (serial): this file tests a pass, not the kernels' parallel loops (tests/kernels.py)
pytestmark = pytest.mark.bounds_checked



def _decision(program: Program, i: int):  # type: ignore[no-untyped-def]
    return next(d for d in drop_dead_writes(program).decisions if d.index == i)


def _pieces(program: Program, i: int) -> list[str]:
    return [format_view(v) for v in _decision(program, i).pieces]


# --------------------------------------------------------------------------- decisions

def test_copy_then_interior_then_walls_is_removed() -> None:
    p = parse("ARRAY u float64[6,6]\nARRAY n float64[6,6]\nCOPY n, u\n"
              "ADD n[1:-1, 1:-1], u[:-2, 1:-1], u[2:, 1:-1]\n"
              "COPY n[0], 1.0\nCOPY n[5], 1.0\nCOPY n[:, 0], 0.0\nCOPY n[:, 5], 0.0\nSYNC n")
    d = _decision(p, 0)
    assert d.rewritten and d.pieces == () and d.killers == (1, 2, 3, 4, 5)
    got = drop_dead_writes(p)
    assert len(got.program) == len(p) - 1 and got.origin == (1, 2, 3, 4, 5, 6)
    assert [ins.opcode for ins in got.program][:1] == [Opcode.ADD]
    # the walls' corners are the columns' (written last): the rows keep their middles
    assert _pieces(p, 2) == ["n[0, 1:-1]"] and _pieces(p, 3) == ["n[5, 1:-1]"]


def test_interior_alone_leaves_four_walls() -> None:
    p = parse("ARRAY u float64[6,7]\nARRAY n float64[6,7]\nCOPY n, u\nCOPY n[1:-1, 1:-1], 2.0\nSYNC n")
    assert _pieces(p, 0) == ["n[:-5]", "n[5:]", "n[1:-1, :-6]", "n[1:-1, 6:]"]
    rewritten = drop_dead_writes(p).program
    assert [format_view(ins.views_in[0]) for ins in rewritten[:4]] == ["u[:-5]", "u[5:]", "u[1:-1, :-6]",
                                                                        "u[1:-1, 6:]"]


def test_a_read_in_between_keeps_the_part_it_reads() -> None:
    # the row sum reads row 0 after the copy: the walls stay whole (one slab pinned)
    p = parse("ARRAY u float64[6,6]\nARRAY n float64[6,6]\nARRAY s float64[]\nCOPY n, u\n"
              "ADD_REDUCE s, n[0], axis=None\nCOPY n[1:-1, 1:-1], 2.0\nCOPY n[0], 1.0\nSYNC n\nSYNC s")
    d = _decision(p, 0)
    assert d.refusal is DeadRefusal.READ_FIRST and d.pieces == (p[0].outputs[0],)
    # a read of another part pins only the slab it meets
    q = parse("ARRAY u float64[6,6]\nARRAY n float64[6,6]\nARRAY s float64[]\nCOPY n, u\n"
              "COPY n[1:-1, 1:-1], 2.0\nADD_REDUCE s, n[5], axis=None\nCOPY n[0], 1.0\nCOPY n[5], 1.0\n"
              "SYNC n\nSYNC s")
    assert _pieces(q, 0) == ["n[5:]", "n[1:-1, :-5]", "n[1:-1, 5:]"]


def test_in_place_overwrite_reads_first() -> None:
    p = parse("ARRAY a float64[8]\nCOPY a, 1.0\nADD a[2:5], a[2:5], 1.0\nSYNC a")
    assert _decision(p, 0).refusal is DeadRefusal.READ_FIRST


def test_refusals() -> None:
    p = parse("ARRAY a float64[8]\nARRAY b float64[8]\nCOPY a, 1.0\nCOPY b, a\nSYNC b")
    assert _decision(p, 0).refusal is DeadRefusal.NOT_OVERWRITTEN   # read, but nothing overwrites it
    p = parse("ARRAY a float64[8]\nARRAY b float64[8]\nCOPY a, 1.0\nCOPY b, 2.0\nDEL a\nSYNC b")
    assert _decision(p, 0).refusal is DeadRefusal.NOT_OVERWRITTEN
    # a strided overwrite leaves a part that is not a box of the output
    p = parse("ARRAY a float64[8]\nCOPY a, 1.0\nCOPY a[::2], 2.0\nSYNC a")
    assert _decision(p, 0).refusal is DeadRefusal.PART_NOT_BOX
    # ... unless the earlier write runs along the same stride
    p = parse("ARRAY a float64[8]\nCOPY a[::2], 1.0\nCOPY a[4::2], 2.0\nSYNC a")
    assert _pieces(p, 0) == ["a[:-4:2]"]
    # an opaque instruction may read anything
    p = parse('ARRAY a float64[8]\nARRAY b float64[8]\nCOPY a, 1.0\nOPAQUE b, a, name="np.sort"\n'
              "COPY a, 2.0\nSYNC a\nSYNC b")
    assert _decision(p, 0).refusal is DeadRefusal.OPAQUE
    # a SYNC reads the whole base
    p = parse("ARRAY a float64[8]\nCOPY a, 1.0\nSYNC a\nCOPY a, 2.0\nSYNC a")
    assert _decision(p, 0).refusal is DeadRefusal.READ_FIRST
    # a writer outside the element-wise families is taken to read what it writes
    p = parse("ARRAY x int64[6]\nARRAY h int64[4]\nCOPY h, 7\nBINCOUNT h, x\nCOPY h, 1\nSYNC h")
    assert _decision(p, 0).refusal is DeadRefusal.READ_FIRST
    # a diagonal is no box
    a = Base("a", "float64", (4, 4))
    diag = View(a, (4,), (5,), 0)
    p = Program((a,), (Instruction(Opcode.COPY, (diag,), (Literal(1.0),)),
                       Instruction(Opcode.COPY, (a.view(),), (Literal(2.0),)),
                       Instruction(Opcode.SYNC, (), (a.view(),))))
    assert _decision(p, 0).refusal is DeadRefusal.NOT_BOX
    # the overwrite of a diagonal is no box either; the copy stays whole
    p = Program((a,), (Instruction(Opcode.COPY, (a.view(),), (Literal(1.0),)),
                       Instruction(Opcode.COPY, (diag,), (Literal(2.0),)),
                       Instruction(Opcode.SYNC, (), (a.view(),))))
    assert _decision(p, 0).refusal is DeadRefusal.PART_NOT_BOX


def test_at_most_two_slabs_per_dimension() -> None:
    # a[2:4] leaves two slabs; a[6:7] would make a third (more than 2 * rank): not cut
    p = parse("ARRAY a float64[10]\nCOPY a, 1.0\nCOPY a[2:4], 2.0\nCOPY a[6:7], 3.0\nSYNC a")
    d = _decision(p, 0)
    assert d.rewritten and d.killers == (1,) and _pieces(p, 0) == ["a[:-8]", "a[4:]"]
    # a whole slab overwritten is no new piece
    p = parse("ARRAY a float64[10]\nCOPY a, 1.0\nCOPY a[2:4], 2.0\nCOPY a[4:], 3.0\nSYNC a")
    assert _pieces(p, 0) == ["a[:-8]"]


def test_scalars_and_extent_one_dimensions() -> None:
    p = parse("ARRAY s float64[]\nARRAY a float64[3,1]\nCOPY s, 1.0\nCOPY s, 2.0\nCOPY a, 1.0\nCOPY a[1:], 2.0\n"
              "SYNC s\nSYNC a")
    got = drop_dead_writes(p)
    assert got.decisions[0].pieces == () and _pieces(p, 2) == ["a[:-2]"]
    assert run_reference(got.program)["a"].ravel().tolist() == [1.0, 2.0, 2.0]


def test_walk_budget() -> None:
    head = ["ARRAY a float64[8]", "ARRAY s float64[]", "COPY a, 1.0"]
    # the overwrite of a[1:] lies beyond WALK instructions touching a: not seen
    r = parse("\n".join(head + ["COPY a[:1], 3.0"] * (WALK + 1) + ["COPY a, 2.0", "SYNC a"]))
    assert _decision(r, 0).pieces == (r[0].outputs[0][1:],)
    # instructions that do not touch a are not walked
    q = parse("\n".join(head + ["COPY s, 0.0"] + ["ADD s, s, 1.0"] * WALK + ["COPY a, 2.0", "SYNC a", "SYNC s"]))
    assert _decision(q, 0).pieces == ()


def test_unchanged_program_is_the_same_object() -> None:
    p = parse("ARRAY a float64[8]\nARRAY b float64[8]\nCOPY a, 1.0\nCOPY b, a\nSYNC b")
    got = drop_dead_writes(p)
    assert got.program is p and not got.changed and got.origin == tuple(range(len(p)))


# --------------------------------------------------------------------------- differential

_SHAPE = (6, 7)


@st.composite
def _box(draw: st.DrawFn) -> str:
    """A basic-slicing index of A: per axis a slice (steps 1, 2, 3, -1, -2) or an integer."""
    parts = []
    for n in _SHAPE:
        kind = draw(st.sampled_from(["slice", "slice", "slice", "int", "all"]))
        if kind == "all":
            parts.append(":")
        elif kind == "int":
            parts.append(str(draw(st.integers(-n, n - 1))))
        else:
            lo = draw(st.integers(0, n - 1))
            hi = draw(st.integers(lo + 1, n))
            step = draw(st.sampled_from([1, 1, 2, 3, -1, -2]))
            parts.append(f"{lo}:{hi}" if step == 1 else f"{lo}:{hi}:{step}" if step > 0
                         else f"{hi - 1}:{lo - 1 if lo else ''}:{step}")
    return ", ".join(parts)


@st.composite
def _programs(draw: st.DrawFn) -> str:
    """Writes of boxes of A (copies of B, literals, in-place updates) and reads of boxes of
    A (sums into scalars, copies into C) in random order."""
    lines = [f"ARRAY A float64[{_SHAPE[0]},{_SHAPE[1]}]", f"ARRAY B float64[{_SHAPE[0]},{_SHAPE[1]}]"]
    body, sums = [], 0
    for k in range(draw(st.integers(2, 9))):
        box = draw(_box())
        op = draw(st.sampled_from(["copy", "literal", "inplace", "sum", "read", "literal"]))
        if op == "copy":
            body.append(f"MULTIPLY A[{box}], B[{box}], {k + 2}.0")
        elif op == "literal":
            body.append(f"COPY A[{box}], {k + 0.5}")
        elif op == "inplace":
            body.append(f"ADD A[{box}], A[{box}], {k + 0.25}")
        elif op == "sum":
            lines.append(f"ARRAY s{sums} float64[]")
            body += [f"ADD_REDUCE s{sums}, A[{box}], axis=None", f"SYNC s{sums}"]
            sums += 1
        else:
            lines.append(f"ARRAY C{k} float64[{_SHAPE[0]},{_SHAPE[1]}]")
            body += [f"MULTIPLY C{k}[{box}], A[{box}], 3.0", f"SYNC C{k}"]
    return "\n".join(lines + body + ["SYNC A"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_programs(), st.integers(0, 2**31 - 1))
def test_rewritten_programs_compute_what_numpy_computes(text: str, seed: int) -> None:
    p = parse(text)
    got = drop_dead_writes(p)
    b = np.random.default_rng(seed).standard_normal(_SHAPE)
    a0 = np.random.default_rng(seed + 1).standard_normal(_SHAPE)
    want = run_reference(p, inputs={"A": a0.copy(), "B": b})
    have = run_reference(got.program, inputs={"A": a0.copy(), "B": b})
    assert want.keys() == have.keys()
    for k in want:
        np.testing.assert_array_equal(have[k], want[k], err_msg=f"{k}\n{text}\n{got.program.to_text()}")
    # every removed element is overwritten: the rewrite writes no more than the program did
    assert sum(ins.outputs[0].size for ins in got.program if ins.outputs) <= \
        sum(ins.outputs[0].size for ins in p if ins.outputs)


def test_differential_programs_are_rewritten_often() -> None:
    """The random programs above exercise the rewrite (not only refusals)."""
    @settings(max_examples=200, deadline=None, database=None)
    @given(_programs())
    def count(text: str) -> None:
        seen.append(drop_dead_writes(parse(text)).changed)

    seen: list[bool] = []
    count()
    assert sum(seen) >= len(seen) // 10


# --------------------------------------------------------------------------- Jacobi

def _jacobi(preset: str = "tiny"):  # type: ignore[no-untyped-def]
    with contextlib.redirect_stdout(io.StringIO()):
        return capture(get_workload("jacobi_poisson").script(preset), {})


def test_jacobi_copies_are_removed() -> None:
    cap = _jacobi()
    batch = cap.batches[0]
    got = drop_dead_writes(batch)
    n = 16
    full_copies = [ins for ins in batch if ins.opcode is Opcode.COPY and ins.outputs[0].shape == (n, n)
                   and ins.views_in]
    assert len(full_copies) == 4   # new = u.copy(), once per sweep (4 sweeps in the first batch)
    assert not [ins for ins in got.program if ins.opcode is Opcode.COPY and ins.outputs[0].shape == (n, n)]
    # 112 instructions: the four copies removed; u's zero fill is its interior, the walls' rows their middles
    assert (len(batch), len(got.program)) == (112, 108)
    records = rewrites_of(batch, got)
    assert sum(r.kind is RewriteKind.WRITE_REMOVED for r in records) == 4 and len(records) == 15
    assert (records[0].kind, records[0].instruction, records[0].base) == (RewriteKind.WRITE_RESTRICTED, 10, "u")
    assert records[0].describe(numbered=False) == (
        "instruction 11 (COPY u, 0) restricted to u[1:-1, 1:-1]: the rest is overwritten by "
        "instructions 12, 13, 14, 15 before anything reads it")


def test_jacobi_one_grid_pass_per_sweep() -> None:
    """Greedy under Bohrium: each sweep's interior is one block over the interior's shape,
    and no block iterates over the whole grid (before: the copy's block did, every sweep)."""
    cap = _jacobi()
    plans, _, _ = planned(cap, 0)
    n, sweeps = 16, 4
    for pl in plans:
        program = pl.program
        for bp in pl.blocks:
            grid = [i for i in bp.instructions if program[i].domain == (n, n)]
            # only the source term f iterates over the whole grid (once, in batch 1)
            assert all(program[i].outputs[0].base.name == "f" for i in grid), bp.instructions
        sweep_blocks = [bp for bp in pl.blocks if any(
            program[i].opcode is Opcode.COPY and program[i].views_in and program[i].outputs[0].shape == (n - 2, n - 2)
            for i in bp.instructions)]
        assert len(sweep_blocks) == (sweeps if len(program) > 20 else 0)   # the last batch: float(residual)
    before = [partition(b, "greedy", "bohrium").blocks for b in cap.batches]
    assert sum(len(b) for b in before) > sum(len(p.blocks) for p in plans)


def test_jacobi_run_matches_plain_numpy() -> None:
    cap = _jacobi()
    r = run(cap, check=True, min_size=0)
    assert r.check is not None and r.check.ok, r.check
    # batch 1: u's fill and walls, then per sweep the copy and two wall rows; batch 2: the sweeps
    written = [x for x in r.rewrites if x.kind is not RewriteKind.FREED_EARLY]
    assert all(x.kind in WRITE_KINDS for x in written)
    assert len(written) == 15 + 4 * 3 and r.rewrites[0].describe().startswith("batch 1: instruction 11 (COPY u, 0)")
    assert (r.rewrites[0].batch, r.rewrites[0].instruction) == (0, 10)
    # and the arrays whose next use is a later batch's DEL, freed early (fusionlab.passes.deadbases)
    assert [x.describe().split(" freed")[0] for x in r.rewrites[len(written):]] == \
        ["batch 1: r", "batch 1: x", "batch 2: f", "batch 2: r_1"]
    assert [(x.kind, x.batch, x.base) for x in r.rewrites[len(written):]] == \
        [(RewriteKind.FREED_EARLY, 0, "r"), (RewriteKind.FREED_EARLY, 0, "x"), (RewriteKind.FREED_EARLY, 1, "f"),
         (RewriteKind.FREED_EARLY, 1, "r_1")]
    # partitions given: run as given, on the batches as captured
    given = run(cap, partitions={k: partition(b, "greedy", "bohrium").blocks for k, b in enumerate(cap.batches)},
                min_size=0)
    assert given.rewrites == [] and all(p.program is b for p, b in zip(given.plans, cap.batches))
    assert given.values.keys() == r.values.keys() and "result[0]" in r.values   # u, the returned grid
    for k, v in r.values.items():
        np.testing.assert_allclose(given.values[k], v, rtol=1e-12)


def test_explorer_shows_the_captured_program_and_says_what_a_run_rewrites() -> None:
    from fusionlab.explore.report import get_report

    batch = _jacobi().batches[0]
    report = get_report(batch, algorithms=["greedy"], cost_models=["bohrium"])
    shown = report["program"]["instructions"]
    assert len(shown) == len(batch) == 112   # the program as captured, its copies included
    rewrites = [n["detail"] for n in report["notices"] if n["kind"] == "rewrite"]
    assert len(rewrites) == 15 and rewrites[3] == (
        "a run rewrites this batch before partitioning it: instruction 16 (COPY new, u) removed: all of it is "
        "overwritten by instructions 28, 30, 31, 32, 33 before anything reads it")
    assert not [n for n in get_report(parse("ARRAY a float64[4]\nCOPY a, 1.0\nSYNC a"))["notices"]
                if n["kind"] == "rewrite"]
