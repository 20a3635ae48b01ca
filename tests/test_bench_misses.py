"""How the backend benchmark judges a row against issue 13's targets
(``benchmarks/bench_backend.py``, ``misses``): a variant faster than fusionlab only because it
computes something else is no target, and the row says so with the size of the difference."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
import bench_backend  # noqa: E402  (a script directory, not a package)


def _row(numba_error: float, workload: str = "gray_scott") -> dict[str, Any]:
    med = {"numpy": 1.0, "numba": 0.2, "loop": 0.2, "fusionlab": 0.3}
    return {"workload": workload, "title": "t", "preset": "large", "median_s": med,
            "fusionlab_kernel_s": 0.29, "load_before": 0.5,
            "relative_error_vs_numpy": {"numpy": 0.0, "numba": numba_error, "loop": 1e-12}}


def test_a_faster_numba_with_numpys_answer_is_a_miss() -> None:
    got = bench_backend.misses(_row(1e-12))
    assert got[0].startswith("slower than Numba on the NumPy code (1.50x)")
    assert "not a target" not in " ".join(got)


def test_a_faster_numba_with_another_answer_is_not_a_target_and_the_row_says_why() -> None:
    got = bench_backend.misses(_row(0.17))
    assert not any(m.startswith("slower than Numba") for m in got)
    assert len(got) == 1 and got[0].startswith("1.50x the hand-written loop — ")
    assert "Numba on the NumPy code (1.50x faster) is not a target here: its value differs from NumPy's by 1.7e-01" \
        in got[0]


def test_float32_rows_allow_numbas_float64_arithmetic() -> None:
    # Numba computes float32 code in float64 (no NEP 50): 1e-5 relative is the same answer there
    assert not bench_backend.numba_differs(_row(1e-5, workload="heat_f32"))
    assert bench_backend.numba_differs(_row(1e-5, workload="heat_equation"))
