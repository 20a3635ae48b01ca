"""Operators on NumPy scalars under capture give NumPy's scalar math, bit for bit.

A reduction returns a NumPy scalar, and ``abs(s)``, ``s * t`` on it run NumPy's scalar math
(scalarmath.c), not the ufunc loop: for complex magnitudes and products the two differ in
the last bit. Pythran's train_eq (an adaptive equaliser: ``err = (R - abs(Xest)**2) * Xest``
fed back into the weights) amplified one such bit to 2.5e-07 against plain NumPy, 7 times
the check's bound. The user's values must be plain NumPy's; the replay (ufunc loops) within
the error model's bound.
"""

from __future__ import annotations

import io
from contextlib import redirect_stdout

import numpy as np
import pytest

from fusionlab.capture import capture
from fusionlab.runtime.check import program_bounds

EQUALISER = """import numpy as np
rng = np.random.default_rng({seed})
E = (rng.standard_normal((1, 120)) + 1j * rng.standard_normal((1, 120))).astype(np.{cdt})
wx = np.zeros((1, 10), dtype=np.{cdt}); wx[:, 4] = 1
R = np.{cdt}(np.sqrt(2) / 2)
mu = np.{rdt}(1e-3)
err = np.zeros(100, dtype=np.{cdt})
mags = np.zeros(100, dtype=np.{rdt})
for i in range(100):
    X = E[:, i:i + 10]
    Xest = np.sum(np.conj(wx) * X)
    mags[i] = abs(Xest) ** 2
    err[i] = (R.real - abs(Xest) ** 2) * Xest
    wx += mu * np.conj(err[i]) * X
z = Xest * Xest / (Xest + 1)
"""


def _plain(source: str) -> dict:
    ns: dict = {}
    with redirect_stdout(io.StringIO()):
        exec(compile(source, "<plain>", "exec"), ns)
    return ns


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("cdt, rdt", [("complex64", "float32"), ("complex128", "float64")])
def test_an_equaliser_on_numpy_scalars_is_plain_numpy_bit_for_bit(seed: int, cdt: str, rdt: str) -> None:
    source = EQUALISER.format(seed=seed, cdt=cdt, rdt=rdt)
    want = _plain(source)
    cap = capture(source, {})
    for name in ("err", "mags", "wx", "z", "Xest"):
        got = cap.namespace[name]
        assert type(got) is type(want[name]) and got.dtype == want[name].dtype, name
        np.testing.assert_array_equal(got, want[name], err_msg=name)
    # the replay runs ufunc loops: within the model's bound of what the user holds
    replay, bounds = cap.replay(), program_bounds(cap)
    for name in ("err", "mags", "wx"):
        diff = np.abs(replay[name].astype(np.complex128) - want[name].astype(np.complex128))
        assert (diff <= np.asarray(bounds[name])).all(), name


def test_scalar_operators_match_numpys_own() -> None:
    rng = np.random.default_rng(0)
    zs = (rng.standard_normal(200) + 1j * rng.standard_normal(200)).astype(np.complex64)
    source = ("import numpy as np\nz = np.asarray(Z)\nout = []\nfor k in range(len(z) - 1):\n"
              "    s, t = np.sum(z[k:k + 1]), np.sum(z[k + 1:k + 2])\n"
              "    out.append((abs(s), s * t, t * s, s / t, -s, s ** 2, s * 2.5, 1.5 * s))\n")
    ns_plain: dict = {"Z": zs}
    exec(compile(source, "<plain>", "exec"), ns_plain)
    cap = capture(source, {"Z": zs})
    got = cap.namespace["out"]
    assert len(got) == len(ns_plain["out"]) == 199
    for a, b in zip(got, ns_plain["out"]):
        for x, y in zip(a, b):
            assert type(x) is type(y) and (x == y), (x, y)
