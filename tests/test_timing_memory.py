"""The memory a comparison times with: glibc held steady while timing (runtime/allocator.py;
benchmarks/README.md "Repeated comparisons": without it the same kernels' rounds took 1.8 or
11.7 ms)."""

from __future__ import annotations

import numpy as np
import pytest

from fusionlab.runtime.allocator import AllocatorState, glibc_present, steady_allocator


@pytest.mark.skipif(not glibc_present(), reason="this C library is not glibc (macOS, musl): mallopt's thresholds "
                    "do not exist there, so the allocator is left as it is and the comparison says so")
def test_steady_allocator_applies_on_glibc_and_comes_back() -> None:
    with steady_allocator() as state:
        assert state == AllocatorState(True)
        assert "mmap threshold 32 MiB" in state.described()
        x = np.ones(1 << 22)   # 32 MiB: served, used, freed inside the block
        assert float(x.sum()) == float(1 << 22)
    with steady_allocator() as again:   # usable again after the block
        assert again.applied


def test_elsewhere_the_allocator_is_left_alone_and_says_so() -> None:
    # on every platform: what the comparison's protocol line reads when glibc is not there
    assert AllocatorState(False, "not glibc").described() == "allocator left as it is (not glibc)"
    with steady_allocator() as state:
        assert state.applied == glibc_present()
