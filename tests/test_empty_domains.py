"""Blocks over empty iteration spaces are kernels: a loop that never runs.

A back substitution reads ``a[i, i + 1:]`` and ``x[i + 1:]`` at its last row: empty views.
Capture used to record them as OPAQUE copies ("reshape copy": an empty view shares no memory,
so it looked like a copy) and the backend refused their block ("an empty iteration space"),
which sent a whole Gaussian elimination to block-by-block execution (0.3x NumPy at medium in
the backend benchmark). An empty view is a view; its kernel's maps write nothing and its
sums, products, ``any`` and ``all`` are their identities, as NumPy's are (NumPy's maximum of
nothing raises at capture, so no such reduction is ever recorded). A reduction along an empty
axis into a non-empty result (``np.ones((4, 0)).sum(axis=1)``) would leave that result unset:
it runs as NumPy, saying so. Checked on every driver against plain NumPy, with the structure
(no OPAQUE, no block left to NumPy)."""

from __future__ import annotations

import io
from contextlib import redirect_stdout

import numpy as np
import pytest

from fusionlab import parse
from fusionlab.capture import capture
from fusionlab.backend.numba.codegen import get_kernel
from fusionlab.pipeline import run

from test_numba import CACHE

BACK_SUBSTITUTION = """import numpy as np
rng = np.random.default_rng(2)
n = 7
a = rng.random((n, n)) * (np.arange(n)[:, None] <= np.arange(n)) + n * np.eye(n)
b = rng.random(n)
x = np.zeros(n)
for i in range(n - 1, -1, -1):
    x[i] = (b[i] - np.sum(a[i, i + 1:] * x[i + 1:])) / a[i, i]
dots = [float(np.sum(a[i, i + 1:] * x[i + 1:])) for i in range(n)]
"""

EMPTIES = """import numpy as np
v = np.arange(10.0)
e = v[5:5]
s = np.sum(e * 2.0) + 1.0
p = np.prod(e + 1.0)
t = v[3:3] + 1.0
c = np.cumsum(v[2:2])
anyv = bool((v[4:4] > 1).any())
allv = bool((v[4:4] > 1).all())
k = int((v[7:7] != 0).sum())
m = np.ones((4, 0))
cols = m.sum(axis=0)
i = np.arange(6)[6:]
si = int(np.sum(i * 3))
w = v.copy()
w[2:2] = 5.0
w[8:8] += 1.0
total = w.sum() + s + p + si
"""


def _captured(source: str):
    with redirect_stdout(io.StringIO()):
        return capture(source, {"__name__": "__main__"})


def test_empty_views_are_recorded_as_views() -> None:
    cap = _captured(BACK_SUBSTITUTION)
    ops = [ins.opcode.name for b in cap.batches for ins in b.instructions]
    assert "OPAQUE" not in ops and not cap.notices
    # the last row's product reads two empty views of a and x
    empty = [v for b in cap.batches for ins in b.instructions for v in ins.views_in if v.size == 0]
    assert {v.base.name for v in empty} >= {"a", "x"}


def test_an_empty_block_is_a_kernel_whose_sum_is_zero() -> None:
    p = parse("ARRAY A float64[8]\nARRAY T float64[0]\nARRAY S float64[]\n"
              "MULTIPLY T, A[8:], 2.0\nADD_REDUCE S, T\nDEL T\nSYNC S")
    k = get_kernel(p, [0, 1, 2])
    s = np.full(1, 7.0)   # a kernel takes its arrays flat
    CACHE.get(k)(np.arange(8.0), s, *k.scalar_arguments)
    assert s[0] == 0.0


@pytest.mark.parametrize("source", [BACK_SUBSTITUTION, EMPTIES], ids=["back substitution", "empty views"])
@pytest.mark.parametrize("driver", ["blocks", "python", "numba"])
def test_empty_iteration_spaces_give_numpys_values_on_every_driver(source: str, driver: str) -> None:
    cap = _captured(source)
    r = run(cap, "greedy", check=True, driver=driver, cache=CACHE, min_size=0)
    assert r.check is not None and r.check.ok, r.check.mismatches
    assert not r.fallbacks, r.fallbacks
    if driver != "blocks":
        assert r.ran.driven, r.driver


def test_a_reduction_along_an_empty_axis_runs_as_numpy_and_says_why() -> None:
    # its loop would never set the four sums: NumPy's zeros, not a kernel's unset memory
    cap = _captured("import numpy as np\nm = np.ones((4, 0)) * 2.0\nrows = m.sum(axis=1)\n")
    r = run(cap, "greedy", check=True, driver="numba", cache=CACHE, min_size=0)
    assert r.check is not None and r.check.ok, r.check.mismatches
    np.testing.assert_array_equal(r.values["rows"], np.zeros(4))
    assert any("an empty iteration space whose loop would leave a result unset" in f for f in r.fallbacks), r.fallbacks
