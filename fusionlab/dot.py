"""Graphviz DOT text for a partitioned WSP graph (data only; rendering is the viewer's job).

Instructions are nodes, blocks are clusters, dependencies solid arrows, fuse-preventing
edges from overlapping views or reductions dashed red with their reason. (Pairs that are
forbidden only by shape are not drawn: the node labels show each shape.) Weight edges
(Def. 15: blocks whose merge is legal and saves) are dotted green between clusters,
labelled with the saving — the heaviest ``max_weight_edges`` of them.

>>> from fusionlab.examples import fig3
>>> from fusionlab.partition import partition
>>> dot = get_dot(partition(fig3(), "greedy"))
>>> dot.startswith("digraph"), "cluster_0" in dot, "style=dashed" in dot
(True, True, True)
>>> weight_edges(partition(fig3(), "singleton"))[0]   # COPY A + ADD A, A, D[:-1]: 8 elements
(0, 4, 64.0)
"""

from __future__ import annotations

import graphviz

from typing import Any

from .costs import Evaluator, get_cost_model
from .partition.result import PartitionResult
from .text import format_instruction
from .wsp import PartitionState, WSPGraph

__all__ = ["get_dot", "weight_edges"]

# Above this many blocks the weight edges are not computed (quadratic pairs, each a path search).
MAX_BLOCKS_FOR_WEIGHTS = 80

_PALETTE = ["#dbeafe", "#dcfce7", "#fef9c3", "#fde2e2", "#ede9fe", "#cffafe", "#ffedd5", "#e5e7eb"]


def weight_edges(result: PartitionResult, graph: WSPGraph | None = None, model: Any = None
                 ) -> list[tuple[int, int, float]]:
    """``(block a, block b, saving)`` for every pair of ``result``'s blocks whose merge is
    legal (Lemma 1) and saves under ``model`` (default: the result's), heaviest first.
    Empty above :data:`MAX_BLOCKS_FOR_WEIGHTS` blocks."""
    graph = graph or WSPGraph(result.program)
    blocks = result.blocks
    if len(blocks) > MAX_BLOCKS_FOR_WEIGHTS:
        return []
    ev = Evaluator(get_cost_model(model if model is not None else result.cost_model), graph)
    state = PartitionState(graph, blocks)
    ids = [state.block_of[b[0]] for b in blocks]
    masks = [sum(1 << i for i in b) for b in blocks]
    out = []
    for a in range(len(blocks)):
        for b in range(a + 1, len(blocks)):
            others = [] if ev.additive else [m for k, m in enumerate(masks) if k not in (a, b)]
            s = ev.saving(masks[a], masks[b], others)
            if s > 1e-9 and state.can_merge(ids[a], ids[b]):
                out.append((a, b, float(s)))
    out.sort(key=lambda e: (-e[2], e[0], e[1]))
    return out


def get_dot(result: PartitionResult, graph: WSPGraph | None = None, labels: list[str] | None = None,
            model: Any = None, max_weight_edges: int = 30) -> str:
    """The DOT source of ``result``'s partition of its program (``labels``: each
    instruction's text, when the caller draws many partitions of one program; ``model``:
    the cost model object when it is not a built-in named by the result)."""
    graph = graph or WSPGraph(result.program)
    if labels is None:
        labels = [format_instruction(ins) for ins in result.program]
    g = graphviz.Digraph("wsp", graph_attr={"rankdir": "TB", "fontname": "Helvetica", "compound": "true"},
                         node_attr={"shape": "box", "style": "rounded,filled", "fontname": "Courier"})
    for k, block in enumerate(result.blocks):
        with g.subgraph(name=f"cluster_{k}") as c:
            c.attr(label=f"block {k + 1}", style="filled", fillcolor=_PALETTE[k % len(_PALETTE)], color="#94a3b8")
            for i in block:
                ins = result.program[i]
                shape = "" if ins.domain is None else f"  {ins.domain}"
                c.node(f"i{i}", f"{i + 1}: {labels[i]}{shape}", fillcolor="white")
    for (u, v), dep in sorted(graph.dependencies.items()):
        g.edge(f"i{u}", f"i{v}", tooltip=f"{dep.kind.value} on {dep.base}")
    for u, v, reason, detail in graph.drawn_conflicts():
        g.edge(f"i{u}", f"i{v}", style="dashed", color="#dc2626", dir="none", constraint="false",
               label=reason.name.lower(), tooltip=f"{reason.value}: {detail}", fontcolor="#dc2626")
    for a, b, saving in weight_edges(result, graph, model)[:max_weight_edges]:
        g.edge(f"i{result.blocks[a][0]}", f"i{result.blocks[b][0]}", ltail=f"cluster_{a}", lhead=f"cluster_{b}",
               style="dotted", color="#16a34a", fontcolor="#16a34a", dir="none", constraint="false",
               label=f"{saving:g}", tooltip=f"weight edge: merging blocks {a + 1} and {b + 1} saves {saving:g}")
    return g.source
