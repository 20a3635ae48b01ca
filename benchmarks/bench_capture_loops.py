"""Time capture on the cells of issue 12: Python loops over elements and the heat cell.

Writes ``benchmarks/results/capture_loops.md`` (and prints it): for each cell the recorded
instructions and batches, plain NumPy's time and capture's (medians of 5 runs after a
warm-up, one process), and the scalar-loop notices capture gave. A loop over elements is
recorded until ``SCALAR_LOOP_THRESHOLD`` one-element instructions came from one line; then
its element reads run as plain NumPy scalars, so the program (and every later phase) stays
small.
"""

from __future__ import annotations

import contextlib
import io
import time
from pathlib import Path

from fusionlab.capture import SCALAR_LOOP_THRESHOLD, NoticeKind, capture

from _report import median_seconds

CELLS = {
    "list comprehension, 200 elements": (
        "import numpy as np\nx = np.linspace(0, 1, 200)\ny = [x[i]**2 for i in range(len(x))]\n"
    ),
    "accumulating loop, 2000 elements": (
        "import numpy as np\nx = np.arange(2000.0)\ns = 0.0\nfor i in range(len(x)):\n    s += x[i] * x[i]\n"
    ),
    "heat 500 x 500, 20 iterations": (
        "import numpy as np\nT = np.zeros((500, 500)); T[0] = 100\nfor it in range(20):\n"
        "    T[1:-1, 1:-1] = 0.25 * (T[:-2, 1:-1] + T[2:, 1:-1] + T[1:-1, :-2] + T[1:-1, 2:])\n"
    ),
}


def main() -> None:
    rows = []
    for label, source in CELLS.items():
        def plain() -> None:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(source, {})

        def captured() -> None:
            with contextlib.redirect_stdout(io.StringIO()):
                capture(source, {})

        cap = capture(source, {})
        loops = [n.line for n in cap.notices if n.kind is NoticeKind.SCALAR_LOOP]
        t_plain, t_cap = median_seconds(plain), median_seconds(captured)
        rows.append(f"| {label} | {cap.instructions} | {len(cap.batches)} | {t_plain * 1e3:.1f} | "
                    f"{t_cap * 1e3:.1f} | {', '.join(map(str, loops)) or '-'} |")
    body = "\n".join([
        f"Measured {time.strftime('%Y-%m-%d')}; medians of 5 runs after a warm-up, one process; "
        f"scalar-loop threshold {SCALAR_LOOP_THRESHOLD} one-element instructions per line.",
        "",
        "| cell | instructions | batches | plain NumPy ms | capture ms | scalar-loop notice on line |",
        "| --- | ---: | ---: | ---: | ---: | --- |",
        *rows,
    ])
    out = Path(__file__).parent / "results" / "capture_loops.md"
    out.parent.mkdir(exist_ok=True)
    out.write_text(body + "\n")
    print(body)


if __name__ == "__main__":
    main()
