"""Which bases need zeroed memory: those whose zeros a run could observe.

A base starts as zeros (the reference executor's meaning of an array nobody has written).
When every element of it is written before any of them is read, the zeros are never seen,
and zeroing its memory is a pass over memory for nothing: the one-dimensional wave equation
(``u_next = np.empty_like(u)``, the interior from a stencil, then the two end points) zeroed
8 MB before each step's kernel rewrote all but two elements of it. The first write need not
cover the base: :func:`written_before_read` follows the elements written, in execution order,
until they cover the base or something reads an element not yet written.

Examples
--------
>>> from fusionlab import parse
>>> p = parse('''
... ARRAY U float64[5]
... ARRAY V float64[5]
... COPY U[1:-1], 1.0
... COPY U[0], 0.0
... COPY U[4], 0.0
... COPY V[1:], U[1:]
... SYNC V
... SYNC U
... ''')
>>> sorted(written_before_read(p, range(len(p))))
[('U', 0)]
"""

from __future__ import annotations

from typing import Iterable

import numpy as np

from fusionlab.ir.bytecode import Opcode, OpFamily, Program, View

__all__ = ["written_before_read"]


class _Written:
    """The elements of one base written so far (a flag per element), and how many."""

    def __init__(self, size: int) -> None:
        self.flags = np.zeros(max(size, 1), dtype=np.bool_)
        self.count = 0
        self.size = size

    def _of(self, v: View) -> np.ndarray:
        # the view's elements, as Storage.view makes them (strides in elements = bytes here)
        return np.ndarray(v.shape, np.bool_, self.flags, v.offset, tuple(v.strides))

    def covers(self, v: View) -> bool:
        return bool(self._of(v).all())

    def write(self, v: View) -> None:
        mine = self._of(v)
        self.count += int(np.count_nonzero(~mine))   # a write view has no repeated elements
        mine[...] = True

    @property
    def full(self) -> bool:
        return self.count >= self.size


def written_before_read(program: Program, order: Iterable[int]) -> set[tuple[str, int]]:
    """Bases every element of which is written before any is read, in the execution
    ``order`` of ``program``'s instructions: ``(name, i)``, ``i`` the first instruction that
    touches the base (the block holding it allocates the memory).

    A SYNC reads its whole base (the user sees it); reading only elements already written
    is no read of the zeros; an instruction's reads come before its writes. A base still
    partly unwritten when the program ends needs its zeros (a later batch may read them).
    """
    done: set[str] = set()   # decided
    open_: dict[str, tuple[int, _Written]] = {}
    out: set[tuple[str, int]] = set()

    def read(v: View) -> None:
        name = v.base.name
        if name in done:
            return
        got = open_.get(name)
        if got is None or not got[1].covers(v):
            open_.pop(name, None)
            done.add(name)

    def write(v: View, i: int) -> None:
        name = v.base.name
        if name in done:
            return
        got = open_.get(name)
        if got is None:
            if v.covers_base:   # the common case: no flags needed
                out.add((name, i))
                done.add(name)
                return
            got = open_[name] = (i, _Written(v.base.size))
        got[1].write(v)
        if got[1].full:
            out.add((name, got[0]))
            del open_[name]
            done.add(name)

    for i in order:
        ins = program[i]
        if ins.opcode is Opcode.DEL:   # freed before it was whole (a program never names a base again)
            open_.pop(ins.outputs[0].base.name, None)
            done.add(ins.outputs[0].base.name)
            continue
        for v in ins.reads():
            read(v)
        if ins.opcode in OpFamily.SYSTEM:
            continue
        for v in ins.writes():
            write(v, i)
    return out
