"""Float and complex literals are kernel arguments (``KernelSource.constants``), not
constants in the kernel's code.

A time loop (``u = u + dt * np.sin(x - t)``, ``t`` a new float each step) or an optimiser's
evaluations record the same instructions batch after batch with other literals. With the
literals in the code, every batch compiled its own kernel: 31 steps of such a loop took
38 s of compilation under ``fusionlab run`` (1.2 s a kernel), 4.6 s since. The tests check
the structure (one signature, the literals as arguments) and NumPy's values on every
driver, for literals whose text is awkward (nan, infinities, -0.0, 1e-05, complex)."""

from __future__ import annotations

import io
from contextlib import redirect_stdout

import numpy as np
import pytest

from fusionlab import parse
from fusionlab.capture import capture
from fusionlab.backend.numba.codegen import get_kernel
from fusionlab.backend.numba import plan as numba_backend
from fusionlab.pipeline import run

from test_numba import CACHE

TIME_LOOP = """import numpy as np
x = np.linspace(0, 6.28, 20_000)
u = np.zeros_like(x)
t, dt = 0.0, 0.01
energy = []
for step in range(12):
    u = u + dt * np.sin(x - t) * np.exp(-0.1 * t)
    t += dt
    energy.append(float(np.sum(u * u)))
"""


def _kernel(literal: str, dtype: str = "float64") -> object:
    p = parse(f"ARRAY A {dtype}[64]\nARRAY B {dtype}[64]\nMULTIPLY B, A, {literal}\nSYNC B")
    return get_kernel(p, [0])


def test_kernels_differing_in_a_float_literal_share_a_signature() -> None:
    a, b = _kernel("0.25"), _kernel("1e-05")
    assert a.signature == b.signature and a.key == b.key
    assert (a.constants, b.constants) == ((0.25,), (1e-05,))
    assert "def kernel(A, B, n0, c0):" in a.source and "# c0 = 0.25" in a.source
    # an integer literal stays in the code (it may decide the code: x ** 2 is x * x)
    assert _kernel("3").constants == () and _kernel("3").key != _kernel("4").key


@pytest.mark.parametrize("literal, value", [("0.25", 0.25), ("nan", np.nan), ("inf", np.inf), ("-inf", -np.inf),
                                            ("-0.0", -0.0), ("1e-05", 1e-05), ("1.5e+300", 1.5e300)])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_a_literal_argument_gives_numpys_product(literal: str, value: float, dtype: str) -> None:
    k = _kernel(literal, dtype)
    a = np.linspace(-2, 2, 64).astype(dtype)
    a[3] = 0.0
    out = np.empty_like(a)
    CACHE.get(k)(a, out, *k.scalar_arguments)
    with np.errstate(all="ignore"):
        want = a * value   # NEP 50: the Python float takes the array's type
    np.testing.assert_array_equal(out, want)
    assert np.array_equal(np.signbit(out), np.signbit(want))


def _captured(source: str):
    with redirect_stdout(io.StringIO()):
        return capture(source, {"__name__": "__main__"})


def test_a_time_loop_compiles_one_kernel_for_its_steps() -> None:
    cap = _captured(TIME_LOOP)
    assert len(cap.batches) >= 12
    from fusionlab.partition import partition

    keys = set()
    steps = cap.batches[1:-1]
    for b in steps:
        plan = numba_backend.plan(b, partition(b, "greedy").blocks, min_size=0)
        keys |= {bp.kernel.key for bp in plan.blocks if bp.kernel is not None}
    # every step: the same kernels, whatever t is (before: a new one per step)
    assert 1 <= len(keys) <= 2, keys


@pytest.mark.parametrize("driver", ["blocks", "python", "numba"])
def test_a_time_loop_gives_numpys_values_on_every_driver(driver: str) -> None:
    cap = _captured(TIME_LOOP)
    r = run(cap, "greedy", check=True, driver=driver, cache=CACHE, min_size=0)
    assert r.check is not None and r.check.ok, r.check.mismatches


COMPLEX = """import numpy as np
x = np.linspace(0, 1, 5000)
z = np.exp(1j * x)
w = z * complex(-0.0, 2.5) + complex(1e-05, -0.0)
v = (w * np.float64(0.5)).real + x * float("inf") * 0 + np.where(x > 0.5, np.nan, 1.0)
"""


@pytest.mark.parametrize("driver", ["blocks", "python", "numba"])
def test_complex_and_special_literals_on_every_driver(driver: str) -> None:
    cap = _captured(COMPLEX)
    r = run(cap, "greedy", check=True, driver=driver, cache=CACHE, min_size=0)
    assert r.check is not None and r.check.ok, r.check.mismatches
