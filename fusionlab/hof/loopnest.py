"""The loop nest of a contraction term, as Numba source, compiled once per arrangement.

Each level of the nest becomes one ``for`` loop (a subdivided index two: its blocks, then
the elements of a block, whose index is ``j_o * b + j_i``), in the nest's order, around one
statement ``C[out] += A[...] * B[...]``; the innermost run of rnz levels sums into a local. Extents are read from the arrays' shapes, so one
compiled kernel serves every shape of the same arrangement; the block size is a constant.

The nest may run in parallel over its outermost level when that level is a map: distinct
iterations then write distinct output elements. An outermost rnz accumulates every
iteration into the same elements, so the parallel form is refused with the reason.

Examples
--------
>>> import numpy as np
>>> from fusionlab.hof.contraction import contraction_term
>>> t = contraction_term("ij,jk->ik", (3, 4), (4, 2))
>>> print(loop_nest(t).source)
def kernel(A, B, C):
    n_i = A.shape[0]
    n_j = A.shape[1]
    n_k = B.shape[1]
    for i in range(n_i):
        for k in range(n_k):
            acc = C[i, k]
            for j in range(n_j):
                acc += A[i, j] * B[j, k]
            C[i, k] = acc
>>> A, B = np.arange(12.).reshape(3, 4), np.ones((4, 2))
>>> np.array_equal(contract(t, A, B, parallel=True), A @ B)
True
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .term import Level, Term

__all__ = ["LoopNest", "loop_nest", "parallel_refusal", "compile_nest", "contract"]

_COMPILED: dict[tuple[str, bool], Callable[..., None]] = {}


@dataclass(frozen=True)
class LoopNest:
    """Generated source of one arrangement; ``parallel`` says whether its outer loop is a ``prange``."""

    source: str
    parallel: bool


def parallel_refusal(term: Term) -> str | None:
    """Why the outermost level cannot run in parallel, or ``None`` when it can."""
    if not term.levels:
        return "the nest has no loops"
    if not term.is_map(term.levels[0]):
        return ("the outermost level is an rnz: every iteration accumulates into the same "
                "output elements (a race); exchange a map outwards (eq. 42) to parallelise")
    return None


def _index(term: Term, letter: str) -> str:
    b = term.block(letter)
    return letter if b is None else f"{letter}_o * {b} + {letter}_i"


def _trip(term: Term, lv: Level) -> str:
    b = term.block(lv.index)
    return {"whole": f"n_{lv.index}", "outer": f"n_{lv.index} // {b}", "inner": f"{b}"}[lv.part]


def loop_nest(term: Term, parallel: bool = False) -> LoopNest:
    """The Numba-ready source of ``term``'s loop nest (a function ``kernel(A, B, C)``).

    ``C`` must be zeroed with the output's shape (``(1,)`` for a scalar output). Raises
    ``ValueError`` when ``parallel`` is asked where :func:`parallel_refusal` refuses, or when
    a reducer other than ``+`` appears (a contraction's only reducer).
    """
    if parallel and (why := parallel_refusal(term)) is not None:
        raise ValueError(f"cannot run in parallel: {why}")
    for lv in term.levels:
        if not term.is_map(lv) and term.reducer(lv.index).name != "+":
            raise ValueError(f"loop nests sum; index {lv.index!r} reduces with another operator")
    lines = ["def kernel(A, B, C):"]
    seen: set[str] = set()
    for name, letters in zip("AB", term.operands):
        for axis, c in enumerate(letters):
            if c not in seen:
                seen.add(c)
                lines.append(f"    n_{c} = {name}.shape[{axis}]")
    # the innermost run of rnz levels accumulates in a local (a register), not through C,
    # which the compiler cannot keep in a register as C might alias A or B
    first_inner_rnz = len(term.levels)
    while first_inner_rnz > 0 and not term.is_map(term.levels[first_inner_rnz - 1]):
        first_inner_rnz -= 1
    a = ", ".join(_index(term, c) for c in term.operands[0])
    b = ", ".join(_index(term, c) for c in term.operands[1])
    out = ", ".join(_index(term, c) for c in term.output) or "0"
    target = "acc" if first_inner_rnz < len(term.levels) else f"C[{out}]"
    ind = "    "
    for depth, lv in enumerate(term.levels):
        if depth == first_inner_rnz:
            lines.append(f"{ind}acc = C[{out}]")
        rng = "numba.prange" if parallel and depth == 0 else "range"
        lines.append(f"{ind}for {lv.name()} in {rng}({_trip(term, lv)}):")
        ind += "    "
    lines.append(f"{ind}{target} += A[{a}] * B[{b}]")
    if target == "acc":
        lines.append(f"{'    ' * (first_inner_rnz + 1)}C[{out}] = acc")
    return LoopNest("\n".join(lines), parallel)


def compile_nest(nest: LoopNest) -> Callable[..., None]:
    """The ``numba.njit`` kernel of ``nest``, compiled once per process and source."""
    key = (nest.source, nest.parallel)
    if key not in _COMPILED:
        import numba  # imported here: building terms and sources needs no compiler

        namespace: dict[str, object] = {"numba": numba}
        exec(compile(nest.source, "<hof loop nest>", "exec"), namespace)  # source is generated, not user text
        _COMPILED[key] = numba.njit(parallel=nest.parallel, error_model="numpy")(namespace["kernel"])
    return _COMPILED[key]


def contract(term: Term, a: np.ndarray, b: np.ndarray, parallel: bool = False) -> np.ndarray:
    """Run ``term``'s loop nest on ``a`` and ``b`` (any strides) and return the output."""
    shape = tuple(term.extent(c) for c in term.output)
    for name, arr, letters in (("A", a, term.operands[0]), ("B", b, term.operands[1])):
        want = tuple(term.extent(c) for c in letters)
        if arr.shape != want:
            raise ValueError(f"{name} has shape {arr.shape}; the term was built for {want}")
    dtype = np.result_type(a.dtype, b.dtype)
    out = np.zeros(shape or (1,), dtype=dtype)
    compile_nest(loop_nest(term, parallel))(a, b, out)
    return out if shape else out.reshape(())
