"""Numba intrinsics the generated kernels call (:mod:`fusionlab.codegen_math`'s helpers).

Examples
--------
>>> import numba, numpy as np
>>> f = numba.njit(lambda k: float64_from_bits((k + 1023) << 52))
>>> f(np.int64(3)), f(np.int64(-1022)) == 2.0 ** -1022
(8.0, True)
>>> g = numba.njit(lambda x: bits_of_float64(x) >> 52)
>>> g(1.0), g(-2.0) < 0
(1023, True)
"""

from __future__ import annotations

from typing import Any

from numba import types
from numba.extending import intrinsic

__all__ = ["float64_from_bits", "bits_of_float64"]


@intrinsic
def float64_from_bits(typingctx: Any, bits: Any) -> Any:
    """The float64 whose IEEE 754 bits are the integer ``bits`` (an LLVM ``bitcast``, which
    vectorises; a narrower integer is widened first, by its sign). Compiled code only."""
    if not isinstance(bits, types.Integer):
        return None

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        from llvmlite import ir
        value = args[0]
        if bits.bitwidth < 64:
            value = (builder.sext if bits.signed else builder.zext)(value, ir.IntType(64))
        return builder.bitcast(value, ir.DoubleType())

    return types.float64(bits), codegen


@intrinsic
def bits_of_float64(typingctx: Any, value: Any) -> Any:
    """The IEEE 754 bits of the float64 ``value`` as an int64 (an LLVM ``bitcast``; negative
    for a negative sign bit). Compiled code only."""
    if not isinstance(value, types.Float) or value.bitwidth != 64:
        return None

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        from llvmlite import ir
        return builder.bitcast(args[0], ir.IntType(64))

    return types.int64(value), codegen
