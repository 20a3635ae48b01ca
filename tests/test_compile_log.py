"""The compile log of the suite (tests/compile_log.py) and its table (benchmarks/compile_table.py)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import numba
from numba.core import event

from compile_log import CompileLog

_SPEC = importlib.util.spec_from_file_location(
    "compile_table", Path(__file__).resolve().parent.parent / "benchmarks" / "compile_table.py")
assert _SPEC is not None and _SPEC.loader is not None
compile_table = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(compile_table)


def test_a_compilation_is_logged_once_with_its_test_and_a_cache_hit_is_not(tmp_path: Path) -> None:
    log = CompileLog(tmp_path)
    event.register("numba:compile", log)
    try:
        def twice(x: float) -> float:
            return 2.0 * x
        f = numba.njit(twice)
        assert f(1.5) == 3.0 and f(2.5) == 5.0       # one signature: one compilation
        assert f(3) == 6                              # another one (int64)
    finally:
        event.unregister("numba:compile", log)
    records = [json.loads(line) for line in next(tmp_path.glob("*.jsonl")).open()]
    assert [(r["function"], r["depth"]) for r in records] == [("twice", 1), ("twice", 1)]
    assert records[0]["signature"] == "(float64,)" and records[1]["signature"] == "(int64,)"
    assert records[0]["test"].endswith("test_a_compilation_is_logged_once_with_its_test_and_a_cache_hit_is_not")
    assert all(r["seconds"] > 0 for r in records)
    top = compile_table.load(tmp_path)
    assert len(top) == 2 and {compile_table.kind(r) for r in top} == {"other (test_compile_log.py)"}


def test_the_table_names_kernels_and_drivers_by_their_files() -> None:
    def rec(file: str) -> dict[str, object]:
        return {"file": file}
    assert compile_table.kind(rec("k_0123abcd.py")) == "kernel, plain"
    assert compile_table.kind(rec("kb_0123abcd.py")) == "kernel, bounds-checked"
    assert compile_table.kind(rec("db_ff.py")) == "driver, bounds-checked"
    assert compile_table.kind(rec("<hof loop nest>")) == "other (<hof loop nest>)"
    text = compile_table.table({"a": [1.0, 2.0], "b": [4.0]}, "what", 5)
    assert text.splitlines()[2:] == ["| b | 4 | 1 | 4.00 |", "| a | 3 | 2 | 1.50 |"]
