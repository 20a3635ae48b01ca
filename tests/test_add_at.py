"""``np.add.at`` and ``np.subtract.at`` (issue 37): recorded as a BINCOUNT of the indices (with
the values as weights) added in place, never OPAQUE; repeated and negative indices as NumPy
resolves them; checked against NumPy for random programs, by the reference executor and by
the compiled kernels (bounds-checked), and an index out of range raises NumPy's IndexError."""

from __future__ import annotations

import io
from contextlib import redirect_stdout

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fusionlab.capture import CaptureError, capture
from fusionlab.ir.bytecode import OpFamily
from fusionlab.pipeline.runner import run

from test_numba import CACHE

pytestmark = pytest.mark.bounds_checked


def _ops(cap) -> list[str]:
    return [ins.opcode.name for b in cap.batches for ins in b if ins.opcode not in OpFamily.SYSTEM]


def _both(src: str, ns: dict, names: tuple[str, ...], driver: str = "python") -> list[str]:
    """Capture ``src`` on a copy of ``ns``, run it fused, compare ``names`` with plain NumPy."""
    with redirect_stdout(io.StringIO()):
        cap = capture(src, {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in ns.items()})
    want = {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in ns.items()}
    exec(src, want)
    got = run(cap, "greedy", min_size=0, cache=CACHE, driver=driver)
    for name in names:
        w, g = np.asarray(want[name]), np.asarray(got.values[name])
        assert g.dtype == w.dtype and g.shape == w.shape, name
        # a repeated index's values summed first, then added: NumPy adds them one at a time
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
    return _ops(cap)


@pytest.mark.parametrize("driver", ["python", "numba"])
def test_scalar_array_and_repeated_indices_fuse_with_their_producers(driver: str) -> None:
    x = np.random.default_rng(0).random(300)
    src = ("import numpy as np\nc = np.zeros(16)\nidx = (x * 16).astype(np.int64)\n"
           "np.add.at(c, idx, x * 2)\nnp.add.at(c, idx[:40], 1.5)\nd = c * 3 + 1\n")
    ops = _both(src, {"x": x}, ("c", "d"), driver)
    assert "OPAQUE" not in ops and ops.count("BINCOUNT") == 2


def test_negative_indices_lists_int_arrays_and_subtract() -> None:
    ops = _both("import numpy as np\nc = np.ones(10)\nnp.subtract.at(c, [1, 1, 3, -1, -10], 0.5)\nd = c * 3\n",
                {}, ("c", "d"))
    assert "OPAQUE" not in ops
    ops = _both("import numpy as np\nc = np.zeros(10, dtype=np.int64)\nnp.add.at(c, (x * 10).astype(int), 2)\n"
                "d = c + 1\n", {"x": np.random.default_rng(1).random(50)}, ("c", "d"))
    assert "OPAQUE" not in ops and "BINCOUNT" in ops


def test_an_index_out_of_range_raises_numpys_error() -> None:
    src = "import numpy as np\nc = np.zeros(4)\nnp.add.at(c, [0, 4], 1.0)\n"
    with pytest.raises(IndexError) as plain:
        exec(src, {})
    with pytest.raises(CaptureError) as captured, redirect_stdout(io.StringIO()):
        capture(src, {})
    # the user's error, as NumPy raised it (the magic shows it with the user's line)
    assert type(captured.value.original) is IndexError and str(captured.value.original) == str(plain.value)


def test_what_is_not_a_one_dimensional_scatter_add_stays_numpys() -> None:
    # a 2-D target (index tuples) and a float added into an int array: NumPy's own call
    for src in ("import numpy as np\nc = np.zeros((3, 3))\nnp.add.at(c, ([0, 1], [1, 2]), 1.0)\nd = c + 1\n",
                "import numpy as np\nc = np.zeros(3, dtype=np.int64)\nnp.add.at(c, [0, 1], 1.5)\n"):
        want: dict = {}
        try:
            exec(src, want)
        except Exception as exc:   # NumPy's casting error, raised by capture too
            with pytest.raises(CaptureError) as info, redirect_stdout(io.StringIO()):
                capture(src, {})
            assert type(info.value.original) is type(exc)
            continue
        with redirect_stdout(io.StringIO()):
            cap = capture(src, {})
        assert "OPAQUE" in _ops(cap)
        got = run(cap, "greedy", min_size=0, cache=CACHE)
        np.testing.assert_array_equal(got.values["c"], want["c"])


@settings(max_examples=30, deadline=None)
@given(n=st.integers(1, 12), idx=st.lists(st.integers(-12, 11), min_size=1, max_size=40),
       scalar=st.booleans(), sub=st.booleans(), seed=st.integers(0, 2**16))
def test_random_scatter_adds_equal_numpys(n: int, idx: list[int], scalar: bool, sub: bool, seed: int) -> None:
    idx = [i for i in idx if -n <= i < n] or [0]
    rng = np.random.default_rng(seed)
    ns = {"i": np.array(idx, dtype=np.int64), "w": rng.random(len(idx)), "c0": rng.random(n)}
    how = "subtract" if sub else "add"
    value = "0.25" if scalar else "w * 2"
    src = f"import numpy as np\nc = c0 * 1.0\nnp.{how}.at(c, i, {value})\nd = c - c0\n"
    ops = _both(src, ns, ("c", "d"))
    assert "OPAQUE" not in ops


def test_an_array_named_like_a_kernel_constant_compiles() -> None:
    """``c0`` is also the name codegen gives a kernel's first float constant: the array is
    renamed in the kernel, which compiles (it ran as NumPy with "duplicate argument 'c0'")."""
    import warnings

    src = "import numpy as np\nc = c0 * 1.5\nd = c - c0\n"
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message=r"block .*: Numba could not compile")
        _both(src, {"c0": np.arange(8.0)}, ("c", "d"), driver="numba")


@pytest.mark.parametrize("driver", ["python", "numba"])
def test_segment_sums_of_add_reduceat_are_a_histogram(driver: str) -> None:
    x = np.random.default_rng(2).random(100)
    ops = _both("import numpy as np\ny = np.add.reduceat(x * 2, [0, 10, 50, 99]) + 1\n", {"x": x}, ("y",), driver)
    assert "OPAQUE" not in ops and "BINCOUNT" in ops
    ops = _both("import numpy as np\ny = np.add.reduceat(x, [0, 3, 9])\n", {"x": np.arange(20)}, ("y",), driver)
    assert "OPAQUE" not in ops


@pytest.mark.parametrize("idx", [[0, 5, 5, 2], [3, 8], [0, 20]])
def test_reduceat_indices_that_repeat_go_back_or_skip_the_start_stay_numpys(idx: list[int]) -> None:
    x = np.random.default_rng(3).random(10)
    src = f"import numpy as np\ny = np.add.reduceat(x, {idx})\n"
    want = {"x": x.copy()}
    try:
        exec(src, want)
    except IndexError:
        with pytest.raises(CaptureError), redirect_stdout(io.StringIO()):
            capture(src, {"x": x.copy()})
        return
    ops = _both(src, {"x": x}, ("y",))
    assert "OPAQUE" in ops


def test_the_users_arrays_after_capture_are_numpys_to_the_last_bit() -> None:
    """Capture computes on the real data as it records: what the cell leaves is NumPy's own
    answer (one value at a time for add.at), not the recorded histogram's rounding."""
    x = np.random.default_rng(4).random(1000) * 1e3
    src = ("import numpy as np\nc = np.zeros(7)\nnp.add.at(c, (x % 7).astype(int), x / 3)\n"
           "s = np.add.reduceat(x / 3, [0, 100, 700])\n")
    want = {"x": x.copy()}
    exec(src, want)
    ns = {"x": x.copy()}
    with redirect_stdout(io.StringIO()):
        capture(src, ns)
    for name in ("c", "s"):
        got = np.asarray(ns[name])
        assert type(ns[name]) is np.ndarray and got.tobytes() == want[name].tobytes(), name
