"""``free_cores`` right after a parallel loop: this process's own pool worker, still spinning
for a few milliseconds, is never counted as another process (the race that gave the run
after a parallel loop one thread), while real competitors still are."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from fusionlab.backend.numba import threads


class Machine:
    """Runnable tasks as ``/proc`` would show them: the caller, ``others`` competing
    processes, and our pool's worker while it spins; the worker stops spinning at the
    ``stop_at``-th read of this process's threads (0: before the first)."""

    def __init__(self, others: int, spinning: bool, stop_at: int | None) -> None:
        self.others, self.spinning, self.stop_at, self.own_reads = others, spinning, stop_at, 0

    def procs_running(self) -> int:
        return 1 + self.others + int(self.spinning)

    def own_running(self) -> int:
        if self.stop_at is not None and self.own_reads >= self.stop_at:
            self.spinning = False   # it went to sleep just before its state was read
        self.own_reads += 1
        return 1 + int(self.spinning)


@pytest.fixture
def two_cores(monkeypatch: pytest.MonkeyPatch):
    def install(machine: Machine) -> None:
        monkeypatch.setattr(threads, "available_cores", lambda: 2)
        monkeypatch.setattr(threads, "_procs_running", machine.procs_running)
        monkeypatch.setattr(threads, "_own_running", machine.own_running)
    return install


@pytest.mark.parametrize("stop_at", [0, 1, None])
def test_our_own_spinning_worker_is_not_another_process(two_cores, stop_at) -> None:
    # stop_at=0: the worker stops between the machine's count and ours (the race);
    # 1: after our threads were read; None: it spins throughout
    two_cores(Machine(others=0, spinning=True, stop_at=stop_at))
    assert threads.free_cores() == 2


@pytest.mark.parametrize("stop_at", [0, 1, None])
def test_a_real_competitor_still_takes_its_core(two_cores, stop_at) -> None:
    two_cores(Machine(others=1, spinning=True, stop_at=stop_at))
    assert threads.free_cores() == 1
    two_cores(Machine(others=1, spinning=False, stop_at=None))
    assert threads.free_cores() == 1


def test_a_quiet_machine_gives_every_core(two_cores) -> None:
    two_cores(Machine(others=0, spinning=False, stop_at=None))
    assert threads.free_cores() == 2
    two_cores(Machine(others=3, spinning=False, stop_at=None))
    assert threads.free_cores() == 1


def test_free_cores_after_a_real_parallel_loop_counts_no_more_than_the_machine_shows() -> None:
    # on the real machine: right after a parallel loop, the count of other processes is
    # never more than the machine's runnable tasks less the caller (a smoke test of the
    # real /proc readers; other processes may come and go, so only the bound is checked)
    @numba.njit(parallel=True)
    def total(a):  # type: ignore[no-untyped-def]
        s = 0.0
        for i in numba.prange(a.size):
            s += a[i]
        return s

    a = np.ones(200_000)
    for _ in range(5):
        assert total(a) == a.size
        free = threads.free_cores()
        assert 1 <= free <= threads.available_cores()


def test_a_run_reports_its_threads_and_why() -> None:
    import re

    from fusionlab.capture import capture
    from fusionlab.pipeline import run

    cap = capture("import numpy as np\nx = np.arange(5000.0)\ny = np.sqrt(x) * 2 + x\n")
    for driver in ("python", "numba", "blocks"):
        r = run(cap, "greedy", driver=driver, min_size=0)
        assert re.fullmatch(r"(1 thread|\d+ threads): \d+ of \d+ cores free", r.threads), r.threads
