"""The time budget in the partition algorithms, the ILP's solver process and the SVG layout.

An expired or tiny budget must give a legal partition, marked not proven, whose notes
name the phase that was cut; an interrupt raised from the budget must reach the caller
and leave the merge cache without a cut result; the ILP's solver and the layout run in
processes that are asked for the time limit and killed past it. No test asserts a time.
"""

from __future__ import annotations

import _thread
import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fusionlab import parse
from fusionlab.support.budget import Budget, BudgetExceeded, Interrupt
from fusionlab.capture import capture
from fusionlab.ir.examples import fig3
from fusionlab.partition import ALGORITHMS, MergeCache, evaluate, partition
from fusionlab.partition.ilp import solve_in_process
from fusionlab.explore.viz.svg import SvgUnavailable, refusal, render_svg, run_limited
from fusionlab.analysis.wsp import WSPGraph, partition_problems

from strategies import programs

SMALL = parse("ARRAY A float64[8]\nARRAY B float64[8]\nARRAY C float64[8]\nCOPY A, 1\nMULTIPLY B, A, A\n"
              "ADD C, B, A\nDEL A\nDEL B\nSYNC C")

# The phases each algorithm can be cut in (the first is where an expired budget cuts it).
PHASES = {
    "linear": ["linear: pass"],
    "unintrusive": ["unintrusive: merging"],
    "greedy": ["greedy: weight edges", "greedy: merging"],
    "optimal": ["optimal: unintrusive", "optimal: weight edges", "optimal: greedy seed: weight edges",
                "optimal: greedy seed: merging", "optimal: search"],
    "ilp": ["ilp: seed", "ilp: seed: weight edges", "ilp: seed: merging", "ilp: unintrusive", "ilp: model building",
            "ilp: solving"],
    "exhaustive": ["exhaustive: enumeration"],
}


class CountingBudget(Budget):
    """A budget that runs out (or raises ``error``) at its ``after``-th check: cuts a
    chosen phase without depending on the clock."""

    def __init__(self, after: int, error: type[BaseException] = BudgetExceeded) -> None:
        super().__init__(None)
        self.after, self.error, self.checks, self.phases = after, error, 0, []

    def check(self, phase: str = "work") -> None:
        self.checks += 1
        self.phases.append(phase)
        if self.checks > self.after:
            raise BudgetExceeded(phase) if self.error is BudgetExceeded else self.error()

    def child(self, seconds: float | None = None) -> "Budget":
        return self  # the same counter through every phase


def _program_for(algorithm: str):
    return SMALL if algorithm == "exhaustive" else fig3()


@pytest.mark.parametrize("algorithm", list(PHASES))
def test_an_expired_budget_gives_a_legal_partition_naming_the_phase(algorithm):
    r = partition(_program_for(algorithm), algorithm, "bohrium", budget=Budget(0.0))
    assert r.legal and not r.proven_optimal
    assert r.budget_cut == PHASES[algorithm][0]
    assert any(f"phase '{r.budget_cut}'" in n for n in r.notes), r.notes


def test_singleton_completes_whatever_the_budget():
    r = partition(fig3(), "singleton", budget=Budget(0.0))
    assert r.legal and r.kernels == 17 and r.budget_cut == ""


@pytest.mark.parametrize("algorithm", list(PHASES))
def test_every_phase_can_be_cut_and_the_result_stays_legal(algorithm):
    program = _program_for(algorithm)
    full = CountingBudget(10**9)
    done = partition(program, algorithm, "bohrium", budget=full)
    assert not done.budget_cut
    seen = []
    for after in range(0, full.checks, max(1, full.checks // 40)):
        r = partition(program, algorithm, "bohrium", budget=CountingBudget(after))
        assert r.legal and r.budget_cut in PHASES[algorithm], (after, r.budget_cut)
        assert any(r.budget_cut in n for n in r.notes)
        if algorithm in ("optimal", "ilp", "exhaustive"):
            assert r.cost >= done.cost and not r.proven_optimal
        seen.append(r.budget_cut)
    assert set(seen) >= {p for p in PHASES[algorithm] if p in full.phases} - {"ilp: solving"}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(programs(min_size=2, max_size=8), st.integers(0, 60), st.sampled_from(["bohrium", "max_locality"]))
def test_a_cut_search_bounds_the_optimum_from_below(p, after, model):
    g = WSPGraph(p)
    best = partition(g, "exhaustive", model).cost
    r = partition(g, "optimal", model, budget=CountingBudget(after))
    assert r.legal and r.cost >= best - 1e-9
    if r.proven_optimal:
        assert abs(r.cost - best) < 1e-9
    elif r.bound is not None:
        assert r.bound <= best + 1e-9


def test_the_node_limit_gives_a_bound_and_is_cached():
    cache = MergeCache()
    r = partition(fig3(), "optimal", cache=cache, max_nodes=3, seed_greedy=False)
    assert not r.proven_optimal and r.bound is not None and r.bound <= 304 <= r.cost
    assert r.to_dict()["bound"] == r.bound and r.budget_cut == ""
    assert len(cache) == 1  # deterministic: the same request gives the same answer


@pytest.mark.parametrize("algorithm", ["greedy", "optimal", "ilp", "unintrusive", "linear"])
def test_a_cut_result_is_not_cached(algorithm):
    cache = MergeCache()
    cut = partition(fig3(), algorithm, cache=cache, budget=Budget(0.0))
    assert cut.budget_cut and len(cache) == 0
    full = partition(fig3(), algorithm, cache=cache)
    assert not full.cache_hit and len(cache) == 1
    assert partition(fig3(), algorithm, cache=cache, budget=Budget(0.0)).cache_hit  # a complete one is reused


@pytest.mark.parametrize("algorithm", list(PHASES))
@pytest.mark.parametrize("after", [0, 3, 12])
def test_keyboard_interrupt_from_check_surfaces_and_leaves_the_cache_clean(algorithm, after):
    program = _program_for(algorithm)
    cache = MergeCache()
    b = CountingBudget(after, KeyboardInterrupt)
    with pytest.raises(KeyboardInterrupt):
        partition(program, algorithm, cache=cache, budget=b)
    assert len(cache) == 0
    again = partition(program, algorithm, cache=cache)
    assert again.legal and not again.budget_cut and not again.cache_hit
    assert again.blocks == partition(program, algorithm).blocks


def test_keyboard_interrupt_from_on_phase_surfaces():
    announced = []

    def on_phase(name: str) -> None:
        announced.append(name)
        if name == "greedy: merging":
            raise KeyboardInterrupt

    cache = MergeCache()
    with pytest.raises(KeyboardInterrupt):
        partition(fig3(), "greedy", cache=cache, budget=Budget(60.0, on_phase=on_phase))
    assert announced == ["WSP graph", "greedy: weight edges", "greedy: merging"] and len(cache) == 0


def test_evaluate_takes_a_budget_and_lists_at_most_twenty_pairs():
    r = evaluate(fig3(), [range(17)], budget=Budget(60.0))
    assert not r.legal and len(r.notes) == 21 and r.notes[-1].startswith("... and 2 more pairs")
    with pytest.raises(BudgetExceeded, match="legality"):
        evaluate(WSPGraph(fig3()), [range(17)], budget=Budget(0.0))


@settings(max_examples=60, deadline=None)
@given(programs(min_size=1, max_size=9), st.randoms(use_true_random=False))
def test_blockwise_legality_agrees_with_the_pairwise_definition(p, rnd):
    g = WSPGraph(p)
    labels = [rnd.randrange(3) for _ in range(g.n)]
    blocks = [[i for i in range(g.n) if labels[i] == k] for k in range(3)]
    blocks = [b for b in blocks if b]
    pairwise = any(g.forbidden(b[x], b[y]) is not None for b in blocks
                   for x in range(len(b)) for y in range(x + 1, len(b)))
    problems = partition_problems(g, blocks)
    assert any("share a block" in q for q in problems) == pairwise


# -- the ILP's solver process ----------------------------------------------------------------

def test_ilp_asks_its_solver_process_for_the_time_limit_and_stops_at_it():
    # a program the ILP does not prove in seconds (it proves the 40 x 40 heat cell of 20
    # iterations in under a second since the separated pairs, issue 16)
    from fusionlab.ir.examples import random_program

    program = random_program(300, seed=1)
    r = partition(program, "ilp", "bohrium", time_limit=1.5, solver="process")
    assert r.legal and not r.proven_optimal and r.budget_cut == "ilp: solving"
    solver = next(n for n in r.notes if n.startswith("HiGHS"))
    if "killed" in solver:  # HiGHS overran its own limit: the process was stopped at the deadline
        assert "did not stop at its time limit" in solver
    else:
        asked = float(solver.split("asked for a time limit of ")[1].split(" s")[0])
        assert 0 < asked <= 1.5 and "time limit reached" in solver
    greedy = partition(program, "greedy", "bohrium")
    assert r.cost <= greedy.cost


def test_ilp_falls_back_to_the_cheaper_seed_as_its_note_says():
    r = partition(fig3(), "ilp", "robinson", max_variables=10)
    greedy = partition(fig3(), "greedy", "robinson")
    assert "greedy partition" in r.notes[0] and r.cost == greedy.cost and r.kernels < 17


def _sleeper(pidfile: Path) -> list[str]:
    code = f"import os, time; open({str(pidfile)!r}, 'w').write(str(os.getpid())); time.sleep(60)"
    return [sys.executable, "-c", code]


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    return False


def _interrupt_after(seconds: float) -> None:
    def handler(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGALRM, handler)
    signal.setitimer(signal.ITIMER_REAL, seconds)


def test_solver_process_is_killed_at_its_deadline(tmp_path):
    pidfile = tmp_path / "pid"
    assert solve_in_process({"time_limit": 0.1}, 1.0, argv=_sleeper(pidfile)) is None
    assert _gone(int(pidfile.read_text()))


def test_an_interrupt_kills_the_solver_process(tmp_path):
    pidfile = tmp_path / "pid"
    old = signal.getsignal(signal.SIGALRM)
    try:
        _interrupt_after(1.0)
        with pytest.raises(KeyboardInterrupt):
            solve_in_process({"time_limit": 30.0}, 30.0, argv=_sleeper(pidfile))
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert _gone(int(pidfile.read_text()))


def test_an_interrupt_kills_the_layout_process(tmp_path):
    pidfile = tmp_path / "pid"
    old = signal.getsignal(signal.SIGALRM)
    try:
        _interrupt_after(1.0)
        with pytest.raises(KeyboardInterrupt):
            run_limited(_sleeper(pidfile), b"", 30.0)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert _gone(int(pidfile.read_text()))


def test_a_layout_past_its_time_limit_is_stopped(tmp_path):
    pidfile = tmp_path / "pid"
    with pytest.raises(SvgUnavailable, match="did not finish within its time limit"):
        run_limited(_sleeper(pidfile), b"", 0.5)
    assert _gone(int(pidfile.read_text()))


# -- the SVG guards ------------------------------------------------------------------------------


def _dense_dot(nodes: int, edges: int) -> str:
    pairs = [(a, b) for a in range(nodes) for b in range(a + 1, nodes)][:edges]
    return ("digraph {\n" + "".join(f'n{i} [label="ADD t{i}, t{i}, 1"];\n' for i in range(nodes))
            + "".join(f"n{a} -> n{b};\n" for a, b in pairs) + "}\n")


def test_svg_guards_refuse_with_reasons():
    dot = _dense_dot(300, 4100)
    with pytest.raises(SvgUnavailable, match="4100 edges, more than the 1500"):
        render_svg(dot)
    assert "300 nodes, more than the 200" in refusal(dot, max_nodes=200, max_edges=10**6)
    assert "bytes, more than the 1000" in refusal(dot, max_bytes=1000)
    assert refusal('digraph { a [label="x -> y"]; a -> b }', max_edges=1) is None  # arrows in labels are text


def test_svg_layout_of_a_dense_graph_is_stopped_at_its_limit():
    dot = _dense_dot(300, 4100)
    with pytest.raises(SvgUnavailable, match="time limit"):
        render_svg(dot, engine="wasm", max_nodes=10**6, max_edges=10**6, max_bytes=10**9, timeout=1.0)


def test_svg_budget_caps_the_layout_time():
    calls = []

    def runner(argv: list[str], data: bytes, seconds: float) -> bytes:
        calls.append(seconds)
        return b"<svg></svg>"

    svg, _ = render_svg("digraph { a -> b }", budget=Budget(2.0), timeout=20.0, runner=runner)
    assert svg == "<svg></svg>" and 0 < calls[0] <= 2.0
    with pytest.raises(SvgUnavailable, match="no time left"):
        render_svg("digraph { a -> b }", engine="wasm", budget=Budget(0.0), runner=runner)


def _updates(n: int):
    # one base written n times: the graph compares n * (n - 1) / 2 pairs, enough to check the clock
    return parse("\n".join(["ARRAY A float64[64]", "COPY A, 1"] + ["ADD A, A, A"] * n + ["SYNC A"]))


@pytest.mark.parametrize("algorithm", ["optimal", "ilp"])
def test_a_time_limit_spent_before_the_search_still_returns_a_partition(algorithm):
    # CI found this: on a slow machine notebook 03's 0.1 s limit ran out while the WSP graph
    # was being built, and BudgetExceeded reached the notebook instead of a partition
    program = _updates(300)
    r = partition(program, algorithm, "bohrium", time_limit=0.0)
    assert r.legal and not r.proven_optimal and r.budget_cut
    assert sum(len(b) for b in r.blocks) == len(program.instructions)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")  # the point of the test
def test_an_interrupt_swallowed_by_a_finaliser_stops_the_work_at_the_next_check():
    # Kernel -> Interrupt landing in a finaliser is printed as "Exception ignored" and lost;
    # CI once saw a %%fuse cell run on to the end after one. Armed, the budget re-raises it.
    intr = Interrupt()
    budget = Budget(60.0, interrupt=intr).child(30.0)
    sent = threading.Event()

    class Finaliser:
        def __del__(self) -> None:
            threading.Thread(target=lambda: (_thread.interrupt_main(), sent.set())).start()
            end = time.monotonic() + 5
            while not sent.is_set() and time.monotonic() < end:
                pass
            for _ in range(10_000):  # the eval loop handles the signal here, inside __del__
                pass

    before = signal.getsignal(signal.SIGINT)   # SIG_IGN in a background job, the default elsewhere
    with intr.armed():
        Finaliser()  # no reference kept: __del__ runs at once, and swallows the interrupt
        assert sent.wait(5) and intr.pending
        with pytest.raises(KeyboardInterrupt):
            budget.check("optimal: search")
    intr.acknowledge()
    budget.check("the display after the interrupt")
    assert signal.getsignal(signal.SIGINT) == before
