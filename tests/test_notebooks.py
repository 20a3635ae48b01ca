"""The teaching notebooks (notebooks/*.ipynb): committed clean, and each runs top to bottom.

Every notebook is executed with nbclient in the project's own kernel (the ``python3``
kernelspec, which jupyter_client resolves to this interpreter), at the ``tiny`` preset
(``FUSIONLAB_NOTEBOOK_PRESET``) with few timed workloads and repeats. The checks: no error
output; every cell that runs ``%%fuse`` shows the explorer report, valid against its schema;
and a few figures each notebook teaches (Fig. 3's greedy partition: 38 elements, 4 blocks).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import nbclient
import nbformat
import pytest

from fusionlab.explore.report import MIME_TYPE, validate_report

from course_cells import probe_cells, verdicts


NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
NAMES = ["00-why-fuse", "01-wsp-paper-example", "02-legality", "04-cost-models", "05-cost-and-clock", "03-algorithms",
         "06-beyond-elementwise", "07-contractions", "08-class-project"]
# what the tests ask of the parameter cells (03 reads them; the others ignore them)
ENV = {
    "FUSIONLAB_NOTEBOOK_PRESET": "tiny",
    "FUSIONLAB_NOTEBOOK_REPEAT": "1",
    "FUSIONLAB_NOTEBOOK_TIMED": "heat_equation,rosenbrock",
    "FUSIONLAB_NOTEBOOK_TIMED_OPTIMAL": "rosenbrock",
    "FUSIONLAB_NOTEBOOK_OPTIMAL_SECONDS": "0.1",
}


def _path(name: str) -> Path:
    return NOTEBOOKS / f"{name}.ipynb"


def test_every_notebook_is_listed() -> None:
    assert sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb")) == sorted(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_committed_clean(name: str) -> None:
    """No outputs, execution counts or widget state in the repository (clear them before
    committing: the outputs are large, machine-dependent, and make diffs unreadable)."""
    nb = nbformat.read(_path(name), as_version=4)
    nbformat.validate(nb)
    dirty = [k for k, c in enumerate(nb.cells)
             if c.cell_type == "code" and (c.get("outputs") or c.get("execution_count") is not None)]
    assert not dirty, f"{name}: cells {dirty} have outputs or execution counts; clear them"
    assert "widgets" not in nb.metadata, f"{name}: widget state saved in the metadata; clear it"
    assert nb.metadata.get("kernelspec", {}).get("name") == "python3"


def _imports(source: str) -> list[tuple[str, str | None]]:
    """The (module, name) pairs a piece of Python imports from fusionlab (IPython's magics
    and shell escapes, lines that are not Python, are left out)."""
    import ast
    python = "\n".join(line for line in source.splitlines() if not line.lstrip().startswith(("%", "!")))
    found: list[tuple[str, str | None]] = []
    for node in ast.walk(ast.parse(python)):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("fusionlab"):
            found += [(node.module or "", alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(alias.name, None) for alias in node.names if alias.name.startswith("fusionlab")]
    return found


def test_every_fusionlab_import_in_the_notebooks_and_benchmarks_resolves() -> None:
    """What a notebook or a benchmark script imports from fusionlab exists (a name moved
    between modules fails here, in the quick tier, before a notebook runs for minutes)."""
    import importlib
    sources = [(f"{name}.ipynb cell {k}", c.source)
               for name in NAMES
               for k, c in enumerate(nbformat.read(_path(name), as_version=4).cells) if c.cell_type == "code"]
    sources += [(p.name, p.read_text()) for p in sorted((NOTEBOOKS.parent / "benchmarks").glob("*.py"))]

    def resolves(module: str, name: str | None) -> bool:
        try:
            found = importlib.import_module(module)
            return name is None or hasattr(found, name) or importlib.import_module(f"{module}.{name}") is not None
        except ImportError:
            return False

    missing = [f"{where}: {module}.{name}" if name else f"{where}: {module}"
               for where, source in sources for module, name in _imports(source) if not resolves(module, name)]
    assert sum(1 for _ in sources) > len(NAMES)
    assert not missing, "imports that no longer resolve: " + "; ".join(missing)


_executed: dict[str, Any] = {}
#: each notebook's exercises as the probes found them: (exercise, "wrong" or "solution") -> printed
_verdicts: dict[str, dict[tuple[str, str], str]] = {}


def _run(name: str, monkeypatch: pytest.MonkeyPatch) -> Any:
    if name in _executed:
        return _executed[name]
    for k, v in ENV.items():
        monkeypatch.setenv(k, v)
    nb = nbformat.read(_path(name), as_version=4)
    # each exercise answered wrong, then right, after the notebook's own cells (tests/test_course.py)
    probes = probe_cells(nb)
    nb.cells.extend(probes)
    # a last cell (removed again below) that says which interpreter runs the kernel
    nb.cells.append(nbformat.v4.new_code_cell("import sys; print('KERNEL', sys.prefix)"))
    client = nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()
    probe = nb.cells.pop()
    kernel = "".join(o.get("text", "") for o in probe.outputs).split("KERNEL", 1)[1].strip()
    assert Path(kernel).resolve() == Path(sys.prefix).resolve(), (
        f"the notebook's kernel ran in the environment {kernel}, not in this one ({sys.prefix})")
    _verdicts[name] = verdicts(nb)
    del nb.cells[len(nb.cells) - len(probes):]
    _executed[name] = nb
    return nb


def _text(cell: Any) -> str:
    out = []
    for o in cell.get("outputs", []):
        if o.output_type == "stream":
            out.append(o.text)
        elif "data" in o and "text/plain" in o.data:
            out.append(o.data["text/plain"] + "\n")
    return "".join(out)


def _reports(cell: Any) -> list[dict[str, Any]]:
    got = []
    for o in cell.get("outputs", []):
        data = o.get("data", {})
        if MIME_TYPE in data:
            value = data[MIME_TYPE]
            got.append(json.loads(value) if isinstance(value, str) else value)
    return got


def _runs_fuse(cell: Any) -> bool:
    return cell.cell_type == "code" and (cell.source.lstrip().startswith("%%fuse")
                                         or 'run_cell_magic(\n    "fuse"' in cell.source
                                         or 'run_cell_magic("fuse"' in cell.source)


def _cell(nb: Any, needle: str) -> Any:
    found = [c for c in nb.cells if c.cell_type == "code" and needle in c.source]
    assert found, f"no cell contains {needle!r}"
    return found[0]


@pytest.mark.parametrize("name", NAMES)
def test_runs_and_shows_the_report(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    nb = _run(name, monkeypatch)
    errors = [(k, o.get("ename"), o.get("evalue")) for k, c in enumerate(nb.cells)
              for o in c.get("outputs", []) if o.output_type == "error"]
    assert not errors, f"{name}: error outputs {errors}"
    fuse_cells = [c for c in nb.cells if _runs_fuse(c)]
    assert fuse_cells, f"{name} runs no %%fuse cell"
    for c in fuse_cells:
        reports = _reports(c)
        assert reports, f"{name}: a %%fuse cell shows no {MIME_TYPE} output:\n{c.source[:200]}"
        for r in reports:
            validate_report(r)
    # the last %%fuse cell carries the report (the browser tests look for it)
    assert _reports(fuse_cells[-1])


def test_01_fig3_numbers(monkeypatch: pytest.MonkeyPatch) -> None:
    nb = _run("01-wsp-paper-example", monkeypatch)
    fig3_cell = _cell(nb, "%%fuse --name fig3 --as-captured\n")
    report = _reports(fig3_cell)[0]
    assert report["selected"] == {"algorithm": "greedy", "cost_model": "bohrium"}
    greedy = next(p for p in report["partitions"]
                  if (p["algorithm"], p["cost_model"]) == ("greedy", "bohrium"))
    assert greedy["cost_elements"] == 38 and len(greedy["blocks"]) == 4
    assert len(report["program"]["instructions"]) == 16
    table = _text(_cell(nb, "PAPER = {"))
    rows = {line.split()[0]: line.split() for line in table.splitlines()[1:] if line.strip()}
    # algorithm, figure (two words), paper, ours, Fig. 3b exact, blocks
    assert {a: (int(r[3]), int(r[4]), int(r[5])) for a, r in rows.items()} == {
        "singleton": (94, 94, 94), "linear": (58, 62, 62), "unintrusive": (70, 74, 74),
        "greedy": (58, 38, 38), "optimal": (38, 38, 38)}
    search = _text(_cell(nb, "seed_greedy=False"))
    assert "new best" in search and "result: 38 elements, proven optimal: True" in search
    merges = _text(_cell(nb, "fig3.merge(1, 9)"))
    assert "1 + 9 : merge: illegal (cycle" in merges
    assert "5 + 10: merge: illegal (forbidden" in merges
    assert "1 + 5 : merge: legal; cost 752 -> 688" in merges
    big = _reports(_cell(nb, "%%fuse --name fig3_big"))[-1]
    assert big["timings"] and len(big["timings"]["records"]) == 5
    assert all(r["max_abs_error"] is None or r["max_abs_error"] < 1e-9 for r in big["timings"]["records"])


def test_02_fig21_and_models(monkeypatch: pytest.MonkeyPatch) -> None:
    nb = _run("04-cost-models", monkeypatch)
    tie = _text(_cell(nb, "fig21_b = ["))
    assert re.search(r"max_locality\s+8\s+8\s+a tie", tie)
    assert re.search(r"max_contract\s+4\s+2\s+\(c\)", tie)
    strict = _text(_cell(nb, "def which(result)"))
    assert re.search(r"optimal under max_locality\s*: \(b\)", strict)
    assert re.search(r"optimal under max_contract\s*: \(c\)", strict)
    assert re.search(r"optimal under bohrium\s*: \(c\)", strict)
    own = _text(_cell(nb, "class LaunchAware"))
    assert "monotone on Black Scholes: True" in own
    refused = _text(_cell(nb, "class RegisterPressure"))
    assert "refused: cost model 'register_pressure' is not monotone (Def. 6)" in refused
    assert "the counterexample: merging" in refused


def test_03_benchmarks(monkeypatch: pytest.MonkeyPatch) -> None:
    nb = _run("05-cost-and-clock", monkeypatch)
    assert "preset tiny, repeat 1" in _text(_cell(nb, "FUSIONLAB_NOTEBOOK_PRESET"))
    table = _text(_cell(nb, "fig14 = {}"))
    rows = [line for line in table.splitlines() if re.match(r"^\S.*\s1\.000\s", line)]
    assert len(rows) == 15  # every workload, singleton normalised to 1
    timed = _text(_cell(nb, "timings = {}"))
    assert timed.count("== ") == 2 and "optimal" in timed and "numpy" in timed
    assert any(o.get("data", {}).get("image/png") for c in nb.cells for o in c.get("outputs", []))


def test_04_solutions_pass_and_questions_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    nb = _run("03-algorithms", monkeypatch)
    start = next(k for k, c in enumerate(nb.cells) if c.cell_type == "markdown" and "## Solutions" in c.source)
    questions = "".join(_text(c) for c in nb.cells[:start])
    verdicts = "".join(_text(c) for c in nb.cells[start:] if c.cell_type == "code")
    assert questions.count("not yet") >= 5 and not re.search(r"^correct$", questions, re.MULTILINE)
    assert len(re.findall(r"^correct$", verdicts, re.MULTILINE)) == 6 and "not yet" not in verdicts
    hidden = [c for c in nb.cells[start:] if c.cell_type == "code"]
    assert all(c.metadata.get("jupyter", {}).get("source_hidden") for c in hidden)



def test_05_normalize2_filter_fold(monkeypatch: pytest.MonkeyPatch) -> None:
    nb = _run("06-beyond-elementwise", monkeypatch)
    assert "opaque instructions: 0" in _text(_cell(nb, "print(program.to_text())"))
    table = _text(_cell(nb, "print(f\"{'algorithm':<12}"))
    rows = {line.split()[0]: line.split() for line in table.splitlines()[1:] if line.strip()}
    # xs read twice (2n), nor1 and nor2 written (2n), sum1 and sum2 written and read (4), n = 200,000
    assert rows["optimal"][1:3] == ["2", "800004"] and rows["ilp"][2] == "800004"
    assert "contracted ['t0', 'ys']" in _text(_cell(nb, "get_kernel(program, block)"))
    ilp = _text(_cell(nb, "model = solve(build_model(normalize2_combinators()))"))
    assert "objective 201.0" in ilp and "f consistent with the loops: True" in ilp
    same = _text(_cell(nb, "sol = robinson_ilp(program)"))
    assert "-> 800004 elements" in same and "same loops: True" in same


def test_05_scanomap_and_sibling_reductions(monkeypatch: pytest.MonkeyPatch) -> None:
    nb = _run("06-beyond-elementwise", monkeypatch)
    scan = _text(_cell(nb, "scan_program = sc.program"))
    # the SYNC of y costs nothing where it sits: optima with and without it in the block tie
    assert re.search(r"the block with the scan: \{1,2,3,4,5,6,7,8,9(,10)?\} "
                     r"\['SIN', 'MULTIPLY', 'ADD_ACCUMULATE', 'MULTIPLY', 'ADD'\]", scan), scan
    rows = {line.split()[0]: line.split() for line in scan.split("algorithm")[1].splitlines()[1:] if line.strip()}
    # x read and y written (2 x 200,000); singleton also moves every temporary
    assert rows["optimal"][2] == rows["greedy"][2] == "400000" and rows["singleton"][2] == "2000000"
    kernel = _text(_cell(nb, "k = get_kernel(scan_program, scan_block)"))
    # the sine: in the one-thread serial form, then in each of the two passes
    assert "contracted: ['c', 't0', 't1', 't2']" in kernel and kernel.count("np.sin(x[i0])") == 3
    assert "np.sin in pass 2: False" in _text(_cell(nb, "kept_source = get_kernel(kept, kept_block)"))
    edges = _text(_cell(nb, "edges.graph.drawn_conflicts()"))
    assert " 1 -- 2  REDUCTION_RESULT" in edges and " 1 -- 4  SCAN_RESULT" in edges and " 2 -- 4  SCAN_REDUCTION" in edges
    horizontal = _text(_cell(nb, "hp = hz.program"))
    assert "reductions: [1, 2, 3, 7] | in one block: True" in horizontal
    kernel = _text(_cell(nb, "k = get_kernel(hp, hz_block)"))
    assert "for sp in numba.prange(nsp)" in kernel and "r[i0] = acc1  # 1: stored once, after its loop" in kernel
    # three reads of a 400 x 300 input saved (003 eq. 34 under Bohrium)
    assert "saved by the merge: 360000 elements = 3.0 x 120000" in _text(_cell(nb, "saved = evaluate(hp, apart"))
    solutions = [c for c in nb.cells if "Solution." in c.source or "sc_kept" in c.source or "apart" in c.source]
    assert len(solutions) == 5 and all(c.metadata.get("jupyter", {}).get("source_hidden") for c in solutions)


def test_07_sweeps(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sweep notebook resumes (a second run computes nothing), queries the store and
    draws its figures."""
    nb = _run("08-class-project", monkeypatch)
    assert "computed 0 of" in _text(_cell(nb, "again = run_sweep"))
    assert "rows" in _text(_cell(nb, "machines = con.sql"))
    assert sum(1 for c in nb.cells for o in c.get("outputs", []) if o.get("data", {}).get("image/png")) >= 2


def test_06_tables_fig3_and_batched_einsum(monkeypatch: pytest.MonkeyPatch) -> None:
    nb = _run("07-contractions", monkeypatch)
    assert "preset tiny: 128 x 128" in _text(_cell(nb, "FUSIONLAB_NOTEBOOK_PRESET"))
    assert "applies  map-rnz exchange (eq. 42) at level 1 -> mapA rnz mapB" in _text(_cell(nb, "eq. 51:"))
    assert "loops now: i j_o j_i k" in _text(_cell(nb, "show_contraction("))
    report = next(o["data"][MIME_TYPE] for o in _cell(nb, "FuseResult.from_program").outputs
                  if MIME_TYPE in o.get("data", {}))
    validate_report(report)
    assert len(report["contractions"][0]["terms"]) == 30
    t1 = _text(_cell(nb, "PAPER_T1 = {"))
    assert "30 arrangements (timed here)" in t1
    assert len(re.findall(r"^(mapA|mapB|rnz) .*\d$", t1, re.MULTILINE)) == 6
    tau = float(re.search(r"Table 1\): (-?[0-9.]+)", t1).group(1))
    assert -1.0 <= tau <= 1.0
    t2 = _text(_cell(nb, "rows = []"))
    assert len(re.findall(r"^(mapA|mapB|rnz) .* j_o.* j_i", t2, re.MULTILINE)) == 12
    assert re.search(r"Kendall's tau \(Table 2\): -?[0-9.]+ with j_o outside", t2)
    fig3 = _text(_cell(nb, "for letter, paper in"))
    assert fig3.count("6 arrangements") == 2 and fig3.count("  paper ") == 6
    batched = _text(_cell(nb, "bij,bjk->bik"))
    assert "24 arrangements, all equal to np.einsum" in batched
    assert "fastest in parallel equals NumPy: True" in batched
