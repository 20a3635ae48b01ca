"""The explorer's notices: what each one is about (its kind) and how much it matters (its level).

A notice reaches the report as ``{"kind", "level", "message", "line"}``, and ``"detail"``
when the plain message has an expert's version (the pass's own record, with the views it
names: the views show it behind a "details" toggle). The *kind* names
the subject (``opaque``, ``budget``, ``window``...: the capture's
:class:`~fusionlab.capture.recorder.NoticeKind` by name, or one of :class:`ReportNotice`);
the *level* says what the reader should do about it, one of :class:`Level`:

- ``info``: worth knowing, nothing to fix (a rewrite, a window, an exact search the time
  budget cut: the best partition so far is shown, and the message says how to search longer);
- ``warning``: something runs as NumPy or is left out, and costs speed or a view;
- ``error``: the tool failed on the cell (the cell still ran, as plain NumPy).

Levels are decided here, once, by the notice's type, never by reading its text. The views
sort by level (errors first), colour by level and unfold the list when a warning or an
error is in it (:func:`fusionlab.explore.viz.listing.notices_html`, the extension's
``explorer.ts``).

Examples
--------
>>> from fusionlab.capture.recorder import Notice, NoticeKind
>>> capture_notice(Notice(NoticeKind.OPAQUE, "np.linalg.solve", 4))["level"]
'warning'
>>> report_notice(ReportNotice.SEARCH_CUT, "two searches stopped")
{'kind': 'budget', 'level': 'info', 'message': 'two searches stopped', 'line': None}
>>> [n["level"] for n in by_level([report_notice(ReportNotice.REWRITE, "a"),
...                                capture_notice(Notice(NoticeKind.FAILED, "b"))])]
['error', 'info']
"""

from __future__ import annotations

import enum
from typing import Any, Iterable, Mapping

from fusionlab.capture.recorder import Notice, NoticeKind
from fusionlab.passes.rewrites import Rewrite, RewriteKind

__all__ = ["Level", "ReportNotice", "CAPTURE_LEVELS", "OPAQUE_ADVICE", "opaque_meaning", "capture_notice", "report_notice",
           "REWRITE_MEANING", "rewrite_notice", "level_of", "by_level"]


class Level(enum.Enum):
    """How much a notice matters, most first."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        """0 for errors, 1 for warnings, 2 for information (the order the views list them)."""
        return list(Level).index(self)


#: the level of each capture notice
CAPTURE_LEVELS: Mapping[NoticeKind, Level] = {
    NoticeKind.OPAQUE: Level.WARNING,      # runs as NumPy between kernels, never fused
    NoticeKind.SYNC: Level.INFO,           # a value read by Python: where a batch ends
    NoticeKind.COPY: Level.INFO,           # an overlapping update split in two, as the paper does
    NoticeKind.ALIAS: Level.WARNING,       # reloaded before each use: costs a comparison and a copy
    NoticeKind.PLAIN: Level.WARNING,       # outside the recording: not fused, not explored
    NoticeKind.SCALAR_LOOP: Level.WARNING,  # thousands of one-element instructions
    NoticeKind.FAILED: Level.ERROR,        # a bug of fusionlab's: the cell ran as plain NumPy
    NoticeKind.BUDGET: Level.WARNING,      # recording stopped: the rest ran as plain NumPy
    NoticeKind.BATCH: Level.INFO,          # a long batch cut between iterations
}


class ReportNotice(enum.Enum):
    """The notices the explorer adds to the capture's: (kind, level)."""

    #: the exact searches' shared time ran out: the best partition so far is shown, not proven
    SEARCH_CUT = ("budget", Level.INFO)
    #: the WSP graph was not built within the budget: no partition at all
    GRAPH_CUT = ("budget", Level.WARNING)
    #: the fuse-preventing edges were not listed within the budget (the partitions know them)
    CONFLICTS_CUT = ("budget", Level.INFO)
    #: the dead-writes pass stopped at its budget: what a run rewrites is not listed
    DEAD_WRITES_CUT = ("budget", Level.INFO)
    #: what the preparing passes rewrote of the batch
    REWRITE = ("rewrite", Level.INFO)
    #: what rerolling did to the batch
    REROLL = ("reroll", Level.INFO)
    #: the batch shown is the first part of a longer one
    WINDOW = ("window", Level.INFO)
    #: the generated code was not shown (it would not end within the budget)
    CODE = ("code", Level.INFO)
    #: nothing was recorded: nothing to partition
    EMPTY = ("empty", Level.WARNING)

    @property
    def kind(self) -> str:
        """The report's ``kind`` string."""
        return self.value[0]

    @property
    def level(self) -> Level:
        """The notice's :class:`Level`."""
        return self.value[1]


_LIBRARY = "a library routine: it stays NumPy, and the code before and after it still fuses"
#: what an opaque call means, by the call's name (exact, then by package: ``np.linalg.``)
OPAQUE_ADVICE: Mapping[str, str] = {
    "np.sort": _LIBRARY, "np.argsort": _LIBRARY, "np.lexsort": _LIBRARY, "np.partition": _LIBRARY,
    "np.argpartition": _LIBRARY, "np.unique": _LIBRARY, "np.searchsorted": _LIBRARY,
    "np.percentile": _LIBRARY, "np.quantile": _LIBRARY, "np.median": _LIBRARY, "np.interp": _LIBRARY,
    "np.convolve": _LIBRARY, "np.correlate": _LIBRARY, "np.polyfit": _LIBRARY,
    "np.linalg.": "linear algebra runs in LAPACK and BLAS, which fusion would not beat",
    "np.fft.": "an FFT runs in NumPy's pocketfft, which fusion would not beat",
    "np.random.": "a random draw: recorded once, its values are inputs of the fused code",
    "Generator.": "a random routine that wrote into the cell's array: NumPy does it, the fused code reads the result",
    "RandomState.": "a random routine that wrote into the cell's array: NumPy does it, the fused code reads the result",
    "reshape copy": ("a reshape no view can describe (the array is not contiguous): NumPy copies it, "
                     "the code around it still fuses"),
}
_UNKNOWN = ("capture does not know this call: it runs as NumPy between the fused kernels, on the "
            "arrays as they are then (fusion stops there)")


def opaque_meaning(name: str) -> str:
    """What an opaque call named ``name`` means for the user, in plain words.

    >>> opaque_meaning("np.linalg.solve")
    'linear algebra runs in LAPACK and BLAS, which fusion would not beat'
    >>> opaque_meaning("np.frobnicate").startswith("capture does not know this call")
    True
    """
    if name in OPAQUE_ADVICE:
        return OPAQUE_ADVICE[name]
    package = next((k for k in OPAQUE_ADVICE if k.endswith(".") and name.startswith(k)), None)
    return OPAQUE_ADVICE[package] if package is not None else _UNKNOWN


def capture_notice(n: Notice) -> dict[str, Any]:
    """A capture notice as the report's JSON object; an opaque call's message says what it
    means (:func:`opaque_meaning`)."""
    message = n.message
    if n.kind is NoticeKind.OPAQUE:
        message = f"{n.message} runs as NumPy, never fused: {opaque_meaning(n.message.split('(')[0].strip())}"
    return {"kind": n.kind.name.lower(), "level": CAPTURE_LEVELS[n.kind].value, "message": message, "line": n.line}


def report_notice(which: ReportNotice, message: str, line: int | None = None,
                  detail: str | None = None) -> dict[str, Any]:
    """One of the explorer's own notices as the report's JSON object; ``detail``, the expert's
    version of ``message``, only when there is one."""
    notice: dict[str, Any] = {"kind": which.kind, "level": which.level.value, "message": message, "line": line}
    if detail is not None:
        notice["detail"] = detail
    return notice


#: what a preparing pass's record means for a student, in plain words (the record itself, with
#: its views and temporaries, is the notice's detail)
REWRITE_MEANING: Mapping[RewriteKind, str] = {
    RewriteKind.WRITE_REMOVED: "an instruction was removed before partitioning: everything it writes is "
                               "overwritten before anything reads it",
    RewriteKind.WRITE_RESTRICTED: "an instruction was narrowed before partitioning: it now writes only the "
                                  "part that is read before being overwritten",
    RewriteKind.REROLLED: "the loop was rerolled: its repeated iterations are partitioned once, as one group",
    RewriteKind.RUN_REROLLED: "repeated iterations of a loop were rerolled into one group, partitioned once",
    RewriteKind.MORE_RUNS_REROLLED: "more repeated iterations were rerolled than are listed",
    RewriteKind.RUNS_NOT_REROLLED: "part of the loop stays unrolled: its iterations are partitioned one after "
                                   "another (the instructions of each still fuse)",
    RewriteKind.FREED_EARLY: "an array is freed right after its last use (its free moved from a later batch)",
    RewriteKind.BUDGET_CUT: "the time budget stopped a preparing pass: the rest is partitioned as captured "
                            "(rerun with a larger --budget)",
}


def rewrite_notice(which: ReportNotice, record: Rewrite, prefix: str = "") -> dict[str, Any]:
    """The notice of one preparing pass's ``record``: its meaning in plain words as the message,
    the record's own line (``prefix`` first) as the detail.

    >>> from fusionlab.passes.rewrites import RewritePass
    >>> r = Rewrite(RewriteKind.RUNS_NOT_REROLLED, 0, None, "310 runs not rerolled: t6 of iteration 1",
    ...             RewritePass.REROLL)
    >>> n = rewrite_notice(ReportNotice.REROLL, r)
    >>> n["message"].split(":")[0], n["detail"]
    ('part of the loop stays unrolled', '310 runs not rerolled: t6 of iteration 1')
    """
    detail = f"{prefix}{record.describe(numbered=False)}"
    return report_notice(which, REWRITE_MEANING[record.kind], detail=detail)


def level_of(notice: Mapping[str, Any]) -> Level:
    """A report notice's :class:`Level`. A notice saved before levels existed is a warning
    (how every notice was shown then)."""
    try:
        return Level(notice.get("level", Level.WARNING.value))
    except ValueError:
        return Level.WARNING


def by_level(notices: Iterable[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """``notices`` errors first, then warnings, then information; in order within a level."""
    return sorted(notices, key=lambda n: level_of(n).rank)
