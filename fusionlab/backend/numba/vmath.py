"""Math functions a kernel's loop can vectorise: float64 ``exp`` and ``log`` as polynomials.

Numba turns ``np.exp`` of a float64 into a call of libm's ``exp`` (llvmlite's wheels have
no SVML, so LLVM cannot call a vector version), and a loop with a call in it runs one
element at a time. NumPy's own ``np.exp`` is vectorised (AVX-512 on this machine), so a
fused kernel whose time is its exponentials lost to the NumPy code it fused: 10^6
exponentials took 4.4 ms in a Numba loop and 0.87 ms in NumPy (one thread, medians of 21).

Every float64 ``EXP`` a kernel computes is :func:`_vexp` instead (:func:`vector_math`):
SLEEF's ``xexp``, the 1-ULP version — ``d = q ln 2 + s`` with ``ln 2`` in two parts
(Cody-Waite), ``exp(s)`` by a degree-11 polynomial, and the scaling by ``2**q`` done as two
multiplications by powers of two built from their bits, so a result in the subnormal range
is rounded once. No call and no branch (the special cases are selects), so the loop
vectorises: the same 10^6 exponentials in 1.2 ms. Against the exact value (long double
reference, 200,000 arguments per range): at most 0.93 ULP on [-20, 20] and 0.89 on
[-745, -700] (NumPy: 0.67 and 0.66), and never more than 1 ULP from NumPy's value; ``nan``,
``inf``, ``-inf``, ``-0.0``, the overflow threshold 709.78 and the subnormal results are
NumPy's.

Every float64 ``LOG`` is :func:`_vlog`: musl's ``log`` (fdlibm's, under 1 ULP) without
branches (``LOG_HELPER``). 10^6 logarithms: libm 3.6 ms, NumPy 0.88, ``_vlog`` 1.36; at most
0.83 ULP on [0.5, 2] and 0.76 on [1e-3, 1e3] (NumPy 0.60 and 0.58), never more than 1 ULP
from NumPy, and NumPy's values at zero, negatives, subnormals, the infinities and NaN.
docs/backend.md ("Exponentials and logarithms") says what this changes. Float32 ``exp``
and ``log`` stay libm's.

The powers of two need a float64 made from an integer's bits, which Numba's Python subset
cannot spell: :func:`fusionlab.backend.numba.intrinsics.float64_from_bits` is an intrinsic (an
LLVM ``bitcast``), imported by the kernel's module; this module writes source text only and
does not import Numba.

Examples
--------
>>> import numpy as np
>>> ns = {}; exec(EXP_HELPER, ns)
>>> x = np.array([-745.13, -20.5, -0.0, 1e-300, 0.5, 1.0, 709.78])
>>> got = np.array([ns["_vexp"](v) for v in x])
>>> bool(np.all(np.abs(got - np.exp(x)) <= np.spacing(np.exp(x))))   # within 1 ULP of NumPy
True
>>> [ns["_vexp"](v) for v in (710.0, np.inf, -np.inf, -1e4)]
[inf, inf, 0.0, 0.0]
>>> bool(np.isnan(ns["_vexp"](float("nan"))))
True
>>> vector_math(Opcode.EXP, ["x[i0]"], (np.dtype("float64"),) * 2)
'_vexp(x[i0])'
>>> vector_math(Opcode.EXP, ["x[i0]"], (np.dtype("float32"),) * 2) is None
True
>>> exec(LOG_HELPER, ns)
>>> x = np.array([5e-324, 1e-310, 0.5, 1.0, 2.0, 10.0, 1.7976931348623157e308])
>>> got = np.array([ns["_vlog"](v) for v in x])
>>> bool(np.all(np.abs(got - np.log(x)) <= np.spacing(np.abs(np.log(x)))))
True
>>> [ns["_vlog"](v) for v in (0.0, -0.0, np.inf)], np.isnan([ns["_vlog"](v) for v in (-1.0, -np.inf, np.nan)]).all()
([-inf, -inf, inf], np.True_)
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from fusionlab.ir.bytecode import OPCODES, Instruction, Opcode
from fusionlab.backend.numba.power import literal_power, power_expression

__all__ = ["EXP_HELPER", "LOG_HELPER", "HELPERS", "vector_math", "math_helpers_in", "scalar_expression"]


#: the helper's source, defined in a kernel's module before the kernel when it calls it.
#: Not ``inline='always'``: inlined by Numba, its lines would take the kernel's
#: ``fastmath={'reassoc'}``, which lets LLVM fold the two-part reduction back into one
#: (``d - q * (L2U + L2L)``); compiled apart, LLVM still inlines it (its instructions keep
#: their strict flags) and vectorises the loop: 1.20 ms for the 10^6 above, as inlined.
#: ``dq``: the argument for the reduction, 0 for |d| > 1000 and NaN (an integer conversion of
#: NaN is undefined in LLVM), where the selects at the end give inf, 0 or NaN (``s`` is NaN)
EXP_HELPER = (
    "from fusionlab.backend.numba.intrinsics import float64_from_bits\n"
    "import numba\nimport numpy as np\n\n"
    "@numba.njit(error_model='numpy')\n"
    "def _vexp(d):\n"
    "    dq = d if abs(d) <= 1000.0 else 0.0\n"
    "    q = np.rint(dq * 1.4426950408889634074)  # d = q ln2 + s, |s| <= ln2 / 2\n"
    "    s = d - q * 0.69314718055966295651160180568695068359375\n"
    "    s = s - q * 0.28235290563031577122588448175013436025525412068e-12\n"
    "    u = 2.08860621107283687536341e-09\n"
    "    u = u * s + 2.51112930892876518610661e-08\n"
    "    u = u * s + 2.75573911234900471893338e-07\n"
    "    u = u * s + 2.75572362911928827629423e-06\n"
    "    u = u * s + 2.4801587159235472998791e-05\n"
    "    u = u * s + 0.000198412698960509205564975\n"
    "    u = u * s + 0.00138888888889774492207962\n"
    "    u = u * s + 0.00833333333331652721664984\n"
    "    u = u * s + 0.0416666666666665047591422\n"
    "    u = u * s + 0.166666666666666851703837\n"
    "    u = u * s + 0.5\n"
    "    u = s * s * u + s + 1.0\n"
    "    k = np.int64(q)\n"
    "    h = k >> 1  # 2**q as 2**h * 2**(q - h): both normal, a subnormal result rounded once\n"
    "    u = u * float64_from_bits((h + 1023) << 52) * float64_from_bits((k - h + 1023) << 52)\n"
    "    u = np.inf if d > 709.78271289338399673222338991 else u\n"
    "    return 0.0 if d < -1000.0 else u\n"
)

#: musl's ``log`` (fdlibm's ``e_log.c``, under 1 ULP) without branches: a subnormal argument
#: scaled by 2**54 first; the mantissa put in [sqrt(2)/2, sqrt(2)) by integer arithmetic on
#: the high word (``k``: the exponent); log(1 + f) = f - f^2/2 + s (f^2/2 + R(s^2)) with
#: s = f / (2 + f); ln 2 in two parts. Zero, negatives, infinities and NaN by selects.
LOG_HELPER = (
    "from fusionlab.backend.numba.intrinsics import bits_of_float64, float64_from_bits\n"
    "import numba\nimport numpy as np\n\n"
    "@numba.njit(error_model='numpy')\n"
    "def _vlog(x):\n"
    "    tiny = x < 2.2250738585072014e-308  # subnormal, zero, negative or -inf\n"
    "    xs = x * 18014398509481984.0 if tiny else x  # 2**54\n"
    "    bits = bits_of_float64(xs)\n"
    "    hx = ((bits >> 32) & 0xffffffff) + (0x3ff00000 - 0x3fe6a09e)\n"
    "    k = (hx >> 20) - 0x3ff - (54 if tiny else 0)\n"
    "    hx = (hx & 0x000fffff) + 0x3fe6a09e\n"
    "    f = float64_from_bits((hx << 32) | (bits & 0xffffffff)) - 1.0\n"
    "    hfsq = 0.5 * f * f\n"
    "    s = f / (2.0 + f)\n"
    "    z = s * s\n"
    "    w = z * z\n"
    "    t1 = w * (3.999999999940941908e-01 + w * (2.222219843214978396e-01 + w * 1.531383769920937332e-01))\n"
    "    t2 = z * (6.666666666666735130e-01 + w * (2.857142874366239149e-01 + w * (1.818357216161805012e-01\n"
    "                                                                            + w * 1.479819860511658591e-01)))\n"
    "    dk = np.float64(k)\n"
    "    r = s * (hfsq + (t2 + t1)) + dk * 1.90821492927058770002e-10 - hfsq + f + dk * 6.93147180369123816490e-01\n"
    "    r = -np.inf if x == 0.0 else r\n"
    "    r = np.nan if x < 0.0 else r\n"
    "    return x if not x < np.inf else r  # inf and NaN: themselves\n"
)

#: the helpers' sources by name (which opcode uses which: ``OpInfo.vector``, fusionlab/ir/opcodes.py)
HELPERS = {"_vexp": EXP_HELPER, "_vlog": LOG_HELPER}


def vector_math(op: Opcode, ops: Sequence[str], loop: tuple[np.dtype, ...] | None) -> str | None:
    """The vectorisable expression of element-wise ``op`` on ``ops`` (Numba source) when
    its loop is float64 and a helper computes it, else None (the table's expression)."""
    name = OPCODES[op].vector
    if name is None or loop is None or loop[0].name != "float64":
        return None
    return f"{name}({ops[0]})"


def math_helpers_in(kernel: str) -> list[str]:
    """The helper module text when ``kernel`` calls one of this module's helpers, else nothing.

    >>> math_helpers_in("y = np.exp(x)"), len(math_helpers_in("y = _vexp(x)"))
    ([], 1)
    """
    out = []
    for name, text in HELPERS.items():
        if f"{name}(" in kernel:
            lines = text.splitlines()
            # the import of the intrinsics, then the helper (the kernel module imports numba and numpy)
            out.append("\n".join([lines[0]] + lines[4:]))
    return out


def scalar_expression(ins: Instruction, ops: Sequence[str], loop: tuple[np.dtype, ...] | None) -> str:
    """An element-wise instruction's scalar expression of its operands ``ops`` (each typed
    in NumPy's loop dtype): a literal power as products or square roots
    (:mod:`fusionlab.backend.numba.power`), a vectorisable helper (:func:`vector_math`), else the
    opcode table's expression.

    >>> from fusionlab import parse
    >>> p = parse("ARRAY x float64[4]\\nARRAY y float64[4]\\nEXP y, x\\nPOWER y, x, 2\\nSQRT y, x")
    >>> f64 = (np.dtype("float64"),) * 2
    >>> [scalar_expression(ins, ["x[i0]", "2"][:len(ins.inputs)], f64) for ins in p.instructions]
    ['_vexp(x[i0])', '(x[i0] * x[i0])', 'np.sqrt(x[i0])']
    """
    op = ins.opcode
    power = literal_power(ins, loop)
    vector = vector_math(op, ops, loop)
    if power is not None:   # no scalar pow call: products or sqrt (power)
        return power_expression(ops[0], power, loop[0])   # type: ignore[index]
    if vector is not None:   # no libm call: a polynomial the loop vectorises
        return vector
    if OPCODES[op].numba is not None:   # an element-wise opcode: the table's expression
        return OPCODES[op].scalar(ops, None if loop is None else loop[0])
    # the layout refused it first (refusal: an opcode Numba does not compile): never reached
    raise AssertionError(f"{op.name} has no kernel form")  # pragma: no cover
