"""Small bytecode programs used by the documentation, the demo and the tests.

>>> p = fig3()
>>> len(p), p[0].opcode.name, p[16].opcode.name
(17, 'COPY', 'DEL')
"""

from __future__ import annotations

from importlib import resources

from fusionlab.ir.bytecode import Program
from fusionlab.ir.text import parse

__all__ = ["fig3", "fig3_text", "FIG3_PYTHON"]

def _fig3_python() -> str:
    import inspect
    import textwrap

    from fusionlab.workloads.teaching import fig3 as synthetic

    return textwrap.dedent(inspect.getsource(synthetic)) + "\n\nprint(fig3())\n"


#: The Python program of the paper's Fig. 3a (Bohrium's ``bh`` spelled as NumPy): the
#: ``fig3`` workload's function, then ``print`` of its result (the SYNC of Fig. 3b).
FIG3_PYTHON = _fig3_python()


def fig3_text() -> str:
    """The bytecode of the paper's Fig. 3b, with the ARRAY lines it needs, as text."""
    return resources.files("fusionlab").joinpath("data/fig3.bc").read_text()


def fig3() -> Program:
    """The 17-instruction program of the paper's Fig. 3b."""
    return parse(fig3_text())


def random_program(n: int, seed: int = 0, arrays: int = 6, size: int = 1000) -> Program:
    """A random program of ``n`` instructions shaped like captured NumPy code.

    A few long-lived arrays (two shapes, some slices of them) feed a stream of element-wise
    instructions that create temporaries; temporaries are freed (DEL) a few instructions
    after their last use, and the long-lived arrays are synced at the end. Used by the
    benchmarks and for classroom experiments.

    >>> p = random_program(50, seed=1)
    >>> len(p), p[len(p) - 1].opcode.name
    (50, 'SYNC')
    """
    import random as _random

    from fusionlab.ir.bytecode import Base, Instruction, Literal, Opcode

    rng = _random.Random(seed)
    shapes = [(size,), (size + 1,)]
    users = [Base(f"U{k}", "float64", shapes[k % 2]) for k in range(arrays)]
    bases: list[Base] = list(users)
    live: list[Base] = list(users)
    body: list[Instruction] = []
    last_use: dict[str, int] = {}
    binary = [Opcode.ADD, Opcode.MULTIPLY, Opcode.SUBTRACT, Opcode.MAXIMUM, Opcode.DIVIDE]
    unary = [Opcode.SQRT, Opcode.EXP, Opcode.NEGATIVE, Opcode.ABSOLUTE]
    tmp = 0
    tail = len(users)  # room for the final SYNCs
    while len(body) < n - tail:
        # free temporaries not used for a while
        for b in [b for b in live if b.name.startswith("t") and last_use.get(b.name, 0) < len(body) - 6]:
            if len(body) >= n - tail:
                break
            body.append(Instruction(Opcode.DEL, (b.view(),)))
            live.remove(b)
        if len(body) >= n - tail:
            break
        shape = rng.choice(shapes)

        def pick():
            cands = [b for b in live if b.shape == shape or b.shape == (shape[0] + 1,)]
            if not cands or rng.random() < 0.1:
                return Literal(rng.choice([0.5, 1, 2.0]))
            b = rng.choice(cands)
            last_use[b.name] = len(body)
            if b.shape == shape:
                return b.view()
            return b[rng.choice([slice(None, -1), slice(1, None)])]

        if rng.random() < 0.25 and len(live) > len(users):
            out = rng.choice([b for b in live if b.shape == shape] or [users[0]])
            view = out.view()
        else:
            out = Base(f"t{tmp}", "float64", shape)
            tmp += 1
            bases.append(out)
            live.append(out)
            view = out.view()
        op = rng.choice(binary + unary)
        ins_in = (pick(), pick()) if op in binary else (pick(),)
        if out in users and any(isinstance(x, type(view)) and x.base == out and x != view for x in ins_in):
            continue  # would not be data-parallel
        body.append(Instruction(op, (view,), ins_in))
        last_use[out.name] = len(body)
    for b in users[: n - len(body)]:
        body.append(Instruction(Opcode.SYNC, (), (b.view(),)))
    return Program(tuple(bases), tuple(body))
