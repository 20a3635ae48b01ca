"""The fusionlab command line, run in-process and as a real subprocess."""

from __future__ import annotations

import json
import subprocess
import sys

from fusionlab.cli import main
from fusionlab.ir.examples import fig3_text


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_partition_json_has_the_documented_fields(capsys, tmp_path):
    path = tmp_path / "fig3.bc"
    path.write_text(fig3_text())
    code, out, _ = run(capsys, "partition", str(path), "--algorithm", "optimal", "--cost", "bohrium", "--format", "json")
    d = json.loads(out)
    assert code == 0
    assert set(d) == {"algorithm", "cost_model", "cost", "cost_elements", "blocks", "legal", "proven_optimal", "seconds"}
    assert (d["algorithm"], d["cost_model"], d["cost"], d["cost_elements"]) == ("optimal", "bohrium", 304, 38)
    assert d["legal"] and d["proven_optimal"] and d["blocks"][0] == [1, 2, 5, 6, 7, 8, 9, 12, 13]


def test_partition_text_lists_each_instructions_block(capsys):
    code, out, _ = run(capsys, "partition", "fig3", "--algorithm", "linear")
    lines = out.splitlines()
    assert code == 0 and lines[0].split() == ["1", "[1]", "COPY", "A,", "0"]
    assert lines[9].split()[:2] == ["10", "[4]"]
    assert lines[-1].startswith("linear / bohrium: 4 blocks, cost 496 bytes (62 elements), legal")


def test_partition_dot(capsys):
    code, out, _ = run(capsys, "partition", "fig3", "--format", "dot")
    assert code == 0 and out.startswith("digraph wsp {") and out.count("subgraph cluster_") == 4


def test_cost_of_a_legal_and_an_illegal_partition(capsys):
    blocks = json.dumps([[1, 2, 5, 6, 7, 8, 9, 12, 13], [3, 4], [10, 11, 14, 15, 16, 17]])
    code, out, _ = run(capsys, "cost", "fig3", "--partition", blocks, "--format", "json")
    d = json.loads(out)
    assert code == 0 and d["legal"] and d["cost_elements"] == 38 and d["problems"] == []
    bad = json.dumps([[1, 6]] + [[i] for i in range(2, 18) if i != 6])
    code, out, _ = run(capsys, "cost", "fig3", "--partition", bad, "--format", "json")
    d = json.loads(out)
    assert code == 1 and not d["legal"]
    assert d["problems"] == ["the blocks depend on each other in a cycle: {1,6} -> {5} -> {1,6}"]
    code, out, _ = run(capsys, "cost", "fig3", "--partition", "[[1, 3]]")
    assert code == 1 and "ILLEGAL" in out and "different iteration shapes" in out
    code, out, _ = run(capsys, "cost", "fig3", "--partition", "[[1, 2]]", "--format", "json")
    d = json.loads(out)
    assert code == 0 and len(d["blocks"]) == 16 and d["cost_elements"] == 94   # A and B share nothing
    code, _, err = run(capsys, "cost", "fig3", "--partition", "[[1, 2], [2]]")
    assert code == 2 and "more than one block" in err


def test_bad_input_names_line_and_column(capsys, tmp_path):
    path = tmp_path / "bad.bc"
    path.write_text("ARRAY A float64[4]\n\nMUL A, A, Q\n")
    code, _, err = run(capsys, "partition", str(path))
    assert code == 2
    assert err.splitlines()[0] == f"fusionlab: {path}:3:11: array Q is not declared; add a line such as `ARRAY Q float64[4]` before it"
    assert err.splitlines()[-1] == " " * 10 + "^"
    code, _, err = run(capsys, "cost", "fig3", "--partition", "[[1,2],[99]]")
    assert code == 2 and "numbered 1..17" in err
    code, _, err = run(capsys, "cost", "fig3", "--partition", "[[1,2]")
    assert code == 2 and "is not JSON" in err
    code, _, err = run(capsys, "partition", str(tmp_path / "missing.bc"))
    assert code == 2 and "cannot read" in err


def test_demo_prints_every_algorithm(capsys):
    code, out, _ = run(capsys, "demo")
    assert code == 0
    assert "singleton    cost  94  (paper: 94)" in out
    assert "optimal      cost  38  (paper: 38)" in out


def test_installed_command_runs_as_a_process():
    got = subprocess.run([sys.executable, "-m", "fusionlab", "partition", "-", "--format", "json"],
                         input="ARRAY A float64[3]\nCOPY A, 1\nSQRT A, A\nSYNC A\n", capture_output=True, text=True)
    assert got.returncode == 0, got.stderr
    assert json.loads(got.stdout)["blocks"] == [[1, 2, 3]]   # SYNC joins by a zero-weight edge


def test_capture_prints_batches_of_a_python_file(capsys, tmp_path):
    from fusionlab.ir.examples import FIG3_PYTHON

    path = tmp_path / "fig3.py"
    path.write_text(FIG3_PYTHON)
    code, out, err = run(capsys, "capture", str(path))
    assert code == 0 and err == "[0. 0. 0. 0. 0.]\n"        # the program's own output: stderr
    assert out.splitlines()[0] == "# batch 1 of 2: 16 instructions"
    assert "MAXIMUM D[1:], T, E[1:]" in out and out.rstrip().endswith("DEL D")
    code, out, _ = run(capsys, "capture", str(path), "--format", "json")
    d = json.loads(out)
    assert d["instructions"] == 17 and [b["instructions"] for b in d["batches"]] == [16, 1]


def test_partition_of_a_workload_uses_the_merge_cache(capsys):
    code, out, _ = run(capsys, "partition", "heat_equation", "--format", "json")
    d = json.loads(out)
    assert code == 0 and len(d["batches"]) == 4
    assert d["merge_cache"] == {"hits": 1, "misses": 3}
    assert all(b["legal"] for b in d["batches"])


def test_verify_workloads_and_files(capsys, tmp_path):
    code, out, _ = run(capsys, "verify", "black_scholes", "--algorithm", "greedy", "--format", "json")
    d = json.loads(out)
    assert code == 0 and d["mismatches"] == [] and d["variables"] >= 1 and d["batches"] == 4
    path = tmp_path / "prog.py"
    path.write_text("import numpy as np\nx = np.arange(10.0)\ny = np.sqrt(x) + x[::-1]\nz = y.sum()\n")
    code, out, _ = run(capsys, "verify", str(path), "--algorithm", "optimal", "--format", "json")
    d = json.loads(out)
    assert code == 0 and d == {**d, "variables": 3, "replayed": 3, "mismatches": []}
    bad = tmp_path / "bad.py"
    bad.write_text("import numpy as np\nx = np.ones(3)\ny = x[5]\n")
    code, _, err = run(capsys, "verify", str(bad))
    assert code == 2 and "IndexError" in err


def test_workloads_lists_every_workload(capsys):
    from fusionlab.workloads import ALL_WORKLOADS, CORPUS, WORKLOADS

    code, out, _ = run(capsys, "workloads")
    assert code == 0 and len(out.splitlines()) == len(ALL_WORKLOADS) == len(WORKLOADS) + len(CORPUS) == 20 + 19
    assert out.splitlines()[0].startswith("black_scholes")


def test_cli_min_size_default_matches_the_backend():
    from fusionlab import cli
    from fusionlab.backend.numba.plan import DEFAULT_MIN_SIZE

    assert cli.DEFAULT_MIN_SIZE == DEFAULT_MIN_SIZE
    args = cli.build_parser().parse_args(["run", "fig3"])
    assert (args.min_size, args.preset, args.algorithm, args.cost) == (DEFAULT_MIN_SIZE, "tiny", "greedy", "bohrium")


def test_run_repeats_and_names_who_called_the_kernels(capsys):
    from fusionlab import cli
    from fusionlab.backend.numba.driver import MODES

    assert cli.DRIVER_MODES == MODES
    code, out, _ = run(capsys, "run", "monte_carlo_pi", "--check", "--repeat", "3", "--min-size", "0")
    assert code == 0 and "python driver" in out and "3 more runs: median " in out
    code, out, _ = run(capsys, "run", "monte_carlo_pi", "--driver", "blocks", "--min-size", "0")
    assert code == 0 and "; block by block: asked for" in out


def test_a_program_that_raises_shows_its_own_frames(capsys, tmp_path):
    # the traceback was the last 3 lines of capture's: its reshape wrapper in
    # fusionlab/capture/array.py, not the program's line
    path = tmp_path / "bad.py"
    path.write_text("import numpy as np\nx = np.arange(10.0)\ny = x * 2\nz = y.reshape(3, 3)\n")
    code, _, err = run(capsys, "run", str(path))
    assert code == 2 and "cannot reshape array of size 10" in err
    assert f'File "{path}", line 4, in <module>' in err and "z = y.reshape(3, 3)" in err
    assert "fusionlab/capture" not in err
