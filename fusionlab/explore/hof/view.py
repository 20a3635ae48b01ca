"""A contraction's whole rewrite space as plain data, for the explorer's views and reports.

:func:`get_contraction_data` explores every arrangement a contraction reaches by the rules
of :mod:`.rules` and returns it as JSON-ready data: each arrangement (its term printed as in
paper 003, HoF order, loop order, Numba loop nest, whether it runs in parallel or why not, and
its derivation from the start), every edge between arrangements (rule, position, parameter),
and at each arrangement the rules refused where they were tried, with their reasons. A view
navigates this graph client-side: "apply" follows an edge, "undo" pops a stack; nothing is
recomputed. :func:`time_arrangements` compiles and times every arrangement (serial and
parallel), checked against NumPy and timed beside ``np.einsum`` / ``@`` in the same process.

Examples
--------
>>> d = get_contraction_data("ij,jk->ik", (4, 32), (32, 5))
>>> len(d["terms"]), d["start"], d["complete"]
(6, 0, True)
>>> d["terms"][0]["text"]
'map (\\\\a0 -> map (\\\\b1 -> rnz (+) (*) a0 b1) (flip 0 B)) A'
>>> d["terms"][0]["loops"], d["terms"][0]["parallel"]
(['i', 'k', 'j'], True)
>>> e = d["edges"][0]
>>> e["source"], e["rule"], e["position"], d["terms"][e["target"]]["loops"]
(0, 'map-map flip', 0, ['k', 'i', 'j'])
>>> len(get_contraction_data("ij,jk->ik", (4, 32), (32, 5), blocks={"j": 16})["terms"])
30
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from fusionlab.support.budget import UNLIMITED, Budget
from fusionlab.support.timing import median_seconds
from fusionlab.explore.hof.contraction import contraction_term
from fusionlab.explore.hof.explore import Exploration, Step, explore, moves
from fusionlab.explore.hof.loopnest import contract, loop_nest, parallel_refusal
from fusionlab.explore.hof.rules import RULES, Reason, Refusal
from fusionlab.explore.hof.term import Term

__all__ = ["get_contraction_data", "get_rules_data", "time_arrangements", "default_blocks",
           "DEFAULT_BLOCK"]

#: Timed runs of NumPy's own product at least (whatever ``repeat`` the arrangements get).
NUMPY_REPEAT = 5

#: The block size the explorer offers for subdivision (the paper's Table 2 uses 16).
DEFAULT_BLOCK = 16


def default_blocks(subscripts: str, shape_a: Sequence[int], shape_b: Sequence[int],
                   block: int = DEFAULT_BLOCK) -> dict[str, int]:
    """Subdivide the first summed index by ``block`` when ``block`` divides its extent (Table 2).

    >>> default_blocks("ij,jk->ik", (64, 32), (32, 8))
    {'j': 16}
    >>> default_blocks("ij,jk->ik", (4, 6), (6, 5))
    {}
    """
    t = contraction_term(subscripts, tuple(shape_a), tuple(shape_b))
    summed = [lv.index for lv in t.levels if not t.is_map(lv)]
    if not summed:
        return {}
    e = t.extent(summed[0])
    return {summed[0]: block} if 1 < block < e and e % block == 0 else {}


def get_rules_data() -> list[dict[str, Any]]:
    """The rewrite rules as data: name, equation of paper 003, summary, whether it takes a block size."""
    return [{"name": r.name, "equation": r.equation, "summary": r.summary, "takes_param": r.takes_param}
            for r in RULES.values()]


def _step_data(step: Step) -> dict[str, Any]:
    return {"rule": step.rule, "position": step.position, "param": step.param}


def _term_data(term: Term, ex: Exploration, ids: Mapping[Term, int]) -> dict[str, Any]:
    why = parallel_refusal(term)
    return {
        "id": ids[term],
        "text": str(term),
        "order": list(term.order()),
        "loops": [lv.name() for lv in term.levels],
        "views": list(term.views()),
        "blocks": {c: b for c, b in term.blocks},
        "nest": loop_nest(term).source,
        "parallel": why is None,
        "parallel_reason": why,
        "derivation": [_step_data(s) for s in ex.derivation(term)],
    }


def _moves_data(term: Term, ids: Mapping[Term, int], blocks: Mapping[str, int], k: int
                ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    edges: list[dict[str, Any]] = []
    refusals: list[dict[str, Any]] = []
    for step, new in moves(term, blocks):
        if isinstance(new, Refusal):
            # a pair rule at the last level has no second level: not a choice worth listing
            if new.reason is not Reason.NO_SUCH_POSITION:
                refusals.append({"term": k, **_step_data(step), "reason": new.reason.name,
                                 "message": new.reason.value})
        elif new in ids:
            edges.append({"source": k, "target": ids[new], **_step_data(step),
                          "equation": RULES[step.rule].equation})
    return edges, refusals


def get_contraction_data(subscripts: str, shape_a: Sequence[int], shape_b: Sequence[int],
                         dtype: str = "float64", blocks: Mapping[str, int] | None = None,
                         budget: Budget = UNLIMITED, max_terms: int = 500) -> dict[str, Any]:
    """Every arrangement of ``np.einsum(subscripts, A, B)`` reachable by the rules, as data.

    Parameters
    ----------
    subscripts
        Einsum subscripts of two operands (``"ij,jk->ik"``).
    shape_a, shape_b
        The operands' shapes.
    dtype
        The output's dtype (recorded; loop nests are dtype-generic).
    blocks
        Block size per letter that subdivision may use (none: no subdivision, 6 terms for a
        matrix product; ``{"j": 16}``: 30).
    budget, max_terms
        Bounds of the exploration; ``complete`` says whether it finished.

    Returns
    -------
    dict
        ``subscripts, shapes, dtype, blocks, start, complete, rules, terms, edges, refusals``;
        ``terms[k]["id"] == k``; an edge's ``source`` / ``target`` are term ids.
    """
    start = contraction_term(subscripts, tuple(shape_a), tuple(shape_b))
    blocks = dict(blocks or {})
    for c, b in blocks.items():
        if c not in dict(start.extents):
            raise ValueError(f"blocks: {c!r} is not an index of {subscripts!r}; "
                             f"its indices are {''.join(dict(start.extents))}")
        if not isinstance(b, int) or b < 2:
            raise ValueError(f"blocks: the block size of {c!r} must be an integer >= 2, not {b!r}")
    ex = explore(start, blocks, budget=budget, max_terms=max_terms)
    ids = {t: k for k, t in enumerate(ex.terms)}
    terms = [_term_data(t, ex, ids) for t in ex.terms]
    edges: list[dict[str, Any]] = []
    refusals: list[dict[str, Any]] = []
    for k, t in enumerate(ex.terms):
        e, r = _moves_data(t, ids, blocks, k)
        edges += e
        refusals += r
    return {
        "subscripts": subscripts, "shapes": [list(map(int, shape_a)), list(map(int, shape_b))],
        "dtype": str(dtype), "blocks": blocks, "start": 0, "complete": ex.complete,
        "rules": get_rules_data(), "terms": terms, "edges": edges, "refusals": refusals,
    }


def _time_one(term: Term, a: np.ndarray, b: np.ndarray, want: np.ndarray, parallel: bool,
              repeat: int) -> tuple[float, float]:
    got = contract(term, a, b, parallel=parallel)
    scale = float(np.max(np.abs(want))) or 1.0
    err = float(np.max(np.abs(got - want))) / scale if want.size else 0.0
    return median_seconds(lambda: contract(term, a, b, parallel=parallel), repeat), err


def time_arrangements(data: Mapping[str, Any], repeat: int = 5, parallel: bool = True,
                      seed: int = 0, tolerance: float = 1e-9) -> dict[str, Any]:
    """Compile and time every arrangement of ``data`` (from :func:`get_contraction_data`).

    Each arrangement runs serially and, where legal and ``parallel``, in parallel over its
    outermost map; every result is checked against ``np.einsum`` (relative error to the
    largest output element at most ``tolerance``: a different summation order changes
    the last bits). NumPy's own product (``np.einsum(..., optimize=True)``, BLAS for a
    matrix product) is timed in the same process. Times are medians of ``repeat`` runs after
    a warm-up, in seconds (NumPy's at least 5 runs). Raises ``ArithmeticError`` naming the arrangement that disagrees.

    Examples
    --------
    >>> d = get_contraction_data("ij,jk->ik", (8, 4), (4, 6))
    >>> t = time_arrangements(d, repeat=1, parallel=False)
    >>> len(t["records"]), t["records"][0]["parallel_seconds"] is None
    (6, True)
    """
    shape_a, shape_b = (tuple(s) for s in data["shapes"])
    start = contraction_term(data["subscripts"], shape_a, shape_b)
    ex = explore(start, data["blocks"], max_terms=len(data["terms"]))
    rng = np.random.default_rng(seed)
    dtype = np.dtype(data["dtype"])
    a = rng.random(shape_a).astype(dtype)
    b = rng.random(shape_b).astype(dtype)
    want = np.einsum(data["subscripts"], a, b)
    # NumPy's product is cheap to repeat, and its first calls start BLAS's threads: a few more runs
    numpy_s = median_seconds(lambda: np.einsum(data["subscripts"], a, b, optimize=True), max(repeat, NUMPY_REPEAT))
    records = []
    for k, term in enumerate(ex.terms):
        serial, err = _time_one(term, a, b, want, False, repeat)
        par = None
        if parallel and parallel_refusal(term) is None:
            par, perr = _time_one(term, a, b, want, True, repeat)
            err = max(err, perr)
        if err > tolerance:
            raise ArithmeticError(f"arrangement {k} ({' '.join(lv.name() for lv in term.levels)}) "
                                  f"differs from np.einsum by {err:.3g} (relative)")
        records.append({"term": k, "loops": [lv.name() for lv in term.levels], "order": list(term.order()),
                        "serial_seconds": serial, "parallel_seconds": par, "max_relative_error": err})
    return {"numpy_seconds": numpy_s, "repeat": repeat, "records": records}


#: Above this many loop indices a contraction's report entry is not subdivided (its
#: subdivided space has (n + 1)! terms); every entry keeps at most this many terms.
MAX_SUBDIVIDED_LOOPS = 3
MAX_REPORT_TERMS = 120
#: Distinct contractions a report describes at most (each is tens of kilobytes).
MAX_REPORT_CONTRACTIONS = 8


def get_program_contractions(program: Any, budget: Budget = UNLIMITED) -> list[dict[str, Any]]:
    """The report's ``contractions`` section: one entry per distinct contraction of ``program``.

    CONTRACT instructions with the same subscripts, shapes and dtype (a product in a loop)
    share one entry: ``"n"`` is the first one's 1-based instruction number, ``"instructions"``
    all of them. Each entry is ``{"n", "instructions", "output", "operands": [array names],
    "subscripts", "shapes", "dtype"}`` plus the data of :func:`get_contraction_data` (the
    first summed index subdivided by 16 when that divides it and the contraction has at most
    three loops; at most 120 terms, ``complete`` false when cut) and ``"timings": None``.
    At most :data:`MAX_REPORT_CONTRACTIONS` entries are kept (the first ones).

    Examples
    --------
    >>> from fusionlab.ir.text import parse
    >>> p = parse('ARRAY A float64[4,32]\\nARRAY B float64[32,5]\\nARRAY C float64[4,5]\\n'
    ...           'ARRAY D float64[4,4]\\nCONTRACT C, A, B, subscripts="ij,jk->ik"\\n'
    ...           'CONTRACT D, A, A, subscripts="ij,kj->ik"\\nCONTRACT C, A, B, subscripts="ij,jk->ik"\\n')
    >>> [(c["instructions"], c["subscripts"], len(c["terms"])) for c in get_program_contractions(p)]
    [([1, 3], 'ij,jk->ik', 30), ([2], 'ij,kj->ik', 30)]
    """
    from fusionlab.ir.bytecode import OpFamily

    out: dict[tuple[Any, ...], dict[str, Any]] = {}
    for n, ins in enumerate(program.instructions, start=1):
        if ins.opcode not in OpFamily.CONTRACTION:
            continue
        subs, (a, b), dtype = ins.attr("subscripts"), ins.views_in, str(ins.outputs[0].base.dtype)
        key = (subs, a.shape, b.shape, dtype)
        if key in out:
            out[key]["instructions"].append(n)
            continue
        if len(out) == MAX_REPORT_CONTRACTIONS:
            continue
        blocks = default_blocks(subs, a.shape, b.shape) if len(set(subs) - set(",->")) <= MAX_SUBDIVIDED_LOOPS \
            else {}
        data = get_contraction_data(subs, a.shape, b.shape, dtype=dtype, blocks=blocks, budget=budget,
                                    max_terms=MAX_REPORT_TERMS)
        out[key] = {"n": n, "instructions": [n], "output": ins.outputs[0].base.name,
                    "operands": [a.base.name, b.base.name], **data, "timings": None}
    return list(out.values())
