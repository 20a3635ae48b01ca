"""Reductions over several axes (``x.sum(axis=(1, 2, 3))``: a convolution's window, a batch
statistic) recorded as one reduction per axis, not an opaque NumPy call; the user holds
NumPy's own result, and the kernels' steps agree with it within the check's bound."""

from __future__ import annotations

import io
from contextlib import redirect_stdout

import numpy as np
import pytest

from fusionlab.capture import capture
from fusionlab.runtime.check import plain_namespace
from fusionlab.pipeline.runner import run

from test_numba import CACHE

SETUP = """
import numpy as np
rng = np.random.default_rng(3)
x = rng.standard_normal((3, 4, 5, 6))
f = x.astype(np.float32)
i = (x * 10).astype(np.int32)
"""

CASES = [
    "r = x.sum(axis=(1, 2, 3))",
    "r = np.sum(x, axis=(0, 2), keepdims=True)",
    "r = np.sum(x, axis=(-1, 1))",
    "r = f.sum(axis=(2, 3))",
    "r = i.sum(axis=(1, 3))",
    "r = np.prod(x[:, :2, :2] * 0.5 + 1, axis=(1, 2))",
    "r = x.max(axis=(1, 2))",
    "r = np.min(x, axis=(0, 3), keepdims=True)",
    "r = np.amax(i, axis=(2, 1))",
    "r = x.sum(axis=(0, 1, 2, 3))",
    "r = (x[:, :, None] * x[:, None]).sum(axis=(1, 2))",
]


def _cap(source: str):
    with redirect_stdout(io.StringIO()):
        return capture(source)


@pytest.mark.parametrize("line", CASES)
def test_a_reduction_over_axes_is_recorded_and_equals_numpy(line):
    source = SETUP + line + "\ns = r * 2\n"
    cap = _cap(source)
    plain = plain_namespace(source)
    names = [ins.attr("name") for b in cap.batches for ins in b if ins.opcode.name == "OPAQUE"]
    assert not names, names
    reductions = [ins for b in cap.batches for ins in b if ins.opcode.name.endswith("_REDUCE")]
    assert reductions
    for k in ("r", "s"):
        got, want = cap.namespace[k], plain[k]
        assert type(got) is type(want) and got.dtype == want.dtype and got.shape == want.shape
        assert np.array_equal(got, want), k   # NumPy's own bits
    r = run(cap, "greedy", "bohrium", check=True, driver="blocks", min_size=0, cache=CACHE)
    assert r.check is not None and r.check.ok, r.check.mismatches


@pytest.mark.parametrize("line", ["r = x.sum(axis=(1, 1))", "r = x.sum(axis=(1, 4))", "r = x.sum(axis=(1.0, 2))"])
def test_axes_numpy_refuses_raise_numpys_error(line):
    source = SETUP + line + "\n"
    with pytest.raises(Exception) as plain:
        plain_namespace(source)
    with pytest.raises(Exception) as captured:
        _cap(source)
    assert type(plain.value).__name__ in str(captured.value) + type(captured.value).__name__
