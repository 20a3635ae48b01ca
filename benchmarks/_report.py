"""Shared by the benchmark scripts: timing, and writing a marked section of README.md."""

from __future__ import annotations

from pathlib import Path

from fusionlab.support.timing import median_seconds

__all__ = ["HERE", "write_section", "median_seconds"]

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


