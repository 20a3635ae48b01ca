"""``a.flat[...]`` under capture: for a C-contiguous array a slice (or an integer) through
``flat`` is a 1-D strided view of its memory, recorded exactly (no OPAQUE instruction, no
notice); anything else keeps NumPy's own flatiter, with a notice, and NumPy's values."""

from __future__ import annotations

import io
import warnings
from contextlib import redirect_stdout

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fusionlab.ir.bytecode import Opcode
from fusionlab.capture import NoticeKind, capture
from fusionlab.pipeline import run
from fusionlab.backend.numba.driver import Runs

# kernels bounds-checked (serial): this file tests capture, not the kernels' parallel loops (tests/kernels.py)
pytestmark = pytest.mark.bounds_checked


SHAPES = [(7,), (12,), (3, 4), (5, 5), (2, 3, 4), (3, 1, 5)]


def plain(source: str) -> dict:
    ns: dict = {}
    with redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        exec(source, ns)
    return ns


def captured(source: str):
    ns: dict = {}
    with redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cap = capture(source, ns)
    return ns, cap


def check_against_numpy(source: str, names: list[str], exact: bool):
    """The namespace after capture and the replayed program both equal plain NumPy's; with
    ``exact``, nothing was opaque or left to plain NumPy."""
    want = plain(source)
    ns, cap = captured(source)
    replayed = cap.replay()
    for name in names:
        w = want[name]
        assert type(ns[name]) is type(w), (name, type(ns[name]))
        np.testing.assert_array_equal(ns[name], w, err_msg=f"{name} (namespace)\n{source}")
        if isinstance(w, np.ndarray) and (exact or name in replayed):   # a plain result is not the program's
            np.testing.assert_array_equal(replayed[name], w, err_msg=f"{name} (replay)\n{source}")
    opcodes = [i.opcode for b in cap.batches for i in b.instructions]
    flat_notices = [n for n in cap.notices if "flat" in n.message]
    if exact:
        assert Opcode.OPAQUE not in opcodes, source
        assert not [n for n in cap.notices if n.kind in (NoticeKind.PLAIN, NoticeKind.ALIAS, NoticeKind.OPAQUE)], \
            (source, cap.notices)
    return cap, flat_notices


def _slice_text(start: int | None, stop: int | None, step: int | None) -> str:
    parts = ["" if x is None else str(x) for x in (start, stop, step)]
    return ":".join(parts)


@settings(max_examples=60, deadline=None)
@given(shape=st.sampled_from(SHAPES),
       start=st.one_of(st.none(), st.integers(-15, 15)),
       stop=st.one_of(st.none(), st.integers(-15, 15)),
       step=st.one_of(st.none(), st.integers(-5, 5).filter(lambda s: s != 0)),
       action=st.sampled_from(["read", "scalar", "values", "augmented", "from_array"]))
def test_flat_slices_are_recorded_exactly(shape, start, stop, step, action) -> None:
    key = _slice_text(start, stop, step)
    head = f"import numpy as np\na = np.arange({int(np.prod(shape))}.0).reshape({shape}) * 1.5 - 3\n"
    body = {
        "read": f"d = a.flat[{key}]\ne = d * 2\n",
        "scalar": f"a.flat[{key}] = -7.25\n",
        "values": f"k = len(a.flat[{key}])\na.flat[{key}] = np.arange(k) + 0.5\n",
        "augmented": f"a.flat[{key}] += 10\n",
        "from_array": f"b = np.sqrt(np.abs(a))\na.flat[{key}] = b.flat[{key}] * 3\n",
    }[action]
    names = ["a"] + (["d", "e"] if action == "read" else [])
    # an empty selection is checked for values only: capture makes an empty view's copy
    # opaque however it is indexed (``a[:0].copy()`` too), which is not ``flat``'s doing
    empty = not len(range(*slice(start, stop, step).indices(int(np.prod(shape)))))
    check_against_numpy(head + body + "s = float(a.sum())\n", names + ["s"], exact=not empty)


@pytest.mark.parametrize("index", [0, 3, -1, -5, np.int64(2)])
def test_flat_integers_read_and_write_elements(index) -> None:
    source = ("import numpy as np\na = np.arange(24.0).reshape(2, 3, 4)\n"
              f"x = a.flat[{index!r}] * 2\na.flat[{index!r}] = -1.0\na.flat[{index!r}] += 0.5\n")
    check_against_numpy(source, ["a", "x"], exact=True)


def test_the_diagonal_idioms_of_lu_make_no_opaque_block() -> None:
    source = ("import numpy as np\nn = 6\na = np.arange(36.0).reshape(n, n) / 7\n"
              "a.flat[:: n + 1] += n\nl = np.zeros((n, n))\nl.flat[:: n + 1] = 1.0\n"
              "u = a.copy()\nu[1, 0:] -= l[1, 0] * u[0, 0:]\nd = a.flat[:: n + 1]\n")
    cap, _ = check_against_numpy(source, ["a", "l", "u", "d"], exact=True)
    diag = [i for b in cap.batches for i in b.instructions
            if i.opcode is Opcode.COPY and i.outputs[0].base.name == "l" and i.outputs[0].strides == (7,)]
    assert len(diag) == 1 and diag[0].outputs[0].shape == (6,)


@pytest.mark.parametrize("setup, statement", [
    ("b = a.T", "b.flat[::2] = -1.0"),                      # transposed: not C-contiguous
    ("b = a[:, ::2]", "b.flat[1::2] += 4.0"),               # strided columns
    ("b = a[::-1]", "x = b.flat[2:9:3]"),                   # reversed rows
    ("b = a", "b.flat[[1, 5, 7]] = 3.0"),                   # a list index
    ("b = a", "x = b.flat[b.flat[:] > 5]"),                 # a boolean index
    ("b = a", "b.flat[:6] = [1.0, 2.0]"),                   # NumPy repeats a short value
    ("b = a", "b.flat[:3] = np.arange(5.0)"),               # NumPy cuts a long one
    ("b = a", "b.flat[::5] = np.ones((1, 3))"),             # NumPy flattens a 2-D value
])
def test_other_flat_uses_keep_numpys_flatiter_with_a_notice(setup, statement) -> None:
    source = f"import numpy as np\na = np.arange(12.0).reshape(3, 4)\n{setup}\n{statement}\nc = a * 2\n"
    names = ["a", "b", "c"] + (["x"] if statement.startswith("x") else [])
    _, notices = check_against_numpy(source, names, exact=False)
    assert notices and all(n.kind is NoticeKind.PLAIN for n in notices), notices


def test_a_kept_flatiter_and_iteration_are_numpys() -> None:
    source = ("import numpy as np\na = np.arange(6.0).reshape(2, 3)\nf = a.flat\nkept = [a.flat]\n"
              "total = 0.0\nfor v in a.flat:\n    total += float(v)\nn = len(a.flat)\nz = np.asarray(a.flat)\n")
    ns, _ = captured(source)
    assert type(ns["f"]) is np.flatiter and type(ns["kept"][0]) is np.flatiter
    assert ns["total"] == 15.0 and ns["n"] == 6
    np.testing.assert_array_equal(ns["z"], np.arange(6.0))


def test_a_whole_flat_assignment() -> None:
    check_against_numpy("import numpy as np\na = np.zeros((2, 3))\na.flat = 2.5\nb = a + 1\n", ["a", "b"], exact=True)
    _, notices = check_against_numpy("import numpy as np\na = np.zeros((2, 3))\na.flat = [1.0, 2.0]\nb = a + 1\n",
                                     ["a", "b"], exact=False)
    assert notices


def test_lu_runs_with_a_driver_now_that_its_diagonals_are_views() -> None:
    from fusionlab.workloads import get_workload

    source = get_workload("lu_rows").script("tiny")
    ns, cap = captured(source)
    assert not any(i.opcode is Opcode.OPAQUE for b in cap.batches for i in b.instructions)
    for mode, runs in (("python", Runs.PYTHON_DRIVER), ("numba", Runs.COMPILED_DRIVER)):
        r = run(cap, "greedy", check=True, min_size=0, driver=mode)
        assert r.ran is runs, r.driver
        assert r.check is not None and r.check.ok, r.check
        l, u, error = ns["result"]
        assert sorted(r.values) == ["result[0]", "result[1]", "result[2]"], sorted(r.values)
        np.testing.assert_allclose(r.values["result[0]"], l, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(r.values["result[1]"], u, rtol=1e-12, atol=1e-12)
