"""A saved notebook keeps every batch viewed that fuses something (issue 35): the report's
``saved_batches`` (fusionlab.explore.report.with_saved_batches), within the saved report's
size budget, each section the batch's own report keys."""

from __future__ import annotations

import json
from importlib import resources

import jsonschema

from fusionlab.capture import capture
from fusionlab.explore.jupyter import FuseResult
from fusionlab.explore.report import BATCH_KEYS, SAVED_BYTES, batch_section, fuses, with_saved_batches

# three batches (each float() ends one), each with work to fuse
THREE = """\
import numpy as np
a = np.ones(1000)
b = a * 2 + 1
c = np.sqrt(b) - a
print(float(c.sum()))
d = c * 3 + b
e = d / 2 - a
f = np.exp(e) * d
print(float(f.sum()))
g = f + 1
"""


def explored() -> FuseResult:
    cap = capture(THREE)
    return FuseResult(cap.batches, capture=cap, name="three", algorithms=["singleton", "linear", "greedy"],
                      cost_models=["bohrium", "max_locality"])


def schema() -> dict:
    return json.loads(resources.files("fusionlab").joinpath("data/explorer.schema.json").read_text())


def test_each_batch_viewed_is_kept_as_its_own_report_would_show_it() -> None:
    res = explored()
    assert len(res.batches) == 3
    first = res.report()
    assert first["saved_batches"] == [] and first["saved_batches_left_out"] == 0   # nothing else viewed
    alone = {}
    for k in (0, 2):
        res.set_batch(k)
        alone[k] = json.loads(json.dumps(res.report()))
    res.set_batch(1)
    report = res.report()
    jsonschema.validate(report, schema())
    assert [s["batch"] for s in report["saved_batches"]] == [0, 2]
    for section in report["saved_batches"]:
        assert set(section) <= set(BATCH_KEYS)
        own = alone[section["batch"]]
        # the batch as its own report showed it: program, graph, partitions, selection, steps
        for key in ("program", "graph", "partitions", "selected", "notices", "steps"):
            assert section[key] == own[key], key
        assert section["trace"] is None and section["timings"] is None
    assert len(json.dumps(report)) <= SAVED_BYTES


def test_a_new_selection_is_the_saved_batches_selection_too() -> None:
    res = explored()
    res.report()
    res.set_batch(0)
    res.report()
    res.set_batch(1)
    res.select("linear", "max_locality")
    [section] = res.report()["saved_batches"]
    assert section["selected"] == {"algorithm": "linear", "cost_model": "max_locality"}
    res.select("manual")   # a hand-made partition is the batch shown's: the others show greedy
    [section] = res.report()["saved_batches"]
    assert section["selected"]["algorithm"] == "greedy"


def test_batches_that_fuse_nothing_and_batches_past_the_budget_are_left_out() -> None:
    base = {"batch": 0, "selected": {"algorithm": "g", "cost_model": "b"}, "program": {}, "graph": {}}
    fused = [{**base, "batch": k, "partitions": [{"algorithm": "g", "cost_model": "b", "blocks": [[1, 2], [3]]}],
              "notices": ["x" * 1000]} for k in (1, 2, 3)]
    single = {**base, "batch": 4, "partitions": [{"algorithm": "g", "cost_model": "b", "blocks": [[1], [2]]}]}
    assert all(fuses(f) for f in fused) and not fuses(single)
    report = {**base, "partitions": []}
    size = len(json.dumps({**report, "saved_batches": [], "saved_batches_left_out": 4}))
    one = len(json.dumps(batch_section(fused[0]))) + 2
    limit = size + 2 * one
    got = with_saved_batches(dict(report), [fused[2], single, fused[0], fused[1]], limit=limit)
    assert [s["batch"] for s in got["saved_batches"]] == [1, 2] and got["saved_batches_left_out"] == 1
    assert len(json.dumps(got)) <= limit


def test_the_magic_keeps_every_batch_that_fuses_not_only_the_one_shown() -> None:
    """After the shown batch, ``%%fuse`` computes the other batches' first partitions (at most
    OTHER_BATCHES_SECONDS): a notebook saved right after the cell keeps all three."""
    from test_jupyter import fuse, ip, reports

    ip.run_cell("import numpy as np")
    out = fuse("--name three", THREE.replace("import numpy as np\n", ""))
    [report] = reports(out)
    jsonschema.validate(report, schema())
    shown = report["batch"]
    assert sorted(s["batch"] for s in report["saved_batches"]) == sorted({0, 1, 2} - {shown})
    for section in report["saved_batches"]:
        # the cheap partitions are there; the searches wait for the kernel (pending)
        done = {(e["algorithm"], e["cost_model"]) for e in section["partitions"] if e["status"] == "done"}
        assert ("greedy", report["selected"]["cost_model"]) in done
        assert section["status"]["phase"] in ("pending", "done") and fuses(section)
