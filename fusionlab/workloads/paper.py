"""The 15 benchmark applications of the paper's Table I, written for this project.

Kristensen et al., *Fusion of Array Operations at Runtime*, evaluate their fusers on 15
NumPy programs; ``/work/shared/workloads.md`` describes what each one does. The functions
below are independent NumPy versions written from those descriptions (no Benchpress code).

Every function is self-contained so that ``inspect.getsource`` of it alone is a runnable
program: it imports NumPy itself, takes its sizes, iteration count and seed as keyword
arguments, draws randomness only from ``np.random.default_rng(seed)``, and ends every
iteration of its main loop with one point where Python needs a value (``float(...)``), so
that under capture each iteration is one batch of array operations.

Examples
--------
>>> round(leibnitz_pi(n=1000, iterations=2), 3)
3.141
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # annotations only: each workload imports numpy itself
    import numpy as np

__all__ = [
    "black_scholes",
    "game_of_life",
    "heat_equation",
    "leibnitz_pi",
    "gauss_elimination",
    "lu_factorization",
    "monte_carlo_pi",
    "stencil_27pt",
    "shallow_water",
    "rosenbrock",
    "sor",
    "nbody",
    "nbody_nice",
    "lattice_boltzmann_d3q19",
    "water_ice",
]


def black_scholes(n: int = 256, iterations: int = 3, seed: int = 0) -> "tuple[np.ndarray, float]":
    """Black-Scholes pricing of European call options on an array of stock prices.

    Source: Table I, "Black Scholes" (/work/shared/workloads.md). One iteration computes
    d1 and d2 from log, sqrt and arithmetic on the prices, evaluates the cumulative normal
    CND (a polynomial in K = 1/(1+0.2316419|x|), a mask x<0), averages the call price with
    a sum, and advances time by one day.

    Parameters
    ----------
    n : int
        Number of options (prices).
    iterations : int
        Number of time steps.
    seed : int
        Seed of the random stock prices.

    Returns
    -------
    call : ndarray
        The call prices of the last time step, shape ``(n,)``.
    mean_price : float
        The average call price over all time steps.

    Examples
    --------
    >>> call, mean_price = black_scholes(n=100, iterations=2)
    >>> call.shape, mean_price > 0
    ((100,), True)
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    s = rng.uniform(4.0, 30.0, n)  # stock prices
    strike = 20.0
    rate = 0.08
    volatility = 0.30
    t = 1.0 / 365.0

    def cnd(x: "np.ndarray") -> "np.ndarray":
        a1, a2, a3, a4, a5 = 0.31938153, -0.356563782, 1.781477937, -1.821255978, 1.330274429
        ax = np.abs(x)
        k = 1.0 / (1.0 + 0.2316419 * ax)
        poly = a1 * k + a2 * k**2 + a3 * k**3 + a4 * k**4 + a5 * k**5
        w = 1.0 - 1.0 / np.sqrt(2.0 * np.pi) * np.exp(-ax * ax / 2.0) * poly
        mask = x < 0
        return w * (1 - mask) + (1.0 - w) * mask

    total = 0.0
    call = np.zeros(n)
    for _ in range(iterations):
        d1 = (np.log(s / strike) + (rate + volatility * volatility / 2.0) * t) / (volatility * np.sqrt(t))
        d2 = d1 - volatility * np.sqrt(t)
        call = s * cnd(d1) - strike * np.exp(-rate * t) * cnd(d2)
        total += float(np.sum(call)) / n  # the iteration's value
        t += 1.0 / 365.0
    return call, total / max(iterations, 1)


def game_of_life(n: int = 16, iterations: int = 3, seed: int = 0) -> "tuple[np.ndarray, float]":
    """Conway's Game of Life on an ``(n, n)`` board with a dead border.

    Source: Table I, "Game of Life" (/work/shared/workloads.md). One iteration sums the
    eight neighbour views (shifted slices of one padded base), applies
    ``cells = cells*(neighbours == 2) + (neighbours == 3)`` and counts the live cells.

    Parameters
    ----------
    n : int
        Board side; the padded base has shape ``(n + 2, n + 2)``.
    iterations : int
        Number of generations.
    seed : int
        Seed of the random initial board (about 30 % alive).

    Returns
    -------
    board : ndarray
        The final board, shape ``(n, n)``, ones for live cells.
    alive : float
        The number of live cells after the last generation.

    Examples
    --------
    >>> board, alive = game_of_life(n=8, iterations=2)
    >>> board.shape, alive == float(board.sum())
    ((8, 8), True)
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    full = np.zeros((n + 2, n + 2))
    cells = full[1:-1, 1:-1]
    cells[:] = (rng.random((n, n)) < 0.3).astype(np.float64)
    alive = 0.0
    for _ in range(iterations):
        neighbours = (
            full[:-2, :-2] + full[:-2, 1:-1] + full[:-2, 2:]
            + full[1:-1, :-2] + full[1:-1, 2:]
            + full[2:, :-2] + full[2:, 1:-1] + full[2:, 2:]
        )
        cells[:] = cells * (neighbours == 2) + (neighbours == 3)
        alive = float(cells.sum())
    return full[1:-1, 1:-1], alive


def heat_equation(n: int = 16, iterations: int = 3) -> "tuple[np.ndarray, float]":
    """Jacobi iteration of the 2-D heat equation on an ``(n, n)`` grid with fixed edges.

    Source: Table I, "Heat Equation" (/work/shared/workloads.md). One iteration computes
    ``work = 0.2*(center + north + east + west + south)`` over shifted slices of the padded
    grid, ``delta = sum(abs(work - center))`` and ``center[:] = work``.

    Parameters
    ----------
    n : int
        Interior side; the padded grid has shape ``(n + 2, n + 2)``.
    iterations : int
        Number of Jacobi sweeps.

    Returns
    -------
    grid : ndarray
        The padded grid after the last sweep, shape ``(n + 2, n + 2)``.
    delta : float
        The change ``sum(abs(work - center))`` of the last sweep.

    Examples
    --------
    >>> grid, delta = heat_equation(n=8, iterations=2)
    >>> grid.shape, delta > 0
    ((10, 10), True)
    """
    import numpy as np

    grid = np.zeros((n + 2, n + 2))
    grid[:, 0] = -273.15  # cold left edge
    grid[:, -1] = -273.15  # cold right edge
    grid[0, :] = 40.0  # warm top edge
    grid[-1, :] = -273.15  # cold bottom edge
    center = grid[1:-1, 1:-1]
    north = grid[:-2, 1:-1]
    south = grid[2:, 1:-1]
    east = grid[1:-1, 2:]
    west = grid[1:-1, :-2]
    delta = 0.0
    for _ in range(iterations):
        work = 0.2 * (center + north + east + west + south)
        diff = np.sum(np.abs(work - center))
        center[:] = work
        delta = float(diff)
    return grid, delta


def leibnitz_pi(n: int = 256, iterations: int = 3) -> float:
    """Pi from the Leibniz series, ``iterations`` chunks of ``n`` terms each.

    Source: Table I, "Leibnitz PI" (/work/shared/workloads.md). One iteration takes the
    next ``n`` term indices ``k = arange(...)`` and adds ``sum(1/(4k+1) - 1/(4k+3))``.

    Parameters
    ----------
    n : int
        Terms per iteration.
    iterations : int
        Number of chunks; the series is summed over ``n * iterations`` terms.

    Returns
    -------
    float
        The estimate of pi, ``4 * sum``.

    Examples
    --------
    >>> round(leibnitz_pi(n=10000, iterations=1), 4)
    3.1415
    """
    import numpy as np

    total = 0.0
    for i in range(iterations):
        k = np.arange(i * n, (i + 1) * n, dtype=np.float64)
        total += float(np.sum(1.0 / (4.0 * k + 1.0) - 1.0 / (4.0 * k + 3.0)))
    return 4.0 * total


def gauss_elimination(n: int = 8, iterations: int = 7, seed: int = 0) -> "np.ndarray":
    """Gaussian elimination (no pivoting) of a random diagonally dominant system ``[A | b]``.

    Source: Table I, "Gauss Elimination" (/work/shared/workloads.md). Iteration ``c``
    (column step ``c = 1 .. n-1``) eliminates column ``c-1`` below the diagonal:
    ``a[c:, c-1:] -= (a[c:, c-1] / a[c-1, c-1])[:, None] * a[c-1, c-1:]`` and reads the
    next pivot. Finally every row is divided by its diagonal element.

    The matrix is ``A = rng.random((n, n)) + n*I`` and ``b = rng.random(n)``, drawn in
    that order.

    Parameters
    ----------
    n : int
        Number of equations.
    iterations : int
        Column steps to perform; ``n - 1`` is a complete elimination (more are ignored).
    seed : int
        Seed of the random system.

    Returns
    -------
    ndarray
        The augmented matrix, shape ``(n, n + 1)``: after a complete elimination an upper
        triangular matrix with a unit diagonal, and the transformed right-hand side.

    Examples
    --------
    >>> a = gauss_elimination(n=4, iterations=3)
    >>> a.shape, float(a[3, 3]), bool(abs(a[3, 0]) < 1e-12)
    ((4, 5), 1.0, True)
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    row = np.arange(n)[:, None]
    col = np.arange(n)
    a = np.zeros((n, n + 1))
    a[:, :n] = rng.random((n, n)) + np.where(row == col, float(n), 0.0)
    a[:, n] = rng.random(n)
    for c in range(1, min(iterations, n - 1) + 1):
        a[c:, c - 1:] -= (a[c:, c - 1] / a[c - 1, c - 1])[:, None] * a[c - 1, c - 1:]
        pivot = float(a[c, c])  # the next pivot: Python checks it before dividing by it
        if pivot == 0.0:
            raise ZeroDivisionError(f"zero pivot in row {c}")
    diagonal = np.where(row == col, a[:, :n], 0.0).sum(axis=1)
    a /= diagonal[:, None]
    return a


def lu_factorization(n: int = 8, iterations: int = 7, seed: int = 0) -> "tuple[np.ndarray, np.ndarray]":
    """LU factorization (Doolittle, no pivoting) of a random diagonally dominant matrix.

    Source: Table I, "LU Factorization" (/work/shared/workloads.md). Iteration ``c``
    (``c = 1 .. n-1``) writes the multipliers ``u[c:, c-1] / u[c-1, c-1]`` into
    ``l[c:, c-1]``, updates ``u[c:, c-1:] -= l[c:, c-1][:, None] * u[c-1, c-1:]`` and reads
    the next pivot. The matrix is ``A = rng.random((n, n)) + n*I``.

    Parameters
    ----------
    n : int
        Matrix side.
    iterations : int
        Column steps to perform; ``n - 1`` is a complete factorization.
    seed : int
        Seed of the random matrix.

    Returns
    -------
    l : ndarray
        Unit lower triangular factor, shape ``(n, n)``.
    u : ndarray
        Upper triangular factor, shape ``(n, n)``; ``l @ u`` equals ``A``.

    Examples
    --------
    >>> l, u = lu_factorization(n=4, iterations=3)
    >>> float(l[0, 0]), float(l[0, 3]), bool(abs(u[3, 0]) < 1e-12)
    (1.0, 0.0, True)
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    row = np.arange(n)[:, None]
    col = np.arange(n)
    u = rng.random((n, n)) + np.where(row == col, float(n), 0.0)
    l = np.where(row == col, 1.0, 0.0)
    for c in range(1, min(iterations, n - 1) + 1):
        l[c:, c - 1] = u[c:, c - 1] / u[c - 1, c - 1]
        u[c:, c - 1:] -= l[c:, c - 1][:, None] * u[c - 1, c - 1:]
        pivot = float(u[c, c])  # the next pivot: Python checks it before dividing by it
        if pivot == 0.0:
            raise ZeroDivisionError(f"zero pivot in row {c}")
    return l, u


def monte_carlo_pi(n: int = 256, iterations: int = 3, seed: int = 0) -> float:
    """Monte Carlo estimate of pi from random points in the unit square.

    Source: Table I, "Monte Carlo PI" (/work/shared/workloads.md). One iteration draws
    uniform ``x`` and ``y`` arrays and computes ``4 * sum(sqrt(x*x + y*y) <= 1) / n``.

    Parameters
    ----------
    n : int
        Points per iteration.
    iterations : int
        Number of independent estimates that are averaged.
    seed : int
        Seed of the random points.

    Returns
    -------
    float
        The average of the per-iteration estimates.

    Examples
    --------
    >>> abs(monte_carlo_pi(n=200, iterations=2) - 3.14) < 0.3
    True
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    total = 0.0
    for _ in range(iterations):
        x = rng.random(n)
        y = rng.random(n)
        total += 4.0 * float(np.sum(np.sqrt(x * x + y * y) <= 1.0)) / n
    return total / max(iterations, 1)


def stencil_27pt(n: int = 6, iterations: int = 3) -> "tuple[np.ndarray, float]":
    """A 27-point averaging stencil on an ``(n, n, n)`` grid with a hot block.

    Source: Table I, "27 Point Stencil" (/work/shared/workloads.md). One iteration sets
    ``active[:]`` (the interior) to the mean of the 27 shifted views
    ``grid[i:n-2+i, j:n-2+j, k:n-2+k]`` and measures the change.

    Parameters
    ----------
    n : int
        Grid side, including the fixed one-cell border.
    iterations : int
        Number of sweeps.

    Returns
    -------
    grid : ndarray
        The grid after the last sweep, shape ``(n, n, n)``.
    delta : float
        The change ``sum(abs(new - active))`` of the last sweep.

    Examples
    --------
    >>> grid, delta = stencil_27pt(n=5, iterations=2)
    >>> grid.shape, delta > 0
    ((5, 5, 5), True)
    """
    import numpy as np

    grid = np.zeros((n, n, n))
    lo, hi = n // 4, max(n // 2, n // 4 + 1)
    grid[lo:hi, lo:hi, lo:hi] = 100.0  # the hot block
    active = grid[1:-1, 1:-1, 1:-1]
    delta = 0.0
    for _ in range(iterations):
        acc = np.zeros((n - 2, n - 2, n - 2))
        for i in range(3):
            for j in range(3):
                for k in range(3):
                    acc += grid[i:n - 2 + i, j:n - 2 + j, k:n - 2 + k]
        new = acc / 27.0
        diff = np.sum(np.abs(new - active))
        active[:] = new
        delta = float(diff)
    return grid, delta


def shallow_water(n: int = 12, iterations: int = 3) -> "tuple[np.ndarray, float]":
    """Shallow water equations (two-step Lax-Wendroff) with reflecting walls: a water drop.

    Source: Table I, "Shallow Water" (/work/shared/workloads.md). One iteration writes the
    reflecting boundaries into the first/last rows and columns of ``H, U, V``, computes the
    half-step arrays ``Hx, Ux, Vx`` (from ``[1:, 1:-1]``/``[:-1, 1:-1]`` slices) and
    ``Hy, Uy, Vy`` (from ``[1:-1, 1:]``/``[1:-1, :-1]``), updates the interior of ``H, U, V``
    in place and checks the total water.

    Parameters
    ----------
    n : int
        Interior side; ``H, U, V`` have shape ``(n + 2, n + 2)``.
    iterations : int
        Number of time steps.

    Returns
    -------
    height : ndarray
        The water height ``H`` after the last step, shape ``(n + 2, n + 2)``.
    volume : float
        The total water of the interior after the last step.

    Examples
    --------
    >>> h, volume = shallow_water(n=8, iterations=2)
    >>> h.shape, volume > 64
    ((10, 10), True)
    """
    import numpy as np

    g = 9.8
    dt = 0.02
    dx = 1.0
    dy = 1.0
    h = np.ones((n + 2, n + 2))
    u = np.zeros((n + 2, n + 2))
    v = np.zeros((n + 2, n + 2))
    lo = 1 + n // 4
    hi = lo + max(n // 8, 1)
    h[lo:hi, lo:hi] += 1.0  # the drop
    volume = 0.0
    for _ in range(iterations):
        # reflecting boundaries
        h[:, 0] = h[:, 1]
        u[:, 0] = u[:, 1]
        v[:, 0] = -v[:, 1]
        h[:, -1] = h[:, -2]
        u[:, -1] = u[:, -2]
        v[:, -1] = -v[:, -2]
        h[0, :] = h[1, :]
        u[0, :] = -u[1, :]
        v[0, :] = v[1, :]
        h[-1, :] = h[-2, :]
        u[-1, :] = -u[-2, :]
        v[-1, :] = v[-2, :]

        # first half step, x direction: shape (n + 1, n)
        h_n, h_s = h[1:, 1:-1], h[:-1, 1:-1]
        u_n, u_s = u[1:, 1:-1], u[:-1, 1:-1]
        v_n, v_s = v[1:, 1:-1], v[:-1, 1:-1]
        hx = (h_n + h_s) / 2 - dt / (2 * dx) * (u_n - u_s)
        ux = (u_n + u_s) / 2 - dt / (2 * dx) * (
            (u_n**2 / h_n + g / 2 * h_n**2) - (u_s**2 / h_s + g / 2 * h_s**2)
        )
        vx = (v_n + v_s) / 2 - dt / (2 * dx) * (u_n * v_n / h_n - u_s * v_s / h_s)

        # first half step, y direction: shape (n, n + 1)
        h_e, h_w = h[1:-1, 1:], h[1:-1, :-1]
        u_e, u_w = u[1:-1, 1:], u[1:-1, :-1]
        v_e, v_w = v[1:-1, 1:], v[1:-1, :-1]
        hy = (h_e + h_w) / 2 - dt / (2 * dy) * (v_e - v_w)
        uy = (u_e + u_w) / 2 - dt / (2 * dy) * (v_e * u_e / h_e - v_w * u_w / h_w)
        vy = (v_e + v_w) / 2 - dt / (2 * dy) * (
            (v_e**2 / h_e + g / 2 * h_e**2) - (v_w**2 / h_w + g / 2 * h_w**2)
        )

        # second half step on the interior
        h[1:-1, 1:-1] -= (dt / dx) * (ux[1:, :] - ux[:-1, :]) + (dt / dy) * (vy[:, 1:] - vy[:, :-1])
        u[1:-1, 1:-1] -= (dt / dx) * (
            (ux[1:, :] ** 2 / hx[1:, :] + g / 2 * hx[1:, :] ** 2)
            - (ux[:-1, :] ** 2 / hx[:-1, :] + g / 2 * hx[:-1, :] ** 2)
        ) + (dt / dy) * (
            vy[:, 1:] * uy[:, 1:] / hy[:, 1:] - vy[:, :-1] * uy[:, :-1] / hy[:, :-1]
        )
        v[1:-1, 1:-1] -= (dt / dx) * (
            ux[1:, :] * vx[1:, :] / hx[1:, :] - ux[:-1, :] * vx[:-1, :] / hx[:-1, :]
        ) + (dt / dy) * (
            (vy[:, 1:] ** 2 / hy[:, 1:] + g / 2 * hy[:, 1:] ** 2)
            - (vy[:, :-1] ** 2 / hy[:, :-1] + g / 2 * hy[:, :-1] ** 2)
        )
        volume = float(np.sum(h[1:-1, 1:-1]))
    return h, volume


def rosenbrock(n: int = 256, iterations: int = 3, seed: int = 0) -> float:
    """The Rosenbrock function of a random point in ``n`` dimensions.

    Source: Table I, "Rosenbrock" (/work/shared/workloads.md). One iteration evaluates
    ``sum(100*(x[1:] - x[:-1]**2)**2 + (1 - x[:-1])**2)``.

    Parameters
    ----------
    n : int
        Dimension (number of elements of ``x``).
    iterations : int
        Number of evaluations.
    seed : int
        Seed of the random point, uniform in ``[-2, 2)``.

    Returns
    -------
    float
        The function value (the same in every iteration).

    Examples
    --------
    >>> rosenbrock(n=200, iterations=2) > 0
    True
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    x = rng.uniform(-2.0, 2.0, n)
    value = 0.0
    for _ in range(iterations):
        value = float(np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2))
    return value


def sor(n: int = 16, iterations: int = 3) -> "tuple[np.ndarray, float]":
    """Red-black relaxation of the 2-D Laplace equation on four quarter grids.

    Source: Table I, "Successive over-relaxation" (/work/shared/workloads.md). The interior
    (``n`` even) is split into four strided quarter grids r0, r1 (red) and b0, b1 (black).
    One iteration updates ``X[sl] = (X[sl] + four shifted neighbours) * 0.2`` in place in
    the order r1, r0, b1, b0 and sums the four ``sum(abs(diff))`` into ``delta``.

    Parameters
    ----------
    n : int
        Interior side (even); the padded grid has shape ``(n + 2, n + 2)``.
    iterations : int
        Number of red-black sweeps.

    Returns
    -------
    grid : ndarray
        The padded grid after the last sweep.
    delta : float
        The change of the last sweep.

    Examples
    --------
    >>> grid, delta = sor(n=8, iterations=2)
    >>> grid.shape, delta > 0
    ((10, 10), True)
    """
    import numpy as np

    if n % 2:
        raise ValueError("sor needs an even n")
    grid = np.zeros((n + 2, n + 2))
    grid[0, :] = 1.0  # hot top edge

    def quarter(r: int, c: int) -> "np.ndarray":
        return grid[r:r + n:2, c:c + n:2]

    # (row, column) of the first element of each quarter, in update order r1, r0, b1, b0
    starts = [(2, 2), (1, 1), (2, 1), (1, 2)]
    delta = 0.0
    for _ in range(iterations):
        diffs = []
        for r, c in starts:
            x = quarter(r, c)
            new = (x + quarter(r - 1, c) + quarter(r + 1, c) + quarter(r, c - 1) + quarter(r, c + 1)) * 0.2
            diffs.append(np.sum(np.abs(new - x)))
            x[:] = new
        delta = float(diffs[0] + diffs[1] + diffs[2] + diffs[3])
    return grid, delta


def nbody(n: int = 16, iterations: int = 3, seed: int = 0) -> "tuple[np.ndarray, np.ndarray, np.ndarray, float]":
    """Direct-sum gravitational N-body simulation.

    Source: Table I, "NBody" (/work/shared/workloads.md). One iteration forms the pairwise
    differences ``dx = x[:, None] - x`` (and dy, dz), ``r`` with the diagonal set to 1,
    ``F = G*m[:, None]*d/r**3`` with the diagonal zeroed, ``v += dt*sum(F, axis=0)``,
    ``x += dt*v``, and the kinetic energy.

    Parameters
    ----------
    n : int
        Number of bodies.
    iterations : int
        Number of time steps.
    seed : int
        Seed of the random positions, masses and velocities.

    Returns
    -------
    x, y, z : ndarray
        Final positions, each shape ``(n,)``.
    energy : float
        The kinetic energy after the last step.

    Examples
    --------
    >>> x, y, z, energy = nbody(n=8, iterations=2)
    >>> x.shape, energy > 0
    ((8,), True)
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    g = 1.0
    dt = 1e-3
    x = rng.random(n)
    y = rng.random(n)
    z = rng.random(n)
    m = rng.uniform(0.5, 1.5, n) / n
    vx = rng.normal(0.0, 0.01, n)
    vy = rng.normal(0.0, 0.01, n)
    vz = rng.normal(0.0, 0.01, n)
    diagonal = np.where(np.arange(n)[:, None] == np.arange(n), 1.0, 0.0)
    off_diagonal = 1.0 - diagonal
    energy = 0.0
    for _ in range(iterations):
        dx = x[:, None] - x
        dy = y[:, None] - y
        dz = z[:, None] - z
        r = np.sqrt(dx * dx + dy * dy + dz * dz) + diagonal  # the diagonal becomes 1
        scale = g * m[:, None] / (r * r * r) * off_diagonal
        vx += dt * np.sum(scale * dx, axis=0)
        vy += dt * np.sum(scale * dy, axis=0)
        vz += dt * np.sum(scale * dz, axis=0)
        x += dt * vx
        y += dt * vy
        z += dt * vz
        energy = float(np.sum(0.5 * m * (vx * vx + vy * vy + vz * vz)))
    return x, y, z, energy


def nbody_nice(
    planets: int = 4, asteroids: int = 50, iterations: int = 3, seed: int = 0
) -> "tuple[np.ndarray, np.ndarray, float]":
    """N-body simulation of a few planets and many massless-ish asteroids.

    Source: Table I, "NBody Nice" (/work/shared/workloads.md). A nested force function
    computes ``N x M`` differences, ``pm = b.m * a.m[:, None]``, ``r`` and
    ``F = G*pm/r**2*(d/r)``. One iteration updates velocities by ``sum(F, axis=1)/m*dt``
    for planet-planet and asteroid-planet forces, then positions, then the kinetic energy.

    Parameters
    ----------
    planets : int
        Number of planets (they attract each other and the asteroids).
    asteroids : int
        Number of asteroids (they feel the planets only).
    iterations : int
        Number of time steps.
    seed : int
        Seed of the random initial state.

    Returns
    -------
    planet_positions : ndarray
        Shape ``(3, planets)``.
    asteroid_positions : ndarray
        Shape ``(3, asteroids)``.
    energy : float
        The total kinetic energy after the last step.

    Examples
    --------
    >>> p, a, energy = nbody_nice(planets=3, asteroids=10, iterations=2)
    >>> p.shape, a.shape, energy > 0
    ((3, 3), (3, 10), True)
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    g = 1.0
    dt = 1e-3
    pp = rng.uniform(-1.0, 1.0, (3, planets))  # planet positions
    pv = rng.normal(0.0, 0.1, (3, planets))  # planet velocities
    pm = rng.uniform(0.5, 1.0, planets)  # planet masses
    ap = rng.uniform(-3.0, 3.0, (3, asteroids))
    av = rng.normal(0.0, 0.1, (3, asteroids))
    am = rng.uniform(1e-6, 1e-5, asteroids)
    planet_diagonal = np.where(np.arange(planets)[:, None] == np.arange(planets), 1.0, 0.0)

    def forces(
        a_pos: "np.ndarray", a_m: "np.ndarray", b_pos: "np.ndarray", b_m: "np.ndarray", diagonal: "np.ndarray | None"
    ) -> "tuple[np.ndarray, np.ndarray, np.ndarray]":
        """Forces on the bodies ``a`` (rows) from the bodies ``b`` (columns)."""
        dx = b_pos[0] - a_pos[0][:, None]
        dy = b_pos[1] - a_pos[1][:, None]
        dz = b_pos[2] - a_pos[2][:, None]
        masses = b_m * a_m[:, None]
        r = np.sqrt(dx * dx + dy * dy + dz * dz)
        if diagonal is not None:
            r = r + diagonal  # self pairs: d = 0, so r = 1 gives F = 0
        f = g * masses / (r * r)
        return f * (dx / r), f * (dy / r), f * (dz / r)

    energy = 0.0
    for _ in range(iterations):
        fx, fy, fz = forces(pp, pm, pp, pm, planet_diagonal)
        pv[0] += np.sum(fx, axis=1) / pm * dt
        pv[1] += np.sum(fy, axis=1) / pm * dt
        pv[2] += np.sum(fz, axis=1) / pm * dt
        fx, fy, fz = forces(ap, am, pp, pm, None)
        av[0] += np.sum(fx, axis=1) / am * dt
        av[1] += np.sum(fy, axis=1) / am * dt
        av[2] += np.sum(fz, axis=1) / am * dt
        pp += pv * dt
        ap += av * dt
        energy = float(0.5 * (np.sum(pm * (pv * pv).sum(axis=0)) + np.sum(am * (av * av).sum(axis=0))))
    return pp, ap, energy


def lattice_boltzmann_d3q19(
    nx: int = 6, ny: int = 5, nz: int = 4, iterations: int = 3, omega: float = 1.0
) -> "tuple[np.ndarray, np.ndarray, float]":
    """Lattice Boltzmann (D3Q19, BGK) flow past a block in a periodic box.

    Source: Table I, "Lattice Boltzmann D3Q19" (/work/shared/workloads.md). ``F`` has shape
    ``(19, nx, ny, nz)``. One iteration streams ``F`` into ``T`` with periodic
    shifted-slice copies (60 of them), computes the density (sum over axis 0), the
    velocities (signed plane sums / density) and the 19 equilibrium planes
    ``w*rho*(1 + 3cu + 4.5cu**2 - 1.5|u|**2)``, and writes
    ``F = fluid*((1-omega)*T + omega*FEQ) + solid*T[opposite]`` (bounce-back), then the
    x momentum.

    Parameters
    ----------
    nx, ny, nz : int
        Box size (each at least 3).
    iterations : int
        Number of time steps.
    omega : float
        Relaxation parameter (``1 / tau``).

    Returns
    -------
    density : ndarray
        The density of the last step, shape ``(nx, ny, nz)``.
    f : ndarray
        The distributions after the last step, shape ``(19, nx, ny, nz)``.
    momentum : float
        The total x momentum of the last step.

    Examples
    --------
    >>> rho, f, momentum = lattice_boltzmann_d3q19(nx=4, ny=4, nz=4, iterations=2)
    >>> f.shape, round(float(rho.sum()), 6), momentum > 0
    ((19, 4, 4, 4), 64.0, True)
    """
    import numpy as np

    # the 19 velocities: rest, 6 faces, 12 edges; weights 1/3, 1/18, 1/36
    velocities = [(0, 0, 0)]
    velocities += [(1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1)]
    for a in (1, -1):
        for b in (1, -1):
            velocities += [(a, b, 0), (a, 0, b), (0, a, b)]
    weights = [1.0 / 3.0] + [1.0 / 18.0] * 6 + [1.0 / 36.0] * 12
    opposite = [velocities.index((-cx, -cy, -cz)) for cx, cy, cz in velocities]

    def equilibrium_plane(
        q: int, rho: "np.ndarray", ux: "np.ndarray", uy: "np.ndarray", uz: "np.ndarray", usq: "np.ndarray"
    ) -> "np.ndarray":
        cx, cy, cz = velocities[q]
        if velocities[q] == (0, 0, 0):
            return weights[q] * rho * (1.0 - 1.5 * usq)
        cu = 0.0
        for c, u in ((cx, ux), (cy, uy), (cz, uz)):
            if c == 1:
                cu = cu + u
            elif c == -1:
                cu = cu - u
        return weights[q] * rho * (1.0 + 3.0 * cu + 4.5 * cu * cu - 1.5 * usq)

    def signed_sum(t: "np.ndarray", axis: int) -> "np.ndarray":
        """Sum of the planes moving in +axis minus the planes moving in -axis."""
        plus = [q for q in range(19) if velocities[q][axis] == 1]
        minus = [q for q in range(19) if velocities[q][axis] == -1]
        acc = t[plus[0]] + t[plus[1]] + t[plus[2]] + t[plus[3]] + t[plus[4]]
        return acc - t[minus[0]] - t[minus[1]] - t[minus[2]] - t[minus[3]] - t[minus[4]]

    def shifts(c: int) -> "list[tuple[slice, slice]]":
        """(destination, source) slice pairs of a periodic shift by ``c`` along one axis."""
        if c == 1:
            return [(slice(1, None), slice(None, -1)), (slice(0, 1), slice(-1, None))]
        if c == -1:
            return [(slice(None, -1), slice(1, None)), (slice(-1, None), slice(0, 1))]
        return [(slice(None), slice(None))]

    # a solid block in the middle of the box
    solid = np.zeros((nx, ny, nz))
    solid[nx // 3:nx // 3 + max(nx // 5, 1), ny // 3:ny // 3 + max(ny // 3, 1), :] = 1.0
    fluid = 1.0 - solid

    # start at equilibrium: density 1, velocity 0.05 in x in the fluid
    f = np.zeros((19, nx, ny, nz))
    t = np.zeros((19, nx, ny, nz))
    rho0 = np.ones((nx, ny, nz))
    ux0 = 0.05 * fluid
    zero = np.zeros((nx, ny, nz))
    for q in range(19):
        f[q] = equilibrium_plane(q, rho0, ux0, zero, zero, ux0 * ux0)

    momentum = 0.0
    for _ in range(iterations):
        # streaming: T[q] = F[q] shifted periodically by the velocity of q
        t[0] = f[0]
        for q in range(1, 19):
            cx, cy, cz = velocities[q]
            for dx, sx in shifts(cx):
                for dy, sy in shifts(cy):
                    for dz, sz in shifts(cz):
                        t[q, dx, dy, dz] = f[q, sx, sy, sz]
        # macroscopic quantities
        rho = np.sum(t, axis=0)
        ux = signed_sum(t, 0) / rho
        uy = signed_sum(t, 1) / rho
        uz = signed_sum(t, 2) / rho
        usq = ux * ux + uy * uy + uz * uz
        # collision in the fluid, bounce-back in the solid
        for q in range(19):
            feq = equilibrium_plane(q, rho, ux, uy, uz, usq)
            f[q] = fluid * ((1.0 - omega) * t[q] + omega * feq) + solid * t[opposite[q]]
        momentum = float(np.sum(rho * ux))
    return np.sum(f, axis=0), f, momentum


def water_ice(
    nl: int = 8, nw: int = 6, iterations: int = 3, seed: int = 0
) -> "tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]":
    """A four-layer ocean column model with sea ice, advanced by forward Euler.

    Source: Table I, "Water-Ice Simulation" (/work/shared/workloads.md). State arrays have
    shape ``(iterations + 1, nl, nw, 4)`` (ice: ``(iterations + 1, nl, nw)``). One step
    evaluates the UNESCO seawater density and heat capacity polynomials in S and T, the
    vertical, horizontal and diagonal heat/salt fluxes (``[0:nl-1]``/``[1:nl]`` slice
    differences into zero-padded arrays) and the surface heat loss, then freezes or melts
    ice with masked blends, writes time slice ``[i + 1]`` and reads the ice volume.

    Parameters
    ----------
    nl, nw : int
        Grid size (length and width), each at least 2.
    iterations : int
        Number of forward Euler steps (one day each).
    seed : int
        Seed of the random initial temperature, salinity and ice.

    Returns
    -------
    temperature, salinity : ndarray
        The final ocean state, each shape ``(nl, nw, 4)``.
    ice_height, ice_cover : ndarray
        The final ice thickness (m) and cover fraction, each shape ``(nl, nw)``.
    ice_volume : float
        Sum of the ice thickness over the grid after the last step.

    Examples
    --------
    >>> temperature, salinity, height, cover, volume = water_ice(nl=4, nw=3, iterations=2)
    >>> temperature.shape, height.shape, volume > 0
    ((4, 3, 4), (4, 3), True)
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    layers = 4
    dt = 86400.0  # s
    dz = 10.0  # m, layer thickness
    rho_ice = 917.0  # kg/m^3
    latent = 3.34e5  # J/kg
    s_ice = 5.0  # salinity of sea ice
    k_air = 20.0  # W/m^2/K, open water to air
    k_ice = 2.0  # W/m/K, conduction through ice
    heat_k = (20.0, 12.0, 6.0)  # W/m^2/K: vertical, horizontal, diagonal exchange
    salt_k = (0.04, 0.02, 0.01)  # per step: vertical, horizontal, diagonal exchange

    temp = np.zeros((iterations + 1, nl, nw, layers))
    salt = np.zeros((iterations + 1, nl, nw, layers))
    height = np.zeros((iterations + 1, nl, nw))
    cover = np.zeros((iterations + 1, nl, nw))
    depth = np.arange(layers) / (layers - 1)
    temp[0] = rng.uniform(-1.8, -1.0, (nl, nw, 1)) + 3.0 * depth
    salt[0] = rng.uniform(33.0, 34.0, (nl, nw, 1)) + 0.8 * depth
    height[0] = np.maximum(rng.uniform(-0.5, 1.0, (nl, nw)), 0.0)
    cover[0] = (height[0] > 0.0) * 1.0
    air = np.linspace(-20.0, -5.0, nl)[:, None] + np.zeros((nl, nw))  # air temperature

    def density(s: "np.ndarray", t: "np.ndarray") -> "np.ndarray":
        """UNESCO (EOS-80) density of seawater at the surface, kg/m^3."""
        rho_w = 999.842594 + t * (6.793952e-2 + t * (-9.095290e-3 + t * (1.001685e-4 + t * (-1.120083e-6 + t * 6.536332e-9))))
        a = 0.824493 + t * (-4.0899e-3 + t * (7.6438e-5 + t * (-8.2467e-7 + t * 5.3875e-9)))
        b = -5.72466e-3 + t * (1.0227e-4 - t * 1.6546e-6)
        return rho_w + a * s + b * s**1.5 + 4.8314e-4 * s * s

    def heat_capacity(s: "np.ndarray", t: "np.ndarray") -> "np.ndarray":
        """UNESCO (Millero) specific heat of seawater at the surface, J/kg/K."""
        cp0 = 4217.4 + t * (-3.720283 + t * (0.1412855 + t * (-2.654387e-3 + t * 2.093236e-5)))
        a = -7.64357 + t * (0.1072763 - t * 1.38385e-3)
        b = 0.1770383 + t * (-4.07718e-3 + t * 5.148e-5)
        return cp0 + a * s + b * s * s**0.5

    def exchange(x: "np.ndarray", kv: float, kh: float, kd: float) -> "np.ndarray":
        """Net inflow per cell from the neighbouring layers and columns (x: nl, nw, 4)."""
        vertical = np.zeros((nl, nw, layers + 1))
        vertical[:, :, 1:layers] = kv * (x[:, :, 0:layers - 1] - x[:, :, 1:layers])
        along = np.zeros((nl + 1, nw, layers))
        along[1:nl] = kh * (x[0:nl - 1] - x[1:nl])
        across = np.zeros((nl, nw + 1, layers))
        across[:, 1:nw] = kh * (x[:, 0:nw - 1] - x[:, 1:nw])
        diagonal = np.zeros((nl + 1, nw + 1, layers))
        diagonal[1:nl, 1:nw] = kd * (x[0:nl - 1, 0:nw - 1] - x[1:nl, 1:nw])
        return (
            vertical[:, :, :-1] - vertical[:, :, 1:]
            + along[:-1] - along[1:]
            + across[:, :-1] - across[:, 1:]
            + diagonal[:-1, :-1] - diagonal[1:, 1:]
        )

    volume = 0.0
    for i in range(iterations):
        t, s, h, a = temp[i], salt[i], height[i], cover[i]
        heat = density(s, t) * heat_capacity(s, t) * dz  # J/m^2/K per layer
        s0 = s[:, :, 0]
        freezing = -0.0575 * s0 + 1.710523e-3 * s0**1.5 - 2.154996e-4 * s0 * s0
        # heat lost at the surface: open water and through the ice (W/m^2)
        loss = (1.0 - a) * k_air * (t[:, :, 0] - air) + a * k_ice * (freezing - air) / (h + 0.1)
        flux = exchange(t, *heat_k)
        flux[:, :, 0] -= loss
        new_t = t + dt * flux / heat
        new_s = s + exchange(s, *salt_k)
        top = new_t[:, :, 0]
        top_heat = heat[:, :, 0]
        # supercooled surface water freezes; warm water under ice melts it
        cold = top < freezing
        growth = cold * (freezing - top) * top_heat / (rho_ice * latent)
        top = cold * freezing + (1 - cold) * top
        warm = (top > freezing) * (h > 0.0)
        melt = np.minimum(h, warm * (top - freezing) * top_heat / (rho_ice * latent))
        top = top - melt * rho_ice * latent / top_heat
        new_h = h + growth - melt
        brine = (growth - melt) * rho_ice / (1025.0 * dz)
        new_s[:, :, 0] = new_s[:, :, 0] + brine * (new_s[:, :, 0] - s_ice)
        new_a = cold * np.minimum(a + 2.0 * growth, 1.0) + (1 - cold) * a * (new_h > 0.01)
        new_t[:, :, 0] = top
        temp[i + 1] = new_t
        salt[i + 1] = new_s
        height[i + 1] = new_h
        cover[i + 1] = new_a
        volume = float(np.sum(height[i + 1]))
    return temp[iterations], salt[iterations], height[iterations], cover[iterations], volume
