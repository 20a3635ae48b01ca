"""``np.roll`` captured as copies into a new array (issue 37), never OPAQUE: every form
NumPy takes (one axis, several, a repeated axis, ``axis=None``, shifts past the length or
negative) gives NumPy's values, through capture and through the fused kernels."""

from __future__ import annotations

import io
from contextlib import redirect_stdout
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fusionlab.capture import NoticeKind, capture
from fusionlab.ir.bytecode import Opcode
from fusionlab.pipeline import run

from kernels import CHECKED

pytestmark = pytest.mark.bounds_checked


def _both(body: str) -> tuple[dict[str, Any], Any]:
    src = "import numpy as np\n" + body
    plain: dict[str, Any] = {}
    exec(src, plain)
    with redirect_stdout(io.StringIO()):
        cap = capture(src, {})
    return plain, cap


@pytest.mark.parametrize("call", [
    "np.roll(a, 1, 0)", "np.roll(a, -1, 0)", "np.roll(a, 2, 1)", "np.roll(a, 7, 1)", "np.roll(a, 0, 0)",
    "np.roll(a, 3)", "np.roll(a, (1, -2), (0, 1))", "np.roll(a, 1, (0, 1))", "np.roll(a, (1, 2), 0)",
    "np.roll(a, (1, 1), (1, 1))", "np.roll(a[::2], 1, -1)", "np.roll(a.T, 2, 0)",
])
def test_roll_gives_numpys_values_and_is_not_opaque(call: str) -> None:
    plain, cap = _both(f"a = np.arange(30.0).reshape(5, 6) ** 2\nr = {call}\ns = r * 2.0 + a[0, 0]\n")
    np.testing.assert_array_equal(cap.namespace["r"], plain["r"])
    assert not [n for n in cap.notices if n.kind is NoticeKind.OPAQUE]
    assert not any(ins.opcode is Opcode.OPAQUE for b in cap.batches for ins in b)
    got = run(cap, "greedy", check=True, cache=CHECKED, min_size=0)
    assert got.check is not None and got.check.ok
    np.testing.assert_array_equal(got.values["s"], plain["s"])


@settings(max_examples=40, deadline=None)
@given(shape=st.lists(st.integers(1, 6), min_size=1, max_size=3), data=st.data())
def test_roll_of_random_shapes_and_shifts(shape: list[int], data: Any) -> None:
    ndim = len(shape)
    axes = data.draw(st.one_of(st.none(), st.integers(-ndim, ndim - 1),
                               st.lists(st.integers(-ndim, ndim - 1), min_size=1, max_size=3).map(tuple)))
    if isinstance(axes, tuple):
        shift: Any = tuple(data.draw(st.integers(-9, 9)) for _ in axes)
    else:
        shift = data.draw(st.integers(-9, 9))
    plain, cap = _both(f"a = np.arange({int(np.prod(shape))}, dtype=np.int64).reshape({tuple(shape)})\n"
                       f"r = np.roll(a, {shift!r}, {axes!r})\n")
    np.testing.assert_array_equal(cap.namespace["r"], plain["r"])
    assert cap.namespace["r"].dtype == plain["r"].dtype


def test_a_periodic_stencil_runs_fused_with_numpys_values() -> None:
    body = ("u = np.zeros((32, 32)); u[8:16, 8:16] = 1.0\n"
            "for _ in range(3):\n"
            "    lap = np.roll(u, 1, 0) + np.roll(u, -1, 0) + np.roll(u, 1, 1) + np.roll(u, -1, 1) - 4 * u\n"
            "    u = u + 0.2 * lap\n")
    plain, cap = _both(body)
    got = run(cap, "greedy", check=True, cache=CHECKED, min_size=0)
    assert got.check is not None and got.check.ok and got.kernels >= 1
    np.testing.assert_allclose(got.values["u"], plain["u"], rtol=0, atol=1e-15)
