"""NumPy's two-operand products under capture: ``a @ b``, ``np.matmul``, ``np.dot``,
``np.inner``, ``np.outer`` and ``np.einsum`` recorded as one CONTRACT each.

The user's value is always NumPy's own call on the real data; the instruction records the
explicit subscripts (:mod:`fusionlab.ir.subscripts`) and ``via=`` the function called, which
a contraction running alone replays (the same call: BLAS, the same bits). Operands are
read as the views they are (a transposed or sliced operand is not copied). A product the
bytecode cannot state exactly (a scalar or bool operand, float16, ``out=`` and other
arguments, a batch axis of length 1 broadcast against a longer one, a diagonal) returns
``None`` here: the caller records it as OPAQUE, as before.

Examples
--------
>>> from fusionlab.capture import capture
>>> c = capture("import numpy as np\\nx = np.ones((3, 4))\\nw = np.ones((4, 2))\\ny = np.maximum(x @ w + 1, 0)\\n")
>>> [str(i.opcode.name) for i in c.program if i.opcode.name not in ("DEL", "SYNC", "COPY")]
['CONTRACT', 'ADD', 'MAXIMUM']
>>> [i.attr("subscripts") for i in c.program if i.opcode.name == "CONTRACT"]
['ij,jk->ik']
>>> c.namespace["y"].tolist()
[[5.0, 5.0], [5.0, 5.0], [5.0, 5.0]]
"""

from __future__ import annotations

from typing import Any

import numpy as np

from fusionlab.ir.bytecode import Instruction, Opcode
from fusionlab.ir.subscripts import einsum_subscripts, numpy_call, via_subscripts
from fusionlab.capture.array import Traced, emit_split, lift, traceable, unwrap
from fusionlab.capture.recorder import Recorder

__all__ = ["contraction"]


def _operand(rec: Recorder, x: Any) -> Traced | None:
    """A traced array (a plain one lifted as an input) of a dtype the kernels compute as
    NumPy does, or None: NumPy's bool product is a logical or of ands, float16 sums in
    float32, complex and others are left to NumPy."""
    if isinstance(x, list):
        x = np.asarray(unwrap(x))
    if type(x) is np.ndarray:
        x = lift(rec, x)
    if not isinstance(x, Traced) or x._scalar or x.ndim == 0:
        return None
    dt = x.dtype
    if dt.kind not in "iuf" or dt.kind == "f" and dt.itemsize not in (4, 8):
        return None
    return x


def contraction(rec: Recorder, via: str, a: Any, b: Any, subscripts: str | None = None) -> Traced | None:
    """Record NumPy's ``via`` product of ``a`` and ``b`` (``np.einsum(subscripts, a, b)``
    for ``via="einsum"``) as a CONTRACT and return its traced result, or None when it has
    no exact CONTRACT form (nothing recorded then; NumPy's errors are raised by the
    caller's general path)."""
    ta, tb = _operand(rec, a), _operand(rec, b)
    if ta is None or tb is None:
        return None
    if via == "outer":   # np.outer flattens its operands first (a view, or a recorded copy)
        ta, tb = (t if t.ndim == 1 else t.ravel() for t in (ta, tb))
    if via == "einsum":
        if not isinstance(subscripts, str):
            return None
        explicit = einsum_subscripts(subscripts, ta.shape, tb.shape)
    else:
        explicit = via_subscripts(via, ta.shape, tb.shape)
    if explicit is None:
        return None
    real = _numpy_value(via, subscripts, explicit, ta._real, tb._real)
    if real is None:
        return None
    out = Traced.fresh(rec, np.asarray(real), scalar=not isinstance(real, np.ndarray))
    emit_split(rec, Instruction(Opcode.CONTRACT, (out._v,), (ta._v, tb._v), {"subscripts": explicit, "via": via}))
    return out


def _numpy_value(via: str, user: str | None, explicit: str, a: np.ndarray, b: np.ndarray) -> Any:
    """What the user's call gives (NumPy's own), or None when the recorded form would not
    replay it exactly: another shape or dtype than the explicit subscripts state, or (an
    einsum the capture respelled) other bits."""
    real = np.einsum(user, a, b) if via == "einsum" else numpy_call(via, explicit)(a, b)
    value = np.asarray(real)
    if not traceable(value) or value.dtype != np.result_type(a.dtype, b.dtype):
        return None
    if via == "einsum" and user.replace(" ", "") != explicit:
        again = np.asarray(np.einsum(explicit, a, b))
        if again.shape != value.shape or not np.array_equal(again, value, equal_nan=True):
            return None
    lhs, _, out = explicit.partition("->")
    extent = dict(zip(lhs.replace(",", ""), a.shape + b.shape))
    if value.shape != tuple(extent[c] for c in out):
        return None
    return real
