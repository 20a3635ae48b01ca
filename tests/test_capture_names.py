"""Capture on the cells people write (issue 12): bases named after the user's variables, an
unchanged cell re-run in the same namespace records the same program, and a Python loop
over elements is said once and not recorded element by element."""

from __future__ import annotations

import io
from contextlib import redirect_stdout

import numpy as np
from hypothesis import given, settings

from fusionlab.ir.bytecode import Opcode, Program
from fusionlab.capture import SCALAR_LOOP_THRESHOLD, NoticeKind, capture
from fusionlab.ir.examples import FIG3_PYTHON, fig3
from fusionlab.partition import partition

from strategies import numpy_sources

HEAT = """
import numpy as np
n = 24
T = np.zeros((n, n))
T[0, :] = 100.0
for it in range(6):
    T[1:-1, 1:-1] = 0.25 * (T[:-2, 1:-1] + T[2:, 1:-1] + T[1:-1, :-2] + T[1:-1, 2:])
err = float(np.abs(T).max())
"""

FIG3_LIKE = """
import numpy as np
A = np.zeros(4)
B = np.zeros(4)
D = np.zeros(5)
E = np.zeros(5)
A += D[:-1]
A[:] = D[:-1]
B += E[:-1]
B[:] = E[:-1]
T = A * B
np.maximum(T, E[1:], out=D[1:])
np.minimum(T, D[1:], out=E[1:])
print(D)
"""


def names(cap) -> list[str]:
    return [b.name for b in cap.program.bases]


def run(source: str, ns: dict | None = None):
    with redirect_stdout(io.StringIO()):
        return capture(source, ns)


def test_fig3_is_the_papers_listing_with_its_names():
    cap = run(FIG3_PYTHON)
    # the same instructions on the same bases A, B, D, E, T as Fig. 3b (only the flush differs)
    assert cap.program.instructions == fig3().instructions
    assert sorted(names(cap)) == ["A", "B", "D", "E", "T"]


def test_rebinding_a_name_numbers_the_new_arrays():
    cap = run("import numpy as np\nA = np.zeros(3)\nA = A + 1\nA = A * 2\nB = A[1:] - 1\n")
    text = cap.program.to_text()
    assert names(cap) == ["A", "A_1", "A_2", "B"]
    assert "ADD A_1, A, 1" in text and "MULTIPLY A_2, A_1, 2" in text and "SUBTRACT B, A_2[1:], 1" in text


def test_names_from_functions_and_loops_and_temporaries_numbered():
    source = (
        "import numpy as np\n"
        "def step(u):\n"
        "    flux = u[1:] - u[:-1]\n"
        "    u[1:] -= 0.5 * flux\n"
        "    return u\n"
        "u = np.linspace(0, 1, 9)\n"
        "for i in range(2):\n"
        "    u = step(u)\n"
        "v = np.sqrt(u) * 2 + u\n"
    )
    cap = run(source)
    got = names(cap)
    assert got[0] == "u" and "flux" in got and "flux_1" in got and "v" in got
    temps = [n for n in got if n.startswith("t")]
    assert temps == [f"t{k}" for k in range(len(temps))]   # numbered in order of appearance


def test_user_arrays_passed_in_keep_their_names_and_one_array_is_one_input():
    x = np.arange(6.0)
    ns = {"np": np, "x": x, "alias": x, "grid": np.ones((2, 3))}
    cap = capture("y = x * 2 + alias\ngrid += y.reshape(2, 3)\n", ns)
    assert set(names(cap)) == {"x", "grid", "t0", "y"}
    assert set(cap.inputs) == {"x", "grid"}             # alias is x: one input
    assert ns["alias"] is ns["x"] is x
    np.testing.assert_array_equal(ns["grid"], 1 + 3 * np.arange(6.0).reshape(2, 3))


def test_names_are_valid_in_the_text_format_and_never_collide():
    source = (
        "import numpy as np\n"
        "t0 = np.ones(3)\n"                 # a user name that looks like a temporary
        "nan = np.zeros(3)\n"               # a word the text format reads as a number
        "α = np.arange(3.0)\n"              # not ASCII
        "t1 = (t0 + nan) * α + 1\n"
        "x_1 = t1 * 2\n"
        "x = t1 + 1\n"
        "x = x + 1\n"                       # would be x_1, which the user took
    )
    cap = run(source)
    got = names(cap)
    assert len(got) == len(set(got))
    assert {"t0", "nan_", "_", "t1", "x_1", "x", "x_2"} <= set(got)
    for batch in cap.batches:
        assert Program.from_text(batch.to_text()) == batch


def assert_same_runs(source: str) -> None:
    ns: dict = {}
    first = run(source, ns)
    second = run(source, ns)
    assert [b.to_text() for b in first.batches] == [b.to_text() for b in second.batches]
    for a, b in zip(first.batches, second.batches):
        assert partition(a, "greedy").blocks == partition(b, "greedy").blocks
    assert Opcode.DEL not in [i.opcode for i in second.batches[0]][:1]


def test_rerunning_the_heat_cell_records_the_same_program():
    assert_same_runs(HEAT)


def test_rerunning_fig3_like_code_records_the_same_program():
    ns: dict = {}
    first = run(FIG3_LIKE, ns)
    second = run(FIG3_LIKE, ns)
    assert len(first.program) == len(second.program) == 11 + 1 + 5   # 11 operations, print, 5 kept arrays
    assert_same_runs(FIG3_LIKE)


def test_the_previous_runs_arrays_are_not_freed_in_the_new_batch():
    ns: dict = {}
    run("import numpy as np\nx = np.ones(4)\ny = x + 1\n", ns)
    cap = run("import numpy as np\nx = np.ones(4)\ny = x + 1\n", ns)
    assert [i.opcode for i in cap.program].count(Opcode.DEL) == 0
    assert cap.inputs == {}                      # the old x and y were never read: no copies


@settings(max_examples=25)
@given(numpy_sources())
def test_random_cells_rerun_to_the_same_program(source):
    assert_same_runs(source)


def scalar_notices(cap) -> list:
    return [n for n in cap.notices if n.kind is NoticeKind.SCALAR_LOOP]


def test_a_comprehension_over_elements_gets_one_notice_and_stays_small():
    source = "import numpy as np\nx = np.linspace(0, 1, 200)\ny = [x[i]**2 for i in range(len(x))]\nz = np.array(y) + 1\n"
    plain: dict = {}
    exec(source, plain)
    cap = run(source)
    (notice,) = scalar_notices(cap)
    assert notice.line == 3 and "`x**2`" in notice.message
    # two instructions per element (the read, the square) until the threshold, then none
    assert sum(i.opcode not in (Opcode.DEL, Opcode.SYNC) for i in cap.program) <= SCALAR_LOOP_THRESHOLD + 3
    assert [type(v) for v in cap.namespace["y"]] == [np.float64] * 200
    assert [float(v) for v in cap.namespace["y"]] == [float(v) for v in plain["y"]]
    np.testing.assert_array_equal(cap.replay()["z"], plain["z"])


def test_an_accumulating_loop_is_named_once_and_keeps_numpy_scalars():
    source = "import numpy as np\nx = np.arange(500.0)\ns = 0.0\nfor i in range(len(x)):\n    s += x[i] * x[i]\nt = s * 2\n"
    plain: dict = {}
    exec(source, plain)
    cap = run(source)
    assert [n.line for n in scalar_notices(cap)] == [4]     # the loop's line, once for its body
    assert type(cap.namespace["s"]) is np.float64 and cap.namespace["s"] == plain["s"]
    assert cap.instructions < 3 * SCALAR_LOOP_THRESHOLD


def test_a_short_loop_over_elements_is_recorded_without_a_notice():
    cap = run("import numpy as np\nx = np.arange(5.0)\ny = [v * 2 for v in x]\n")
    assert scalar_notices(cap) == [] and sum(i.opcode is Opcode.MULTIPLY for i in cap.program) == 5


def test_numpy_scalars_stay_immutable_under_in_place_operators():
    cap = run("import numpy as np\na = np.arange(4.0).sum()\nb = a\na += 1\nc = np.arange(3)[1]\nd = c\nc *= 5\n")
    ns = cap.namespace
    assert (ns["a"], ns["b"], ns["c"], ns["d"]) == (7.0, 6.0, 5, 1)
    assert type(ns["b"]) is np.float64 and type(ns["d"]) is np.int64


def test_a_captured_functions_array_arguments_are_named_inputs():
    def f(u, v, *, scale=2.0):
        w = u * scale + v
        return w + u

    u, v = np.arange(4.0), np.ones(4)
    cap = capture(f, args=(u,), kwargs={"v": v})
    assert set(cap.inputs) == {"u", "v"}                     # u read twice: one input
    assert {b.name for b in cap.program.bases} == {"u", "v", "w", "t0", "result"}
    np.testing.assert_array_equal(cap.namespace["result"], f(u, v))
    np.testing.assert_array_equal(cap.replay()["result"], f(u, v))


LU_CELL = """
import numpy as np
n = {n}
a = np.random.default_rng(0).random((n, n)) + n * np.eye(n)
u = a.copy()
l = np.zeros((n, n))
for k in range(n - 1):
    pivot = u[k, k]
    if abs(float(pivot)) < 1e-12:
        raise ZeroDivisionError(k)
    for i in range(k + 1, n):
        l[i, k] = u[i, k] / pivot
        u[i, k:] -= l[i, k] * u[k, k:]
"""


def test_a_loop_over_columns_reading_one_pivot_each_keeps_one_batch_per_column():
    # the outer loop reads one element per column (the pivot, a value Python needs) among
    # array work: it is not a loop over elements, so past SCALAR_LOOP_THRESHOLD columns
    # float(pivot) still ends each column's batch; the inner loop over rows is one
    n = SCALAR_LOOP_THRESHOLD + 8
    source = LU_CELL.format(n=n)
    plain: dict = {}
    exec(source, plain)
    cap = run(source)
    syncs = [b for b in cap.batches if any(i.opcode is Opcode.SYNC for i in b.instructions)]
    assert len(cap.batches) == n and len(syncs) == n   # one per column, then the cell's end
    # a column's batch: about ten instructions per row below the pivot until the inner loop
    # goes plain, four after (the multiplier's store, the row update and its temporary's DEL)
    assert max(len(b.instructions) for b in cap.batches) <= 6 * n
    assert [n.line for n in scalar_notices(cap)] == [11]
    # x[i, k:] -= y assigns the updated view to itself: no COPY of a view onto itself
    assert not any(i.opcode is Opcode.COPY and i.inputs[0] == i.outputs[0] for b in cap.batches for i in b.instructions)
    replayed = cap.replay()
    np.testing.assert_array_equal(replayed["u"], plain["u"])
    np.testing.assert_array_equal(replayed["l"], plain["l"])


def test_loop_parents_maps_each_loop_to_the_loop_around_it():
    from fusionlab.capture.recorder import loop_parents

    source = LU_CELL.format(n=4) + "z = [[j for j in range(i)] for i in range(3)]\nwhile False:\n    pass\n"
    assert loop_parents(source) == {11: 7}
    assert loop_parents("for i in range(2):\n    x = [j for j in\n         range(i)]\n") == {2: 1}
    assert loop_parents("for i in (:\n") == {}
