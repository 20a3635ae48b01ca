"""The ``time`` cost model: predicted seconds of a partition, a roofline per block.

A block becomes one kernel (:mod:`fusionlab.backend.numba.codegen`), so its time is

``T(B) = launch(B) + alloc(B) + max(memory(B), compute(B))``

- ``memory(B)``: the bytes of the views the block reads outside itself plus those it writes
  outside itself — the Bohrium model's ``ext[B]`` (Def. 13): contracted arrays cost no
  traffic — each over the read or write bandwidth of where the data lives (below), parallel
  or serial as the kernel runs. A strided view moves whole cache lines: its bytes are
  counted per element as ``min(64, itemsize * |innermost stride|)``;
- ``compute(B)``: per computing instruction, its elements times the seconds per element
  of its opcode family (``exp``, ``log``, ``sqrt``, division, arithmetic, comparisons,
  ``where``, reductions) on its data type;
- ``launch(B)``: a parallel or serial kernel call from Python, plus a cost per argument
  (the driver makes a view and Numba's dispatcher types each); blocks with no computing
  instruction cost nothing;
- ``alloc(B)``: the arrays a run must allocate afresh (synced arrays: the user keeps them),
  a fixed cost plus the page faults per byte.

A block is parallel when its largest iteration space has at least ``min_size`` elements
(the backend's rule). *Where the data lives* is decided per program, not per block: the
fraction ``h = min(1, llc / W)`` of the traffic hits the last-level cache, with ``W`` the
largest total of arrays alive at once in program order. A block's own working set would
break monotonicity (two blocks that each fit the cache merge into one that does not, and
the traffic of both becomes slower); ``docs/cost-models.md`` ("The time model") has the
proof that the model is monotone (Def. 6).

The figures come from ``fusionlab calibrate`` (:mod:`fusionlab.tools.calibrate`), stored per
machine under the user's cache folder (:func:`machine_path`); without that file the model
uses :func:`default_figures`, measured on a 2-core AVX-512 virtual machine, and says so in
its :attr:`TimeModel.description`.

Examples
--------
>>> from fusionlab.ir.examples import fig3
>>> model = TimeModel(default_figures())
>>> singletons = [[i] for i in range(17)]
>>> optimum = [[0, 1, 4, 5, 6, 7, 8, 11, 12], [2, 3], [9, 10, 13, 14, 15, 16]]
>>> model.cost(fig3(), optimum) < model.cost(fig3(), singletons)
True
>>> run = default_figures().launch["run"]   # a run of the driver, whatever the partition
>>> predict_seconds(fig3(), optimum, default_figures()) == model.cost(fig3(), optimum) + run
True
"""

from __future__ import annotations

import functools
import json
import math
import os
import platform
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, NamedTuple, Sequence

from fusionlab.ir.bytecode import OPCODES, Literal, Opcode, OpFamily, Program, View, contraction_letters
from fusionlab.costs import AdditiveCostModel
from fusionlab.ir.opcodes import power_without_pow
from fusionlab.analysis.wsp import WSPGraph, bit_indices

__all__ = [
    "TimeModel", "MachineFigures", "BlockTime", "default_figures", "load_figures", "machine_path",
    "cache_root", "predict_seconds", "explain", "opcode_family", "FAMILIES", "DTYPES", "MIN_SIZE",
    "last_level_cache_bytes", "cpu_model", "instruction_family", "contraction_flops", "contraction_route", "CONTRACTION_ROUTES",
    "RUN_BY_NUMPY", "runs_block_by_block",
]

#: Opcode families with a measured throughput.
FAMILIES: tuple[str, ...] = ("arithmetic", "exp", "log", "sqrt", "division", "comparison", "where", "reduction")
#: Data types measured; others take the nearest (bool and integers: int64; float16: float32).
DTYPES: tuple[str, ...] = ("float64", "float32", "int64")
#: How a contraction runs: ``"einsum"``, NumPy's own loops (``np.einsum`` without
#: ``optimize``), ``"gemm"``, BLAS, or ``"auto"``: each CONTRACT by the call it replays
#: (:func:`contraction_route`).
CONTRACTION_ROUTES: tuple[str, ...] = ("auto", "einsum", "gemm")
#: NumPy calls that reach BLAS on float operands (a CONTRACT's ``via``)
BLAS_CALLS: frozenset[str] = frozenset({"matmul", "dot", "inner"})
#: Instructions NumPy runs (no kernel): a program with one runs block by block, without a driver.
RUN_BY_NUMPY: frozenset[Opcode] = OpFamily.OPAQUE | OpFamily.CONTRACTION
#: Blocks with fewer elements run serially: the backend's ``DEFAULT_MIN_SIZE`` (a test
#: checks they agree; a cost model does not import the executor).
MIN_SIZE = 4096
_LINE = 64   # bytes of a cache line

# --------------------------------------------------------------------------- figures


def cache_root() -> Path:
    """The user's fusionlab cache folder: ``$FUSIONLAB_CACHE``, else
    ``$XDG_CACHE_HOME/fusionlab``, else ``~/.cache/fusionlab`` (as the kernel cache).

    >>> cache_root().name in ("fusionlab",) or "FUSIONLAB_CACHE" in os.environ
    True
    """
    root = os.environ.get("FUSIONLAB_CACHE")
    if root:
        return Path(root)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "fusionlab"


def machine_path(host: str | None = None) -> Path:
    """The calibration file of ``host`` (this machine by default).

    >>> machine_path("node1").name
    'machine-node1.json'
    """
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", host if host is not None else (platform.node() or "unknown"))
    return cache_root() / f"machine-{name}.json"


def cpu_model() -> str:
    """The CPU's model name (from ``/proc/cpuinfo``; the platform's processor string elsewhere).

    >>> isinstance(cpu_model(), str)
    True
    """
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def last_level_cache_bytes(default: int = 32 << 20) -> int:
    """The largest data cache of CPU 0 (from sysfs), ``default`` when the OS does not say.

    >>> last_level_cache_bytes() > 0
    True
    """
    best = 0
    root = Path("/sys/devices/system/cpu/cpu0/cache")
    for d in root.glob("index*") if root.is_dir() else []:
        try:
            if (d / "type").read_text().strip() == "Instruction":
                continue
            text = (d / "size").read_text().strip().upper()
        except OSError:
            continue
        m = re.fullmatch(r"(\d+)([KMG]?)", text)
        if m:
            best = max(best, int(m.group(1)) << {"": 0, "K": 10, "M": 20, "G": 30}[m.group(2)])
    return best or default


@dataclass(frozen=True)
class MachineFigures:
    """What ``fusionlab calibrate`` measured (or the defaults).

    ``bandwidth[where][kind][mode]`` in bytes per second (``where`` is ``"cache"`` or
    ``"memory"``, ``kind`` ``"read"`` or ``"write"``, ``mode`` ``"parallel"`` or
    ``"serial"``); ``launch[mode]`` and ``launch["argument"]`` in seconds per call and per
    argument; ``allocation`` ``{"fixed": s, "per_byte": s}``; ``ops[family][dtype][mode]``
    seconds per element; ``launch["run"]`` is the fixed cost of one run of the driver and
    ``launch["batch"]`` what each further batch of the run adds. ``noisy`` and ``reasons`` say whether other load disturbed them.
    """

    host: str
    cpu: str
    cores: int
    threads: int
    llc_bytes: int
    bandwidth: dict[str, dict[str, dict[str, float]]]
    launch: dict[str, float]
    allocation: dict[str, float]
    ops: dict[str, dict[str, dict[str, float]]]
    measured: str = ""
    seconds: float = 0.0
    load: float = 0.0
    spread: float = 0.0
    noisy: bool = False
    reasons: tuple[str, ...] = ()
    quick: bool = False
    source: str = "default"
    version: int = 1
    #: bandwidth by working set: ``curve[kind][mode]`` is a list of ``[bytes, bytes per
    #: second]`` (a read or a write pass over arrays of that many bytes), ascending in bytes;
    #: empty: the two-level mix of ``bandwidth`` and ``llc_bytes``
    curve: dict[str, dict[str, list[list[float]]]] = field(default_factory=dict)
    #: seconds per floating-point operation of a contraction (``CONTRACT``, np.einsum):
    #: ``{"gemm": {dtype: s}, "loop": {dtype: s}}`` — a matrix product BLAS runs, and the
    #: loop nest einsum falls back to; empty: the defaults' figures
    flops: dict[str, dict[str, float]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """The figures as JSON-ready data."""
        out = asdict(self)
        out["reasons"] = list(self.reasons)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> "MachineFigures":
        """Figures from :meth:`to_dict`'s data.

        >>> f = default_figures()
        >>> MachineFigures.from_dict(f.to_dict()) == f
        True
        """
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        known["reasons"] = tuple(known.get("reasons", ()))
        return cls(**known)

    def save(self, path: Path) -> None:
        """Write the figures as JSON to ``path`` (folders made), atomically."""
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(self.to_dict(), indent=1) + "\n")
        os.replace(tmp, path)

    @property
    def label(self) -> str:
        """Where the figures come from, in a few words."""
        if self.source == "default":
            return "default figures for a 2-core AVX-512 virtual machine (run `fusionlab calibrate`)"
        return f"calibrated on {self.host} ({self.cpu}) {self.measured}" + (" — NOISY" if self.noisy else "")


def _ops(f64: tuple[float, float], f32: tuple[float, float], i64: tuple[float, float]) -> dict[str, dict[str, float]]:
    return {dt: {"parallel": p * 1e-9, "serial": q * 1e-9} for dt, (p, q) in
            (("float64", f64), ("float32", f32), ("int64", i64))}


def default_figures() -> MachineFigures:
    """Figures measured by ``fusionlab calibrate`` on the 2-core AMD EPYC (AVX-512, 32 MiB
    last-level cache) virtual machines this project runs on, for when there is no
    calibration file: each the best of the calibrations of 2026-11-23 (other load only
    ever slows a measurement down).

    >>> f = default_figures()
    >>> f.source, f.bandwidth["memory"]["read"]["parallel"] > f.bandwidth["memory"]["read"]["serial"]
    ('default', True)
    """
    return MachineFigures(
        host="default", cpu="AMD EPYC (2 vCPUs, AVX-512)", cores=2, threads=2, llc_bytes=32 << 20,
        bandwidth={
            "cache": {"read": {"parallel": 177e9, "serial": 92e9}, "write": {"parallel": 126e9, "serial": 70e9}},
            "memory": {"read": {"parallel": 33e9, "serial": 29e9}, "write": {"parallel": 28e9, "serial": 27e9}},
        },
        # block, numpy: a block's bookkeeping and a NumPy call from the block-by-block
        # executor (measured on the Xeon virtual machines, 2026-11-24)
        launch={"parallel": 2.9e-6, "serial": 0.5e-6, "argument": 0.4e-6, "run": 6.5e-6, "batch": 1.0e-6,
                "block": 1.0e-6, "numpy": 6.0e-6},
        allocation={"fixed": 0.12e-6, "per_byte": 1.7e-10},
        # seconds per floating-point operation of a 192 x 192 matrix product (calibrated
        # 2026-11-24 on the 2-core Xeon virtual machines: BLAS 125 / 197 GFLOP/s, einsum's
        # loops 10.8 / 20 GFLOP/s); integers take einsum's float64 figure
        flops={"gemm": {"float64": 8.0e-12, "float32": 5.1e-12, "int64": 9.3e-11},
               "einsum": {"float64": 9.3e-11, "float32": 5.0e-11, "int64": 9.3e-11}},
        ops={   # nanoseconds per element (parallel, serial) for float64, float32, int64
            "arithmetic": _ops((0.020, 0.027), (0.014, 0.014), (0.029, 0.027)),
            # float64 exp and log: vmath's vectorised polynomials (calibrate's loops,
            # 2026-11-25 on the AMD EPYC machines; libm's calls took 3.3 / 6.6 and 4.2 / 8.8)
            "exp": _ops((0.56, 1.12), (2.2, 4.6), (0.56, 1.12)),
            "log": _ops((0.67, 1.48), (2.6, 5.5), (0.67, 1.48)),
            "sqrt": _ops((0.265, 0.53), (0.089, 0.17), (0.265, 0.53)),
            "division": _ops((0.146, 1.2), (0.054, 1.0), (1.4, 2.6)),
            "comparison": _ops((0.103, 0.20), (0.045, 0.08), (0.047, 0.062)),
            "where": _ops((0.020, 1.0), (0.010, 0.8), (0.013, 1.1)),
            "reduction": _ops((0.08, 0.08), (0.076, 0.072), (0.079, 0.073)),
        },
    )


@functools.lru_cache(maxsize=8)
def _read(path: str, mtime: float) -> MachineFigures:
    # keyed by modification time: a new calibration is read again
    return MachineFigures.from_dict(json.loads(Path(path).read_text()))


def load_figures(path: Path | None = None) -> MachineFigures:
    """This machine's calibration (:func:`machine_path`, or ``path``), or the defaults
    when there is none.

    >>> load_figures(Path("/nonexistent/machine.json")).source
    'default'
    """
    p = Path(path) if path is not None else machine_path()
    try:
        return _read(str(p), p.stat().st_mtime)
    except (OSError, ValueError, TypeError):
        return default_figures()


# --------------------------------------------------------------------------- opcodes

def opcode_family(op: Opcode) -> tuple[str, ...]:
    """The families whose throughput an instruction pays (one each per element).

    >>> opcode_family(Opcode.POWER), opcode_family(Opcode.ADD)
    (('exp', 'log'), ('arithmetic',))
    """
    return OPCODES[op].cost   # the opcode table's time-model classes


def instruction_family(ins: Any) -> tuple[str, ...]:
    """:func:`opcode_family`, except for a power by a literal the kernels compute without
    ``pow`` (``opcodes.power_without_pow``: products by repeated squaring, square roots)
    and a Python-int exponent, which Numba's ``**`` computes by squaring too.

    >>> from fusionlab import parse
    >>> p = parse("ARRAY A float64[4]\\nARRAY B float64[4]\\nPOWER B, A, 3\\nPOWER B, A, 0.5\\n"
    ...           "POWER B, A, 5.0\\nPOWER B, A, -1.5\\nPOWER B, A, A")
    >>> [instruction_family(i) for i in p]   # doctest: +NORMALIZE_WHITESPACE
    [('arithmetic', 'arithmetic'), ('sqrt',), ('arithmetic', 'arithmetic', 'arithmetic'),
     ('sqrt', 'division', 'arithmetic', 'arithmetic'), ('exp', 'log')]
    """
    if ins.opcode is Opcode.POWER and len(ins.inputs) == 2 and isinstance(ins.inputs[1], Literal):
        y = ins.inputs[1].value
        e = power_without_pow(y)
        if e is not None and not e.is_integer():   # sqrt, then a division and the cube's products
            return ("sqrt",) + (("division", "arithmetic", "arithmetic") if e == -1.5 else ("division",)
                                if e < 0 else ("arithmetic",) if e > 1 else ())
        if e is not None or (isinstance(y, int) and not isinstance(y, bool) and 1 <= abs(y) <= 64):
            n = int(abs(y))
            return ("arithmetic",) * max(1, n.bit_length() + bin(n).count("1") - 2) + (("division",) if y < 0 else ())
    return opcode_family(ins.opcode)


def contraction_flops(ins: Any) -> int:
    """A contraction's floating-point operations: a multiply and an add for every point of
    its index space, ``2 * (product of every letter's extent)``.

    >>> from fusionlab import parse
    >>> p = parse('ARRAY A float64[3,4]\\nARRAY B float64[4,5]\\nARRAY C float64[3,5]\\n'
    ...           'CONTRACT C, A, B, subscripts="ij,jk->ik"')
    >>> contraction_flops(p[0])   # 2 * 3 * 4 * 5
    120
    """
    sa, sb, _ = contraction_letters(ins.attr("subscripts"))
    extent: dict[str, int] = {}
    for letters, v in zip((sa, sb), ins.views_in):
        extent.update(zip(letters, v.shape))
    return 2 * math.prod(extent.values())


#: opaque calls that are matrix products (NumPy hands them to BLAS)
MATMUL_NAMES: frozenset[str] = frozenset({"np.matmul", "np.dot", "ndarray.dot", "ndarray.__matmul__", "operator.matmul"})


def contraction_route(ins: Any) -> str:
    """``"gemm"`` for a CONTRACT whose NumPy call reaches BLAS (``via`` matmul, dot or inner on
    float operands: a lone one replays that call, a fused one runs BLAS tiles), else ``"einsum"``.

    >>> from fusionlab import parse
    >>> p = parse('ARRAY A float64[3,4]\\nARRAY B float64[4,5]\\nARRAY C float64[3,5]\\n'
    ...           'CONTRACT C, A, B, subscripts="ij,jk->ik", via="matmul"\\n')
    >>> contraction_route(p[0])
    'gemm'
    """
    floats = all(v.dtype.startswith("float") for v in ins.views_in)
    return "gemm" if floats and ins.attr("via") in BLAS_CALLS else "einsum"


def _matmul_flops(ins: Any) -> int:
    """``2 m k n`` for an opaque matrix product of 1-D or 2-D operands (0 otherwise)."""
    if ins.attr("name") not in MATMUL_NAMES or len(ins.views_in) != 2 or not ins.outputs:
        return 0
    a, b = ins.views_in
    if not (1 <= a.ndim <= 2 and 1 <= b.ndim <= 2) or a.shape[-1] != b.shape[0]:
        return 0
    return 2 * a.shape[-1] * max(1, math.prod(ins.outputs[0].shape))


def _dtype_key(dtype: str) -> str:
    if dtype.startswith("float") and dtype not in ("float64", "float128"):
        return "float32"
    if dtype.startswith(("float", "complex")):
        return "float64"
    return "int64"


def _view_bytes(v: View) -> int:
    """The bytes an access of ``v`` moves: its distinct elements (a broadcast axis adds
    none), each costing a whole cache line's share when the innermost stride skips."""
    unique, inner = 1, 1
    for n, s in zip(v.shape, v.strides):
        if s != 0:
            unique *= n
            if n > 1:
                inner = abs(s)
    item = v.base.itemsize
    return unique * min(_LINE, item * max(inner, 1))


# --------------------------------------------------------------------------- the model


@dataclass(frozen=True)
class BlockTime:
    """A block's predicted seconds and their parts (:func:`explain`)."""

    instructions: tuple[int, ...]
    parallel: bool
    launch: float
    allocation: float
    memory: float
    compute: float
    read_bytes: int
    write_bytes: int

    @property
    def seconds(self) -> float:
        """``launch + allocation + max(memory, compute)``."""
        return self.launch + self.allocation + max(self.memory, self.compute)

    @property
    def bound(self) -> str:
        """What limits the block: ``"memory"``, ``"compute"`` or ``"launch"``."""
        if self.launch + self.allocation >= max(self.memory, self.compute):
            return "launch"
        return "memory" if self.memory >= self.compute else "compute"


class _Summary(NamedTuple):
    """A block's summary. Views and bases are bits of integers (ids given by ``prepare``),
    so merging two summaries is a few ORs, whatever the blocks' sizes."""

    members: int               # instruction mask
    reads: int                 # view ids read
    writes: int                # view ids written
    new: int                   # base ids first written here
    freed: int                 # base ids deleted here and never synced
    size: int                  # largest iteration space of a computing instruction
    computing: int             # computing instructions
    compute_parallel: float    # seconds
    compute_serial: float
    allocation: float


class TimeModel(AdditiveCostModel):
    """Predicted seconds of a partition on this machine (see the module notes).

    Parameters
    ----------
    figures : MachineFigures, optional
        The machine; by default this machine's calibration file, else the defaults.
    min_size : int
        Blocks with fewer elements run as serial kernels (the backend's ``min_size``).

    Examples
    --------
    >>> from fusionlab import parse
    >>> p = parse('''
    ... ARRAY A float64[1000000]
    ... ARRAY B float64[1000000]
    ... EXP B, A
    ... SYNC B
    ... ''')
    >>> m = TimeModel(default_figures())
    >>> b = explain(p, [[0, 1]], m)[0]
    >>> b.bound, b.read_bytes, b.write_bytes   # the fresh B's page faults outweigh its exps
    ('launch', 8000000, 8000000)
    >>> b.compute > b.memory   # a million vectorised exps take longer than the 16 MB they move
    True
    """

    name = "time"
    unit = "seconds"
    proven_monotone = True   # docs/cost-models.md, "The time model": monotone by proof, not re-checked per call
    pairwise = False
    merge_bonus: float = 0

    def __init__(self, figures: MachineFigures | None = None, min_size: int = MIN_SIZE,
                 opaque_seconds: Mapping[int, float] | None = None, contraction: str = "auto",
                 by_blocks: bool | None = None) -> None:
        self.figures = figures if figures is not None else load_figures()
        self.min_size = int(min_size)
        if contraction not in CONTRACTION_ROUTES:
            raise ValueError(f"contraction must be one of {', '.join(CONTRACTION_ROUTES)}, not {contraction!r}")
        self.contraction = contraction
        # whether the run goes block by block: one driver runs every batch of a capture, so
        # an opaque call in one batch decides for all (None: decided per program)
        self.by_blocks = by_blocks
        # seconds per flop of a contraction, by route and dtype (figures without them: the defaults')
        self._flops = {}
        for route in CONTRACTION_ROUTES[1:]:
            flops = self.figures.flops.get(route) or default_figures().flops[route]
            self._flops[route] = {dt: flops.get(dt, flops.get("float64", 0.0)) for dt in DTYPES}
        gemm = self.figures.flops.get("gemm") or default_figures().flops["gemm"]
        self._gemm = {dt: gemm.get(dt, gemm.get("float64", 0.0)) for dt in DTYPES}
        # an OPAQUE call's own seconds, measured when capture ran it (``Externals.seconds``,
        # by its ``key``): a matrix product or a sort is not element-wise work over its output
        self.opaque_seconds = dict(opaque_seconds or {})
        f = self.figures
        # parallel never slower than serial: a merge that turns a block parallel must not
        # make any of its work dearer (the monotonicity proof needs it)
        self._bw = {(w, k, m): f.bandwidth[w][k][m] for w in ("cache", "memory") for k in ("read", "write")
                    for m in ("parallel", "serial")}
        for w in ("cache", "memory"):
            for k in ("read", "write"):
                self._bw[w, k, "parallel"] = max(self._bw[w, k, "parallel"], self._bw[w, k, "serial"])
        self._op: dict[tuple[str, str], tuple[float, float]] = {}
        for fam in FAMILIES:
            for dt in DTYPES:
                got = f.ops.get(fam, {}).get(dt) or f.ops[fam]["float64"]
                self._op[fam, dt] = (min(got["parallel"], got["serial"]), got["serial"])
        self._launch = (f.launch["parallel"], f.launch["serial"])
        self._argument = f.launch.get("argument", 0.0)
        # runs block by block (no driver): per block, and per instruction NumPy runs
        defaults = default_figures().launch if f.source != "default" else f.launch
        self._block = f.launch.get("block", defaults.get("block", 0.0))
        self._numpy = f.launch.get("numpy", defaults.get("numpy", 0.0))

    @property
    def description(self) -> str:
        """What the model is and where its figures come from."""
        return f"time: predicted seconds, a roofline per block; {self.figures.label}"

    def cache_key(self) -> tuple[Any, ...]:
        return (self.name, self.unit, self.min_size, self.contraction, self.by_blocks, json.dumps(self.figures.to_dict(), sort_keys=True),
                tuple(sorted(self.opaque_seconds.items())))

    def __repr__(self) -> str:
        return f"TimeModel({self.figures.source!r}, min_size={self.min_size})"

    # ----------------------------------------------------------------- per program

    def prepare(self, graph: WSPGraph) -> Any:
        ctx = super().prepare(graph)
        program = graph.program
        w = _peak_live_bytes(program)
        ctx["hit"] = min(1.0, self.figures.llc_bytes / w) if w > 0 else 1.0
        # an instruction NumPy must run leaves the run without a driver: block by block
        numpy_only = 0
        for i, ins in enumerate(program):
            if ins.opcode in RUN_BY_NUMPY:
                numpy_only |= 1 << i
        ctx["numpy_only"] = numpy_only
        ctx["by_blocks"] = bool(numpy_only) if self.by_blocks is None else self.by_blocks
        ctx["working_set"] = w
        # seconds per byte by (kind, parallel?), one figure per program (the proof needs it)
        ctx["per_byte"] = {(k, par): self.seconds_per_byte(k, par, w)
                           for k in ("read", "write") for par in (True, False)}
        # ids: views (with their bytes) and bases (with the mask of their views)
        vid: dict[View, int] = {}
        bid: dict[str, int] = {}
        vbytes: list[int] = []
        base_views: list[int] = []
        view_base: list[int] = []
        base_bytes: list[int] = []
        for ins in program:
            for v in ins.views_in + ins.outputs:
                b = bid.setdefault(v.base.name, len(bid))
                if b == len(base_views):
                    base_views.append(0)
                    base_bytes.append(v.base.nbytes)
                if v not in vid:
                    vid[v] = len(vbytes)
                    vbytes.append(_view_bytes(v))
                    view_base.append(b)
                base_views[b] |= 1 << vid[v]
        ctx.update(vid=vid, bid=bid, vbytes=vbytes, base_views=base_views, view_base=view_base,
                   base_bytes=base_bytes)
        # the evaluator asks for an instruction's summary each time it builds a block
        ctx["single"] = [self._single(ctx, i) for i in range(len(program))]
        return ctx

    def seconds_per_byte(self, kind: str, parallel: bool, working_set: int) -> float:
        """Seconds per byte read (``kind="read"``) or written by a parallel or serial kernel
        of a program whose arrays alive at once peak at ``working_set`` bytes: from the
        calibrated curve (interpolated in the logarithm of the size, flat beyond its ends),
        else the share ``min(1, llc / working_set)`` at cache bandwidth and the rest at
        memory bandwidth. A parallel kernel is never dearer than a serial one.

        >>> m = TimeModel(default_figures())
        >>> m.seconds_per_byte("read", False, 1 << 20) < m.seconds_per_byte("read", False, 1 << 30)
        True
        """
        def at(mode: str) -> float:
            points = [p for p in self.figures.curve.get(kind, {}).get(mode, ()) if p[0] > 0 and p[1] > 0]
            if points:
                return _interpolate(points, working_set)
            hit = min(1.0, self.figures.llc_bytes / working_set) if working_set > 0 else 1.0
            return hit / self._bw["cache", kind, mode] + (1 - hit) / self._bw["memory", kind, mode]

        serial = at("serial")
        return min(at("parallel"), serial) if parallel else serial

    def summary(self, ctx: Any, i: int) -> _Summary:
        return ctx["single"][i]

    def _single(self, ctx: Any, i: int) -> _Summary:
        a = ctx["acc"][i]
        ins = ctx["graph"].program[i]
        vid, bid = ctx["vid"], ctx["bid"]
        if ins.opcode is Opcode.RANDOM and ins.attr("key") is not None:
            # values recorded at capture: the run lends them to their base (no work, no
            # traffic), and the kernels that read them read an input
            return _Summary(1 << i, 0, 0, 0, 0, 0, False, 0.0, 0.0, 0.0)
        computing = ins.opcode not in OpFamily.SYSTEM
        size = math.prod(ins.domain) if ins.domain is not None else 0
        elements = size if ins.domain is not None else max((v.size for v in ins.outputs + ins.views_in), default=0)
        par = ser = 0.0
        if computing:
            dt = _dtype_key((ins.views_in or ins.outputs)[0].base.dtype)
            for fam in instruction_family(ins):
                p, s = self._op[fam, dt]
                par, ser = par + elements * p, ser + elements * s
            if ins.opcode in OpFamily.CONTRACTION:
                # NumPy runs it, alone: its multiply-adds at the contraction's own rate
                route = contraction_route(ins) if self.contraction == "auto" else self.contraction
                par = ser = contraction_flops(ins) * self._flops[route][dt]
            elif ins.opcode in OpFamily.OPAQUE:
                measured = self.opaque_seconds.get(ins.attr("key"))
                par = ser = measured if measured is not None else ser   # NumPy runs it, on one core
                flops = _matmul_flops(ins)
                if flops:
                    # a matrix product by BLAS: its flops at the calibrated rate, not one timing
                    # at capture (on a shared machine BLAS threads waiting for a core made a
                    # 2 ms product take 400 ms once)
                    par = ser = flops * self._gemm[dt]
                # the executor hands the function copies of its arrays (it may write them)
                # and copies the result into place: each byte read and written once more
                moved = sum(_view_bytes(v) for v in ins.views_in + ins.outputs)
                par = ser = ser + moved * (ctx["per_byte"]["read", False] + ctx["per_byte"]["write", False])
            elif ins.opcode in OpFamily.SCAN:
                par *= 2    # a compiled scan runs in two parallel passes (chunk totals, then values)
            elif ins.opcode in OpFamily.HISTOGRAM:
                # each chunk of 4096 values zeroes its own bins, and they are summed after the
                # loop: a reduction step per bin per chunk (serial: one set of bins)
                p, s = self._op["reduction", dt]
                bins = ins.outputs[0].size
                par, ser = par + -(-size // 4096) * bins * p, ser + bins * s
        alloc = 0.0
        for name in a.new & ctx["synced"]:   # a synced array gets new memory every run
            base = next(v.base for v in a.writes if v.base.name == name)
            alloc += self.figures.allocation["fixed"] + self.figures.allocation["per_byte"] * base.nbytes

        def mask(xs: Iterable[Any], ids: dict[Any, int]) -> int:
            out = 0
            for x in xs:
                out |= 1 << ids[x]
            return out

        return _Summary(1 << i, mask(a.reads, vid), mask(a.writes, vid), mask(a.new, bid),
                        mask(a.deleted - ctx["synced"], bid), size if computing else 0, int(computing), par, ser, alloc)

    def combine(self, ctx: Any, a: _Summary, b: _Summary) -> _Summary:
        return _Summary(a.members | b.members, a.reads | b.reads, a.writes | b.writes, a.new | b.new,
                        a.freed | b.freed, max(a.size, b.size), a.computing + b.computing,
                        a.compute_parallel + b.compute_parallel, a.compute_serial + b.compute_serial,
                        a.allocation + b.allocation)

    def value(self, ctx: Any, s: _Summary) -> float:
        return self._parts(ctx, s).seconds

    def _parts(self, ctx: Any, s: _Summary) -> BlockTime:
        members = tuple(bit_indices(s.members))
        if not s.computing:
            return BlockTime(members, False, 0.0, s.allocation, 0.0, 0.0, 0, 0)
        base_views, vbytes = ctx["base_views"], ctx["vbytes"]
        inner = 0   # views of bases the block creates: reads of them stay inside
        for b in bit_indices(s.new):
            inner |= base_views[b]
        ext_r = s.reads & ~inner
        freed = 0   # views of bases the block frees (never synced): writes of them stay inside
        for b in bit_indices(s.freed):
            freed |= base_views[b]
        ext_w = s.writes & ~freed
        rb = _traffic(ext_r, ctx)
        wb = _traffic(ext_w, ctx)
        par = s.size >= self.min_size
        memory = rb * ctx["per_byte"]["read", par] + wb * ctx["per_byte"]["write", par]
        compute = s.compute_parallel if par else s.compute_serial
        launch = self._launch[0 if par else 1] + self._argument * (ext_r | ext_w).bit_count()
        if ctx["by_blocks"]:
            # no driver: Python's per-block bookkeeping, and a lone instruction NumPy runs
            # (an opaque call, a contraction, or one below min_size) costs at least a
            # NumPy call from the executor: max() keeps the proof's launch inequality
            launch += self._block
            if s.computing == 1 and (not par or ctx["numpy_only"] & s.members):
                launch = max(launch, self._numpy)
        return BlockTime(members, par, launch, s.allocation, memory, compute, rb, wb)

    def block_times(self, program: Program, blocks: Iterable[Iterable[int]],
                    graph: WSPGraph | None = None) -> list[BlockTime]:
        """Each block's predicted time and its parts; ``graph``: the program's WSP graph
        when the caller keeps one (building it again takes as long as on the first call)."""
        if graph is not None and graph.program is not program:
            raise ValueError("the graph given is not the program's")
        ctx = self.prepare(graph if graph is not None else WSPGraph(program))
        out = []
        for b in blocks:
            members = sorted(b)
            s = self.summary(ctx, members[0])
            for i in members[1:]:
                s = self.combine(ctx, s, self.summary(ctx, i))
            out.append(self._parts(ctx, s))
        return out


def _traffic(views: int, ctx: Any) -> int:
    """Bytes moved by accessing the views in the mask ``views``: per base, the sum of its
    views' bytes, at most the base's own bytes (``x[1:]`` and ``x[:-1]`` read one array
    once). ``min(sum, cap)`` per base keeps the bytes monotone and subadditive in the set
    of views, which the proof needs."""
    per_base: dict[int, int] = {}
    vbytes, view_base = ctx["vbytes"], ctx["view_base"]
    for v in bit_indices(views):
        b = view_base[v]
        per_base[b] = per_base.get(b, 0) + vbytes[v]
    caps = ctx["base_bytes"]
    return sum(min(n, caps[b]) for b, n in per_base.items())


def _interpolate(points: Sequence[Sequence[float]], size: float) -> float:
    """Seconds per byte at working set ``size`` from ``[bytes, bytes per second]`` points:
    linear in the logarithm of the size between two points, the end's figure beyond."""
    pts = sorted((float(b), 1.0 / float(bw)) for b, bw in points if b > 0 and bw > 0)
    if size <= pts[0][0]:
        return pts[0][1]
    for (b0, t0), (b1, t1) in zip(pts, pts[1:]):
        if size <= b1:
            x = math.log(size / b0) / math.log(b1 / b0)
            return t0 + x * (t1 - t0)
    return pts[-1][1]


def _peak_live_bytes(program: Program) -> int:
    """The largest total of bytes of arrays alive at once, in program order (an array lives
    from its first access to its DEL, or to the end)."""
    live: dict[str, int] = {}
    peak = total = 0
    for ins in program:
        if ins.opcode is Opcode.DEL:
            total -= live.pop(ins.outputs[0].base.name, 0)
            continue
        for v in ins.views_in + ins.outputs:
            if v.base.name not in live:
                live[v.base.name] = v.base.nbytes
                total += v.base.nbytes
        peak = max(peak, total)
    return peak


def runs_block_by_block(programs: Sequence[Program]) -> bool:
    """Whether a run of these batches has no driver: one of them has an instruction NumPy
    must run (:data:`RUN_BY_NUMPY`), and one driver runs every batch or none.

    >>> from fusionlab import parse
    >>> runs_block_by_block([parse("ARRAY A float64[4]\\nRANGE A"),
    ...                      parse('ARRAY A float64[4]\\nARRAY B float64[4]\\nOPAQUE B, A, name="np.sort"')])
    True
    """
    return any(ins.opcode in RUN_BY_NUMPY for p in programs for ins in p)


def predict_seconds(program: Program | Sequence[Program], blocks: Sequence[Any],
                    figures: MachineFigures | None = None, min_size: int = MIN_SIZE,
                    opaque_seconds: Mapping[int, float] | None = None) -> float:
    """The ``time`` model's prediction for one run (seconds): what the explorer shows
    beside the measured time. ``program`` is a program and ``blocks`` its partition, or a
    capture's batches and one partition per batch (``Capture.batches``, as ``run`` takes
    them). It is the model's cost plus the fixed cost of a run of the driver
    (``launch["run"]``) and of each batch after the first (``launch["batch"]``): the same
    for every partition, so not part of the cost the algorithms minimise; ``opaque_seconds`` prices opaque calls by their seconds at
    capture (``Capture.externals.seconds``). ``figures`` default to this machine's calibration (or the
    defaults).

    >>> from fusionlab.ir.examples import fig3
    >>> f = default_figures()
    >>> one = predict_seconds(fig3(), [range(17)], f)
    >>> one == TimeModel(f).cost(fig3(), [range(17)]) + f.launch["run"]
    True
    >>> two = predict_seconds([fig3(), fig3()], [[range(17)], [range(17)]], f)   # two batches, one run
    >>> abs(two - (2 * one - f.launch["run"] + f.launch["batch"])) < 1e-15
    True
    """
    if isinstance(program, Program):
        programs, partitions = [program], [blocks]
    else:
        programs, partitions = list(program), list(blocks)
    model = TimeModel(figures, min_size, opaque_seconds=opaque_seconds, by_blocks=runs_block_by_block(programs))
    if len(programs) != len(partitions):
        raise ValueError(f"{len(programs)} batches but {len(partitions)} partitions: give one partition per batch")
    total = sum(model.cost(p, [list(b) for b in part]) for p, part in zip(programs, partitions))
    launch = model.figures.launch
    return total + launch.get("run", 0.0) + launch.get("batch", 0.0) * (len(programs) - 1)


def explain(program: Program, blocks: Iterable[Iterable[int]], model: TimeModel | None = None) -> list[BlockTime]:
    """Per block: predicted seconds split into launch, allocation, memory and compute.

    >>> from fusionlab.ir.examples import fig3
    >>> [b.bound for b in explain(fig3(), [range(17)], TimeModel(default_figures()))]
    ['launch']
    """
    return (model or TimeModel()).block_times(program, blocks)

