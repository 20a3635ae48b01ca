"""A steady memory allocator while a comparison times: the same heap behaviour in every round.

glibc's ``malloc`` serves a large request (NumPy's arrays, the fused kernels' outputs)
either from its heap or from a fresh ``mmap``, and moves the boundary while the program
runs: freeing an mmapped block raises the threshold to that block's size, and trimming
the heap returns memory that the next round faults in again. Which side of the boundary a
round lands on depends on what ran before it. Measured on the four-op chain (one million
float64, ``compare --repeat 7``): NumPy's rounds were 7.4 or 4.0 ms and the one fused
kernel's 1.8 or 11.7 ms, by round, so the same cell's speed-up moved by up to 56 % between
runs (benchmarks/README.md, "Repeated comparisons"). With the threshold fixed at glibc's
largest (32 MiB) and the heap not trimmed while timing, the same rounds were 4.0-4.2 ms and
1.3-1.8 ms.

:func:`steady_allocator` fixes both for the duration of a ``with`` block (the state glibc
itself reaches after freeing a 32 MiB block), then returns the free memory to the system
and leaves a trim threshold of twice the mmap threshold, as glibc's own adjustment would.
Both sides of a comparison run under it: it changes no result, only where memory comes
from. Elsewhere than glibc (macOS, musl) it does nothing and says so.

Examples
--------
>>> with steady_allocator() as state:
...     state.applied in (True, False)
True
>>> isinstance(state.described(), str)
True
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

__all__ = ["AllocatorState", "glibc_present", "steady_allocator", "MMAP_THRESHOLD", "TRIM_WHILE_TIMING"]

#: glibc's mallopt parameters (malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
#: the largest mmap threshold glibc accepts on 64-bit (HEAP_MAX_SIZE / 2)
MMAP_THRESHOLD = 32 * 1024 * 1024
#: no trimming while timing: freed memory stays in the heap for the next round
TRIM_WHILE_TIMING = 1024 * 1024 * 1024
#: after timing: what glibc's own adjustment sets after freeing a block at the threshold
TRIM_AFTER = 2 * MMAP_THRESHOLD


@dataclass(frozen=True)
class AllocatorState:
    """Whether :func:`steady_allocator` could fix the allocator, and why not."""

    applied: bool
    why_not: str = ""

    def described(self) -> str:
        """One line for the comparison's protocol."""
        if self.applied:
            return (f"glibc malloc held steady while timing (mmap threshold {MMAP_THRESHOLD >> 20} MiB, "
                    "no trimming)")
        return f"allocator left as it is ({self.why_not})"


def _glibc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    except OSError:
        return None
    # gnu_get_libc_version exists in glibc only (musl has mallopt as a stub that fails)
    return libc if hasattr(libc, "gnu_get_libc_version") and hasattr(libc, "mallopt") else None


def glibc_present() -> bool:
    """Whether this process runs on glibc, the allocator :func:`steady_allocator` can hold steady.

    >>> isinstance(glibc_present(), bool)
    True
    """
    return _glibc() is not None


@contextmanager
def steady_allocator() -> Iterator[AllocatorState]:
    """Hold glibc's malloc steady inside the block (see the module's text)."""
    libc = _glibc()
    if libc is None:
        yield AllocatorState(False, "not glibc")
        return
    ok = libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1 and libc.mallopt(_M_TRIM_THRESHOLD, TRIM_WHILE_TIMING) == 1
    try:
        yield AllocatorState(ok, "" if ok else "mallopt refused")
    finally:
        libc.mallopt(_M_TRIM_THRESHOLD, TRIM_AFTER)
        if hasattr(libc, "malloc_trim"):
            libc.malloc_trim(0)
