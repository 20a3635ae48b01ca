"""A corpus of realistic NumPy programs, written the way people write them.

The paper's workloads (:mod:`fusionlab.workloads.paper`) are benchmark kernels written for
a fusing runtime. The programs here are the code users bring to a notebook: in-place
updates of interior views (``u[1:-1, 1:-1] += ...``), fresh arrays allocated every step,
boundary elements set one by one, diagonal views (``np.einsum("ii->i", a)``,
``a.flat[::n + 1]``, ``np.lib.stride_tricks.as_strided`` and the old ``strides`` setter),
dictionaries and lists of arrays, float32 and integer/bool arrays throughout, Monte-Carlo
with many draws from one ``np.random.default_rng``, small matrices factored in Python loops
by row operations on views, masked assignments, fancy indexing and reductions that end a
batch. None of them imports fusionlab.

Like the other workloads, each function is self-contained (``inspect.getsource`` of it alone
runs), imports NumPy itself, draws randomness only from ``np.random.default_rng(seed)`` and
takes its sizes as keyword arguments; most end every iteration of their main loop with one
value Python needs (``float(...)``), which ends a captured batch.

Examples
--------
>>> u, v, mean_v = gray_scott(n=8, steps=2, iterations=1)
>>> u.shape, 0.0 < mean_v < 1.0
((10, 10), True)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # annotations only: each program imports numpy itself
    import numpy as np

__all__ = [
    "gray_scott",
    "wave_1d",
    "heat_f32",
    "image_blur",
    "life_uint8",
    "sir_dict",
    "particles_box",
    "nbody_pairwise",
    "kmeans_step",
    "black_scholes_f32",
    "asian_option_mc",
    "softmax_logsumexp",
    "histogram_equalize",
    "covariance_shrinkage",
    "gauss_pivot",
    "lu_rows",
    "dense_relu",
    "jacobi_poisson",
    "charge_deposit",
]


def gray_scott(n: int = 16, steps: int = 4, iterations: int = 2) -> "tuple[np.ndarray, np.ndarray, float]":
    """Gray-Scott reaction-diffusion: two fields, 5-point Laplacians, in-place interior updates.

    Source: fusionlab corpus (the classic Pearson 1993 pattern-forming system, as written
    in tutorials). ``steps`` explicit Euler steps update the interior views of ``u`` and
    ``v`` in place (``uc += ...``) from Laplacians of shifted slices; then the mean of
    ``v`` is read. The edges stay fixed (``u = 1``, ``v = 0``).

    Parameters
    ----------
    n : int
        Interior side; the fields have shape ``(n + 2, n + 2)``.
    steps : int
        Time steps per iteration (one captured batch).
    iterations : int
        Number of batches.

    Returns
    -------
    u, v : ndarray
        The two fields after ``steps * iterations`` steps.
    mean_v : float
        The mean of ``v``'s interior after the last step.

    Examples
    --------
    >>> u, v, m = gray_scott(n=8, steps=1, iterations=1)
    >>> float(u[0, 0]), float(v[0, 0])
    (1.0, 0.0)
    """
    import numpy as np

    du, dv, feed, kill = 0.16, 0.08, 0.035, 0.065
    u = np.ones((n + 2, n + 2))
    v = np.zeros((n + 2, n + 2))
    lo, hi = n // 2 - n // 8, n // 2 + n // 8 + 1
    u[lo:hi, lo:hi] = 0.50  # a seed square in the middle
    v[lo:hi, lo:hi] = 0.25
    uc = u[1:-1, 1:-1]
    vc = v[1:-1, 1:-1]
    mean_v = 0.0
    for _ in range(iterations):
        for _ in range(steps):
            lap_u = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4 * uc
            lap_v = v[:-2, 1:-1] + v[2:, 1:-1] + v[1:-1, :-2] + v[1:-1, 2:] - 4 * vc
            uvv = uc * vc * vc
            uc += du * lap_u - uvv + feed * (1 - uc)
            vc += dv * lap_v + uvv - (feed + kill) * vc
        mean_v = float(vc.mean())
    return u, v, mean_v


def wave_1d(n: int = 64, steps: int = 4, iterations: int = 3) -> "tuple[np.ndarray, float]":
    """The 1-D wave equation by leapfrog, a fresh array every step, ends set one by one.

    Source: fusionlab corpus (the textbook explicit scheme
    ``u_next = 2u - u_prev + c^2 (u[2:] - 2u[1:-1] + u[:-2])``). Every step allocates
    ``u_next`` with ``np.empty_like``, fills its interior, sets its two end points to zero
    (fixed ends) and rotates the three time levels; each iteration reads the discrete
    energy.

    Parameters
    ----------
    n : int
        Number of grid points.
    steps : int
        Time steps per iteration.
    iterations : int
        Number of batches.

    Returns
    -------
    u : ndarray
        The displacement after the last step, shape ``(n,)``.
    energy : float
        The discrete energy of the last step (kinetic plus potential).

    Examples
    --------
    >>> u, e = wave_1d(n=32, steps=2, iterations=1)
    >>> u.shape, float(u[0]), e > 0
    ((32,), 0.0, True)
    """
    import numpy as np

    c2 = 0.25  # (c dt / dx) ** 2, stable below 1
    x = np.linspace(0.0, 1.0, n)
    u_prev = np.exp(-200.0 * (x - 0.5) ** 2)  # a plucked string at rest
    u = u_prev.copy()
    energy = 0.0
    for _ in range(iterations):
        for _ in range(steps):
            u_next = np.empty_like(u)
            u_next[1:-1] = 2.0 * u[1:-1] - u_prev[1:-1] + c2 * (u[2:] - 2.0 * u[1:-1] + u[:-2])
            u_next[0] = 0.0
            u_next[-1] = 0.0
            u_prev, u = u, u_next
        energy = float(np.sum((u - u_prev) ** 2) + c2 * np.sum((u[1:] - u[:-1]) ** 2))
    return u, energy


def heat_f32(n: int = 16, steps: int = 4, iterations: int = 2) -> "tuple[np.ndarray, float]":
    """A float32 heat equation: Python-float coefficients, in-place update of the interior.

    Source: fusionlab corpus (explicit diffusion as written for a GPU-minded reader: all
    float32). Under NumPy 2's promotion rules (NEP 50) ``alpha * lap`` with a Python float
    stays float32, so the whole computation is float32. The interior is updated by an
    augmented assignment to a slice, ``u[1:-1, 1:-1] += ...``. Each iteration runs
    ``steps`` steps and reads the mean temperature.

    Parameters
    ----------
    n : int
        Interior side; the grid has shape ``(n + 2, n + 2)``, float32, with a hot top edge.
    steps : int
        Time steps per iteration.
    iterations : int
        Number of batches.

    Returns
    -------
    u : ndarray
        The float32 grid after the last step.
    mean : float
        The interior's mean after the last step.

    Examples
    --------
    >>> u, mean = heat_f32(n=8, steps=2, iterations=1)
    >>> u.dtype.name, 0.0 < mean < 100.0
    ('float32', True)
    """
    import numpy as np

    u = np.zeros((n + 2, n + 2), dtype=np.float32)
    u[0, :] = 100.0  # hot top edge
    alpha = 0.2
    mean = 0.0
    for _ in range(iterations):
        for _ in range(steps):
            lap = u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4.0 * u[1:-1, 1:-1]
            u[1:-1, 1:-1] += alpha * lap
        mean = float(u[1:-1, 1:-1].mean())
    return u, mean


def image_blur(n: int = 16, passes: int = 3, iterations: int = 2, seed: int = 0) -> "tuple[np.ndarray, float]":
    """Repeated 3x3 Gaussian blur by slicing, a fresh output per pass, edges copied through.

    Source: fusionlab corpus (image smoothing as written without SciPy). Each pass
    allocates ``out``, computes the interior as the weighted sum (1-2-1 in both
    directions, over 16) of nine shifted views and copies the four edges from the input;
    each iteration measures the mean gradient magnitude.

    Parameters
    ----------
    n : int
        Image side.
    passes : int
        Blur passes per iteration.
    iterations : int
        Number of batches.
    seed : int
        Seed of the noisy image.

    Returns
    -------
    img : ndarray
        The blurred ``(n, n)`` image.
    sharpness : float
        The mean central-difference gradient magnitude after the last pass.

    Examples
    --------
    >>> img, s = image_blur(n=12, passes=1, iterations=1)
    >>> img.shape, s > 0
    ((12, 12), True)
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    img = rng.random((n, n))
    img[n // 4:n // 2, n // 4:n // 2] += 1.0  # a bright square
    sharpness = 0.0
    for _ in range(iterations):
        for _ in range(passes):
            out = np.empty_like(img)
            out[1:-1, 1:-1] = (
                4.0 * img[1:-1, 1:-1]
                + 2.0 * (img[:-2, 1:-1] + img[2:, 1:-1] + img[1:-1, :-2] + img[1:-1, 2:])
                + img[:-2, :-2] + img[:-2, 2:] + img[2:, :-2] + img[2:, 2:]
            ) / 16.0
            out[0, :] = img[0, :]
            out[-1, :] = img[-1, :]
            out[:, 0] = img[:, 0]
            out[:, -1] = img[:, -1]
            img = out
        gx = img[1:-1, 2:] - img[1:-1, :-2]
        gy = img[2:, 1:-1] - img[:-2, 1:-1]
        sharpness = float(np.mean(np.sqrt(gx * gx + gy * gy)))
    return img, sharpness


def life_uint8(n: int = 16, iterations: int = 3, seed: int = 0) -> "tuple[np.ndarray, int]":
    """Game of Life on a uint8 torus: bool rules, periodic edges copied row by row.

    Source: fusionlab corpus (the cellular automaton as people write it with small
    integer and boolean arrays). Each generation copies the opposite edges into the
    padding (rows, then whole columns, so the corners wrap too), sums eight shifted
    uint8 views, applies ``born | survive`` (bool) into the interior and counts the
    live cells (a Python int).

    Parameters
    ----------
    n : int
        Board side; the padded board has shape ``(n + 2, n + 2)``, dtype uint8.
    iterations : int
        Generations.
    seed : int
        Seed of the initial board (about 35 % alive).

    Returns
    -------
    board : ndarray
        The padded uint8 board after the last generation.
    alive : int
        Live cells after the last generation.

    Examples
    --------
    >>> board, alive = life_uint8(n=8, iterations=2)
    >>> board.dtype.name, alive == int(board[1:-1, 1:-1].sum())
    ('uint8', True)
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    board = np.zeros((n + 2, n + 2), dtype=np.uint8)
    board[1:-1, 1:-1] = rng.random((n, n)) < 0.35
    alive = 0
    for _ in range(iterations):
        board[0, 1:-1] = board[-2, 1:-1]
        board[-1, 1:-1] = board[1, 1:-1]
        board[:, 0] = board[:, -2]
        board[:, -1] = board[:, 1]
        neighbours = (
            board[:-2, :-2] + board[:-2, 1:-1] + board[:-2, 2:]
            + board[1:-1, :-2] + board[1:-1, 2:]
            + board[2:, :-2] + board[2:, 1:-1] + board[2:, 2:]
        )
        cells = board[1:-1, 1:-1]
        born = neighbours == 3
        survive = (cells == 1) & (neighbours == 2)
        board[1:-1, 1:-1] = born | survive
        alive = int(board[1:-1, 1:-1].sum())
    return board, alive


def sir_dict(n: int = 16, steps: int = 3, iterations: int = 2) -> "tuple[dict[str, np.ndarray], dict[str, float]]":
    """A spatial SIR epidemic whose state is a dictionary of arrays, rebuilt every step.

    Source: fusionlab corpus (a compartment model on a grid, state kept as
    ``{"s": ..., "i": ..., "r": ...}``). Each step reads the compartments out of the dict,
    builds the diffusion term of ``i`` in a zeroed array, and binds a new dict of freshly
    computed arrays; each iteration sums every compartment (a dict of floats).

    Parameters
    ----------
    n : int
        Grid side.
    steps : int
        Time steps per iteration.
    iterations : int
        Number of batches.

    Returns
    -------
    state : dict
        ``"s"``, ``"i"``, ``"r"``: ``(n, n)`` arrays after the last step.
    totals : dict
        The sum of each compartment after the last step.

    Examples
    --------
    >>> state, totals = sir_dict(n=8, steps=2, iterations=1)
    >>> sorted(state), round(sum(totals.values()), 9)
    (['i', 'r', 's'], 64.0)
    """
    import numpy as np

    beta, gamma, diffusion, dt = 2.0, 0.5, 0.2, 0.1
    state = {"s": np.ones((n, n)), "i": np.zeros((n, n)), "r": np.zeros((n, n))}
    state["s"][n // 2, n // 2] = 0.5  # patient zero: one cell half infected
    state["i"][n // 2, n // 2] = 0.5
    totals: dict[str, float] = {}
    for _ in range(iterations):
        for _ in range(steps):
            s, i = state["s"], state["i"]
            lap = np.zeros_like(i)
            lap[1:-1, 1:-1] = i[:-2, 1:-1] + i[2:, 1:-1] + i[1:-1, :-2] + i[1:-1, 2:] - 4.0 * i[1:-1, 1:-1]
            infect = beta * s * i
            recover = gamma * i
            state = {
                "s": s - dt * infect,
                "i": i + dt * (infect - recover) + dt * diffusion * lap,
                "r": state["r"] + dt * recover,
            }
        totals = {name: float(x.sum()) for name, x in state.items()}
    return state, totals


def particles_box(n: int = 64, steps: int = 4, iterations: int = 2, seed: int = 0) -> "tuple[list[np.ndarray], list[np.ndarray], float]":
    """Particles bouncing in a unit box: masked assignments reflect positions and velocities.

    Source: fusionlab corpus (the ballistic particle demo). Every step moves the particles
    under gravity, then reflects those that left the box with masked assignments
    (``x[low] = -x[low]``, ``vy[bottom] *= -0.9``); each iteration reads the energy.

    Parameters
    ----------
    n : int
        Number of particles.
    steps : int
        Time steps per iteration.
    iterations : int
        Number of batches.
    seed : int
        Seed of the initial positions and velocities.

    Returns
    -------
    positions : list of ndarray
        ``[x, y]``, each of shape ``(n,)``.
    velocities : list of ndarray
        ``[vx, vy]``.
    energy : float
        Kinetic plus potential energy after the last step.

    Examples
    --------
    >>> (x, y), (vx, vy), e = particles_box(n=16, steps=2, iterations=1)
    >>> bool(((x >= 0) & (x <= 1)).all()), e > 0
    (True, True)
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    x = rng.random(n)
    y = rng.random(n)
    vx = rng.normal(0.0, 1.0, n)
    vy = rng.normal(0.0, 1.0, n)
    g, dt = 9.81, 0.01
    energy = 0.0
    for _ in range(iterations):
        for _ in range(steps):
            vy -= g * dt
            x += vx * dt
            y += vy * dt
            low = x < 0.0
            x[low] = -x[low]
            vx[low] = -vx[low]
            high = x > 1.0
            x[high] = 2.0 - x[high]
            vx[high] = -vx[high]
            bottom = y < 0.0
            y[bottom] = -y[bottom]
            vy[bottom] *= -0.9  # an inelastic floor
        energy = float(0.5 * np.sum(vx * vx + vy * vy) + g * np.sum(y))
    return [x, y], [vx, vy], energy


def nbody_pairwise(n: int = 16, iterations: int = 3, seed: int = 0) -> "tuple[np.ndarray, float]":
    """All-pairs gravity by broadcasting; the diagonal zeroed through a strided view.

    Source: fusionlab corpus (a direct-summation n-body step). Pairwise differences come
    from broadcasting (``x[None, :] - x[:, None]``); the self-interaction is removed by
    writing zeros through a view of the diagonal made with the ``strides`` setter, an
    idiom still found in n-body codes (deprecated since NumPy 2.4, which warns). Each
    iteration reads the kinetic energy.

    Parameters
    ----------
    n : int
        Number of bodies.
    iterations : int
        Time steps.
    seed : int
        Seed of the positions and masses.

    Returns
    -------
    positions : ndarray
        Shape ``(3, n)``: x, y and z after the last step.
    kinetic : float
        The kinetic energy after the last step.

    Examples
    --------
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     positions, kinetic = nbody_pairwise(n=8, iterations=2)
    >>> positions.shape, kinetic > 0
    ((3, 8), True)
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    pos = rng.uniform(-1.0, 1.0, (3, n))
    vel = np.zeros((3, n))
    m = rng.uniform(0.5, 1.5, n)
    g, dt, soft = 1.0, 1e-3, 1e-2
    kinetic = 0.0
    for _ in range(iterations):
        x, y, z = pos[0], pos[1], pos[2]
        dx = x[None, :] - x[:, None]
        dy = y[None, :] - y[:, None]
        dz = z[None, :] - z[:, None]
        inv_r3 = (dx * dx + dy * dy + dz * dz + soft) ** -1.5
        diagonal = inv_r3[0, :]  # row 0, then re-strided to walk the diagonal
        diagonal.strides = (inv_r3.strides[0] + inv_r3.strides[1],)
        diagonal[:] = 0.0  # no self-force
        weight = g * m[None, :] * inv_r3
        vel[0] += dt * np.sum(weight * dx, axis=1)
        vel[1] += dt * np.sum(weight * dy, axis=1)
        vel[2] += dt * np.sum(weight * dz, axis=1)
        pos += dt * vel
        kinetic = float(0.5 * np.sum(m * (vel * vel).sum(axis=0)))
    return pos, kinetic


def kmeans_step(n: int = 256, k: int = 4, iterations: int = 3, seed: int = 0) -> "tuple[np.ndarray, np.ndarray, float]":
    """Lloyd's k-means: broadcast distances, argmin labels, centroids from boolean masks.

    Source: fusionlab corpus (k-means as written in a data-science notebook). Each
    iteration computes the ``(n, k)`` squared distances by broadcasting, labels each
    point with its nearest centroid, reads the inertia, and moves every centroid to the
    mean of its members (``points[labels == j]``).

    Parameters
    ----------
    n : int
        Number of 2-D points.
    k : int
        Number of clusters.
    iterations : int
        Lloyd iterations.
    seed : int
        Seed of the clustered points.

    Returns
    -------
    centroids : ndarray
        Shape ``(k, 2)``.
    labels : ndarray
        Shape ``(n,)``, int64.
    inertia : float
        The sum of squared distances to the nearest centroid in the last iteration.

    Examples
    --------
    >>> c, labels, inertia = kmeans_step(n=100, k=3, iterations=2)
    >>> c.shape, labels.dtype.name, inertia > 0
    ((3, 2), 'int64', True)
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    true_centres = rng.uniform(-5.0, 5.0, (k, 2))
    points = true_centres[rng.integers(0, k, n)] + rng.normal(0.0, 1.0, (n, 2))
    centroids = points[:k].copy()
    labels = np.zeros(n, dtype=np.int64)
    inertia = 0.0
    for _ in range(iterations):
        d2 = ((points[:, None, :] - centroids[None, :, :]) ** 2).sum(axis=2)
        labels = d2.argmin(axis=1)
        inertia = float(d2.min(axis=1).sum())
        for j in range(k):
            members = points[labels == j]
            if len(members):
                centroids[j] = members.mean(axis=0)
    return centroids, labels, inertia


def black_scholes_f32(n: int = 256, iterations: int = 3, seed: int = 0) -> "tuple[np.ndarray, np.ndarray, float]":
    """Black-Scholes calls and puts in float32 throughout, with ``np.where`` for the CND.

    Source: fusionlab corpus (the option-pricing kernel as written for single precision).
    Prices, strikes and maturities are float32 arrays; the constants are Python floats, so
    under NumPy 2 (NEP 50) every intermediate stays float32. Each iteration prices calls
    and puts (put-call parity), reads their mean and bumps the spot by 0.1 %.

    Parameters
    ----------
    n : int
        Number of options.
    iterations : int
        Number of repricings.
    seed : int
        Seed of spots, strikes and maturities.

    Returns
    -------
    call, put : ndarray
        float32 prices of the last iteration.
    total : float
        Mean call plus mean put of the last iteration.

    Examples
    --------
    >>> call, put, total = black_scholes_f32(n=64, iterations=1)
    >>> call.dtype.name, put.dtype.name, total > 0
    ('float32', 'float32', True)
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    s = rng.uniform(10.0, 50.0, n).astype(np.float32)
    k = rng.uniform(10.0, 50.0, n).astype(np.float32)
    t = rng.uniform(0.25, 2.0, n).astype(np.float32)
    r, sigma = 0.02, 0.30

    def cnd(x: "np.ndarray") -> "np.ndarray":
        kk = 1.0 / (1.0 + 0.2316419 * np.abs(x))
        poly = kk * (0.319381530 + kk * (-0.356563782 + kk * (1.781477937 + kk * (-1.821255978 + kk * 1.330274429))))
        w = 1.0 - 0.3989422804 * np.exp(-0.5 * x * x) * poly
        return np.where(x < 0, 1.0 - w, w)

    call = np.zeros(n, dtype=np.float32)
    put = np.zeros(n, dtype=np.float32)
    total = 0.0
    for _ in range(iterations):
        sqrt_t = np.sqrt(t)
        d1 = (np.log(s / k) + (r + 0.5 * sigma * sigma) * t) / (sigma * sqrt_t)
        d2 = d1 - sigma * sqrt_t
        discount = k * np.exp(-r * t)
        call = s * cnd(d1) - discount * cnd(d2)
        put = call - s + discount
        total = float(call.mean() + put.mean())
        s = s * 1.001
    return call, put, total


def asian_option_mc(n: int = 256, steps: int = 4, iterations: int = 3, seed: int = 0) -> "tuple[float, np.ndarray, np.random.Generator]":
    """Monte-Carlo price of an arithmetic Asian call: one normal draw per path and step.

    Source: fusionlab corpus (geometric Brownian motion paths as simulated in a finance
    course). Each step draws ``n`` standard normals from one ``default_rng``, advances
    every path and adds it to the running average; each iteration (``steps`` steps) reads
    the mean spot. The generator is returned so the caller can continue the stream.

    Parameters
    ----------
    n : int
        Number of paths.
    steps : int
        Monitoring dates per iteration.
    iterations : int
        Number of batches; ``steps * iterations`` dates in all.
    seed : int
        Seed of the generator.

    Returns
    -------
    price : float
        The discounted mean payoff.
    payoff : ndarray
        The discounted payoff per path.
    rng : numpy.random.Generator
        The generator, after every draw.

    Examples
    --------
    >>> price, payoff, rng = asian_option_mc(n=1000, steps=4, iterations=2)
    >>> 0 < price < 100, type(rng).__name__
    (True, 'Generator')
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    s0, strike, rate, sigma, maturity = 100.0, 100.0, 0.03, 0.25, 1.0
    dates = steps * iterations
    dt = maturity / dates
    drift = (rate - 0.5 * sigma * sigma) * dt
    vol = sigma * np.sqrt(dt)
    s = np.full(n, s0)
    running = np.zeros(n)
    mean_spot = s0
    for _ in range(iterations):
        for _ in range(steps):
            z = rng.standard_normal(n)
            s = s * np.exp(drift + vol * z)
            running += s
        mean_spot = float(s.mean())
    payoff = np.maximum(running / dates - strike, 0.0) * np.exp(-rate * maturity)
    price = float(payoff.mean()) if mean_spot > 0 else 0.0
    return price, payoff, rng


def softmax_logsumexp(rows: int = 16, cols: int = 8, iterations: int = 3, seed: int = 0) -> "tuple[np.ndarray, np.ndarray, float]":
    """Row-wise logsumexp and softmax inside a few gradient steps of a bias vector.

    Source: fusionlab corpus (the numerically stable softmax cross-entropy of a
    classifier's output layer). Each iteration computes ``lse = max + log(sum(exp(z -
    max)))`` per row (``keepdims``), the softmax ``exp(z - lse)``, the loss from the
    true labels' logits (fancy indexing), and takes a gradient step on the bias.

    Parameters
    ----------
    rows, cols : int
        Samples and classes.
    iterations : int
        Gradient steps.
    seed : int
        Seed of the logits and labels.

    Returns
    -------
    p : ndarray
        The softmax of the last iteration, rows summing to 1.
    lse : ndarray
        The row logsumexp of the last iteration.
    loss : float
        The mean cross-entropy of the last iteration.

    Examples
    --------
    >>> p, lse, loss = softmax_logsumexp(rows=10, cols=4, iterations=2)
    >>> bool(abs(p.sum(axis=1) - 1).max() < 1e-12), loss > 0
    (True, True)
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    logits = rng.normal(0.0, 3.0, (rows, cols))
    labels = rng.integers(0, cols, rows)
    bias = np.zeros(cols)
    p = np.zeros((rows, cols))
    lse = np.zeros(rows)
    loss = 0.0
    for _ in range(iterations):
        z = logits + bias
        m = z.max(axis=1, keepdims=True)
        lse = m[:, 0] + np.log(np.sum(np.exp(z - m), axis=1))
        p = np.exp(z - lse[:, None])
        loss = float(np.mean(lse - z[np.arange(rows), labels]))
        grad = p.mean(axis=0) - np.bincount(labels, minlength=cols) / rows
        bias -= 0.5 * grad
    return p, lse, loss


def histogram_equalize(n: int = 256, bins: int = 32, iterations: int = 2, seed: int = 0) -> "tuple[np.ndarray, np.ndarray, float]":
    """Min-max scaling, a histogram, its normalised CDF as a lookup table, then z-scores.

    Source: fusionlab corpus (histogram equalisation of skewed data, as in an image or
    feature-preprocessing pipeline). Each iteration scales to ``[0, 1]``, bins with
    ``astype`` and ``np.minimum``, counts with ``np.bincount``, normalises the cumulative
    sum in place, maps every value through it (fancy indexing) and reads the largest
    absolute z-score.

    Parameters
    ----------
    n : int
        Number of values.
    bins : int
        Histogram bins.
    iterations : int
        Equalisation passes.
    seed : int
        Seed of the gamma-distributed data.

    Returns
    -------
    values : ndarray
        The equalised values, in ``(0, 1]``.
    hist : ndarray
        The int64 histogram of the last pass.
    score : float
        The largest absolute z-score of the last pass.

    Examples
    --------
    >>> values, hist, score = histogram_equalize(n=100, bins=8, iterations=1)
    >>> int(hist.sum()), bool(values.max() == 1.0)
    (100, True)
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    values = rng.gamma(2.0, 1.0, n)
    hist = np.zeros(bins, dtype=np.int64)
    score = 0.0
    for _ in range(iterations):
        lo, hi = values.min(), values.max()
        scaled = (values - lo) / (hi - lo)
        index = np.minimum((scaled * bins).astype(np.int64), bins - 1)
        hist = np.bincount(index, minlength=bins)
        cdf = np.cumsum(hist).astype(np.float64)
        cdf /= cdf[-1]
        values = cdf[index]
        z = (values - values.mean()) / values.std()
        score = float(np.abs(z).max())
    return values, hist, score


def covariance_shrinkage(samples: int = 64, features: int = 6, iterations: int = 3, seed: int = 0) -> "tuple[np.ndarray, np.ndarray, float]":
    """Shrink a covariance matrix toward its mean variance through diagonal views.

    Source: fusionlab corpus (Ledoit-Wolf-style shrinkage as written by hand). The sample
    covariance comes from centred data (``xc.T @ xc``); its diagonal is read and updated
    in place through ``np.einsum("ii->i", ...)`` (a writeable view), and the
    superdiagonal of the correlation is read through ``np.lib.stride_tricks.as_strided``.
    Each iteration shrinks a little more and reads the mean absolute lag-one correlation.

    Parameters
    ----------
    samples, features : int
        Data shape.
    iterations : int
        Shrinkage steps.
    seed : int
        Seed of the correlated data.

    Returns
    -------
    shrunk : ndarray
        The shrunk covariance, ``(features, features)``.
    corr : ndarray
        Its correlation matrix.
    lag_one : float
        The mean absolute superdiagonal correlation of the last step.

    Examples
    --------
    >>> shrunk, corr, lag = covariance_shrinkage(samples=50, features=4, iterations=2)
    >>> shrunk.shape, bool(abs(corr.diagonal() - 1).max() < 1e-12), 0 <= lag <= 1
    ((4, 4), True, True)
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    data = rng.normal(0.0, 1.0, (samples, features))
    data[:, 1:] += 0.6 * data[:, :-1]  # neighbouring features correlate
    xc = data - data.mean(axis=0)
    shrunk = (xc.T @ xc) / (samples - 1)
    target = float(np.einsum("ii->i", shrunk).mean())
    diagonal = np.einsum("ii->i", shrunk)  # a writeable view of the diagonal
    corr = np.zeros_like(shrunk)
    lag_one = 0.0
    for _ in range(iterations):
        shrunk *= 0.9
        diagonal += 0.1 * target
        sd = np.sqrt(diagonal)
        corr = shrunk / (sd[:, None] * sd[None, :])
        step = corr.strides[0] + corr.strides[1]
        superdiagonal = np.lib.stride_tricks.as_strided(corr[0, 1:], shape=(features - 1,), strides=(step,))
        lag_one = float(np.abs(superdiagonal).mean())
    return shrunk, corr, lag_one


def gauss_pivot(n: int = 8, seed: int = 0) -> "tuple[np.ndarray, float]":
    """Solve ``A x = b`` by Gaussian elimination with partial pivoting and row swaps.

    Source: fusionlab corpus (the numerical-methods course version). Per column: the pivot
    row from ``argmax`` of the column's magnitudes (a value Python needs: one batch per
    column), rows swapped by fancy indexing ``a[[k, p]] = a[[p, k]]``, the rows below
    updated by one broadcast row operation on views. Back substitution runs row by row in
    Python; the residual ``max|A x - b|`` is read at the end.

    Parameters
    ----------
    n : int
        Matrix side.
    seed : int
        Seed of the random (not diagonally dominant) system.

    Returns
    -------
    x : ndarray
        The solution.
    residual : float
        ``max|A x - b|`` for the original system.

    Examples
    --------
    >>> x, residual = gauss_pivot(n=6)
    >>> x.shape, residual < 1e-12
    ((6,), True)
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    a = rng.random((n, n))
    b = rng.random(n)
    a0, b0 = a.copy(), b.copy()
    for k in range(n - 1):
        p = k + int(np.argmax(np.abs(a[k:, k])))
        if p != k:
            a[[k, p]] = a[[p, k]]
            b[[k, p]] = b[[p, k]]
        factors = a[k + 1:, k] / a[k, k]
        a[k + 1:, k:] -= factors[:, None] * a[k, k:]
        b[k + 1:] -= factors * b[k]
    x = np.zeros(n)
    for i in range(n - 1, -1, -1):
        x[i] = (b[i] - np.sum(a[i, i + 1:] * x[i + 1:])) / a[i, i]
    residual = float(np.max(np.abs(a0 @ x - b0)))
    return x, residual


def lu_rows(n: int = 8, seed: int = 0) -> "tuple[np.ndarray, np.ndarray, float]":
    """Doolittle LU by row operations on views in two Python loops; ``flat`` diagonals.

    Source: fusionlab corpus (LU as first written by students: one row update per inner
    iteration). The diagonally dominant matrix gets ``n`` added through ``a.flat[::n + 1]``;
    ``L``'s unit diagonal is set the same way. Per column the pivot is checked in Python
    (one batch per column), then every row below gets its multiplier written into ``L``
    element by element and ``u[i, k:] -= l[i, k] * u[k, k:]``.

    Parameters
    ----------
    n : int
        Matrix side.
    seed : int
        Seed of the matrix.

    Returns
    -------
    l, u : ndarray
        Unit lower and upper triangular factors.
    error : float
        ``max|L U - A|``.

    Examples
    --------
    >>> l, u, error = lu_rows(n=6)
    >>> bool((l.diagonal() == 1).all()), error < 1e-12
    (True, True)
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    a = rng.random((n, n))
    a.flat[:: n + 1] += n  # diagonally dominant: no pivoting needed
    u = a.copy()
    l = np.zeros((n, n))  # noqa: E741 (the factor's usual name)
    l.flat[:: n + 1] = 1.0
    for k in range(n - 1):
        pivot = u[k, k]
        if abs(float(pivot)) < 1e-12:
            raise ZeroDivisionError(f"zero pivot in column {k}")
        for i in range(k + 1, n):
            l[i, k] = u[i, k] / pivot
            u[i, k:] -= l[i, k] * u[k, k:]
    error = float(np.max(np.abs(l @ u - a)))
    return l, u, error

def dense_relu(n: int = 64, features: int = 32, units: int = 16, iterations: int = 3, seed: int = 0) -> "tuple[np.ndarray, float]":
    """A dense layer with a ReLU, ``np.maximum(x @ w + b, 0)``, its bias steered a few steps.

    Source: fusionlab corpus (the forward pass of a fully connected layer as written in
    NumPy). The matrix product is a CONTRACT; the bias and the ReLU are its epilogue, which
    a fused kernel applies to each tile of the product while it is in cache (NumPy's
    two-step version writes the product and then the sum). Each iteration reads the mean
    activation and moves the bias toward a mean of 0.5.

    Parameters
    ----------
    n, features, units : int
        Samples, inputs and outputs of the layer.
    iterations : int
        Forward passes.
    seed : int
        Seed of the inputs and weights.

    Returns
    -------
    h : ndarray
        The activations of the last pass, ``(n, units)``, non-negative.
    mean_h : float
        Their mean.

    Examples
    --------
    >>> h, mean_h = dense_relu(n=20, features=8, units=4, iterations=2)
    >>> h.shape, bool(h.min() >= 0), mean_h > 0
    ((20, 4), True, True)
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, features))
    w = rng.standard_normal((features, units)) / np.sqrt(features)
    b = np.zeros(units)
    h = np.zeros((n, units))
    mean_h = 0.0
    for _ in range(iterations):
        h = np.maximum(x @ w + b, 0.0)
        mean_h = float(h.mean())
        b -= 0.1 * (mean_h - 0.5)
    return h, mean_h


def jacobi_poisson(n: int = 16, sweeps: int = 4, iterations: int = 2) -> "tuple[np.ndarray, float]":
    """Poisson's equation on the unit square by Jacobi sweeps; walls set through index lists.

    Source: fusionlab corpus (the five-point Jacobi iteration of a numerical-methods
    course). The walls are set by listing the rows and columns, ``u[[0, -1], :] = 1.0`` and
    ``u[:, [0, -1]] = 0.0`` (top and bottom hot, the sides cold), and set again after every
    sweep, as written by students who do not trust the copy to keep them. Each sweep makes a
    fresh ``new = u.copy()`` and fills its interior from four shifted views of ``u`` and the
    source term; each iteration reads the root-mean-square residual.

    Parameters
    ----------
    n : int
        Grid points per side.
    sweeps : int
        Jacobi sweeps per iteration.
    iterations : int
        Number of batches.

    Returns
    -------
    u : ndarray
        The solution after the last sweep, shape ``(n, n)``.
    residual : float
        The root-mean-square residual of the discrete equation after the last sweep.

    Examples
    --------
    >>> u, r = jacobi_poisson(n=8, sweeps=2, iterations=1)
    >>> u.shape, float(u[0, 3]), float(u[3, 0]), r > 0
    ((8, 8), 1.0, 0.0, True)
    """
    import numpy as np

    h2 = (1.0 / (n - 1)) ** 2
    x = np.linspace(0.0, 1.0, n)
    f = np.sin(np.pi * x)[:, None] * np.sin(np.pi * x)[None, :]   # the source term
    u = np.zeros((n, n))
    u[[0, -1], :] = 1.0
    u[:, [0, -1]] = 0.0
    residual = 0.0
    for _ in range(iterations):
        for _ in range(sweeps):
            new = u.copy()
            new[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] + h2 * f[1:-1, 1:-1])
            new[[0, -1], :] = 1.0
            new[:, [0, -1]] = 0.0
            u = new
        r = (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:] - 4.0 * u[1:-1, 1:-1]) / h2 + f[1:-1, 1:-1]
        residual = float(np.sqrt(np.mean(r ** 2)))
    return u, residual


def charge_deposit(n: int = 256, cells: int = 32, steps: int = 3, iterations: int = 2, seed: int = 0) -> "tuple[np.ndarray, np.ndarray, float]":
    """Particles drifting on a periodic line deposit their charge on a grid with ``np.add.at``.

    Source: fusionlab corpus (the deposit step of a particle-in-cell code, as a plasma-physics
    course writes it). Each step moves the particles, wraps them into ``[0, 1)``, finds each
    one's cell and its fraction across it, and scatters the charge with cloud-in-cell weights:
    two ``np.add.at`` calls (the cell and its right neighbour, wrapped with ``%``; many particles
    share a cell, so the indices repeat). Every iteration ends reading the grid's largest
    density.

    Parameters
    ----------
    n : int
        Number of particles.
    cells : int
        Grid cells.
    steps : int
        Steps per iteration.
    iterations : int
        Iterations (each ends one batch).
    seed : int
        Seed of the positions and velocities.

    Returns
    -------
    x : ndarray
        Positions, in ``[0, 1)``.
    rho : ndarray
        The last step's charge density per cell.
    peak : float
        The last iteration's largest density.

    Examples
    --------
    >>> x, rho, peak = charge_deposit(n=64, cells=8, steps=1, iterations=1)
    >>> bool(abs(rho.sum() * (1.0 / 8) - 1.0) < 1e-12), rho.shape
    (True, (8,))
    """
    import numpy as np

    rng = np.random.default_rng(seed)
    x = rng.random(n)
    v = rng.normal(0.0, 0.01, n)
    q = np.full(n, 1.0 / n)
    dx = 1.0 / cells
    rho = np.zeros(cells)
    peak = 0.0
    for _ in range(iterations):
        for _ in range(steps):
            x = (x + v) % 1.0
            s = x / dx
            left = s.astype(np.int64)
            frac = s - left
            rho = np.zeros(cells)
            np.add.at(rho, left % cells, q * (1.0 - frac))
            np.add.at(rho, (left + 1) % cells, q * frac)
            rho /= dx
        peak = float(rho.max())
    return x, rho, peak


#: Keyword arguments per program: ``tiny`` (tests), ``medium`` (notebooks, about a second of
#: NumPy) and ``large`` (the backend benchmark's second size; also used as ``paper``, since
#: these programs have no paper size).
PRESETS: dict[str, dict[str, dict[str, Any]]] = {
    "gray_scott": {"tiny": {"n": 16, "steps": 4, "iterations": 2},
                   "medium": {"n": 400, "steps": 8, "iterations": 3},
                   "large": {"n": 1200, "steps": 8, "iterations": 3}},
    "wave_1d": {"tiny": {"n": 64, "steps": 4, "iterations": 3},
                "medium": {"n": 1_000_000, "steps": 8, "iterations": 3},
                "large": {"n": 4_000_000, "steps": 8, "iterations": 3}},
    "heat_f32": {"tiny": {"n": 16, "steps": 4, "iterations": 2},
                 "medium": {"n": 700, "steps": 8, "iterations": 3},
                 "large": {"n": 2000, "steps": 8, "iterations": 3}},
    "image_blur": {"tiny": {"n": 16, "passes": 3, "iterations": 2, "seed": 0},
                   "medium": {"n": 700, "passes": 4, "iterations": 3, "seed": 0},
                   "large": {"n": 2000, "passes": 4, "iterations": 3, "seed": 0}},
    "life_uint8": {"tiny": {"n": 16, "iterations": 3, "seed": 0},
                   "medium": {"n": 1000, "iterations": 5, "seed": 0},
                   "large": {"n": 3000, "iterations": 5, "seed": 0}},
    "sir_dict": {"tiny": {"n": 16, "steps": 3, "iterations": 2},
                 "medium": {"n": 500, "steps": 4, "iterations": 3},
                 "large": {"n": 1500, "steps": 4, "iterations": 3}},
    "particles_box": {"tiny": {"n": 64, "steps": 4, "iterations": 2, "seed": 0},
                      "medium": {"n": 500_000, "steps": 4, "iterations": 3, "seed": 0},
                      "large": {"n": 2_000_000, "steps": 4, "iterations": 3, "seed": 0}},
    "nbody_pairwise": {"tiny": {"n": 16, "iterations": 3, "seed": 0},
                       "medium": {"n": 800, "iterations": 5, "seed": 0},
                       "large": {"n": 2000, "iterations": 5, "seed": 0}},
    "kmeans_step": {"tiny": {"n": 256, "k": 4, "iterations": 3, "seed": 0},
                    "medium": {"n": 200_000, "k": 8, "iterations": 5, "seed": 0},
                    "large": {"n": 500_000, "k": 8, "iterations": 5, "seed": 0}},
    "black_scholes_f32": {"tiny": {"n": 256, "iterations": 3, "seed": 0},
                          "medium": {"n": 1_000_000, "iterations": 5, "seed": 0},
                          "large": {"n": 4_000_000, "iterations": 5, "seed": 0}},
    "asian_option_mc": {"tiny": {"n": 256, "steps": 4, "iterations": 3, "seed": 0},
                        "medium": {"n": 200_000, "steps": 8, "iterations": 4, "seed": 0},
                        "large": {"n": 1_000_000, "steps": 8, "iterations": 4, "seed": 0}},
    "softmax_logsumexp": {"tiny": {"rows": 16, "cols": 8, "iterations": 3, "seed": 0},
                          "medium": {"rows": 2000, "cols": 500, "iterations": 5, "seed": 0},
                          "large": {"rows": 8000, "cols": 1000, "iterations": 5, "seed": 0}},
    "histogram_equalize": {"tiny": {"n": 256, "bins": 32, "iterations": 2, "seed": 0},
                           "medium": {"n": 1_000_000, "bins": 256, "iterations": 3, "seed": 0},
                           "large": {"n": 4_000_000, "bins": 256, "iterations": 3, "seed": 0}},
    "covariance_shrinkage": {"tiny": {"samples": 64, "features": 6, "iterations": 3, "seed": 0},
                             "medium": {"samples": 10_000, "features": 100, "iterations": 5, "seed": 0},
                             "large": {"samples": 20_000, "features": 200, "iterations": 5, "seed": 0}},
    "gauss_pivot": {"tiny": {"n": 8, "seed": 0},
                    "medium": {"n": 200, "seed": 0},
                    "large": {"n": 400, "seed": 0}},
    "lu_rows": {"tiny": {"n": 8, "seed": 0},
                "medium": {"n": 200, "seed": 0},
                "large": {"n": 300, "seed": 0}},
    "dense_relu": {"tiny": {"n": 64, "features": 32, "units": 16, "iterations": 3, "seed": 0},
                   "medium": {"n": 1024, "features": 1024, "units": 1024, "iterations": 3, "seed": 0},
                   "large": {"n": 2048, "features": 2048, "units": 2048, "iterations": 3, "seed": 0}},
    "jacobi_poisson": {"tiny": {"n": 16, "sweeps": 4, "iterations": 2},
                       "medium": {"n": 700, "sweeps": 8, "iterations": 3},
                       "large": {"n": 2000, "sweeps": 8, "iterations": 3}},
    "charge_deposit": {"tiny": {"n": 256, "cells": 32, "steps": 3, "iterations": 2, "seed": 0},
                       "medium": {"n": 1_000_000, "cells": 4096, "steps": 5, "iterations": 3, "seed": 0},
                       "large": {"n": 4_000_000, "cells": 16384, "steps": 5, "iterations": 3, "seed": 0}},
}

#: Title and one-sentence description per program, in registry order.
DESCRIPTIONS: dict[str, tuple[str, str]] = {
    "gray_scott": ("Gray-Scott reaction-diffusion",
                   "Two fields, 5-point Laplacians, in-place updates of the interior views, several steps per batch."),
    "wave_1d": ("1-D wave equation", "Leapfrog with a fresh array every step and its two ends set one by one."),
    "heat_f32": ("Heat equation (float32)", "Explicit diffusion in float32 with Python-float coefficients, in place."),
    "image_blur": ("Image blur", "Repeated 3x3 Gaussian blur by slicing into a fresh array, edges copied through."),
    "life_uint8": ("Game of Life (uint8)", "A uint8 torus with bool rules and periodic edges copied row by row."),
    "sir_dict": ("SIR epidemic (dict of arrays)", "A spatial SIR model whose state dictionary is rebuilt every step."),
    "particles_box": ("Particles in a box", "Ballistic particles reflected by masked assignments."),
    "nbody_pairwise": ("N-body (broadcast pairs)", "All-pairs gravity by broadcasting, diagonal zeroed via strides."),
    "kmeans_step": ("k-means", "Lloyd steps: broadcast distances, argmin, centroids from boolean masks."),
    "black_scholes_f32": ("Black-Scholes (float32)", "Calls and puts in float32 with np.where in the CND."),
    "asian_option_mc": ("Asian option Monte Carlo", "Many normal draws from one Generator, kept by the caller."),
    "softmax_logsumexp": ("Softmax and logsumexp", "Row logsumexp, softmax and a cross-entropy gradient step."),
    "histogram_equalize": ("Histogram equalisation", "Scaling, bincount, a normalised CDF as lookup table, z-scores."),
    "covariance_shrinkage": ("Covariance shrinkage", "Diagonal updated through einsum views, read via as_strided."),
    "gauss_pivot": ("Gauss elimination with pivoting", "Partial pivoting, fancy row swaps, Python back substitution."),
    "lu_rows": ("LU by row operations", "Doolittle LU with one row update per Python iteration, flat diagonals."),
    "dense_relu": ("Dense layer with ReLU", "np.maximum(x @ w + b, 0): a matrix product with a fused epilogue."),
    "jacobi_poisson": ("Jacobi for Poisson's equation",
                       "Five-point Jacobi sweeps into a fresh copy; walls set through index lists every sweep."),
    "charge_deposit": ("Particle-in-cell charge deposit",
                       "Cloud-in-cell weights scattered onto a periodic grid by np.add.at, indices repeated."),
}
