"""Run one ``scipy.optimize.milp`` call in a process of its own (used by :mod:`.ilp`).

HiGHS runs in C and does not look at SIGINT, and its time limit is not always kept (a
long presolve), so the ILP runs it here: the parent kills this process at its deadline or
on ``KeyboardInterrupt``. Run as a script (``python _highs_worker.py``), it reads one
pickled problem from stdin and writes one pickled answer to stdout; it imports only NumPy
and SciPy, so it starts in a fraction of a second.
"""

from __future__ import annotations

import pickle
import sys
from typing import Any


def solve(problem: dict[str, Any]) -> dict[str, Any]:
    """Solve ``problem`` (the arrays of a milp call) and return the fields the ILP reads.

    With a ``deadline`` (seconds since the epoch: the one clock both processes share)
    HiGHS's time limit is what is left of it once SciPy is imported, so a slow start-up
    on a busy machine does not push the answer past the deadline."""
    import time

    import numpy as np
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import coo_matrix

    limit = problem["time_limit"]
    if problem.get("deadline") is not None:
        limit = max(min(limit, problem["deadline"] - time.time()), 0.05)
    rows, cols = problem["shape"]
    cons = []
    if rows:
        A = coo_matrix((problem["vals"], (problem["r"], problem["c"])), shape=(rows, cols)).tocsr()
        cons = [LinearConstraint(A, np.asarray(problem["lo"]), np.asarray(problem["hi"]))]
    # a relative gap of zero: HiGHS's default (1e-4) stops within 0.01% of the optimum and calls
    # that optimal (random_program(100, seed=1): 360168 bytes "optimal", the optimum is 360160)
    res = milp(
        c=np.asarray(problem["cost"], dtype=float),
        integrality=np.asarray(problem["integrality"]),
        bounds=Bounds(problem["lb"], problem["ub"]),
        constraints=cons,
        options={"time_limit": limit, "disp": False, "mip_rel_gap": problem.get("mip_rel_gap", 0.0)},
    )
    return {
        "status": int(res.status),
        "message": str(res.message),
        "x": None if res.x is None else [float(v) for v in res.x],
        "fun": None if res.fun is None else float(res.fun),
        "mip_dual_bound": getattr(res, "mip_dual_bound", None),
        "time_limit": limit,
    }


def main() -> None:
    problem = pickle.load(sys.stdin.buffer)
    pickle.dump(solve(problem), sys.stdout.buffer)
    sys.stdout.buffer.flush()


if __name__ == "__main__":
    main()
