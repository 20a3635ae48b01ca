"""The backend benchmark's points of comparison (``benchmarks/bench_backend_refs.py``) at the tiny size.

The benchmark times NumPy, Numba on the NumPy code and a hand-written ``prange`` loop against
fusionlab, and reports a row's speed-ups only if the variants compute the same thing. Here,
for every row:

- the ``*_numpy`` reference, fed the arrays its ``args`` draws, gives the scalar the workload
  itself gives when run as written (so the reference is the program, and the draws are the
  program's draws, in its order);
- for every corpus row, the hand-written loop gives that value too, and so does Numba on the
  NumPy code (``NUMBA_CHECKED`` rows), or Numba refuses that code with a reason the row can
  print; no variant modifies its arguments (the benchmark calls each many times with the
  same ones);
- every corpus program is a row, and the benchmark's default rows (``make bench``) include them.

Tolerances: the loops reassociate sums (``fastmath={"reassoc"}``, per-thread partial sums), so
values agree to a relative 1e-9 (float64; the programs run a few dozen well-conditioned steps)
or 1e-4 (float32 programs, whose loops accumulate in float64 as Numba does).
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path
from typing import Any

import numba
import numpy as np
import pytest

from fusionlab.workloads import CORPUS, get_workload

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import bench_backend_refs as refs_module  # noqa: E402  (a script directory, not a package)

REFS = refs_module.REFS
#: the rows whose Numba variant is checked here: compiling Numba on every program's NumPy code
#: takes minutes on a cold cache, and the older rows' variants are checked by every benchmark
#: run (a value that differs from NumPy's is a note of the row)
NUMBA_CHECKED = ["particles_box", "nbody_pairwise", "kmeans_step", "softmax_logsumexp", "histogram_equalize",
                 "covariance_shrinkage", "gauss_pivot", "lu_rows", "dense_relu", "jacobi_poisson", "charge_deposit"]


def _args(name: str) -> tuple[Any, ...]:
    return REFS[name].args(get_workload(name).kwargs("tiny"))


def _rtol(name: str) -> float:
    return 1e-4 if name.endswith("f32") else 1e-9


def _quiet_run(name: str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # nbody_pairwise's strides setter
        return get_workload(name).run("tiny")


def _numpy_value(name: str, args: tuple[Any, ...]) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return float(REFS[name].numpy(*args))


@pytest.mark.parametrize("name", list(REFS))
def test_numpy_reference_is_the_workload(name: str) -> None:
    want = refs_module._scalar_of(name, _quiet_run(name))
    got = _numpy_value(name, _args(name))
    assert got == pytest.approx(want, rel=1e-6 if name.endswith("f32") else 1e-12), name


def test_every_corpus_program_is_a_row() -> None:
    assert sorted(refs_module.CORPUS_ROWS) == sorted(CORPUS)
    assert not set(refs_module.CORPUS_NOT_ROWS) & set(refs_module.CORPUS_ROWS)
    assert set(refs_module.CORPUS_ROWS) <= set(REFS)


def test_default_rows_are_the_paper_the_corpus_and_the_combinators() -> None:
    import bench_backend  # the script's helpers only; nothing runs on import

    rows = bench_backend._row_names(bench_backend.DEFAULT_ROWS)
    assert rows == [*bench_backend.WORKLOAD_NAMES, *refs_module.CORPUS_ROWS, *bench_backend.GROUPS["combinators"]]
    make = (Path(__file__).resolve().parent.parent / "Makefile").read_text()
    assert "\t$(PY) benchmarks/bench_backend.py\n" in make  # `make bench`: the default rows


def _same(before: tuple[Any, ...], after: tuple[Any, ...]) -> bool:
    return all(np.array_equal(a, b) if isinstance(a, np.ndarray) else a == b for a, b in zip(before, after))


@pytest.mark.parametrize("name", refs_module.CORPUS_ROWS)
def test_loop_gives_numpys_value(name: str) -> None:
    args = _args(name)
    kept = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
    want = _numpy_value(name, args)
    assert _same(kept, args), "the NumPy reference modified its arguments"
    got = float(REFS[name].loop(*args))
    assert got == pytest.approx(want, rel=_rtol(name)), "hand-written loop"
    assert _same(kept, args), "the loop modified its arguments"


@pytest.mark.parametrize("name", NUMBA_CHECKED)
def test_numba_on_the_numpy_code_gives_numpys_value_or_is_refused(name: str) -> None:
    args = _args(name)
    kept = tuple(a.copy() if isinstance(a, np.ndarray) else a for a in args)
    want = _numpy_value(name, args)
    try:
        value = float(REFS[name].numba(*args))
    except (numba.core.errors.NumbaError, NotImplementedError) as exc:  # the row's notes say why
        reason = refs_module.numba_refusal(exc)
        # a signature Numba has no implementation for, or an attribute it does not know (np.add.at)
        assert reason.startswith(("no implementation of ", "No definition for lowering", "Unknown attribute")), reason
        return
    assert _same(kept, args), "Numba on the NumPy code modified its arguments"
    assert value == pytest.approx(want, rel=_rtol(name))


def test_numba_refusal_names_the_signature() -> None:
    @numba.njit
    def row_max(a: np.ndarray) -> np.ndarray:
        return a.max(axis=1, keepdims=True)

    with pytest.raises(numba.core.errors.TypingError) as info:
        row_max(np.ones((2, 3)))
    reason = refs_module.numba_refusal(info.value)
    assert reason.startswith("no implementation of npy_max(array(float64, 2d, C), axis=")
    assert reason.endswith("got an unexpected keyword argument 'axis'") and len(reason) <= 200


def test_a_row_over_the_plan_budget_says_how_far_fusionlab_got(monkeypatch: pytest.MonkeyPatch) -> None:
    import time

    import bench_backend

    cap, built = bench_backend.capture_and_plan("lu_rows", "tiny", 0)  # no limit
    assert len(built.plans) == len(cap.batches) > 1
    def slow_plans(*args: Any, **kwargs: Any) -> list[Any]:  # a partition that takes long, and absorbs its errors
        for _ in range(300):
            try:
                time.sleep(0.1)
            except Exception:
                pass
        return []

    monkeypatch.setattr(bench_backend, "build", slow_plans)
    with pytest.raises(bench_backend.PlanBudgetExceeded) as info:
        bench_backend.capture_and_plan("lu_rows", "tiny", 2.0)
    sizes = sorted((len(b.instructions) for b in cap.batches), reverse=True)
    message = str(info.value)
    assert message.startswith("fusionlab's greedy partition did not finish in ")
    assert f"({len(sizes)} batches, {sum(sizes):,} instructions, the largest batch {sizes[0]:,}; " in message
    monkeypatch.setitem(bench_backend.PLAN_BUDGET, "seconds", 2.0)
    row = bench_backend.measure("lu_rows", "tiny", 3, bench_backend.KernelCache())  # reported, not raised
    assert row["error"].startswith("PlanBudgetExceeded: fusionlab's greedy partition did not finish")


import bench_combinator_refs as combinator_refs  # noqa: E402  (the same script directory)


@pytest.mark.parametrize("name", list(combinator_refs.COMBINATOR_REFS))
def test_combinator_rows_numpy_numba_and_loop_agree(name: str) -> None:
    """Each combinator row (issue 14): the NumPy reference is the workload's own value; the
    hand-written loop and Numba on the NumPy code give it too (or Numba refuses with a
    reason); none modifies its arguments."""
    workload, refs = combinator_refs.COMBINATOR_WORKLOADS[name], combinator_refs.COMBINATOR_REFS[name]
    args = refs.args(workload.kwargs("tiny"))
    kept = tuple(a.copy() for a in args)
    want = float(refs.numpy(*args))
    assert want == pytest.approx(workload.run("tiny"), rel=1e-12)
    assert float(refs.loop(*args)) == pytest.approx(want, rel=1e-9), "hand-written loop"
    try:
        assert float(refs.numba(*args)) == pytest.approx(want, rel=1e-9), "Numba on the NumPy code"
    except (numba.core.errors.NumbaError, NotImplementedError) as exc:
        reason = refs_module.numba_refusal(exc)
        assert name == "softmax_rows" and reason.startswith("no implementation of npy_max"), reason
    assert _same(kept, args)


def _shared_row(workload: str, loop_speedup: float) -> dict[str, Any]:
    """A measured row as ``bench_backend.measure`` returns it, the shared-machine part made up."""
    numpy_s, fused_s = 0.020, 0.016
    loop_s = numpy_s / loop_speedup
    quiet = {"numpy": 0.019, "loop": 0.009, "fusionlab": 0.008, "numba": 0.010}
    return {"workload": workload, "title": workload, "preset": "medium", "median_s": quiet,
            "speedup": {k: quiet["numpy"] / v for k, v in quiet.items()}, "fusionlab_kernel_s": 0.008,
            "load_before": 0.5,
            "shared_machine": {"median_s": {"numpy": numpy_s, "fusionlab": fused_s, "loop": loop_s},
                               "speedup": numpy_s / fused_s, "loop_speedup": loop_speedup,
                               "fusionlab_slowdown": fused_s / quiet["fusionlab"],
                               "numpy_slowdown": numpy_s / quiet["numpy"]}}


def test_the_shared_machine_table_shows_the_loop_under_the_competitor_as_the_rows_bound() -> None:
    import bench_backend

    bounded, reachable = _shared_row("row_col_sums", 1.6), _shared_row("cumsum_map", 2.5)
    header, rule, *rows = bench_backend.targets_table([bounded, reachable])
    assert "| shared: loop ms (speed-up) |" in header
    assert [len(r.split(" | ")) for r in (header, rule, *rows)] == [11] * 4
    assert "| 12.5 (1.6x) |" in rows[0] and "| 8.0 (2.5x) |" in rows[1]
    # both miss 2x NumPy (1.25x); only where the loop misses it too is that the row's bound
    (miss,) = [m for m in bench_backend.misses(bounded) if m.startswith("shared machine")]
    assert "the hand-written loop under the competitor 12.5 ms, 1.6x: below 2x too" in miss
    (miss,) = [m for m in bench_backend.misses(reachable) if m.startswith("shared machine")]
    assert "the hand-written loop under the competitor 8.0 ms, 2.5x" in miss and "below 2x" not in miss
    # rows measured before the loop column: the cell says so, the note is unchanged
    del bounded["shared_machine"]["loop_speedup"]
    assert "| not measured |" in bench_backend.targets_table([bounded])[2]
    assert "hand-written loop under" not in " ".join(bench_backend.misses(bounded))
