"""Small bytecode programs used by the documentation, the demo and the tests.

>>> p = fig3()
>>> len(p), p[0].opcode.name, p[16].opcode.name
(17, 'COPY', 'DEL')
"""

from __future__ import annotations

from importlib import resources

from .bytecode import Program
from .text import parse

__all__ = ["fig3", "fig3_text", "FIG3_PYTHON"]

#: The Python program of the paper's Fig. 3a (Bohrium's ``bh`` spelled as NumPy).
FIG3_PYTHON = """\
import numpy as np

def synthetic():
    A = np.zeros(4)
    B = np.zeros(4)
    D = np.zeros(5)
    E = np.zeros(5)
    A += D[:-1]
    A[:] = D[:-1]
    B += E[:-1]
    B[:] = E[:-1]
    T = A * B
    np.maximum(T, E[1:], out=D[1:])
    np.minimum(T, D[1:], out=E[1:])
    return D

print(synthetic())
"""


def fig3_text() -> str:
    """The bytecode of the paper's Fig. 3b, with the ARRAY lines it needs, as text."""
    return resources.files("fusionlab").joinpath("data/fig3.bc").read_text()


def fig3() -> Program:
    """The 17-instruction program of the paper's Fig. 3b."""
    return parse(fig3_text())
