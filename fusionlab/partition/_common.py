"""Set-up shared by the algorithms: the graph, the bound cost model, the starting state."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Iterable

from ..bytecode import Program
from ..costs import (
    AdditiveCostModel,
    Bohrium,
    COST_MODELS,
    Evaluator,
    NonMonotonicCostModel,
    access_info,
    check_monotonic,
    get_cost_model,
)
from ..wsp import PartitionState, WSPGraph, partition_problems
from .result import PartitionResult, SearchTrace

ProgramOrState = Program | WSPGraph | PartitionState


@dataclass
class Context:
    """Everything an algorithm needs: graph, model, evaluator, starting state, clock."""

    graph: WSPGraph
    model: Any
    evaluator: Evaluator
    state: PartitionState
    started: float

    @property
    def program(self) -> Program:
        return self.graph.program


def setup(program_or_state: ProgramOrState, cost_model: Any) -> Context:
    """Bind the model to the program's graph; refuse a model that is not monotone."""
    started = time.perf_counter()
    if isinstance(program_or_state, PartitionState):
        state = program_or_state.copy()
        graph = state.graph
    else:
        graph = program_or_state if isinstance(program_or_state, WSPGraph) else WSPGraph(program_or_state)
        state = PartitionState(graph)
    model = get_cost_model(cost_model)
    if type(model) not in COST_MODELS.values():
        violation = check_monotonic(model, graph.program)
        if violation is not None:
            raise NonMonotonicCostModel(model, violation)
    return Context(graph, model, Evaluator(model, graph), state, started)


def finish(
    ctx: Context,
    algorithm: str,
    blocks: Iterable[Iterable[int]],
    proven_optimal: bool = False,
    trace: SearchTrace | None = None,
    notes: Iterable[str] = (),
) -> PartitionResult:
    """Package blocks into a :class:`PartitionResult` (checking legality independently)."""
    blocks = tuple(sorted(tuple(sorted(b)) for b in blocks))
    legal = not partition_problems(ctx.graph, blocks)
    cost = ctx.evaluator.cost(blocks)
    elements = None
    if isinstance(ctx.model, Bohrium):
        elements = Evaluator(Bohrium(unit="elements"), ctx.graph).cost(blocks)
    return PartitionResult(
        algorithm=algorithm,
        cost_model=getattr(ctx.model, "name", type(ctx.model).__name__),
        blocks=blocks,
        cost=cost,
        legal=legal,
        proven_optimal=proven_optimal,
        seconds=time.perf_counter() - ctx.started,
        program=ctx.program,
        cost_elements=elements,
        trace=trace,
        notes=tuple(notes),
    )


class BaseIndex:
    """Which blocks touch each base: the candidates for a positive saving."""

    def __init__(self, state: PartitionState) -> None:
        acc, _ = access_info(state.graph.program)
        self.state = state
        self.bases_of: dict[int, set[str]] = {}
        self.blocks_of: dict[str, set[int]] = {}
        per_ins = []
        for i, ins in enumerate(state.graph.program):
            per_ins.append({v.base.name for v in ins.reads() + ins.writes()})
        for b in state.members:
            names: set[str] = set()
            for i in state.block(b):
                names |= per_ins[i]
            self.bases_of[b] = names
            for n in names:
                self.blocks_of.setdefault(n, set()).add(b)

    def partners(self, b: int) -> set[int]:
        """Blocks sharing a base with ``b``."""
        out: set[int] = set()
        for n in self.bases_of[b]:
            out |= self.blocks_of[n]
        out.discard(b)
        return out

    def merged(self, b1: int, b2: int, z: int) -> None:
        """Record that ``b1`` and ``b2`` became ``z``."""
        names = self.bases_of.pop(b1) | self.bases_of.pop(b2)
        self.bases_of[z] = names
        for n in names:
            s = self.blocks_of[n]
            s.discard(b1)
            s.discard(b2)
            s.add(z)


def dense(ev: Evaluator) -> bool:
    """Whether a merge of unrelated blocks can save (every pair is a candidate)."""
    return not (ev.pairwise and ev.merge_bonus == 0)


def is_additive(model: Any) -> bool:
    return isinstance(model, AdditiveCostModel)
