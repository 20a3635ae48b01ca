"""How long each lab takes: its cells' run time measured, its reading and its exercises counted.

A lab is meant to fit 90 minutes. This script works through every notebook once, as a student
runs it (top to bottom, in a fresh kernel, at the notebook's default sizes unless ``--preset``
is given), and writes per lab:

- the measured run time of all its cells (nbclient, one kernel per lab; warm kernel cache
  unless the cache was emptied first);
- what a student reads: the words of its prose (Markdown cells) and the lines of code, outside
  the collapsed solutions and checks (a student opens those for the exercises: the minutes per
  exercise count them);
- its exercises (the ``exercise:<id>`` tags of ``fusionlab.course``);
- an estimate of a student's time from these counts, with the rates stated in the table's
  caption (reading technical prose, reading code, answering an exercise with one wrong try
  and a hint), beside the time the lab's opening states.

The rates are assumptions, not measurements of students: the run time and the counts are
measured; the minutes they add up to are only as good as the rates. The table goes to
``benchmarks/README.md`` (section ``labs``) and ``docs/notebooks.md`` cites it.

Run: ``.venv/bin/python benchmarks/bench_labs.py [--preset tiny] [--only 03-algorithms]``.
"""

from __future__ import annotations

import argparse
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from _report import HERE, write_section

NOTEBOOKS = HERE.parent / "notebooks"
# Rates of a student's work (assumptions, stated in the table): technical prose with formulas
# is read at about 120 words a minute; code to be understood, not only run, at about 6 lines
# a minute; an exercise (think, answer, one "not yet" and its hint, answer again) about 7 min.
WORDS_PER_MINUTE = 120
CODE_LINES_PER_MINUTE = 6
MINUTES_PER_EXERCISE = 7
LAB_MINUTES = 90


@dataclass(frozen=True)
class LabTime:
    """One lab's counts and measured run time."""

    name: str
    words: int
    code_lines: int
    exercises: int
    run_seconds: float
    stated_minutes: int | None

    @property
    def estimate_minutes(self) -> float:
        """The student's time the rates give: reading, code, exercises and the cells' run time."""
        return (self.words / WORDS_PER_MINUTE + self.code_lines / CODE_LINES_PER_MINUTE
                + self.exercises * MINUTES_PER_EXERCISE + self.run_seconds / 60)


def _hidden(cell: nbformat.NotebookNode) -> bool:
    tags = cell.metadata.get("tags", [])
    return "solution" in tags or "check" in tags or bool(cell.metadata.get("jupyter", {}).get("source_hidden"))


def counts(nb: nbformat.NotebookNode) -> tuple[int, int, int]:
    """Words of prose, lines of visible code and exercises of a notebook.

    >>> nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("Two words."),
    ...     nbformat.v4.new_code_cell("x = 1\\n\\ny = 2")])
    >>> counts(nb)
    (2, 2, 0)
    """
    words = sum(len(re.findall(r"[A-Za-z0-9']+", c.source)) for c in nb.cells
                if c.cell_type == "markdown" and not _hidden(c))
    lines = sum(1 for c in nb.cells if c.cell_type == "code" and not _hidden(c)
                for line in c.source.splitlines() if line.strip())
    ids = {t for c in nb.cells for t in c.metadata.get("tags", []) if t.startswith("exercise:")}
    return words, lines, len(ids)


def stated_minutes(nb: nbformat.NotebookNode) -> int | None:
    """The minutes the lab's opening states (``**Time.** 90 min``)."""
    found = re.search(r"\*\*Time\.?\*\*\s*(\d+)\s*min", nb.cells[0].source) if nb.cells else None
    return int(found.group(1)) if found else None


def work_through(path: Path, timeout: float) -> LabTime:
    """Run one lab top to bottom in a fresh kernel and count what it asks of a student."""
    nb = nbformat.read(path, as_version=4)
    words, lines, exercises = counts(nb)
    t0 = time.perf_counter()
    NotebookClient(nb, timeout=timeout, kernel_name="python3",
                   resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    return LabTime(path.stem, words, lines, exercises, time.perf_counter() - t0, stated_minutes(nb))


def table(labs: list[LabTime], preset: str) -> str:
    """The Markdown table of the labs."""
    rows = ["| lab | prose words | code lines | exercises | cells run (s) | estimate (min) | stated (min) |",
            "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for lab in labs:
        rows.append(f"| `{lab.name}` | {lab.words:,} | {lab.code_lines} | {lab.exercises} | "
                    f"{lab.run_seconds:.0f} | {lab.estimate_minutes:.0f} | {lab.stated_minutes or '-'} |")
    over = [lab.name for lab in labs if lab.estimate_minutes > LAB_MINUTES]
    caption = (
        f"Each lab run once top to bottom in a fresh kernel ({preset}); the counts are the notebook's own. "
        f"Estimate = words / {WORDS_PER_MINUTE} per min + code lines / {CODE_LINES_PER_MINUTE} per min + "
        f"{MINUTES_PER_EXERCISE} min per exercise + the cells' run time; the rates are assumptions about a "
        "student, not measured with one (discussion in class not included). "
        + (f"Over {LAB_MINUTES} min by this estimate: {', '.join(over)}." if over
           else f"Every lab fits {LAB_MINUTES} min by this estimate."))
    return "\n".join(rows) + "\n\n" + caption


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--preset", help="FUSIONLAB_NOTEBOOK_PRESET for the run (default: each notebook's own)")
    parser.add_argument("--only", action="append", help="a notebook's name without .ipynb (repeatable)")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per cell")
    args = parser.parse_args()
    if args.preset:
        os.environ["FUSIONLAB_NOTEBOOK_PRESET"] = args.preset
    paths = sorted(NOTEBOOKS.glob("[0-9][0-9]-*.ipynb"))
    if args.only:
        paths = [p for p in paths if p.stem in args.only]
    labs = []
    for path in paths:
        lab = work_through(path, args.timeout)
        print(f"{lab.name}: {lab.run_seconds:.0f} s to run, estimate {lab.estimate_minutes:.0f} min", flush=True)
        labs.append(lab)
    preset = f"`FUSIONLAB_NOTEBOOK_PRESET={args.preset}`" if args.preset else "each notebook's default sizes"
    print(write_section("labs", table(labs, preset), "## The labs' length (`bench_labs.py`)"))


if __name__ == "__main__":
    main()
