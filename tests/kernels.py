"""The kernel caches the tests share (one per test process: blocks with the same code compile once).

``CHECKED`` compiles every kernel and driver serially with Numba's bounds checks
(:func:`fusionlab.execute.numba_backend.bounds_checked_source`): the programs nobody on the
project wrote (tests/data/unseen), the corpus and the paper's workloads run through it, so an
index outside an array fails their tests with an IndexError instead of corrupting memory
(issue 31). The parallel kernels themselves are run by the other tests (test_numba.py's
``CACHE``, the random-program agreement tests, the driver's thread tests).
"""

from fusionlab.execute.numba_backend import KernelCache

CHECKED = KernelCache(bounds_checked=True)
