"""Sum the suite's compile log (tests/compile_log.py) into docs/testing.md's table.

Usage::

    FUSIONLAB_COMPILE_LOG=/tmp/compile-log make test     # a cold run: empty .test-cache
    .venv/bin/python benchmarks/compile_table.py /tmp/compile-log

It prints the top-level compilations (a nested one's time is inside its parent's) by what
was compiled (plain or bounds-checked kernels and drivers, other functions) and by test
file, as Markdown tables.
"""

from __future__ import annotations

import collections
import json
import re
import sys
from pathlib import Path
from typing import Any

_KERNEL = re.compile(r"^(k|d)(b?)_[0-9a-f]+\.py$")


def kind(record: dict[str, Any]) -> str:
    """What a compilation compiled: a kernel or driver file of the cache (plain: parallel
    where its loops are; bounds-checked: serial), or another function (by its file)."""
    m = _KERNEL.match(record["file"])
    if m:
        return ("kernel" if m[1] == "k" else "driver") + (", bounds-checked" if m[2] else ", plain")
    return f"other ({record['file']})"


def load(folder: Path) -> list[dict[str, Any]]:
    """The log's top-level compilations."""
    records = [json.loads(line) for f in sorted(folder.glob("*.jsonl")) for line in f.open()]
    return [r for r in records if r["depth"] == 1]


def table(rows: dict[str, list[float]], head: str, limit: int) -> str:
    """A Markdown table of seconds and counts, largest first."""
    out = [f"| {head} | seconds | compilations | seconds each |", "| --- | ---: | ---: | ---: |"]
    for name, secs in sorted(rows.items(), key=lambda kv: -sum(kv[1]))[:limit]:
        out.append(f"| {name} | {sum(secs):,.0f} | {len(secs):,} | {sum(secs) / len(secs):.2f} |")
    return "\n".join(out)


def main(argv: list[str]) -> None:
    top = load(Path(argv[1]))
    by_kind: dict[str, list[float]] = collections.defaultdict(list)
    by_file: dict[str, list[float]] = collections.defaultdict(list)
    for r in top:
        by_kind[kind(r)].append(r["seconds"])
        by_file[r["test"].split("::")[0] or "(outside a test)"].append(r["seconds"])
    print(f"{len(top):,} compilations, {sum(r['seconds'] for r in top):,.0f} s in all\n")
    print(table(by_kind, "what", 12) + "\n")
    print(table(by_file, "test file", 25))


if __name__ == "__main__":
    main(sys.argv)
