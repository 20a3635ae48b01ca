"""Graphviz DOT text of a partitioned WSP graph, built from the report's data alone.

The kernel's static fallback view lays this out (``fusionlab.explore.viz.svg.render_svg``) and the
JupyterLab extension draws the same structure from the same report, with the report's one
palette. Two levels:

- instruction level: instructions are nodes, blocks are clusters, dependencies solid,
  fuse-preventing edges dashed red with their reason, the heaviest weight edges (Def. 15:
  blocks whose merge is legal and saves) dotted green between clusters with the saving;
- block level (automatic when the instruction level is too dense to read or lay out): one
  node per block (its size and first instructions), the edges between two blocks merged
  into one per kind with their count, and the weight edges.

>>> from fusionlab.ir.examples import fig3
>>> from fusionlab.explore.report import get_report, find_entry
>>> r = get_report(fig3(), algorithms=["greedy"], cost_models=["bohrium"])
>>> dot = get_dot(r, find_entry(r, "greedy", "bohrium"))
>>> dot.startswith("digraph"), "cluster_0" in dot, "style=dashed" in dot
(True, True, True)
>>> block = get_dot(r, find_entry(r, "greedy", "bohrium"), level="block")
>>> block.count("[label=") >= 4, "cluster_" in block
(True, False)
>>> graph_level(r, find_entry(r, "greedy", "bohrium"))
'instruction'
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Mapping

import graphviz

from fusionlab.explore.palette import colour_of

__all__ = ["get_dot", "graph_level", "block_graph", "partition_dot", "INSTRUCTION_NODES", "INSTRUCTION_EDGES",
           "BLOCK_NODES", "BLOCK_FORBIDDEN"]

# The instruction level is drawn up to this many instructions and edges: beyond, labels
# are unreadable and a layout can take minutes (the block level is drawn instead).
INSTRUCTION_NODES = 120
INSTRUCTION_EDGES = 400
# The block level up to this many blocks; beyond, views summarise the graph in words.
BLOCK_NODES = 150
# Block pairs with fuse-preventing edges drawn at block level; beyond, only counted.
BLOCK_FORBIDDEN = 60


def graph_level(report: Mapping[str, Any], entry: Mapping[str, Any]) -> str:
    """``"instruction"``, ``"block"`` or ``"summary"``: the level a view should draw."""
    n = len(report["program"]["instructions"])
    edges = report["graph"].get("edges_total", len(report["graph"]["dependencies"])
                                + len(report["graph"]["forbidden"]))
    if n <= INSTRUCTION_NODES and edges <= INSTRUCTION_EDGES:
        return "instruction"
    if 0 < len(entry["blocks"]) <= BLOCK_NODES:
        return "block"
    return "summary"


def _block_of(entry: Mapping[str, Any]) -> dict[int, int]:
    return {n: k for k, b in enumerate(entry["blocks"], 1) for n in b}


def block_graph(report: Mapping[str, Any], entry: Mapping[str, Any], reduce: bool = True) -> dict[str, Any]:
    """The block-level graph of ``entry``: blocks with their size, and between two blocks one
    edge per kind (``dependency``, ``forbidden``) with the number of edges it stands for.

    With ``reduce``, a dependency implied by a longer path between blocks is left out (the
    transitive reduction; ``implied`` counts them): a block DAG of tens of nodes may have a
    thousand edges, which no layout finishes and no reader follows.

    >>> from fusionlab.ir.examples import fig3
    >>> from fusionlab.explore.report import get_report, find_entry
    >>> r = get_report(fig3(), algorithms=["greedy"], cost_models=["bohrium"])
    >>> g = block_graph(r, find_entry(r, "greedy", "bohrium"), reduce=False)
    >>> [b["size"] for b in g["blocks"]], sum(e["count"] for e in g["edges"] if e["kind"] == "dependency") > 0
    ([9, 1, 1, 6], True)
    """
    block_of = _block_of(entry)
    counts: Counter[tuple[int, int, str]] = Counter()
    for d in report["graph"]["dependencies"]:
        a, b = block_of.get(d["source"]), block_of.get(d["target"])
        if a is not None and b is not None and a != b:
            counts[(a, b, "dependency")] += 1
    for f in report["graph"]["forbidden"]:
        a, b = block_of.get(f["a"]), block_of.get(f["b"])
        if a is not None and b is not None and a != b:
            counts[(min(a, b), max(a, b), "forbidden")] += 1
    blocks = [{"block": k, "size": len(b), "instructions": list(b)} for k, b in enumerate(entry["blocks"], 1)]
    implied: set[tuple[int, int]] = set()
    if reduce:
        implied = _implied({(a, b) for a, b, kind in counts if kind == "dependency"}, len(blocks))
    edges = [{"a": a, "b": b, "kind": kind, "count": c} for (a, b, kind), c in sorted(counts.items())
             if kind != "dependency" or (a, b) not in implied]
    return {"blocks": blocks, "edges": edges, "implied": len(implied)}


def _implied(arcs: set[tuple[int, int]], n: int) -> set[tuple[int, int]]:
    """The arcs of a DAG on nodes 1..n that a longer path also connects (none if cyclic)."""
    children: dict[int, list[int]] = {}
    indeg = dict.fromkeys(range(1, n + 1), 0)
    for a, b in arcs:
        children.setdefault(a, []).append(b)
        indeg[b] += 1
    order, ready = [], [v for v, d in indeg.items() if d == 0]
    while ready:
        v = ready.pop()
        order.append(v)
        for c in children.get(v, []):
            indeg[c] -= 1
            if indeg[c] == 0:
                ready.append(c)
    if len(order) < n:  # a cycle (an illegal hand-made partition): draw every arc
        return set()
    below: dict[int, int] = {}  # node -> bit set of the nodes reachable from it
    for v in reversed(order):
        reach = 0
        for c in children.get(v, []):
            reach |= below[c] | (1 << c)
        below[v] = reach
    out = set()
    for a, b in arcs:
        if any(c != b and (below[c] >> b) & 1 for c in children.get(a, [])):
            out.add((a, b))
    return out


def _label(ins: Mapping[str, Any]) -> str:
    shape = "" if ins["domain"] is None else f"  {tuple(ins['domain'])}"
    return f"{ins['n']}: {ins['text']}{shape}"


def _colour(report: Mapping[str, Any], k: int) -> str:
    return colour_of(report, k)


def get_dot(report: Mapping[str, Any] | Any, entry: Mapping[str, Any] | None = None, *, level: str = "auto",
            max_weight_edges: int = 30) -> str:
    """DOT source of ``entry`` (a partition of ``report``; the selected one by default) at
    ``level`` (``"instruction"``, ``"block"``, or ``"auto"``: :func:`graph_level`, block
    level for anything too dense)."""
    if not isinstance(report, Mapping):  # a PartitionResult (the command line's --format dot)
        return partition_dot(report, level)
    if entry is None:
        sel = report["selected"]
        entry = next(p for p in report["partitions"]
                     if (p["algorithm"], p["cost_model"]) == (sel["algorithm"], sel["cost_model"]))
    if level == "auto":
        level = "instruction" if graph_level(report, entry) == "instruction" else "block"
    if level == "instruction":
        return _instruction_dot(report, entry, max_weight_edges)
    if level == "block":
        return _block_dot(report, entry, max_weight_edges)
    raise ValueError(f"unknown level {level!r}; choose instruction, block or auto")


def _digraph() -> graphviz.Digraph:
    return graphviz.Digraph("wsp", graph_attr={"rankdir": "TB", "fontname": "Helvetica", "compound": "true"},
                            node_attr={"shape": "box", "style": "rounded,filled", "fontname": "Courier"})


def _instruction_dot(report: Mapping[str, Any], entry: Mapping[str, Any], max_weight_edges: int) -> str:
    g = _digraph()
    edges = report["palette"]["edges"]
    instructions = {ins["n"]: ins for ins in report["program"]["instructions"]}
    for k, block in enumerate(entry["blocks"], 1):
        with g.subgraph(name=f"cluster_{k - 1}") as c:
            c.attr(label=f"block {k}", style="filled", fillcolor=_colour(report, k), color="#94a3b8")
            for n in block:
                c.node(f"i{n}", _label(instructions[n]), fillcolor="white")
    for d in report["graph"]["dependencies"]:
        g.edge(f"i{d['source']}", f"i{d['target']}", color=edges["dependency"],
               tooltip=f"{d['kind'].upper()} on {d['base']}")
    for f in report["graph"]["forbidden"]:
        g.edge(f"i{f['a']}", f"i{f['b']}", style="dashed", color=edges["forbidden"], dir="none",
               constraint="false", xlabel=f["reason"], tooltip=f"{f['explanation']}: {f['detail']}",
               fontcolor=edges["forbidden"])
    for w in entry["weights"][:max_weight_edges]:
        a, b = entry["blocks"][w["a"] - 1], entry["blocks"][w["b"] - 1]
        g.edge(f"i{a[0]}", f"i{b[0]}", ltail=f"cluster_{w['a'] - 1}", lhead=f"cluster_{w['b'] - 1}",
               style="dotted", color=edges["weight"], fontcolor=edges["weight"], dir="none", constraint="false",
               xlabel=f"{w['saving']:g}",
               tooltip=f"weight edge: merging blocks {w['a']} and {w['b']} saves {w['saving']:g}")
    return g.source


def _block_dot(report: Mapping[str, Any], entry: Mapping[str, Any], max_weight_edges: int) -> str:
    g = _digraph()
    edges = report["palette"]["edges"]
    instructions = {ins["n"]: ins for ins in report["program"]["instructions"]}
    bg = block_graph(report, entry)
    for b in bg["blocks"]:
        first = instructions[b["instructions"][0]]["text"] if b["instructions"] else ""
        more = f"\n+ {b['size'] - 1} more" if b["size"] > 1 else ""
        g.node(f"b{b['block']}", f"block {b['block']} ({b['size']} instr.)\n{first}{more}",
               fillcolor=_colour(report, b["block"]))
    forbidden = [e for e in bg["edges"] if e["kind"] == "forbidden"]
    notes = []
    if bg["implied"]:
        notes.append(f"{bg['implied']} dependencies between blocks implied by longer paths are not drawn")
    if len(forbidden) > BLOCK_FORBIDDEN:  # nearly every pair, on a stencil: the listing says which
        notes.append(f"{len(forbidden)} pairs of blocks joined by fuse-preventing edges are not drawn")
    if notes:
        g.attr(label="; ".join(notes), labelloc="b", fontsize="10")
    for e in bg["edges"]:
        if e["kind"] == "forbidden" and len(forbidden) > BLOCK_FORBIDDEN:
            continue
        if e["kind"] == "dependency":
            g.edge(f"b{e['a']}", f"b{e['b']}", color=edges["dependency"], label=f"{e['count']}",
                   tooltip=f"{e['count']} dependencies")
        else:
            g.edge(f"b{e['a']}", f"b{e['b']}", style="dashed", color=edges["forbidden"], dir="none",
                   constraint="false", xlabel=f"{e['count']}", fontcolor=edges["forbidden"],
                   tooltip=f"{e['count']} fuse-preventing edges")
    for w in entry["weights"][:max_weight_edges]:
        g.edge(f"b{w['a']}", f"b{w['b']}", style="dotted", color=edges["weight"], fontcolor=edges["weight"],
               dir="none", constraint="false", xlabel=f"{w['saving']:g}",
               tooltip=f"weight edge: merging blocks {w['a']} and {w['b']} saves {w['saving']:g}")
    return g.source


def partition_dot(result: Any, level: str = "auto") -> str:
    """DOT source of a :class:`~fusionlab.partition.PartitionResult` (the command line's
    ``--format dot``), drawn from the same data a report holds."""
    from fusionlab.explore.report import ReportParts, assemble_report

    parts = ReportParts.of(result.program)
    entry = parts.add(result.algorithm, result.cost_model, result, "done")
    report = assemble_report(parts, algorithms=[result.algorithm], cost_models=[result.cost_model],
                             selected=(result.algorithm, result.cost_model))
    return get_dot(report, entry, level=level)
