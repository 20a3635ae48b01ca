"""Index arrays after slices or ``...`` (``a[:, [0, -1]]``, ``img[..., order]``, ``a[1:, idx]``):
one GATHER with ``axis=`` (the source's first indexed axis), equal to NumPy bit for bit, with
NumPy's strides, fused with its consumers; separated index arrays stay OPAQUE and right."""

from __future__ import annotations

import io
from contextlib import redirect_stdout

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fusionlab import parse
from fusionlab.ir.bytecode import Opcode, OpFamily
from fusionlab.capture import capture
from fusionlab.runtime.reference import gather
from fusionlab.pipeline.runner import run

from test_numba import CACHE

HEAD = ("import numpy as np\na = np.arange(20.0).reshape(4, 5) * 0.75 - 3\n"
        "img = (np.arange(60) % 17).reshape(4, 5, 3).astype(np.float32)\n"
        "idx = np.array([4, 0, -5, 2, 2])\norder = [2, 1, 0]\nix = np.array([1, -1])\niy = np.array([0, 2, 2])\n")

FORMS = {   # expression: the GATHER's axis=
    "a[:, [0, -1]]": 1, "a[:, idx]": 1, "img[:, :, order]": 2, "img[..., order]": 2, "a[1:, idx]": 1,
    "img[:, ix[:, None], iy]": 1, "img[::2, idx, 1:]": 1, "a[..., idx % 4, :]": 0, "img[:, [1, 1, -1], ...]": 1,
    "a[idx % 4, 1:]": 0, "a[:, np.arange(5)[::-1]]": 1,
}


def _capture(src: str):
    with redirect_stdout(io.StringIO()):
        return capture(src, {})


def _plain(src: str) -> dict:
    ns: dict = {}
    with redirect_stdout(io.StringIO()):
        exec(src, ns)
    return ns


def _gathers(cap) -> list:
    return [i for b in cap.batches for i in b if i.opcode in OpFamily.GATHER]


def _same(got: np.ndarray, want: np.ndarray, strides: bool = True) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    if strides:   # NumPy's layout: a transposed view of a buffer whose indexed axes come first
        assert got.strides == want.strides and got.flags.c_contiguous == want.flags.c_contiguous


@pytest.mark.parametrize("expr", sorted(FORMS))
def test_index_arrays_after_slices_are_one_fused_gather(expr):
    src = HEAD + f"y = {expr}\nz = y * 2 + 1\n"
    want = _plain(src)
    cap = _capture(src)
    assert not cap.notices, cap.notices
    ops = [i.opcode for b in cap.batches for i in b]
    assert Opcode.OPAQUE not in ops
    (g,) = _gathers(cap)
    assert g.attr("axis", 0) == FORMS[expr] and g.outputs[0].shape == want["y"].shape
    _same(cap.namespace["y"], want["y"])
    # (a ufunc's result is C-ordered under capture, not in its input's order as NumPy's "K")
    _same(cap.namespace["z"], want["z"], strides=False)
    for algorithm in ("greedy", "singleton"):
        r = run(cap, algorithm, check=True, cache=CACHE, min_size=0)
        assert r.check.ok and not r.fallbacks, r.fallbacks
        _same(r.values["y"], want["y"], strides=False)
        _same(r.values["z"], want["z"], strides=False)
    # greedy: the gather and its consumer maps share one kernel
    r = run(cap, "greedy", cache=CACHE, min_size=0)
    program = next(b for b in cap.batches if any(i.opcode in OpFamily.GATHER for i in b))
    plan = next(p for p in r.plans if p.program is program)
    (block,) = [b for b in plan.blocks if any(program[i].opcode in OpFamily.GATHER for i in b.instructions)]
    names = {program[i].opcode for i in block.instructions}
    assert {Opcode.GATHER, Opcode.MULTIPLY, Opcode.ADD} <= names and block.kernel is not None


@pytest.mark.parametrize("expr", ["img[idx[:3] % 4, :, order]", "img[[0], 1, [2]]", "a[None, :, [0, 1]]",
                                  "img[:, [0], 1]", "a[:, [True, False, True, False, True]]", "a[:, []]"])
def test_other_keys_with_index_arrays_stay_opaque_and_right(expr):
    """Separated index arrays (NumPy puts their axes first), integers or None beside them,
    masks and empty lists: not this rule; NumPy's answer all the same."""
    src = HEAD + f"y = {expr}\nz = y * 2\n"
    want = _plain(src)
    cap = _capture(src)
    assert not _gathers(cap)
    _same(cap.namespace["z"], want["z"], strides=False)
    np.testing.assert_array_equal(cap.namespace["y"], want["y"])
    r = run(cap, "greedy", check=True, cache=CACHE, min_size=0)
    assert r.check.ok
    np.testing.assert_array_equal(r.values["z"], want["z"])


def test_out_of_range_after_a_slice_raises_numpys_error():
    src = HEAD + "y = a[:, [5]]\n"
    with pytest.raises(IndexError) as plain:
        _plain(src)
    from fusionlab.capture import CaptureError
    with pytest.raises(CaptureError) as got:
        _capture(src)
    assert str(got.value.original) == str(plain.value)


def test_reference_and_text_of_an_axis_gather():
    p = parse("ARRAY M float64[3,4,2]\nARRAY J int64[5]\nARRAY Y float64[3,5,2]\nRANGE M\n"
              "GATHER Y, M, J[:, None], axis=1")
    assert parse(p.to_text()) == p and p[1].attr("axis") == 1 and p[1].domain == (3, 5, 2)
    m = np.arange(24.0).reshape(3, 4, 2)
    j = np.array([3, -1, 0, 0, -4])
    np.testing.assert_array_equal(gather(m, [j[:, None]], (3, 5, 2), axis=1), m[:, j])


DTYPES = ["float64", "float32", "int32", "uint8", "bool", "complex128"]


@st.composite
def axis_gathers(draw):
    ndim = draw(st.integers(2, 4))
    shape = tuple(draw(st.lists(st.integers(1, 4), min_size=ndim, max_size=ndim)))
    lead = draw(st.integers(1, ndim - 1))
    k = draw(st.integers(1, ndim - lead))
    n = draw(st.integers(1, 5))
    lists = [draw(st.lists(st.integers(-shape[lead + j], shape[lead + j] - 1), min_size=n, max_size=n))
             for j in range(k)]
    before = [draw(st.sampled_from([":", "1:", "::-1", ":-1"])) if shape[j] > 1 else ":" for j in range(lead)]
    after = [":"] * (ndim - lead - k)
    style = draw(st.sampled_from(["slices", "ellipsis", "array"]))
    keys = [f"np.array({x}, dtype=np.int32)" if style == "array" else str(x) for x in lists]
    if style == "ellipsis" and all(b == ":" for b in before):
        key = ", ".join(["..."] + keys + after)
    else:
        key = ", ".join(before + keys + after)
    dtype = draw(st.sampled_from(DTYPES))
    src = (f"import numpy as np\ns = (np.arange({int(np.prod(shape))}) % 7 - 2).reshape({shape}).astype(np.{dtype})\n"
           f"y = s[{key}]\nz = y + y\n")
    return src, lead


@settings(max_examples=40, deadline=None)
@given(axis_gathers())
def test_random_axis_gathers_equal_numpy(case):
    src, lead = case
    want = _plain(src)
    cap = _capture(src)
    assert Opcode.OPAQUE not in [i.opcode for b in cap.batches for i in b], src
    (g,) = _gathers(cap)
    assert g.attr("axis", 0) == lead, src
    _same(cap.namespace["y"], want["y"])
    r = run(cap, "greedy", check=True, cache=CACHE, min_size=0)
    assert r.check.ok and not r.fallbacks, (src, r.fallbacks)
    _same(r.values["y"], want["y"], strides=False)
    _same(r.values["z"], want["z"], strides=False)


@pytest.mark.parametrize("expr", ["np.take(img, idx[:2, None] % 5, axis=1)", "np.take(img, [2, 0], axis=-1)",
                                  "a.take(idx, axis=1)", "np.take(a, idx % 4, axis=0)"])
def test_take_along_any_axis_is_a_c_ordered_gather(expr):
    src = HEAD + f"y = {expr}\nz = y - 1\n"
    want = _plain(src)
    cap = _capture(src)
    assert Opcode.OPAQUE not in [i.opcode for b in cap.batches for i in b]
    (g,) = _gathers(cap)
    assert g.outputs[0].is_full()   # np.take's result is C-contiguous: the GATHER writes it whole
    _same(cap.namespace["y"], want["y"])
    r = run(cap, "greedy", check=True, cache=CACHE, min_size=0)
    assert r.check.ok and not r.fallbacks, r.fallbacks
    _same(r.values["z"], want["z"])
