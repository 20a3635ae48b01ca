"""Strip-mined serial scans: the maps feeding a scan in a loop LLVM can vectorise.

A one-dimensional scan's serial form (``fusionlab.backend.numba.codegen``, ``serial_scan``) runs its
feeding maps, the scan and its consumers in one loop. The scan's loop-carried dependency
(``acc = acc + t``, not reassociated: NumPy's order) keeps LLVM from vectorising any of that
loop, so the maps run one element at a time. The strip-mined form splits the loop into
strips of :data:`STRIP` elements: a first loop over the strip runs the feeding maps and
writes the scanned values into a small buffer (no dependency between iterations: it
vectorises), a second runs the scan from the buffer and the consumers. The order of the
combining steps is unchanged, so the scan stays NumPy's bit for bit.

Float64 ``np.sin`` and ``np.cos`` are scalar calls into libm in Numba (llvmlite's wheels
have no SVML, so LLVM cannot vectorise them) and NumPy 2.4 calls the same scalar libm
functions for float64 on this machine (measured: 8.3 ns per element either way). In the
strip's first loop they become :func:`_vsin` / :func:`_vcos` below: Cody-Waite reduction by
pi in four parts and SLEEF's degree-19 odd polynomial (``xsin``/``xcos``, the 3.5-ULP
versions), written without calls or branches so that the loop vectorises (AVX-512 here).
Measured against glibc: at most 2 ULP for ``|x| <= 1e8`` (0 ULP at the multiples of pi), 10x
faster. A strip holding an argument outside ``|x| <= FAR`` (2**24; also inf and NaN) runs
its first loop again with libm's calls, so such values (and NumPy's NaN for inf) are libm's.
docs/reductions-and-scans.md ("Scans") says what this changes.

Examples
--------
>>> import numpy as np
>>> x = np.linspace(-20.0, 20.0, 101)
>>> ns = {}; exec(TRIG_HELPERS, ns)
>>> got = np.array([ns["_vsin"](v) for v in x])
>>> bool(np.all(np.abs(got - np.sin(x)) <= 2 * np.spacing(np.abs(np.sin(x)))))
True
>>> ns["_trig_far"](1e30), ns["_trig_far"](float("nan")), ns["_trig_far"](3.0)
(1, 1, 0)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Sequence

import numpy as np

from fusionlab.ir.bytecode import OPCODES, Instruction, Opcode, OpFamily
from fusionlab.backend.numba.emit import np_type

if TYPE_CHECKING:
    from fusionlab.backend.numba.layout import KernelLayout

__all__ = ["STRIP", "FAR", "TRIG_HELPERS", "VECTOR_CALLS", "StripParts", "EmittedScan", "strip_lines",
           "split_for_strips", "trig_helpers_in", "vector_call", "kernel_helpers", "carry_lines", "chunk_strip_lines"]

#: elements per strip: the buffers (8 bytes an element per scan) stay in L1
STRIP = 512
#: the largest |x| the four-part reduction takes (ql * PI_A is exact below 2**28 / pi)
FAR = 16777216.0
#: the vectorisable replacements of float64 libm calls in a strip's map loop
VECTOR_CALLS = {"sin": "_vsin", "cos": "_vcos"}

_POLY = (
    "    u = -7.97255955009037868891952e-18\n"
    "    u = u * s + 2.81009972710863200091251e-15\n"
    "    u = u * s - 7.64712219118158833288484e-13\n"
    "    u = u * s + 1.60590430605664501629054e-10\n"
    "    u = u * s - 2.50521083763502045810755e-08\n"
    "    u = u * s + 2.75573192239198747630416e-06\n"
    "    u = u * s - 0.000198412698412696162806809\n"
    "    u = u * s + 0.00833333333333332974823815\n"
    "    u = u * s - 0.166666666666666657414808\n"
)
#: the helpers' sources (a kernel module defines those its kernel calls: :func:`trig_helpers_in`)
TRIG_HELPERS = (
    "import numpy as np\nimport numba\n\n"
    "@numba.njit(inline='always', error_model='numpy')\n"
    "def _vsin(d):\n"
    "    q = np.rint(d * 0.318309886183790671538)  # d = q pi + r, |r| <= pi / 2\n"
    "    r = d - q * 3.1415926218032836914\n"
    "    r = r - q * 3.1786509424591713469e-08\n"
    "    r = r - q * 1.2246467864107188502e-16\n"
    "    r = r - q * 1.2736634327021899816e-24\n"
    "    s = r * r\n"
    "    r = -r if np.int64(q) & 1 else r\n"
    + _POLY +
    "    u = s * (u * r) + r\n"
    "    return d if d == 0.0 else u  # sin(-0.0) is -0.0\n\n"
    "@numba.njit(inline='always', error_model='numpy')\n"
    "def _vcos(d):\n"
    "    q = 2.0 * np.rint(d * 0.318309886183790671538 - 0.5) + 1.0  # d = q pi / 2 + r, q odd\n"
    "    r = d - q * (3.1415926218032836914 * 0.5)  # halving is exact\n"
    "    r = r - q * (3.1786509424591713469e-08 * 0.5)\n"
    "    r = r - q * (1.2246467864107188502e-16 * 0.5)\n"
    "    r = r - q * (1.2736634327021899816e-24 * 0.5)\n"
    "    s = r * r\n"
    "    r = r if np.int64(q) & 2 else -r\n"
    + _POLY +
    "    return s * (u * r) + r\n\n"
    "@numba.njit(inline='always', error_model='numpy')\n"
    "def _trig_far(d):\n"
    f"    return np.int64(not abs(d) <= {FAR!r})  # also inf and NaN: libm's values\n"
)
_HELPER_NAMES = ("_vsin", "_vcos", "_trig_far")


def trig_helpers_in(kernel: str) -> list[str]:
    """The helper module text when ``kernel`` calls one of the strip's helpers, else nothing.

    >>> trig_helpers_in("y = np.sin(x)"), len(trig_helpers_in("y = _vsin(x)"))
    ([], 1)
    """
    if any(f"{name}(" in kernel for name in _HELPER_NAMES):
        return [TRIG_HELPERS.split("\n\n", 1)[1].rstrip("\n")]
    return []


@dataclass(frozen=True)
class StripParts:
    """What a strip-mined scan is made of, from the emitter's lines.

    ``maps``: the feeding maps' lines, in order (vectorised calls already substituted);
    ``libm``: the same lines with libm's calls (the strip's fallback; empty when no call was
    substituted); ``far``: the arguments of the substituted calls; ``early``: stores of
    the maps' own outputs; ``scans``: (accumulator, its dtype's constructor, the scanned
    value, the combine step with ``{b}`` for the buffered value);
    ``rest``: the consumers' lines in program order with the scans' steps in place
    (``{scan:<acc>}`` marks where each goes); ``stores``: the other stores."""

    maps: tuple[str, ...]
    libm: tuple[str, ...]
    far: tuple[str, ...]
    early: tuple[str, ...]
    scans: tuple[tuple[str, str, str, str], ...]
    rest: tuple[str, ...]
    stores: tuple[str, ...]


def defined_locals(lines: Sequence[str]) -> set[str]:
    """The names the lines assign (``name = ...``).

    >>> sorted(defined_locals(["t0 = np.sin(x[i0])  # 2", "acc5 = acc5 + t0", "c[i0] = t0"]))
    ['acc5', 't0']
    """
    return {m.group(1) for line in lines if (m := re.match(r"\s*([A-Za-z_]\w*) = ", line))}


def reads_any(lines: Sequence[str], names: set[str]) -> bool:
    """Whether any line (its code, not its comment) mentions one of ``names``.

    >>> reads_any(["y_w = t0 * 2.0  # 3: MULTIPLY y, t0"], {"t0"}), reads_any(["y = c  # t0"], {"t0"})
    (True, False)
    """
    if not names:
        return False
    pattern = re.compile(r"\b(" + "|".join(re.escape(n) for n in sorted(names)) + r")\b")
    return any(pattern.search(line.split("  #", 1)[0]) for line in lines)


def strip_lines(parts: StripParts, n: str, strip: str, last: str, lo: str | None = None) -> list[str]:
    """The serial scan over elements ``lo`` (None: 0) to ``n`` as strips of ``strip`` (the
    unsigned constant's name; ``last`` that of ``STRIP - 1``; ``lo`` and ``n`` unsigned too:
    Numba types a mix of signed and unsigned integers as a float): the accumulators start
    where the caller set them.

    >>> p = StripParts(("t0 = _vsin(x[i0])  # 1",), ("t0 = np.sin(x[i0])  # 1",), ("x[i0]",), (),
    ...                (("acc2", "np.float64", "t0", "acc2 + {b}"),), ("{scan:acc2}", "y_w = acc2"), ("y[i0] = y_w",))
    >>> print("\\n".join(strip_lines(p, "n0", "u512", "u511")))  # doctest: +NORMALIZE_WHITESPACE
    acc2_sb = np.empty(512, dtype=np.float64)
    for acc_st in range((n0 + u511) // u512):  # strips: the maps vectorised, then the scan
        acc_s0 = acc_st * u512
        acc_s1 = min(n0, acc_s0 + u512)
        acc_far = np.int64(0)
        for i0 in range(acc_s0, acc_s1):  # the maps feeding the scan (no dependency between elements)
            t0 = _vsin(x[i0])  # 1
            acc_far |= _trig_far(x[i0])
            acc2_sb[i0 - acc_s0] = t0
        if acc_far:  # an argument beyond the polynomials' range, inf or NaN: libm's values
            for i0 in range(acc_s0, acc_s1):
                t0 = np.sin(x[i0])  # 1
                acc2_sb[i0 - acc_s0] = t0
        for i0 in range(acc_s0, acc_s1):  # the scan, in NumPy's order, and its consumers
            acc2 = np.float64(acc2 + acc2_sb[i0 - acc_s0])
            y_w = acc2
            y[i0] = y_w
    """
    out = [f"{a}_sb = np.empty({STRIP}, dtype={t})" for a, t, _, _ in parts.scans]
    count = f"({n} + {last}) // {strip}" if lo is None else f"({n} - {lo} + {last}) // {strip}"
    out.append(f"for acc_st in range({count}):  # strips: the maps vectorised, then the scan")
    out += [f"    acc_s0 = acc_st * {strip}" if lo is None else f"    acc_s0 = {lo} + acc_st * {strip}", f"    acc_s1 = min({n}, acc_s0 + {strip})"]
    buffered = [f"{a}_sb[i0 - acc_s0] = {v}" for a, _, v, _ in parts.scans]
    if parts.far:
        out.append("    acc_far = np.int64(0)")
    out.append("    for i0 in range(acc_s0, acc_s1):  # the maps feeding the scan (no dependency between elements)")
    out += [f"        {x}" for x in parts.maps]
    out += [f"        acc_far |= _trig_far({v})" for v in parts.far]
    out += [f"        {x}" for x in buffered + list(parts.early)]
    if parts.far:
        out.append("    if acc_far:  # an argument beyond the polynomials' range, inf or NaN: libm's values")
        out.append("        for i0 in range(acc_s0, acc_s1):")
        out += [f"            {x}" for x in list(parts.libm) + buffered + list(parts.early)]
    out.append("    for i0 in range(acc_s0, acc_s1):  # the scan, in NumPy's order, and its consumers")
    steps = {a: f"{a} = {t}({step.format(b=f'{a}_sb[i0 - acc_s0]')})" for a, t, _, step in parts.scans}
    for line in list(parts.rest) + list(parts.stores):
        m = re.fullmatch(r"\{scan:(\w+)\}", line)
        out.append(f"        {steps[m.group(1)] if m else line}")
    return out


def vector_call(op: Opcode, ops: Sequence[str], loop: tuple[np.dtype, ...] | None,
                expr: str) -> tuple[str, str, str] | None:
    """(libm's call, its vectorisable form, the argument) where instruction ``op``'s
    expression ``expr`` calls a float64 function a strip's map loop vectorises, else None.

    >>> vector_call(Opcode.SIN, ["x[i0]"], (np.dtype("float64"),) * 2, "np.sin(x[i0])")
    ('np.sin(x[i0])', '_vsin(x[i0])', 'x[i0]')
    >>> vector_call(Opcode.SIN, ["x[i0]"], (np.dtype("float32"),) * 2, "np.sin(x[i0])") is None
    True
    """
    call = f"np.{op.value}({ops[0]})" if ops else ""
    if op.value in VECTOR_CALLS and loop is not None and loop[0].name == "float64" and call in expr:
        return call, f"{VECTOR_CALLS[op.value]}({ops[0]})", ops[0]
    return None


@dataclass(frozen=True)
class EmittedScan:
    """What the emitter wrote for a one-dimensional scan block: the body's lines and each
    instruction's span of them, the stores (and whose they are), the scans' accumulators
    (instruction, name, dtype) and scanned values, and the vectorisable calls
    (:func:`vector_call`) by instruction."""

    body: tuple[str, ...]
    spans: dict[int, tuple[int, int]]
    stores: tuple[str, ...]
    store_of: dict[int, int]
    accs: tuple[tuple[int, str, np.dtype], ...]
    values: dict[int, str]
    calls: dict[int, tuple[str, str, str] | None]


def split_for_strips(lay: "KernelLayout", em: EmittedScan, busy: bool) -> StripParts | None:
    """The serial scan's lines split for strips: the maps feeding the scans (their own loop,
    vectorisable), the scans and their consumers; None where the block is not made of maps,
    scans and generators only (``busy``: lines before or around the loop), or where a
    consumer reads a map's local (it would have to be buffered too: the one-pass form stays)."""
    body, spans = em.body, em.spans
    scans = {k for k, _, _ in em.accs}
    feeders = sorted(lay.scan_feeders - scans)
    allowed = OpFamily.ELEMENTWISE | OpFamily.SCAN | OpFamily.GENERATOR | OpFamily.SYSTEM
    if not feeders or busy or lay.filters is not None or any(ins.opcode not in allowed for ins in lay.instructions) \
            or any(lay.instruction(k).opcode in OpFamily.SCAN for k in feeders):
        return None
    maps = [line for k in feeders for line in body[spans[k][0]:spans[k][1]]]
    early = [em.stores[em.store_of[k]] for k in feeders if k in em.store_of]
    rest: list[str] = []
    for k in sorted(spans):
        if k in scans:
            rest += [f"{{scan:{next(a for j, a, _ in em.accs if j == k)}}}"] + list(body[spans[k][0] + 1:spans[k][1]])
        elif k not in lay.scan_feeders:
            rest += body[spans[k][0]:spans[k][1]]
    stores = [line for line in em.stores if line not in early]
    values = [em.values[k] for k, _, _ in em.accs]
    # the maps' locals stay in the first loop; what the second defines never reaches it
    if reads_any(rest + stores, defined_locals(maps)) or reads_any(maps + early + values, defined_locals(rest)):
        return None
    calls = [c for k in feeders if (c := em.calls.get(k)) is not None]
    vectorised = []
    for line in maps:
        for call, vcall, _ in calls:
            line = line.replace(call, vcall)
        vectorised.append(line)
    scanned = tuple((a, np_type(np.dtype(dt).name), em.values[k],
                     OPCODES[lay.instruction(k).opcode.combining].combine.format(a=a, b="{b}"))
                    for k, a, dt in em.accs)
    return StripParts(tuple(vectorised), tuple(maps) if calls else (), tuple(dict.fromkeys(x for _, _, x in calls)),
                      tuple(early), scanned, tuple(rest), tuple(stores))


def identity_text(op: Opcode, dtype: str) -> str:
    """A reduction's starting value (the table's identity) as Numba source, typed as ``dtype``.

    >>> identity_text(Opcode.MAXIMUM_REDUCE, "float32"), identity_text(Opcode.MINIMUM_REDUCE, "int8")
    ('np.float32(-np.inf)', 'np.int8(127)')
    """
    value = OPCODES[op].identity_of(dtype)
    text = ("np.inf" if value > 0 else "-np.inf") if isinstance(value, float) and np.isinf(value) else repr(value)
    return f"{np_type(dtype)}({text})"


def carry_lines(accs: Sequence[tuple[Opcode, str, np.dtype]]) -> list[str]:
    """The carry into each chunk: an exclusive scan of the chunk totals (serial, one step
    per chunk); ``accs`` holds each scan's combining operator, accumulator and dtype."""
    out = []
    for op, a, dt in accs:
        out.append(f"    {a} = {identity_text(op, dt.name)}  # the carries: an exclusive scan of the totals")
        out.append("    for chunk in range(nch):")
        out.append(f"        {a}_t = {a}_tot[chunk]")
        out.append(f"        {a}_tot[chunk] = {a}")
        out.append(f"        {a} = {np_type(dt.name)}(" + OPCODES[op].combine.format(a=a, b=f"{a}_t") + ")")
    return out


def chunk_strip_lines(parts: StripParts, local: Sequence[str] | None, n: str, chunk: str, one: str, strip: str,
                      last: str, early: bool = True) -> list[str]:
    """One pass of a chunked scan over the parallel loop's ``chunk`` (elements
    ``chunk * <chunk>`` up to ``n``), in strips, the accumulators starting where the caller
    set them. ``local``: the lines storing the chunk's local scan (pass 1 of the stored
    form, one line per scan), ``[]`` for a pass that only totals the chunk (pass 1 of the
    contracted form), None for the whole body with the consumers and the stores (its pass
    2). ``early``: whether the maps' own stores are made in this pass (not while totalling:
    pass 2 makes them).

    >>> p = StripParts(("t0 = _vsin(x[i0])  # 1",), ("t0 = np.sin(x[i0])  # 1",), ("x[i0]",), ("t[i0] = t0",),
    ...                (("acc2", "np.float64", "t0", "acc2 + {b}"),), ("{scan:acc2}", "y_w = acc2"), ("y[i0] = y_w",))
    >>> total = chunk_strip_lines(p, [], "n0", "u4096", "u1", "u512", "u511", early=False)
    >>> [x.strip() for x in total if x.strip().startswith(("t0 = _", "acc2 =", "t[", "y"))]   # no store
    ['t0 = _vsin(x[i0])  # 1', 'acc2 = np.float64(acc2 + acc2_sb[i0 - acc_s0])']
    >>> body = chunk_strip_lines(p, None, "n0", "u4096", "u1", "u512", "u511")
    >>> [x.strip() for x in body if x.strip().startswith(("t[", "y"))]   # the maps' stores, the consumers
    ['t[i0] = t0', 't[i0] = t0', 'y_w = acc2', 'y[i0] = y_w']
    """
    if local is not None:
        parts = replace(parts, rest=tuple(f"{{scan:{a}}}" for a, _, _, _ in parts.scans), stores=tuple(local))
    if not early:
        parts = replace(parts, early=())
    out = [f"        acc_hi = min({n}, (chunk + {one}) * {chunk})"]
    return out + [f"        {line}" for line in strip_lines(parts, "acc_hi", strip, last, f"chunk * {chunk}")]


def kernel_helpers(instructions: Sequence[Instruction], kernel: str) -> list[str]:
    """The sources of the helper functions (the table's ``_ipow``, the strips' polynomials)
    that ``kernel`` calls, each once, in the order the block's instructions first need them."""
    found: list[str] = []
    for ins in instructions:
        found += [h for h in OPCODES[ins.opcode].helpers_in(kernel) if h not in found]
    return found + trig_helpers_in(kernel)
