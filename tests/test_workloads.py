"""The workload library: every program runs, is deterministic, and its script is itself."""

from __future__ import annotations

import ast
import inspect
import math
import textwrap
from typing import Any

import numpy as np
import pytest
import scipy.linalg

from fusionlab.workloads import PRESETS, WORKLOADS, Workload, get_workload, paper, teaching

PAPER_NAMES = [
    "black_scholes", "game_of_life", "heat_equation", "leibnitz_pi", "gauss_elimination",
    "lu_factorization", "monte_carlo_pi", "stencil_27pt", "shallow_water", "rosenbrock", "sor",
    "nbody", "nbody_nice", "lattice_boltzmann_d3q19", "water_ice",
]
TEACHING_NAMES = ["fig3", "fig1_loops", "softmax", "stencil_2d", "normalize2"]
ALL = list(WORKLOADS.values())
IDS = list(WORKLOADS)


def leaves(result: Any) -> list[Any]:
    """The arrays and numbers of a result, through nested tuples."""
    if isinstance(result, tuple):
        return [leaf for part in result for leaf in leaves(part)]
    return [result]


def assert_same(a: Any, b: Any) -> None:
    assert type(a) is type(b)
    if isinstance(a, tuple):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert_same(x, y)
    else:
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=0)


# ---- registry ---------------------------------------------------------------------------


def test_registry_holds_table_i_in_order_then_the_teaching_programs():
    assert list(WORKLOADS) == PAPER_NAMES + TEACHING_NAMES
    assert all(isinstance(w, Workload) and w.name == name for name, w in WORKLOADS.items())


def test_get_workload_unknown_names_the_valid_ones():
    assert get_workload("sor") is WORKLOADS["sor"]
    with pytest.raises(KeyError) as info:
        get_workload("nope")
    message = str(info.value)
    assert "nope" in message
    for name in WORKLOADS:
        assert name in message


def test_unknown_preset_names_the_valid_ones():
    with pytest.raises(KeyError, match="tiny, medium, paper"):
        get_workload("sor").run("huge")


def test_workload_requires_the_three_presets():
    with pytest.raises(ValueError, match="paper"):
        Workload("x", "X", "here", teaching.fig3, {"tiny": {}, "medium": {}}, "Nothing.")


@pytest.mark.parametrize("w", ALL, ids=IDS)
def test_metadata(w: Workload):
    assert set(PRESETS) <= set(w.presets)
    assert w.title and w.source and w.description
    doc = inspect.getdoc(w.function)
    assert doc and "Source:" in doc
    assert w.function.__name__ == w.name
    module = paper if w.name in PAPER_NAMES else teaching
    assert getattr(module, w.name) is w.function
    if w.name in PAPER_NAMES:
        assert "Table I" in w.source and "Table I" in doc


def test_paper_presets_follow_table_i():
    assert get_workload("gauss_elimination").presets["paper"]["n"] == 2800
    assert get_workload("gauss_elimination").presets["paper"]["iterations"] == 2799
    assert get_workload("lu_factorization").presets["paper"]["iterations"] == 2799
    assert get_workload("leibnitz_pi").presets["paper"]["n"] == 10**8
    assert get_workload("stencil_27pt").presets["paper"]["n"] ** 3 == 42_875_000
    for name in PAPER_NAMES:
        if name not in ("gauss_elimination", "lu_factorization"):
            assert WORKLOADS[name].presets["paper"]["iterations"] == 20, name


# ---- the programs follow the capture rules ------------------------------------------------


@pytest.mark.parametrize("w", ALL, ids=IDS)
def test_function_is_self_contained(w: Workload):
    source = textwrap.dedent(inspect.getsource(w.function))
    tree = ast.parse(source)
    (fn,) = tree.body
    assert isinstance(fn, ast.FunctionDef)
    body = fn.body[1:] if isinstance(fn.body[0], ast.Expr) else fn.body  # skip the docstring
    first = body[0]
    assert isinstance(first, ast.Import) and [(a.name, a.asname) for a in first.names] == [("numpy", "np")]
    # only numpy and builtins from outside the function
    assigned = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    assigned |= {a.arg for n in ast.walk(fn) if isinstance(n, (ast.FunctionDef, ast.Lambda)) for a in n.args.args}
    assigned |= {n.name for n in ast.walk(fn) if isinstance(n, ast.FunctionDef)}
    loaded = {n.id for n in ast.walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    import builtins

    outside = loaded - assigned - {"np"} - set(dir(builtins))
    assert not outside, f"{w.name} uses module-level names {outside}"


@pytest.mark.parametrize("w", ALL, ids=IDS)
def test_randomness_only_from_default_rng(w: Workload):
    source = inspect.getsource(w.function)
    for line in source.splitlines():
        if "np.random" in line:
            assert "np.random.default_rng(seed)" in line, line
    if "default_rng" in source:
        assert "seed" in inspect.signature(w.function).parameters


@pytest.mark.parametrize("w", ALL, ids=IDS)
def test_no_fancy_helpers(w: Workload):
    source = inspect.getsource(w.function)
    for banned in ("np.pad", "np.roll", "np.concatenate", "np.stack", "np.eye", "np.array("):
        assert banned not in source, banned


# ---- running --------------------------------------------------------------------------------


@pytest.mark.parametrize("w", ALL, ids=IDS)
def test_tiny_runs_finite_and_deterministic(w: Workload):
    first = w.run("tiny")
    for leaf in leaves(first):
        assert isinstance(leaf, (float, np.ndarray)), type(leaf)
        assert np.all(np.isfinite(leaf))
    assert_same(first, w.run("tiny"))


@pytest.mark.parametrize("w", ALL, ids=IDS)
def test_script_reproduces_run(w: Workload):
    script = w.script("tiny")
    assert script.startswith("def ")
    assert script.rstrip().splitlines()[-1].startswith(f"result = {w.name}(")
    ns: dict[str, Any] = {}
    exec(compile(script, f"<{w.name}>", "exec"), ns)
    assert set(ns) - {"__builtins__"} == {w.name, "result"}
    assert_same(ns["result"], w.run("tiny"))


def test_script_spells_the_preset_as_keywords():
    line = get_workload("nbody_nice").script("medium").splitlines()[-1]
    assert line == "result = nbody_nice(planets=20, asteroids=20000, iterations=5, seed=0)"
    assert get_workload("fig3").script("paper").splitlines()[-1] == "result = fig3()"


def test_seed_changes_random_workloads():
    a = paper.black_scholes(n=64, iterations=1, seed=0)[1]
    b = paper.black_scholes(n=64, iterations=1, seed=1)[1]
    assert a != b


# ---- known answers -------------------------------------------------------------------------


def test_leibnitz_pi_approaches_pi():
    assert abs(paper.leibnitz_pi(n=1000, iterations=3) - math.pi) < 1e-2
    assert abs(paper.leibnitz_pi(n=10_000, iterations=2) - math.pi) < 1e-4


def test_monte_carlo_pi_is_near_pi():
    assert abs(paper.monte_carlo_pi(n=500, iterations=3) - math.pi) < 0.2


def _system(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """The matrix and right-hand side the Gauss and LU workloads draw."""
    rng = np.random.default_rng(seed)
    a = rng.random((n, n)) + n * np.eye(n)
    b = rng.random(n)
    return a, b


@pytest.mark.parametrize("n", [2, 5, 12])
def test_gauss_elimination_solves_the_system(n: int):
    reduced = paper.gauss_elimination(n=n, iterations=n - 1)
    a, b = _system(n)
    upper = reduced[:, :n]
    np.testing.assert_allclose(np.tril(upper, -1), 0, atol=1e-12)
    np.testing.assert_allclose(np.diag(upper), 1.0)
    x = scipy.linalg.solve_triangular(upper, reduced[:, n])
    np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=1e-10)


@pytest.mark.parametrize("n", [2, 5, 12])
def test_lu_factorization_reconstructs_the_matrix(n: int):
    l, u = paper.lu_factorization(n=n, iterations=n - 1)
    a, _ = _system(n)
    np.testing.assert_allclose(l @ u, a, rtol=1e-12)
    p, l_ref, u_ref = scipy.linalg.lu(a)  # diagonally dominant: no row exchanges
    np.testing.assert_allclose(p, np.eye(n))
    np.testing.assert_allclose(l, l_ref, atol=1e-12)
    np.testing.assert_allclose(u, u_ref, atol=1e-12)


def test_fig3_matches_the_statements_run_directly():
    A, B, D, E = np.zeros(4), np.zeros(4), np.zeros(5), np.zeros(5)
    A += D[:-1]
    A[:] = D[:-1]
    B += E[:-1]
    B[:] = E[:-1]
    T = A * B
    np.maximum(T, E[1:], out=D[1:])
    np.minimum(T, D[1:], out=E[1:])
    result = teaching.fig3()
    assert result.shape == (5,)
    np.testing.assert_array_equal(result, D)
    w = get_workload("fig3")
    assert w.presets["tiny"] == w.presets["medium"] == w.presets["paper"] == {}


def test_fig1_loops_multiplies_by_one_plus_b():
    rng = np.random.default_rng(3)
    a0, b = rng.random(10), rng.random(10)
    a, checksum = teaching.fig1_loops(n=10, iterations=4, seed=3)
    np.testing.assert_allclose(a, a0 * (1 + b) ** 4)
    assert checksum == pytest.approx(a.sum())


def test_softmax_rows_sum_to_one():
    p = teaching.softmax(rows=5, cols=7, seed=2)
    assert np.all(p > 0)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)


def test_normalize2():
    by_sum, by_positive = teaching.normalize2(n=50, seed=1)
    xs = np.random.default_rng(1).normal(0.5, 1.0, 50)
    np.testing.assert_allclose(by_sum, xs / xs.sum())
    np.testing.assert_allclose(by_positive, xs / xs[xs > 0].sum())


def test_stencils_relax_toward_the_boundary():
    _, d1 = teaching.stencil_2d(n=8, iterations=2)
    _, d2 = teaching.stencil_2d(n=8, iterations=30)
    assert 0 < d2 < d1
    _, h1 = paper.heat_equation(n=8, iterations=2)
    _, h2 = paper.heat_equation(n=8, iterations=30)
    assert 0 < h2 < h1
    _, s1 = paper.sor(n=8, iterations=2)
    _, s2 = paper.sor(n=8, iterations=30)
    assert 0 < s2 < s1


def test_game_of_life_follows_the_rule():
    board, alive = paper.game_of_life(n=10, iterations=1, seed=4)
    rng = np.random.default_rng(4)
    start = np.zeros((12, 12))
    start[1:-1, 1:-1] = rng.random((10, 10)) < 0.3
    neighbours = sum(
        start[1 + di:11 + di, 1 + dj:11 + dj] for di in (-1, 0, 1) for dj in (-1, 0, 1) if (di, dj) != (0, 0)
    )
    alive_before = start[1:-1, 1:-1]
    expected = ((alive_before == 1) & (neighbours == 2)) | (neighbours == 3)
    np.testing.assert_array_equal(board, expected.astype(float))
    assert alive == expected.sum()


def test_conservation_laws():
    _, volume = paper.shallow_water(n=10, iterations=5)
    assert volume == pytest.approx(10 * 10 + 1)  # still water plus the one-cell drop
    rho, f, _ = paper.lattice_boltzmann_d3q19(nx=5, ny=4, nz=3, iterations=4)
    assert rho.sum() == pytest.approx(5 * 4 * 3)
    np.testing.assert_allclose(rho, f.sum(axis=0))


def test_stencil_27pt_is_a_mean_of_the_neighbourhood():
    grid, _ = paper.stencil_27pt(n=5, iterations=1)
    start = np.zeros((5, 5, 5))
    start[1:2, 1:2, 1:2] = 100.0
    expected = sum(
        start[i:3 + i, j:3 + j, k:3 + k] for i in range(3) for j in range(3) for k in range(3)
    ) / 27
    np.testing.assert_allclose(grid[1:-1, 1:-1, 1:-1], expected)


def test_rosenbrock_known_value():
    x = np.random.default_rng(0).uniform(-2.0, 2.0, 30)
    expected = np.sum(100 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)
    assert paper.rosenbrock(n=30, iterations=2, seed=0) == pytest.approx(expected)
