"""Numba intrinsics the generated kernels call (:mod:`fusionlab.backend.numba.vmath`'s helpers), and
:func:`kernel_exp` / :func:`kernel_log`: ``np.exp`` / ``np.log`` as the generated kernels
compute them (the vectorisable helpers for float64), for code outside the generated
kernels that must cost the same (``fusionlab calibrate``'s throughput loops).

Examples
--------
>>> import numba, numpy as np
>>> f = numba.njit(lambda k: float64_from_bits((k + 1023) << 52))
>>> f(np.int64(3)), f(np.int64(-1022)) == 2.0 ** -1022
(8.0, True)
>>> g = numba.njit(lambda x: bits_of_float64(x) >> 52)
>>> g(1.0), g(-2.0) < 0
(1023, True)
>>> h = numba.njit(lambda x: kernel_exp(x) + kernel_log(x))
>>> bool(abs(h(2.0) - (np.exp(2.0) + np.log(2.0))) <= 2 * np.spacing(np.exp(2.0)))
True
>>> float(h(np.float32(2.0))) == float(np.exp(np.float32(2.0)) + np.log(np.float32(2.0)))
True
"""

from __future__ import annotations

from typing import Any

import numpy as np
from numba import types
from numba.extending import intrinsic, overload

__all__ = ["float64_from_bits", "bits_of_float64", "kernel_exp", "kernel_log"]


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


def _helper(text: str, name: str) -> Any:
    # the helper's own source, as the kernels' modules define it (it imports this module's
    # intrinsics: they exist by now)
    ns: dict[str, Any] = {}
    exec(text, ns)
    return ns[name]


def kernel_exp(x: Any) -> Any:
    """``np.exp(x)`` as a generated kernel computes it (compiled code only)."""
    raise NotImplementedError("kernel_exp is compiled code only")


def kernel_log(x: Any) -> Any:
    """``np.log(x)`` as a generated kernel computes it (compiled code only)."""
    raise NotImplementedError("kernel_log is compiled code only")


def _overload_by_float64(stub: Any, text: str, name: str, fallback: Any) -> None:
    vector = []

    @overload(stub)
    def _typed(x: Any) -> Any:
        if isinstance(x, types.Float) and x.bitwidth == 64:
            if not vector:   # built on first use: importing this module compiles nothing
                vector.append(_helper(text, name))
            helper = vector[0]

            def vectorised(x: Any) -> Any:   # annotated as the stub: Numba compares the signatures
                return helper(x)
            return vectorised

        def libm(x: Any) -> Any:
            return fallback(x)
        return libm


def _register() -> None:
    from fusionlab.backend.numba.vmath import EXP_HELPER, LOG_HELPER
    _overload_by_float64(kernel_exp, EXP_HELPER, "_vexp", np.exp)
    _overload_by_float64(kernel_log, LOG_HELPER, "_vlog", np.log)


_register()
