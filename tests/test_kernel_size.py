"""Blocks touching more arrays than a kernel should take run as several kernels
(``numba_backend.compiler_sized``): the pieces, and runs with them against NumPy.

A convolution's Python loop keeping each window's product (npbench's conv2d) made one map
block storing 121 arrays: three such kernels took 150 s to compile at 12 x 12 pixels."""

from __future__ import annotations

import io
from contextlib import redirect_stdout

import numpy as np
from hypothesis import given, settings

from fusionlab.ir.bytecode import OpFamily
from fusionlab.capture import capture
from fusionlab.backend.numba.codegen import Unsupported, get_kernel
from fusionlab.backend.numba.plan import MAX_KERNEL_ARRAYS, compiler_sized, plan, run_plan
from fusionlab.runtime.reference import Externals, Storage, run_reference
from fusionlab.partition import partition
from fusionlab.backend.numba.driver import Runs

from strategies import numpy_sources
from kernels import CHECKED as CACHE   # bounds-checked kernels: this file tests a pass, not the kernels (tests/kernels.py)

WINDOWS = """
import numpy as np
rng = np.random.default_rng(1)
a = rng.random((4, 9, 3, 1))
w = rng.random((2, 3, 5))
kept = [a[:, j:j + 2] * w[None] for j in range({k})]
total = sum(float(x.sum()) for x in kept)
"""


def _captured(source: str):
    with redirect_stdout(io.StringIO()):
        return capture(source)


def test_a_map_block_storing_many_arrays_is_cut_into_kernels_of_at_most_the_limit():
    cap = _captured(WINDOWS.format(k=7))
    batch = cap.batches[0]
    blocks = partition(batch, "greedy", "bohrium").blocks
    big = max(blocks, key=len)
    maps = [i for i in big if batch[i].opcode is not None and batch[i].opcode in OpFamily.ELEMENTWISE]
    assert len(maps) == 7   # the seven products share one block of the partition
    pieces, notes = compiler_sized(batch, [big], limit=4)
    assert [i for p in pieces for i in p] == sorted(big)   # the block, in program order
    # a, w and two products a kernel (the seventh alone: the sum of the first and its result make five)
    assert len(pieces) == 5 and len(notes) == 1
    assert f"({len(big)} instructions, 10 arrays) runs as 5 kernels of at most 4 arrays" in notes[0]
    for p in pieces:
        assert len(get_kernel(batch, p).arguments) <= 4
    # under the default limit, the block is one kernel
    assert compiler_sized(batch, [big]) == ([tuple(sorted(big))], [])
    assert MAX_KERNEL_ARRAYS >= 24


def test_arrays_created_and_freed_inside_a_block_are_not_counted():
    # a Python loop of scalar updates: 400 temporaries, each created and freed in the block
    source = ("import numpy as np\na = np.linspace(0, 1, 400 * 400).reshape(400, 400)\ntrace = 0.0\n"
              "for i in range(400):\n    trace += np.tanh(a[i, i])\n")
    cap = _captured(source)
    for batch in cap.batches:
        blocks = partition(batch, "greedy", "bohrium").blocks
        assert compiler_sized(batch, blocks)[1] == []


def _run(batch, blocks, limit: int, inputs: dict) -> dict:
    return run_plan(plan(batch, blocks, min_size=0, max_arrays=limit), Storage(dict(inputs)), Externals(), CACHE)


@settings(max_examples=25, deadline=None)
@given(numpy_sources())
def test_runs_cut_to_two_arrays_a_kernel_equal_the_reference(source):
    cap = _captured(source)
    storage, want_storage = Storage(dict(cap.inputs)), Storage(dict(cap.inputs))
    for batch in cap.batches:
        blocks = partition(batch, "greedy", "bohrium").blocks
        pieces, _ = compiler_sized(batch, blocks, 2)
        for p in pieces:   # each piece is a kernel or what NumPy runs
            computing = [i for i in p if batch[i].opcode not in OpFamily.SYSTEM]
            if computing and not any(batch[i].opcode in OpFamily.OPAQUE for i in computing):
                try:
                    get_kernel(batch, p)
                except Unsupported as exc:
                    assert "random" in str(exc).lower() or "draw" in str(exc).lower(), str(exc)
        want = run_reference(batch, externals=cap.externals, storage=want_storage)
        got = run_plan(plan(batch, blocks, min_size=0, max_arrays=2), storage, cap.externals, CACHE)
        assert set(got) == set(want)
        for k in want:
            np.testing.assert_allclose(np.asarray(got[k]), np.asarray(want[k]), rtol=1e-9, atol=1e-9, err_msg=k)


TRIANGLE = """
import numpy as np
m, n = 8, 10
A = np.tril(np.arange(1.0, m * m + 1).reshape(m, m)) / (m * m)
B = np.arange(m * n, dtype=float).reshape(m, n) / (m * n)
C = np.ones((m, n))
t2 = np.empty(n)
C *= 1.2
for i in range(m):
    for j in range(n):
        C[:i, j] += 1.5 * B[i, j] * A[i, :i]
        t2[j] = B[:i, j] @ A[i, :i]
    C[i, :] += 1.5 * B[i, :] * A[i, i] + 1.5 * t2
"""


def test_a_loop_of_slices_of_changing_lengths_compiles_no_kernel_it_calls_once():
    from fusionlab.backend.numba.plan import ONE_USE_KERNELS, one_use_kernels
    from fusionlab.pipeline.runner import run

    cap = _captured(TRIANGLE)
    plans = [plan(b, partition(b, "greedy", "bohrium").blocks) for b in cap.batches]
    once = [b for p in plans for b in p.blocks if b.kernel is not None and not b.kernel.parallel_iterations]
    keys = [b.kernel.key for b in once]
    assert sum(keys.count(k) == 1 for k in set(keys)) > ONE_USE_KERNELS   # PolyBench symm's shape
    chosen = one_use_kernels(plans)
    numpy = [b for p in chosen for b in p.blocks if "one of" in b.reason and "such kernels" in b.reason]
    assert len(numpy) > ONE_USE_KERNELS and all(b.kernel is None and b.serial is None for b in numpy)
    # a kernel called twice keeps it
    kept = {b.kernel.key for p in chosen for b in p.blocks if b.kernel is not None}
    assert all(keys.count(k) > 1 for k in kept if k in keys)
    r = run(cap, "greedy", "bohrium", check=True, driver="python", cache=CACHE)
    assert r.check is not None and r.check.ok, r.check.mismatches
    assert r.ran is Runs.BLOCKS   # a NumPy block: the run goes block by block


def test_few_kernels_called_once_are_compiled_as_planned():
    from fusionlab.backend.numba.plan import one_use_kernels

    cap = _captured(WINDOWS.format(k=3))
    plans = [plan(b, partition(b, "greedy", "bohrium").blocks) for b in cap.batches]
    assert one_use_kernels(plans) == plans
