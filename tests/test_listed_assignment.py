"""Assignments through a short list of constant indices (``a[[k, p]] = a[[p, k]]``,
``u[[0, -1]] = 0``, ``g[:, [0, -1]] = e``) are recorded as one COPY per index
(:mod:`fusionlab.capture.scatter`), give plain NumPy's values and errors, and replay."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fusionlab.ir.bytecode import Opcode
from test_capture_idioms import assert_like_numpy

CASES = {
    "row swap": "a = np.arange(12.0).reshape(3, 4)\na[[0, 2]] = a[[2, 0]]\ns = a.sum(axis=1)\n",
    "swap in a vector": "b = np.arange(5.0)\nb[[1, 3]] = b[[3, 1]]\nc = b * 2\n",
    "both ends": "u = np.linspace(0, 1, 7)\nu[[0, -1]] = 0.0\nv = u + 1\n",
    "two columns": "g = np.ones((3, 5))\ng[:, [0, -1]] = 5.0\nh = g * 2\n",
    "columns from columns": "g = np.arange(15.0).reshape(3, 5)\ng[:, [0, -1]] = g[:, [1, -2]]\n",
    "rows and whole slice": "a = np.zeros((4, 3))\na[[1, 2], :] = np.arange(3.0)\n",
    "length-one value axis": "a = np.zeros((3, 4))\na[[0, 2]] = np.ones((1, 4)) * 7\n",
    "per-row values": "a = np.zeros((3, 2))\na[[2, 0]] = np.array([[1.0, 2.0], [3.0, 4.0]])\n",
    "a repeated index keeps the last": "a = np.zeros(4)\na[[1, 1]] = np.array([5.0, 6.0])\n",
    "value overlaps the target": "a = np.arange(5.0)\na[[1, 2, 3]] = a[0:3]\n",
    "value is a view of other rows": "a = np.arange(12.0).reshape(4, 3)\na[[1, 2]] = a[:2] * 1\nb = a[[1, 2]] + a[1:3]\n",
    "cast on assignment": "a = np.zeros(4, dtype=np.int64)\na[[0, 3]] = np.array([1.7, -2.5])\n",
    "numpy integers": "a = np.arange(6.0)\ni = np.int64(2)\na[[i, 0]] = 9.0\n",
    "out of bounds": "a = np.zeros(3)\na[[0, 3]] = 1.0\n",
    "value of the wrong shape": "a = np.zeros((3, 4))\na[[0, 1]] = np.ones((3, 4))\n",
    "boolean list is a mask, not indices": "a = np.arange(3.0)\na[[True, False, True]] = 0.0\n",
}


@pytest.mark.parametrize("name", list(CASES))
def test_listed_assignment_gives_numpys_answer_and_replays(name):
    assert_like_numpy("import numpy as np\n" + CASES[name])


def test_a_row_swap_is_copies_not_an_opaque_instruction():
    cap = assert_like_numpy("import numpy as np\n" + CASES["row swap"])
    ops = [i.opcode for b in cap.batches for i in b]
    assert Opcode.OPAQUE not in ops
    writes = [i for b in cap.batches for i in b if i.opcode is Opcode.COPY and i.outputs[0].base.name == "a"
              and i.outputs[0].shape == (4,)]
    assert [w.outputs[0].offset for w in writes] == [0, 8]   # row 0 then row 2 (offsets in elements)


def test_a_long_list_stays_one_indexed_assignment():
    cap = assert_like_numpy("import numpy as np\na = np.zeros(100)\na[list(range(80))] = 1.0\n")
    assert any(i.opcode is Opcode.OPAQUE for b in cap.batches for i in b)


def test_gauss_elimination_swaps_rows_without_opaque_instructions():
    from fusionlab.capture import capture

    source = (
        "import numpy as np\n"
        "a = np.array([[1.0, 2, 3], [4, 5, 6], [7, 8, 10]])\nb = np.array([1.0, 2, 3])\n"
        "for k in range(2):\n"
        "    p = k + int(np.argmax(np.abs(a[k:, k])))\n"
        "    if p != k:\n"
        "        a[[k, p]] = a[[p, k]]\n"
        "        b[[k, p]] = b[[p, k]]\n"
        "    f = a[k + 1:, k] / a[k, k]\n"
        "    a[k + 1:, k:] -= f[:, None] * a[k, k:]\n"
        "    b[k + 1:] -= f * b[k]\n"
    )
    assert_like_numpy(source)
    cap = capture(source, {})
    opaque = {i.attr("name") for b in cap.batches for i in b if i.opcode is Opcode.OPAQUE}
    assert opaque == set()   # the swaps are copies, the pivot search an ARGMAX_REDUCE
    assert sum(i.opcode is Opcode.ARGMAX_REDUCE for b in cap.batches for i in b) == 2


@st.composite
def listed_cells(draw):
    shape = draw(st.sampled_from([(5,), (4, 3), (3, 4, 2)]))
    axis = draw(st.integers(0, len(shape) - 1))
    n = shape[axis]
    idx = draw(st.lists(st.integers(-n, n - 1), min_size=1, max_size=4))
    indexed = tuple(len(idx) if a == axis else m for a, m in enumerate(shape))
    trailing = draw(st.integers(0, len(indexed)))
    vshape = list(indexed[len(indexed) - trailing:])
    if vshape and draw(st.booleans()):
        vshape[0] = 1
    source = "import numpy as np\n"
    source += f"a = np.arange({int(np.prod(shape))}.0).reshape({shape})\n"
    key = "[" * 1 + ", ".join(map(str, idx)) + "]"
    key = ", ".join([":"] * axis + [key]) if axis else key
    kind = draw(st.sampled_from(["fresh", "self", "scalar"]))
    if kind == "scalar" or not vshape:
        value = "-1.5"
    elif kind == "fresh":
        value = f"np.arange({int(np.prod(vshape))}.0).reshape({tuple(vshape)}) + 100"
    else:   # read from the very array being assigned: NumPy reads it whole first
        value = f"a[{key}][{', '.join([':'] * 0)}...]" if tuple(vshape) == indexed else "-2.0"
    source += f"a[{key}] = {value}\nr = a * 2\n"
    return source


@settings(max_examples=40, deadline=None)
@given(listed_cells())
def test_random_listed_assignments_match_numpy(source):
    cap = assert_like_numpy(source)
    # the assignment is copies, a read such as ``a[:, [0]]`` a GATHER: nothing runs as NumPy
    assert not [i for b in cap.batches for i in b if i.opcode is Opcode.OPAQUE], source
