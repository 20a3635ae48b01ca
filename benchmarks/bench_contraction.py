"""Every arrangement of a matrix product (paper 003, Tables 1-2) beside NumPy's BLAS product.

The arrangements are the terms the rewrite rules reach from ``np.einsum("ij,jk->ik", A, B)``
(:func:`fusionlab.explore.hof.view.get_contraction_data`): the six orders of ``mapA / mapB / rnz``
(Table 1) and, with the ``rnz`` subdivided by 16, the 24 orders of ``i, k, j_o, j_i``
(Table 2 prints their 12 projections). Each runs as its generated Numba loop nest, serially
and in parallel over its outermost map, checked against NumPy and timed in the same process
as NumPy's own product (``A @ B``, BLAS): medians of ``--repeat`` runs after a warm-up
(:func:`fusionlab.explore.hof.view.time_arrangements`). Target (issue 15): the best arrangement
within 3x of BLAS at 1024 x 1024 float64.

Run: ``.venv/bin/python benchmarks/bench_contraction.py`` (writes README.md between the
``bench_contraction`` markers and ``results/contraction.json``; several minutes: the
column-walking arrangements take seconds each). ``--quick`` runs 128 x 128 and writes
nothing (a sanity check).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

TARGET = 3.0  # best arrangement / BLAS (issue 15)


def run(n: int, block: int, repeat: int, parallel: bool = True) -> dict[str, Any]:
    """Time every arrangement of an ``n x n`` float64 product (subdivided by ``block``)."""
    import numba
    import numpy as np

    from fusionlab.explore.hof.view import get_contraction_data, time_arrangements

    data = get_contraction_data("ij,jk->ik", (n, n), (n, n), blocks={"j": block})
    load = os.getloadavg()[0]
    started = time.perf_counter()
    timed = time_arrangements(data, repeat=repeat, parallel=parallel)
    rows = []
    for rec in timed["records"]:
        best = min(x for x in (rec["serial_seconds"], rec["parallel_seconds"]) if x is not None)
        rows.append({**rec, "best_seconds": best, "x_numpy": best / timed["numpy_seconds"]})
    return {
        "n": n, "block": block, "repeat": repeat, "dtype": "float64", "numpy_seconds": timed["numpy_seconds"],
        "rows": rows, "best": min(rows, key=lambda r: r["best_seconds"]), "load_before": load,
        "load_after": os.getloadavg()[0], "seconds": time.perf_counter() - started,
        "threads": numba.get_num_threads(), "numba": numba.__version__, "numpy": np.__version__,
        "cpu": platform.processor() or platform.machine(),
    }


def _ms(x: float | None) -> str:
    return "—" if x is None else f"{1e3 * x:,.1f}"


def table(result: dict[str, Any]) -> str:
    """The Markdown table of every arrangement, fastest first."""
    head = ("| loops (outermost first) | HoF order | serial ms | parallel ms | best / NumPy |\n"
            "| --- | --- | ---: | ---: | ---: |")
    lines = [head]
    for r in sorted(result["rows"], key=lambda r: r["best_seconds"]):
        lines.append(f"| `{' '.join(r['loops'])}` | {' '.join(r['order'])} | {_ms(r['serial_seconds'])} | "
                     f"{_ms(r['parallel_seconds'])} | {r['x_numpy']:.2f} |")
    return "\n".join(lines)


def summary(result: dict[str, Any]) -> str:
    """One paragraph: the machine, NumPy's time, the best arrangement and the target."""
    b = result["best"]
    met = "met" if b["x_numpy"] <= TARGET else "not met"
    return (f"{result['n']} x {result['n']} float64, `rnz` subdivided by {result['block']}: "
            f"{len(result['rows'])} arrangements, medians of {result['repeat']} runs after a warm-up, in one "
            f"process with NumPy {result['numpy']} (`A @ B`, BLAS: {_ms(result['numpy_seconds'])} ms); "
            f"Numba {result['numba']}, {result['threads']} threads, {result['cpu']}; 1-minute load "
            f"{result['load_before']:.1f} before, {result['load_after']:.1f} after. Best arrangement "
            f"`{' '.join(b['loops'])}` at {_ms(b['best_seconds'])} ms, {b['x_numpy']:.2f}x NumPy "
            f"(target {TARGET:g}x: {met}).")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=1024, help="matrix size (default 1024)")
    ap.add_argument("--block", type=int, default=16, help="block size of the subdivided rnz (default 16)")
    ap.add_argument("--repeat", type=int, default=5, help="timed runs per variant (default 5)")
    ap.add_argument("--quick", action="store_true", help="128 x 128, 3 runs, print only (a sanity check)")
    args = ap.parse_args()
    n, repeat = (128, 3) if args.quick else (args.n, args.repeat)
    result = run(n, args.block, repeat)
    print(summary(result))
    print(table(result))
    if args.quick:
        return
    from _report import write_section

    (HERE / "results" / "contraction.json").write_text(json.dumps(result, indent=2) + "\n")
    write_section("bench_contraction", summary(result) + "\n\n" + table(result),
                  "## Contractions: every arrangement of a matrix product (`bench_contraction.py`)")


if __name__ == "__main__":
    main()
