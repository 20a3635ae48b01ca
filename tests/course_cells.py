"""The exercises of a course notebook, found by their cells' tags (fusionlab/course/checks.py),
and the cells that probe them: each exercise's wrong answer then its check, its solution then
its check, appended to the notebook's run (tests/test_notebooks.py) and read back here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import nbformat

PROBE = "fusionlab_course_probe"


@dataclass
class Exercise:
    id: str
    answer: Any
    check: Any
    solution: Any

    @property
    def wrong(self) -> str:
        return str(self.answer.metadata.get("fusionlab", {}).get("wrong", ""))


def exercises(nb: Any) -> list[Exercise]:
    """The notebook's exercises in order; each must have its three cells (else a KeyError
    names what is missing)."""
    found: dict[str, dict[str, Any]] = {}
    for cell in nb.cells:
        tags = cell.metadata.get("tags", [])
        ids = [t.split(":", 1)[1] for t in tags if t.startswith("exercise:")]
        for role in ("answer", "check", "solution"):
            if role in tags:
                for i in ids:
                    found.setdefault(i, {})[role] = cell
    out = []
    for i, roles in found.items():
        missing = {"answer", "check", "solution"} - set(roles)
        if missing:
            raise KeyError(f"exercise {i} has no {', '.join(sorted(missing))} cell")
        out.append(Exercise(i, roles["answer"], roles["check"], roles["solution"]))
    return out


def _cell(source: str, probe: str) -> Any:
    # the mark is in the metadata: a cell magic (%%fuse) must stay the source's first line
    cell = nbformat.v4.new_code_cell(source)
    cell.metadata[PROBE] = probe
    return cell


def probe_cells(nb: Any) -> list[Any]:
    """For each exercise: its wrong answer, its check, its solution, its check."""
    cells = []
    for ex in exercises(nb):
        for what, source in (("wrong", ex.wrong), ("solution", ex.solution.source)):
            cells.append(_cell(source, f"{ex.id} {what}"))
            cells.append(_cell(ex.check.source, f"{ex.id} {what} check"))
    return cells


def _printed(cell: Any) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")


def verdicts(nb: Any) -> dict[tuple[str, str], str]:
    """What each probe's check printed, by (exercise, "wrong" or "solution"), and what each
    exercise's own check printed in the notebook's run, by (exercise, "as committed")."""
    out = {}
    for cell in nb.cells:
        probe = cell.metadata.get(PROBE, "")
        if probe.endswith(" check"):
            ex, what, _ = probe.split(" ")
            out[(ex, what)] = _printed(cell)
    for ex in exercises(nb):
        out[(ex.id, "as committed")] = _printed(ex.check)
    return out
