"""ndarray's reduction methods under capture take their arguments by position as NumPy's do.

Pythran's Cronbach alpha writes ``itemscores.var(1, None, None, 1)`` (axis=1, ddof=1); the
traced array's methods took only ``axis`` by position and the program failed under capture.
Each call here runs under capture and plainly: same values, or the same error.
"""

from __future__ import annotations

import io
from contextlib import redirect_stdout

import numpy as np
import pytest

from fusionlab.capture import CaptureError, capture
from fusionlab.runtime.check import compare_values, plain_namespace

HEAD = "import numpy as np\nx = np.arange(24.0).reshape(4, 6) * 0.25 + 0.5\nb = x > 2\no = np.zeros(4)\n"

CALLS = [
    "x.var(1, None, None, 1)", "x.std(0, None, None, 2)", "x.var(1, None, None, 1, True)",
    "x.sum(1, np.float32)", "x.sum(0, None, None, True)", "x.sum(None, None, None, False, 10.0)",
    "x.sum(1, None, None, False, 0.0, b)", "x.prod(1, None, None, True)", "x.max(1, None, True)",
    "x.min(0, None, False, -1.0)", "x.mean(1, np.float32, None, True)", "x.argmax(1)", "x.argmin(None)",
    "b.all(1, None, True)", "b.all(1)", "b.any(0, None, np.zeros((1, 6), bool), True)", "b.all(1, bool)", "b.all(None, None, None, True)", "x.any(0, int)", "x.any(1, float)", "x.cumsum(1, np.float64)", "x.cumprod(0, None)",
    "(x.sum(1, None, o), o)[1]", "x.mean(axis=0, keepdims=True)", "x.std(ddof=1)",
]

WRONG = ["x.sum(1, axis=0)", "x.sum(1, None, None, False, 0.0, True, 7)", "x.var(0, None, None, 1, False, 3)"]


def _captured(source: str):
    with redirect_stdout(io.StringIO()):
        return capture(source, {"__name__": "__main__"})


@pytest.mark.parametrize("call", CALLS + WRONG)
def test_a_method_called_with_positional_arguments_is_numpys_call(call):
    source = HEAD + f"r = {call}\n"
    try:
        plain = plain_namespace(source)
    except Exception as exc:   # NumPy refuses the call (``b.all(1, None, True)`` does): so must capture
        with pytest.raises(CaptureError) as got:
            _captured(source)
        assert type(got.value.original) is type(exc), got.value
        return
    assert call not in WRONG
    cap = _captured(source)
    got = cap.namespace["r"]
    assert type(got) is type(plain["r"]) and np.shape(got) == np.shape(plain["r"])
    assert np.result_type(got) == np.result_type(plain["r"])
    assert compare_values(got, plain["r"], "r").ok
