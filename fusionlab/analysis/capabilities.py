"""What a backend compiles, stated once: :class:`Capabilities` (issue 33).

A backend states its facts in one frozen :class:`Capabilities`; two readers use them, and no
other place re-decides them:

- the WSP graph (:class:`fusionlab.analysis.wsp.WSPGraph`, ``capabilities=``): the
  fuse-preventing rules that exist because of what a kernel can hold (a scan beside a
  reduction or a filter, scans along different axes, a scan of another scan's result, a
  histogram's companions, a contraction's epilogue) and which instructions run alone (those the backend does not
  compile), read from it, and :func:`fusionlab.analysis.legality.fusion_conflict` stays the
  one place a block's legality is decided;
- :func:`refusal`: whether the computing instructions of a (legal) block can be one kernel
  at all, answered with a typed :class:`Refused` (a :class:`Refusal` kind and the text
  people read), never with text a caller parses. The Numba layout
  (:func:`fusionlab.backend.numba.layout.get_kernel_layout`) raises it as its ``Unsupported``.

The default backend's facts (Numba's) are stated here as data, :data:`DEFAULT`, because the
graph is built in ``analysis/``, which may not import ``backend/`` (``tests/test_layers.py``),
and a graph built without a backend in mind (a test, the explorer's views, a cost model's
evaluator) must keep forbidding what the default backend cannot run.
``fusionlab.backend.numba.capabilities.NUMBA`` is this object, and the pipeline passes it to
the graphs it builds; a second backend states its own instance and passes that.

Examples
--------
>>> from fusionlab import parse
>>> p = parse("ARRAY X float16[4]\\nARRAY Y float64[4]\\nNEGATIVE X, X\\nNEGATIVE Y, Y")
>>> refusal(DEFAULT, p, [1]) is None
True
>>> got = refusal(DEFAULT, p, [0, 1])
>>> got.kind, got.index, got.detail
(<Refusal.DTYPE: 'a dtype the backend has no arithmetic for'>, 0, 'float16 (X) has no Numba arithmetic: NumPy runs it')
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, replace
from typing import Sequence

from fusionlab.analysis.filters import filter_folds, is_row_filter
from fusionlab.ir.bytecode import Instruction, Opcode, OpFamily, Program
from fusionlab.ir.opcodes import OPCODES

__all__ = ["Capabilities", "Refusal", "Refused", "DEFAULT", "refusal"]


class Refusal(enum.Enum):
    """Why a backend cannot compile a block's instructions as one kernel (its kind; the
    :class:`Refused` detail names the instruction, for people)."""

    OPCODE = "the backend does not compile this opcode"
    UNRECORDED_RANDOM = "random draws without recorded values"
    DTYPE = "a dtype the backend has no arithmetic for"
    COMPLEX = "an opcode the backend does not compute on complex values"
    ARG_REDUCTION_FILTER = "an arg reduction beside a filter"
    ROW_MASK = "a row selection's mask used by another instruction of its loop"
    EMPTY_LOOP = "an empty iteration space whose loop would leave a result unset"


@dataclass(frozen=True, slots=True)
class Refused:
    """A backend's typed refusal of a block: its ``kind``, the instruction (0-based, ``None``
    when the block as a whole is refused) and the ``detail`` people read (the plan's reason)."""

    kind: Refusal
    index: int | None
    detail: str


@dataclass(frozen=True)
class Capabilities:
    """What one backend compiles.

    Attributes
    ----------
    name
        The backend's name, as its refusals say it (``"Numba"``).
    opcodes
        The opcodes it compiles; an instruction of any other computing opcode runs alone
        (with NumPy), as an opaque one does: the WSP graph marks it so.
    dtypes
        The dtypes it computes with as NumPy does (``"float64"``, ...).
    complex_opcodes
        The opcodes it computes on complex inputs as NumPy does.
    unrecorded_random
        Whether it draws a RANDOM without the values capture recorded.
    arg_reduction_with_filter
        Whether an arg reduction may share a kernel with a filter.
    row_mask_users
        Whether a row selection's mask may be read or written by another instruction of its
        kernel (Numba's loop indexes it by the leading loop indices, that instruction's view
        by its own).
    empty_loop_outputs
        Whether it sets the outputs of an instruction over an empty iteration space that
        are not empty (a reduction along an empty axis), beyond a whole reduction's identity.
    scan_with_reduction, scan_with_filter
        Whether a scan may share a kernel with a reduction, with a filter.
    mixed_scan_axes
        Whether one kernel may hold scans along different axes.
    chained_scans
        Whether a scan may share a kernel with a scan it reads the result of.
    histogram_companions
        The opcodes a histogram (BINCOUNT) may share its kernel with.
    contraction_epilogue
        The opcodes a contraction's kernel takes beside it (its epilogue, over its output);
        another contraction or any other instruction of its domain keeps its own kernel.

    Examples
    --------
    >>> DEFAULT.name, Opcode.OPAQUE in DEFAULT.opcodes, "float16" in DEFAULT.dtypes
    ('Numba', False, False)
    >>> no_scans = DEFAULT.without(OpFamily.SCAN)
    >>> no_scans.runs_alone(Opcode.ADD_ACCUMULATE), DEFAULT.runs_alone(Opcode.ADD_ACCUMULATE)
    (True, False)
    """

    name: str
    opcodes: frozenset[Opcode]
    dtypes: frozenset[str]
    complex_opcodes: frozenset[Opcode]
    unrecorded_random: bool = False
    arg_reduction_with_filter: bool = False
    row_mask_users: bool = False
    empty_loop_outputs: bool = False
    scan_with_reduction: bool = False
    scan_with_filter: bool = False
    mixed_scan_axes: bool = False
    chained_scans: bool = False
    histogram_companions: frozenset[Opcode] = frozenset()
    contraction_epilogue: frozenset[Opcode] = frozenset()

    def runs_alone(self, op: Opcode) -> bool:
        """Whether an instruction of ``op`` runs alone: it computes and the backend does not
        compile it (DEL and SYNC fuse with anything)."""
        return op not in OpFamily.SYSTEM and op not in self.opcodes

    def without(self, ops: frozenset[Opcode]) -> Capabilities:
        """These capabilities less the opcodes ``ops`` (a backend that compiles fewer)."""
        return replace(self, opcodes=self.opcodes - ops, complex_opcodes=self.complex_opcodes - ops)


#: The default backend's capabilities (Numba's, ``fusionlab.backend.numba.capabilities.NUMBA``).
#: Stated here as data, from the opcode table's rows (every opcode but the opaque call has a
#: kernel form), because analysis/ may not import backend/ (see the module docstring).
DEFAULT = Capabilities(
    name="Numba",
    opcodes=frozenset(op for op, row in OPCODES.items() if row.family != "opaque"),
    # float16 and long double Numba does not compute with as NumPy does
    dtypes=frozenset({"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                      "float32", "float64", "complex64", "complex128"}),
    # NumPy orders complex values lexicographically for argmin/argmax; the kernel's test does not
    complex_opcodes=frozenset(op for op, row in OPCODES.items() if row.family != "opaque")
    - OpFamily.ARG_REDUCTION,
    # each chunk counts into its own bins, summed after the loop: only companions that are one
    # element per iteration of the histogram's input combine with that
    histogram_companions=OpFamily.ELEMENTWISE | OpFamily.GENERATOR | OpFamily.GATHER | OpFamily.HISTOGRAM,
    # a tile or loop nest of the product, then element-wise lines on each element before its store
    contraction_epilogue=OpFamily.ELEMENTWISE,
)


def refusal(caps: Capabilities, program: Program, block: Sequence[int]) -> Refused | None:
    """Why the backend of ``caps`` cannot compile the instructions ``block`` (0-based, one
    block the WSP graph allows; its DELs and SYNCs are no question) as one kernel, or ``None``.

    The one answer to "can this compile": the first refusal in this order, instruction by
    instruction: an opcode it does not compile or an unrecorded RANDOM; a dtype without
    arithmetic; an opcode of complex inputs it does not compute; then the block: an arg
    reduction beside a filter; a row selection's mask used by another instruction; an empty
    loop that would leave an output unset.

    >>> from fusionlab import parse
    >>> p = parse("ARRAY X complex128[8]\\nARRAY I int64[]\\nARGMIN I, X")
    >>> refusal(DEFAULT, p, [0]).kind.name
    'COMPLEX'
    """
    compute = [i for i in block if program[i].opcode not in OpFamily.SYSTEM]
    for i in compute:
        op = program[i].opcode
        if caps.runs_alone(op):
            return Refused(Refusal.OPCODE, i, f"{op.name} runs with NumPy")
        if op is Opcode.RANDOM and program[i].attr("key") is None and not caps.unrecorded_random:
            return Refused(Refusal.UNRECORDED_RANDOM, i, "RANDOM without recorded values runs with NumPy")
    for i in compute:
        for v in program[i].views_in + program[i].outputs:
            if v.dtype not in caps.dtypes:
                return Refused(Refusal.DTYPE, i, f"{v.dtype} ({v.base.name}) has no {caps.name} arithmetic: "
                                                 "NumPy runs it")
    for i in compute:
        op = program[i].opcode
        if op not in caps.complex_opcodes and any(v.dtype.startswith("complex") for v in program[i].views_in):
            return Refused(Refusal.COMPLEX, i, f"{op.name} of complex values runs with NumPy")
    if not caps.arg_reduction_with_filter and any(program[i].opcode in OpFamily.ARG_REDUCTION for i in compute) \
            and any(program[i].opcode in OpFamily.FILTER for i in compute):
        return Refused(Refusal.ARG_REDUCTION_FILTER, None, "an arg reduction beside a filter runs with NumPy")
    if not caps.row_mask_users:
        filters = [i for i in compute if program[i].opcode in OpFamily.FILTER]
        rows = {program[c].views_in[1] for c in filters if is_row_filter(program[c])}
        for j in compute if rows else ():
            if j not in filters and any(v in rows for v in program[j].reads() + program[j].writes()):
                return Refused(Refusal.ROW_MASK, j, "a row selection's mask is used by another instruction of its "
                                                    "loop (indexed by the leading loop indices there, by the "
                                                    "trailing ones elsewhere)")
    if not caps.empty_loop_outputs and compute:
        domain = _loop_domain(program, compute[0])
        if domain is not None and 0 in domain:
            for i in compute:
                if _unset_by_empty_loop(program[i]):
                    return Refused(Refusal.EMPTY_LOOP, i,
                                   "an empty iteration space whose loop would leave a result unset")
    return None


def _loop_domain(program: Program, i: int) -> tuple[int, ...] | None:
    """Instruction ``i``'s loop domain (:func:`fusionlab.analysis.filters.loop_domains`'s,
    without walking the whole program: a filter-fold runs over its filter's input)."""
    c = filter_folds(program).get(i)
    return program[i].domain if c is None else program[c].domain


def _unset_by_empty_loop(ins: Instruction) -> bool:
    """Whether a loop that never runs (``a[i, i + 1:] * x[i + 1:]`` at the last row of a back
    substitution) leaves an output of ``ins`` unset. It does not for an instruction whose
    outputs are empty too, nor for a whole-array reduction with a finite identity (the sum of
    nothing is 0, as NumPy's), whose result is set after the loop; it does for a reduction
    along an empty axis or a count into bins."""
    if all(v.size == 0 for v in ins.outputs):
        return False
    info = ins.opcode.info
    whole = ins.opcode in OpFamily.REDUCTION and ins.opcode not in OpFamily.ARG_REDUCTION \
        and ins.attr("axis") is None
    return not (whole and info.identity is not None
                and not (isinstance(info.identity, float) and math.isinf(info.identity)))
