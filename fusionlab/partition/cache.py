"""The merge cache (Sec. V-F): partitions remembered by program signature.

Loops in scientific code replay the same instruction list each iteration; the cache keys
a result by the program's canonical signature (arrays renamed in order of first
appearance), the algorithm, the cost model and the options, so a repeated batch costs a
dictionary lookup. Pass a cache explicitly; there is no global one.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Hashable

from fusionlab.ir.bytecode import Program
from fusionlab.partition.result import PartitionResult


@dataclass
class MergeCache:
    """A dictionary of partition results with hit and miss counts.

    Examples
    --------
    >>> from fusionlab.ir.examples import fig3
    >>> from fusionlab.partition import partition
    >>> cache = MergeCache()
    >>> _ = partition(fig3(), "greedy", cache=cache)
    >>> partition(fig3(), "greedy", cache=cache).cache_hit, cache.hits, cache.misses
    (True, 1, 1)
    """

    max_entries: int = 10_000
    hits: int = 0
    misses: int = 0
    _store: dict[Hashable, PartitionResult] = field(default_factory=dict, repr=False)

    @staticmethod
    def key(program: Program, algorithm: str, model_key: Hashable, options: dict[str, Any]) -> Hashable:
        """The cache key of a request."""
        return (program.signature(), algorithm, model_key, tuple(sorted(options.items())))

    def get(self, key: Hashable, program: Program) -> PartitionResult | None:
        """The cached result for ``key``, re-attached to ``program``; counts a hit or miss."""
        got = self._store.get(key)
        if got is None:
            self.misses += 1
            return None
        self.hits += 1
        return replace(got, program=program, cache_hit=True, seconds=0.0)

    def put(self, key: Hashable, result: PartitionResult) -> None:
        """Remember ``result`` (the oldest entry goes when full).

        A result a time budget cut (``result.budget_cut``) is not kept: it depends on the
        clock, and a later request may have the time to finish."""
        if result.budget_cut:
            return
        if len(self._store) >= self.max_entries:
            self._store.pop(next(iter(self._store)))
        self._store[key] = result

    def __len__(self) -> int:
        return len(self._store)
