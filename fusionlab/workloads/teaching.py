"""Small teaching programs: the paper's Fig. 1 and Fig. 3 examples and a few classics.

Like the programs in :mod:`fusionlab.workloads.paper`, each function is self-contained
(``inspect.getsource`` of it alone runs), imports NumPy itself and ends each iteration of
its main loop (if it has one) with one point where Python needs a value.

Examples
--------
>>> fig3().shape
(5,)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: each workload imports numpy itself
    import numpy as np

__all__ = ["fig3", "fig1_loops", "softmax", "stencil_2d", "normalize2"]


def fig3() -> "np.ndarray":
    """The synthetic program of the paper's Fig. 3a (its sizes are fixed).

    Source: Kristensen et al., *Fusion of Array Operations at Runtime*, Fig. 3a. One run
    (there is no loop) is the 17-instruction program of Fig. 3b: copies and additions of
    zero arrays, a product ``T = A * B`` and ``np.maximum``/``np.minimum`` into views.

    Returns
    -------
    ndarray
        ``D``, shape ``(5,)`` (all zeros, since every array starts at zero).

    Examples
    --------
    >>> fig3()
    array([0., 0., 0., 0., 0.])
    """
    import numpy as np

    A = np.zeros(4)
    B = np.zeros(4)
    D = np.zeros(5)
    E = np.zeros(5)
    A += D[:-1]
    A[:] = D[:-1]
    B += E[:-1]
    B[:] = E[:-1]
    T = A * B
    np.maximum(T, E[1:], out=D[1:])
    np.minimum(T, D[1:], out=E[1:])
    return D


def fig1_loops(n: int = 256, iterations: int = 3, seed: int = 0) -> "tuple[np.ndarray, float]":
    """The loop pair of the paper's Fig. 1a as array code: ``T = B * A; A += T``.

    Source: Kristensen et al., *Fusion of Array Operations at Runtime*, Fig. 1a (two loops
    over ``n`` elements that fusion turns into one, contracting ``T``). One iteration runs
    the pair and reads ``sum(A)``.

    Parameters
    ----------
    n : int
        Number of elements of ``A`` and ``B``.
    iterations : int
        How often the pair runs.
    seed : int
        Seed of the random ``A`` and ``B`` (uniform in ``[0, 1)``).

    Returns
    -------
    a : ndarray
        ``A`` after the last iteration, shape ``(n,)``.
    checksum : float
        ``sum(A)`` after the last iteration.

    Examples
    --------
    >>> a, checksum = fig1_loops(n=10, iterations=2)
    >>> a.shape, bool(abs(checksum - a.sum()) < 1e-9)
    ((10,), True)
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    A = rng.random(n)
    B = rng.random(n)
    checksum = 0.0
    for _ in range(iterations):
        T = B * A
        A += T
        checksum = float(A.sum())
    return A, checksum


def softmax(rows: int = 8, cols: int = 32, seed: int = 0) -> "np.ndarray":
    """Row-wise softmax of a random ``(rows, cols)`` matrix.

    Source: the classic numerically stable softmax (a common fusion example). One run (no
    loop): subtract each row's maximum, exponentiate, divide by the row sum.

    Parameters
    ----------
    rows, cols : int
        Matrix shape.
    seed : int
        Seed of the standard normal input.

    Returns
    -------
    ndarray
        Shape ``(rows, cols)``; every row is positive and sums to 1.

    Examples
    --------
    >>> p = softmax(rows=3, cols=4)
    >>> p.shape, bool(abs(p.sum(axis=1) - 1).max() < 1e-12)
    ((3, 4), True)
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    x = rng.normal(0.0, 1.0, (rows, cols))
    e = np.exp(x - x.max(axis=1)[:, None])
    return e / e.sum(axis=1)[:, None]


def stencil_2d(n: int = 16, iterations: int = 3) -> "tuple[np.ndarray, float]":
    """A 5-point Jacobi stencil for the Laplace equation on an ``(n, n)`` grid.

    Source: the textbook Jacobi iteration (a classroom example of fusing shifted views).
    One iteration sets the interior to the mean of its four neighbours
    ``0.25*(north + south + east + west)`` and reads the change ``sum(abs(new - old))``.

    Parameters
    ----------
    n : int
        Interior side; the padded grid has shape ``(n + 2, n + 2)`` with a hot top edge.
    iterations : int
        Number of sweeps.

    Returns
    -------
    grid : ndarray
        The padded grid after the last sweep.
    delta : float
        The change of the last sweep.

    Examples
    --------
    >>> grid, delta = stencil_2d(n=4, iterations=1)
    >>> grid.shape, delta
    ((6, 6), 1.0)
    """
    import numpy as np

    grid = np.zeros((n + 2, n + 2))
    grid[0, :] = 1.0  # hot top edge
    center = grid[1:-1, 1:-1]
    delta = 0.0
    for _ in range(iterations):
        new = 0.25 * (grid[:-2, 1:-1] + grid[2:, 1:-1] + grid[1:-1, 2:] + grid[1:-1, :-2])
        diff = np.sum(np.abs(new - center))
        center[:] = new
        delta = float(diff)
    return grid, delta


def normalize2(n: int = 256, seed: int = 0) -> "tuple[np.ndarray, np.ndarray]":
    """Normalize an array by its sum and by the sum of its positive elements.

    Source: Robinson, Keller and Lippmeier, *Fusing Filters with Integer Linear
    Programming* (the ``normalize2`` example). One run (no loop): ``sum1 = sum(xs)``, the
    filter ``gts = xs[xs > 0]``, ``sum2 = sum(gts)``, then ``xs / sum1`` and ``xs / sum2``.

    Parameters
    ----------
    n : int
        Number of elements of ``xs``.
    seed : int
        Seed of ``xs`` (normal with mean 0.5 and standard deviation 1).

    Returns
    -------
    by_sum : ndarray
        ``xs / sum(xs)``.
    by_positive_sum : ndarray
        ``xs / sum(xs[xs > 0])``.

    Examples
    --------
    >>> by_sum, by_positive_sum = normalize2(n=100)
    >>> round(float(by_sum.sum()), 9)
    1.0
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    xs = rng.normal(0.5, 1.0, n)
    sum1 = np.sum(xs)
    gts = xs[xs > 0]  # the filter: a boolean mask, the one data-dependent shape here
    sum2 = np.sum(gts)
    return xs / sum1, xs / sum2
