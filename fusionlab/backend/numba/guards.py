"""What a kernel raises when a size capture recorded from the data does not hold in a run.

A capture is a trace of one run of the program under NumPy: a filter's output holds the
count NumPy's mask selected, a gather's indices were inside their source, a histogram's
values inside its bins. A fused kernel computes the same values with other roundings (a
fused multiply-add, another order of a sum, another ``hypot``), and a value within a unit
of a threshold may fall on its other side: the mask selects two more points, an index is
one past the end. The kernels never write or read past an array for that: each such
access is checked where it happens, the kernel finishes its loop without it and raises
one of these after the loop (a ``raise`` inside a ``prange`` loop would make Numba run the
loop serially, and an exception raised by a function called there is lost).

The run's driver (:class:`fusionlab.backend.numba.driver.Driver`) catches them and runs the
whole run again as NumPy, whose roundings are the capture's: the values are NumPy's, and
the run says why (:class:`SizeFallback`). Kernels raise the class with the instruction's
number as its one argument (Numba raises exceptions with constant arguments only).

Examples
--------
>>> str(FilterCountMismatch(3))
'instruction 4 (a filter): the fused run selected another count of elements than NumPy did at capture'
>>> isinstance(IndexOutOfRange(0), RecordedSizeMismatch), isinstance(HistogramOutOfRange(0), ValueError)
(True, True)
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from fusionlab.ir.bytecode import HISTOGRAM_RANGE

__all__ = ["RecordedSizeMismatch", "FilterCountMismatch", "IndexOutOfRange", "HistogramOutOfRange", "NumPyCallFailed",
           "MismatchKind", "SizeFallback", "GUARD_NAMES", "GUARD_IMPORT"]


class MismatchKind(enum.Enum):
    """Which recorded size did not hold."""

    FILTER_COUNT = "a filter's count"
    INDEX_RANGE = "an index's range"
    HISTOGRAM_RANGE = "a histogram's bins"
    NUMPY_CALL = "a NumPy call between the kernels"


class RecordedSizeMismatch(ValueError):
    """A size recorded at capture did not hold in a fused run (see the module notes).

    ``args[0]`` is the instruction's 0-based index in its batch. A ValueError, as NumPy's
    own error for the same data would be (``np.bincount`` of a negative value).
    """

    kind: MismatchKind = MismatchKind.FILTER_COUNT
    what: str = "a size recorded at capture did not hold"

    @property
    def instruction(self) -> int:
        """The instruction's 0-based index in its batch."""
        return int(self.args[0]) if self.args else -1

    def __str__(self) -> str:
        return f"instruction {self.instruction + 1} ({self.kind_name}): {self.what}"

    @property
    def kind_name(self) -> str:
        return {MismatchKind.FILTER_COUNT: "a filter", MismatchKind.INDEX_RANGE: "a gather",
                MismatchKind.HISTOGRAM_RANGE: "a histogram", MismatchKind.NUMPY_CALL: "run by NumPy"}[self.kind]


class FilterCountMismatch(RecordedSizeMismatch):
    """A COMPRESS's mask selected another count than the output's, recorded at capture."""

    kind = MismatchKind.FILTER_COUNT
    what = "the fused run selected another count of elements than NumPy did at capture"


class IndexOutOfRange(RecordedSizeMismatch):
    """A GATHER's index computed in the run is outside its source's extent."""

    kind = MismatchKind.INDEX_RANGE
    what = "an index computed in the fused run is outside the array it indexes (it was inside at capture)"


class HistogramOutOfRange(RecordedSizeMismatch):
    """A BINCOUNT's value is outside the bins recorded at capture."""

    kind = MismatchKind.HISTOGRAM_RANGE
    what = HISTOGRAM_RANGE


class NumPyCallFailed(RecordedSizeMismatch):
    """An instruction NumPy runs between the kernels (an opaque call, an indexed assignment,
    a filter of a block that has no kernel) raised IndexError or ValueError on the values
    the fused kernels computed: an index one past the end, a mask of another count. The
    run's NumPy redo raises the program's own error if the data has one."""

    kind = MismatchKind.NUMPY_CALL
    what = "NumPy raised on the values the fused kernels computed (it ran on NumPy's at capture)"


#: the names a kernel's module imports from this one (:class:`~fusionlab.backend.numba.plan.KernelCache`)
GUARD_NAMES = ("FilterCountMismatch", "IndexOutOfRange", "HistogramOutOfRange")
GUARD_IMPORT = f"from fusionlab.backend.numba.guards import {', '.join(GUARD_NAMES)}"


@dataclass(frozen=True)
class SizeFallback:
    """Why a run went on as NumPy: the recorded size that did not hold, and where.

    ``batch`` is -1 where the run's driver called the kernel (it does not say which batch),
    and ``instruction`` the kernel's own number of the instruction (its first batch's).

    >>> print(SizeFallback(MismatchKind.FILTER_COUNT, 2, 4).describe())
    batch 3, instruction 5 (a filter's count): a value the fused kernels rounded otherwise than NumPy fell on the other side of a threshold, so the size capture recorded did not hold; the run was done again as NumPy (its values are NumPy's)
    """

    kind: MismatchKind
    batch: int
    instruction: int

    def describe(self) -> str:
        where = f"batch {self.batch + 1}, " if self.batch >= 0 else ""
        return (f"{where}instruction {self.instruction + 1} ({self.kind.value}): a value the fused kernels rounded "
                "otherwise than NumPy fell on the other side of a threshold, so the size capture recorded did not "
                "hold; the run was done again as NumPy (its values are NumPy's)")
