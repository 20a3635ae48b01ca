"""Kernels of a contraction with its epilogue: the CONTRACT's part of a block's loop nest.

:func:`fusionlab.backend.numba.codegen.get_kernel` compiles a block holding one CONTRACT and the
element-wise instructions of its epilogue (the WSP graph admits no other company,
docs/contractions.md, "Contractions: fusion") as one loop nest over the contraction's output,
in one of two forms (docs/backend.md, "Contractions"):

- **BLAS tiles** for a matrix product (``"ij,jk->ik"``, float32 or float64 operands of the
  output's dtype): a parallel loop over blocks of :data:`TILE_ROWS` rows, each computing its
  rows of the product with Numba's ``np.dot`` (BLAS, one thread per tile: SciPy's OpenBLAS,
  the library Numba calls, is set to one thread, see :func:`serial_library_blas`) and then
  the epilogue on that tile while it is in cache: the product is never allocated whole;
- **a loop nest** for other subscripts and dtypes: parallel over the output's outermost
  index, the summed indices innermost around a scalar accumulator, the epilogue applied
  before the store.

A CONTRACT alone is not compiled: NumPy's own call (``via=``, BLAS for ``@``) is the
fastest kernel there is; the backend runs it as a *library kernel*
(:data:`LIBRARY_KERNEL` starts the block's reason; the layout raises it as
:class:`fusionlab.backend.numba.layout.LibraryCall`, and the block's plan says
:attr:`~fusionlab.backend.numba.plan.NumpyRuns.LIBRARY_CALL`).

Examples
--------
>>> from fusionlab import parse
>>> p = parse('''
... ARRAY X float64[8,3]
... ARRAY W float64[3,5]
... ARRAY T float64[8,5]
... ARRAY Y float64[8,5]
... CONTRACT T, X, W, subscripts="ij,jk->ik"
... MAXIMUM Y, T, 0
... DEL T
... ''')
>>> plan = contraction_plan(p, [0, 1])
>>> plan.tile, plan.summed
(True, ('j',))
>>> contraction_plan(p, [0]) is None
Traceback (most recent call last):
...
fusionlab.backend.numba.contract.LibraryKernel: library kernel: a contraction alone runs as NumPy's own call (np.einsum)
"""

from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

import numpy as np

from fusionlab.ir.bytecode import Instruction, OpFamily, Program, contraction_letters

__all__ = ["TILE_ROWS", "LIBRARY_KERNEL", "LibraryKernel", "ContractionPlan", "contraction_plan", "accumulate_lines",
           "row_lines", "tile_lines", "batch_tile_line", "serial_library_blas"]

#: rows of the product per BLAS tile: 64 rows of a 1024-column float64 product are 512 KiB,
#: within this machine's L2; 64 to 256 measured alike, 32 slower (docs/backend.md)
TILE_ROWS = 64
#: how the reason of a block that runs NumPy's own contraction call begins
LIBRARY_KERNEL = "library kernel"


class LibraryKernel(Exception):
    """A block that is one contraction: NumPy's own call is its kernel (not a fallback)."""


@dataclass(frozen=True)
class ContractionPlan:
    """The CONTRACT of a block (``index``), its letters, and the kernel form."""

    index: int
    a: str
    b: str
    out: str
    #: BLAS tiles (a matrix product of floats) instead of the loop nest
    tile: bool
    #: the loop nest accumulates a row of the output per outer index (summed letters
    #: outside, the output's last letter innermost) instead of one scalar per element
    row: bool = False
    #: a batched matrix product (``"bij,bjk->bik"``): one BLAS product per batch element,
    #: the outer (parallel) loop over the batch
    batch_tile: bool = False

    @property
    def summed(self) -> tuple[str, ...]:
        """The letters summed over, in order of appearance (the loop nest's inner loops)."""
        return tuple(c for c in dict.fromkeys(self.a + self.b) if c not in self.out)


def contraction_plan(program: Program, compute: Sequence[int]) -> ContractionPlan | None:
    """The plan of the block's contraction (None: the block has none); raises
    :class:`LibraryKernel` for a contraction alone and ``ValueError`` (with the reason)
    for company a contraction's kernel does not take."""
    cs = [i for i in compute if program[i].opcode in OpFamily.CONTRACTION]
    if not cs:
        return None
    c = cs[0]
    ins = program[c]
    if len(cs) > 1:
        raise ValueError(f"two contractions ({cs[0] + 1} and {cs[1] + 1}) do not share a loop nest")
    if len(compute) == 1:
        raise LibraryKernel(f"{LIBRARY_KERNEL}: a contraction alone runs as NumPy's own call "
                            f"(np.{ins.attr('via', 'einsum')})")
    operands = {v.base.name for v in ins.views_in}
    for i in compute:
        if i != c and program[i].opcode not in OpFamily.ELEMENTWISE:
            raise ValueError(f"{program[i].opcode.name} {i + 1} is not element-wise: a contraction's kernel takes "
                             "only its epilogue")
        if i != c and any(v.base.name in operands for v in program[i].writes()):
            raise ValueError(f"{program[i].opcode.name} {i + 1} writes an operand of CONTRACT {c + 1}")
    sa, sb, so = contraction_letters(ins.attr("subscripts"))
    out = ins.outputs[0]
    floats = out.dtype in ("float32", "float64") and all(v.dtype == out.dtype for v in ins.views_in)
    if floats and _matrix_product(sa, sb, so):
        return ContractionPlan(c, sa, sb, so, True)
    if floats and len(sa) == len(sb) == len(so) == 3 and sa[0] == sb[0] == so[0] \
            and _matrix_product(sa[1:], sb[1:], so[1:]):
        return ContractionPlan(c, sa, sb, so, False, batch_tile=True)
    plan = ContractionPlan(c, sa, sb, so, False)
    return ContractionPlan(c, sa, sb, so, False, _row_order(plan, ins))


def _matrix_product(sa: str, sb: str, so: str) -> bool:
    """``"ij,jk->ik"`` up to the letters' names."""
    return len(sa) == len(sb) == len(so) == 2 and sa[0] == so[0] and sb[1] == so[1] and sa[1] == sb[0] \
        and sa[1] not in so


def _row_order(plan: ContractionPlan, ins: Instruction) -> bool:
    """Whether the output's last letter should run innermost (a row accumulator) rather
    than the last summed one (a scalar): the one the operands walk with smaller strides.
    ``ij,jk->ik`` (C order): ``k`` walks ``b`` by 1, ``j`` walks ``b`` by its row length; a
    1024-cubed int64 product took 7.4 s with the scalar accumulator innermost, where the
    row order (NumPy-free ``i-k-j``) streams ``b``'s rows (docs/backend.md, "Contractions")."""
    if len(plan.out) < 2 or not plan.summed:
        return False

    def walk(c: str) -> int:
        return sum(abs(v.strides[t.index(c)]) for t, v in zip((plan.a, plan.b), ins.views_in) if c in t)

    return walk(plan.out[-1]) < walk(plan.summed[-1])


def _accumulator(ins: Instruction) -> str:
    """The accumulator's NumPy type: the output's for floats; 64-bit for integers, whose
    sums wrap alike in any width (the store casts to the output's)."""
    dt = np.dtype(ins.outputs[0].dtype)
    if dt.kind == "f":
        return f"np.{dt.name}"
    return "np.uint64" if dt.kind == "u" else "np.int64"


def accumulate_lines(plan: ContractionPlan, ins: Instruction, a: str, b: str, idx: Sequence[str],
                     acc: str) -> list[str]:
    """The loop-nest form: ``acc`` summed over the summed letters for the output element at
    ``idx`` (one loop per summed letter, the innermost last; lines indented relative to the
    body)."""
    typ = _accumulator(ins)
    where = {c: idx[k] for k, c in enumerate(plan.out)}
    extent: dict[str, str] = {}
    for k, c in enumerate(plan.summed):
        where[c] = f"k{k}"
        extent[c] = f"{a}.shape[{plan.a.index(c)}]" if c in plan.a else f"{b}.shape[{plan.b.index(c)}]"
    lines = [f"{acc} = {typ}(0)"]
    for depth, c in enumerate(plan.summed):
        lines.append("    " * depth + f"for {where[c]} in range({extent[c]}):")
    ra = f"{typ}({a}[{', '.join(where[c] for c in plan.a)}])" if plan.a else f"{typ}({a}[()])"
    rb = f"{typ}({b}[{', '.join(where[c] for c in plan.b)}])" if plan.b else f"{typ}({b}[()])"
    lines.append("    " * len(plan.summed) + f"{acc} += {ra} * {rb}")
    return lines


def row_lines(plan: ContractionPlan, ins: Instruction, a: str, b: str, idx: Sequence[str],
              extents: Sequence[str], acc: str) -> list[str]:
    """The row form, at the top of one outer iteration ``idx[0]``: ``acc`` holds the output's
    elements under that index, summed with the summed letters outside and the output's
    other letters inside (the last innermost, walking the operands with the least stride)."""
    typ = _accumulator(ins)
    where = {c: idx[k] for k, c in enumerate(plan.out)}
    loops: list[tuple[str, str]] = []
    for k, c in enumerate(plan.summed):
        where[c] = f"k{k}"
        loops.append((where[c], f"{a}.shape[{plan.a.index(c)}]" if c in plan.a else f"{b}.shape[{plan.b.index(c)}]"))
    loops += [(idx[k], extents[k]) for k in range(1, len(plan.out))]
    shape = ", ".join(f"np.int64({extents[k]})" for k in range(1, len(plan.out)))
    lines = [f"{acc} = np.zeros(({shape},), dtype={typ})"]
    for depth, (var, n) in enumerate(loops):
        lines.append("    " * depth + f"for {var} in range({n}):")
    at = f"{acc}[{', '.join(idx[1:len(plan.out)])}]"
    ra = f"{typ}({a}[{', '.join(where[c] for c in plan.a)}])"
    rb = f"{typ}({b}[{', '.join(where[c] for c in plan.b)}])"
    lines.append("    " * len(loops) + f"{at} += {ra} * {rb}")
    return lines


def batch_tile_line(a: str, b: str, index: str, comment: str) -> str:
    """The batched form's product of one batch element, at the top of its outer iteration."""
    return f"tile = np.dot({a}[{index}], {b}[{index}]){comment}"


def tile_lines(a: str, b: str, n0: str, tile_rows: str, comment: str) -> list[str]:
    """The BLAS-tile form's lines at the top of one parallel iteration ``rb``: its rows
    ``r0 .. r1`` of the product in ``tile`` (the loop over those rows follows)."""
    return [f"r0 = rb * {tile_rows}",
            f"r1 = min({n0}, r0 + {tile_rows})",
            f"tile = np.dot({a}[r0:r1], {b}){comment}"]


@functools.lru_cache(maxsize=1)
def _library_blas() -> tuple[Callable[[], int], Callable[[int], None]] | None:
    """The get and set thread-count functions of SciPy's OpenBLAS (the library Numba's
    ``np.dot`` calls; NumPy's own is another one), or ``None`` where it is not found."""
    import ctypes
    import glob
    import os

    try:
        import scipy
    except ImportError:   # Numba then has no BLAS either: np.dot would not compile
        return None
    libs = glob.glob(os.path.join(os.path.dirname(os.path.dirname(scipy.__file__)), "scipy.libs", "*openblas*.so*"))
    for path in libs:
        lib = ctypes.CDLL(path)
        for prefix in ("scipy_openblas", "openblas"):
            get = getattr(lib, f"{prefix}_get_num_threads", None)
            set_ = getattr(lib, f"{prefix}_set_num_threads", None)
            if get is not None and set_ is not None:
                get.restype = ctypes.c_int
                return (lambda: int(get())), (lambda n: set_(ctypes.c_int(n)))
    return None


@contextlib.contextmanager
def serial_library_blas(active: bool = True) -> Iterator[bool]:
    """Run the body with SciPy's OpenBLAS on one thread, then give it back its count.

    BLAS tiles run in the kernel's own parallel threads, and a threaded BLAS inside them
    oversubscribes the cores (1024 x 1024 with a ReLU epilogue, two cores: 108-240 ms with
    two BLAS threads, 62 ms with one). The count is restored afterwards so the user's own
    SciPy calls in the same session keep their threads. Yields whether it applied.

    >>> with serial_library_blas(active=False) as applied:
    ...     applied
    False
    """
    lib = _library_blas() if active else None
    if lib is None:
        yield False
        return
    get, set_ = lib
    before = get()
    set_(1)
    try:
        yield True
    finally:
        set_(before)
