"""The compiled driver's loops over call tables (issue 13: no cap of 128 kernel calls).

A run's repeated statements — calls of one kernel on views that differ only in offsets,
batch after batch — are folded into loops over int64 tables passed to the driver
(:mod:`fusionlab.backend.numba.driver_loops`): the driver's source grows with the distinct
statements, not with the calls, and holds none of the tables' values.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fusionlab import parse
from fusionlab.backend.numba.driver import DEFAULT_MAX_CALLS, Driver, get_driver
from fusionlab.backend.numba.driver_loops import fold
from fusionlab.backend.numba.plan import KernelCache, plan
from fusionlab.runtime.reference import Externals, run_reference
from fusionlab.backend.numba.driver import Runs

ROOT = Path(__file__).resolve().parents[1]


def _unfold(lines: tuple[str, ...], tables: tuple) -> list[str]:  # type: ignore[type-arg]
    """The folded body written out again: each loop's body once per table row."""
    out: list[str] = []
    k = 0
    while k < len(lines):
        m = re.fullmatch(r"for _i in range\(len\(tab(\d+)\)\):", lines[k])
        if not m:
            out.append(lines[k])
            k += 1
            continue
        body = []
        k += 2   # the header and `_t = tabN[_i]`
        while k < len(lines) and lines[k].startswith("    "):
            body.append(lines[k][4:])
            k += 1
        for row in tables[int(m[1])]:
            out += [re.sub(r"_t\[(\d+)\]", lambda g: str(row[int(g[1])]), line) for line in body]
    return out


def _code(line: str) -> str:
    return line.partition("#")[0].rstrip()


TEMPLATES = ["k_a(x0[{}:{}], np.uint64({}))", "x1 = ar0[{}:{}]", "x1[:] = 0", "k_b(x1.reshape(({}, {})), x0)",
             "set_chunk(max(1, {} // ch) if ch else 0)"]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.integers(0, len(TEMPLATES) - 1), st.lists(st.integers(0, 99), min_size=3, max_size=3)),
                max_size=60),
       st.integers(1, 6))
def test_folding_then_unfolding_gives_the_statements_back(items, repeat):
    """Whatever the statements, the loops and their tables say exactly what they replaced
    (comments aside), and the zero of a zero fill stays in the code."""
    lines = [TEMPLATES[t].format(*v[:TEMPLATES[t].count("{}")]) + f"  # block {i}" for i, (t, v) in enumerate(items)]
    lines = lines * repeat   # repetitions to find
    folded = fold(lines)
    assert [_code(x) for x in _unfold(folded.lines, folded.tables)] == [_code(x) for x in lines]
    assert all("_t[" not in line or "= 0" not in line.replace("[:] = 0", "") for line in folded.lines)
    assert folded.call_sites <= sum(line.startswith("k_") for line in lines)
    calls = sum(line.startswith("k_") for line in lines)
    if repeat >= 3 and calls:   # a repeated call is called from one site
        assert folded.call_sites < calls


def _views_program(n: int, width: int = 8, shift: int = 0, size: int = 0) -> tuple:  # type: ignore[type-arg]
    """``n`` calls of one kernel on ``n`` views of one base (of ``size`` elements, at least
    enough), the first at ``shift``."""
    size = max(size, n * width + shift)
    lines = [f"ARRAY A float64[{size}]", "RANGE A"]
    lines += [f"MULTIPLY A[{k * width + shift}:{(k + 1) * width + shift}], "
              f"A[{k * width + shift}:{(k + 1) * width + shift}], 3.0" for k in range(n)]
    lines.append("SYNC A")
    p = parse("\n".join(lines))
    return p, [plan(p, [[i] for i in range(len(p))], min_size=1 << 30)]


def test_a_600_call_batch_runs_the_compiled_driver(tmp_path):
    p, plans = _views_program(600)
    spec = get_driver(plans)
    # 601 calls (RANGE, 600 views, nothing for SYNC) of three kernels (the view at offset 0
    # has a kernel of its own, without an offset argument); the other 599 are one loop
    assert spec.calls == 601 and len(spec.kernels) == 3
    assert spec.call_sites <= 3 and len(spec.tables) == 1 and len(spec.tables[0]) >= 598
    assert spec.source.count("\n") < 20 and "for _i in range(len(tab0)):" in spec.source
    d = Driver(plans, Externals(), KernelCache(directory=tmp_path), mode="numba", threads=1)
    assert d.kind is Runs.COMPILED_DRIVER and not d.reason and spec.calls > DEFAULT_MAX_CALLS
    got = d()
    want = run_reference(p)["A"]
    np.testing.assert_array_equal(got["A"], want)
    np.testing.assert_array_equal(got["A"], np.arange(4800.0) * 3)
    np.testing.assert_array_equal(d()["A"], want)   # and again, on reused memory


def test_the_source_holds_no_offsets_so_runs_differing_in_offsets_share_it():
    # (one base size: RANGE's extent is a literal outside the loop, part of the source;
    # shifted: a view at offset 0 would have a kernel of its own)
    a = get_driver(_views_program(300, shift=1, size=2500)[1])
    b = get_driver(_views_program(300, shift=5, size=2500)[1])
    c = get_driver(_views_program(301, shift=1, size=2500)[1])
    assert a.key == b.key == c.key and a.tables != b.tables and a.tables != c.tables


def _random_program(seed: int, n: int) -> tuple:  # type: ignore[type-arg]
    """``n`` one-instruction blocks on random views of three bases: a pattern of a few
    calls, repeated with random offsets and widths; a reduction into a synced scalar."""
    rng = np.random.default_rng(seed)
    lines = ["ARRAY A float64[400]", "ARRAY B float64[400]", "ARRAY S float64[]", "RANGE A", "RANGE B"]
    pattern = rng.integers(0, 4, size=int(rng.integers(1, 5)))
    for k in range(n):
        op = pattern[k % len(pattern)]
        w = int(rng.integers(1, 4)) * 8
        i, j = (int(x) for x in rng.integers(0, 400 - w, size=2))
        if op == 0:
            lines.append(f"ADD A[{i}:{i + w}], A[{i}:{i + w}], B[{j}:{j + w}]")
        elif op == 1:
            lines.append(f"MULTIPLY B[{j}:{j + w}], B[{j}:{j + w}], 0.5")
        elif op == 2:
            lines.append(f"SUBTRACT A[{i}:{i + w}], B[{j}:{j + w}], A[{i}:{i + w}]")
        else:
            lines.append(f"MULTIPLY A[{i}:{i + w}], A[{i}:{i + w}], B[{j}:{j + w}]")
    # (a reduction's kernel is one per instruction so far: its key differs from block to
    # block, so reductions between the calls would leave nothing for a loop to share)
    lines += ["ADD_REDUCE S, A, axis=None", "SYNC A", "SYNC B", "SYNC S"]
    p = parse("\n".join(lines))
    return p, [plan(p, [[i] for i in range(len(p))], min_size=1 << 30)]


@pytest.mark.parametrize("seed", range(4))
def test_random_programs_with_many_calls_equal_the_reference(seed, tmp_path):
    p, plans = _random_program(seed, 250 + 40 * seed)
    want = run_reference(p)
    cache = KernelCache(directory=tmp_path)
    for mode in ("numba", "python"):
        d = Driver(plans, Externals(), cache, mode=mode, threads=1)
        assert d.spec is not None and d.spec.calls > 128   # the cap on calls before the loops
        assert d.runs == ("compiled driver" if mode == "numba" else "python driver"), d.reason
        got = d()
        assert sorted(got) == sorted(want)
        np.testing.assert_array_equal(got["A"], want["A"])
        np.testing.assert_array_equal(got["B"], want["B"])
        # the sum: NumPy adds pairwise, the kernel in order (a few ULP apart)
        np.testing.assert_allclose(got["S"], want["S"], rtol=1e-13)


_FRESH = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {tests!r})
    import numpy as np
    from fusionlab.backend.numba.driver import Driver
    from fusionlab.backend.numba.plan import KernelCache
    from fusionlab.runtime.reference import Externals, run_reference
    from test_driver_loops import _views_program
    n, shift = {n}, {shift}
    p, plans = _views_program(n, shift=shift, size=2500)
    cache = KernelCache(directory=__import__("pathlib").Path({cache!r}))
    d = Driver(plans, Externals(), cache, mode="numba", threads=1)
    got = d()["A"]
    print(json.dumps({{"key": d.spec.key, "runs": d.runs, "equal": bool(np.array_equal(got, run_reference(p)["A"]))}}))
""")


def test_a_warm_cache_in_a_fresh_process_runs_other_offsets_right(tmp_path):
    """The compiled driver, cached on disk by one process, is loaded by a fresh one for a
    run with other offsets and another count of calls: the same code (the same key), its
    own table, NumPy's values."""
    out = []
    for n, shift in ((200, 1), (260, 3), (200, 7)):   # one base of 2500 elements
        code = _FRESH.format(tests=str(ROOT / "tests"), n=n, shift=shift, cache=str(tmp_path))
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=600)
        assert proc.returncode == 0, proc.stderr[-2000:]
        out.append(json.loads(proc.stdout.strip().splitlines()[-1]))
    assert all(o["equal"] and o["runs"] == "compiled driver" for o in out)
    assert len({o["key"] for o in out}) == 1
    assert len(list(tmp_path.rglob("d_*.nbi"))) == 1   # one driver compiled and cached, loaded twice
