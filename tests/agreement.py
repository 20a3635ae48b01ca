"""The partitioners and the backend agree (issue 14): every block of every algorithm's
partition compiles to one kernel (only OPAQUE instructions run with NumPy), the arrays a
cost model counts as contracted are never allocated by the run, and the run equals the
reference executor."""

from __future__ import annotations

import warnings
from typing import Any, Iterable, Mapping

import numpy as np

from fusionlab.ir.bytecode import OpFamily, Program
from fusionlab.costs import access_info, block_info
from fusionlab.backend.numba.plan import KernelCache, NumpyRuns, plan, run_plan
from fusionlab.runtime.reference import Externals, Storage, run_reference
from fusionlab.partition import partition

CACHE = KernelCache()

#: options keeping the searches short on the captured workloads
OPTIONS: dict[str, dict[str, Any]] = {"optimal": {"max_nodes": 2_000}, "ilp": {"time_limit": 10}}


def check_blocks_compile(program: Program, blocks: Iterable[Iterable[int]], algorithm: str) -> Any:
    """The plan of ``blocks`` (min_size=0); fails unless every block that computes anything
    but OPAQUE instructions has a kernel."""
    p = plan(program, [tuple(b) for b in blocks], min_size=0)
    for bp in p.blocks:
        computing = [i for i in bp.instructions if program[i].opcode not in OpFamily.SYSTEM]
        if not computing or all(program[i].opcode in OpFamily.OPAQUE for i in computing):
            continue
        assert not any(program[i].opcode in OpFamily.OPAQUE for i in computing), (algorithm, bp.numbered)
        # a block of recorded random draws only lends them to their bases: nothing to run
        lent = bp.numpy is NumpyRuns.NOTHING_TO_COMPUTE and set(bp.bind) == set(computing)
        assert bp.compiled is not None or lent, (algorithm, bp.numbered, bp.reason)
    return p


def check_agreement(batches: list[Program], algorithms: Iterable[str], inputs: Mapping[str, np.ndarray] | None = None,
                    externals: Externals | None = None, rtol: float = 1e-9, atol: float = 1e-9) -> dict[str, int]:
    """Run every batch under each algorithm's partition, block by block with one kernel per
    block; check compilation, contraction against the run's allocations, and values against
    the reference executor. Returns the number of contracted bases seen per algorithm."""
    externals = externals or Externals()
    want_storage, want = Storage(dict(inputs or {})), {}
    for b in batches:
        want.update(run_reference(b, externals=externals, storage=want_storage))
    seen = {}
    for algorithm in algorithms:
        with warnings.catch_warnings():
            # a kernel Numba refuses falls back to NumPy with this warning
            warnings.filterwarnings("error", message=r"block .*: Numba could not compile")
            seen[algorithm] = _run_checked(batches, algorithm, inputs, externals, want, rtol, atol)
    return seen


def _run_checked(batches: list[Program], algorithm: str, inputs: Mapping[str, np.ndarray] | None,
                 externals: Externals, want: dict[str, Any], rtol: float, atol: float) -> int:
    """One algorithm's run of every batch, checked; the number of contracted bases."""
    storage, got, count = Storage(dict(inputs or {})), {}, 0
    for batch in batches:
        blocks = partition(batch, algorithm, "bohrium", **OPTIONS.get(algorithm, {})).blocks
        p = check_blocks_compile(batch, blocks, algorithm)
        acc, synced = access_info(batch)
        contracted = set().union(*(block_info(batch, b, acc, synced).contracted for b in blocks))
        storage.allocated.clear()
        got.update(run_plan(p, storage, externals, CACHE))
        assert not contracted & storage.allocated, (algorithm, sorted(contracted & storage.allocated))
        count += len(contracted)
    assert set(got) == set(want), algorithm
    for k in want:
        a, b = np.asarray(got[k]), np.asarray(want[k])
        if a.dtype.kind in "biu":
            np.testing.assert_array_equal(a, b, err_msg=f"{algorithm}: {k}")
        else:
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=f"{algorithm}: {k}")
    return count
