"""One pipeline (issue 33): every front end plans what ``fusionlab run`` executes."""

from __future__ import annotations

import io
from contextlib import redirect_stdout

import pytest

from fusionlab import parse
from fusionlab.support.budget import Budget
from fusionlab.capture import capture
from fusionlab.pipeline import comparison, runner
from fusionlab.backend.numba.plan import DEFAULT_MIN_SIZE
from fusionlab.pipeline import DEFAULT_PASSES, Pass, PipelineCaches, PipelineConfig, build
from fusionlab.workloads import WORKLOADS, corpus, get_workload

from kernels import CHECKED


def _fingerprint(plans) -> list[tuple]:
    """The kernel sources in order and the blocks NumPy runs, batch by batch."""
    return [tuple((bp.instructions, None if bp.compiled is None else bp.compiled.source, bp.reason)
                  for bp in p.blocks) for p in plans]


def _captured(name: str):
    with redirect_stdout(io.StringIO()):
        return capture(get_workload(name).script("tiny"), {})


# the workloads of the paper and the corpus, at their tiny size; each a few seconds to plan
NAMES = sorted(n for n in WORKLOADS if n not in ("lattice_boltzmann_d3q19",))[:12] + sorted(corpus.PRESETS)[:6]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("algorithm, model", [("greedy", "bohrium"), ("linear", "max_locality")])
def test_compare_rows_plan_what_run_executes(name: str, algorithm: str, model: str) -> None:
    cap = _captured(name)
    config = runner.run_config(algorithm, model, DEFAULT_MIN_SIZE, reroll=True)
    want = _fingerprint(build(cap, config).plans)          # what run() executes (it calls build)
    row = comparison._Row(cap, config, CHECKED, Budget(None), "python")   # a row of compare / Compile & time
    batches, _, _ = row._batches()
    _, got = row._plans(batches)
    assert _fingerprint(got) == want


def test_run_executes_the_plans_the_pipeline_builds() -> None:
    cap = _captured("heat_equation")
    config = runner.run_config("greedy", "bohrium", 0, reroll=True)
    r = runner.run(cap, check=True, cache=CHECKED, config=config)
    assert r.check is not None and r.check.ok
    assert _fingerprint(r.plans) == _fingerprint(build(cap, config).plans)


@pytest.mark.parametrize("name", ["nbody", "image_blur"])
def test_rows_rematerialise_like_run(name: str) -> None:
    # maps whose outputs are stored only for a later block: run() recomputed them in their
    # readers' blocks, compare's rows did not (they timed other kernels than run executed)
    cap = _captured(name)
    config = runner.run_config("greedy", "bohrium", 0, reroll=True)
    assert Pass.REMATERIALISE in config.passes
    row = comparison._Row(cap, config, CHECKED, Budget(None), "python")
    _, got = row._plans(row._batches()[0])
    assert _fingerprint(got) == _fingerprint(build(cap, config).plans)
    assert _fingerprint(got) != _fingerprint(build(cap, config.without(Pass.REMATERIALISE)).plans)


def test_caches_keep_the_prepared_batches_and_plans_between_calls() -> None:
    cap = _captured("heat_equation")
    caches = PipelineCaches()
    config = PipelineConfig()
    first = build(cap, config, caches=caches)
    again = build(cap, config, caches=caches)
    assert again.prepared is first.prepared and all(a is b for a, b in zip(again.plans, first.plans))
    assert config.passes == DEFAULT_PASSES and len(caches.plans) == len(first.plans)


def test_given_partitions_are_planned_as_given() -> None:
    p = parse("ARRAY A float64[8]\nARRAY B float64[8]\nARRAY T float64[8]\nMULTIPLY T, A, B\nADD A, A, T\n"
              "DEL T\nSYNC A\n")
    built = build(p, PipelineConfig(min_size=0), partitions={0: [[0], [1], [2], [3]]})
    assert built.config.passes == (Pass.PLAN, Pass.ONE_USE_KERNELS)
    assert [bp.instructions for bp in built.plans[0].blocks if bp.compiled is not None] == [(0,), (1,)]
