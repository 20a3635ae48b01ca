"""Time capture: how fast NumPy code is recorded; writes the figures into benchmarks/README.md.

The issue's target: recording 10,000 instructions takes under 1 s. Each program runs
plainly and under capture in this one process (medians of 5 runs after a warm-up), so the
ratio is capture's overhead over plain NumPy on the same code.
"""

from __future__ import annotations

import contextlib
import io
import time
from fusionlab.capture import capture
from fusionlab.workloads import WORKLOADS

from _report import median_seconds, write_section


LOOP = """
import numpy as np
a = np.ones(100)
b = np.zeros(100)
for i in range({n}):
    c = a * 2.0
    b += c
    d = np.sqrt(b)
    a = d - 1.0
"""


def main() -> None:
    rows = []
    programs = [("element-wise loop, 100 elements", LOOP.format(n=1430))]
    programs += [(f"workload {name} (medium)", WORKLOADS[name].script("medium"))
                 for name in ("black_scholes", "shallow_water", "lattice_boltzmann_d3q19")]
    for label, source in programs:
        def plain() -> None:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(source, {})

        def captured() -> None:
            with contextlib.redirect_stdout(io.StringIO()):
                capture(source, {})

        with contextlib.redirect_stdout(io.StringIO()):
            cap = capture(source, {})
        t_plain, t_cap = median_seconds(plain), median_seconds(captured)
        rows.append(f"| {label} | {cap.instructions} | {len(cap.batches)} | {t_plain:.3f} | {t_cap:.3f} | "
                    f"{t_cap / t_plain:.1f} | {cap.instructions / t_cap:,.0f} |")
    body = "\n".join([
        f"Measured {time.strftime('%Y-%m-%d')}; medians of 5 runs after a warm-up, one process.",
        "",
        "| program | instructions | batches | plain NumPy s | capture s | ratio | instructions/s |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |",
        *rows,
    ])
    print(write_section("bench_capture", body, "## Capture (`bench_capture.py`)"))


if __name__ == "__main__":
    main()
