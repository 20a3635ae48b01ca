"""The benchmark's round order (``benchmarks/bench_backend.py``, ``round_order``): the first
fusionlab variant run after NumPy's or a loop's finds its kernels' code and memory cold, so
fusionlab's variants take turns at that place; every variant still runs once a round."""

from __future__ import annotations

import doctest
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import bench_backend  # noqa: E402  (a script directory, not a package)

NAMES = ["numpy", "numba", "loop", "fusionlab", "fusionlab_python", "fusionlab_blocks"]


def test_every_variant_runs_once_a_round() -> None:
    for k in range(12):
        assert sorted(bench_backend.round_order(NAMES, k)) == sorted(NAMES)


def test_fusionlabs_variants_take_turns_at_running_first_after_the_others() -> None:
    rounds = 9
    stream = [n for k in range(rounds) for n in bench_backend.round_order(NAMES, k)]
    firsts = Counter(stream[i] for i in range(1, len(stream))
                     if stream[i].startswith("fusionlab") and not stream[i - 1].startswith("fusionlab"))
    assert set(firsts) == {"fusionlab", "fusionlab_python", "fusionlab_blocks"}, firsts
    assert max(firsts.values()) - min(firsts.values()) <= 1, firsts


def test_round_order_examples() -> None:
    runner = doctest.DocTestRunner()
    for test in doctest.DocTestFinder().find(bench_backend.round_order, "round_order", globs={"round_order": bench_backend.round_order}):
        runner.run(test)
    assert runner.tries >= 1 and runner.failures == 0
