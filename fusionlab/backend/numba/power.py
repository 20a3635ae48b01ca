"""``x ** e`` for a literal ``e`` on floats, written without a ``pow`` call where a few
vector instructions give the value within the checks' ULPS.

``pow`` is a scalar library call in the kernels (this llvmlite has no SVML): about 3.4 ns
an element on this machine in a parallel loop, 20 ns measured on the n-body pairs'
``** -1.5``, where a multiply or a ``sqrt`` vectorises. Neither form is NumPy's bits:
NumPy's own ``power`` on this machine is its AVX-512 SIMD ``pow``, not the C library's
(``k ** 3.0`` on 500,000 values: 27,604 differ from glibc's ``pow`` in the last place), so
the kernels are held to NumPy's values within :data:`~fusionlab.runtime.check.ULPS`, as
for every other math function (docs/ir.md, "Per-opcode facts").

- Half-integer exponents (:data:`HALF_POWERS`) use ``sqrt`` and a division.
- Integer-valued exponents 2 to :data:`MOST_PRODUCTS` (``k ** 2.0``, ``k ** np.float64(5)``
  in the CND of Black-Scholes, or a Python ``int``) use products by repeated squaring:
  at most ``2 log2(e)`` roundings, 3 ulp at ``e = 8``. Every intermediate lies between 1
  and the result, so none overflows or underflows where the result does not; signed zeros,
  infinities and NaN come out as C's ``pow`` gives them. Negative exponents keep ``pow``:
  ``1 / x**n`` would round a subnormal ``x**n`` before the division.

Examples
--------
>>> from fusionlab import parse
>>> from fusionlab.ir.bytecode import loop_dtypes
>>> ins = parse("ARRAY A float64[4]\\nPOWER A, A, 5.0")[0]
>>> literal_power(ins, loop_dtypes(ins))
5.0
>>> power_expression("x", 5.0, np.dtype("float64"))
'(((x * x) * (x * x)) * x)'
>>> power_expression("x", 0.5, np.dtype("float64"))
'np.sqrt(x)'
"""

from __future__ import annotations

import numpy as np

from fusionlab.ir.bytecode import Instruction, Literal, Opcode
from fusionlab.backend.numba.emit import np_type
from fusionlab.ir.opcodes import HALF_POWERS, MOST_PRODUCTS, power_without_pow

__all__ = ["HALF_POWERS", "MOST_PRODUCTS", "literal_power", "power_expression"]


def literal_power(ins: Instruction, loop: tuple[np.dtype, ...] | None) -> float | None:
    """The exponent of ``x ** e`` (a float array in a float loop, ``e`` a literal in
    :data:`HALF_POWERS` or an integer value from 2 to :data:`MOST_PRODUCTS`) that
    :func:`power_expression` computes, else ``None`` (the table's ``**``)."""
    if ins.opcode is not Opcode.POWER or loop is None or loop[0].kind != "f" or loop[1] != loop[0]:
        return None
    e = ins.inputs[1]
    return power_without_pow(e.value) if isinstance(e, Literal) else None


def power_expression(x: str, e: float, dtype: np.dtype) -> str:
    """``x ** e`` for an exponent :func:`literal_power` accepted, in ``dtype``; ``x`` is a
    pure expression (an operand's load or a local), so repeating it costs nothing after
    LLVM's value numbering."""
    if e.is_integer():
        return _products(x, int(e))
    if e == 0.5:
        return f"np.sqrt({x})"
    t = np_type(dtype.name)
    root = f"(np.sqrt({x}) + {t}(0))"
    if e > 0:   # 1.5; sqrt(-inf) is nan where pow gives inf, and "+ 0" turns sqrt(-0.0) into +0.0
        return f"({t}(np.inf) if {x} == {t}(-np.inf) else np.abs({x}) * {root})"
    # 1 / sqrt(x), cubed for -1.5: no intermediate overflows where the result is finite
    # (x * sqrt(x) would, and give 0 for a result in the subnormal range)
    r = f"({t}(1) / {root})"
    return f"({t}(0) if {x} == {t}(-np.inf) else {r if e == -0.5 else f'{r} * {r} * {r}'})"


def _products(x: str, e: int) -> str:
    """``x ** e`` (``e >= 1``) by repeated squaring, the square shared by both factors."""
    if e == 1:
        return x
    if e % 2:
        return f"({_products(x, e - 1)} * {x})"
    half = _products(x, e // 2)
    return f"({half} * {half})"
