"""The kernel caches the tests share (one per test process: blocks with the same code compile once).

``CHECKED`` compiles every kernel and driver serially with Numba's bounds checks
(:func:`fusionlab.backend.numba.plan.bounds_checked_source`): the programs nobody on the
project wrote (tests/data/unseen), the corpus and the paper's workloads run through it, so an
index outside an array fails their tests with an IndexError instead of corrupting memory
(issue 31). The parallel kernels themselves are run by the other tests (test_numba.py's
``CACHE``, the random-program agreement tests, the driver's thread tests).
"""

from fusionlab.backend.numba.plan import KernelCache

CHECKED = KernelCache(bounds_checked=True)


def planned(target, min_size: int, reroll: bool = False, algorithm: str = "greedy", cost_model: str = "bohrium"):
    """``(plans, inputs, externals)`` of ``target`` as ``run`` plans it (the pipeline, with
    ``run``'s configuration; the batches as captured unless ``reroll``), for a test to drive."""
    from fusionlab.pipeline.runner import run_config
    from fusionlab.pipeline import build

    built = build(target, run_config(algorithm, cost_model, min_size, reroll))
    return list(built.plans), dict(built.inputs), built.prepared.externals
