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

    core = _binding() if problem.get("start") is not None else None
    import scipy.optimize  # noqa: F401  (imported before the clock is read)

    limit = problem["time_limit"]
    if problem.get("deadline") is not None:
        limit = max(min(limit, problem["deadline"] - time.time()), 0.05)
    if core is not None:
        return _solve_from(core, problem, limit)
    return _solve_milp(problem, limit)


def _binding() -> Any:
    """SciPy's HiGHS binding, or ``None`` when it moved (then no starting solution)."""
    try:
        from scipy.optimize._highspy import _core
    except ImportError:
        return None
    return _core


def _solve_milp(problem: dict[str, Any], limit: float) -> dict[str, Any]:
    """The problem by ``scipy.optimize.milp`` (no starting solution)."""
    import numpy as np
    from scipy.optimize import Bounds, LinearConstraint, milp
    from scipy.sparse import coo_matrix

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
        "mip_node_count": getattr(res, "mip_node_count", None),
        "time_limit": limit,
    }


# milp's status codes from HiGHS's model status
_STATUS = {"kOptimal": 0, "kTimeLimit": 1, "kIterationLimit": 1, "kSolutionLimit": 1, "kInfeasible": 2,
           "kUnbounded": 3, "kUnboundedOrInfeasible": 2}


def _solve_from(h: Any, problem: dict[str, Any], limit: float) -> dict[str, Any]:
    """The problem by SciPy's HiGHS binding, from the starting solution ``problem["start"]``
    (milp takes none): HiGHS starts with an incumbent, so it prunes from the first node and
    never returns worse than the start."""
    import numpy as np
    from scipy.sparse import coo_matrix

    rows, cols = problem["shape"]
    lp = h.HighsLp()
    lp.num_col_, lp.num_row_ = cols, rows
    A = coo_matrix((problem["vals"], (problem["r"], problem["c"])), shape=(rows, cols)).tocsc()
    lp.a_matrix_.num_col_, lp.a_matrix_.num_row_ = cols, rows
    lp.a_matrix_.format_ = h.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = A.indptr, A.indices, A.data
    lp.col_cost_ = np.asarray(problem["cost"], dtype=float)
    lp.col_lower_, lp.col_upper_ = np.asarray(problem["lb"], dtype=float), np.asarray(problem["ub"], dtype=float)
    lp.row_lower_, lp.row_upper_ = np.asarray(problem["lo"], dtype=float), np.asarray(problem["hi"], dtype=float)
    lp.integrality_ = [h.HighsVarType(int(i)) for i in problem["integrality"]]
    highs = h._Highs()
    for key, value in (("output_flag", False), ("time_limit", float(limit)),
                       ("mip_rel_gap", float(problem.get("mip_rel_gap", 0.0)))):
        highs.setOptionValue(key, value)
    highs.passModel(lp)
    start = h.HighsSolution()
    start.col_value = [float(v) for v in problem["start"]]
    highs.setSolution(start)
    highs.run()
    status = highs.getModelStatus()
    info = highs.getInfo()
    has_x = info.primal_solution_status != 0 and info.objective_function_value != h.kHighsInf
    x = [float(v) for v in highs.getSolution().col_value] if has_x else None
    bound = info.mip_dual_bound
    return {
        "status": _STATUS.get(status.name, 4),
        "message": highs.modelStatusToString(status),
        "x": x,
        "fun": float(info.objective_function_value) if x is not None else None,
        "mip_dual_bound": float(bound) if np.isfinite(bound) else None,
        "mip_node_count": int(info.mip_node_count),
        "time_limit": limit,
    }


def main() -> None:
    # import first, then wait for the problem: a worker started early (while the branch and
    # bound runs) is ready when the problem comes
    _binding()
    import scipy.optimize  # noqa: F401
    problem = pickle.load(sys.stdin.buffer)
    pickle.dump(solve(problem), sys.stdout.buffer)
    sys.stdout.buffer.flush()


if __name__ == "__main__":
    main()
