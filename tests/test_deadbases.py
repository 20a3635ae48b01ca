"""Arrays freed early across batches (fusionlab/passes/deadbases.py): the rule's cases one by one,
the stores it saves (kernel structure), and random loops with a sync per iteration run
against plain NumPy."""

from __future__ import annotations

import io
from contextlib import redirect_stdout

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fusionlab import parse
from fusionlab.ir.bytecode import Opcode
from fusionlab.capture import capture
from fusionlab.passes.deadbases import EarlyFree, free_early
from fusionlab.passes.rewrites import RewriteKind
from fusionlab.pipeline.runner import run
from fusionlab.workloads import get_workload
from fusionlab.backend.numba.driver import Runs

# the subject is a pass, not the kernels' parallel loops: serial kernels and drivers with
# Numba's bounds checks (docs/testing.md, "Bounds-checked kernels")
pytestmark = pytest.mark.bounds_checked

FIRST = '''
ARRAY x float64[8]
ARRAY s float64[8]
ARRAY t float64[]
MULTIPLY s, x, 2
ADD_REDUCE t, s, axis=None
SYNC t
'''


def _text(p) -> list[str]:  # type: ignore[no-untyped-def]
    return [line for line in p.to_text().splitlines() if not line.startswith("ARRAY")]


def test_a_base_whose_next_use_is_its_del_is_freed_after_its_last_use() -> None:
    later = parse("ARRAY t float64[]\nARRAY s float64[8]\nDEL t\nDEL s\n")
    got = free_early([parse(FIRST), later], keep=frozenset({"x"}))
    assert got.moved == (EarlyFree("s", 0, 1, 1),)
    assert _text(got.batches[0]) == ["MULTIPLY s, x, 2", "ADD_REDUCE t, s, axis=None", "DEL s", "SYNC t"]
    assert _text(got.batches[1]) == ["DEL t"] and [b.name for b in got.batches[1].bases] == ["t"]


def test_what_stays_alive() -> None:
    # t: SYNCed in batch 1 (the user's code read it); x: an input (keep); s: read in batch 2
    later = parse("ARRAY t float64[]\nARRAY s float64[8]\nARRAY x float64[8]\nARRAY u float64[8]\n"
                  "ADD u, s, 1\nDEL t\nDEL x\nSYNC u\n")
    got = free_early([parse(FIRST), later], keep=frozenset({"x"}))
    assert got.moved == () and got.batches[0] is not None
    assert all(a is b for a, b in zip(got.batches, [got.batches[0], got.batches[1]]))
    # x not kept: its next use is its DEL, so it is freed after its last read in batch 1
    got = free_early([parse(FIRST), later])
    assert [(m.base, m.batch) for m in got.moved] == [("x", 0)]


def test_a_base_read_in_the_next_batch_is_freed_there_and_one_batch_between_may_skip_it() -> None:
    middle = parse("ARRAY s float64[8]\nARRAY u float64[]\nADD_REDUCE u, s, axis=None\nSYNC u\n")
    quiet = parse("ARRAY v float64[2]\nCOPY v, 1\nSYNC v\n")
    last = parse("ARRAY s float64[8]\nARRAY u float64[]\nDEL s\nDEL u\n")
    got = free_early([parse(FIRST), middle, quiet, last], keep=frozenset({"x"}))
    assert got.moved == (EarlyFree("s", 1, 0, 3),)   # after its read in batch 2, not batch 1
    assert _text(got.batches[1]) == ["ADD_REDUCE u, s, axis=None", "DEL s", "SYNC u"]
    assert got.batches[0] is not None and _text(got.batches[0])[-1] == "SYNC t"
    assert got.batches[2] is not None and _text(got.batches[3]) == ["DEL u"]


def test_the_histogram_pass_stores_neither_scaled_nor_z() -> None:
    with redirect_stdout(io.StringIO()):
        cap = capture(get_workload("histogram_equalize").script("tiny"), {})
    r = run(cap, check=True, min_size=0)
    assert r.check is not None and r.check.ok, r.check
    freed = {x.base for x in r.rewrites if x.kind is RewriteKind.FREED_EARLY}
    assert {"scaled", "z", "scaled_1", "z_1"} <= freed, [x.describe() for x in r.rewrites]
    for p in r.plans:   # each DEL shares its writer's kernel: the array is never allocated
        names = {b.name for b in p.program.bases}
        for bp in p.blocks:
            written = {v.base.name for i in bp.instructions for v in p.program[i].writes()}
            freed_here = {p.program[i].outputs[0].base.name for i in bp.instructions
                          if p.program[i].opcode is Opcode.DEL}
            for name in ({"scaled", "z", "scaled_1", "z_1"} & names & written):
                assert name in freed_here, (name, bp.instructions)
    # index is freed early too, after the gather, but stays stored: the gather reads it in
    # a later kernel than the one writing it
    p = r.plans[0]
    writer = next(bp for bp in p.blocks if any(v.base.name == "index" for i in bp.instructions
                                               for v in p.program[i].writes()))
    assert "index" in freed and not any(p.program[i].opcode is Opcode.DEL and p.program[i].outputs[0].base.name == "index"
                                        for i in writer.instructions)


TEMPLATES = [
    "{a} = {b} * 1.5 + it",
    "{a} = np.sqrt(np.abs({b})) - {c}",
    "{a} = np.minimum({b}, {c}) * 0.5",
    "{a} = {b}[::-1] + 1.0",
    "{a} = np.cumsum({b}) / n",
    "{a} = {b} - {c}.mean()",
    "{a}[1:] = {b}[:-1]",
    "{a} += {b}",
    "del {a}\n    {a} = x.copy()",
]


@st.composite
def sync_loops(draw: st.DrawFn) -> str:
    """A loop rebinding and updating three arrays, a float read per iteration (one batch
    each), the arrays handed back at the end or not."""
    names = ["a", "b", "c"]
    lines = ["import numpy as np", "n = 12", "x = np.linspace(-1.0, 2.0, n)",
             "a, b, c = x * 2, x + 1, x - 3", "total = 0.0", f"for it in range({draw(st.integers(1, 4))}):"]
    for _ in range(draw(st.integers(1, 6))):
        t = draw(st.sampled_from(TEMPLATES))
        lines.append("    " + t.format(a=draw(st.sampled_from(names)), b=draw(st.sampled_from(names + ["x"])),
                                       c=draw(st.sampled_from(names + ["x"]))))
    lines.append(f"    total += float({draw(st.sampled_from(names))}.sum())")
    if draw(st.booleans()):
        lines.append("del a, b")
    return "\n".join(lines) + "\n"


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sync_loops())
def test_random_loops_with_a_sync_per_iteration_equal_plain_numpy(source: str) -> None:
    with redirect_stdout(io.StringIO()):
        cap = capture(source, {})
    r = run(cap, check=True, min_size=0)
    assert r.check is not None and r.check.ok, (source, r.check)
    want: dict = {}
    exec(source, want)
    for k, v in r.values.items():
        if k in want:
            np.testing.assert_allclose(v, want[k], rtol=1e-12, atol=1e-12, err_msg=k)


def test_a_loop_rebinding_its_arrays_frees_them_early_and_the_compiled_driver_agrees() -> None:
    source = ("import numpy as np\nx = np.linspace(0.0, 1.0, 5000)\ntotal = 0.0\nfor it in range(3):\n"
              "    s = x * 2.0 + it\n    z = np.sqrt(s) - x\n    total += float(np.abs(z).max())\n")
    with redirect_stdout(io.StringIO()):
        cap = capture(source, {})
    r = run(cap, check=True, min_size=0, driver="numba")
    assert r.check is not None and r.check.ok, r.check
    assert r.ran is Runs.COMPILED_DRIVER, r.driver
    freed = [x for x in r.rewrites if x.kind is RewriteKind.FREED_EARLY]
    assert [(x.batch, x.base) for x in freed] == [(0, "s"), (0, "z"), (1, "s_1"), (1, "z_1")]
    assert [x.describe().split(" freed")[0] for x in freed] == ["batch 1: s", "batch 1: z", "batch 2: s_1", "batch 2: z_1"]
    want: dict = {}
    exec(source, want)
    assert set(r.values) == {"x", "s", "z"}   # the last iteration's arrays, handed back
    for k, v in r.values.items():
        np.testing.assert_allclose(v, want[k], rtol=1e-15, err_msg=k)
