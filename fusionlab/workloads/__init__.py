"""A library of NumPy benchmark programs ("workloads") for capture and fusion experiments.

The registry :data:`WORKLOADS` holds the 15 applications of the paper's Table I (in that
order, from :mod:`fusionlab.workloads.paper`) followed by small teaching programs
(:mod:`fusionlab.workloads.teaching`). The realistic corpus
(:mod:`fusionlab.workloads.corpus`) is the registry :data:`CORPUS`; :data:`ALL_WORKLOADS`
holds both and :func:`get_workload` finds either. Every workload is one self-contained
function with three presets of keyword arguments: ``"tiny"`` (tests, milliseconds), ``"medium"``
(classroom notebooks, about a second) and ``"paper"`` (the sizes and iteration counts of
Table I; for the teaching programs, a comparably large size). The eight workloads of the
backend benchmark also have ``"large"`` (arrays of 8-32 MB, five iterations); every
corpus program has ``"large"`` too (its ``"paper"`` preset is the same).

Examples
--------
>>> w = get_workload("leibnitz_pi")
>>> w.title, sorted(w.presets)
('Leibnitz PI', ['large', 'medium', 'paper', 'tiny'])
>>> round(w.run("tiny"), 2)
3.14
>>> print(w.script("tiny").splitlines()[-1])
result = leibnitz_pi(n=256, iterations=3)
"""

from __future__ import annotations

import inspect
import textwrap
from dataclasses import dataclass, field
from typing import Any, Callable

from fusionlab.workloads import corpus, paper, teaching

__all__ = ["Workload", "WORKLOADS", "PAPER_WORKLOADS", "CORPUS", "ALL_WORKLOADS", "PRESETS", "get_workload",
           "paper", "teaching", "corpus"]

#: The preset names every workload defines, from smallest to largest.
PRESETS: tuple[str, ...] = ("tiny", "medium", "paper")

_TABLE_I = (
    "Kristensen et al., Fusion of Array Operations at Runtime, Table I; "
    "described in shared/workloads.md"
)
_FUSION_PAPER = "Kristensen et al., Fusion of Array Operations at Runtime"


@dataclass(frozen=True)
class Workload:
    """A benchmark program: a self-contained NumPy function and its size presets.

    Parameters
    ----------
    name : str
        Slug used as the registry key, e.g. ``"black_scholes"``.
    title : str
        Human-readable name, e.g. ``"Black Scholes"``.
    source : str
        Where the program comes from.
    function : callable
        The program: one function whose body starts with ``import numpy as np`` and uses
        nothing from module level.
    presets : dict
        Preset name (``"tiny"``, ``"medium"``, ``"paper"``) to keyword arguments.
    description : str
        One sentence saying what the program computes.

    Examples
    --------
    >>> def double(n: int = 3) -> float:
    ...     import numpy as np
    ...     return float((2 * np.ones(n)).sum())
    >>> w = Workload("double", "Double", "a doctest", double,
    ...              {"tiny": {"n": 2}, "medium": {"n": 10}, "paper": {"n": 100}}, "Twice ones.")
    >>> w.run(), w.run("paper")
    (4.0, 200.0)
    """

    name: str
    title: str
    source: str
    function: Callable[..., Any]
    presets: dict[str, dict[str, Any]] = field(hash=False)
    description: str

    def __post_init__(self) -> None:
        missing = [p for p in PRESETS if p not in self.presets]
        if missing:
            raise ValueError(f"workload {self.name!r} lacks the presets {missing}")

    def kwargs(self, preset: str = "tiny") -> dict[str, Any]:
        """The keyword arguments of a preset (a copy).

        Parameters
        ----------
        preset : str
            One of the workload's preset names.

        Returns
        -------
        dict
            Keyword arguments for :attr:`function`.

        Raises
        ------
        KeyError
            If the preset is unknown; the message lists the valid presets.

        Examples
        --------
        >>> get_workload("heat_equation").kwargs("paper")
        {'n': 12000, 'iterations': 20}
        """
        try:
            return dict(self.presets[preset])
        except KeyError:
            valid = ", ".join(self.presets)
            raise KeyError(f"unknown preset {preset!r} of workload {self.name!r}; valid presets: {valid}") from None

    def run(self, preset: str = "tiny") -> Any:
        """Call the function with the preset's keyword arguments (plain NumPy).

        Parameters
        ----------
        preset : str
            One of ``"tiny"``, ``"medium"``, ``"paper"``.

        Returns
        -------
        object
            Whatever the function returns: an array, a float, or a tuple of them.

        Examples
        --------
        >>> get_workload("fig3").run()
        array([0., 0., 0., 0., 0.])
        """
        return self.function(**self.kwargs(preset))

    def script(self, preset: str = "tiny") -> str:
        """Self-contained Python source that runs the workload and binds ``result``.

        The source is the function's own text (dedented) followed by the line
        ``result = <name>(<keyword arguments>)``.

        Parameters
        ----------
        preset : str
            One of ``"tiny"``, ``"medium"``, ``"paper"``.

        Returns
        -------
        str
            Python source; ``exec`` it in a fresh namespace and read ``ns["result"]``.

        Examples
        --------
        >>> ns = {}
        >>> exec(get_workload("softmax").script("tiny"), ns)
        >>> ns["result"].shape
        (8, 32)
        """
        kwargs = self.kwargs(preset)
        source = textwrap.dedent(inspect.getsource(self.function)).rstrip()
        call = ", ".join(f"{key}={value!r}" for key, value in kwargs.items())
        return f"{source}\n\n\nresult = {self.function.__name__}({call})\n"


def _workload(
    function: Callable[..., Any],
    title: str,
    source: str,
    tiny: dict[str, Any],
    medium: dict[str, Any],
    paper_size: dict[str, Any],
    description: str,
    large: dict[str, Any] | None = None,
) -> Workload:
    presets = {"tiny": tiny, "medium": medium, "paper": paper_size}
    if large is not None:  # an optional size between medium and paper (the backend benchmark's)
        presets["large"] = large
    return Workload(
        name=function.__name__,
        title=title,
        source=source,
        function=function,
        presets=presets,
        description=description,
    )


_ALL = [
    # ---- the 15 applications of Table I, in table order -------------------------------
    _workload(
        paper.black_scholes, "Black Scholes", _TABLE_I,
        {"n": 256, "iterations": 3, "seed": 0},
        {"n": 500_000, "iterations": 5, "seed": 0},
        {"n": 1_500_000, "iterations": 20, "seed": 0},
        "Prices European call options with the Black-Scholes formula and a polynomial cumulative normal.",
        large={"n": 2_000_000, "iterations": 5, "seed": 0},
    ),
    _workload(
        paper.game_of_life, "Game of Life", _TABLE_I,
        {"n": 16, "iterations": 3, "seed": 0},
        {"n": 700, "iterations": 5, "seed": 0},
        {"n": 10_000, "iterations": 20, "seed": 0},
        "Runs Conway's Game of Life, summing eight shifted views of a padded board.",
    ),
    _workload(
        paper.heat_equation, "Heat Equation", _TABLE_I,
        {"n": 16, "iterations": 3},
        {"n": 700, "iterations": 5},
        {"n": 12_000, "iterations": 20},
        "Relaxes the 2-D heat equation by Jacobi sweeps over shifted slices.",
        large={"n": 2000, "iterations": 5},
    ),
    _workload(
        paper.leibnitz_pi, "Leibnitz PI", _TABLE_I,
        {"n": 256, "iterations": 3},
        {"n": 1_000_000, "iterations": 5},
        {"n": 100_000_000, "iterations": 20},
        "Approximates pi by summing chunks of the Leibniz series.",
        large={"n": 10_000_000, "iterations": 5},
    ),
    _workload(
        paper.gauss_elimination, "Gauss Elimination", _TABLE_I,
        {"n": 8, "iterations": 7, "seed": 0},
        {"n": 200, "iterations": 199, "seed": 0},
        {"n": 2800, "iterations": 2799, "seed": 0},
        "Reduces a random diagonally dominant linear system to unit upper triangular form.",
    ),
    _workload(
        paper.lu_factorization, "LU Factorization", _TABLE_I,
        {"n": 8, "iterations": 7, "seed": 0},
        {"n": 200, "iterations": 199, "seed": 0},
        {"n": 2800, "iterations": 2799, "seed": 0},
        "Factors a random diagonally dominant matrix into unit lower and upper triangular factors.",
    ),
    _workload(
        paper.monte_carlo_pi, "Monte Carlo PI", _TABLE_I,
        {"n": 256, "iterations": 3, "seed": 0},
        {"n": 1_000_000, "iterations": 5, "seed": 0},
        {"n": 100_000_000, "iterations": 20, "seed": 0},
        "Estimates pi from the fraction of random points inside the unit quarter circle.",
        large={"n": 10_000_000, "iterations": 5, "seed": 0},
    ),
    _workload(
        paper.stencil_27pt, "27 Point Stencil", _TABLE_I,
        {"n": 6, "iterations": 3},
        {"n": 64, "iterations": 5},
        {"n": 350, "iterations": 20},
        "Averages every interior cell of a 3-D grid over its 27-cell neighbourhood.",
        large={"n": 160, "iterations": 5},
    ),
    _workload(
        paper.shallow_water, "Shallow Water", _TABLE_I,
        {"n": 12, "iterations": 3},
        {"n": 400, "iterations": 5},
        {"n": 3200, "iterations": 20},
        "Simulates a water drop with the shallow water equations and a two-step Lax-Wendroff scheme.",
        large={"n": 1200, "iterations": 5},
    ),
    _workload(
        paper.rosenbrock, "Rosenbrock", _TABLE_I,
        {"n": 256, "iterations": 3, "seed": 0},
        {"n": 1_000_000, "iterations": 5, "seed": 0},
        {"n": 200_000_000, "iterations": 20, "seed": 0},
        "Evaluates the Rosenbrock function of a random high-dimensional point.",
        large={"n": 10_000_000, "iterations": 5, "seed": 0},
    ),
    _workload(
        paper.sor, "Successive over-relaxation", _TABLE_I,
        {"n": 16, "iterations": 3},
        {"n": 700, "iterations": 5},
        {"n": 12_000, "iterations": 20},
        "Relaxes the 2-D Laplace equation in red-black order on four strided quarter grids.",
        large={"n": 2000, "iterations": 5},
    ),
    _workload(
        paper.nbody, "NBody", _TABLE_I,
        {"n": 16, "iterations": 3, "seed": 0},
        {"n": 600, "iterations": 5, "seed": 0},
        {"n": 6000, "iterations": 20, "seed": 0},
        "Simulates gravitating bodies with all-pairs forces on full N x N arrays.",
    ),
    _workload(
        paper.nbody_nice, "NBody Nice", _TABLE_I,
        {"planets": 4, "asteroids": 50, "iterations": 3, "seed": 0},
        {"planets": 20, "asteroids": 20_000, "iterations": 5, "seed": 0},
        {"planets": 40, "asteroids": 2_000_000, "iterations": 20, "seed": 0},
        "Simulates planets that attract each other and a swarm of asteroids that feel only the planets.",
    ),
    _workload(
        paper.lattice_boltzmann_d3q19, "Lattice Boltzmann D3Q19", _TABLE_I,
        {"nx": 6, "ny": 5, "nz": 4, "iterations": 3},
        {"nx": 32, "ny": 32, "nz": 32, "iterations": 5},
        {"nx": 150, "ny": 150, "nz": 150, "iterations": 20},
        "Simulates flow past a block in a periodic box with the D3Q19 lattice Boltzmann method.",
    ),
    _workload(
        paper.water_ice, "Water-Ice Simulation", _TABLE_I,
        {"nl": 8, "nw": 6, "iterations": 3, "seed": 0},
        {"nl": 200, "nw": 200, "iterations": 5, "seed": 0},
        {"nl": 400, "nw": 400, "iterations": 20, "seed": 0},
        "Advances a four-layer ocean with sea ice by forward Euler using UNESCO seawater polynomials.",
    ),
    # ---- teaching programs ------------------------------------------------------------
    _workload(
        teaching.fig3, "Fig. 3 synthetic program", f"{_FUSION_PAPER}, Fig. 3a",
        {}, {}, {},
        "The paper's 17-instruction synthetic example on arrays of 4 and 5 zeros.",
    ),
    _workload(
        teaching.fig1_loops, "Fig. 1 loop pair", f"{_FUSION_PAPER}, Fig. 1a",
        {"n": 256, "iterations": 3, "seed": 0},
        {"n": 1_000_000, "iterations": 5, "seed": 0},
        {"n": 100_000_000, "iterations": 20, "seed": 0},
        "Runs T = B * A; A += T, the two loops that fusion merges and whose T it contracts.",
    ),
    _workload(
        teaching.softmax, "Softmax", "The numerically stable row-wise softmax (classic example)",
        {"rows": 8, "cols": 32, "seed": 0},
        {"rows": 1000, "cols": 1000, "seed": 0},
        {"rows": 10_000, "cols": 10_000, "seed": 0},
        "Turns each row of a matrix into probabilities: subtract the row max, exponentiate, normalize.",
    ),
    _workload(
        teaching.stencil_2d, "2-D Jacobi stencil", "The textbook 5-point Jacobi iteration (classic example)",
        {"n": 16, "iterations": 3},
        {"n": 700, "iterations": 5},
        {"n": 10_000, "iterations": 20},
        "Relaxes the Laplace equation by replacing each interior cell with the mean of its four neighbours.",
    ),
    _workload(
        teaching.normalize2, "Normalize2", "Robinson, Keller, Lippmeier, Fusing Filters with Integer Linear Programming",
        {"n": 256, "seed": 0},
        {"n": 1_000_000, "seed": 0},
        {"n": 100_000_000, "seed": 0},
        "Divides an array by its sum and by the sum of its positive elements (a filter).",
    ),
]

#: All workloads by name: the 15 Table I applications in table order, then the others.
WORKLOADS: dict[str, Workload] = {w.name: w for w in _ALL}

#: The names of the paper's 15 applications (Table I), in its order.
PAPER_WORKLOADS: tuple[str, ...] = tuple(WORKLOADS)[:15]

#: The realistic corpus by name (:mod:`fusionlab.workloads.corpus`, in its order); its
#: ``"large"`` size doubles as ``"paper"``. Kept apart from :data:`WORKLOADS`, whose
#: members the paper's figures and their tests enumerate.
CORPUS: dict[str, Workload] = {
    name: _workload(getattr(corpus, name), corpus.DESCRIPTIONS[name][0],
                    "fusionlab corpus of realistic NumPy programs (issue 13)", sizes["tiny"], sizes["medium"],
                    sizes["large"], corpus.DESCRIPTIONS[name][1], large=sizes["large"])
    for name, sizes in corpus.PRESETS.items()
}

#: Every registered program: :data:`WORKLOADS`, then :data:`CORPUS`.
ALL_WORKLOADS: dict[str, Workload] = {**WORKLOADS, **CORPUS}


def get_workload(name: str) -> Workload:
    """Look up a workload by name.

    Parameters
    ----------
    name : str
        A key of :data:`ALL_WORKLOADS`, e.g. ``"black_scholes"`` or ``"gray_scott"``.

    Returns
    -------
    Workload
        The registered workload.

    Raises
    ------
    KeyError
        If there is no such workload; the message lists the valid names.

    Examples
    --------
    >>> get_workload("nbody").title
    'NBody'
    >>> get_workload("gray_scott").kwargs("large")
    {'n': 1200, 'steps': 8, 'iterations': 3}
    >>> get_workload("nope")
    Traceback (most recent call last):
    ...
    KeyError: "unknown workload 'nope'; valid workloads: black_scholes, ..."
    """
    try:
        return ALL_WORKLOADS[name]
    except KeyError:
        valid = ", ".join(ALL_WORKLOADS)
        raise KeyError(f"unknown workload {name!r}; valid workloads: {valid}") from None
