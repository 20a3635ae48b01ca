"""Where the first-order error model gives up, an empirical bound: the program replayed a few
times with every rounding the model allows drawn at random (Monte-Carlo arithmetic: Parker,
Pierce and Eggert, 2000; the idea of Verificarlo and CADNA).

The model of :mod:`fusionlab.runtime.errors` bounds each value by the worst case of its
operands' boxes. Through a long time loop of a chaotic system (an n-body step, whose
accelerations divide by small separations) that worst case grows about tenfold a step and
soon reaches infinity, while two correct evaluations really drift apart far more slowly:
npbench's n-body, 40 steps, ends 1e-7 apart relative where the model's bound is infinite.
The check used to hold such values to its per-array tolerance (about 1e-12 here), so a
correct kernel was reported wrong.

Each sample replays the batches with NumPy (the reference executor) and adds to every
floating result a uniform draw from ``[-l, l]``, ``l`` the instruction's own allowance in the
model (its bound with exact operands: the last-place units of a correctly rounded or a math
function's result, a reduction's reordering term). The spread of the samples around the
unperturbed replay is how far the roundings the model allows carry through this program; the
check allows :data:`FACTOR` times the largest spread of an array on the elements whose model
bound is infinite (docs/check.md, "The check's error model").

Examples
--------
>>> from fusionlab import parse
>>> p = parse("ARRAY X float64[100]\\nARRAY Y float64[100]\\nRANGE X, step=0.01\\n"
...           "EXP Y, X\\nSYNC Y")
>>> from fusionlab.runtime.errors import allowance, propagate
>>> values, _ = propagate([p], samples=0)
>>> spread = sampled_spread([p], None, {}, values, {"Y"}, allowance)
>>> 0 < spread["Y"] < 1e-12
True
"""

from __future__ import annotations

from typing import Any, Callable, Collection, Mapping, Sequence

import numpy as np

from fusionlab.ir.bytecode import Instruction, OpFamily, Program, View
from fusionlab.runtime.reference import Externals, Storage, execute_instruction

__all__ = ["SAMPLES", "FACTOR", "SEED", "Allowance", "sampled_spread"]

#: Replays drawn: three give the spread's order of magnitude, which is what :data:`FACTOR`
#: needs (the check is against a bound, not an estimate of a distribution's tail).
SAMPLES = 3

#: The bound allowed over the largest spread seen: a few samples see less than the largest
#: drift two evaluations may reach, and a wrong kernel is off by far more than this (order one).
FACTOR = 8.0

#: The samples' random draws are fixed: a check gives the same verdict every time.
SEED = 20_000

#: An instruction's own rounding allowance from its operands' values (``out`` None, before it
#: runs) or from its result (after, for calls known only then: None before):
#: :func:`fusionlab.runtime.errors.allowance`.
Allowance = Callable[[Instruction, Sequence[Any], Any], Any]


def _perturbed(ins: Instruction, storage: Storage, externals: Externals, synced: dict[str, np.ndarray],
               allowance: Allowance, rng: np.random.Generator) -> None:
    """Run ``ins`` and move its floating result by a random fraction of its allowance."""
    out_dtype = np.dtype(ins.outputs[0].dtype) if ins.outputs else None
    noisy = (out_dtype is not None and out_dtype.kind in "fc" and ins.opcode not in OpFamily.SYSTEM
             and ins.opcode not in OpFamily.GENERATOR)
    vals = [storage.view(x) if isinstance(x, View) else x.value for x in ins.inputs] if noisy else []
    # before the instruction runs: it may overwrite an operand
    own = allowance(ins, vals, None) if noisy else None
    execute_instruction(ins, storage, externals, synced)
    if not noisy:
        return
    out = storage.view(ins.outputs[0])
    if own is None:
        own = allowance(ins, vals, out)
    step = np.broadcast_to(np.asarray(own, dtype=np.float64), out.shape)
    step = np.where(np.isfinite(step), step, 0.0)
    if out.size and step.any():
        moved = (out + rng.uniform(-1.0, 1.0, out.shape) * step).astype(out.dtype)
        if out.dtype.kind == "f":
            # stored in its type, a move rounds by up to half a unit past its allowance (two
            # float32 units are 2.3% more than eps * |x| at x = 1000): step back toward the value
            over = np.abs(moved.astype(np.float64) - out) > step
            moved = np.where(over, np.nextafter(moved, out), moved)
        out[...] = moved


def _replay(batches: Sequence[Program], externals: Externals, inputs: Mapping[str, np.ndarray],
            allowance: Allowance, rng: np.random.Generator) -> dict[str, np.ndarray]:
    storage, synced = Storage(dict(inputs)), {}
    for batch in batches:
        for ins in batch:
            _perturbed(ins, storage, externals, synced, allowance, rng)
    return synced


def sampled_spread(batches: Sequence[Program], externals: Externals | None, inputs: Mapping[str, np.ndarray],
                   reference: Mapping[str, np.ndarray], names: Collection[str], allowance: Allowance,
                   samples: int = SAMPLES) -> dict[str, float]:
    """The largest ``|sample - reference|`` over the elements of each synced base in
    ``names``, over ``samples`` perturbed replays; ``reference`` holds the unperturbed
    replay's values (:func:`fusionlab.runtime.errors.propagate`'s), ``allowance`` gives each
    instruction's own rounding allowance. NaN and infinite elements are skipped (the check
    compares those exactly); a replay the perturbation breaks (an index computed from a
    moved value) is left out."""
    externals = externals or Externals()
    spread: dict[str, float] = {}
    with np.errstate(all="ignore"):
        for k in range(samples):
            try:
                got = _replay(batches, externals, inputs, allowance, np.random.default_rng(SEED + k))
            except Exception:  # noqa: BLE001 - the user's program, replayed with moved values
                continue
            for name in names:
                if name not in got or name not in reference:
                    continue
                d = np.abs(np.asarray(got[name], dtype=np.complex128)
                           - np.asarray(reference[name], dtype=np.complex128))
                d = d[np.isfinite(d)]
                if d.size:
                    spread[name] = max(spread.get(name, 0.0), float(d.max()))
    return spread
