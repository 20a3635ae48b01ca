"""Capture: namespaces equal to plain NumPy, programs that replay to the same values."""

from __future__ import annotations

import io
from contextlib import redirect_stdout

import numpy as np
import pytest
from hypothesis import given

from fusionlab.ir.bytecode import Opcode
from fusionlab.capture import CaptureError, NoticeKind, capture
from fusionlab.ir.examples import FIG3_PYTHON, fig3
from fusionlab.partition import partition

from strategies import numpy_sources


def plain(source: str, ns: dict | None = None) -> dict:
    ns = {} if ns is None else ns
    with redirect_stdout(io.StringIO()):
        exec(source, ns)
    return ns


def assert_same_namespace(got: dict, want: dict) -> int:
    """Every user variable: same type, same value bit for bit (capture runs real NumPy)."""
    n = 0
    for k, v in want.items():
        if k.startswith("__") or k in ("np", "rng"):
            continue
        assert type(got[k]) is type(v), (k, type(got[k]), type(v))
        if isinstance(v, (np.ndarray, np.generic)):
            assert got[k].dtype == v.dtype, k
            np.testing.assert_array_equal(got[k], v, err_msg=k)
        n += 1
    return n


def assert_replays(cap, want: dict, algorithm: str | None = None) -> None:
    parts = None
    if algorithm:
        parts = {k: partition(b, algorithm).blocks for k, b in enumerate(cap.batches)}
    got = cap.replay(parts)
    for k, v in got.items():
        np.testing.assert_allclose(v, want[k], rtol=1e-12, atol=1e-12, err_msg=k)


def test_fig3a_captures_as_fig3b():
    out = io.StringIO()
    with redirect_stdout(out):
        cap = capture(FIG3_PYTHON)
    assert out.getvalue() == "[0. 0. 0. 0. 0.]\n"
    assert [len(b) for b in cap.batches] == [16, 1]       # print flushes; DEL D comes after
    assert cap.program.signature() == fig3().signature()  # same opcodes, operands, DEL and SYNC
    assert cap.notices == []


@given(numpy_sources())
def test_random_numpy_programs_match_plain_numpy(source):
    want = plain(source)
    cap = capture(source)
    assert assert_same_namespace(cap.namespace, want) >= 3
    assert_replays(cap, want)
    assert_replays(cap, want, "greedy")
    assert_replays(cap, want, "linear")


def test_workload_style_loop_gives_a_batch_per_iteration():
    source = (
        "import numpy as np\n"
        "x = np.linspace(0, 1, 32)\n"
        "for i in range(4):\n"
        "    y = np.exp(-x) * 2 + x * x\n"
        "    err = float(np.abs(y - x).sum())\n"
        "    x = y / y.max()\n"
    )
    cap = capture(source)
    assert len(cap.batches) == 5                               # 4 iterations + the final SYNCs
    assert len({b.signature() for b in cap.batches[1:4]}) == 1  # the loop body repeats exactly
    assert_same_namespace(cap.namespace, plain(source))
    assert_replays(cap, plain(source), "greedy")
    kinds = [i.opcode for i in cap.batches[1]]
    assert Opcode.DEL in kinds and kinds[-1] is Opcode.SYNC


@pytest.mark.parametrize(
    "source, name, line",
    [
        # index arrays separated by a slice (one block of them, between slices, is a GATHER)
        ("import numpy as np\nx = np.arange(24.0).reshape(2, 3, 4)\ni = np.array([1, 0, 1])\ny = x[i, :, i] * 2\n",
         "fancy indexing", 4),
        ("import numpy as np\nA = np.eye(3) * 2 + 1\nb = np.arange(3.0)\ns = np.linalg.solve(A, b)\nt = s + 1\n",
         "np.linalg.solve", 4),
        ("import numpy as np\nx = np.linspace(1, 0, 7)\ny = np.sort(x)\nz = y[1:] - y[:-1]\n", "np.sort", 3),
    ],
)
def test_opaque_fallbacks_run_numpy_and_say_so(source, name, line):
    want = plain(source)
    cap = capture(source)
    assert_same_namespace(cap.namespace, want)
    assert_replays(cap, want, "greedy")
    opaque = [n for n in cap.notices if n.kind is NoticeKind.OPAQUE]
    assert [n.message for n in opaque] == [name]
    assert opaque[0].line == line
    assert any(i.opcode is Opcode.OPAQUE and i.attr("name") == name for i in cap.program)


def test_python_loop_over_elements():
    source = (
        "import numpy as np\n"
        "x = np.linspace(0, 1, 5)\n"
        "total = 0.0\n"
        "for v in x:\n"
        "    if v > 0.3:\n"             # a traced value in control flow: SYNC, batch ends
        "        total += v * 2\n"
        "x[2] = total\n"
    )
    want = plain(source)
    cap = capture(source)
    assert_same_namespace(cap.namespace, want)
    assert type(cap.namespace["total"]) is np.float64
    assert len(cap.batches) == 6                       # one per element compared, then the end
    assert_replays(cap, want)


def test_random_generators_record_their_values():
    source = (
        "import numpy as np\n"
        "rng = np.random.default_rng(7)\n"
        "x = rng.random(8)\n"
        "np.random.seed(3)\n"
        "y = np.random.random(8) + rng.normal(size=8)\n"
        "pi = 4 * float(np.sum(np.sqrt(x * x + y * y) <= 1)) / 8\n"
    )
    want = plain(source)
    cap = capture(source)
    assert_same_namespace(cap.namespace, want)
    names = [i.attr("name") for i in cap.program if i.opcode is Opcode.RANDOM]
    assert names == ["default_rng(7).random", "np.random.random", "default_rng(7).normal"]
    assert_replays(cap, want, "greedy")


def test_user_arrays_are_updated_in_place_and_kept():
    x = np.arange(5.0)
    ns = {"x": x, "np": np}
    cap = capture("x += 1\ny = x * 2\nx[::2] = 0\n", ns)
    assert ns["x"] is x and x.tolist() == [0.0, 2.0, 0.0, 4.0, 0.0]
    assert ns["np"] is np and ns["y"].tolist() == [2.0, 4.0, 6.0, 8.0, 10.0]
    ops = [i.opcode for i in cap.program]
    assert Opcode.DEL not in ops and ops.count(Opcode.SYNC) == 2
    assert cap.inputs[cap.outputs["x"][0].base.name].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_user_errors_keep_their_traceback_and_the_namespace():
    ns: dict = {}
    with pytest.raises(CaptureError) as info:
        capture("import numpy as np\na = np.ones(3)\nb = a / 0\nc = undefined_name + 1\n", ns)
    err = info.value
    assert isinstance(err.original, NameError)
    frames = [f for f in __import__("traceback").extract_tb(err.original.__traceback__)]
    assert frames[-1].lineno == 4 and frames[-1].filename == "<fusionlab-capture>"
    assert type(ns["a"]) is np.ndarray and np.all(np.isinf(ns["b"]))


def test_reductions_scans_and_views():
    source = (
        "import numpy as np\n"
        "M = np.arange(12.0).reshape(3, 4)\n"
        "s0, s1, s = M.sum(axis=0), M.max(axis=1), M.mean()\n"
        "c = np.cumsum(M, axis=1)\n"
        "t = M.T + 1\n"
        "r = M[1:, ::2].ravel()\n"
        "p = np.prod(M[0] + 1)\n"
        "k = (M > 5).sum()\n"
        "ok = bool(np.all(M >= 0))\n"
    )
    want = plain(source)
    cap = capture(source)
    assert_same_namespace(cap.namespace, want)
    assert_replays(cap, want, "greedy")
    ops = {i.opcode for i in cap.program}
    assert {Opcode.ADD_REDUCE, Opcode.MAXIMUM_REDUCE, Opcode.ADD_ACCUMULATE, Opcode.MULTIPLY_REDUCE} <= ops
    assert not cap.notices or all(n.kind is not NoticeKind.OPAQUE or n.message == "reshape copy" for n in cap.notices)


def test_capture_of_a_function():
    def f(n):
        import numpy as np

        a = np.ones(n)
        return (a * 3).sum()

    cap = capture(f, args=(4,))
    assert cap.namespace["result"] == 12.0 and type(cap.namespace["result"]) is np.float64
    assert [i.opcode for i in cap.program][:4] == [Opcode.COPY, Opcode.MULTIPLY, Opcode.ADD_REDUCE, Opcode.DEL]
