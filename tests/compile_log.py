"""Where the suite's time goes to Numba: a log of every compilation (issue 32).

With ``FUSIONLAB_COMPILE_LOG=<folder>`` set, tests/conftest.py registers
:class:`CompileLog` in every test process: each Numba compilation (a miss of the kernel
cache; a hit compiles nothing and is not logged) appends one JSON line to
``<folder>/<pid>.jsonl``: how long it took, how deep it was nested (a kernel compiled
inside a driver's compilation is depth 2, and its time is inside its parent's), the file
the function came from (``k_``/``kb_``/``d_``/``db_`` + key: a kernel or driver, plain or
bounds-checked) and the test that caused it. ``benchmarks/compile_table.py`` sums the logs
into docs/testing.md's table.

The log adds one file append per compilation and changes nothing else.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

from numba.core import event


class CompileLog(event.Listener):
    """Appends a line per ``numba:compile`` event to ``folder/<pid>.jsonl``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._started: list[float] = []

    def on_start(self, ev: event.Event) -> None:
        self._started.append(time.perf_counter())

    def on_end(self, ev: event.Event) -> None:
        started = self._started.pop()
        code = ev.data["dispatcher"].py_func.__code__
        record: dict[str, Any] = {
            "pid": os.getpid(), "seconds": time.perf_counter() - started, "depth": len(self._started) + 1,
            "file": os.path.basename(code.co_filename), "function": code.co_name,
            "signature": str(ev.data["args"])[:300],
            "test": os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" ", 1)[0],
            "worker": os.environ.get("PYTEST_XDIST_WORKER", ""),
        }
        with open(self.folder / f"{os.getpid()}.jsonl", "a") as f:
            f.write(json.dumps(record) + "\n")


def install_from_environment() -> CompileLog | None:
    """Register a :class:`CompileLog` when ``FUSIONLAB_COMPILE_LOG`` names a folder."""
    folder = os.environ.get("FUSIONLAB_COMPILE_LOG")
    if not folder:
        return None
    Path(folder).mkdir(parents=True, exist_ok=True)
    log = CompileLog(Path(folder))
    event.register("numba:compile", log)
    return log
