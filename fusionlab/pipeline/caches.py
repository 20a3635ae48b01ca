"""What the pipeline keeps between calls: partitions, WSP graphs, kernel plans, block orders.

One :class:`PipelineCaches` lives as long as its front end wants the work kept: a call of
``fusionlab run``, one comparison, or an explorer session between clicks. Entries made for a
batch are keyed by the batch's identity and hold the batch itself, so a new batch with a
reused ``id`` never finds another's entry.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from fusionlab.ir.bytecode import Program
from fusionlab.partition import MergeCache, PartitionResult
from fusionlab.analysis.wsp import WSPGraph

if TYPE_CHECKING:
    from fusionlab.backend.numba.plan import Plan
    from fusionlab.pipeline.preparing import Prepared

__all__ = ["PipelineCaches", "ByBatch"]

V = TypeVar("V")

#: a batch's blocks, as a hashable key
Blocks = tuple[tuple[int, ...], ...]


@dataclass
class ByBatch(Generic[V]):
    """Values kept per batch object (and an optional hashable detail), each with its batch:
    an entry is found only for the very batch it was made for.

    >>> from fusionlab.ir.examples import fig3
    >>> b = fig3()
    >>> kept: ByBatch[int] = ByBatch()
    >>> kept.put(b, 7); kept.get(b), kept.get(fig3())
    (7, None)
    """

    _store: dict[tuple[int, Any], tuple[Any, V]] = field(default_factory=dict, repr=False)

    def get(self, owner: Any, detail: Any = None) -> V | None:
        """The value kept for ``owner`` (and ``detail``), or ``None``."""
        got = self._store.get((id(owner), detail))
        return got[1] if got is not None and got[0] is owner else None

    def put(self, owner: Any, value: V, detail: Any = None) -> None:
        """Keep ``value`` for ``owner`` (and ``detail``)."""
        self._store[(id(owner), detail)] = (owner, value)

    def pop(self, owner: Any, detail: Any = None) -> None:
        """Forget the value kept for ``owner`` (and ``detail``)."""
        self._store.pop((id(owner), detail), None)

    def values(self) -> list[V]:
        """Every value kept, in the order they were kept."""
        return [v for _, v in self._store.values()]

    def __len__(self) -> int:
        return len(self._store)


@dataclass
class PipelineCaches:
    """The pipeline's caches, typed: one object instead of a dictionary of tuples.

    ``merge``: partitions by the batch's signature, algorithm, model and options (alike
    batches of a loop share one); ``graphs``: each batch's WSP graph (building it can take
    seconds); ``greedy_cuts``: a greedy search a budget cut, to go on from at the next call;
    ``plans``: a batch's kernel plan by its blocks and min size; ``orders``: the blocks' order
    of alike batches; ``prepared``: a target's batches after the preparing passes;
    ``shown``: partitions a front end showed, which its timings run as they are.
    """

    merge: MergeCache = field(default_factory=MergeCache)
    graphs: ByBatch[WSPGraph] = field(default_factory=ByBatch)
    greedy_cuts: ByBatch[PartitionResult] = field(default_factory=ByBatch)
    plans: ByBatch["Plan"] = field(default_factory=ByBatch)
    orders: dict[tuple[str, Blocks], list[int]] = field(default_factory=dict)
    prepared: ByBatch["Prepared"] = field(default_factory=ByBatch)
    #: partitions a front end has shown, by batch and (algorithm, cost model name): what its
    #: timing must run, searched no further (the explorer's, cut by its budget or not)
    shown: ByBatch[PartitionResult] = field(default_factory=ByBatch)

    def graph(self, batch: Program) -> WSPGraph | None:
        """The WSP graph kept for ``batch``."""
        return self.graphs.get(batch)
