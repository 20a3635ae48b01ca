"""The memory a comparison times with: glibc held steady while timing (runtime/allocator.py;
benchmarks/README.md "Repeated comparisons": without it the same kernels' rounds took 1.8 or
11.7 ms)."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from fusionlab.runtime.allocator import AllocatorState, steady_allocator


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc only")
def test_steady_allocator_applies_on_glibc_and_comes_back() -> None:
    with steady_allocator() as state:
        assert state == AllocatorState(True)
        assert "mmap threshold 32 MiB" in state.described()
        x = np.ones(1 << 22)   # 32 MiB: served, used, freed inside the block
        assert float(x.sum()) == float(1 << 22)
    with steady_allocator() as again:   # usable again after the block
        assert again.applied
    assert AllocatorState(False, "not glibc").described() == "allocator left as it is (not glibc)"
