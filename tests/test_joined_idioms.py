"""Textbook idioms captured as bytecode the graph understands (issue 37), each checked
against NumPy through capture and through the fused kernels: ``np.clip`` (and the method),
``np.nan_to_num``, the ``ufunc.outer`` family, and the joining family (``concatenate``,
``stack``, ``vstack``, ``hstack``, ``dstack``, ``column_stack``, ``tile``) as copies into
one new base."""

from __future__ import annotations

import io
import warnings
from contextlib import redirect_stdout
from typing import Any

import numpy as np
import pytest

from fusionlab.capture import NoticeKind, capture
from fusionlab.ir.bytecode import Opcode
from fusionlab.pipeline import run

from kernels import CHECKED

pytestmark = pytest.mark.bounds_checked

SETUP = ("import numpy as np\n"
         "a = np.linspace(-1.0, 2.0, 12).reshape(3, 4)\n"
         "v = np.arange(4.0)\n"
         "f = np.arange(6, dtype=np.float32)\n"
         "i = np.arange(12).reshape(3, 4)\n")

CASES = {
    "clip": "r = np.clip(a, -0.5, 1.5)",
    "clip method": "r = a.clip(0.0, 1.0)",
    "clip keywords": "r = a.clip(min=0.25)",
    "clip one side": "r = np.clip(a, None, 0.5)",
    "clip crossed": "r = np.clip(a, 1.0, 0.0)",
    "clip ints to floats": "r = np.clip(i, 2.5, 7.5)",
    "clip arrays": "r = np.clip(a, a[0] * 0.5, 1.0)",
    "nan_to_num": "with np.errstate(all='ignore'):\n    b = a / (a - a[0])\nr = np.nan_to_num(b)",
    "nan_to_num given": "with np.errstate(all='ignore'):\n    b = np.log(a)\nr = np.nan_to_num(b, nan=-1.0, neginf=-9.0)",
    "nan_to_num float32": "with np.errstate(all='ignore'):\n    b = f / (f - 2)\nr = np.nan_to_num(b)",
    "nan_to_num ints": "r = np.nan_to_num(i)",
    "subtract.outer": "r = np.subtract.outer(v, a[1])",
    "multiply.outer 2-D": "r = np.multiply.outer(a, v[:2])",
    "add.outer list": "r = np.add.outer(v, [1.0, 2.0])",
    "concatenate": "r = np.concatenate([a, a * 2.0], axis=1)",
    "concatenate three": "r = np.concatenate((a, a[:1], -a))",
    "concatenate None": "r = np.concatenate([a, v], axis=None)",
    "concatenate mixed dtypes": "r = np.concatenate([i, a])",
    "concatenate with a list": "r = np.concatenate([v, [7.0, 8.0]])",
    "stack": "r = np.stack([a, a + 1.0])",
    "stack axis": "r = np.stack([v, v * v, -v], axis=1)",
    "stack last": "r = np.stack([a, a], axis=-1)",
    "vstack": "r = np.vstack([v, v * 2.0, a])",
    "hstack": "r = np.hstack([v, v[::-1]])",
    "hstack 2-D": "r = np.hstack([a, a[:, :1]])",
    "dstack": "r = np.dstack([a, a * a])",
    "dstack 1-D": "r = np.dstack([v, v])",
    "column_stack": "r = np.column_stack([v, v * 3.0])",
    "tile": "r = np.tile(v, 3)",
    "tile 2-D": "r = np.tile(a, (2, 1))",
    "tile more axes": "r = np.tile(v, (2, 2, 1))",
}


def _run(body: str) -> tuple[dict[str, Any], Any]:
    src = SETUP + body + "\ns = r * 2 + 1\n"
    plain: dict[str, Any] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(src, plain)
        with redirect_stdout(io.StringIO()):
            cap = capture(src, {})
    return plain, cap


@pytest.mark.parametrize("name", list(CASES))
def test_the_idiom_is_recorded_and_gives_numpys_values(name: str) -> None:
    plain, cap = _run(CASES[name])
    got = cap.namespace["r"]
    assert got.dtype == plain["r"].dtype and got.shape == plain["r"].shape
    np.testing.assert_array_equal(got, plain["r"])
    opaque = [n.message for n in cap.notices if n.kind is NoticeKind.OPAQUE]
    assert not opaque and not any(ins.opcode is Opcode.OPAQUE for b in cap.batches for ins in b), opaque
    result = run(cap, "greedy", check=True, cache=CHECKED, min_size=0)
    assert result.check is not None and result.check.ok, result.check
    # kernels may differ from NumPy's SIMD log by an ulp (docs/check.md): within 2^8 ulps
    np.testing.assert_allclose(result.values["s"], plain["s"], rtol=2**8 * np.finfo(np.float64).eps, atol=0)


@pytest.mark.parametrize("body, error", [
    ("r = np.concatenate([a, v])", ValueError),          # NumPy's own error, not capture's
    ("r = np.stack([a, v])", ValueError),
    ("r = np.stack([a, a], axis=5)", Exception),
])
def test_numpys_errors_stay_numpys(body: str, error: type) -> None:
    with pytest.raises(error):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            exec(SETUP + body, {})
    from fusionlab.capture import CaptureError

    with pytest.raises(CaptureError) as got:
        with redirect_stdout(io.StringIO()):
            capture(SETUP + body, {})
    assert isinstance(got.value.original, error)


def test_forms_capture_does_not_record_run_as_numpy_and_say_so() -> None:
    plain, cap = _run("out = np.empty((3, 8))\nr = np.concatenate([a, a], axis=1, out=out)")
    np.testing.assert_array_equal(cap.namespace["r"], plain["r"])
    plain, cap = _run("r = np.tile(v, 100)")      # more copies than one tile records
    np.testing.assert_array_equal(cap.namespace["r"], plain["r"])
    assert any(n.kind is NoticeKind.OPAQUE and "tile" in n.message for n in cap.notices)
