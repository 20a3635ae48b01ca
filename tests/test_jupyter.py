"""The %%fuse magic through IPython's test shell, the result object and the widget state."""

from __future__ import annotations

import io
from contextlib import redirect_stdout

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from IPython.core.error import UsageError
from IPython.testing.globalipapp import get_ipython
from IPython.utils.capture import capture_output

from fusionlab.ir.examples import FIG3_PYTHON, fig3
from fusionlab.explore.jupyter import FuseResult
from fusionlab.explore.jupyter.explorer import Explorer
from fusionlab.explore.report import MIME_TYPE, validate_report

from strategies import numpy_sources

ip = get_ipython()
ip.run_line_magic("load_ext", "fusionlab")


def fuse(line: str, cell: str) -> "capture_output":
    with capture_output() as out:
        ip.run_cell_magic("fuse", line, cell)
    return out


def displays(out) -> dict[str, list]:
    """The outputs of each display id, in order: the display, then its in-place updates."""
    by_id: dict[str, list] = {}
    for o in out.outputs:
        if MIME_TYPE in o.data:
            by_id.setdefault((o.transient or {}).get("display_id", id(o)), []).append(o)
    return by_id


def reports(out) -> list[dict]:
    """The final report of each display (its last update)."""
    return [outputs[-1].data[MIME_TYPE] for outputs in displays(out).values()]


def plain(cell: str, start: dict) -> dict:
    ns = dict(start)
    with redirect_stdout(io.StringIO()):
        exec(compile(cell, "<plain>", "exec"), ns)
    return ns


def test_fig3_cell_shows_the_explorer_and_keeps_plain_values() -> None:
    out = fuse("--name fig3res", FIG3_PYTHON)
    [report] = reports(out)
    validate_report(report)
    greedy = next(p for p in report["partitions"] if (p["algorithm"], p["cost_model"]) == ("greedy", "bohrium"))
    assert (greedy["cost_elements"], len(greedy["blocks"])) == (38, 4)
    assert report["selected"] == {"algorithm": "greedy", "cost_model": "bohrium"}
    # the same program as Fig. 3b
    assert ip.user_ns["fig3res"].capture.program.signature() == fig3().signature()
    # one display: the report, a static HTML fallback with the graph laid out, and text; no widget
    [outputs] = displays(out).values()
    assert not outputs[0].update and all(o.update for o in outputs[1:])
    bundle = outputs[-1].data
    assert set(bundle) == {MIME_TYPE, "text/html", "text/plain"}
    assert 'src="data:image/svg+xml;base64,' in bundle["text/html"] and "greedy / bohrium: 4 blocks" in bundle["text/html"]
    assert "greedy / bohrium" in bundle["text/plain"] and report["status"]["complete"]
    assert report["id"] == outputs[0].transient["display_id"]
    assert not any("application/vnd.jupyter.widget-view+json" in o.data for o in out.outputs)
    # the printed value of D (Fig. 3a prints it) came out of the captured run
    assert out.stdout.strip()
    want = plain(FIG3_PYTHON, {})
    for k in ("D",):
        if k in want:
            np.testing.assert_array_equal(ip.user_ns[k], want[k])
    assert ip.user_ns["_fuse"] is ip.user_ns["fig3res"]


def test_options_select_the_partition_and_the_grid() -> None:
    out = fuse("-a linear -c robinson --algorithms singleton,linear --compare bohrium", "import numpy as np\n"
               "x = np.arange(64.0)\ny = x * 2 + 1\nz = np.sqrt(y)\n")
    [report] = reports(out)
    assert report["selected"] == {"algorithm": "linear", "cost_model": "robinson"}
    assert report["algorithms"] == ["singleton", "linear"]
    assert report["cost_models"] == ["robinson", "bohrium"]
    assert report["trace"] is None  # optimal not explored


@pytest.mark.parametrize("line, message", [
    ("--cost fastest", "unknown cost model 'fastest'"),
    ("--algorithm quick", "unknown algorithm 'quick'"),
    ("--compare bohrium,nope", "unknown cost model 'nope'"),
    ("--repeat 0", "--repeat must be at least 1"),
    ("--name 1x", "identifier"),
    ("--bogus", "unrecognized arguments"),
])
def test_bad_options_are_usage_errors_and_run_nothing(line: str, message: str) -> None:
    ip.user_ns.pop("untouched", None)
    with pytest.raises(UsageError, match=message):
        ip.run_cell_magic("fuse", line, "untouched = 1\n")
    assert "untouched" not in ip.user_ns


def test_user_error_shows_the_users_traceback_and_keeps_work() -> None:
    cell = "import numpy as np\nkept = np.ones(5) * 3\nbroken = kept + undefined_name\n"
    with capture_output() as out:  # run as a notebook runs it: the cell fails with the user's error
        result = ip.run_cell("%%fuse\n" + cell)
    assert isinstance(result.error_in_exec, NameError)
    text = out.stdout + out.stderr
    assert "NameError" in text and "undefined_name" in text
    assert "fusionlab/capture" not in text and "capture/__init__" not in text  # no fusionlab frames
    np.testing.assert_array_equal(ip.user_ns["kept"], np.full(5, 3.0))
    assert isinstance(ip.user_ns["kept"], np.ndarray)
    assert reports(out) == []


def test_syntax_error_is_reported_not_raised() -> None:
    out = fuse("", "x = = 1\n")
    assert "SyntaxError" in out.stdout + out.stderr


def test_fuse_config_sets_session_defaults() -> None:
    try:
        conf = ip.run_line_magic("fuse_config", "--cost max_locality --algorithms greedy,optimal --repeat 2")
        assert conf["cost"] == "max_locality" and conf["repeat"] == 2
        out = fuse("", "import numpy as np\na = np.arange(10.0)\nb = a + a * 2\n")
        [report] = reports(out)
        assert report["selected"]["cost_model"] == "max_locality"
        assert report["algorithms"] == ["greedy", "optimal"]
        with pytest.raises(UsageError):
            ip.run_line_magic("fuse_config", "--cost nothing")
        assert ip.run_line_magic("fuse_config", "")["cost"] == "max_locality"  # unchanged by the bad call
    finally:
        ip.run_line_magic("fuse_config", "--reset")
    assert ip.run_line_magic("fuse_config", "")["cost"] == "bohrium"


def test_magic_documents_every_option() -> None:
    doc = ip.find_cell_magic("fuse").__doc__
    for option in ("--algorithm", "--cost", "--compare", "--algorithms", "--time", "--repeat", "--name",
                   "--budget", "--trace-limit", "--widgets"):
        assert option in doc
    # `%%fuse?` names the cell magic as it is typed, with no reStructuredText marker
    assert doc.startswith("%%fuse [") and "::" not in doc
    assert ip.find_line_magic("fuse_config").__doc__.startswith("%fuse_config [")


def test_loop_gives_one_batch_per_iteration_and_the_cache_says_so() -> None:
    cell = ("import numpy as np\nu = np.zeros(32)\nfor _ in range(3):\n"
            "    u = (u + 1.0) * 0.5\n    print(float(u.sum()))\n")
    out = fuse("--no-explorer", cell)
    res = ip.user_ns["_fuse"]
    assert len(res.batches) >= 3 and reports(out) == []
    report = res.report()
    repeats = [b for b in report["batches"] if b["same_as"] is not None]
    assert repeats, report["batches"]
    res.set_batch(repeats[0]["same_as"])
    first = res.report()["partitions"]
    assert not any(p["cache_hit"] for p in first)
    # what the budget cut is not cached (a loaded machine can cut an exact search): the rest is
    done = {(p["algorithm"], p["cost_model"]) for p in first if p["status"] == "done"}
    assert done
    res.set_batch(repeats[0]["index"])
    again = res.report()
    assert again["batch"] == repeats[0]["index"]
    hits = {(p["algorithm"], p["cost_model"]) for p in again["partitions"] if p["cache_hit"]}
    assert done <= hits  # the merge cache answered
    np.testing.assert_array_equal(ip.user_ns["u"], plain(cell.replace("print(", "("), {})["u"])


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(numpy_sources())
def test_namespace_equals_plain_numpy(source) -> None:
    cell = source.replace("import numpy as np\n", "")  # the notebook imported it earlier
    ip.run_cell("import numpy as np")
    want = plain(cell, {"np": np})
    fuse("--no-explorer", cell)
    for k, v in want.items():
        if k.startswith("__") or k not in ip.user_ns:
            continue
        got = ip.user_ns[k]
        if isinstance(v, (np.ndarray, np.generic)):
            assert type(got) is type(v), k
            np.testing.assert_array_equal(got, v, err_msg=k)


# -- the result object and the widget ---------------------------------------------------------


def test_manual_mode_merge_and_split_with_reasons() -> None:
    r = FuseResult.from_program(fig3(), algorithms=["singleton", "greedy"])
    r.select("singleton")
    bad = r.merge(1, 3)  # COPY A (4 elements) and COPY D (5 elements)
    assert not bad.legal and bad.reason == "FORBIDDEN" and "shape" in bad.detail
    good = r.merge(1, 5)  # COPY A, then ADD A, A, D[:-1]: A stays in the kernel
    assert good.legal and good.cost_after < good.cost_before
    assert r.selected[0] == "manual" and len(r.current.blocks) == 16
    # the summary is the verdict and the cost; str() names the action once
    assert good.summary == f"legal; cost {good.cost_before:,.0f} -> {good.cost_after:,.0f}"
    assert str(good) == "merge: " + good.summary
    entry = next(p for p in r.report()["partitions"] if p["algorithm"] == "manual")
    assert entry["cost"] == good.cost_after
    split = r.split(next(k for k, b in enumerate(r.current.blocks, 1) if len(b) == 2))
    assert split.legal and split.cost_after == good.cost_before
    r.reset_manual()
    assert r.selected == ("greedy", "bohrium")


def test_widget_changes_the_displayed_partition_and_report() -> None:
    shown: list = []
    ex = Explorer(FuseResult.from_program(fig3()), display=lambda obj, **kw: shown.append((obj, kw)))
    ex.show()
    first = ex.displayed[MIME_TYPE]
    assert ex.displayed is shown[-1][0] and shown[-1][1]["display_id"] == ex.display_id
    # the front end changes the cost model: the widget state changes, the kernel recomputes
    ex.cost_model.set_state({"index": ex.cost_model.options.index("robinson")})
    after = ex.displayed[MIME_TYPE]
    assert after["selected"] == {"algorithm": "greedy", "cost_model": "robinson"}
    assert shown[-1][1].get("update") and shown[-1][1]["display_id"] == ex.display_id
    greedy_robinson = next(p for p in after["partitions"]
                           if (p["algorithm"], p["cost_model"]) == ("greedy", "robinson"))
    assert len(greedy_robinson["blocks"]) == 3 and "[3]" in ex.listing.value
    assert first["selected"]["cost_model"] == "bohrium"
    validate_report(after)
    # manual merge through the buttons
    ex.algorithm.value = "singleton"
    ex.merge_a.value, ex.merge_b.value = 1, 3
    ex.merge_button.click()
    assert "refused" in ex.manual_message.value and "forbidden" in ex.manual_message.value
    ex.merge_b.value = 2
    ex.merge_button.click()
    assert ex.algorithm.value == "manual" and "legal" in ex.manual_message.value
    assert ex.displayed[MIME_TYPE]["selected"]["algorithm"] == "manual"
    # search tree replay
    ex.algorithm.value = "greedy"
    ex.cost_model.value = "bohrium"
    last = ex.tree_step.max
    ex.tree_step.value = 5
    assert ex.tree.value.count('class="fl-node"') == 6
    assert last == ex.result.report()["trace"]["nodes"][-1]["id"]


def test_timing_from_the_button_fills_the_report() -> None:
    ip.run_cell("import numpy as np\nbig = np.linspace(0, 1, 20_000)")
    fuse("--no-explorer --compare bohrium,robinson", "y = np.sin(big) * 2 + big\ns = float((y * y).sum())\n")
    res = ip.user_ns["_fuse"]
    before = ip.user_ns["big"].copy()
    ex = Explorer(res, repeat=1, display=lambda obj, **kw: None)
    ex.show()
    ex.time_button.click()
    timings = ex.displayed[MIME_TYPE]["timings"]
    assert [r["cost_model"] for r in timings["records"]] == ["numpy", "bohrium", "robinson"]
    for r in timings["records"]:  # every variant: minimum, median, spread, runs, threads, warnings
        assert 0 < r["min_seconds"] <= r["median_seconds"] and r["samples"] >= 1
        assert r["spread"] is None or r["spread"] >= 0
        assert isinstance(r["warnings"], list) and isinstance(r["busy"], bool)
    assert "median" in ex.timing.value and "spread" in ex.timing.value and " ms" in ex.timing.value + " µs"
    assert all(r["max_abs_error"] is None or r["max_abs_error"] < 1e-6 for r in timings["records"])
    assert ex.progress.value == ex.progress.max and "done" in ex.progress_label.value
    assert "<svg" in ex.timing.value
    validate_report(ex.displayed[MIME_TYPE])
    np.testing.assert_array_equal(ip.user_ns["big"], before)  # timing never touches user data
    # --time without the explorer still measures
    fuse("--no-explorer --time --repeat 1 --compare bohrium", "w2 = np.cos(big) + big\n")
    assert [r["cost_model"] for r in ip.user_ns["_fuse"].timings["records"]] == ["numpy", "bohrium"]


def test_users_own_cost_model_by_variable_name() -> None:
    ip.run_cell(
        "from fusionlab.costs import BlockCostModel\n"
        "class Kernels(BlockCostModel):\n"
        "    name = 'kernels'\n"
        "    unit = 'kernels'\n"
        "    def block_cost(self, info):\n"
        "        return 1\n"
        "class Bad(BlockCostModel):\n"
        "    name = 'bad'\n"
        "    def block_cost(self, info):\n"
        "        return 10 * len(info.instructions) ** 2\n"
    )
    out = fuse("--cost Kernels --compare Kernels,bohrium --algorithms singleton,greedy",
               "import numpy as np\nq = np.arange(8.0)\nr = q * 2 + 1\n")
    [report] = reports(out)
    assert report["cost_models"] == ["kernels", "bohrium"]
    single = next(p for p in report["partitions"] if p["cost_model"] == "kernels" and p["algorithm"] == "singleton")
    assert single["cost"] == len(single["blocks"]) and single["unit"] == "kernels"
    records = ip.user_ns["_fuse"].time(repeat=1)  # compare() names the user's model in its records
    assert [r.cost_model for r in records] == ["numpy", "kernels", "bohrium"]
    # a model that is not monotone is refused with the counterexample; the cell's values stay
    out = fuse("--cost Bad", "import numpy as np\nkept2 = np.arange(6.0) * 3\nw = kept2 + 1\n")
    assert "monoton" in out.stderr.lower() and reports(out) == []
    np.testing.assert_array_equal(ip.user_ns["kept2"], np.arange(6.0) * 3)
    with pytest.raises(UsageError, match="variable holding your cost model"):
        ip.run_cell_magic("fuse", "--cost NotAModel", "x = 1\n")


def test_functions_defined_in_one_cell_are_captured_in_another_and_plain_elsewhere() -> None:
    fuse("--no-explorer", "import numpy as np\ndef f(n):\n    x = np.arange(float(n))\n    return np.sqrt(x) * 2 + x\n"
                          "first = f(4)\n")
    out = fuse("--no-explorer", "later = f(6)\n")
    assert "recorded no array instruction" not in out.stdout
    assert len(ip.user_ns["_fuse"].program) > 3
    np.testing.assert_array_equal(ip.user_ns["later"], np.sqrt(np.arange(6.0)) * 2 + np.arange(6.0))
    # outside %%fuse the function runs plain NumPy: its globals are the notebook's again
    ip.run_cell("plain_value = f(5)")
    assert type(ip.user_ns["plain_value"]) is np.ndarray
    assert ip.user_ns["f"].__globals__["np"] is np
    # and a function from an ordinary cell is recorded inside %%fuse
    ip.run_cell("def g(a):\n    return np.exp(-a) + a * a\n")
    fuse("--no-explorer", "h = g(np.linspace(0, 1, 5))\n")
    assert any(ins.opcode.name == "EXP" for ins in ip.user_ns["_fuse"].program)
    np.testing.assert_array_equal(ip.user_ns["h"], np.exp(-np.linspace(0, 1, 5)) + np.linspace(0, 1, 5) ** 2)


def test_a_fuse_cell_that_raises_names_its_own_cell() -> None:
    # issue 35: the traceback said "Cell In[3]" for cell [2]; it must say what a plain cell says
    import re

    def cell_in(cell: str, store: bool = True) -> tuple[int, list[tuple[str, str]]]:
        with capture_output() as out:
            result = ip.run_cell(cell, store_history=store)
        text = re.sub(r"\x1b\[[0-9;]*m", "", out.stdout + out.stderr)
        return result.execution_count, re.findall(r"Cell In\s*\[(\d+)\], line (\d+)", text)

    body = "import numpy as np\nx = np.arange(3.0)\ny = x[5]\n"
    plain_count, plain = cell_in(body)
    fuse_count, fused = cell_in("%%fuse\n" + body)
    assert plain == [(str(plain_count), "3")]
    assert fused == [(str(fuse_count), "3")]
    # a cell that stores no history is named by the count as it is, as IPython names a plain one
    quiet = body.replace("x[5]", "x[7]")   # not the text of the cell before (that would read as this one)
    _, plain_quiet = cell_in(quiet, store=False)
    _, fused_quiet = cell_in("%%fuse\n" + quiet, store=False)
    assert fused_quiet == plain_quiet and plain_quiet


def test_in_a_real_kernel_a_fuse_cell_that_raises_names_its_own_cell() -> None:
    # the same through ipykernel, as JupyterLab runs cells: the traceback names the cell's own number
    import re

    import nbclient
    import nbformat

    body = "x = np.arange(3.0)\ny = x[5]\n"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in (
        "%load_ext fusionlab\nimport numpy as np", body, "%%fuse --no-explorer\n" + body, "z = 1", "%%fuse\n" + body)])
    nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=True).execute()
    for cell in nb.cells[1:]:
        if cell.source == "z = 1":
            continue
        [err] = [o for o in cell.outputs if o.output_type == "error"]
        text = re.sub(r"\x1b\[[0-9;]*m", "", "\n".join(err.traceback))
        assert re.findall(r"Cell In\s*\[(\d+)\], line (\d+)", text) == [(str(cell.execution_count), "2")], text
