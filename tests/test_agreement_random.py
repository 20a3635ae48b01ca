"""Agreement (issue 14) on random programs: element-wise operations on slices, reductions
with and without axes, scans along either axis, SYNC and DEL; every algorithm's partition
compiles block by block, contracts what the cost models say, and equals the reference."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fusionlab.ir.bytecode import Base, Instruction, Literal, Opcode, Program, ProgramError, check_instruction

from agreement import check_agreement

ALGORITHMS = ["singleton", "linear", "unintrusive", "greedy", "optimal", "ilp"]
N = 4100   # above one scan chunk (4096): the chunked scans' carries are exercised


@st.composite
def combinator_programs(draw: st.DrawFn) -> Program:
    """Element-wise operations on slices of 1-d arrays and on a 2-d array, reductions with
    and without axes, scans along either axis, SYNC and DEL."""
    vec = [Base(f"A{i}", "float64", (N,)) for i in range(3)] + [Base("B", "float64", (N + 1,))]
    ints = [Base("I", "int64", (N,))]
    mats = [Base(f"M{i}", "float64", (3, N)) for i in range(2)]
    cols = [Base("Q", "float64", (3,)), Base("R", "float64", (3,))]
    scalars = [Base("s", "float64", ()), Base("t", "float64", ())]
    bases = vec + ints + mats + cols + scalars
    unary = [Opcode.NEGATIVE, Opcode.ABSOLUTE, Opcode.SIN, Opcode.COPY]
    binary = [Opcode.ADD, Opcode.SUBTRACT, Opcode.MULTIPLY, Opcode.MAXIMUM]
    reduce_ = [Opcode.ADD_REDUCE, Opcode.MAXIMUM_REDUCE, Opcode.MINIMUM_REDUCE]
    scans = [Opcode.ADD_ACCUMULATE, Opcode.MAXIMUM_ACCUMULATE, Opcode.MINIMUM_ACCUMULATE]

    def vview(b: Base):  # a length-N view
        return b[draw(st.sampled_from([slice(None, -1), slice(1, None)]))] if b.name == "B" else \
            b[draw(st.sampled_from([slice(None), slice(None, None, -1)]))]

    def operand(shape: tuple[int, ...]):
        if draw(st.integers(0, 5)) == 0:
            return Literal(draw(st.sampled_from([2, 0.5, -1.0])))
        if shape == (N,):
            return vview(draw(st.sampled_from(vec)))
        return draw(st.sampled_from(mats)).view()

    body: list[Instruction] = []
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.integers(0, 10))
        two_d = draw(st.booleans())
        shape = (3, N) if two_d else (N,)
        out = draw(st.sampled_from(mats)).view() if two_d else vview(draw(st.sampled_from(vec)))
        if kind == 0 and body:
            b = draw(st.sampled_from(bases))
            ins = Instruction(Opcode.SYNC, (), (b.view(),)) if draw(st.booleans()) else \
                Instruction(Opcode.DEL, (b.view(),), ())
        elif kind in (1, 2):
            src = operand(shape)
            if isinstance(src, Literal):
                continue
            axis = draw(st.sampled_from([None, 0, 1] if two_d else [None]))
            target = draw(st.sampled_from(scalars)).view() if axis is None else \
                vview(draw(st.sampled_from(vec))) if axis == 0 else draw(st.sampled_from(cols)).view()
            ins = Instruction(draw(st.sampled_from(reduce_)), (target,), (src,), {"axis": axis})
        elif kind == 3:
            src = operand(shape)
            if isinstance(src, Literal):
                continue
            ins = Instruction(draw(st.sampled_from(scans)), (out,), (src,), {"axis": draw(st.sampled_from([0, 1])) if two_d else 0})
        elif kind == 4:   # an integer scan: exact
            ins = Instruction(draw(st.sampled_from([Opcode.ADD_ACCUMULATE, Opcode.MULTIPLY_ACCUMULATE])),
                              (ints[0].view(),), (ints[0].view() if body and draw(st.booleans()) else vview(vec[0]),),
                              {"axis": 0})
            if ins.inputs[0] == ins.outputs[0]:
                continue
        elif kind <= 7:
            ins = Instruction(draw(st.sampled_from(unary)), (out,), (operand(shape),))
        else:
            ins = Instruction(draw(st.sampled_from(binary)), (out,), (operand(shape), operand(shape)))
        try:
            check_instruction(ins)
        except ProgramError:
            continue
        if any(v.base.name in {x.outputs[0].base.name for x in body if x.opcode is Opcode.DEL}
               for v in ins.outputs + ins.views_in):
            continue
        body.append(ins)
    return Program(tuple(bases), tuple(body))


def _inputs(p: Program) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(len(p))
    return {b.name: (rng.integers(-3, 4, b.shape) if b.dtype == "int64" else rng.random(b.shape) - 0.3)
            for b in p.bases}


@settings(max_examples=15, deadline=None)
@given(program=combinator_programs())
def test_random_combinator_programs_agree_under_every_algorithm(program):
    inputs = _inputs(program)
    # sums of up to n = 3 * 4100 terms reassociated (reductions) or regrouped by chunks
    # (scans) are within 2 n u sum|x| <= 2 n^2 u max|x| = 3.3e-8 max|x| of NumPy's
    check_agreement([program], ALGORITHMS, inputs, rtol=1e-9, atol=4e-8 * _scale(program, inputs))


def _scale(program: Program, inputs: dict[str, np.ndarray]) -> float:
    from fusionlab.runtime.reference import run_reference

    out = run_reference(program, inputs=inputs)
    finite = [np.abs(v[np.isfinite(v)]).max() for v in map(np.asarray, out.values())
              if v.dtype.kind == "f" and np.isfinite(v).any()]
    return max([1.0] + [float(x) for x in finite])
