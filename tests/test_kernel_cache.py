"""The on-disk kernel cache shared by processes: warm-cache runs under every driver in fresh
processes, and several processes compiling and running at once (issue 13: a compiled
driver loaded from a warm cache crashed with a segmentation fault)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from fusionlab.backend.numba.plan import KernelCache, _publish, cache_salt

ROOT = Path(__file__).resolve().parents[1]

PROGRAMS = {
    # the crash: one parallel kernel called from a compiled driver
    "sqrt": "import numpy as np\nx = np.arange(100000.0)\ny = np.sqrt(x) * 2 + x\n",
    # a stencil with a reduction, in-place updates of views, several batches
    "heat": textwrap.dedent("""\
        import numpy as np
        g = np.zeros((130, 130)); g[0, :] = 1.0
        for _ in range(3):
            c = g[1:-1, 1:-1]
            w = 0.2 * (c + g[:-2, 1:-1] + g[2:, 1:-1] + g[1:-1, :-2] + g[1:-1, 2:])
            d = np.sum(np.abs(w - c))
            g[1:-1, 1:-1] = w
        """),
    # recorded random draws, a serial (small) block and a float32 array
    "draws": textwrap.dedent("""\
        import numpy as np
        rng = np.random.default_rng(1)
        x = rng.random(50000); y = rng.random(50000)
        inside = np.sum((x * x + y * y) < 1.0)
        s = np.arange(10, dtype=np.float32) * 3 + 1
        """),
}

# Runs one program under one driver in this process and prints what it compared: the
# values against plain NumPy (run of the same source), through fusionlab.runtime.check.
CHILD = textwrap.dedent("""\
    import io, json, sys, warnings
    from contextlib import redirect_stdout
    from fusionlab.capture import capture
    from fusionlab.runtime.check import check_namespace
    from fusionlab.pipeline.runner import run
    source, driver = sys.argv[1], sys.argv[2]
    with redirect_stdout(io.StringIO()):
        cap = capture(source, {})
        plain = {}
        exec(compile(source, "<plain>", "exec"), plain)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r = run(cap, "greedy", min_size=4096, driver=driver)
    report = check_namespace(r.values, plain)
    print(json.dumps({"driver": r.driver, "ok": report.ok, "mismatches": [str(m) for m in report.mismatches]}))
    """)


def _child(cache: Path, program: str, driver: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "FUSIONLAB_CACHE": str(cache), "PYTHONFAULTHANDLER": "1"}
    return subprocess.run([sys.executable, "-c", CHILD, PROGRAMS[program], driver], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=600)


def _assert_ok(proc: subprocess.CompletedProcess[str], program: str, driver: str) -> None:
    assert proc.returncode == 0, (program, driver, proc.returncode, proc.stderr[-2000:])
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["ok"], (program, driver, out["mismatches"])
    want = {"python": "python driver", "numba": "compiled driver", "blocks": "block by block: asked for"}[driver]
    assert out["driver"] == want, (program, driver, out["driver"])


def test_every_driver_in_fresh_processes_against_a_warm_cache(tmp_path):
    # the order of the crash: kernels compiled by a Python-driver run, then a
    # compiled driver built from cached kernels, then that driver loaded from the cache
    for program in PROGRAMS:
        for driver in ("python", "numba", "numba", "blocks", "numba", "python"):
            _assert_ok(_child(tmp_path, program, driver), program, driver)


def test_processes_compiling_and_running_at_once(tmp_path):
    jobs = [(program, driver) for program in ("sqrt", "heat") for driver in ("numba", "python", "numba")]
    for _ in range(2):   # a cold cache, then the warm one, both raced
        with ThreadPoolExecutor(len(jobs)) as pool:
            procs = list(pool.map(lambda j: _child(tmp_path, *j), jobs))
        for (program, driver), proc in zip(jobs, procs):
            _assert_ok(proc, program, driver)
    # no temporary files are left behind by the races
    leftovers = [p.name for p in tmp_path.rglob("*.tmp")] + [p.name for p in tmp_path.rglob("*.tmp.*")]
    assert leftovers == []


def test_cache_folder_names_what_compiled_code_depends_on(tmp_path, monkeypatch):
    import numba
    import numpy as np

    salt = cache_salt()
    assert numba.__version__ in salt and np.__version__ in salt and f"t{numba.config.NUMBA_NUM_THREADS}" in salt
    monkeypatch.setenv("FUSIONLAB_CACHE", str(tmp_path))
    assert KernelCache().directory == tmp_path / "kernels" / salt


def test_published_files_are_never_rewritten_and_broken_ones_are_replaced(tmp_path):
    path = tmp_path / "k_x.py"
    _publish(path, "a = 1\n")
    stamp = path.stat().st_mtime_ns
    os.utime(path, ns=(stamp - 10**9, stamp - 10**9))   # as if written a second ago
    _publish(path, "a = 1\n")
    assert path.stat().st_mtime_ns == stamp - 10**9   # Numba's index keeps its stamp
    path.write_text("a = ")   # a file truncated by a crash
    _publish(path, "a = 1\n")
    assert path.read_text() == "a = 1\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k_x.py"]


@pytest.mark.parametrize("driver", ["python", "numba"])
def test_a_cached_driver_runs_in_a_process_whose_pool_was_never_started(tmp_path, driver):
    # the minimal form of the crash: the first thing the second process runs is the cached
    # compiled driver (no kernel called from Python before it)
    for mode in ("python", driver, driver):
        _assert_ok(_child(tmp_path, "sqrt", mode), "sqrt", mode)
