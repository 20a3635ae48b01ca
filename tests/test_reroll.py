"""Rerolling (``fusionlab.passes.reroll``): the runs of an unrolled Python loop of row operations
rewritten into 2-D instructions. Values against NumPy (the corpus's LU by row operations
and Gaussian elimination at several sizes, through the Numba kernels; hypothesis-made loops
of row updates through the reference executor), structure (instruction and kernel counts
before and after), and the refusals of loops whose iterations depend on each other."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fusionlab import parse
from fusionlab.capture import capture
from fusionlab.pipeline import run
from fusionlab.runtime.reference import Storage, run_reference
from fusionlab.pipeline import Pass, PipelineConfig, prepare_batches
from fusionlab.passes.reroll import RerollRefusal, reroll, reroll_batches
from fusionlab.workloads import get_workload
from fusionlab.passes.rewrites import RewriteKind

from kernels import CHECKED as CACHE   # bounds-checked kernels: this file tests a pass, not the kernels (tests/kernels.py)


def _script(name: str, n: int) -> str:
    return get_workload(name).script("tiny").replace(f"n={get_workload(name).kwargs('tiny')['n']}", f"n={n}")


def rerolled(batches):
    """The batches through the dead-writes pass and rerolling (the pipeline's first two
    passes), the arrays of the literals rerolling made, and what it did (records)."""
    programs, constants, lines, _, cut = prepare_batches(
        batches, PipelineConfig().without(Pass.FREE_EARLY, Pass.DEAD_WRITES_AFTER_FREE))
    return programs, constants, lines + cut


def _plain(source: str) -> dict:
    ns: dict = {"__name__": "__main__"}
    exec(compile(source, "<plain>", "exec"), ns)
    return ns


def _replayed(cap) -> dict:
    """The captured program rerolled, run by the reference executor (NumPy, instruction by
    instruction), read out as the namespace's arrays."""
    fused, constants, _ = rerolled(cap.batches)
    storage, synced = Storage({**cap.inputs, **constants}), {}
    with np.errstate(all="ignore"):
        for b in fused:
            synced.update(run_reference(b, externals=cap.externals, storage=storage))
    return cap.values_from(synced)


# --------------------------------------------------------------------------- structure


def test_lu_column_becomes_one_group_of_ten_instructions():
    cap = capture(_script("lu_rows", 8), {})
    got = reroll(cap.batches[1])
    assert (len(cap.batches[1]), len(got.program)) == (73, 13)
    assert [(r.start, r.length, r.count) for r in got.runs] == [(0, 10, 7)]
    text = got.program.to_text()
    assert "SUBTRACT u[1:], u[1:], t4" in text and "MULTIPLY t4, t3[:, None], u[0]" in text
    assert got.refusals == ()


@pytest.mark.parametrize("n, before, after, arrays, literals",
                         [(8, 249, 91, 4, 11), (30, 1943, 233, 28, 418), (60, 7373, 443, 58, 1753)])
def test_lu_instruction_counts(n, before, after, arrays, literals):
    cap = capture(_script("lu_rows", n), {})
    fused, constants, lines = rerolled(cap.batches)
    assert sum(len(b) for b in cap.batches) == before
    assert sum(len(b) for b in fused) == after
    # past the capture's scalar-loop threshold the multipliers are literals: one array each
    # (l[i, k] written, then read: one array for both)
    assert (len(constants), sum(v.size for v in constants.values())) == (arrays, literals)
    assert all(v.ndim == 1 and v.dtype == np.float64 for v in constants.values())
    assert any(r.kind is RewriteKind.RUN_REROLLED and "iterations of 10 instructions" in r.describe() for r in lines)


def test_literal_arrays_match_the_multipliers():
    cap = capture(_script("lu_rows", 30), {})
    got = reroll_batches(cap.batches)[1]
    (name, values), = got.constants.items()
    ns = _plain(_script("lu_rows", 30).replace("result = ", "l, u, e = result = "))
    l_plain = ns["l"]
    assert np.array_equal(values, l_plain[17:, 0])   # the literals the capture recorded are NumPy's values
    assert f"COPY l[17:, 0], {name}" in got.program.to_text()


# --------------------------------------------------------------------------- against NumPy (kernels)


@pytest.mark.parametrize("n", [8, 30, 45])
def test_lu_rows_rerolled_matches_numpy(n):
    source = _script("lu_rows", n)
    cap = capture(source, {})
    r = run(cap, check=True, cache=CACHE, min_size=0)
    assert r.check.ok, r.check.mismatches[:3]       # against the source run by plain NumPy
    l_plain, u_plain, _ = _plain(source)["result"]
    np.testing.assert_allclose(r.values["result[0]"], l_plain, rtol=1e-13, atol=1e-13)
    np.testing.assert_allclose(r.values["result[1]"], u_plain, rtol=1e-13, atol=1e-13)
    assert r.max_abs_error < 1e-13                  # against the batches as captured, replayed
    assert any(x.kind is RewriteKind.RUN_REROLLED and "iterations of 10 instructions" in x.describe()
               for x in r.rerolled)
    off = run(cap, cache=CACHE, min_size=0, reroll=False)
    assert off.rerolled == [] and sum(len(p.program) for p in off.plans) > 2.5 * sum(len(p.program) for p in r.plans)
    assert np.array_equal(off.values["result[1]"], r.values["result[1]"])


@pytest.mark.parametrize("n", [6, 12, 20])
def test_gauss_pivot_rerolled_matches_numpy(n):
    source = _script("gauss_pivot", n)
    cap = capture(source, {})
    r = run(cap, check=True, cache=CACHE, min_size=0)
    assert r.check.ok, r.check.mismatches[:3]
    x_plain, residual = _plain(source)["result"]
    np.testing.assert_allclose(_replayed(cap)["result[0]"], x_plain, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(r.values["result[0]"], x_plain, rtol=1e-12, atol=1e-12)


# --------------------------------------------------------------------------- hypothesis: loops of row updates

KINDS = ("pivot_row", "other_array", "scalar", "prev_row", "next_row", "pivot_inside")
DEPENDENT = {"prev_row", "next_row", "pivot_inside"}


def _loop(kind: str, n: int, m: int, lo: int, hi: int, c: int, coef: float) -> str:
    body = {
        "pivot_row": f"a[i, {c}:] -= (a[i, {c}] / a[0, {c}]) * a[0, {c}:]",
        "other_array": f"a[i, {c}:] = a[i, {c}:] * {coef} + b[i, {c}:]",
        "scalar": f"a[i, {c}] = a[i, {c}] * b[i, 0] + {coef}",
        "prev_row": f"a[i, {c}:] += {coef} * a[i - 1, {c}:]",
        "next_row": f"a[i, {c}:] -= {coef} * a[i + 1, {c}:]",
        "pivot_inside": f"a[i, {c}:] -= {coef} * a[{lo + 1}, {c}:]",
    }[kind]
    return (f"import numpy as np\nrng = np.random.default_rng(1)\na = rng.random(({n}, {m})) + 1\n"
            f"b = rng.random(({n}, {m}))\nfor i in range({lo}, {hi}):\n    {body}\ntotal = float(a.sum())\n")


@st.composite
def loops(draw: st.DrawFn) -> tuple[str, str, int]:
    kind = draw(st.sampled_from(KINDS))
    n, m = draw(st.integers(4, 9)), draw(st.integers(2, 6))
    lo = draw(st.integers(1, n - 3))
    hi = draw(st.integers(lo + 2, n - 1 if kind == "next_row" else n))
    c = draw(st.integers(0, m - 1))
    coef = draw(st.sampled_from([0.5, -1.25, 3.0]))
    return kind, _loop(kind, n, m, lo, hi, c, coef), hi - lo


@settings(max_examples=60, deadline=None)
@given(loops())
def test_random_row_loops(case):
    kind, source, count = case
    cap = capture(source, {})
    got = reroll_batches(cap.batches)
    runs = [r for g in got for r in g.runs]
    if kind in DEPENDENT:
        assert runs == [], source
        reasons = {x.reason for g in got for x in g.refusals}
        assert reasons & {RerollRefusal.READS_OTHER_INSTANCE, RerollRefusal.WRITES_OVERLAP}, (source, reasons)
    else:
        assert [r.count for r in runs] == [count], source
    plain = _plain(source)
    replay = _replayed(cap)
    np.testing.assert_array_equal(replay["a"], plain["a"])
    assert replay["total"] == plain["total"]


# --------------------------------------------------------------------------- bytecode cases


def test_write_overlap_between_iterations_is_refused():
    p = parse("ARRAY x float64[6]\nARRAY y float64[6]\nADD x[0:2], y[0:2], 1\nADD x[1:3], y[1:3], 1\n"
              "ADD x[2:4], y[2:4], 1")
    got = reroll(p)
    assert got.program == p and got.refusals[0].reason is RerollRefusal.WRITES_OVERLAP


def test_escaping_temporary_and_irregular_offsets():
    p = parse("ARRAY x float64[6]\nARRAY t0 float64[]\nARRAY t1 float64[]\nCOPY t0, x[0]\nCOPY t1, x[1]\n"
              "ADD x[2], t0, t1\nDEL t0\nDEL t1")
    assert reroll(p).refusals[0].reason is RerollRefusal.TEMPORARY_ESCAPES
    q = parse("ARRAY x float64[9]\nCOPY x[0], 1\nCOPY x[1], 1\nCOPY x[3], 1")
    got = reroll(q)
    assert [(r.start, r.count) for r in got.runs] == [(0, 2)] and len(got.program) == 2


def test_power_literals_are_not_lifted():
    p = parse("ARRAY x float64[3]\nPOWER x[0], x[0], 2.0\nPOWER x[1], x[1], 3.0\nPOWER x[2], x[2], 4.0")
    got = reroll(p)
    assert got.program == p and got.refusals[0].reason is RerollRefusal.LITERALS_DIFFER


def test_nested_loops_reroll_in_two_passes():
    # x[i, j] for j < 4 of 5 columns: the rows first (stride 1), then the rows' groups (stride 5)
    lines = ["ARRAY x float64[3,5]"] + [f"ADD x[{i}, {j}], x[{i}, {j}], 1" for i in range(3) for j in range(4)]
    got = reroll(parse("\n".join(lines)))
    assert len(got.program) == 1 and [r.level for r in got.runs] == [1, 1, 1, 2]
    assert got.program.to_text().splitlines()[-1] == "ADD x[:, :-1], x[:, :-1], 1"


def test_explorer_shows_what_was_rerolled_and_can_turn_it_off():
    from fusionlab.explore.jupyter.session import FuseResult

    cap = capture(_script("lu_rows", 30), {})
    on = FuseResult(cap.batches, capture=cap, algorithms=["greedy"], budget_seconds=10)
    assert (on.batch, len(on.program)) == (1, 17)          # the largest batch, rerolled
    lines = on.text().splitlines()
    assert "rerolled: 215 instructions -> 17" in lines
    assert "16 iterations of 10 instructions (captured 1-160) rerolled into instructions 1-10" in lines
    notes = [n["detail"] for n in on.report()["notices"] if n["kind"] == "reroll"]
    assert notes == on.rerolled() and len(notes) == 3
    off = FuseResult(cap.batches, capture=cap, algorithms=["greedy"], budget_seconds=10, reroll=False)
    assert len(off.program) == 215 and off.rerolled() == []
    assert not any(n["kind"] == "reroll" for n in off.report()["notices"])


def test_cli_run_says_what_was_rerolled_and_verify_checks_it(capsys):
    from fusionlab.cli import main

    assert main(["run", "lu_rows", "--check"]) == 0
    out = capsys.readouterr().out
    assert "batch 2: 7 iterations of 10 instructions (captured 1-70) rerolled into instructions 1-10" in out
    assert main(["run", "lu_rows", "--no-reroll"]) == 0
    assert "rerolled" not in capsys.readouterr().out
    assert main(["verify", "lu_rows"]) == 0 and capsys.readouterr().out.rstrip().endswith("OK")


def test_rerolled_columns_share_their_kernels():
    from fusionlab.backend.numba.plan import DEFAULT_MIN_SIZE
    from fusionlab.pipeline.runner import run_config
    from fusionlab.pipeline import build

    cap = capture(_script("lu_rows", 30), {})
    plans = build(cap, run_config("greedy", "bohrium", DEFAULT_MIN_SIZE, reroll=True)).plans
    calls = [bp.compiled.key for p in plans for bp in p.blocks if bp.compiled is not None]
    # three or four kernels a column; offsets are arguments: the columns share them
    assert (len(calls), len(set(calls))) == (95, 13)   # 67 distinct with the offsets as constants
