"""The loop nest of a contraction term, as Numba source, compiled once per arrangement.

Each level of the nest becomes one ``for`` loop (a subdivided index two: its blocks, then
the elements of a block, whose index is ``j_o * b + j_i``), in the nest's order, around one
statement ``C[out] += A[...] * B[...]``; the innermost run of rnz levels sums into a local,
and an operand element fixed before the innermost loop is loaded once into a local. Extents
are read from the arrays' shapes, so one compiled kernel serves every shape of the same
arrangement; the block size is a constant.

The nest may run in parallel over its outermost map: distinct iterations write distinct
output elements (rnz levels outside it stay serial around it). A nest of rnz levels only
(a scalar output) accumulates every iteration into one element, so its parallel form is
refused with the reason.

Examples
--------
>>> import numpy as np
>>> from fusionlab.explore.hof.contraction import contraction_term
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

from fusionlab.explore.hof.term import Level, Term

__all__ = ["LoopNest", "loop_nest", "parallel_refusal", "parallel_level", "compile_nest", "contract"]

_COMPILED: dict[tuple[str, bool, bool], Callable[..., None]] = {}


@dataclass(frozen=True)
class LoopNest:
    """Generated source of one arrangement; ``parallel`` says whether its outer loop is a ``prange``."""

    source: str
    parallel: bool
    reassoc: bool = False


def parallel_refusal(term: Term) -> str | None:
    """Why no level of the nest can run in parallel, or ``None`` when its outermost map can."""
    if not term.levels:
        return "the nest has no loops"
    if parallel_level(term) is None:
        return ("every level is an rnz (the output is a scalar): every iteration accumulates "
                "into the same element (a race)")
    return None


def parallel_level(term: Term) -> int | None:
    """The depth of the outermost map: its iterations write distinct output elements.

    rnz levels outside it stay serial loops around the parallel one (each of their
    iterations runs one parallel loop), so every arrangement with a map has a parallel form.
    """
    return next((d for d, lv in enumerate(term.levels) if term.is_map(lv)), None)


#: An innermost rnz over the elements of a block of at most this many is unrolled (below).
MAX_UNROLL = 16


def _index(term: Term, letter: str, element: int | None = None) -> str:
    """The index expression of ``letter``; ``element`` replaces ``letter_i`` once unrolled."""
    b = term.block(letter)
    if b is None:
        return letter
    return f"{letter}_o * {b} + {letter + '_i' if element is None else element}"


def _trip(term: Term, lv: Level) -> str:
    b = term.block(lv.index)
    return {"whole": f"n_{lv.index}", "outer": f"n_{lv.index} // {b}", "inner": f"{b}"}[lv.part]


def _unrolled(term: Term) -> Level | None:
    """The innermost level when it is an rnz over the elements of a block (a constant trip).

    Unrolling it turns the loop outside it into the innermost one: with ``mapB`` there
    (``j_o i k j_i``, Table 2's best order) that loop walks rows of ``B`` and ``C``
    contiguously and LLVM vectorises it, the block's elements of ``A`` held in locals (a
    tile of ``A`` in registers) -- the loop over ``j_i`` itself walks a column of ``B``.
    """
    lv = term.levels[-1] if len(term.levels) > 1 else None
    if lv is None or lv.part != "inner" or term.is_map(lv) or (term.block(lv.index) or 0) > MAX_UNROLL:
        return None
    return lv


def _bound_at(loops: tuple[Level, ...], letters: tuple[str, ...]) -> int:
    """The depth of the loop after which every one of ``letters`` has its value (-1: none)."""
    return max((d for d, lv in enumerate(loops) if lv.index in letters), default=-1)


def _inner_rnz_start(term: Term, loops: tuple[Level, ...]) -> int:
    """The depth where the innermost run of rnz loops starts (``len(loops)``: none)."""
    first = len(loops)
    while first > 0 and not term.is_map(loops[first - 1]):
        first -= 1
    return first


def _arrays(term: Term) -> tuple[str, str, str]:
    """The kernel's parameter names: ``A, B, C``, unless an index letter is one of them (a
    loop variable would hide the array), then ``A_, B_, C_``."""
    letters = {c for c, _ in term.extents}
    return ("A_", "B_", "C_") if letters & {"A", "B", "C"} else ("A", "B", "C")


def _header(term: Term) -> list[str]:
    a, b, c_ = _arrays(term)
    lines = [f"def kernel({a}, {b}, {c_}):"]
    seen: set[str] = set()
    for name, letters in zip((a, b), term.operands):
        for axis, c in enumerate(letters):
            if c not in seen:
                seen.add(c)
                lines.append(f"    n_{c} = {name}.shape[{axis}]")
    return lines


def _products(term: Term, loops: tuple[Level, ...], unrolled: Level | None
              ) -> tuple[list[str], dict[int, list[str]]]:
    """The products summed by the innermost statement (one per unrolled element), and the
    operand loads hoisted out of the innermost loop, keyed by the depth they belong after."""
    copies: list[int | None] = list(range(term.block(unrolled.index) or 0)) if unrolled else [None]
    loads: dict[int, list[str]] = {}
    products = []
    for t in copies:
        reads = []
        for name, letters in zip(_arrays(term)[:2], term.operands):
            idx = ", ".join(_index(term, c, t if unrolled and c == unrolled.index else None) for c in letters)
            at, read = _bound_at(loops, letters), f"{name}[{idx}]"
            if at < len(loops) - 1:  # fixed before the innermost loop: one load per iteration of its level
                local = f"{name[0].lower()}_v{'' if t is None else t}"
                loads.setdefault(at, []).append(f"{local} = {read}")
                read = local
            reads.append(read)
        products.append(f"{reads[0]} * {reads[1]}")
    return products, loads


def loop_nest(term: Term, parallel: bool = False) -> LoopNest:
    """The Numba-ready source of ``term``'s loop nest (a function ``kernel(A, B, C)``).

    ``C`` must be zeroed with the output's shape (``(1,)`` for a scalar output). An operand
    element fixed before the innermost loop is loaded once into a local (``a_v``), the
    innermost run of rnz loops sums into a local (``acc``): registers, not memory, since
    the compiler cannot prove ``C`` does not alias ``A`` or ``B``; an innermost rnz over
    the elements of a block is unrolled (:func:`_unrolled`). With ``parallel`` the outermost
    map is a ``numba.prange``. Raises ``ValueError`` when ``parallel`` is asked where
    :func:`parallel_refusal` refuses, or when a reducer other than ``+`` appears.
    """
    if parallel and (why := parallel_refusal(term)) is not None:
        raise ValueError(f"cannot run in parallel: {why}")
    for lv in term.levels:
        if not term.is_map(lv) and term.reducer(lv.index).name != "+":
            raise ValueError(f"loop nests sum; index {lv.index!r} reduces with another operator")
    unrolled = _unrolled(term)
    loops = term.levels[:-1] if unrolled else term.levels
    acc_at = _inner_rnz_start(term, loops)
    par_at = parallel_level(term) if parallel else None
    out = f"{_arrays(term)[2]}[{', '.join(_index(term, c) for c in term.output) or '0'}]"
    products, loads = _products(term, loops, unrolled)
    lines = _header(term) + ["    " + x for x in loads.get(-1, [])]
    ind = "    "
    if par_at:  # rnz loops outside the map: one parallel region, each thread a range of the map
        lines += [f"{ind}n_chunks = numba.get_num_threads()", f"{ind}for chunk in numba.prange(n_chunks):"]
        ind += "    "
    base = len(ind) // 4 - 1
    for depth, lv in enumerate(loops):
        if depth == acc_at:
            lines.append(f"{ind}acc = {out}")
        lines.append(f"{ind}for {lv.name()} in {_range(term, lv, depth, par_at)}:")
        ind += "    "
        lines += [ind + x for x in loads.get(depth, [])]
    target = "acc" if acc_at < len(loops) else out
    if len(products) == 1:
        lines.append(f"{ind}{target} += {products[0]}")
    else:  # one product a line, summed left to right
        lines.append(f"{ind}{target} += ({products[0]}")
        lines += [f"{ind}    + {p}" for p in products[1:-1]] + [f"{ind}    + {products[-1]})"]
    if target == "acc":
        lines.append(f"{'    ' * (base + acc_at + 1)}{out} = acc")
    return LoopNest("\n".join(lines), parallel, _reassoc(term))


def _range(term: Term, lv: Level, depth: int, par_at: int | None) -> str:
    """The iteration space of ``lv``: all of it, in parallel when it is the parallel map at
    the top, or this thread's contiguous range of it when serial rnz loops are outside it
    (each thread then runs those loops over its own output rows, in the same order, so
    every output element sums its terms exactly as the serial nest does)."""
    trip = _trip(term, lv)
    if depth != par_at:
        return f"range({trip})"
    if depth == 0:
        return f"numba.prange({trip})"
    return f"range(({trip}) * chunk // n_chunks, ({trip}) * (chunk + 1) // n_chunks)"


def _reassoc(term: Term) -> bool:
    """Whether the kernel may reassociate its sums: when its innermost level is an rnz.

    That loop sums into a local; reassociating it (``fastmath={'reassoc'}``) lets LLVM keep
    several partial sums in one vector register. The rnz-rnz exchange (eq. 43) already
    takes ``+`` as associative; the results differ from NumPy's in the last bits only.
    """
    return bool(term.levels) and not term.is_map(term.levels[-1])


def compile_nest(nest: LoopNest) -> Callable[..., None]:
    """The ``numba.njit`` kernel of ``nest``, compiled once per process and source."""
    key = (nest.source, nest.parallel, nest.reassoc)
    if key not in _COMPILED:
        import numba  # imported here: building terms and sources needs no compiler

        namespace: dict[str, object] = {"numba": numba}
        exec(compile(nest.source, "<hof loop nest>", "exec"), namespace)  # source is generated, not user text
        _COMPILED[key] = numba.njit(parallel=nest.parallel, error_model="numpy",
                                     fastmath={"reassoc"} if nest.reassoc else False)(namespace["kernel"])
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
