"""Shared by the benchmark scripts: timing, and writing a marked section of README.md."""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent


def write_section(name: str, body: str, heading: str) -> str:
    """Replace (or append under ``heading``) the section between ``name``'s markers."""
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    text = f"{start}\n{body}\n{end}"
    readme = HERE / "README.md"
    old = readme.read_text() if readme.exists() else ""
    if start in old and end in old:
        new = old[: old.index(start)] + text + old[old.index(end) + len(end):]
    else:
        new = old.rstrip() + f"\n\n{heading}\n\n{text}\n"
    readme.write_text(new)
    return text


def median_seconds(fn: Callable[[], object], repeat: int = 5) -> float:
    """The median wall time of ``fn`` over ``repeat`` runs, after one warm-up run."""
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)
