"""``fusionlab calibrate``: figures of the right form and units, stored per machine, and a busy machine's
figures flagged as noisy (the busy load is injected, never made by spinning)."""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path

import pytest

from fusionlab.tools.calibrate import CURVE_SIZES, CalibrationOptions, calibrate, format_figures, read_load
from fusionlab.cli import main
from fusionlab.costs.timemodel import DTYPES, FAMILIES, MachineFigures, load_figures, machine_path


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


def _unit(x: float, low: float, high: float) -> bool:
    """A figure in its unit: finite, positive and within bounds a wrong unit would leave by
    orders of magnitude (bytes/s read as GB/s, seconds as microseconds). The bounds are not
    speeds: a loaded machine (CI runs two test processes at once) measures anything between."""
    return low <= x <= high


def test_figures_have_their_form_and_units(busy) -> None:
    # a measured figure is checked for its form and unit, or against another figure of the
    # same run, never against a speed a busy machine may not reach (BLAS measured at 0.11
    # GFLOP/s while another process ran failed a fixed 1 GFLOP/s floor: issue 32)
    f = busy[3]
    for where in ("cache", "memory"):
        for kind in ("read", "write"):
            for mode in ("parallel", "serial"):
                bw = f.bandwidth[where][kind][mode]
                assert _unit(bw, 1e5, 1e13), (where, kind, mode, bw)   # bytes per second
    for mode in ("parallel", "serial"):
        assert _unit(f.launch[mode], 1e-8, 1.0), (mode, f.launch[mode])   # seconds per launch
    for key in ("argument", "run", "batch", "block", "numpy"):
        assert 0 <= f.launch[key] <= 1.0, (key, f.launch[key])
    assert f.launch["serial"] <= f.launch["numpy"] * 10   # NumPy's per-call cost and the kernel's, one run
    assert "block by block" in format_figures(f)
    assert _unit(f.allocation["fixed"], 1e-9, 0.1)
    assert 0 <= f.allocation["per_byte"] <= 1e-5   # seconds per byte
    for fam in FAMILIES:
        assert "float64" in f.ops[fam]
        for dt, m in f.ops[fam].items():
            assert dt in DTYPES
            for mode in ("parallel", "serial"):
                assert _unit(m[mode], 1e-15, 1e-2), (fam, dt, mode, m[mode])   # seconds per element
    # measured in the same run: a transcendental function costs more than an addition
    assert f.ops["exp"]["float64"]["serial"] > f.ops["arithmetic"]["float64"]["serial"]
    # the bandwidth curve: every working set but the largest (quick), in bytes per second
    for kind in ("read", "write"):
        for mode in ("parallel", "serial"):
            points = f.curve[kind][mode]
            assert [b for b, _ in points] == [float(x) for x in CURVE_SIZES[:-1]]
            assert all(_unit(bw, 1e5, 1e13) for _, bw in points), (kind, mode, points)
    # contractions in seconds per flop (not einsum against BLAS: beside the busy process BLAS
    # measured 7.9e-9 s per flop and einsum 1.3e-10, a clean clone on 2 cores, 2026-12-02)
    for dt in ("float64", "float32"):
        assert _unit(f.flops["gemm"][dt], 1e-15, 1e-5), (dt, f.flops["gemm"][dt])
        assert _unit(f.flops["einsum"][dt], 1e-15, 1e-4), (dt, f.flops["einsum"][dt])
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
