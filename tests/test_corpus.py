"""The realistic corpus (``fusionlab.workloads.corpus``) at its tiny size, against plain NumPy.

Three differential checks per program, each against the program run plainly:

- capture: the namespace capture leaves behind holds exactly what plain NumPy leaves
  (same types, dtypes, shapes and values; dicts, lists, tuples and Generators compared
  structurally);
- replay: the recorded batches, replayed by the reference executor under the partition of
  every algorithm (singleton, linear, greedy, optimal, ilp; the last two on small budgets),
  give the arrays plain NumPy gives;
- run: the fused kernels under every driver of ``fusionlab.pipeline.runner`` (python, numba,
  blocks) give them too, and the driver asked for is the one that ran (a program with an
  OPAQUE instruction may go block by block, saying which block and why).

Tolerances. Capture runs NumPy itself on the real data, so its namespace must be equal bit
for bit. Replay and the kernels may reorder floating-point work: a fused kernel evaluates
each element's expression in one pass (the same operations in the same order per element,
but through LLVM's ``exp``/``log``/``pow``, which differ from NumPy's SIMD routines by an
ulp or two) and a reduction adds its terms in another order (pairwise in NumPy, per thread
then combined in a kernel). The programs here run at most a few dozen dependent steps on
well-conditioned data, so the differences stay within a few hundred ulps of the array's
scale: ``|got - want| <= 2**8 * eps(dtype) * max(1, max|want|)`` elementwise (5.7e-14 for
float64, 3.1e-5 for float32), and integer and bool results exactly. The result's dtype
must be NumPy's: a kernel that computes float32 work in float64 (or the reverse) fails
on the dtype before any tolerance applies.
"""

from __future__ import annotations

import io
import re
import warnings
from contextlib import redirect_stdout
from typing import Any

import numpy as np
import pytest

from fusionlab.ir.bytecode import OpFamily
from fusionlab.capture import NoticeKind, capture
from fusionlab.backend.numba.plan import KernelCache
from fusionlab.pipeline.runner import run
from fusionlab.partition import MergeCache, partition
from fusionlab.workloads import CORPUS, corpus
from fusionlab.backend.numba.driver import Runs

NAMES = list(CORPUS)
ALGORITHMS = ("singleton", "linear", "greedy", "optimal", "ilp")
#: small budgets for the exact searches: the partition need not be optimal, only legal
BUDGETS: dict[str, dict[str, Any]] = {"optimal": {"max_nodes": 2_000, "time_limit": 2.0}, "ilp": {"time_limit": 2.0}}
DRIVERS = ("python", "numba", "blocks")
KERNELS = KernelCache(bounds_checked=True)  # one cache for the module, bounds-checked (tests/kernels.py)


def _plain(name: str) -> dict[str, Any]:
    ns: dict[str, Any] = {"__name__": "__main__"}
    with warnings.catch_warnings(), redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore", DeprecationWarning)  # nbody_pairwise's strides setter
        exec(compile(CORPUS[name].script("tiny"), f"<{name}>", "exec"), ns)
    return ns


def _capture(name: str):  # type: ignore[no-untyped-def]
    with warnings.catch_warnings(), redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore", DeprecationWarning)
        return capture(CORPUS[name].script("tiny"), {"__name__": "__main__"})


def assert_identical(got: Any, want: Any, where: str = "result") -> None:
    """``got`` is what plain NumPy left: same type everywhere, arrays equal bit for bit."""
    assert type(got) is type(want), f"{where}: {type(got).__name__} instead of {type(want).__name__}"
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want), where
        for k, (a, b) in enumerate(zip(got, want)):
            assert_identical(a, b, f"{where}[{k}]")
    elif isinstance(want, dict):
        assert list(got) == list(want), where
        for k in want:
            assert_identical(got[k], want[k], f"{where}[{k!r}]")
    elif isinstance(want, np.random.Generator):
        assert got.bit_generator.state == want.bit_generator.state, where
    elif isinstance(want, (np.ndarray, np.generic)):
        assert got.dtype == want.dtype and got.shape == want.shape, f"{where}: {got.dtype}{got.shape}"
        np.testing.assert_array_equal(got, want, err_msg=where, strict=True)
    else:
        assert got == want, where


def assert_close(got: Any, want: Any, where: str) -> None:
    """An array computed by replay or kernels against NumPy's (tolerance: the module doc)."""
    assert isinstance(got, (np.ndarray, np.generic, float, complex)), f"{where}: {type(got).__name__}"
    assert type(got) is type(want) or not isinstance(want, (float, complex)), f"{where}: {type(got).__name__}"
    want = np.asarray(want)
    got = np.asarray(got)
    assert got.dtype == want.dtype and got.shape == want.shape, \
        f"{where}: {got.dtype}{got.shape} instead of {want.dtype}{want.shape}"
    if want.dtype.kind in "fc":
        scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
        bound = 2**8 * float(np.finfo(want.dtype).eps) * scale
        err = float(np.max(np.abs(got - want))) if want.size else 0.0
        assert err <= bound, f"{where}: max abs error {err:.3g} > {bound:.3g}"
    else:
        np.testing.assert_array_equal(got, want, err_msg=where)


def _at(value: Any, label: str) -> Any:
    """The part of ``value`` a label such as ``result[1]`` or ``result['u']`` names."""
    for key in re.findall(r"\[([^\]]+)\]", label):
        value = value[int(key)] if key.lstrip("-").isdigit() else value[key.strip("'\"")]
    return value


def _expected_labels(result: Any) -> set[str]:
    """The arrays a run hands back by name: the result, or its tuple/list elements."""
    if isinstance(result, np.ndarray):
        return {"result"}
    if isinstance(result, (tuple, list)):
        return {f"result[{k}]" for k, x in enumerate(result) if isinstance(x, np.ndarray)}
    return set()


def _check_values(values: dict[str, Any], plain: dict[str, Any], how: str) -> None:
    missing = _expected_labels(plain["result"]) - set(values)
    assert not missing, f"{how}: no value for {sorted(missing)}"
    for label, got in values.items():
        name = label.split("[", 1)[0]
        assert_close(got, _at(plain[name], label), f"{how}: {label}")


# ---- the corpus itself -----------------------------------------------------------------------


def test_corpus_is_registered_with_its_sizes():
    assert len(NAMES) >= 15
    assert NAMES == list(corpus.PRESETS) == list(corpus.DESCRIPTIONS) == corpus.__all__
    for name, w in CORPUS.items():
        assert w.function is getattr(corpus, name)
        assert {"tiny", "medium", "large", "paper"} <= set(w.presets)
        assert w.presets["paper"] == w.presets["large"]
        assert not re.search(r"^\s*(import|from) fusionlab", w.script("tiny"), re.M)  # plain NumPy


def test_corpus_covers_the_idioms_of_issue_13():
    source = {name: CORPUS[name].script("tiny") for name in NAMES}
    every = "\n".join(source.values())
    for idiom in ("[1:-1, 1:-1] +=", "np.empty_like", "[0] = 0.0", 'np.einsum("ii->i"', ".flat[:: n + 1]",
                  ".strides = ", "as_strided", "state = {", "np.float32", "default_rng", "standard_normal",
                  "np.uint8", "[low] = -x[low]", "a[[k, p]] = a[[p, k]]", "u[i, k:] -= "):
        assert idiom in every, idiom
    assert "uc += " in source["gray_scott"]


@pytest.mark.parametrize("name", NAMES)
def test_plain_run_is_deterministic(name: str):
    assert_identical(_plain(name)["result"], _plain(name)["result"])


def test_known_answers():
    l, u, error = corpus.lu_rows(n=12)
    np.testing.assert_allclose(np.tril(u, -1), 0.0, atol=1e-12)
    assert error < 1e-12 and np.allclose(np.triu(l, 1), 0.0)
    x, residual = corpus.gauss_pivot(n=12)
    rng = np.random.default_rng(0)
    a, b = rng.random((12, 12)), rng.random(12)
    np.testing.assert_allclose(x, np.linalg.solve(a, b), rtol=1e-10)
    state, totals = corpus.sir_dict(n=10, steps=4, iterations=2)
    assert sum(totals.values()) == pytest.approx(100.0)  # people are conserved
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        pos, _ = corpus.nbody_pairwise(n=2, iterations=1)
    # two bodies pull each other along their separation, not themselves
    start = np.random.default_rng(0).uniform(-1.0, 1.0, (3, 2))
    moved = pos - start
    sep = start[:, 1] - start[:, 0]
    assert np.dot(moved[:, 0], sep) > 0 > np.dot(moved[:, 1], sep)
    p, lse, _ = corpus.softmax_logsumexp(rows=5, cols=3, iterations=1)
    np.testing.assert_allclose(p.sum(axis=1), 1.0)
    (x, y), _, _ = corpus.particles_box(n=200, steps=20, iterations=2)
    assert ((x >= 0) & (x <= 1)).all() and (y >= 0).all()


# ---- capture, replay and run against plain NumPy ---------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_capture_leaves_what_plain_numpy_leaves(name: str):
    plain = _plain(name)
    cap = _capture(name)
    # every name the program binds (dunders such as __warningregistry__ are the interpreter's)
    assert {k for k in cap.namespace if not k.startswith("__")} == {k for k in plain if not k.startswith("__")}
    assert_identical(cap.namespace["result"], plain["result"])


@pytest.mark.parametrize("name", NAMES)
def test_replay_under_every_algorithm_equals_plain_numpy(name: str):
    plain = _plain(name)
    cap = _capture(name)
    for algorithm in ALGORITHMS:
        merge = MergeCache()
        parts = {k: partition(b, algorithm, cache=merge, **BUDGETS.get(algorithm, {})).blocks
                 for k, b in enumerate(cap.batches)}
        _check_values(cap.replay(parts), plain, f"replay under {algorithm}")


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("name", NAMES)
def test_run_under_every_driver_equals_plain_numpy(name: str, driver: str):
    plain = _plain(name)
    cap = _capture(name)
    # min_size=0: every fusible block becomes a kernel, even at the tiny size
    r = run(cap, "greedy", cache=KERNELS, min_size=0, driver=driver)
    _check_values(r.values, plain, f"run, {driver} driver")
    if driver == "blocks":
        assert r.ran is Runs.BLOCKS, r.driver
        return
    wanted = {"python": "python driver", "numba": "compiled driver"}[driver]
    numpy_run = OpFamily.OPAQUE | OpFamily.CONTRACTION
    if any(n.kind is NoticeKind.OPAQUE for n in cap.notices) or \
            any(ins.opcode in numpy_run for b in cap.batches for ins in b):
        # a block NumPy must run (an OPAQUE instruction, a reload, a lone contraction's
        # library call) may send the run block by block, but never silently: the result
        # says which block and why
        assert r.driver == wanted or re.fullmatch(r"block by block: block \[[\d, ]+\] runs with NumPy \(.+\)",
                                                  r.driver), r.driver
    else:
        assert r.driver == wanted, r.driver
