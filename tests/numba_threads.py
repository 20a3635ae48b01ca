"""A test helper: Numba's thread count for a block, restored after."""

from __future__ import annotations

import contextlib
from typing import Iterator

import numba


@contextlib.contextmanager
def threads(n: int) -> Iterator[None]:
    """Numba's thread count for the block (this thread's mask), restored after."""
    before = numba.get_num_threads()
    numba.set_num_threads(n)
    try:
        yield
    finally:
        numba.set_num_threads(before)
