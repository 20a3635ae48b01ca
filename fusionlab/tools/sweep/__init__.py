"""Sweeps: workloads x presets x algorithms x cost models x repeats, partitioned (and timed)
on Dask distributed, one stored row each.

``fusionlab sweep SPEC`` runs the same from the command line; ``docs/sweeps.md`` says how to
point it at a real cluster and how to query the store. A row partitions what ``fusionlab run``
does (the batches prepared: Fig. 3's dead writes dropped, 46 elements under linear against
62 as written, which ``prepared = false`` gives).

Examples
--------
>>> import tempfile
>>> spec = parse_spec('''
... workloads = ["fig3", "softmax"]
... algorithms = ["linear", "greedy"]
... cost_models = ["bohrium", "max_contract"]
... ''')
>>> len(spec.tasks())
8
>>> report = run_sweep(spec, store=tempfile.mkdtemp(), scheduler="serial", progress="none", log=lambda s: None)
>>> Store(report.store).query(
...     "SELECT algorithm, cost_elements FROM rows WHERE program = 'fig3' AND cost_model = 'bohrium' "
...     "ORDER BY algorithm")
[('greedy', 38), ('linear', 46)]
"""

from fusionlab.tools.sweep.execute import Progress, SweepError, SweepReport, local_cluster, run_sweep
from fusionlab.tools.sweep.spec import (
    ProgramSpec, SpecError, SweepSpec, Task, TimingSpec, load_spec, parse_spec,
)
from fusionlab.tools.sweep.store import KEY, SCHEMA_FIELDS, Store
from fusionlab.tools.sweep.tasks import machine_info, machine_resource

__all__ = [
    "run_sweep", "local_cluster", "SweepReport", "SweepError", "Progress",
    "parse_spec", "load_spec", "SweepSpec", "ProgramSpec", "TimingSpec", "Task", "SpecError",
    "Store", "KEY", "SCHEMA_FIELDS", "machine_info", "machine_resource",
]
