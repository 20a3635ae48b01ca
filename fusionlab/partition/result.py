"""What every partition algorithm returns, and the search trace of ``optimal``."""

from __future__ import annotations

import enum
import json
from dataclasses import dataclass, field
from typing import Any

from fusionlab.ir.bytecode import Program
from fusionlab.costs import Partition
from fusionlab.ir.text import format_instruction

__all__ = ["PartitionResult", "SearchTrace", "TraceNode", "NodeOutcome", "WeightEdge"]


class NodeOutcome(enum.Enum):
    """What the branch-and-bound search did at a node."""

    PRUNED = "pruned: its cost bound is no better than the best so far"
    NEW_BEST = "legal and cheaper than the best so far: new best"
    BRANCHED = "illegal: split further"
    INFEASIBLE = "illegal, and the merges already fixed cannot be undone"
    UNEXPLORED = "left when the budget ran out"


@dataclass(frozen=True)
class WeightEdge:
    """A candidate merge between two blocks of the search's starting partition."""

    a: tuple[int, ...]
    b: tuple[int, ...]
    saving: float


@dataclass(frozen=True)
class TraceNode:
    """One node of the search tree.

    ``cut`` lists the indices (into :attr:`SearchTrace.edges`) of the weight edges this node
    does not merge; every other edge is merged. ``kept`` are the edges decided to stay
    merged below this node. ``cost`` is the cost of the partition the merges make: a lower
    bound for the whole subtree (Def. 6).
    """

    id: int
    parent: int | None
    depth: int
    cut: tuple[int, ...]
    kept: tuple[int, ...]
    cost: float
    legal: bool
    outcome: NodeOutcome
    violation: str = ""


@dataclass(frozen=True)
class SearchTrace:
    """The steps of a branch-and-bound search, as data for the views to draw (Fig. 10)."""

    start_blocks: tuple[tuple[int, ...], ...]
    edges: tuple[WeightEdge, ...]
    nodes: tuple[TraceNode, ...]
    seed_costs: tuple[tuple[str, float], ...]
    explored: int
    recorded: int
    stopped: str = ""

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dictionary (instruction numbers 1-based)."""
        return {
            "start_blocks": [[i + 1 for i in b] for b in self.start_blocks],
            "edges": [{"a": [i + 1 for i in e.a], "b": [i + 1 for i in e.b], "saving": e.saving} for e in self.edges],
            "nodes": [
                {
                    "id": n.id, "parent": n.parent, "depth": n.depth, "cut": list(n.cut),
                    "kept": list(n.kept), "cost": n.cost, "legal": n.legal,
                    "outcome": n.outcome.name.lower(), "violation": n.violation,
                }
                for n in self.nodes
            ],
            "seed_costs": dict(self.seed_costs),
            "explored": self.explored,
            "recorded": self.recorded,
            "stopped": self.stopped,
        }


@dataclass(frozen=True)
class PartitionResult:
    """A partition found by an algorithm, with its cost and how it was found.

    ``blocks`` hold 0-based instruction indices; :meth:`numbered` gives the 1-based numbers
    that listings, the command line and JSON use.

    ``bound`` is a proven lower bound on the cost of every legal partition, when an exact
    search stopped before proving its answer optimal (``None`` when unknown or not needed).
    ``budget_cut`` names the phase a time budget (or a search's time limit) cut, empty when
    the algorithm ran to completion: such a result depends on the clock, so the merge cache
    never keeps it.
    """

    algorithm: str
    cost_model: str
    blocks: tuple[tuple[int, ...], ...]
    cost: float
    legal: bool
    proven_optimal: bool
    seconds: float
    program: Program = field(repr=False, compare=False)
    cost_elements: float | None = None
    trace: SearchTrace | None = field(default=None, repr=False, compare=False)
    notes: tuple[str, ...] = ()
    cache_hit: bool = False
    bound: float | None = None
    budget_cut: str = ""

    @property
    def partition(self) -> Partition:
        """The blocks as a :class:`~fusionlab.costs.Partition`."""
        return Partition(self.program, self.blocks)

    @property
    def kernels(self) -> int:
        """Number of blocks."""
        return len(self.blocks)

    def numbered(self) -> list[list[int]]:
        """Blocks with 1-based instruction numbers."""
        return [[i + 1 for i in b] for b in self.blocks]

    def block_of(self) -> list[int]:
        """For each instruction, the index of its block."""
        out = [0] * len(self.program)
        for k, b in enumerate(self.blocks):
            for i in b:
                out[i] = k
        return out

    def to_dict(self) -> dict[str, Any]:
        """The fields the command line prints with ``--format json``."""
        d: dict[str, Any] = {
            "algorithm": self.algorithm,
            "cost_model": self.cost_model,
            "cost": _num(self.cost),
            "cost_elements": _num(self.cost_elements) if self.cost_elements is not None else None,
            "blocks": self.numbered(),
            "legal": self.legal,
            "proven_optimal": self.proven_optimal,
            "seconds": round(self.seconds, 6),
        }
        if self.bound is not None:
            d["bound"] = _num(self.bound)
        if self.notes:
            d["notes"] = list(self.notes)
        if self.cache_hit:
            d["cache_hit"] = True
        return d

    def to_json(self, trace: bool = False) -> str:
        """JSON text of :meth:`to_dict` (with the search trace when ``trace``)."""
        d = self.to_dict()
        if trace and self.trace is not None:
            d["trace"] = self.trace.to_dict()
        return json.dumps(d, indent=2)

    def format_text(self) -> str:
        """The listing with each instruction's block, then the cost."""
        block = self.block_of()
        width = len(str(len(self.program)))
        lines = []
        for i, ins in enumerate(self.program):
            lines.append(f"{i + 1:>{width}}  [{block[i] + 1}]  {format_instruction(ins)}")
        cost = f"{_num(self.cost)}"
        if self.cost_elements is not None:
            cost += f" bytes ({_num(self.cost_elements)} elements)"
        elif self.cost_model != "bohrium":   # what the count counts, and its direction
            from fusionlab.costs import cost_label

            cost += f" {cost_label(self.cost_model)}"
        status = "legal" if self.legal else "ILLEGAL"
        lines.append(
            f"{self.algorithm} / {self.cost_model}: {self.kernels} blocks, cost {cost}, {status}"
            + (", proven optimal" if self.proven_optimal else "")
            + (f", lower bound {_num(self.bound)}" if self.bound is not None and not self.proven_optimal else "")
            + f", {self.seconds * 1e3:.1f} ms"
        )
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines)


def _num(x: float) -> float | int:
    return int(x) if float(x).is_integer() else x
