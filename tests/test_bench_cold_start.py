"""benchmarks/bench_cold_start.py: one process's measurement has every stage and counts the
kernels; the jax.jit forms of the table's programs compute what the NumPy programs compute (the
same work on both sides of the comparison)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from fusionlab.workloads import ALL_WORKLOADS

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import bench_cold_start as cold  # noqa: E402  (a script directory, not a package)


def test_a_measurement_has_every_stage_and_the_kernels_it_planned() -> None:
    got = cold._child("softmax", "tiny")
    assert {"import", "capture", "plan", "first_run", "run", "compile", "kernels", "distinct"} <= set(got)
    assert got["kernels"] >= got["distinct"] >= 1
    assert got["compile"] == pytest.approx(max(0.0, got["first_run"] - got["run"]))
    assert all(got[k] >= 0 for k in ("import", "capture", "plan", "first_run", "run"))


def test_every_program_of_the_table_is_a_workload_with_its_preset() -> None:
    for name, preset in cold.PROGRAMS:
        assert preset in ALL_WORKLOADS[name].presets, (name, preset)


def _numpy_result(name: str, kw: dict) -> object:
    namespace: dict = {}
    # the workload's script without its last line (the call at the preset's size)
    exec(ALL_WORKLOADS[name].script("tiny").rsplit("\nresult = ", 1)[0], namespace)
    return namespace[name](**kw)


@pytest.mark.parametrize("name", ["gray_scott", "wave_1d", "heat_equation", "softmax"])
def test_the_jax_form_computes_what_numpy_computes(name: str) -> None:
    pytest.importorskip("jax", reason="jax is in the bench extra (make bench), not the test install")
    kw = ALL_WORKLOADS[name].presets["tiny"]
    want = _numpy_result(name, kw)
    got = cold._jax_programs()[name](kw)()
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-12, atol=1e-12)
