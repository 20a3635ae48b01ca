"""Memory that is written whole before it is read is not zeroed (fusionlab.backend.numba.zeroing):
the analysis on hand-made cases, what the driver and the storage then do, and random
programs run on poisoned memory against the reference executor."""

from __future__ import annotations

import io
import re
from contextlib import redirect_stdout

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fusionlab import parse
from fusionlab.capture import capture
from fusionlab.backend.numba.driver import Driver
from fusionlab.backend.numba.plan import KernelCache, plan, run_plan
from fusionlab.runtime.reference import Externals, Pool, Storage, run_reference
from fusionlab.backend.numba.zeroing import written_before_read
from fusionlab.workloads import get_workload

from kernels import planned

from test_numba import CACHE


def _claims(text: str) -> set[tuple[str, int]]:
    p = parse(text)
    return written_before_read(p, range(len(p)))


def test_an_interior_and_its_ends_cover_a_base():
    # the wave equation's fresh array: interior from a stencil, then both end points
    got = _claims("ARRAY U float64[10]\nARRAY N float64[10]\nRANGE U\nADD N[1:-1], U[2:], U[:-2]\n"
                  "COPY N[0], 0.0\nCOPY N[9], 0.0\nMULTIPLY U, N, 2.0\nSYNC U\n")
    assert ("N", 1) in got and ("U", 0) in got


def test_an_interior_and_four_edges_cover_a_2d_base():
    # the image blur's fresh `out`: rows and columns as strided views
    text = ("ARRAY G float64[5, 6]\nCOPY G[1:-1, 1:-1], 1.0\nCOPY G[0, :], 0.0\nCOPY G[-1, :], 0.0\n"
            "COPY G[1:-1, 0], 0.0\nCOPY G[1:-1, -1], 0.0\nSYNC G\n")
    assert _claims(text) == {("G", 0)}
    # one edge short: a corner stays unwritten
    assert _claims(text.replace("COPY G[-1, :], 0.0", "COPY G[-1, 1:], 0.0")) == set()


@pytest.mark.parametrize("text", [
    # a read of an element not yet written sees the zeros
    "ARRAY N float64[10]\nARRAY T float64[9]\nCOPY N[1:], 1.0\nADD T, N[:-1], 1.0\nCOPY N[0], 2.0\nSYNC T\nSYNC N\n",
    # the user sees the base before it is whole
    "ARRAY N float64[10]\nCOPY N[1:], 1.0\nSYNC N\nCOPY N[0], 2.0\nSYNC N\n",
    # never written whole in the program: a later batch may read the rest
    "ARRAY N float64[10]\nCOPY N[::2], 1.0\nCOPY N[2:9:2], 3.0\n",
    # an instruction's reads come before its writes
    "ARRAY N float64[10]\nCOPY N[1:], 1.0\nADD N, N, 1.0\nSYNC N\n",
])
def test_zeros_that_can_be_seen_are_kept(text):
    assert not {name for name, _ in _claims(text)} & {"N"}


def test_reading_only_written_elements_does_not_need_zeros():
    got = _claims("ARRAY N float64[10]\nARRAY T float64[8]\nCOPY N[1:-1], 1.0\nADD T, N[1:-1], 1.0\n"
                  "COPY N[::9], 2.0\nSYNC N\nSYNC T\n")
    assert ("N", 0) in got


WAVE = """
ARRAY U float64[6000]
ARRAY P float64[6000]
ARRAY N float64[6000]
ARRAY T float64[5998]
ARRAY S float64[]
RANGE U
MULTIPLY P, U, 0.5
ADD T, U[2:], U[:-2]
SUBTRACT N[1:-1], T, P[1:-1]
DEL T
COPY N[0], 0.0
COPY N[5999], 0.0
ADD_REDUCE S, N, axis=None
SYNC N
SYNC S
"""


@pytest.mark.parametrize("min_size", [0, 1 << 30])
def test_neither_the_driver_nor_the_storage_zeroes_a_base_written_in_pieces(min_size):
    p = parse(WAVE)
    blocks = [[0], [1], [2, 3, 4], [5], [6], [7], [8, 9]]
    pl = plan(p, blocks, min_size=min_size)
    assert [b.name for bp in pl.blocks for b in bp.fresh if b.name == "N"] == ["N"]
    d = Driver([pl], Externals(), CACHE)
    assert not re.search(r"^\s*N\w* *\[:\] = 0", d.spec.source, re.M)
    assert d.spec.fresh == (("float64", 6000, False, 1), ("float64", 1, False, 1))   # N, S: np.empty, one row each
    storage = Storage()
    got = run_plan(pl, storage, Externals(), CACHE)
    assert "N" not in storage.zeroed and "N" in storage.allocated
    want = run_reference(p)
    for out in (got, d()):
        np.testing.assert_array_equal(out["N"], want["N"])
        assert float(out["S"]) == float(want["S"])


def test_the_wave_equation_zeroes_no_step():
    with redirect_stdout(io.StringIO()):
        cap = capture(get_workload("wave_1d").script("tiny"), {})
    plans, inputs, externals = planned(cap, 0)
    d = Driver(plans, externals, CACHE, inputs)
    assert d.spec is not None and "[:] = 0" not in d.spec.source
    storage = Storage(inputs)
    for pl in plans:
        run_plan(pl, storage, externals, CACHE)
    assert not {name for name in storage.zeroed if name.startswith("u_next")}
    assert sum(name.startswith("u_next") for name in storage.allocated) == 12   # 4 steps x 3 iterations


class PoisonPool(Pool):
    """Hands out NaN-filled memory for every request: a base that should start as zeros but
    is not zeroed shows NaN."""

    def take(self, key: tuple[str, int]) -> np.ndarray | None:
        return np.full(key[1], np.nan, dtype=key[0])

    def give(self, key: tuple[str, int], a: np.ndarray) -> None:
        pass


_SLICES = ["", "1:", ":-1", "1:-1", "::2", "1::2", "::-1", "2:5", "0", "9", "-1", "3:9:3"]


@st.composite
def pieces_programs(draw: st.DrawFn) -> str:
    """Bases of 10 (and 2 x 5) elements written in random pieces, read at random points."""
    lines = ["ARRAY X float64[10]", "ARRAY Y float64[10]", "ARRAY G float64[2, 5]"]
    reads = 0
    for _ in range(draw(st.integers(1, 10))):
        kind = draw(st.integers(0, 3))
        base = draw(st.sampled_from(["X", "Y"]))
        s = draw(st.sampled_from(_SLICES))
        view = f"{base}[{s}]" if s else base
        if kind == 0:
            lines.append(f"COPY {view}, {draw(st.integers(1, 9))}.0")
        elif kind == 1:
            n = len(np.empty(10)[eval(f"np.s_[{s or ':'}]")].reshape(-1))   # noqa: S307 - our own slice text
            shape = f"[{n}]" if not s.lstrip("-").isdigit() else "[]"
            lines += [f"ARRAY R{reads} float64{shape}", f"ADD R{reads}, {view}, 1.0", f"SYNC R{reads}"]
            reads += 1
        elif kind == 2:
            row = draw(st.sampled_from(["0, :", "1, :", ":, 0", ":, 1:", "1, 1:4", ":, :"]))
            lines.append(f"COPY G[{row}], {draw(st.integers(1, 9))}.0")
        else:
            other = "Y" if base == "X" else "X"
            lines.append(f"ADD {other}[1:], {base}[:-1], 1.0")
    lines += ["SYNC X", "SYNC Y", "SYNC G"]
    return "\n".join(lines) + "\n"


@settings(max_examples=40, deadline=None)
@given(text=pieces_programs(), singletons=st.booleans(), mode=st.sampled_from(["python", "blocks"]))
def test_random_pieces_on_poisoned_memory_equal_the_reference(text, singletons, mode):
    p = parse(text)
    compute = [i for i in range(len(p))]
    blocks = [[i] for i in compute] if singletons else None
    cache = KernelCache(directory=CACHE.directory, kernels=CACHE.kernels, pool=PoisonPool())
    pl = [plan(p, blocks, min_size=1 << 30)] if blocks else \
        planned(p, 1 << 30)[0]
    got = Driver(pl, Externals(), cache, mode=mode)()
    want = run_reference(p)
    assert sorted(got) == sorted(want)
    for name, value in want.items():
        np.testing.assert_array_equal(got[name], value, err_msg=f"{name}\n{text}")
