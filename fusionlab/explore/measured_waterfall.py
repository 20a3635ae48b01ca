"""A fusion waterfall in measured time: the partitions a waterfall passes through, compiled
and timed side by side, so each step's share of the difference is a measurement too.

:func:`~fusionlab.explore.waterfall.waterfall` turns partition ``a`` into ``b`` one legal
step at a time, and its cost changes add up to ``cost(b) - cost(a)``. Here the partitions on
the way (:func:`~fusionlab.explore.waterfall.partitions_along`) are timed as a comparison
times its rows (:func:`fusionlab.pipeline.compare`'s ``variants``): the whole cell each time
(the other batches as the selection partitions them), NumPy eager beside them, every variant
once per round in interleaved rounds after a warm-up that compiles, identical plans timed once
(a split and the merge that undoes it may plan the same kernels). Each step's measured change
is the difference of two partitions' median times; the changes add up to
``median(b) - median(a)`` exactly (the medians telescope), and each has the bootstrap
interval of the two partitions' time ratio over the paired rounds
(:func:`fusionlab.support.intervals.ratio_interval`): a step whose interval holds 1 did not
measurably change the time.

A long waterfall is timed at :data:`MAX_POINTS` partitions at most, evenly spaced along it
(``a`` and ``b`` always among them): each measured change then covers the steps between two
timed partitions, and says which.

Examples
--------
>>> pick_points(3, 12)
[0, 1, 2, 3]
>>> pick_points(40, 5)
[0, 10, 20, 30, 40]
"""

from __future__ import annotations

import math
from typing import Any, Callable, Mapping, Sequence

from fusionlab.explore.waterfall import Step, partitions_along
from fusionlab.support.intervals import ratio_interval

__all__ = ["MAX_POINTS", "pick_points", "measured_waterfall"]

#: partitions timed along one waterfall at most (a and b included): each costs a row of
#: the comparison (its new kernels compiled, then one run per round)
MAX_POINTS = 12


def pick_points(steps: int, most: int = MAX_POINTS) -> list[int]:
    """Which partitions of a waterfall of ``steps`` steps are timed: their indices along it
    (0 is ``a``, ``steps`` is ``b``), all of them when there are at most ``most``, else
    ``most`` evenly spaced with both ends."""
    if most < 2:
        raise ValueError("at least the two ends of a waterfall are timed")
    if steps + 1 <= most:
        return list(range(steps + 1))
    return sorted({round(j * steps / (most - 1)) for j in range(most)})


def measured_waterfall(time_variants: Callable[[list[Mapping[int, Sequence[Sequence[int]]]]], Sequence[Any]],
                       batch: int, a: Sequence[Sequence[int]], steps: Sequence[Step], *,
                       most: int = MAX_POINTS) -> dict[str, Any]:
    """Time the waterfall ``steps`` from ``a`` (0-based blocks of run batch ``batch``).

    ``time_variants(variants)`` times the partitions given (each a mapping of ``batch`` to its
    blocks) with NumPy eager and returns the comparison's records, NumPy's first
    (:func:`fusionlab.pipeline.compare` with ``variants``). Returns the report's section:
    ``points`` (each timed partition: the steps made so far, median and quartiles, or why it
    was not timed), ``changes`` (between consecutive timed points: the steps they cover, the
    change of the median in seconds, the time ratio and its interval), ``numpy_median_seconds``,
    ``total_seconds`` (the last point's median less the first's) and ``rounds``.
    """
    along = partitions_along(a, steps)
    at = pick_points(len(steps), most)
    records = list(time_variants([{batch: along[k]} for k in at]))
    numpy, rows = records[0], records[1:]
    points = []
    for k, r in zip(at, rows):
        timed = not r.not_timed and math.isfinite(r.median_seconds)
        points.append({"after": k, "blocks": len(along[k]),
                       "median_seconds": r.median_seconds if timed else None,
                       "q1_seconds": r.q1_seconds if timed else None, "q3_seconds": r.q3_seconds if timed else None,
                       "samples": len(r.samples) if timed else 0,
                       # the kernels of an earlier point, in the same order: timed once, its times
                       "same_kernels": bool(r.same_kernels_as), "not_timed": r.not_timed,
                       # its values compared with plain NumPy's (why not, when they were not)
                       "not_checked": r.not_checked, "max_abs_error": r.max_abs_error})
    changes = []
    for (i, p), (j, q), rp, rq in zip(enumerate(points), list(enumerate(points))[1:], rows, rows[1:]):
        change: dict[str, Any] = {"from": p["after"], "to": q["after"], "seconds": None, "ratio": None,
                                  "low": None, "high": None}
        if p["median_seconds"] is not None and q["median_seconds"] is not None:
            change["seconds"] = q["median_seconds"] - p["median_seconds"]
            if len(rp.samples) == len(rq.samples) and rp.samples:
                got = ratio_interval(rp.samples, rq.samples)   # > 1: the step made the run faster
                change.update(ratio=got.ratio, low=got.low, high=got.high)
        changes.append(change)
    first, last = points[0]["median_seconds"], points[-1]["median_seconds"]
    return {"points": points, "changes": changes,
            "numpy_median_seconds": numpy.median_seconds if math.isfinite(numpy.median_seconds) else None,
            "total_seconds": None if first is None or last is None else last - first,
            "rounds": len(numpy.samples), "steps": len(steps), "timed_points": len(at)}

