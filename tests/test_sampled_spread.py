"""Where the error model gives up, the check's bound comes from perturbed replays
(fusionlab/runtime/spread.py).

A chaotic time loop (a small n-body leapfrog: accelerations divide by the cube of small
separations) drives the first-order bound to infinity within a few steps, while two correct
evaluations drift apart slowly. The check used to fall back to the per-array tolerance there
and reported a correct evaluation (``x ** -1.5`` as ``(1 / sqrt(x)) ** 3``, the kernels'
form) as wrong; the sampled bound lets it pass and still catches wrong values.
"""

from __future__ import annotations

import io
import os
from contextlib import redirect_stdout

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from fusionlab.capture import capture
from fusionlab.runtime import spread as spread_module
from fusionlab.runtime.check import check_namespace, plain_namespace, program_bounds
from fusionlab.runtime.errors import allowance, propagate
from fusionlab.pipeline.runner import run
from fusionlab.runtime.spread import sampled_spread

from test_error_model import chain_source, chains

# kernels bounds-checked (serial): this file tests the error model's sampled spread, not the kernels' parallel loops (tests/kernels.py)
pytestmark = pytest.mark.bounds_checked


NBODY = """import numpy as np
rng = np.random.default_rng({seed})
n, steps, dt, soft = {n}, {steps}, 0.05, 0.1
mass = np.full((n, 1), 20.0 / n)
pos = rng.random((n, 3))
vel = rng.random((n, 3))
vel -= np.mean(mass * vel, axis=0) / np.mean(mass)

def accel(pos):
    d = pos[:, None, :] - pos[None, :, :]
    r2 = (d ** 2).sum(axis=2) + soft ** 2
    inv = {power}
    return -(d * (inv * mass[:, 0])[:, :, None]).sum(axis=1)

acc = accel(pos)
for _ in range(steps):
    vel += acc * dt / 2
    pos += vel * dt
    acc = accel(pos)
    vel += acc * dt / 2
"""

NUMPY_POWER = "r2 ** -1.5"
KERNEL_POWER = "(1 / np.sqrt(r2)) ** 3"


def _captured(source: str):
    with redirect_stdout(io.StringIO()):
        return capture(source, {"__name__": "__main__"})


@pytest.fixture(scope="module")
def nbody():
    source = NBODY.format(seed=3, n=16, steps=40, power=NUMPY_POWER)
    return source, _captured(source), plain_namespace(source)


def test_the_model_gives_up_on_a_chaotic_loop_and_the_samples_do_not(nbody):
    source, cap, plain = nbody
    values, model = propagate(cap.batches, cap.externals, cap.inputs, samples=0)
    _, sampled = propagate(cap.batches, cap.externals, cap.inputs)
    assert np.isinf(model["pos"]).all() and np.isinf(model["vel"]).all()
    for name in ("pos", "vel"):
        assert np.isfinite(sampled[name]).all()
        # a bound of the drift, not "anything": far below the values themselves
        assert 0 < sampled[name].max() < 1e-3 * np.abs(values[name]).max()
    # the same bound every time (fixed draws)
    _, again = propagate(cap.batches, cap.externals, cap.inputs)
    assert all(np.array_equal(sampled[k], again[k]) for k in sampled)


def test_another_correct_evaluation_passes_and_a_wrong_one_does_not(nbody):
    source, cap, plain = nbody
    other = plain_namespace(source.replace(NUMPY_POWER, KERNEL_POWER))
    drift = np.abs(other["pos"] - plain["pos"]).max()
    assert drift > 1e-9   # the chaos is real: the two correct evaluations differ visibly
    names = ["pos", "vel", "acc"]
    bounds = program_bounds(cap)
    assert check_namespace({n: other[n] for n in names}, plain, names, bounds=bounds).ok
    # without the samples, the per-array tolerance replaced the infinite bounds: a false alarm
    values, model = propagate(cap.batches, cap.externals, cap.inputs, samples=0)
    unsampled = cap.values_from(model)
    assert not check_namespace({n: other[n] for n in names}, plain, names, bounds=unsampled).ok
    # wrong values are still caught: one particle's position off by 1e-4, a step too few
    moved = other["pos"].copy()
    moved[3, 1] += 1e-4
    report = check_namespace({**{n: other[n] for n in names}, "pos": moved}, plain, names, bounds=bounds)
    assert [m.path for m in report.mismatches] == ["pos"]
    short = plain_namespace(NBODY.format(seed=3, n=16, steps=39, power=NUMPY_POWER))
    report = check_namespace({n: short[n] for n in names}, plain, names, bounds=bounds)
    assert {m.path for m in report.mismatches} == set(names)


def test_run_check_of_the_chaotic_loop_passes(nbody):
    source, cap, plain = nbody
    r = run(cap, "greedy", "bohrium", check=True, driver="python", min_size=0)
    assert r.check is not None and r.check.ok, r.check.mismatches


def test_no_replay_when_every_bound_is_finite(monkeypatch: pytest.MonkeyPatch):
    calls = []
    real = spread_module._replay
    monkeypatch.setattr(spread_module, "_replay", lambda *a: calls.append(1) or real(*a))
    cap = _captured(chain_source("softmax", "numpy", seed=1, n=100, scale=1.0, offset=0.0, dt="float64"))
    values, bounds = propagate(cap.batches, cap.externals, cap.inputs)
    assert calls == [] and all(np.isfinite(b).all() for b in bounds.values())


def _samples_within_bounds(chain: dict) -> None:
    tail = chain.pop("tail")
    cap = _captured(chain_source(tail, "numpy", **chain))
    values, bounds = propagate(cap.batches, cap.externals, cap.inputs, samples=0)
    names = {n for n, v in values.items() if np.asarray(v).dtype.kind == "f" and np.isfinite(bounds[n]).all()}
    got = sampled_spread(cap.batches, cap.externals, cap.inputs, values, names, allowance, samples=2)
    for name, s in got.items():
        v = np.asarray(values[name])
        stored = float(np.finfo(v.dtype).eps * np.abs(v).max())
        assert s <= bounds[name].max() * (1 + 1e-9) + stored, (name, s, bounds[name].max())


# found by hypothesis: the samples moved a float32 input by two whole units, 2.3% more than
# the model's eps * |x| just below a power of two (x ~ 1000 < 1024), and exp(x - x.max())
# carried that past the model's bound (2.431e-4 against 2.406e-4). A move rounded to its
# type now steps back within its allowance (runtime/spread.py, _perturbed).
def test_the_samples_of_inputs_just_below_a_power_of_two_stay_within_the_bounds():
    _samples_within_bounds({"tail": "softmax", "dt": "float32", "n": 103, "seed": 20, "scale": 1.0,
                            "offset": 1000.0})


# derandomized: CI explores the same draws every run (a random one found the case above;
# with FUSIONLAB_HYPOTHESIS=thorough, --hypothesis-seed N explores others)
@settings(max_examples=25, deadline=None, derandomize=os.environ.get("FUSIONLAB_HYPOTHESIS", "default") != "thorough")
@given(chains)
def test_the_samples_stay_within_the_models_finite_bounds(chain):
    # the samples draw roundings the model allows: where the model's first-order bound is
    # finite, no sample may leave it (the two must agree where both apply), but for the
    # rounding of a moved float32 result to its dtype (the check allows that unit too)
    _samples_within_bounds(chain)
