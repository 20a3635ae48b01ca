"""Graphviz DOT text for a partitioned WSP graph (data only; rendering is the viewer's job).

Instructions are nodes, blocks are clusters, dependencies solid arrows, fuse-preventing
edges from overlapping views or reductions dashed red with their reason. (Pairs that are
forbidden only by shape are not drawn: the node labels show each shape.)

>>> from fusionlab.examples import fig3
>>> from fusionlab.partition import partition
>>> dot = get_dot(partition(fig3(), "greedy"))
>>> dot.startswith("digraph"), "cluster_0" in dot, "style=dashed" in dot
(True, True, True)
"""

from __future__ import annotations

import graphviz

from .partition.result import PartitionResult
from .text import format_instruction
from .wsp import Conflict, WSPGraph

__all__ = ["get_dot"]

_PALETTE = ["#dbeafe", "#dcfce7", "#fef9c3", "#fde2e2", "#ede9fe", "#cffafe", "#ffedd5", "#e5e7eb"]


def get_dot(result: PartitionResult, graph: WSPGraph | None = None, labels: list[str] | None = None) -> str:
    """The DOT source of ``result``'s partition of its program (``labels``: each
    instruction's text, when the caller draws many partitions of one program)."""
    graph = graph or WSPGraph(result.program)
    if labels is None:
        labels = [format_instruction(ins) for ins in result.program]
    g = graphviz.Digraph("wsp", graph_attr={"rankdir": "TB", "fontname": "Helvetica"},
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
    return g.source
