"""fusionlab's array bytecode: the intermediate representation every other module reads.

The IR follows Bohrium's array bytecode (Kristensen et al., *Fusion of Array Operations
at Runtime*, Sec. IV-A): a program is a list of instructions; each instruction writes its
first operand (the output view) from the remaining operands (input views or scalar
literals). Arrays are *bases* (contiguous, C-ordered storage); instructions access them
through *views* (shape, strides and offset counted in elements).

Everything here is a frozen, hashable dataclass, so programs, instructions and views can
be used as dictionary keys (the merge cache relies on this).

Examples
--------
>>> A = Base("A", "float64", (4,))
>>> D = Base("D", "float64", (5,))
>>> D[:-1]
View(D[:-1])
>>> D[:-1].overlaps(D[1:]), D[:-1] == D[:-1], D[::2].overlaps(D[1::2])
(True, True, False)
>>> ins = Instruction(Opcode.ADD, (A.view(),), (A.view(), D[:-1]))
>>> ins.opcode in OpFamily.BINARY
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Iterator, Union

import numpy as np

# the opcodes and their facts live in one table (fusionlab.ir.opcodes); re-exported here, the IR's
# public face, so ``from .bytecode import Opcode, OpFamily`` keeps working
from fusionlab.ir.opcodes import ALIASES, OPCODES, Opcode, OpFamily, OpInfo

__all__ = [
    "Opcode",
    "OpFamily",
    "ALIASES",
    "OPCODES",
    "OpInfo",
    "Base",
    "View",
    "Literal",
    "Operand",
    "Instruction",
    "Program",
    "ProgramError",
    "loop_dtypes",
]


class ProgramError(ValueError):
    """An instruction or program that breaks the IR's rules (shapes, Def. 11, DEL)."""


# --------------------------------------------------------------------------- bases, views


@dataclass(frozen=True)
class Base:
    """A base array: contiguous C-ordered storage of ``prod(shape)`` elements.

    Examples
    --------
    >>> G = Base("G", "float64", (100, 100))
    >>> G[1:-1, 1:-1].shape, G.nbytes
    ((98, 98), 80000)
    """

    name: str
    dtype: str
    shape: tuple[int, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtype", np.dtype(self.dtype).name)
        object.__setattr__(self, "shape", tuple(int(n) for n in self.shape))
        if any(n < 0 for n in self.shape):
            raise ProgramError(f"array {self.name}: negative extent in shape {self.shape}")

    @cached_property
    def size(self) -> int:
        """Number of elements."""
        return math.prod(self.shape)

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self.shape)

    @cached_property
    def np_dtype(self) -> np.dtype:
        """The element type as a NumPy dtype (made once: ``np.dtype(name)`` parses a string)."""
        return np.dtype(self.dtype)

    @cached_property
    def itemsize(self) -> int:
        """Bytes per element."""
        return self.np_dtype.itemsize

    @cached_property
    def nbytes(self) -> int:
        """Bytes of storage."""
        return self.size * self.itemsize

    @cached_property
    def strides(self) -> tuple[int, ...]:
        """C-order strides in elements."""
        out, acc = [], 1
        for n in reversed(self.shape):
            out.append(acc)
            acc *= max(n, 1)
        return tuple(reversed(out))

    def view(self) -> "View":
        """The view of the whole base."""
        return View(self, self.shape, self.strides, 0)

    def __getitem__(self, index: Any) -> "View":
        return self.view()[index]


@dataclass(frozen=True)
class View:
    """A strided view of a base; ``strides`` and ``offset`` count elements, not bytes.

    Two views are identical (``==``) when they address the same elements in the same
    order; strides of extent-1 dimensions are normalised to 0 so that equal element
    mappings compare equal.

    Examples
    --------
    >>> D = Base("D", "float64", (5,))
    >>> D[1:].offset, D[1:].shape, D[::-1].strides
    (1, (4,), (-1,))
    >>> D[1:] == D.view()[1:5]
    True
    """

    base: Base
    shape: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int = 0

    def __post_init__(self) -> None:
        shape = tuple(int(n) for n in self.shape)
        strides = tuple(0 if n == 1 else int(s) for n, s in zip(shape, self.strides))
        if len(shape) != len(self.strides):
            raise ProgramError(f"view of {self.base.name}: shape and strides differ in length")
        offset = int(self.offset)
        if any(n == 0 for n in shape):
            strides, offset = (0,) * len(shape), 0
        object.__setattr__(self, "shape", shape)
        object.__setattr__(self, "strides", strides)
        object.__setattr__(self, "offset", offset)
        if any(n < 0 for n in shape):
            raise ProgramError(f"view of {self.base.name}: negative extent in {shape}")
        if self.size:
            lo, hi = self.interval()
            if lo < 0 or hi >= self.base.size:
                raise ProgramError(
                    f"view of {self.base.name} reaches elements {lo}..{hi} outside its "
                    f"{self.base.size} elements"
                )

    def __hash__(self) -> int:
        # views are hashed constantly by the cost models; the fields never change
        h = self.__dict__.get("_hash")
        if h is None:
            h = hash((self.base, self.shape, self.strides, self.offset))
            object.__setattr__(self, "_hash", h)
        return h

    # -- basic properties -------------------------------------------------------------
    @property
    def dtype(self) -> str:
        """The element type (the base's)."""
        return self.base.dtype

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self.shape)

    @cached_property
    def size(self) -> int:
        """Number of elements addressed (broadcast dimensions counted)."""
        return math.prod(self.shape)

    @cached_property
    def nbytes(self) -> int:
        """``size * itemsize``: the bytes an access of this view moves."""
        return self.size * self.base.itemsize

    def interval(self) -> tuple[int, int]:
        """The first and last element (inclusive) of the base that the view touches."""
        # kept, as the hash is: the WSP graph of a 3,000-instruction loop asked it 400,000 times
        got = self.__dict__.get("_interval")
        if got is None:
            lo = hi = self.offset
            for n, s in zip(self.shape, self.strides):
                if s > 0:
                    hi += s * (n - 1)
                else:
                    lo += s * (n - 1)
            got = (lo, hi)
            object.__setattr__(self, "_interval", got)
        return got

    def is_full(self) -> bool:
        """True when the view is the whole base in C order."""
        # ``self == self.base.view()`` without building (and checking) that view; kept,
        # as the hash is: printing a 50,000-instruction program asks it 400,000 times
        full = self.__dict__.get("_full")
        if full is None:
            base = self.base
            full = self.offset == 0 and self.shape == base.shape and (0 in self.shape or self.strides == tuple(
                0 if n == 1 else s for n, s in zip(self.shape, base.strides)))
            object.__setattr__(self, "_full", full)
        return full

    @cached_property
    def covers_base(self) -> bool:
        """True when the view visits every element of its base once, in memory order (the
        base's own view, or a reshape of it): its array is the base's memory, no strides.

        >>> B = Base("B", "float64", (2, 3))
        >>> B.view().covers_base, View(B, (6,), (1,)).covers_base, B[:, 1:].covers_base
        (True, True, False)
        """
        if self.offset != 0 or self.size != self.base.size:
            return False
        step = 1
        for n, st in zip(reversed(self.shape), reversed(self.strides)):
            if n != 1 and st != step:
                return False
            step *= n
        return True

    def indices(self) -> np.ndarray:
        """Flat base indices of the view's elements, in C order of the view."""
        idx = np.full(self.shape, self.offset, dtype=np.int64)
        for axis, (n, s) in enumerate(zip(self.shape, self.strides)):
            shape = [1] * self.ndim
            shape[axis] = n
            idx = idx + (np.arange(n, dtype=np.int64) * s).reshape(shape)
        return idx

    # -- slicing ------------------------------------------------------------------------
    def __getitem__(self, index: Any) -> "View":
        """NumPy basic slicing (integers, slices, ``...`` and ``None``)."""
        if not isinstance(index, tuple):
            index = (index,)
        if sum(1 for i in index if i is Ellipsis) > 1:
            raise IndexError("an index can only have a single ellipsis ('...')")
        consumed = sum(1 for i in index if i is not None and i is not Ellipsis)
        if consumed > self.ndim:
            raise IndexError(
                f"too many indices: {self.base.name} view has {self.ndim} dimension(s) "
                f"but {consumed} were indexed"
            )
        if Ellipsis in index:
            pos = index.index(Ellipsis)
            index = index[:pos] + (slice(None),) * (self.ndim - consumed) + index[pos + 1 :]
        else:
            index = index + (slice(None),) * (self.ndim - consumed)
        shape: list[int] = []
        strides: list[int] = []
        offset = self.offset
        axis = 0
        for item in index:
            if item is None:
                shape.append(1)
                strides.append(0)
                continue
            n, s = self.shape[axis], self.strides[axis]
            axis += 1
            if isinstance(item, slice):
                start, stop, step = item.indices(n)
                count = len(range(start, stop, step))
                offset += start * s if count else 0
                shape.append(count)
                strides.append(s * step)
            elif isinstance(item, (int, np.integer)) and not isinstance(item, bool):
                i = int(item)
                if not -n <= i < n:
                    raise IndexError(
                        f"index {i} is out of bounds for axis {axis - 1} with size {n}"
                    )
                offset += (i % n) * s
            else:
                raise IndexError(f"only basic slicing is supported in views, not {item!r}")
        return View(self.base, tuple(shape), tuple(strides), offset)

    # -- geometry -----------------------------------------------------------------------
    @cached_property
    def _progressions(self) -> tuple[tuple[tuple[int, int, int], ...], tuple[int, ...]] | None:
        """Per base axis ``(start, step, count)``, and the base axis of each view dimension.

        ``None`` when the view is not a product of per-axis progressions of its base
        (a reshape of a slice, overlapping strides). Broadcast (stride 0) and extent-1
        dimensions map to axis -1.
        """
        bshape, bstrides = self.base.shape, self.base.strides
        if self.size == 0:
            return None
        start = []
        rest = self.offset
        for n, s in zip(bshape, bstrides):
            start.append((rest // s) % n if n else 0)
        axes_of_dims: list[int] = []
        prog = {k: (start[k], 0, 1) for k in range(len(bshape))}
        used: set[int] = set()
        for n, t in zip(self.shape, self.strides):
            if n == 1 or t == 0:
                axes_of_dims.append(-1)
                continue
            k = next((k for k, s in enumerate(bstrides) if t % s == 0 and bshape[k] > 1), None)
            if k is None or k in used:
                return None
            c = t // bstrides[k]
            last = start[k] + c * (n - 1)
            if not 0 <= last < bshape[k]:
                return None
            used.add(k)
            prog[k] = (start[k], c, n)
            axes_of_dims.append(k)
        return tuple(prog[k] for k in range(len(bshape))), tuple(axes_of_dims)

    def overlaps(self, other: "View") -> bool:
        """True when the two views share at least one element of a common base.

        Exact for views made by basic slicing (per-axis arithmetic progressions met by the
        Chinese remainder theorem); for other views exact up to 2**20 elements by
        enumeration, and conservative (``True`` when their intervals meet) above that.
        """
        if self.base != other.base or self.size == 0 or other.size == 0:
            return False
        (alo, ahi), (blo, bhi) = self.interval(), other.interval()
        if ahi < blo or bhi < alo:
            return False
        if self == other:
            return True
        pa, pb = self._progressions, other._progressions
        if pa is not None and pb is not None:
            return all(_progressions_meet(x, y) for x, y in zip(pa[0], pb[0]))
        if self.size <= 1 << 20 and other.size <= 1 << 20:
            return bool(np.intersect1d(self.indices(), other.indices()).size)
        return True

    def as_index(self) -> tuple[Any, ...] | None:
        """The basic-slicing index that makes this view from its base, or ``None``."""
        got = self._progressions
        if got is None:
            if self.size == 0 and self.ndim == 1 and len(self.base.shape) == 1:
                return (slice(0, 0, 1),)
            return None
        progs, dims = got
        mapped = [k for k in dims if k >= 0]
        if mapped != sorted(mapped) or any(
            t == 0 and n > 1 for n, t in zip(self.shape, self.strides)
        ):
            return None
        index: list[Any] = []
        axis = 0
        nbase = len(progs)
        for j, k in enumerate(dims):
            if k < 0:
                # an extent-1 dimension: take the next free base axis before the next mapped
                # dimension as a length-1 slice, or make a new axis when none is free
                nxt = next((kk for kk in dims[j + 1 :] if kk >= 0), nbase)
                if axis < nxt:
                    s0 = progs[axis][0]
                    index.append(slice(s0, s0 + 1, 1))
                    axis += 1
                else:
                    index.append(None)
                continue
            while axis < k:
                index.append(progs[axis][0])
                axis += 1
            s0, c, n = progs[k]
            stop = s0 + c * n
            index.append(slice(s0, stop if stop >= 0 else None, c))
            axis += 1
        while axis < nbase:
            index.append(progs[axis][0])
            axis += 1
        return tuple(index)

    def __repr__(self) -> str:
        from fusionlab.ir.text import format_view

        return f"View({format_view(self)})"


def _progressions_meet(a: tuple[int, int, int], b: tuple[int, int, int]) -> bool:
    """Whether ``{a0 + i*a1 : i < a2}`` and ``{b0 + j*b1 : j < b2}`` share an integer."""

    def norm(p: tuple[int, int, int]) -> tuple[int, int, int]:
        s, step, n = p
        if n <= 1 or step == 0:
            return s, 1, 1
        if step < 0:
            return s + step * (n - 1), -step, n
        return s, step, n

    (x0, p, n), (y0, q, m) = norm(a), norm(b)
    lo, hi = max(x0, y0), min(x0 + p * (n - 1), y0 + q * (m - 1))
    if lo > hi:
        return False
    g = math.gcd(p, q)
    if (y0 - x0) % g:
        return False
    qg = q // g
    k = ((y0 - x0) // g * pow(p // g, -1, qg)) % qg if qg > 1 else 0
    first = x0 + p * k  # a common element, possibly outside [lo, hi]
    period = p // g * q
    x = first + -((first - lo) // period) * period if first < lo else first - ((first - lo) // period) * period
    return lo <= x <= hi


@dataclass(frozen=True, eq=False)
class Literal:
    """A scalar constant operand. Compares by type and exact value (``nan == nan``).

    Examples
    --------
    >>> Literal(0) == Literal(0), Literal(0) == Literal(0.0), Literal(float("nan")) == Literal(float("nan"))
    (True, False, True)
    """

    value: bool | int | float | complex

    def __post_init__(self) -> None:
        v = self.value
        if isinstance(v, np.generic):
            v = v.item()
        if not isinstance(v, (bool, int, float, complex)):
            raise ProgramError(f"a literal must be a number or a bool, not {v!r}")
        object.__setattr__(self, "value", v)

    @property
    def _key(self) -> tuple[str, str]:
        return type(self.value).__name__, repr(self.value)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Literal) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        return f"Literal({self.value!r})"


Operand = Union[View, Literal]


# --------------------------------------------------------------------------- instructions


@dataclass(frozen=True)
class Instruction:
    """One array operation: ``opcode outputs..., inputs..., key=value...``.

    ``attrs`` holds keyword operands (``axis`` of reductions and scans, ``seed`` of
    RANDOM, ``name`` of OPAQUE) as a sorted tuple of pairs so the instruction stays
    hashable.

    Examples
    --------
    >>> A = Base("A", "float64", (4,))
    >>> Instruction(Opcode.COPY, (A.view(),), (Literal(0),)).domain
    (4,)
    """

    opcode: Opcode
    outputs: tuple[View, ...]
    inputs: tuple[Operand, ...] = ()
    attrs: tuple[tuple[str, Any], ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "outputs", tuple(self.outputs))
        object.__setattr__(
            self,
            "inputs",
            tuple(x if isinstance(x, (View, Literal)) else Literal(x) for x in self.inputs),
        )
        attrs = self.attrs.items() if isinstance(self.attrs, dict) else self.attrs
        object.__setattr__(self, "attrs", tuple(sorted((str(k), v) for k, v in attrs)))

    def attr(self, key: str, default: Any = None) -> Any:
        """The keyword operand ``key``, or ``default``."""
        return dict(self.attrs).get(key, default)

    @property
    def family(self) -> str:
        """The name of the opcode's family (``"elementwise"``, ``"reduction"``, ...)."""
        op = self.opcode
        for name in ("SYSTEM", "OPAQUE", "REDUCTION", "SCAN", "GENERATOR", "FILTER", "GATHER",
                     "CONTRACTION", "HISTOGRAM", "ELEMENTWISE"):
            if op in getattr(OpFamily, name):
                return name.lower()
        raise AssertionError(op)  # every opcode has a family

    @cached_property
    def views_in(self) -> tuple[View, ...]:
        """The input operands that are views (literals left out)."""
        return tuple(x for x in self.inputs if isinstance(x, View))

    @property
    def domain(self) -> tuple[int, ...] | None:
        """The shape of the iteration space; ``None`` for system and opaque instructions.

        Element-wise, scan and generator instructions iterate over their output; a
        reduction, a filter and a histogram iterate over their (first) input.
        """
        if self.opcode in OpFamily.SYSTEM | OpFamily.OPAQUE:
            return None
        if self.opcode in OpFamily.REDUCTION | OpFamily.FILTER | OpFamily.HISTOGRAM:
            return self.views_in[0].shape
        return self.outputs[0].shape

    def reads(self) -> tuple[View, ...]:
        """Views this instruction reads, for dependencies (SYNC reads its whole base)."""
        return self.views_in

    def writes(self) -> tuple[View, ...]:
        """Views this instruction writes, for dependencies (DEL writes its whole base)."""
        return self.outputs


def _broadcastable(shape: tuple[int, ...], to: tuple[int, ...]) -> bool:
    if len(shape) > len(to):
        return False
    return all(a == b or a == 1 for a, b in zip(reversed(shape), reversed(to)))


def check_instruction(ins: Instruction) -> None:
    """Raise :class:`ProgramError` when ``ins`` breaks the IR's rules.

    Checks operand counts, shapes, and Def. 11 (data parallelism: an input or another
    output overlapping an output must be identical to it).

    Examples
    --------
    >>> D = Base("D", "float64", (5,))
    >>> check_instruction(Instruction(Opcode.ADD, (D[1:],), (D[:-1], Literal(1))))
    Traceback (most recent call last):
    ...
    fusionlab.ir.bytecode.ProgramError: ADD is not data-parallel (Def. 11): input D[:-1] overlaps output D[1:] without being identical to it
    """
    op, name = ins.opcode, ins.opcode.name
    if op in OpFamily.SYSTEM:
        if len(ins.outputs) + len(ins.inputs) != 1 or ins.attrs:
            raise ProgramError(f"{name} takes exactly one array name")
        (v,) = ins.outputs + ins.views_in
        if not v.is_full():
            raise ProgramError(f"{name} applies to a whole array: write `{name} {v.base.name}`")
        return
    if len(ins.outputs) != 1:
        raise ProgramError(f"{name} needs exactly one output view (its first operand)")
    out = ins.outputs[0]
    info = OPCODES[op]
    if info.arity is not None and len(ins.inputs) != info.arity:
        raise ProgramError(
            f"{name} takes {info.arity} input operand(s) after the output, got {len(ins.inputs)}"
        )
    keys = {k for k, _ in ins.attrs}
    allowed = {k for k, _ in info.attributes}
    if keys - allowed:
        raise ProgramError(f"{name} does not take {', '.join(sorted(keys - allowed))}=")
    if op in OpFamily.ELEMENTWISE:
        for x in ins.views_in:
            if not _broadcastable(x.shape, out.shape):
                raise ProgramError(
                    f"{name}: input of shape {x.shape} does not broadcast to the output "
                    f"shape {out.shape}"
                )
    elif op in OpFamily.REDUCTION | OpFamily.SCAN:
        (src,) = ins.views_in or (None,)
        if src is None:
            raise ProgramError(f"{name} reduces an array, not a literal")
        axis = ins.attr("axis")
        if axis is not None and not (isinstance(axis, int) and -src.ndim <= axis < src.ndim):
            raise ProgramError(f"{name}: axis={axis!r} is not an axis of a {src.ndim}-d input")
        if op in OpFamily.REDUCTION:
            want = () if axis is None else tuple(
                n for i, n in enumerate(src.shape) if i != axis % src.ndim
            )
        else:
            want = (src.size,) if axis is None else src.shape
        if out.shape != want:
            raise ProgramError(f"{name}: output shape {out.shape} should be {want}")
        if op in OpFamily.ARG_REDUCTION and out.dtype != "int64":
            raise ProgramError(f"{name} gives indices: its output must be int64, not {out.dtype}")
    elif op in OpFamily.FILTER:
        _check_filter(ins)
    elif op in OpFamily.GATHER:
        _check_gather(ins)
    elif op in OpFamily.CONTRACTION:
        _check_contraction(ins)
    elif op in OpFamily.HISTOGRAM:
        _check_histogram(ins)
    elif op is Opcode.RANDOM and not isinstance(ins.attr("seed", 0), int):
        raise ProgramError("RANDOM: seed= must be an integer")
    # Def. 11: overlapping operands must be identical
    for i, o in enumerate(ins.outputs):
        for x in ins.views_in:
            if x.overlaps(o) and x != o:
                raise ProgramError(
                    f"{name} is not data-parallel (Def. 11): input {_fmt(x)} overlaps output "
                    f"{_fmt(o)} without being identical to it"
                )
        for o2 in ins.outputs[i + 1 :]:
            if o2.overlaps(o) and o2 != o:
                raise ProgramError(f"{name} is not data-parallel (Def. 11): outputs overlap")
    if op in OpFamily.REDUCTION | OpFamily.SCAN | OpFamily.FILTER | OpFamily.HISTOGRAM and any(x.overlaps(out) for x in ins.views_in):
        raise ProgramError(f"{name} may not write over its own input")
    if op in OpFamily.GATHER and ins.views_in and ins.views_in[0].overlaps(out):
        raise ProgramError(f"{name} may not write over its source (it reads it anywhere)")
    if op in OpFamily.CONTRACTION and any(x.overlaps(out) for x in ins.views_in):
        raise ProgramError(f"{name} may not write over an operand (it reads each element many times)")


def contraction_letters(subscripts: str) -> tuple[str, str, str]:
    """The operand and output letters of a CONTRACT's ``subscripts`` (explicit einsum form).

    >>> contraction_letters("ij,jk->ik")
    ('ij', 'jk', 'ik')
    >>> contraction_letters("ij,jk")
    Traceback (most recent call last):
    ...
    fusionlab.ir.bytecode.ProgramError: CONTRACT subscripts='ij,jk' needs the explicit form 'a,b->out' (e.g. "ij,jk->ik")
    """
    lhs, arrow, out = str(subscripts).replace(" ", "").partition("->")
    ops = lhs.split(",")
    if not arrow or len(ops) != 2:
        raise ProgramError(f"CONTRACT subscripts={subscripts!r} needs the explicit form 'a,b->out' "
                           '(e.g. "ij,jk->ik")')
    for letters in (*ops, out):
        if not (letters == "" or letters.isalpha()) or len(set(letters)) != len(letters):
            raise ProgramError(f"CONTRACT subscripts={subscripts!r}: each operand and the output need "
                               "distinct letters (no repeated index, no '...')")
    if not set(out) <= set(ops[0] + ops[1]):
        raise ProgramError(f"CONTRACT subscripts={subscripts!r}: every output letter must appear in an operand")
    return ops[0], ops[1], out


def _check_filter(ins: Instruction) -> None:
    """COMPRESS out, data, mask: a bool mask of data's shape and a 1-D output no longer than
    the data, or a mask of the data's leading extents ``data.shape[:m]`` (a row mask) and an
    output of shape ``(count,) + data.shape[m:]`` with count at most the rows' number (the
    count recorded at capture, checked when it runs).

    >>> from fusionlab import parse
    >>> p = parse("ARRAY X float64[4,3]\\nARRAY M bool[4]\\nARRAY Y float64[2,3]\\nCOMPRESS Y, X, M")
    >>> parse("ARRAY X float64[4,3]\\nARRAY M bool[3]\\nARRAY Y float64[2,3]\\nCOMPRESS Y, X, M")
    Traceback (most recent call last):
    ...
    fusionlab.ir.text.BytecodeError: line 4, column 1: COMPRESS: a mask of shape (3,) selects neither elements nor rows of data of shape (4, 3): give it the data's shape or its leading extents (4,)
    """
    name = ins.opcode.name
    if len(ins.views_in) != 2:
        raise ProgramError(f"{name} selects from an array by a mask: write `{name} out, data, mask` with two arrays")
    data, mask = ins.views_in
    out = ins.outputs[0]
    if mask.dtype != "bool":
        raise ProgramError(f"{name}: the mask {_fmt(mask)} is {mask.dtype}; make it bool first (NOT_EQUAL m, x, 0)")
    m = mask.ndim
    if not 1 <= m <= data.ndim or data.shape[:m] != mask.shape:
        lead = data.shape[:max(1, min(m, data.ndim))]
        raise ProgramError(f"{name}: a mask of shape {mask.shape} selects neither elements nor rows of data of shape "
                           f"{data.shape}: give it the data's shape or its leading extents {lead}")
    if m == data.ndim and (out.ndim != 1 or out.size > data.size):
        raise ProgramError(f"{name}: the output must be 1-D with at most {data.size} elements, not {out.shape}")
    rows, rest = math.prod(mask.shape), data.shape[m:]
    if m < data.ndim and (out.shape[1:] != rest or out.ndim != 1 + len(rest) or out.shape[0] > rows):
        raise ProgramError(f"{name}: selecting rows of {data.shape} by a mask of {mask.shape}, the output must be "
                           f"(count,) + {rest} with count at most {rows}, not {out.shape}")


#: what a BINCOUNT raises (ValueError) when it runs on a value outside its bins: the
#: reference executor and the kernels say the same
HISTOGRAM_RANGE = ("BINCOUNT: a value is outside [0, L), the L bins recorded at capture (np.bincount raises "
                   "for a negative value and would give more bins for a larger one); run the program on data "
                   "like the data it was captured from, or capture it again")

#: the value dtypes np.bincount takes (NumPy 2 casts them to intp; a uint64 above its
#: largest value turns negative, and NumPy raises ValueError, as the kernels do)
HISTOGRAM_VALUES = frozenset({"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"})


def _check_histogram(ins: Instruction) -> None:
    """BINCOUNT out, x[, weights]: a 1-D array of integer values (dtypes in
    :data:`HISTOGRAM_VALUES`), optional weights of its shape (real numbers), and a 1-D output
    of the bins: int64 counts, or float64 sums of the weights (np.bincount's dtypes).

    >>> from fusionlab import parse
    >>> parse("ARRAY X float64[4]\\nARRAY H int64[3]\\nBINCOUNT H, X")
    Traceback (most recent call last):
    ...
    fusionlab.ir.text.BytecodeError: line 3, column 1: BINCOUNT: the values X are float64; np.bincount counts integers (bool, int8-int64, uint8-uint64): cast them first (COPY to int64)
    """
    name = ins.opcode.name
    if not 1 <= len(ins.inputs) <= 2 or len(ins.views_in) != len(ins.inputs):
        raise ProgramError(f"{name} counts the values of an array: write `{name} out, x` or `{name} out, x, weights` "
                           "with arrays only")
    x, out = ins.views_in[0], ins.outputs[0]
    if x.ndim != 1:
        raise ProgramError(f"{name}: the values {_fmt(x)} have shape {x.shape}; np.bincount takes a 1-D array")
    if x.dtype not in HISTOGRAM_VALUES:
        raise ProgramError(f"{name}: the values {_fmt(x)} are {x.dtype}; np.bincount counts integers "
                           "(bool, int8-int64, uint8-uint64): cast them first (COPY to int64)")
    if out.ndim != 1:
        raise ProgramError(f"{name}: the output must be 1-D (one element per bin), not {out.shape}")
    want = "int64"
    if len(ins.views_in) == 2:
        w = ins.views_in[1]
        if w.shape != x.shape:
            raise ProgramError(f"{name}: weights of shape {w.shape} and values of shape {x.shape} must have one shape")
        if np.dtype(w.dtype).kind not in "biuf":
            raise ProgramError(f"{name}: the weights {_fmt(w)} are {w.dtype}; np.bincount takes real weights")
        want = "float64"
    if out.dtype != want:
        raise ProgramError(f"{name}: the output is {out.dtype}; np.bincount gives {want} "
                           + ("(the weights' sums)" if want == "float64" else "(counts)"))


def _check_gather(ins: Instruction) -> None:
    """GATHER out, src, idx0, ..., idx(k-1)[, axis=a]: 1 <= k <= src.ndim - a integer index
    views (indexing src's axes a .. a + k - 1), each broadcasting to the output, whose shape
    starts with src's first a extents and ends with its last ndim - a - k."""
    name = ins.opcode.name
    if len(ins.inputs) < 2 or len(ins.views_in) != len(ins.inputs):
        raise ProgramError(f"{name} reads an array at index arrays: write `{name} out, src, idx0[, idx1, ...]` "
                           "with arrays only")
    src, *idx = ins.views_in
    out = ins.outputs[0]
    k, d, a = len(idx), src.ndim, ins.attr("axis", 0)
    if not isinstance(a, int) or isinstance(a, bool) or a < 0:
        raise ProgramError(f"{name}: axis={a!r} should be the first indexed axis (an int >= 0)")
    if a + k > d:
        raise ProgramError(f"{name}: {k} index arrays from axis {a} of a {d}-d source (at most one per axis)")
    for x in idx:
        if np.dtype(x.dtype).kind not in "iu":
            raise ProgramError(f"{name}: the index {_fmt(x)} is {x.dtype}; index arrays are integers "
                               "(a bool mask selects with COMPRESS)")
        if not _broadcastable(x.shape, out.shape):
            raise ProgramError(f"{name}: index of shape {x.shape} does not broadcast to the output shape {out.shape}")
    lead, rest = src.shape[:a], src.shape[a + k:]
    if out.ndim < a + len(rest) or out.shape[out.ndim - len(rest):] != rest or out.shape[:a] != lead:
        raise ProgramError(f"{name}: the output shape {out.shape} should end with the source's untouched "
                           f"extents {rest}" + (f" and start with its first {a}, {lead}" if a else ""))
    if out.dtype != src.dtype:
        raise ProgramError(f"{name}: the output is {out.dtype}, the source {src.dtype}; a gather does not cast")


def _check_contraction(ins: Instruction) -> None:
    """CONTRACT out, a, b, subscripts="...": two array operands, one letter per axis, one
    extent per letter, the output's shape from its letters and its dtype NumPy's for a @ b."""
    name = ins.opcode.name
    if len(ins.inputs) != 2 or len(ins.views_in) != 2:
        raise ProgramError(f'{name} takes two arrays: write `{name} out, a, b, subscripts="ij,jk->ik"`')
    if ins.attr("subscripts") is None:
        raise ProgramError(f'{name} needs subscripts="..." (np.einsum\'s, e.g. "ij,jk->ik")')
    sa, sb, so = contraction_letters(ins.attr("subscripts"))
    extent: dict[str, int] = {}
    for letters, v in ((sa, ins.views_in[0]), (sb, ins.views_in[1])):
        if len(letters) != v.ndim:
            raise ProgramError(f"{name}: {_fmt(v)} has {v.ndim} axes but {letters!r} names {len(letters)}")
        for c, n in zip(letters, v.shape):
            if extent.setdefault(c, n) != n:
                raise ProgramError(f"{name}: index {c!r} has extents {extent[c]} and {n}")
    out = ins.outputs[0]
    want = tuple(extent[c] for c in so)
    if out.shape != want:
        raise ProgramError(f"{name}: output shape {out.shape} should be {want} (letters {so!r})")
    dtype = np.result_type(ins.views_in[0].dtype, ins.views_in[1].dtype)
    if np.dtype(out.dtype) != dtype:
        raise ProgramError(f"{name}: the output is {out.dtype}; the product of {ins.views_in[0].dtype} "
                           f"and {ins.views_in[1].dtype} is {dtype}")
    _check_via(ins)


def _check_via(ins: Instruction) -> None:
    """``via="matmul"`` (or dot, inner, outer, einsum): the NumPy function the user called,
    which a contraction running alone replays (the same call, the same bits); its
    subscripts must be what that function computes for the operands' shapes."""
    from fusionlab.ir.subscripts import VIAS, via_subscripts

    via = ins.attr("via", "einsum")
    if via != "einsum" and via not in VIAS:
        raise ProgramError(f"CONTRACT via={via!r}: one of {', '.join(sorted(VIAS))} or einsum")
    if via == "einsum":
        return
    a, b = ins.views_in
    want = via_subscripts(via, a.shape, b.shape)
    if want is None or contraction_letters(want) != contraction_letters(ins.attr("subscripts")):
        raise ProgramError(f"CONTRACT via={via!r} of shapes {a.shape} and {b.shape} computes "
                           f"subscripts={want!r}, not {ins.attr('subscripts')!r} (write via=\"einsum\")")


def _fmt(v: View) -> str:
    from fusionlab.ir.text import format_view

    return format_view(v)


# --------------------------------------------------------------------------- programs


@dataclass(frozen=True)
class Program:
    """A list of instructions over declared bases.

    Construction checks every instruction (:func:`check_instruction`), that every view's
    base is declared, and that no base is used after its DEL.

    Examples
    --------
    >>> p = Program.from_text('''
    ... ARRAY A float64[4]
    ... COPY A, 0
    ... SYNC A
    ... ''')
    >>> len(p), p[0].opcode
    (2, <Opcode.COPY: 'copy'>)
    """

    bases: tuple[Base, ...]
    instructions: tuple[Instruction, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "bases", tuple(self.bases))
        object.__setattr__(self, "instructions", tuple(self.instructions))
        names: dict[str, Base] = {}
        for b in self.bases:
            if b.name in names:
                raise ProgramError(f"array {b.name} is declared twice")
            names[b.name] = b
        deleted: dict[str, int] = {}
        for n, ins in enumerate(self.instructions, 1):
            try:
                check_instruction(ins)
                for v in ins.outputs + ins.views_in:
                    if names.get(v.base.name) != v.base:
                        raise ProgramError(f"array {v.base.name} is not declared")
                    if v.base.name in deleted:
                        raise ProgramError(
                            f"array {v.base.name} is used after its DEL "
                            f"(instruction {deleted[v.base.name]})"
                        )
                if ins.opcode is Opcode.DEL:
                    deleted[ins.outputs[0].base.name] = n
            except ProgramError as exc:
                raise ProgramError(f"instruction {n}: {exc}") from None

    def __len__(self) -> int:
        return len(self.instructions)

    def __iter__(self) -> Iterator[Instruction]:
        return iter(self.instructions)

    def __getitem__(self, index: int) -> Instruction:
        """Instruction by 0-based position (listings number instructions from 1)."""
        return self.instructions[index]

    def base(self, name: str) -> Base:
        """The declared base called ``name``."""
        for b in self.bases:
            if b.name == name:
                return b
        raise KeyError(name)

    @classmethod
    def from_text(cls, text: str) -> "Program":
        """Parse the text format (see :mod:`fusionlab.ir.text`)."""
        from fusionlab.ir.text import parse

        return parse(text)

    def to_text(self) -> str:
        """Format as text; ``Program.from_text(p.to_text()) == p``."""
        from fusionlab.ir.text import format_program

        return format_program(self)

    def signature(self) -> str:
        """A canonical text with arrays renamed in order of first appearance.

        Programs that differ only in array names share a signature (the merge cache key).

        >>> a = Program.from_text("ARRAY X float64[3]\\nCOPY X, 1")
        >>> b = Program.from_text("ARRAY Y float64[3]\\nCOPY Y, 1")
        >>> a.signature() == b.signature()
        True
        """
        cached = self.__dict__.get("_signature")
        if cached is not None:
            return cached
        from fusionlab.ir.text import format_program

        order: dict[str, str] = {}
        for ins in self.instructions:
            for v in ins.outputs + ins.views_in:
                order.setdefault(v.base.name, f"a{len(order)}")
        for b in self.bases:
            order.setdefault(b.name, f"a{len(order)}")
        text = format_program(self, rename=order, declare_unused=False)
        # programs are immutable: keep the text (the merge cache asks for it on every lookup)
        object.__setattr__(self, "_signature", text)
        return text


# --------------------------------------------------------------------------- computing dtypes


def loop_dtypes(ins: Instruction) -> tuple[np.dtype, ...] | None:
    """The dtypes NumPy computes an element-wise instruction in: its inputs' and its
    result's, as the ufunc's own type resolution picks them (NumPy 2, NEP 50: a Python
    scalar takes the array's type — ``float32_array * 0.2`` is a float32 product — and
    integer true division is float64). None for instructions that are not one ufunc call.

    The reference executor and the kernels both compute in these dtypes: the one place
    that decides them (a fact of the bytecode's semantics, so the reference executor
    needs no code generator to know it).

    >>> from fusionlab import parse
    >>> p = parse("ARRAY A float32[4]\\nARRAY B float32[4]\\nMULTIPLY B, A, 0.2")
    >>> [d.name for d in loop_dtypes(p[0])]
    ['float32', 'float32', 'float32']
    >>> p = parse("ARRAY A int32[4]\\nARRAY B float64[4]\\nDIVIDE B, A, 2")
    >>> [d.name for d in loop_dtypes(p[0])]
    ['float64', 'float64', 'float64']
    """
    op = ins.opcode
    if op not in OpFamily.UNARY | OpFamily.BINARY:
        return None
    ufunc = op.ufunc
    args: list[Any] = []
    for x in ins.inputs:
        if isinstance(x, View):
            args.append(np.dtype(x.dtype))
        elif isinstance(x.value, bool):   # a bool is a NumPy bool, not a weak scalar
            args.append(np.dtype(bool))
        else:
            args.append(type(x.value))   # int, float, complex: weak (NEP 50)
    if len(args) != ufunc.nin:
        return None
    try:
        loop = tuple(ufunc.resolve_dtypes(tuple(args) + (None,) * ufunc.nout))
    except (TypeError, ValueError, OverflowError):   # no loop: NumPy would have refused it at capture
        return None
    loop = _strong_literals(ins, args, loop)
    for x, dt in zip(ins.inputs, loop):
        # a comparison with a Python int outside the array's range (uint8 < -1) is exact in
        # NumPy 2, not cast: leave such an instruction to the operands' own types
        if isinstance(x, Literal) and type(x.value) is int and dt.kind in "iu" and \
                not np.iinfo(dt).min <= x.value <= np.iinfo(dt).max:
            return None
    return loop


def _strong_literals(ins: Instruction, args: list[Any], loop: tuple[np.dtype, ...]) -> tuple[np.dtype, ...]:
    """The loop again with the literals typed like the output, when that is the loop whose
    result the output has. A literal records a NumPy scalar's value, not its type: a NumPy
    scalar is strong under NEP 50 (``float32_array * np.float64(1.1)`` is a float64 product),
    and capture recorded the output base in the dtype NumPy gave it, so the output says so.

    >>> from fusionlab import parse
    >>> p = parse("ARRAY A float32[4]\\nARRAY B float64[4]\\nMULTIPLY B, A, 1.1")
    >>> [d.name for d in loop_dtypes(p[0])]
    ['float64', 'float64', 'float64']
    """
    if not ins.outputs or not any(isinstance(x, Literal) for x in ins.inputs):
        return loop
    out = np.dtype(ins.outputs[0].dtype)
    if loop[-1] == out:
        return loop
    strong = [out if isinstance(x, Literal) and not isinstance(x.value, bool) else a
              for x, a in zip(ins.inputs, args)]
    try:
        again = tuple(ins.opcode.ufunc.resolve_dtypes(tuple(strong) + (None,) * ins.opcode.ufunc.nout))
    except (TypeError, ValueError, OverflowError):
        return loop
    return again if again[-1] == out else loop
