"""Hypothesis strategies: random bytecode programs with overlaps, shapes, DEL and SYNC."""

from __future__ import annotations

from typing import Iterator

from hypothesis import strategies as st

from fusionlab.ir.bytecode import Base, Instruction, Literal, Opcode, Program, ProgramError, check_instruction

# Views of a 1-d base of 5 elements that have 4 elements (so they mix with 4-element bases),
# and whole views. Overlapping, non-identical pairs among them make fuse-preventing edges.
_SLICES_5 = [slice(None, -1), slice(1, None)]
_SLICES_4 = [slice(None), slice(None, None, -1)]
_UNARY = [Opcode.SQRT, Opcode.NEGATIVE, Opcode.EXP, Opcode.ABSOLUTE, Opcode.COPY]
_BINARY = [Opcode.ADD, Opcode.MULTIPLY, Opcode.SUBTRACT, Opcode.MAXIMUM, Opcode.MINIMUM]


@st.composite
def programs(draw: st.DrawFn, min_size: int = 1, max_size: int = 8) -> Program:
    """A random valid program of ``min_size..max_size`` instructions."""
    bases = [Base(f"A{i}", "float64", (4,)) for i in range(draw(st.integers(1, 3)))]
    bases += [Base(f"B{i}", "float64", (5,)) for i in range(draw(st.integers(0, 2)))]
    bases += [Base(f"C{i}", "float64", (2, 2)) for i in range(draw(st.integers(0, 1)))]
    bases.append(Base("s", "float64", ()))
    n = draw(st.integers(min_size, max_size))

    def view4(b: Base):
        if b.shape == (5,):
            return b[draw(st.sampled_from(_SLICES_5))]
        if b.shape == (4,):
            return b[draw(st.sampled_from(_SLICES_4))]
        return None

    def operand(shape: tuple[int, ...]):
        if draw(st.integers(0, 4)) == 0:
            return Literal(draw(st.sampled_from([0, 1, 2.5, -1.0])))
        cands = [b for b in bases if (shape == (4,) and b.shape in ((4,), (5,))) or b.shape in (shape, ())]
        if not cands:
            return Literal(1.0)
        b = draw(st.sampled_from(cands))
        if shape == (4,) and b.ndim:
            return view4(b)
        return b.view()

    body: list[Instruction] = []
    deleted: set[str] = set()
    attempts = 0
    while len(body) < n and attempts < 10 * n:
        attempts += 1
        kind = draw(st.integers(0, 12))
        live = [b for b in bases if b.name not in deleted]
        if not [b for b in live if b.ndim]:
            break
        if kind == 0 and body:
            b = draw(st.sampled_from([b for b in live if b.ndim]))
            op = draw(st.sampled_from([Opcode.SYNC, Opcode.DEL]))
            ins = Instruction(op, (b.view(),) if op is Opcode.DEL else (), () if op is Opcode.DEL else (b.view(),))
        elif kind == 1:
            src = draw(st.sampled_from([b for b in live if b.ndim]))
            ins = Instruction(Opcode.ADD_REDUCE, (bases[-1].view(),), (src.view(),), {"axis": None})
        else:
            out_base = draw(st.sampled_from([b for b in live if b.ndim]))
            out = view4(out_base) if out_base.shape != (2, 2) else out_base.view()
            if out is None:
                continue
            if draw(st.booleans()):
                ins = Instruction(draw(st.sampled_from(_UNARY)), (out,), (operand(out.shape),))
            else:
                ins = Instruction(draw(st.sampled_from(_BINARY)), (out,), (operand(out.shape), operand(out.shape)))
        if any(v.base.name in deleted for v in ins.outputs + ins.views_in):
            continue
        try:
            check_instruction(ins)
        except ProgramError:
            continue
        body.append(ins)
        if ins.opcode is Opcode.DEL:
            deleted.add(ins.outputs[0].base.name)
    return Program(tuple(bases), tuple(body))


@st.composite
def numpy_sources(draw: st.DrawFn) -> str:
    """Random NumPy code: element-wise ops, in-place and overlapping updates, masks,
    reductions, scans and views, on arrays made in the code."""
    n = draw(st.integers(3, 6))
    seed = draw(st.integers(0, 9))
    lines = [
        "import numpy as np",
        f"rng = np.random.default_rng({seed})",
        f"a = rng.random({n}) + 0.5",
        f"b = np.arange({n}, dtype=np.float64)",
        f"M = rng.random((3, {n}))",
    ]
    arrays, scalars = ["a", "b"], []
    for k in range(draw(st.integers(1, 12))):
        x, y = draw(st.sampled_from(arrays)), draw(st.sampled_from(arrays))
        new = f"v{k}"
        choice = draw(st.integers(0, 15))
        if choice == 0:
            op = draw(st.sampled_from(["+", "-", "*"]))
            lines.append(f"{new} = {x} {op} {y}")
        elif choice == 1:
            lines.append(f"{new} = {x} / (np.abs({y}) + 1.0)")
        elif choice == 2:
            fn = draw(st.sampled_from(["np.sqrt(np.abs({}))", "np.exp(-{})", "np.maximum({}, 0.7)", "-{}"]))
            lines.append(f"{new} = " + fn.format(x))
        elif choice == 3:
            lines.append(f"{x} += {y}")
            continue
        elif choice == 4:
            lines.append(f"{x}[1:] = {y}[:-1] * 2")
            continue
        elif choice == 5:
            lines.append(f"{x}[::2] *= 1.5")
            continue
        elif choice == 6:
            lines.append(f"{new} = {x}.sum()")
            scalars.append(new)
            continue
        elif choice == 7:
            lines.append(f"{new} = np.where({x} > {y}, {x}, {y})")
        elif choice == 8:
            lines.append(f"{x}[{x} > 1.0] = 0.25")
            continue
        elif choice == 9 and scalars:
            lines.append(f"{new} = {x} * {draw(st.sampled_from(scalars))}")
        elif choice == 10:
            lines.append(f"{new} = M.sum(axis=0) + {x}")
        elif choice == 11:
            lines.append(f"{new} = M[1] - {x}.max()")
        elif choice == 12:
            lines.append(f"{new} = np.cumsum({x})")
        elif choice == 13:
            lines.append(f"{x}[:] = {x}[::-1]")   # overlapping: capture must copy first
            continue
        elif choice == 14:
            lines.append(f"{new} = ({x} < {y}).astype(np.float64) + M.mean(axis=0)")
        else:
            lines.append(f"{new} = {x}.copy(); {new}[0] = {y}[-1]")
        arrays.append(new)
    return "\n".join(lines) + "\n"


def set_partitions(items: list) -> "Iterator[list[list]]":
    """Every partition of ``items`` into non-empty blocks (Bell-number many): the exhaustive
    oracle the cost and exact-search tests enumerate."""
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for part in set_partitions(rest):
        yield [[first]] + part
        for k in range(len(part)):
            yield part[:k] + [[first] + part[k]] + part[k + 1:]
