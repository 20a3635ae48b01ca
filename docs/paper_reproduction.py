"""Write docs/paper-reproduction.md: the paper's Fig. 3 under every algorithm.

Run ``.venv/bin/python docs/paper_reproduction.py``; ``tests/test_docs.py`` checks that the
committed page is what this script writes, so its figures cannot go stale.
"""

from __future__ import annotations

from pathlib import Path

from fusionlab.costs import BlockCostModel, COST_MODELS
from fusionlab.ir.examples import fig3
from fusionlab.partition import partition
from fusionlab.ir.text import format_instruction

PAPER = {"singleton": 94, "linear": 58, "unintrusive": 70, "greedy": 58, "optimal": 38}


class BohriumIgnoringSync(BlockCostModel):
    """Def. 13 with SYNC ignored: a write of a base freed in the block is free even if synced."""

    name = "bohrium_ignoring_sync"
    pairwise = True

    def block_cost(self, info):  # type: ignore[no-untyped-def]
        reads = sum(v.size for v in info.reads if v.base.name not in info.new)
        return reads + sum(v.size for v in info.writes if v.base.name not in info.deleted)


def blocks(r) -> str:  # type: ignore[no-untyped-def]
    return " ".join("{" + ",".join(map(str, b)) + "}" for b in r.numbered())


def render() -> str:
    p = fig3()
    out = ["# The paper's Fig. 3 under each algorithm", "",
           "Written by `docs/paper_reproduction.py` (a test checks it is current). Costs are in",
           "elements accessed under the Bohrium model of `docs/cost-models.md`.", "",
           "The program (Fig. 3b, with the ARRAY lines it needs):", "", "```"]
    out += [f"{i + 1:>2}  {format_instruction(ins)}" for i, ins in enumerate(p)]
    out += ["```", "", "| algorithm | fusionlab | paper | blocks |", "| --- | ---: | ---: | --- |"]
    results = {}
    for name in ("singleton", "linear", "unintrusive", "greedy", "optimal", "ilp"):
        r = results[name] = partition(p, name, "bohrium")
        out.append(f"| {name} | {r.cost_elements} | {PAPER.get(name, '')} | {blocks(r)} |")
    alt = {name: partition(p, name, BohriumIgnoringSync()) for name in ("linear", "greedy", "optimal")}
    out += ["", "## Where the figures agree", "",
            f"- **Singleton** {results['singleton'].cost_elements} and **optimal** "
            f"{results['optimal'].cost_elements}, as the paper (Fig. 4 and Fig. 12). The ILP and the "
            "branch and bound agree, and both prove it optimal.", "",
            "## Where they differ, and why", "",
            f"- **Linear: {results['linear'].cost_elements} against 58.** Linear's blocks are forced by "
            "the program order: {1,2} (A, B, four elements), {3,4} (D, E, five elements), then 5-9 until "
            "10 (`MAX D[1:]`) overlaps `D[:-1]` read by 5 and 6, then 10-17. Under our semantics the last "
            "block writes `D[1:]`, and because the program syncs D that write is a real store (16 "
            "elements for the block). If SYNC were ignored — a write of a base freed in the same block "
            f"costing nothing even when the user asked for it — linear would cost "
            f"{alt['linear'].cost}, the paper's 58; but the optimum would then be "
            f"{alt['optimal'].cost}, not the paper's 38. No single reading of Def. 13 gives both of the "
            "paper's figures; we keep the one in which the user's synced data is paid for, which the "
            "issue's independent check (94 and 38) also uses.",
            f"- **Unintrusive: {results['unintrusive'].cost_elements} against 70.** Ours merges "
            "{1,5} and {2,7} (the paper's \"a with e\": `COPY A, 0` has one legal beneficial partner, "
            "`ADD A, A, D[:-1]`) and {11,14} (`DEL E` joins `MIN E[1:]`). We merge only when the move "
            "provably keeps an optimum (docs/algorithms.md, unintrusive). From our result the legal merges that "
            "still save are {6}+{1,5} and {8}+{2,7} (8 elements each), {9}+{10} and {10}+{11,14} "
            "(4 each). The paper's FINDCANDIDATE read literally (a vertex with fewer than two legal "
            "weight edges) would take the first two, giving 66 then 58, not 70; our rule refuses them "
            "because `COPY A, D[:-1]` (6) and `COPY B, E[:-1]` (8) depend on blocks on both sides, so "
            "moving them could close a cycle in some other partition. Fig. 9 itself is not in the "
            "extracted text, so the paper's exact merges cannot be checked.",
            f"- **Greedy: {results['greedy'].cost_elements} against 58.** Our greedy merges the heaviest "
            "legal edge first (savings 8: {1}+{5}, {1,5}+{6}, {2}+{7}, {2,7}+{8}; then 4: T into the A "
            "block, the A and B blocks together, the DELs of A and B, {10}+{11}, and `DEL E`; then the "
            "zero-weight merges of `DEL T`, `SYNC D` and `DEL D`) and reaches the optimum; ties go to the "
            "lower instruction numbers. With ties broken at random "
            "instead (300 runs, same semantics) greedy ends at 38 or 46, never 58, so the paper's 58 "
            "comes from a weighting or edge set the text does not let us reconstruct (its Fig. 8 is "
            "not in the extracted text).",
            "", "## Every model", "",
            "| algorithm | " + " | ".join(COST_MODELS) + " |",
            "| --- |" + " ---: |" * len(COST_MODELS)]
    for name in ("singleton", "linear", "unintrusive", "greedy", "optimal", "ilp"):
        budget = {"max_nodes": 20_000, "time_limit": 600.0} if name == "optimal" else {}
        row = [partition(p, name, m, **budget) for m in COST_MODELS]
        cells = [f"{r.cost:g}" + ("" if r.proven_optimal or name != "optimal" else " (not proven)") for r in row]
        out.append(f"| {name} | " + " | ".join(cells) + " |")
    out += ["", "Costs: Bohrium in bytes (8 per float64 element), Max Contract in arrays, Max Locality in",
            "access pairs, Robinson in its combined score. Under Max Contract no single merge saves until A's",
            "or B's creator and DEL meet, so greedy gets there only through zero-weight merges (Def. 15's",
            "complete weight graph; `greedy(..., zero_edges=False)` stops at the singletons' 5). Optimal runs with a budget of 20,000",
            "search nodes here; under Robinson, whose merge bonus makes every pair of blocks a weight edge,",
            "that is not enough to prove the optimum the ILP proves.", ""]
    return "\n".join(out)


if __name__ == "__main__":
    Path(__file__).with_name("paper-reproduction.md").write_text(render())
