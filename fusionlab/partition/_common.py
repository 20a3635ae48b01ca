"""Set-up shared by the algorithms: the graph, the bound cost model, the starting state."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Iterable

from fusionlab.support.budget import UNLIMITED, Budget, BudgetExceeded
from fusionlab.ir.bytecode import Program
from fusionlab.costs import (
    AdditiveCostModel, Bohrium, COST_MODELS, Evaluator, NonMonotonicCostModel, access_info,
    check_monotonic, graph_accesses, get_cost_model,
)
from fusionlab.analysis.wsp import PartitionState, WSPGraph, bit_indices, partition_problems
from fusionlab.partition.result import PartitionResult, SearchTrace

ProgramOrState = Program | WSPGraph | PartitionState


@dataclass
class Context:
    """Everything an algorithm needs: graph, model, evaluator, starting state, clock, budget."""

    graph: WSPGraph
    model: Any
    evaluator: Evaluator
    state: PartitionState
    started: float
    budget: Budget = field(default_factory=lambda: UNLIMITED)

    @property
    def program(self) -> Program:
        return self.graph.program


def setup(program_or_state: ProgramOrState, cost_model: Any, budget: Budget | None = None) -> Context:
    """Bind the model to the program's graph; refuse a model that is not monotone.

    Building the graph of a program checks ``budget`` too; when it runs out there is no
    partition to return yet, so :class:`~fusionlab.support.budget.BudgetExceeded` reaches the caller.
    """
    started = time.perf_counter()
    budget = UNLIMITED if budget is None else budget
    if isinstance(program_or_state, PartitionState):
        state = program_or_state.copy()
        graph = state.graph
    else:
        if isinstance(program_or_state, WSPGraph):
            graph = program_or_state
        else:
            if budget.on_phase is not None:
                budget.on_phase("WSP graph")
            graph = WSPGraph(program_or_state, budget=budget)
        state = PartitionState(graph)
    model = get_cost_model(cost_model)
    # the built-in models are monotone by proof (docs/cost-models.md); a user's is checked
    if type(model) not in COST_MODELS.values() and not getattr(model, "proven_monotone", False):
        violation = check_monotonic(model, graph.program)
        if violation is not None:
            raise NonMonotonicCostModel(model, violation)
    return Context(graph, model, Evaluator(model, graph), state, started, budget)


def announce(budget: Budget, phase: str) -> None:
    """Tell the budget's listener (``on_phase``: a progress line) that ``phase`` starts, and
    check the deadline."""
    with budget.phase(phase):
        pass


def cut_note(exc: BudgetExceeded, detail: str) -> str:
    """The note of a result a time budget cut: the phase, and what the result is."""
    limit = f" of {exc.seconds:g} s" if exc.seconds is not None and exc.seconds != float("inf") else ""
    return f"not complete: the time budget{limit} ran out in phase '{exc.phase}'; {detail}"


def finish(
    ctx: Context,
    algorithm: str,
    blocks: Iterable[Iterable[int]],
    proven_optimal: bool = False,
    trace: SearchTrace | None = None,
    notes: Iterable[str] = (),
    bound: float | None = None,
    budget_cut: str = "",
) -> PartitionResult:
    """Package blocks into a :class:`PartitionResult` (checking legality independently).

    This runs whatever the budget says: it is how a cut algorithm hands back its best so
    far, and it is near-linear in the program (legality by masks, costs by summaries)."""
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
        bound=bound,
        budget_cut=budget_cut,
    )


class BaseIndex:
    """Which blocks touch each base: the candidates for a positive saving."""

    def __init__(self, state: PartitionState) -> None:
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


class SavingIndex:
    """Which blocks can save when merged, for models with ``sparse_savings``: blocks that
    access an identical view, or where one creates or frees a base the other accesses.

    A base read element by element (``a[0]``, ``a[1]``, ...) by thousands of blocks makes
    them all partners in :class:`BaseIndex`; here each is a partner only of the blocks
    reading the same element and of the blocks that create or free the base.

    The index keeps the block ids it started with and follows merges by union-find, so a
    merge costs the smaller block's views (:meth:`merged`), not a relabelling.
    """

    def __init__(self, state: PartitionState) -> None:
        acc, _ = graph_accesses(state.graph)
        program = state.graph.program
        self.state = state
        self.parent: dict[int, int] = {}
        self.views_of: dict[int, set[Any]] = {}
        self.bases_of: dict[int, set[str]] = {}
        self.special_of: dict[int, set[str]] = {}
        self.view_users: dict[Any, list[int]] = {}
        self.base_users: dict[str, list[int]] = {}
        self.special_users: dict[str, list[int]] = {}
        for b, mask in state.members.items():
            views: set[Any] = set()
            special: set[str] = set()
            for i in bit_indices(mask):
                ins = program[i]
                views.update(ins.reads())
                views.update(ins.writes())
                special |= acc[i].new | acc[i].deleted
            bases = {v.base.name for v in views}
            self.parent[b] = b
            self.views_of[b], self.bases_of[b], self.special_of[b] = views, bases, special
            for v in views:
                self.view_users.setdefault(v, []).append(b)
            for n in bases:
                self.base_users.setdefault(n, []).append(b)
            for n in special:
                self.special_users.setdefault(n, []).append(b)

    def find(self, b: int) -> int:
        """The block that block ``b`` (of the start, or since) is part of now."""
        root = b
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[b] != root:
            self.parent[b], b = root, self.parent[b]
        return root

    def partners(self, b: int) -> set[int]:
        """Blocks that may save with ``b``, and those joined to it by a dependency."""
        near: set[int] = set()
        for v in self.views_of[b]:
            near.update(self.view_users[v])
        for n in self.special_of[b]:
            near.update(self.base_users[n])
        for n in self.bases_of[b]:
            near.update(self.special_users.get(n, ()))
        out = {self.find(y) for y in near}
        out |= self.state.neighbours(b)
        out.discard(b)
        return out

    def merged(self, b1: int, b2: int, z: int) -> None:
        """Record that ``b1`` and ``b2`` became ``z`` (``z`` may be one of them)."""
        for b in (b1, b2):
            self.parent[b] = z
        self.parent.setdefault(z, z)
        self.parent[z] = z
        for name in ("views_of", "bases_of", "special_of"):
            table = getattr(self, name)
            s1, s2 = table.pop(b1), table.pop(b2)
            big, small = (s1, s2) if len(s1) >= len(s2) else (s2, s1)
            big |= small
            table[z] = big


def sparse(ev: Evaluator) -> bool:
    """Whether the model's savings are sparse (see :class:`SavingIndex`)."""
    return ev.additive and bool(getattr(ev.model, "sparse_savings", False))


def dense(ev: Evaluator) -> bool:
    """Whether a merge of unrelated blocks can save (every pair is a candidate)."""
    return not (ev.pairwise and ev.merge_bonus == 0)


def is_additive(model: Any) -> bool:
    return isinstance(model, AdditiveCostModel)


def coarsest_bound(ctx: Context) -> float:
    """The cost of every instruction in one block: by monotonicity (Def. 6) no partition,
    legal or not, costs less (each is merged into it by merges that never add cost)."""
    n = len(ctx.program)
    return ctx.evaluator.cost_masks([(1 << n) - 1]) if n else 0.0
