"""Fused execution against NumPy, numexpr, Numba on the NumPy code and hand-written loops;
the effective bandwidth of the fused kernels; time per cost model (Fig. 18-20).

Run ``make bench`` (or ``.venv/bin/python benchmarks/bench_backend.py``). ``--rows`` picks
rows (workload names, or the groups ``paper`` and ``corpus``: the eight paper workloads and
the realistic corpus of ``fusionlab.workloads.corpus``); ``--quick`` runs the tiny preset
with three rounds, no cost-model table, and only prints (minutes, for development). A run
of some rows replaces those rows in ``results/backend.json`` and keeps the others; the
README section is drawn from that file (``--report-only`` redraws it without measuring).
numexpr comes with ``pip install -e '.[bench]'``; without it its column says so.

A row whose capture and greedy planning take longer than ``--plan-budget`` seconds (300 by
default) is not measured: its cell says how far fusionlab got (the capture's time, its
batches and instructions), and the other rows still run.

The "shared machine" column: the same fused run and NumPy, timed while one competing busy
process (``python -c`` spinning, started and killed by this script, and ending by itself
after a bound in any case) occupies a core; it reports fusionlab's speed-up over NumPy then.

Every figure is measured in this one process: per workload and preset, the variants run
round-robin (one timed run of each per round, after a warm-up run that
compiles), and each variant's median over the rounds is divided into NumPy's median of the
same rounds. Writes its tables into benchmarks/README.md (between the bench_backend
markers), the raw figures into benchmarks/results/backend.json and a PNG of the cost-model
comparison into benchmarks/results/cost_models.png.

What is compared (``bench_backend_refs.py``): every variant does the workload's work at the
same size, from the same random draws (fusionlab replays the draws its capture recorded;
the others get the same draws as arrays). fusionlab is timed as ``compare`` times it: a
fresh storage per run, every batch's plan (greedy partition, Bohrium cost model) executed,
its kernels called from the run's compiled driver (``fusionlab.backend.numba.driver``); two more
columns show the same run with the driver run as Python, and block by block.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import signal
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

import numba
import numpy as np

from fusionlab.capture import capture
from fusionlab.backend.numba.driver import Driver
from fusionlab.backend.numba.plan import DEFAULT_MIN_SIZE, KernelCache, Plan, run_plan
from fusionlab.runtime.reference import Storage
from fusionlab.backend.numba.threads import DEFAULT_CHUNKS_PER_THREAD, configure
from fusionlab.pipeline.comparison import compare
from fusionlab.pipeline.runner import run, run_config
from fusionlab.pipeline import Built, build
from fusionlab.workloads import get_workload as _registered_workload

from _report import write_section
from bench_backend_refs import CORPUS_NOT_ROWS, CORPUS_ROWS, REFS, ne, numba_refusal
from bench_combinator_refs import COMBINATOR_REFS, COMBINATOR_WORKLOADS

REFS = {**REFS, **COMBINATOR_REFS}   # issue 14's rows (scan, sibling reductions): --rows combinators


def get_workload(name: str) -> Any:
    """A row's program: a registered workload, or one of the combinator rows' programs."""
    return COMBINATOR_WORKLOADS.get(name) or _registered_workload(name)

HERE = Path(__file__).resolve().parent
WORKLOAD_NAMES = ["black_scholes", "heat_equation", "leibnitz_pi", "rosenbrock", "monte_carlo_pi",
                  "shallow_water", "sor", "stencil_27pt"]
#: ``--rows`` groups: the paper's workloads, and the realistic corpus's rows
GROUPS = {"paper": WORKLOAD_NAMES, "corpus": CORPUS_ROWS, "combinators": list(COMBINATOR_WORKLOADS)}
#: the rows of a run without ``--rows`` (``make bench``): every paper workload, corpus program and combinator row
DEFAULT_ROWS = "paper,corpus,combinators"
#: rows whose fused kernels are limited by arithmetic (exp and log polynomials, pow, divisions;
#: covariance's matmul), not by memory traffic; the shared-machine target (2x NumPy with a
#: competing process) is for the others, the memory-bound rows. The n-body pairs are
#: memory-bound since their `** -1.5` is a square root and a division (a `pow` call before):
#: their kernels take about the time of their (n, n) arrays' traffic at the STREAM rate.
COMPUTE_BOUND = {"black_scholes", "leibnitz_pi", "black_scholes_f32", "asian_option_mc",
                 "softmax_logsumexp", "covariance_shrinkage", "softmax_rows"}
#: rows whose time is a BLAS matrix product in every variant (NumPy's ``@`` and fusionlab's
#: tiles or library kernel alike): the shared-machine target is not theirs either
BLAS_BOUND = {"dense_relu"}


def bound_of(name: str) -> str:
    """What limits a row's fused run: ``"memory"`` (the shared-machine target applies),
    ``"arithmetic"``, ``"BLAS"`` or ``"Python loop"``; decided by name, at report time too."""
    if name in BLAS_BOUND:
        return "BLAS"
    return "arithmetic" if name in COMPUTE_BOUND else "Python loop" if name in PYTHON_BOUND else "memory"


#: above this load average (1 min) when a row starts, the machine counts as loaded
LOADED = 1.5
#: why a row misses a target, where the figures alone do not say it (shown with its misses)
WHY: dict[str, str] = {
    "leibnitz_pi": "each pass's one kernel is the loop's arithmetic (two divisions a term) plus the store of `k`, the "
                   "user's name, alive until the next pass rebinds it (80 MB a pass at large, beyond the last-level "
                   "cache; 8 MB at medium, inside it: 1.07x there); the loop keeps `k` in a register. Measured on "
                   "10^7 terms (minimum of 7, load 4): one thread, the kernel 10.3 ms, without the store 10.1, the "
                   "loop 10.1; two threads 17.0, 15.7 and 16.2 ms: the store costs about 8%; the rest of the 1.41x "
                   "is the load the row was measured under (1.4; round-by-round quartiles 1.37-2.71)",
    "monte_carlo_pi": "the kernel is Numba's parfor loop (0.50 against 0.49 ms a call on in-cache draws, medians "
                      "of 300; 0.8-0.9 ms on the row's draws, which the cache does not hold); the compiled driver's "
                      "five calls take 4.2 ms against Numba's 4.1 (2026-11-29, quiet machine). The rest is the run's "
                      "set-up in Python: reading the free cores and setting Numba's threads and schedule cost "
                      "0.1-0.3 ms right after a kernel has streamed the draws through the caches (7 us in a warm "
                      "loop), which Numba's own dispatch does not do",
    "gray_scott": "`uc += ...` updates a view whose base the same step reads through shifted views, so the "
                  "Laplacians must be materialised before the update (extra passes over memory); the loop "
                  "double-buffers instead, a rewrite of where the result lives that fusion may not make",
    "heat_f32": "`u[1:-1, 1:-1] += ...` writes the base its shifted views read: the Laplacian is materialised "
                "first; the loop double-buffers",
    "life_uint8": "the interior assignment writes the base the eight shifted views read, so the neighbour count "
                  "is materialised; the four edge copies are small separate kernels; the loop double-buffers",
    "dense_relu": "its time is the matrix product, BLAS in every variant (NumPy's `x @ w`, fusionlab's "
                  "row tiles); the two passes over the product the fused epilogue saves are about 1% of it",
    "sir_dict": "`lap = np.zeros_like(i)` then its interior: a zero fill and a partial write the loop folds into "
                "one pass",
    "image_blur": "each pass's fresh `out` gets its interior and its four edges from separate kernels",
    "wave_1d": "greedy under the Bohrium model puts the next step's `2.0 * u[1:-1] - u_prev[1:-1]` into the "
               "previous step's kernel, so two temporaries are stored and read back each step (cutting the blocks "
               "at step boundaries measured 570 -> 460 ms at large, one thread, on a loaded machine); the ends "
               "of the fresh `u_next` are small kernels of their own",
    "jacobi_poisson": ("each sweep's `new = u.copy()` is gone (fusionlab.passes.deadwrites: its interior and walls are "
                       "overwritten before anything reads them; it was a second pass over the grid, 24.7 -> 16.6 ms at "
                       "medium on one thread); left per sweep: the interior's pass, the four walls as small kernels of "
                       "their own (33 kernel calls a run, 10 distinct), and the kernels' own traffic: 7.7 of 10.3 ms in "
                       "kernels at medium, 96.3 of 101.6 ms at large, where the loop takes 56.3 in all; the loop swaps "
                       "two buffers whose walls never change, one pass a sweep"),
    "asian_option_mc": "arithmetic-bound on `exp` of every draw: float64 `exp` is a polynomial the kernels' loops "
                       "vectorise (fusionlab.backend.numba.vmath; libm's scalar `exp` before: 1.2x / 1.4x NumPy, 0.6x / 0.7x "
                       "with the competitor), as NumPy's is SIMD; fusion saves memory traffic this row does not lack",
    "black_scholes_f32": "arithmetic-bound on float32 `exp`, `log` and `sqrt`, scalar calls in the kernels (no SVML), "
                         "SIMD in NumPy",
    "particles_box": "its masked assignments (`x[low] = -x[low]`: fancy indexing and an indexed assignment, twelve "
                     "per step) run as NumPy (opaque) and cut every step into small fused pieces; the loop keeps "
                     "each particle in registers over a batch's steps",
    "kmeans_step": "the boolean-mask row selections `points[labels == j]` are COMPRESS of rows, the k of a step "
                   "and their sums (the means) in one kernel, one pass over `points` (the last `members`, alive "
                   "after the loop, is written there too); each mask `labels == j` is a map over (n,), which does "
                   "not share the (n, 2) loop of the selections; `argmin` is an ARGMIN_REDUCE sharing a kernel "
                   "with its sibling `d2.min(axis=1)`, not with `d2`'s own kernel (a reader of a reduction's result "
                   "is another kernel); the loop finds each point's centroid and adds it to its cluster's sums in "
                   "one pass, without the (n, k, 2) temporary",
    "softmax_logsumexp": "`np.bincount(labels, minlength=cols)` is a BINCOUNT alone (the labels are an input: no "
                         "map to fuse it with) on `rows` values (2,000 at medium: below min_size, so it counts serially), "
                         "the label lookup `z[np.arange(rows), labels]` a GATHER fused with the loss's map and mean, "
                         "and the gradient's arrays have `cols` elements, below min_size; the loop does a row's max, "
                         "logsumexp, softmax and loss term in one pass",
    "histogram_equalize": "`np.bincount` is a BINCOUNT fused with the scaling map that computes `index`: each chunk "
                          "writes its bins into a buffer in a loop that vectorises and counts them after it "
                          "(emit.ChunkLoop); `std` is decomposed into reductions and the lookup `cdf[index]` "
                          "is a GATHER fused with the mean; z's numerator `values - mean` is recomputed in z's kernel "
                          "(fusionlab.passes.remat), and max|z| runs in four lanes over a buffer of the chunk's elements, "
                          "so its divisions vectorise (lanes.buffered_chunk); `scaled` and `z`, rebound by "
                          "the next pass after its SYNC, are freed early and never stored (fusionlab.passes.deadbases); "
                          "still stored: `index` (the gather reads it in a later kernel), the sum of `values` is "
                          "made twice (for the mean, and inside `std`), and the histogram's arrays have `bins` "
                          "elements, below min_size. One thread, medium, wall time of the kernels (load 1-2): the "
                          "counting kernel 1.75 -> 1.30 ms, the max|z| kernel 1.33 -> 0.6-0.7 ms; the whole run "
                          "with one competing process 3.6x NumPy at medium (the benchmark's variants round-robin, "
                          "21 rounds, in a script of 2026-11-25 02:03 UTC; 2.1x before these changes)",
    "covariance_shrinkage": "its work is one matmul (`xc.T @ xc`, BLAS in every variant: a CONTRACT run as NumPy's "
                            "own call here, a library kernel) and steps on a features x features matrix, below "
                            "min_size",
    "nbody_pairwise": "the diagonal zeroed through a strided view between computing `inv_r3` and using it is a "
                      "separate 1-D block, so the pairs take two (n, n) passes: `dx`, `dy`, `dz` and `inv_r3` are "
                      "written by the first and read by the second (`weight`, rebound by the next step after its "
                      "SYNC, is freed early and no longer stored: fusionlab.passes.deadbases), where the loop keeps every "
                      "pair in registers",
    "softmax_rows": "arithmetic-bound on `exp`: float64 `exp` is a polynomial the kernels' loops vectorise "
                    "(fusionlab.backend.numba.vmath; with libm's scalar `exp` the row was 1.4x / 1.3x NumPy, 0.6x / 0.7x with "
                    "the competitor, where NumPy's SIMD `np.exp` alone took a third of the kernels' `exp` time); the "
                    "fused run is three kernels (row maxima; `exp` and its row sums, storing `e`; the division) where "
                    "the loop does a row in one",
    "row_col_sums": "one pass over `x` (row sums in registers, column sums into per-range partial rows, eight rows "
                    "at a time: lanes' row lanes) where NumPy makes two, so on one free core the row's "
                    "ceiling is about twice NumPy, less the driver's call and the partial rows' combination. With "
                    "the competitor (three runs of 101 rounds, one thread): the kernel alone 0.29-0.30 ms at medium "
                    "(0.39-0.42 with four rows), the fused run 0.33-0.34 against NumPy's 0.75-0.78 (2.3x); at large "
                    "5.2 ms (one read pass over 128 MB at 25 GB/s on one core), the fused run 5.5-5.9 against "
                    "NumPy's 11.5-12.0 (2.0-2.1x)",
    "cumsum_map": "the maps feeding the 1-D scan run in strips of 512 elements in a loop of their own, which LLVM "
                  "vectorises (fusionlab/backend/numba/strip.py), the sine there a polynomial within 2 ulp of libm's "
                  "(libm for a strip with |x| > 2**24, inf or nan); with one thread the scan runs serially in one "
                  "pass. One thread, CPU time: 17.8 -> 4.1 ms at medium (NumPy 30.1 ms, whose `np.sin` is scalar "
                  "libm here)",
    "gauss_pivot": "Python-loop bound: one batch per column (its pivot's `argmax`, now an ARGMAX_REDUCE, is a value "
                   "Python needs), and the back substitution one element per Python iteration: its rows are 2,138 call sites "
                   "(medium), more than a compiled driver takes (256), so the run is the driver's Python form. Its "
                   "last row's empty views were OPAQUE copies, which sent the whole run block by block (0.3x / 0.5x "
                   "NumPy in the 2026-11-29 run before the fix; the rerun: 1.1x / 2.0x)",
    "lu_rows": "Python-loop bound: one batch per column (its pivot is a value Python needs); each column's row "
               "operations, captured one row at a time, are rerolled into one group of 2-D instructions "
               "(fusionlab/passes/reroll.py: 80,313 instructions -> 1,423 at medium), whose blocks share about ten "
               "compiled kernels over all columns (the views' offsets are kernel arguments; 405 distinct kernels "
               "unrolled, whose first run compiled for minutes); the diagonals written through `a.flat[:: n + 1]` "
               "are strided views (no opaque block); its ~605 kernel calls a run are folded into loops over "
               "tables of offsets (fusionlab/backend/numba/driver_loops.py: 20 call sites, 55 lines), so the compiled "
               "driver runs",
}
#: rows bound by the Python loop around small operations, not by memory or arithmetic: the
#: shared-machine target (2x NumPy) is not theirs either
PYTHON_BOUND = {"gauss_pivot", "lu_rows"}
#: seconds the capture and greedy planning of one row may take (``--plan-budget``; 0: no limit).
#: A row over it is not measured; its cell says how far fusionlab got in that time.
PLAN_BUDGET = {"seconds": 300.0}
VARIANTS = ["numpy", "numexpr", "numba", "loop", "fusionlab", "fusionlab_python", "fusionlab_blocks"]
COST_MODELS = ["bohrium", "max_contract", "max_locality", "robinson"]


# --- STREAM triad ----------------------------------------------------------------------------


@numba.njit(parallel=True, cache=True)
def _triad(a, b, c, s):  # type: ignore[no-untyped-def]
    for i in numba.prange(a.shape[0]):
        a[i] = b[i] + s * c[i]


def stream_triad(m: int = 20_000_000, rounds: int = 9) -> dict[str, float]:
    """STREAM triad ``a = b + s*c`` (24 bytes per element), NumPy and a prange loop; ``m``
    elements (480 MB: memory), and 1e6 (24 MB: this machine's last-level cache)."""
    small = 1_000_000
    sa, sb, sc = np.empty(small), np.random.default_rng(1).random(small), np.random.default_rng(2).random(small)
    cached = statistics.median(_rounds({"loop": lambda: _triad(sa, sb, sc, 3.0)}, 4 * rounds)["loop"])
    rng = np.random.default_rng(0)
    a, b, c = np.empty(m), rng.random(m), rng.random(m)
    tmp = np.empty(m)

    def numpy_triad() -> None:
        np.multiply(c, 3.0, out=tmp)
        np.add(b, tmp, out=a)

    times = _rounds({"numpy": numpy_triad, "loop": lambda: _triad(a, b, c, 3.0)}, rounds)
    loop = statistics.median(times["loop"])
    return {"elements": m, "numpy_s": statistics.median(times["numpy"]), "loop_s": loop,
            "gbs": 24 * m / loop / 1e9, "cached_elements": small, "cached_gbs": 24 * small / cached / 1e9}


# --- timing ----------------------------------------------------------------------------------


def _jiffies() -> tuple[int, int]:
    """CPU time (clock ticks) used so far by the whole machine and by this process."""
    vals = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    mine = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
    return sum(vals) - vals[3] - vals[4], int(mine[11]) + int(mine[12])


DISTURBED = {"rounds": 0, "thrown_away": 0}
#: how many extra rounds per round kept a disturbed measurement may take (``--retries``)
RETRIES = {"per_round": 3}


def round_order(names: list[str], k: int) -> list[str]:
    """The order of round ``k``: fusionlab's variants after the others, taking turns at being
    the first of them, then the whole rotated by ``k`` (each variant takes each place in turn).

    The first fusionlab variant after NumPy's or a loop's run finds its kernels' code and
    its pool's memory cold: in a fixed cyclic order the compiled driver was always that
    variant, and paid for it (LU at medium, the same Python driver in both columns: 18.6
    against 11.3 ms, load 1-3); k-means, all three columns block by block: 80 against 63 ms).

    >>> [round_order(["numpy", "loop", "fusionlab", "fusionlab_python"], k) for k in range(2)]
    [['numpy', 'loop', 'fusionlab', 'fusionlab_python'], ['loop', 'fusionlab_python', 'fusionlab', 'numpy']]
    """
    ours = [n for n in names if n.startswith("fusionlab")]
    seq = [n for n in names if not n.startswith("fusionlab")]
    if ours:
        j = k % len(ours)
        seq += ours[j:] + ours[:j]
    shift = k % len(seq) if seq else 0
    return seq[shift:] + seq[:shift]


def _rounds(fns: dict[str, Callable[[], object]], rounds: int, keep_all: bool = False) -> dict[str, list[float]]:
    """Each function once per round, round-robin (so a slow spell of the machine hits all),
    starting one place later each round, fusionlab's variants taking turns at running first
    after the others (:func:`round_order`: so none always runs after the same neighbour,
    whose memory traffic decides what is left in the cache).

    Other processes share these two cores: a round during which they used more than a
    tenth of a core is thrown away and run again after a pause (at most ``3 * rounds``
    extra rounds, ``--retries``; the rounds kept are then whatever the machine allowed). ``keep_all``
    keeps every round (the shared-machine column, whose competitor is meant to disturb).
    """
    times: dict[str, list[float]] = {k: [] for k in fns}
    extra = 0
    while len(next(iter(times.values()))) < rounds:
        try:
            busy0, mine0 = _jiffies()
        except OSError:  # not Linux: keep every round
            busy0 = mine0 = None
        t0 = time.perf_counter()
        got = {}
        for k in round_order(list(fns), DISTURBED["rounds"]):
            fn = fns[k]
            t = time.perf_counter()
            fn()
            got[k] = time.perf_counter() - t
        wall = time.perf_counter() - t0
        DISTURBED["rounds"] += 1
        if busy0 is not None and not keep_all and extra < RETRIES["per_round"] * rounds:
            busy1, mine1 = _jiffies()
            others = (busy1 - busy0) - (mine1 - mine0)   # ticks of other processes
            if others / os.sysconf("SC_CLK_TCK") > 0.1 * wall + 0.02:
                extra += 1
                DISTURBED["thrown_away"] += 1
                time.sleep(min(2.0, 0.25 * extra))
                continue
        for k, v in got.items():
            times[k].append(v)
    return times


def kernel_bytes(p: Plan, spec: Any) -> int:
    """The least memory traffic of one kernel call: each base's largest argument view, once
    if it is only read or only written, twice if both; recorded random values read once."""
    block = [p.program[i] for i in spec.instructions]
    reads = {v.base.name for ins in block for v in ins.reads()}
    writes = {v.base.name for ins in block for v in ins.writes()}
    largest: dict[str, int] = {}
    for v in spec.arguments:
        largest[v.base.name] = max(largest.get(v.base.name, 0), v.nbytes)
    total = sum(n * ((name in reads) + (name in writes)) for name, n in largest.items())
    for ins in block:
        if ins.opcode.name == "RANDOM":
            total += ins.outputs[0].nbytes
    return total


def share_draws(externals: Any, args: tuple[Any, ...]) -> int:
    """Point fusionlab's recorded random draws at the same memory the other variants read
    (an argument, or a row of one, with equal values): every variant then finds the same
    data in the cache, not its own copy that the others' traffic pushed out. Returns how
    many draws were shared."""
    shared = 0
    arrays = [a for a in args if isinstance(a, np.ndarray) and a.flags.c_contiguous]
    for key, draw in list(externals.arrays.items()):
        for a in arrays:
            rows = [a] if a.shape == draw.shape else list(a) if a.shape[1:] == draw.shape else []
            row = next((r for r in rows if r.dtype == draw.dtype and np.array_equal(r, draw)), None)
            if row is not None:
                externals.arrays[key] = row
                shared += 1
                break
    return shared


#: the competing process: a pure busy loop that ends by itself after ``{bound}`` seconds
#: (so that nothing keeps spinning if this script dies before it kills it)
COMPETITOR = "import time\nend = time.monotonic() + {bound}\nwhile time.monotonic() < end:\n    pass\n"


@contextlib.contextmanager
def competing_process(bound_s: float) -> Any:
    """One busy process for the duration of the block (at most ``bound_s`` seconds)."""
    proc = subprocess.Popen([sys.executable, "-c", COMPETITOR.format(bound=round(bound_s, 1))])
    try:
        time.sleep(0.3)  # until it spins
        yield proc
    finally:
        proc.kill()
        proc.wait()


#: seconds of rounds the shared-machine column aims at: a row of a millisecond gets enough
#: rounds for a stable median (3 rounds of 0.4 ms rows gave 1.6x and 1.9x on two runs)
SHARED_SECONDS = 2.0


def shared_rounds(round_s: float, rounds: int) -> int:
    """Rounds of the shared-machine column: at least ``max(3, rounds // 2 + 1)``, and for
    short rows as many as fill about :data:`SHARED_SECONDS` (at most 101).

    >>> shared_rounds(1.0, 5), shared_rounds(0.05, 5), shared_rounds(0.0016, 5)
    (3, 40, 101)
    """
    least = max(3, rounds // 2 + 1)
    return max(least, min(101, int(SHARED_SECONDS / max(round_s, 1e-6))))


def shared_machine(fns: dict[str, Callable[[], object]], quiet: dict[str, float], rounds: int) -> dict[str, Any]:
    """NumPy, the fused run and (where given) the hand-written loop, round-robin, while one
    competing process spins. The loop's speed-up over NumPy is the row's bound on the
    cores left: a fused run that keeps everything of a step in registers cannot beat it."""
    bound = min(300.0, 10.0 + 4 * rounds * sum(quiet.values()))
    started = time.perf_counter()
    with competing_process(bound) as proc:
        times = _rounds(fns, rounds, keep_all=True)
        alive = proc.poll() is None
    med = {k: statistics.median(v) for k, v in times.items()}
    out = {"median_s": med, "times_s": times, "speedup": med["numpy"] / med["fusionlab"],
           "fusionlab_slowdown": med["fusionlab"] / quiet["fusionlab"], "numpy_slowdown": med["numpy"] / quiet["numpy"],
           "competitor_ran_throughout": alive, "seconds": time.perf_counter() - started}
    if "loop" in med:
        out["loop_speedup"] = med["numpy"] / med["loop"]
    return out


def _free_threads(fn: Callable[[], object]) -> Callable[[], object]:
    """``fn`` with Numba's threads sized to the cores free now and its static schedule: the
    hand-written loop under the competitor as the fused run's driver sizes its threads
    (with every thread, the loop waits for the one that shares the competitor's core)."""
    def call() -> object:
        configure(None)
        return fn()
    return call


def _all_threads(fn: Callable[[], object]) -> Callable[[], object]:
    """``fn`` run as a Numba user's code runs: every thread, Numba's static schedule.
    fusionlab's driver sets Numba's (process-wide) thread count to the cores it finds free
    and a chunk size for its loops, which must not leak into the other variants."""
    def call() -> object:
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        numba.set_parallel_chunksize(0)
        return fn()
    return call


def measure(name: str, preset: str, rounds: int, cache: KernelCache) -> dict[str, Any]:
    """Every variant of one workload at one preset, in this process; a row that cannot be
    measured says why (``error``) instead of stopping the run."""
    load = os.getloadavg()[0]
    try:
        row = _measure(name, preset, rounds, cache)
    except Exception as exc:  # a broken row is reported, the others still run
        w = get_workload(name)
        message = str(exc).splitlines()[0][:300] if str(exc) else ""
        row = {"workload": name, "title": w.title, "preset": preset, "kwargs": w.kwargs(preset),
               "error": f"{type(exc).__name__}: {message}"}
    row["measured"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    row["load_before"] = load
    return row


class PlanBudgetExceeded(Exception):
    """The capture and planning of a row took longer than ``--plan-budget``."""


class _Alarm(BaseException):
    """The timer's signal: a BaseException, so that no ``except Exception`` in the capture
    (which runs user code) or the partition absorbs it."""


@contextlib.contextmanager
def _time_limit(seconds: float) -> Any:
    """Raise :class:`_Alarm` in this (main) thread after ``seconds`` (a SIGALRM timer: the
    capture and the partition are Python code, which the signal interrupts)."""
    if seconds <= 0 or not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        raise _Alarm()

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def capture_and_plan(name: str, preset: str, budget_s: float) -> tuple[Any, Built]:
    """The row's capture and what the pipeline built of it (greedy partition, Bohrium cost
    model, every pass, as ``fusionlab run`` runs it), or :class:`PlanBudgetExceeded` saying
    how far they got in ``budget_s`` seconds."""
    started = time.perf_counter()
    cap = None
    try:
        with _time_limit(budget_s):
            with contextlib.redirect_stdout(io.StringIO()):
                cap = capture(get_workload(name).script(preset), {})
            captured = time.perf_counter() - started
            built = build(cap, run_config("greedy", "bohrium", DEFAULT_MIN_SIZE, reroll=True))
    except _Alarm:
        if cap is None:
            raise PlanBudgetExceeded(f"fusionlab's capture did not finish in {budget_s:.0f} s (--plan-budget)") from None
        sizes = sorted((len(b.instructions) for b in cap.batches), reverse=True)
        raise PlanBudgetExceeded(
            f"fusionlab's greedy partition did not finish in {budget_s - captured:.0f} s after a {captured:.0f} s "
            f"capture ({len(sizes)} batches, {sum(sizes):,} instructions, the largest batch {sizes[0]:,}; "
            f"--plan-budget {budget_s:.0f} s)") from None
    return cap, built


def _measure(name: str, preset: str, rounds: int, cache: KernelCache) -> dict[str, Any]:
    w = get_workload(name)
    kw = w.kwargs(preset)
    cap, built = capture_and_plan(name, preset, PLAN_BUDGET["seconds"])
    # the inputs with the arrays of the literals rerolling made
    plans, inputs, externals = list(built.plans), dict(built.inputs), built.prepared.externals

    def fused(timings: dict[str, float]) -> None:
        # block by block, each kernel timed, with the threads and per-loop chunks the fused
        # run's driver uses (not whatever the last variant or the shared-machine column left)
        choice = configure(None, elements=1)
        chunks = choice.threads * DEFAULT_CHUNKS_PER_THREAD if choice.chunksize else 0
        st = Storage(inputs, pool=cache.pool)
        for p in plans:
            run_plan(p, st, externals, cache, timings, chunks=chunks)

    refs = REFS[name]
    args = refs.args(kw)
    shared_draws = share_draws(externals, args)
    fns: dict[str, Callable[[], object]] = {"numpy": lambda: refs.numpy(*args)}
    notes = []
    if ne is not None and refs.numexpr is not None:
        fns["numexpr"] = lambda: refs.numexpr(*args)
    else:
        notes.append("numexpr not installed" if ne is None else "numexpr: no variant written for the corpus rows"
                     if name in CORPUS_ROWS else "numexpr: not expressible")
    try:  # compiled here: Numba may refuse the NumPy code (the row's Numba cell says why)
        refs.numba(*args)
        fns["numba"] = _all_threads(lambda: refs.numba(*args))
    except (numba.core.errors.NumbaError, NotImplementedError) as exc:  # typing, or lowering (a strides setter)
        notes.append(f"{w.title}: Numba refuses the NumPy code ({numba_refusal(exc)})")
    fns["loop"] = _all_threads(lambda: refs.loop(*args))
    # as compare() times it: one Driver per partition, called once per run
    fns["fusionlab"] = Driver(plans, externals, cache, inputs, mode="numba")
    fns["fusionlab_python"] = Driver(plans, externals, cache, inputs, mode="python")
    fns["fusionlab_blocks"] = Driver(plans, externals, cache, inputs, mode="blocks")

    compile_s, values = {}, {}
    for k, fn in fns.items():   # warm-up: compiles (Numba, fusionlab's kernels)
        t = time.perf_counter()
        got = fn()
        compile_s[k] = time.perf_counter() - t
        if isinstance(got, dict):   # fusionlab: its synced arrays, checked against the reference below
            continue
        if got is not None:
            values[k] = float(got)
    times = _rounds(fns, rounds)
    med = {k: statistics.median(v) for k, v in times.items()}
    # fusionlab's result is checked against the reference executor; the others against NumPy
    checked = run(cap, plans=plans, check=True, cache=cache, driver="numba", config=built.config)   # the plans' programs
    if checked.driver != "compiled driver":
        notes.append(f"{w.title}: fusionlab ran {checked.driver}")
    plain_check = getattr(checked, "check", None)   # against plain NumPy, where run() offers it
    shared = shared_machine({"numpy": fns["numpy"], "fusionlab": fns["fusionlab"],
                             "loop": _free_threads(lambda: refs.loop(*args))},
                            {"numpy": med["numpy"], "fusionlab": med["fusionlab"], "loop": med["loop"]},
                            shared_rounds(med["numpy"] + med["fusionlab"] + med["loop"], rounds))
    rel_err = {k: abs(v - values["numpy"]) / max(abs(values["numpy"]), 1e-300) for k, v in values.items()}
    loose = value_tolerance(name)
    for k, e in rel_err.items():
        if e > loose:
            notes.append(f"{w.title} {preset}: {k}'s value differs from NumPy's by {e:.1e} (relative)"
                         + (" — Numba's parfor fusion of the in-place updates of aliased views reads values "
                            "already updated" if (name, k) == ("gray_scott", "numba") else ""))
    # the kernels: time per call (one more fused run, timed kernel by kernel) and least bytes
    timings: dict[str, float] = {}
    calls: dict[str, int] = {}
    nbytes: dict[str, int] = {}
    sizes: dict[str, int] = {}
    instructions: dict[str, int] = {}
    for p in plans:
        for bp in p.blocks:
            if bp.kernel is not None:
                key = bp.kernel.key
                calls[key] = calls.get(key, 0) + 1
                nbytes[key] = nbytes.get(key, 0) + kernel_bytes(p, bp.kernel)
                sizes[key] = int(np.prod(bp.kernel.extents))
                instructions[key] = sum(1 for i in bp.instructions if p.program[i].opcode.name not in ("DEL", "SYNC"))
    kernel_runs = []
    for _ in range(5):
        t: dict[str, float] = {}
        fused(t)
        kernel_runs.append(t)
    for key in calls:   # the fastest of five runs: robust to other processes' bursts
        timings[key] = min(r.get(key, 0.0) for r in kernel_runs)
    kernels = [{"key": k, "calls": calls[k], "elements": sizes[k], "instructions": instructions[k],
                "seconds": timings[k], "bytes": nbytes[k], "gbs": nbytes[k] / timings[k] / 1e9 if timings[k] else 0.0}
               for k in sorted(calls, key=lambda k: -timings[k])]
    return {
        "workload": name, "title": w.title, "preset": preset, "kwargs": kw, "rounds": rounds,
        "median_s": med, "min_s": {k: min(v) for k, v in times.items()}, "times_s": times,
        "speedup": {k: med["numpy"] / v for k, v in med.items()},
        "warmup_s": compile_s, "relative_error_vs_numpy": rel_err,
        "fusionlab_max_abs_error_vs_reference": checked.max_abs_error,
        "fusionlab_kernels": checked.kernels, "fusionlab_kernel_s": sum(timings.values()),
        "kernels": kernels, "notes": notes, "draws": len(externals.arrays), "draws_shared": shared_draws,
        "fallbacks": checked.fallbacks, "library_kernels": checked.library_kernels, "shared_machine": shared,
        "matches_plain_numpy": None if plain_check is None else bool(plain_check.ok),
        "bound": bound_of(name),
    }


# --- the README section -----------------------------------------------------------------------


def _machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"{cpu}, {os.cpu_count()} cores, Python {platform.python_version()}, NumPy {np.__version__}, "
            f"Numba {numba.__version__} ({numba.config.THREADING_LAYER} threading, {numba.config.NUMBA_NUM_THREADS} threads)"
            + (f", numexpr {ne.__version__} ({ne.nthreads} threads)" if ne is not None else ", numexpr not installed"))


def _cell(r: dict[str, Any], k: str) -> str:
    if k not in r["median_s"]:
        return "n/a"
    return f"{r['median_s'][k] * 1e3:.1f} ({r['speedup'][k]:.1f}x)"


def _spread(r: dict[str, Any], k: str) -> str:
    """The middle half of the per-round ratios fusionlab / ``k`` (both ran in each round)."""
    ratios = sorted(f / o for f, o in zip(r["times_s"]["fusionlab"], r["times_s"][k]))
    if len(ratios) < 2:
        return ""
    q = statistics.quantiles(ratios, n=4)
    return f"[{q[0]:.2f}-{q[2]:.2f}]"


def _ratio(r: dict[str, Any], k: str) -> str:
    m = r["median_s"]
    if k not in m:
        return "n/a"
    return f"{m['fusionlab'] / m[k]:.2f} {_spread(r, k)}"


def _shared_cell(r: dict[str, Any]) -> str:
    sh = r.get("shared_machine")
    if not sh:
        return "not measured (an earlier run, before this column)"
    return f"{sh['median_s']['fusionlab'] * 1e3:.1f} ({sh['speedup']:.1f}x)"


def workload_table(results: list[dict[str, Any]]) -> list[str]:
    rows = [
        "| workload | preset | NumPy ms | numexpr | Numba on the NumPy code | hand-written loop | fusionlab "
        "| fusionlab / Numba-on-NumPy | fusionlab / loop | fusionlab, Python driver | fusionlab, block by block "
        "| shared machine: fusionlab ms (speed-up) |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        if "error" in r:
            rows.append(f"| {r['title']} | {r['preset']} | not measured: {r['error']} |" + " |" * 9)
            continue
        m = r["median_s"]
        rows.append(
            f"| {r['title']} | {r['preset']} | {m['numpy'] * 1e3:.1f} | {_cell(r, 'numexpr')} | {_cell(r, 'numba')} | "
            f"{_cell(r, 'loop')} | **{_cell(r, 'fusionlab')}** | {_ratio(r, 'numba')} | {_ratio(r, 'loop')} | "
            f"{_cell(r, 'fusionlab_python')} | {_cell(r, 'fusionlab_blocks')} | {_shared_cell(r)} |"
        )
    return rows


def value_tolerance(name: str) -> float:
    """How far (relative) a variant's value may be from NumPy's: float32 rows are looser, as
    Numba computes them in float64 (no NEP 50)."""
    return 1e-4 if name.endswith("f32") else 1e-6


def numba_differs(r: dict[str, Any]) -> bool:
    """Whether Numba on the NumPy code gave another answer than NumPy (Gray-Scott: its parfor
    fusion of in-place updates through aliased views reads values already updated)."""
    return r.get("relative_error_vs_numpy", {}).get("numba", 0.0) > value_tolerance(r["workload"])


def misses(r: dict[str, Any]) -> list[str]:
    """The issue's targets a measured row misses, each with what the figures say about why."""
    if "error" in r:
        return [f"not measured: {r['error']}"]
    m, out = r["median_s"], []
    outside = 1.0 - r["fusionlab_kernel_s"] / m["fusionlab"] if m["fusionlab"] else 0.0
    context = []
    if r.get("fallbacks"):
        context.append(f"{len(r['fallbacks'])} blocks ran as NumPy ({r['fallbacks'][0]})")
    if outside > 0.3:
        context.append(f"{outside:.0%} of the fused run is outside the kernels")
    why = WHY.get(r["workload"], "")
    tail = "; ".join(x for x in [why, *context] if x)
    if m["fusionlab"] > m["numpy"]:
        out.append(f"slower than NumPy ({m['numpy'] / m['fusionlab']:.1f}x)")
    numba_wrong = numba_differs(r)
    if r.get("load_before", 0.0) > LOADED:
        pass  # Numba's and the loop's threads stall under load: those targets are not judged (README)
    else:
        if "numba" in m and m["fusionlab"] > m["numba"] and not numba_wrong:
            out.append(f"slower than Numba on the NumPy code ({m['fusionlab'] / m['numba']:.2f}x)")
        if m["fusionlab"] > 1.3 * m["loop"]:
            out.append(f"{m['fusionlab'] / m['loop']:.2f}x the hand-written loop")
    sh = r.get("shared_machine")
    if sh and bound_of(r["workload"]) == "memory" and sh["speedup"] < 2.0:
        out.append(f"shared machine {sh['speedup']:.1f}x NumPy (fused {sh['fusionlab_slowdown']:.1f}x slower than "
                   f"quiet, NumPy {sh['numpy_slowdown']:.1f}x)" + _shared_bound(sh))
    if r.get("matches_plain_numpy") is False:
        out.append("fused values differ from plain NumPy")
    if numba_wrong and "numba" in m and m["fusionlab"] > m["numba"]:
        # a faster wrong answer is no target: say so beside the misses, not as one
        err = r["relative_error_vs_numpy"]["numba"]
        context.append(f"Numba on the NumPy code ({m['fusionlab'] / m['numba']:.2f}x faster) is not a target here: "
                       f"its value differs from NumPy's by {err:.1e} (relative)")
        tail = "; ".join(x for x in [why, *context] if x)
    return [*out[:-1], f"{out[-1]} — {tail}"] if out and tail else out


def _shared_bound(sh: dict[str, Any]) -> str:
    """What the hand-written loop under the same competitor says about a shared-machine miss:
    below 2x NumPy too, the target is past what one free core allows this row."""
    if "loop_speedup" not in sh:
        return ""
    loop = f"the hand-written loop under the competitor {sh['median_s']['loop'] * 1e3:.1f} ms, {sh['loop_speedup']:.1f}x"
    if sh["loop_speedup"] < 2.0:
        return f"; {loop}: below 2x too, the row's bound with the cores left"
    return f"; {loop}"


def _loop_cell(sh: dict[str, Any]) -> str:
    if "loop_speedup" not in sh:
        return "not measured"
    return f"{sh['median_s']['loop'] * 1e3:.1f} ({sh['loop_speedup']:.1f}x)"


def targets_table(results: list[dict[str, Any]]) -> list[str]:
    rows = ["| workload | preset | load before | bound by | speed-up | shared: NumPy ms | shared: fusionlab ms "
            "| shared speed-up | shared: loop ms (speed-up) | fused slowed by the competitor | targets |",
            "| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in results:
        sh = r.get("shared_machine")
        if "error" in r or not sh:
            miss = "; ".join(misses(r)) or "shared: not measured (an earlier run, before this column)"
            rows.append(f"| {r['title']} | {r['preset']} | | | | | | | | | {miss} |")
            continue
        load = f"{r['load_before']:.1f}" if "load_before" in r else ""
        bound = bound_of(r["workload"])
        miss = misses(r)
        verdict = "; ".join(miss) if miss else "met"
        if r.get("load_before", 0.0) > LOADED:
            verdict += f" (against Numba and the loop: not judged, load {r['load_before']:.1f})"
        rows.append(
            f"| {r['title']} | {r['preset']} | {load} | {bound} | {r['speedup']['fusionlab']:.1f}x | "
            f"{sh['median_s']['numpy'] * 1e3:.1f} | {sh['median_s']['fusionlab'] * 1e3:.1f} | **{sh['speedup']:.1f}x** | "
            f"{_loop_cell(sh)} | {sh['fusionlab_slowdown']:.2f}x | {verdict} |"
        )
    return rows


def kernel_table(results: list[dict[str, Any]], triad_gbs: float) -> list[str]:
    rows = [
        "| workload | preset | fused run ms | in kernels ms | kernels (distinct) | heaviest kernel: instructions, "
        "elements | its ms per call | its least MB per call | its GB/s | all kernels GB/s | of triad |",
        "| --- | --- | ---: | ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in results:
        ks = r.get("kernels")
        if not ks:
            continue
        top = ks[0]
        total_b = sum(k["bytes"] for k in ks)
        total_s = sum(k["seconds"] for k in ks)
        gbs = total_b / total_s / 1e9 if total_s else 0.0
        rows.append(
            f"| {r['title']} | {r['preset']} | {r['median_s']['fusionlab'] * 1e3:.1f} | {total_s * 1e3:.1f} | "
            f"{sum(k['calls'] for k in ks)} ({len(ks)}) | {top['instructions']}, {top['elements']:,} | "
            f"{top['seconds'] / top['calls'] * 1e3:.2f} | {top['bytes'] / top['calls'] / 1e6:.1f} | {top['gbs']:.1f} | "
            f"{gbs:.1f} | {gbs / triad_gbs:.0%} |"
        )
    return rows


def cost_model_data(rounds: int, cache: KernelCache) -> dict[str, Any]:
    data = {}
    for name in WORKLOAD_NAMES:
        with contextlib.redirect_stdout(io.StringIO()):
            cap = capture(get_workload(name).script("medium"), {})
        for attempt in range(3):   # again if other processes were busy meanwhile (as in _rounds)
            busy0, mine0 = _jiffies()
            t0 = time.perf_counter()
            records = compare(cap, ["linear", "greedy", "optimal"], COST_MODELS, repeat=rounds, cache=cache,
                              driver="numba")
            busy1, mine1 = _jiffies()
            others = ((busy1 - busy0) - (mine1 - mine0)) / os.sysconf("SC_CLK_TCK")
            if others <= 0.1 * (time.perf_counter() - t0) + 0.02:
                break
            DISTURBED["thrown_away"] += 1
        data[name] = [r.to_dict() for r in records]
    return data


def cost_model_rows(data: dict[str, Any]) -> list[str]:
    rows = []
    for name, records in data.items():
        base = records[0]["median_seconds"]
        for alg in ("linear", "greedy", "optimal"):
            cells = [f"{r['median_seconds'] * 1e3:.1f}" for m in COST_MODELS for r in records
                     if (r["cost_model"], r["algorithm"]) == (m, alg)]
            rows.append(f"| {get_workload(name).title} | {alg} | {base * 1e3:.1f} | " + " | ".join(cells) + " |")
    return rows


def _row_names(spec: str) -> list[str]:
    names: list[str] = []
    for part in spec.split(","):
        for name in GROUPS.get(part.strip(), [part.strip()]):
            if name not in REFS:
                raise SystemExit(f"no benchmark row {name!r}; rows: {', '.join(REFS)} (groups: paper, corpus)")
            if name not in names:
                names.append(name)
    return names


def merge(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows of ``old`` with those measured again replaced, in the table's order."""
    order = [*WORKLOAD_NAMES, *CORPUS_ROWS]
    rows = {(r["workload"], r["preset"]): r for r in old}
    rows.update({(r["workload"], r["preset"]): r for r in new})
    presets = ["tiny", "medium", "large"]
    return sorted(rows.values(), key=lambda r: (presets.index(r["preset"]) if r["preset"] in presets else 9,
                                                order.index(r["workload"]) if r["workload"] in order else 99))


def rerun_notes(stored: dict[str, Any], note: str, results: list[dict[str, Any]], merged: list[dict[str, Any]],
                rows: str) -> tuple[str, list[str]]:
    """The header's note and its list of partial reruns: a run measuring every stored row
    starts both afresh; a run of some rows keeps the last full run's note and adds itself
    to the reruns (the table then mixes both runs' rows, and the header says which).

    >>> a, b = {"workload": "sor", "preset": "medium"}, {"workload": "heat", "preset": "medium"}
    >>> rerun_notes({"elapsed_note": "full."}, "part.", [a, b], [a, b], "sor,heat")
    ('part.', [])
    >>> note, reruns = rerun_notes({"elapsed_note": "full.", "reruns": ["r1"]}, "part.", [a], [a, b], "sor")
    >>> note, reruns[0], reruns[1].endswith("of the rows sor: part.")
    ('full.', 'r1', True)
    """
    measured = {(r["workload"], r["preset"]) for r in results}
    if all((r["workload"], r["preset"]) in measured for r in merged) or "elapsed_note" not in stored:
        return note, []
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    return stored["elapsed_note"], [*stored.get("reruns", []), f"**Rerun {when}** of the rows {rows}: {note}"]


def report(data: dict[str, Any], elapsed_note: str) -> str:
    """The README section, drawn from ``backend.json``'s content."""
    results, triad = data["workloads"], data["triad"]
    measured = [r for r in results if "median_s" in r]
    notes = sorted({n for r in measured for n in r.get("notes", [])})
    loads = [r["load_before"] for r in results if "load_before" in r]
    dates = sorted({r["measured"][:10] for r in results if "measured" in r})
    body = [
        f"Measured {', '.join(dates) or time.strftime('%Y-%m-%d')} on {data['machine']}; {elapsed_note} "
        "Medians of the rounds (at large two fewer than at medium, at least 3), each variant once "
        "per round, after a compiling warm-up; speed-ups over NumPy in brackets, measured in the same rounds. "
        "Rerun: `make bench`, or `.venv/bin/python benchmarks/bench_backend.py [--presets medium] "
        "[--rows paper|corpus|sor,...] [--quick]` (`pip install -e '.[bench]'` for numexpr). The machine is shared: "
        "rounds during which other processes used more than a tenth of a core were thrown away and rerun; "
        "run-to-run spread is still about ±15%."
        + (f" Load average (1 min) before each row: {min(loads):.1f} to {max(loads):.1f}"
           + (" — other processes were busy during this run, so the figures are noisier than usual."
              if max(loads) > LOADED else ".") if loads else "")
        + "".join(f" {r}" for r in data.get("reruns", [])),
        *(["", "**Read the Numba and loop columns of rows measured under load with care.** Numba on the NumPy code "
            "and the hand-written loops run as a Numba user's code runs: every thread, Numba's static schedule. "
            "When other processes hold the cores, each of their parallel loops waits for its descheduled thread "
            "(in a check during this run, a 1-D stencil loop took 7x as long on two threads as on one), while fusionlab's driver sizes its threads "
            "to the cores it finds free and hands out chunks (`fusionlab/backend/numba/threads.py`). Under load, the "
            "ratios to Numba and to the loop then compare threading policies more than code; the targets against "
            "them can only be judged on rows measured on a quiet machine (the column `measured` of `results/backend.json` "
            "and the load figure above say which)."]
          if loads and max(loads) > LOADED else []),
        "",
        "### Workloads: ms per run (speed-up over NumPy)",
        "",
        "The variants do the same work from the same random draws (`bench_backend_refs.py`): NumPy is the "
        "workload's code; Numba is that code under `@njit(parallel=True)`; the loop is a hand-written fused "
        "`prange` loop; fusionlab runs the captured program (greedy partition, Bohrium cost model), its kernels "
        "called from the run's compiled driver (`driver=\"numba\"`; then the same driver run as Python, the "
        "default of `run` and `compare`, and block by block from Python). Where the workload draws random numbers, "
        "fusionlab reads its recorded draws from the very arrays the other variants read, so all find the same data "
        "in the cache. Each round starts one variant later than the last, and fusionlab's three columns take turns "
        "at running first after the others (whose traffic leaves its kernels and memory cold). The two ratio "
        "columns are time ratios of "
        "the medians (at most 1.0 and at most 1.3 are the issue's targets), and in brackets the middle half "
        "(quartiles) of the same ratio taken round by round. The first eight rows of each preset are the paper's "
        "workloads; the others are the realistic corpus (`fusionlab.workloads.corpus`, issue 13), every program of "
        "it, whose rows have no numexpr variant. Where Numba refuses the NumPy code, the notes give its reason. "
        "The Gauss and LU rows return sum(x) + residual and sum(U) + error (the programs' residuals alone are "
        "rounding noise no two orders of the arithmetic share), and their loops are serial: on a 200 x 200 "
        "matrix a parallel region per column costs more than the column's work. A row whose capture and greedy planning take "
        f"longer than {PLAN_BUDGET['seconds']:.0f} s (`--plan-budget`) is not measured and says how far fusionlab got. "
        "The last column is the shared machine: the fused run while one competing busy process "
        "spins (next table).",
        "",
        *workload_table(results),
        *(["", "Notes: " + "; ".join(notes) + "."] if notes else []),
        "",
        *(["Corpus programs without a row: " + "; ".join(f"`{k}`: {v}" for k, v in CORPUS_NOT_ROWS.items()) + ".",
           ""] if CORPUS_NOT_ROWS else []),
        "### Shared machine: one competing busy process",
        "",
        "After a row's rounds, NumPy and the fused run (compiled driver) are timed again, round-robin, while one "
        "other process spins on one of the cores (`while time.monotonic() < end: pass`, started and killed by the "
        "script); rounds are not thrown away here, and a short row gets as many as fill about "
        f"{SHARED_SECONDS:.0f} s (at least half the row's rounds, at most 101: `shared_rounds`). \"fused slowed\" is the fused median with the competitor over "
        "the one of the row's first rounds (whose speed-up over NumPy is \"speed-up\"); \"load before\" is the "
        "machine's load average (1 min) when the row started. Target (issue 13): at least 2x NumPy on the "
        "memory-bound rows (the \"bound\" column: rows limited by arithmetic, by a BLAS matrix product in every "
        "variant, or by the Python loop around small operations are not memory-bound); fused at least as fast as "
        "Numba on the NumPy code and within 1.3x of the loop on every row. \"shared: loop\" is the hand-written "
        "loop timed in the same rounds, its threads sized to the free cores as the fused run's are: where it too "
        "stays below 2x NumPy, one free core cannot give this row the target. The last column lists the targets a "
        "row misses, and what the measurements say about why.",
        "",
        *targets_table(results),
        "",
        "### Bandwidth: STREAM triad and the fused kernels",
        "",
        f"STREAM triad `a = b + s*c`, {triad['elements']:.0e} elements: NumPy {triad['numpy_s'] * 1e3:.1f} ms, "
        f"prange loop {triad['loop_s'] * 1e3:.1f} ms = **{triad['gbs']:.1f} GB/s** (24 bytes per element); "
        f"with {triad['cached_elements']:.0e} elements (24 MB, inside this machine's large last-level cache) "
        f"**{triad['cached_gbs']:.1f} GB/s**.",
        "",
        "Kernels are timed one by one in five more fused runs, block by block (the fastest of the five per "
        "kernel); \"fused run\" is the compiled driver's median above. "
        "A kernel's least traffic counts each base it touches once per direction (read, written), through its "
        "largest view; contracted temporaries count nothing. Effective bandwidth is that over the kernel's time. "
        "Arrays of a few MB stay in the last-level cache between kernels, so stencils can pass the memory "
        "triad; strided views (SOR's quarter grids) move whole cache lines for half their elements, which "
        "this count does not charge. Compute-bound kernels (Black-Scholes, Leibniz: scalar `exp`, `log`, divisions) "
        "are far below either triad by nature. \"of triad\" is against the in-cache triad.",
        "",
        *kernel_table(measured, triad["cached_gbs"]),
    ]
    if data.get("cost_models"):
        body += [
            "",
            "### Time per cost model (ms) under linear, greedy and optimal: the paper's Fig. 18-20",
            "",
            f"Measured {data.get('cost_models_measured', 'in an earlier run')}. "
            "Preset `medium`, `compare(..., driver=\"numba\")` (NumPy eager is the captured source run plainly, "
            "random draws included); medians of 3 runs. `results/cost_models.png` draws the same numbers.",
            "",
            "| workload | algorithm | NumPy | bohrium | max_contract | max_locality | robinson |",
            "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
            *cost_model_rows(data["cost_models"]),
        ]
    return "\n".join(body)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--presets", default=None, help="comma-separated; default medium,large (--quick: tiny)")
    ap.add_argument("--rounds", type=int, default=None, help="rounds at medium (large: two fewer); --quick: 3")
    ap.add_argument("--rows", "--workloads", dest="rows", default=DEFAULT_ROWS,
                    help="workload names and the groups 'paper' and 'corpus', comma-separated")
    ap.add_argument("--quick", action="store_true", help="tiny preset, 3 rounds, no cost models, print only")
    ap.add_argument("--no-cost-models", action="store_true", help="skip (and keep the stored) Fig. 18-20 table")
    ap.add_argument("--no-readme", action="store_true", help="print, write nothing")
    ap.add_argument("--report-only", action="store_true", help="redraw the README section from backend.json")
    ap.add_argument("--plan-budget", type=float, default=PLAN_BUDGET["seconds"],
                    help="seconds a row's capture and greedy planning may take (0: no limit); over it, the row "
                         "is not measured and says how far fusionlab got")
    ap.add_argument("--retries", type=int, default=3,
                    help="extra rounds per round allowed for rounds disturbed by other processes (0: keep all)")
    args = ap.parse_args()
    RETRIES["per_round"] = args.retries
    PLAN_BUDGET["seconds"] = args.plan_budget
    results_dir = HERE / "results"
    stored_path = results_dir / "backend.json"
    stored = json.loads(stored_path.read_text()) if stored_path.exists() else {}
    if args.report_only:
        print(write_section("bench_backend", report(stored, stored.get("elapsed_note", "")),
                            "## Fused execution (`bench_backend.py`)"))
        return
    presets = (args.presets or ("tiny" if args.quick else "medium,large")).split(",")
    rounds = args.rounds or (3 if args.quick else 11)
    names = _row_names(args.rows)
    started = time.perf_counter()
    cache = KernelCache()
    triad = stream_triad(2_000_000, 3) if args.quick else stream_triad()
    print(f"STREAM triad: {triad['gbs']:.1f} GB/s", file=sys.stderr)
    results = []
    for preset in presets:
        for name in names:
            r = measure(name, preset, rounds if preset != "large" else max(rounds - 2, 3), cache)
            results.append(r)
            if "error" in r:
                print(f"{name:18s} {preset:7s} not measured: {r['error']}", file=sys.stderr)
                continue
            sh = r["shared_machine"]
            print(f"{name:18s} {preset:7s} " + "  ".join(f"{k} {v * 1e3:7.1f}ms ({r['speedup'][k]:4.1f}x)"
                                                       for k, v in r["median_s"].items())
                  + f"  shared: {sh['speedup']:.1f}x (fused {sh['fusionlab_slowdown']:.2f}x slower"
                  + (f", loop {sh['loop_speedup']:.1f}x" if "loop_speedup" in sh else "") + ")", file=sys.stderr)
    model_data: dict[str, Any] = {}
    if not (args.no_cost_models or args.quick):
        model_data = cost_model_data(3, cache)
    elapsed = time.perf_counter() - started
    note = (f"`bench_backend.py --rows {args.rows} --presets {','.join(presets)} --rounds {rounds} "
            f"--retries {args.retries}` ran {elapsed / 60:.1f} minutes "
            f"({DISTURBED['thrown_away']} of {DISTURBED['rounds']} rounds thrown away for other processes' load).")
    if args.no_readme or args.quick:
        print(report({"machine": _machine(), "triad": triad, "workloads": results, "cost_models": model_data}, note))
        return
    merged = merge(stored.get("workloads", []), results)
    note, reruns = rerun_notes(stored, note, results, merged, args.rows)
    data = {
        "machine": _machine(), "triad": triad, "workloads": merged, "reruns": reruns,
        "cost_models": model_data or stored.get("cost_models", {}), "elapsed_note": note,
        "cost_models_measured": time.strftime("%Y-%m-%d") if model_data else stored.get("cost_models_measured",
                                                                                         "in an earlier run"),
    }
    results_dir.mkdir(exist_ok=True)
    stored_path.write_text(json.dumps(data, indent=1))
    if model_data:
        _plot(model_data, results_dir / "cost_models.png")
    print(write_section("bench_backend", report(data, note), "## Fused execution (`bench_backend.py`)"))


def _plot(data: dict, path: Path) -> None:  # type: ignore[type-arg]
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 3, figsize=(15, 4.5), sharey=True)
    names = list(data)
    for ax, alg in zip(axes, ("linear", "greedy", "optimal")):
        width = 0.8 / len(COST_MODELS)
        for j, m in enumerate(COST_MODELS):
            ratios = []
            for n in names:
                base = data[n][0]["median_seconds"]
                row = next(r for r in data[n] if r["cost_model"] == m and r["algorithm"] == alg)
                ratios.append(row["median_seconds"] / base)
            ax.bar(np.arange(len(names)) + j * width, ratios, width, label=m)
        ax.axhline(1.0, color="black", linewidth=0.8)
        ax.set_title(f"{alg} (time relative to NumPy eager)")
        ax.set_xticks(np.arange(len(names)) + 0.4, [n.replace("_", " ") for n in names], rotation=45, ha="right")
    axes[0].set_ylabel("fused time / NumPy time")
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)


if __name__ == "__main__":
    main()
