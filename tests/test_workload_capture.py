"""Every workload, captured at its tiny preset: plain NumPy's namespace, replayable bytecode."""

from __future__ import annotations

import io
from contextlib import redirect_stdout

import numpy as np
import pytest

from fusionlab.capture import NoticeKind, capture
from fusionlab.runtime.check import lookup
from fusionlab.partition import MergeCache, partition
from fusionlab.analysis.wsp import WSPGraph, partition_problems
from fusionlab.workloads import PAPER_WORKLOADS, WORKLOADS


def _flat(x):
    if isinstance(x, tuple):
        return [y for z in x for y in _flat(z)]
    return [x]


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_workload_capture_matches_plain_numpy(name):
    w = WORKLOADS[name]
    source = w.script("tiny")
    plain: dict = {}
    with redirect_stdout(io.StringIO()):
        exec(source, plain)
        cap = capture(source, {})
    want, got = _flat(plain["result"]), _flat(cap.namespace["result"])
    assert len(want) == len(got)
    for a, b in zip(got, want):
        assert type(a) is type(b)
        np.testing.assert_array_equal(a, b)          # the same NumPy computation, bit for bit
    # the recorded program, replayed by the reference executor under greedy's partitions
    cache = MergeCache()
    parts = {k: partition(batch, "greedy", cache=cache).blocks for k, batch in enumerate(cap.batches)}
    replayed = cap.replay(parts)
    checked = 0
    for label, a in replayed.items():   # every value the program hands back, nested or a float it let out
        np.testing.assert_allclose(a, lookup(plain, label), rtol=1e-10, atol=1e-12, err_msg=label)
        checked += label.startswith("result")
    assert checked >= sum(isinstance(x, (np.ndarray, np.generic)) for x in _flat(plain["result"]))
    assert cache.hits >= len(cap.batches) - len({b.signature() for b in cap.batches})
    opaque = [n for n in cap.notices if n.kind is NoticeKind.OPAQUE]
    assert not opaque   # Normalize2's filter too is bytecode (COMPRESS), since issue 14


@pytest.mark.parametrize("name", PAPER_WORKLOADS)
def test_paper_workloads_partition_legally(name):
    with redirect_stdout(io.StringIO()):
        cap = capture(WORKLOADS[name].script("tiny"), {})
    seen = set()
    for batch in cap.batches:
        if batch.signature() in seen:
            continue
        seen.add(batch.signature())
        g = WSPGraph(batch)
        single = partition(g, "singleton")
        for algorithm in ("linear", "greedy"):
            r = partition(g, algorithm)
            assert r.legal and partition_problems(g, r.blocks) == []
            assert r.cost <= single.cost
    assert len(cap.batches) >= 2   # a loop: one batch per iteration
