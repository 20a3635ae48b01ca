"""The WSP graph's contraction rules as a rule over classes (``WSPGraph._contraction_rules``)
agree with the rule read pair by pair, and stay linear in a loop of dot products.

A Python loop of ``np.dot`` on row slices (npbench's Cholesky, 1,275 dot products in one
batch of 7,166 instructions at n = 50) listed every pair of a contraction with another
contraction of its (0-d) domain: its graph took most of ``verify``'s 92 s."""

from __future__ import annotations

import io
from contextlib import redirect_stdout

from hypothesis import given, settings, strategies as st

from fusionlab.ir.bytecode import OpFamily
from fusionlab.capture import capture
from fusionlab.analysis.wsp import WSPGraph

OPS = [
    "s{k} = np.dot(A[{i}, :{j}], A[{j}, :{j}])",
    "A[{i}, {j}] -= np.dot(A[{i}, :{j}], A[{j}, :{j}])",
    "A[{i}, {j}] /= A[{j}, {j}] + 1.0",
    "v = A[{i}] @ B",
    "w = A @ v",
    "m = float(A[{i}].sum())",
    "A[{i}] = A[{i}] * 0.5 + {k}",
    "B[:, {j}] = np.cumsum(B[:, {j}])",
    "u = (A[{j}] @ B) * 2.0 + 1.0",
    "t = np.outer(A[{i}], A[{j}]).max()",
]


@st.composite
def programs(draw: st.DrawFn) -> str:
    lines = ["import numpy as np", "A = np.arange(36.0).reshape(6, 6) / 7", "B = np.ones((6, 6))",
             "v = np.ones(6)"]
    for k in range(draw(st.integers(3, 14))):
        op = draw(st.sampled_from(OPS))
        lines.append(op.format(i=draw(st.integers(0, 5)), j=draw(st.integers(1, 5)), k=k))
    return "\n".join(lines) + "\n"


class PairwiseGraph(WSPGraph):
    """The rule read pair by pair, as it was: every instruction of a contraction's domain
    asked in turn (the oracle)."""

    def _contraction_rules(self) -> None:
        from fusionlab.analysis.wsp import _contraction_conflict

        for c, ins in enumerate(self.program):
            if ins.opcode not in OpFamily.CONTRACTION:
                continue
            for j in range(self.n):
                if j == c or self.domain[j] is None or self.domain[j] != self.domain[c]:
                    continue
                got = _contraction_conflict(ins, c, self.program[j], j, self.capabilities.contraction_epilogue)
                if got is not None:
                    self._forbid(c, j, got[0], got[1])


def _batches(source: str):
    with redirect_stdout(io.StringIO()):
        return capture(source).batches


@settings(max_examples=60, deadline=None)
@given(programs())
def test_classes_answer_as_the_pairs_do(source):
    for batch in _batches(source):
        fast, slow = WSPGraph(batch), PairwiseGraph(batch)
        assert fast.explicit_mask == slow.explicit_mask
        for u in range(len(batch)):
            for v in range(u + 1, len(batch)):
                assert fast.forbidden(u, v) == slow.forbidden(u, v), (u, v)
        assert fast.drawn_conflicts() == slow.drawn_conflicts()


def test_a_loop_of_dot_products_lists_no_pair_of_them():
    n = 14
    source = f"""
import numpy as np
A = np.eye({n}) * {n} + np.arange({n * n}.0).reshape({n}, {n}) / {n * n}
A = A @ A.T
A[0, 0] = np.sqrt(A[0, 0])
for i in range(1, {n}):
    for j in range(i):
        A[i, j] -= np.dot(A[i, :j], A[j, :j])
        A[i, j] /= A[j, j]
    A[i, i] -= np.dot(A[i, :i], A[i, :i])
    A[i, i] = np.sqrt(A[i, i])
"""
    batch = max(_batches(source), key=len)
    g = WSPGraph(batch)
    dots = [c for c, ins in enumerate(batch) if ins.opcode in OpFamily.CONTRACTION]
    assert len(dots) >= n * (n - 1) // 2
    # every pair of dot products is forbidden ...
    reasons = {g.forbidden(c, d)[0].name for c in dots[:20] for d in dots[:20] if c < d}
    assert "CONTRACTION_PAIR" in reasons and reasons <= {"CONTRACTION_PAIR", "OVERLAP", "SHAPE"}
    # the dots of one domain (the first, j = 0, is of an empty row: another domain)
    common = max({g.domain[c] for c in dots}, key=lambda d: sum(g.domain[c] == d for c in dots))
    same = [c for c in dots if g.domain[c] == common]
    c0 = same[0]
    assert len(same) > n and bin(g.explicit_mask[c0] & sum(1 << c for c in same)).count("1") == len(same) - 1
    # ... but few are listed: those Def. 12 forbids (a temporary's name reused), not the rule's
    listed = sum(1 for (u, v) in g._explicit if u in set(dots) and v in set(dots))
    assert listed <= len(dots) < len(same) * (len(same) - 1) // 2
