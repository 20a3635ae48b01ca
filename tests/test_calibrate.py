"""``fusionlab calibrate``: figures in sane ranges, stored per machine, and a busy machine's
figures flagged as noisy (the busy load is injected, never made by spinning)."""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path

import pytest

from fusionlab.calibrate import CURVE_SIZES, CalibrationOptions, calibrate, format_figures, read_load
from fusionlab.cli import main
from fusionlab.timemodel import DTYPES, FAMILIES, MachineFigures, load_figures, machine_path


@pytest.fixture(scope="module")
def busy(tmp_path_factory: pytest.TempPathFactory):
    """``fusionlab calibrate --quick`` while the load reading says 64 runnable processes:
    its exit status, its messages and the stored file."""
    path = tmp_path_factory.mktemp("cal") / "machine-test.json"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(os, "getloadavg", lambda: (64.0, 64.0, 64.0))
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            status = main(["calibrate", "--quick", "--file", str(path)])
    return status, err.getvalue(), path, load_figures(path)


def test_figures_in_sane_ranges(busy) -> None:
    f = busy[3]
    for where in ("cache", "memory"):
        for kind in ("read", "write"):
            for mode in ("parallel", "serial"):
                bw = f.bandwidth[where][kind][mode]
                assert 1e9 <= bw <= 500e9, (where, kind, mode, bw)
    # a parallel launch waits for every thread to get a time slice: on a machine busier
    # than its cores (measured: 16 ms at a load of 6 on 2 cores) it is slices, not µs
    busier = os.getloadavg()[0] > (os.cpu_count() or 1)
    for mode in ("parallel", "serial"):
        assert 0.1e-6 <= f.launch[mode] <= (100_000e-6 if busier else 1000e-6), (mode, f.launch[mode])
    assert 0 <= f.launch["argument"] <= 100e-6
    assert 0 <= f.launch["run"] <= 10_000e-6
    assert 0 <= f.launch["batch"] <= 10_000e-6
    assert 0 <= f.launch["block"] <= 1000e-6 and f.launch["serial"] <= f.launch["numpy"] <= 1000e-6
    assert "block by block" in format_figures(f)
    assert 0 < f.allocation["fixed"] <= 100e-6
    assert 0 <= f.allocation["per_byte"] <= 1e-8          # at most 10 ms per MB of page faults
    for fam in FAMILIES:
        assert "float64" in f.ops[fam]
        for dt, m in f.ops[fam].items():
            assert dt in DTYPES
            for mode in ("parallel", "serial"):
                assert 1e-13 <= m[mode] <= 1e-6, (fam, dt, mode, m[mode])   # 0.1 ps .. 1 µs per element
    # transcendental functions cost more than an addition on this kind of CPU
    assert f.ops["exp"]["float64"]["serial"] > f.ops["arithmetic"]["float64"]["serial"]
    # the bandwidth curve: every working set but the largest (quick), ascending, sane
    for kind in ("read", "write"):
        for mode in ("parallel", "serial"):
            points = f.curve[kind][mode]
            assert [b for b, _ in points] == [float(x) for x in CURVE_SIZES[:-1]]
            # a units check, not a speed test: a small parallel working set measured while
            # another process holds a core waits for time slices (52-83 MB/s seen here with
            # one competing process), so the floor is 10 MB/s, not the 1 GB/s of a quiet machine
            assert all(1e7 <= bw <= 2000e9 for _, bw in points), (kind, mode, points)
    # contractions: BLAS between 1 and 10,000 GFLOP/s, einsum's loops slower than BLAS
    for dt in ("float64", "float32"):
        assert 1e-13 <= f.flops["gemm"][dt] <= 1e-9, (dt, f.flops["gemm"][dt])
        assert 1e-12 <= f.flops["einsum"][dt] <= 1e-8, (dt, f.flops["einsum"][dt])
        assert f.flops["einsum"][dt] > f.flops["gemm"][dt]
    assert "contraction by gemm" in format_figures(f) and "by working set" in format_figures(f)
    assert f.cores == (os.cpu_count() or 1) and f.threads >= 1 and f.llc_bytes > 0
    assert f.cpu and f.host and f.quick and f.source == "measured"


def test_busy_machine_is_refused_and_stored_as_noisy(busy) -> None:
    status, err, path, figures = busy
    assert status == 1                                   # not silently: a failing status,
    assert "NOISY" in err and "load average 64.00" in err and "--force" in err   # and why
    assert figures.noisy and any("load average 64.00" in r for r in figures.reasons)
    stored = json.loads(path.read_text())
    assert stored["noisy"] is True and stored["reasons"] == list(figures.reasons)
    assert MachineFigures.from_dict(stored) == figures
    assert figures.label.endswith("NOISY")               # the time model's description says so
    text = format_figures(figures)
    assert "NOISY" in text
    for fam in FAMILIES:
        assert f"  {fam} " in text


def test_api_injected_load_and_force(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    # the API takes the load reading as a function; the command line accepts noisy figures with --force
    monkeypatch.setattr(os, "getloadavg", lambda: (64.0, 64.0, 64.0))
    assert read_load() == 64.0
    path = tmp_path / "m.json"
    assert main(["calibrate", "--quick", "--force", "--file", str(path)]) == 0
    assert json.loads(path.read_text())["noisy"] is True
    assert main(["calibrate", "--show", "--file", str(path)]) == 0
    out = capsys.readouterr().out
    assert str(path) in out and "NOISY" in out and "bandwidth GB/s" in out


def test_calibrate_function_does_not_store_when_asked(tmp_path: Path) -> None:
    cal = calibrate(CalibrationOptions(quick=True), path=tmp_path / "x.json", load=lambda: 64.0, store=False)
    assert cal.path is None and not (tmp_path / "x.json").exists() and cal.noisy


def test_show_without_a_file_prints_the_defaults(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calibrate", "--show", "--file", str(tmp_path / "absent.json")]) == 0
    out = capsys.readouterr().out
    assert "absent: the defaults below" in out and "default figures" in out


def test_machine_path_respects_fusionlab_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FUSIONLAB_CACHE", str(tmp_path))
    assert machine_path("h1") == tmp_path / "machine-h1.json"
    monkeypatch.delenv("FUSIONLAB_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "x"))
    assert machine_path("a b") == tmp_path / "x" / "fusionlab" / "machine-a_b.json"
