"""The opcode table (``fusionlab.ir.opcodes.OPCODES``) is the one source of per-opcode facts.

- it covers every opcode once, its families are OpFamily's, and its facts agree with NumPy's
  own (arity = ``ufunc.nin``, identities = ``ufunc.identity``, ufunc names);
- differential: each element-wise opcode's Numba expression, compiled (one generated kernel
  per dtype for all opcodes), equals the table's NumPy function on edge values of every dtype
  NumPy has a loop for (float32, float64, int64, bool), in value and in the dtype a kernel
  stores; each reduction's identity, combine and partials, and each scan's running combine,
  fold to NumPy's ``reduce`` and ``accumulate``; integer POWER equals NumPy for every exponent
  and every integer dtype pair (Numba's own ``**`` is floating point above 2**16), through
  codegen's kernels and a captured cell;
- structural: no module but the table's holds a mapping from opcodes to facts, so adding an
  opcode is one row (docs/ir.md, "Per-opcode facts").
"""

from __future__ import annotations

import ast
import itertools
import math
import warnings
from pathlib import Path
from typing import Any

import numba
import numpy as np
import pytest
from numba.np.numpy_support import as_dtype

from fusionlab.ir import opcodes
from fusionlab.ir.bytecode import ALIASES, OPCODES, Opcode, OpFamily, OpInfo
from fusionlab.runtime.check import ULPS
from fusionlab.ir.opcodes import FAMILIES, opcode_of_ufunc

PACKAGE = Path(opcodes.__file__).resolve().parent.parent   # fusionlab/
DTYPES = ("float32", "float64", "int64", "bool")
ELEMENTWISE = sorted(OpFamily.ELEMENTWISE, key=lambda op: op.name)
#: the reductions and scans of a ufunc (arg reductions: tests/test_argreductions.py)
REDUCING = sorted(OpFamily.REDUCTION - OpFamily.ARG_REDUCTION | OpFamily.SCAN, key=lambda op: op.name)
#: results that are one of two equal operands: the sign of a zero is unspecified (IEEE 754
#: maxNum; NumPy's SIMD loops return the second operand, its scalar loops and Numba the first)
SIGNLESS_ZERO = frozenset({Opcode.MAXIMUM, Opcode.MINIMUM, Opcode.FMAX, Opcode.FMIN, Opcode.MAXIMUM_REDUCE,
                           Opcode.MINIMUM_REDUCE, Opcode.MAXIMUM_ACCUMULATE, Opcode.MINIMUM_ACCUMULATE})


# --------------------------------------------------------------------------- coverage and families


def test_the_table_has_one_row_per_opcode():
    assert list(OPCODES) == list(Opcode)
    assert all(isinstance(row, OpInfo) and row.opcode is op for op, row in OPCODES.items())
    rows = list(OPCODES.values())
    with pytest.raises(AssertionError, match="ADD has two rows"):
        opcodes._index(rows + [OPCODES[Opcode.ADD]])
    with pytest.raises(AssertionError, match="no row for SYNC"):
        opcodes._index(rows[:-1])
    with pytest.raises(TypeError):
        OPCODES[Opcode.ADD] = OPCODES[Opcode.SUBTRACT]   # type: ignore[index]


def test_families_from_the_table_are_opfamilys():
    by_family = {name: frozenset(op for op, row in OPCODES.items() if row.family == name) for name in FAMILIES}
    assert frozenset().union(*by_family.values()) == frozenset(Opcode)
    for name in ("unary", "binary", "ternary", "copy", "reduction", "scan", "generator", "filter", "gather",
                 "contraction", "opaque", "system"):
        attr = {"ternary": "TERNARY", "contraction": "CONTRACTION"}.get(name, name.upper())
        assert getattr(OpFamily, attr) == by_family[name], name
    assert OpFamily.ELEMENTWISE == by_family["unary"] | by_family["binary"] | by_family["ternary"] | by_family["copy"]
    assert OpFamily.COMPUTE == frozenset(Opcode) - by_family["system"]


def test_the_table_agrees_with_numpy():
    """Independent oracles: NumPy's ufuncs say which opcodes are unary and binary, how many
    inputs they take and which reductions have which identity."""
    ufuncs = {op for op in Opcode if "." not in op.value and isinstance(getattr(np, op.value, None), np.ufunc)}
    assert OpFamily.UNARY == {op for op in ufuncs if op.ufunc.nin == 1}
    assert OpFamily.BINARY == {op for op in ufuncs if op.ufunc.nin == 2}
    assert OpFamily.REDUCTION == {op for op in Opcode if op.name.endswith("_REDUCE")}
    assert OpFamily.SCAN == {op for op in Opcode if op.name.endswith("_ACCUMULATE")}
    for op in OpFamily.UNARY | OpFamily.BINARY:
        info = op.info
        assert info.arity == op.ufunc.nin and info.numpy is op.ufunc and info.numba is not None, op
        assert opcode_of_ufunc(op.ufunc.__name__, "__call__") is op
    for op in OpFamily.ARG_REDUCTION:   # np.argmin, np.argmax: functions, not ufunc methods
        assert op.info.numpy is getattr(np, op.value) and opcode_of_ufunc(op.value, "reduce") is None
        assert dict(op.info.attributes).keys() == {"axis"} and op.info.arity == 1 and op.info.combine is None
    assert OpFamily.ARG_REDUCTION == {Opcode.ARGMIN_REDUCE, Opcode.ARGMAX_REDUCE}
    for op in OpFamily.REDUCTION - OpFamily.ARG_REDUCTION | OpFamily.SCAN:
        method = "reduce" if op in OpFamily.REDUCTION else "accumulate"
        assert op.info.numpy == getattr(op.ufunc, method) and opcode_of_ufunc(op.ufunc.__name__, method) is op
        assert dict(op.info.attributes).keys() == {"axis"} and op.info.arity == 1
    for op in OpFamily.REDUCTION - OpFamily.ARG_REDUCTION:
        if op.ufunc.identity is not None:
            assert op.info.identity == op.ufunc.identity and type(op.info.identity) is type(op.ufunc.identity), op
        else:   # max and min: no identity in NumPy, the extremes of the order
            assert math.isinf(op.info.identity), op
    for op in set(Opcode) - OpFamily.ELEMENTWISE:
        assert op.info.numba is None, op   # codegen writes their code itself
    for name, op in [("true_divide", Opcode.DIVIDE), ("abs", Opcode.ABSOLUTE), ("mod", Opcode.REMAINDER)]:
        assert opcode_of_ufunc(name, "__call__") is op
    assert opcode_of_ufunc("add", "at") is None and opcode_of_ufunc("matmul", "__call__") is None
    assert opcode_of_ufunc("subtract", "reduce") is None   # no SUBTRACT_REDUCE: capture runs it with NumPy


def test_aliases_parse_to_their_opcode():
    from fusionlab import parse

    assert ALIASES["MUL"] is Opcode.MULTIPLY and ALIASES["CUMSUM"] is Opcode.ADD_ACCUMULATE
    for alias, op in ALIASES.items():
        assert alias not in Opcode.__members__, alias
        if op.info.family == "binary":
            p = parse(f"ARRAY A float64[4]\n{alias} A, A, 2")
            assert p[0].opcode is op


def test_attributes_are_checked_from_the_table():
    from fusionlab import parse
    from fusionlab.ir.text import BytecodeError as ProgramError   # the parser's error, with the line

    assert parse("ARRAY A float64[4]\nRANGE A, start=1, step=2, stop=7")[0].attr("stop") == 7
    with pytest.raises(ProgramError, match="RANGE does not take axis="):
        parse("ARRAY A float64[4]\nRANGE A, axis=0")
    with pytest.raises(ProgramError, match="ADD_REDUCE does not take step="):
        parse("ARRAY A float64[4]\nARRAY s float64[]\nADD_REDUCE s, A, step=1")
    with pytest.raises(ProgramError, match="WHERE takes 3 input operand"):
        parse("ARRAY A float64[4]\nWHERE A, A, A")
    for op, row in OPCODES.items():
        assert all(isinstance(k, str) and len(meaning) > 10 for k, meaning in row.attributes), op


def test_time_model_classes_come_from_the_table():
    from fusionlab.costs.timemodel import FAMILIES as TIME_CLASSES, opcode_family

    for op, row in OPCODES.items():
        assert opcode_family(op) == row.cost and set(row.cost) <= set(TIME_CLASSES), op


# --------------------------------------------------------------------------- differential: element-wise


def _samples(dtype: str) -> list[Any]:
    if dtype == "bool":
        return [False, True]
    if dtype == "int64":
        # negatives for floor_divide and remainder, 0 divisors (NumPy gives 0), -1 with the
        # most negative value (NumPy wraps), shifts past the width
        return [-2**63, -(2**40) - 3, -7, -3, -2, -1, 0, 1, 2, 3, 7, 63, 64, 2**40 + 5, 2**63 - 1]
    info = np.finfo(dtype)
    return [-np.inf, -7.5, -3.0, -2.0, -1.0, -0.5, -0.0, 0.0, float(info.smallest_subnormal), 0.25, 0.5, 1.0,
            2.0, 3.0, 7.5, 1e30, float(info.max), np.inf, np.nan]


def _loop(op: Opcode, dtype: str) -> tuple[np.dtype, ...] | None:
    """NumPy's loop for ``op`` on arrays of ``dtype`` (WHERE: a bool condition), or None
    when NumPy has none or one Numba does not compute as NumPy (float16)."""
    if op is Opcode.WHERE:
        return (np.dtype(bool), np.dtype(dtype), np.dtype(dtype), np.dtype(dtype))
    if op is Opcode.COPY:
        return (np.dtype(dtype), np.dtype(dtype))
    try:
        loop = op.ufunc.resolve_dtypes((np.dtype(dtype),) * op.ufunc.nin + (None,))
    except TypeError:
        return None
    return None if any(d.kind not in "biuf" or d.itemsize < 4 and d.kind == "f" for d in loop) else tuple(loop)


def _operands(op: Opcode, dtype: str, loop: tuple[np.dtype, ...]) -> list[np.ndarray]:
    """Every combination of the dtype's samples, as arrays of the loop's input dtypes."""
    xs = _samples(dtype)
    arity = op.info.arity
    if op is Opcode.WHERE:
        combos = [(c,) + pair for c in (True, False) for pair in itertools.product(xs, repeat=2)]
    else:
        combos = list(itertools.product(xs, repeat=arity))
    with np.errstate(all="ignore"):
        return [np.array([c[k] for c in combos], dtype=dtype).astype(loop[k]) for k in range(arity)]


def _numpy(op: Opcode, args: list[np.ndarray], loop: tuple[np.dtype, ...]) -> np.ndarray | None:
    """The table's NumPy function on ``args`` in the loop, or None when NumPy refuses the
    values (integers to negative integer powers raise)."""
    fn = op.info.numpy
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            if op in OpFamily.UNARY | OpFamily.BINARY:
                return fn(*args, signature=loop)
            return np.asarray(fn(*args), dtype=loop[-1])
        except ValueError:
            return None


def _cases(dtype: str) -> list[tuple[Opcode, tuple[np.dtype, ...], list[np.ndarray], np.ndarray]]:
    """(opcode, NumPy's loop, operands, NumPy's result) for each element-wise opcode NumPy
    has a loop for on ``dtype``; all operands repeated to one length (one kernel index)."""
    found = []
    for op in ELEMENTWISE:
        loop = _loop(op, dtype)
        if loop is None:
            continue
        args = _operands(op, dtype, loop)
        if op is Opcode.POWER and loop[1].kind in "iu":
            # NumPy refuses negative integer exponents (at capture: no kernel sees one)
            keep = args[1] >= 0
            args = [a[keep] for a in args]
        found.append((op, loop, args))
    n = max(len(args[0]) for _, _, args in found)
    out = []
    for op, loop, args in found:
        args = [np.resize(a, n) for a in args]
        want = _numpy(op, args, loop)
        assert want is not None, (op, dtype)
        out.append((op, loop, args, want))
    return out


def test_every_elementwise_opcode_is_compared():
    covered = {op for dtype in DTYPES for op, *_ in _cases(dtype)}
    assert covered == OpFamily.ELEMENTWISE


def test_kernels_take_the_tables_expressions():
    """The table's fixes reach the kernels: shifts past the width, a float remainder's signed
    zero and the sign of -0.0, through codegen and the Numba backend, equal NumPy."""
    from fusionlab import parse
    from fusionlab.backend.numba.plan import plan, run_plan
    from fusionlab.runtime.reference import Externals, Storage
    from test_numba import CACHE

    n = 8
    program = parse(f"ARRAY A int64[{n}]\nARRAY B int64[{n}]\nARRAY X float64[{n}]\nARRAY Y float64[{n}]\n"
                    f"ARRAY L int64[{n}]\nARRAY R int64[{n}]\nARRAY M float64[{n}]\nARRAY S float32[{n}]\n"
                    "LEFT_SHIFT L, A, B\nRIGHT_SHIFT R, A, B\nREMAINDER M, X, Y\nSIGN S, Y\n"
                    "SYNC L\nSYNC R\nSYNC M\nSYNC S\n")
    inputs = {"A": np.array([1, -5, 3, -2**63, 7, -1, 2**40, 9]), "B": np.array([64, 64, 70, 63, -1, 100, 3, 0]),
              "X": np.array([-3.0, 3.0, -0.0, 7.5, -7.5, 1.0, np.inf, 2.0]),
              "Y": np.array([-3.0, -1.5, -0.0, 2.5, -2.5, np.nan, 2.0, -0.0])}
    p = plan(program, [list(range(len(program)))], min_size=0)
    assert p.blocks[0].kernel is not None, p.blocks[0].reason
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        got = run_plan(p, Storage(inputs), Externals(), CACHE)
        want = {"L": np.left_shift(inputs["A"], inputs["B"]), "R": np.right_shift(inputs["A"], inputs["B"]),
                "M": np.remainder(inputs["X"], inputs["Y"]), "S": np.sign(inputs["Y"]).astype(np.float32)}
    for name, w in want.items():
        assert got[name].dtype == w.dtype and _same(got[name], w, 0).all(), (name, got[name], w)


INTEGERS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
#: exponents around Numba's switch to floating point (over 2**16) and the widths' limits;
#: 2**32 - 1 is the draw that failed test_dtypes (int8 ** uint32(4294967295): Numba gave -2**63)
BIG_EXPONENTS = (0, 1, 2, 3, 65535, 65536, 65537, 2**31 - 1, 2**32 - 1, 2**32 + 3, 2**63 - 1, 2**64 - 1)


def _integer_power_program() -> tuple[Any, dict[str, np.ndarray], dict[str, np.ndarray], int]:
    """One program of POWER C_k, A_k, B_k for every pair of integer dtypes NumPy computes in
    an integer loop (int64 with uint64 is a float64 power: not here), plus literal exponents;
    the inputs (bases 0, 1, -1, 2, 3, -3 and the extremes, times every exponent the
    exponent's dtype holds) and NumPy's results."""
    lines, inputs, want, cases = [], {}, {}, []
    for k, (a, b) in enumerate(itertools.product(INTEGERS, repeat=2)):
        if np.result_type(a, b).kind in "iu":
            cases.append((k, a, b))
    pairs = []
    for k, a, b in cases:
        ia, ib = np.iinfo(a), np.iinfo(b)
        bases = sorted({x for x in (0, 1, -1, 2, 3, -3, int(ia.min), int(ia.max)) if ia.min <= x <= ia.max})
        exps = [e for e in BIG_EXPONENTS + (int(ib.max),) if e <= ib.max]
        pairs.append((k, a, b, [(x, e) for x in bases for e in exps]))
    n = max(len(p) for *_, p in pairs)
    for k, a, b, values in pairs:
        out = np.result_type(a, b).name
        lines += [f"ARRAY A{k} {a}[{n}]", f"ARRAY B{k} {b}[{n}]", f"ARRAY C{k} {out}[{n}]", f"POWER C{k}, A{k}, B{k}"]
        inputs[f"A{k}"] = np.resize(np.array([x for x, _ in values], dtype=a), n)
        inputs[f"B{k}"] = np.resize(np.array([e for _, e in values], dtype=b), n)
        want[f"C{k}"] = np.power(inputs[f"A{k}"], inputs[f"B{k}"])
    literals = [("int32", 65537), ("int32", 2**31 - 1), ("int64", 2**63 - 1), ("uint32", 2**32 - 1),
                ("uint64", 2**64 - 1)]
    for j, (a, e) in enumerate(literals):
        base = np.resize(np.array([0, 1, 2, 3, -3, -1, -2, np.iinfo(a).min], dtype=np.int64).astype(a), n)
        lines += [f"ARRAY L{j} {a}[{n}]", f"ARRAY M{j} {a}[{n}]", f"POWER M{j}, L{j}, {e}"]
        inputs[f"L{j}"], want[f"M{j}"] = base, np.power(base, e)   # a Python int: weak (NEP 50)
    lines += [f"SYNC {name}" for name in want]
    from fusionlab import parse

    return parse("\n".join(lines) + "\n"), inputs, want, len(cases)


def test_integer_power_is_numpys_for_every_exponent():
    """Integer POWER wraps as NumPy's does for every exponent (Numba's ``**`` computes
    exponents over 2**16 with ``math.pow``): every pair of integer dtypes with an integer
    loop, signed, unsigned and mixed, in one kernel codegen writes (serial: it compiles in
    a quarter of the parallel one's time; the captured cell below runs the planned kernels);
    values and dtypes exact."""
    from fusionlab.backend.numba.codegen import get_kernel
    from test_numba import CACHE

    program, inputs, want, pairs = _integer_power_program()
    assert pairs == 56 and want["C0"].dtype == np.int8 and want["C6"].dtype == np.int64   # int8 ** uint32
    spec = get_kernel(program, list(range(len(program))), parallel=False)
    assert spec.source.count("def _ipow(") == 1 and " ** " not in spec.source
    arrays = {b.name: inputs.get(b.name, np.zeros(b.shape, b.dtype)) for b in program.bases}
    CACHE.get(spec)(*[arrays[v.base.name] for v in spec.arguments], *spec.scalar_arguments)
    bad = [(name, arrays[name], w) for name, w in want.items()
           if arrays[name].dtype != w.dtype or not np.array_equal(arrays[name], w)]
    assert not bad, bad[:2]


def test_a_captured_cells_integer_powers_are_numpys():
    """A captured cell's integer powers (the failing draw int8 ** uint32(4294967295), a
    literal exponent over 2**16, uint64's largest) run as kernels and equal plain NumPy."""
    from fusionlab.capture import capture
    from fusionlab.pipeline import run
    from test_numba import CACHE

    src = ("import numpy as np\n"
           "a = np.array([0, 1, -1, 2, 3, -3, -128, 127], dtype=np.int8)\n"
           "e = np.array([4294967295, 65537, 65536, 2**31 - 1, 2**32 - 3, 65535, 3, 7], dtype=np.uint32)\n"
           "b = a ** e\n"
           "c = (a.astype(np.int64) + 1) ** 65537\n"
           "d = np.arange(8, dtype=np.uint64) ** np.uint64(2**64 - 1)\n")
    plain: dict[str, Any] = {}
    exec(src, plain)
    result = run(capture(src, {}), check=True, min_size=0, cache=CACHE)
    assert result.kernels >= 1 and not result.fallbacks and not result.check.mismatches, result.check
    for name in "bcd":
        got = result.values[name]
        assert got.dtype == plain[name].dtype and np.array_equal(got, plain[name]), (name, got, plain[name])


def _scalar_kernel(cases: list[tuple[Opcode, tuple[np.dtype, ...], list[np.ndarray], np.ndarray]]) -> Any:
    """One njit function computing every case's table expression at element ``i``: its
    return type is the tuple of the expressions' Numba types (what a kernel's local holds)."""
    params, exprs = [], []
    for k, (op, loop, args, _) in enumerate(cases):
        names = [f"x{k}_{j}" for j in range(len(args))]
        params += names
        first = loop[0] if op in OpFamily.UNARY | OpFamily.BINARY else None   # as codegen: loop_dtypes(ins)[0]
        exprs.append(op.info.scalar([f"{n}[i]" for n in names], first))
    helpers = {h for op, *_ in cases for h in op.info.helpers_in("\n".join(exprs))}   # as codegen's module
    # nested tuples of at most 16: Numba refuses a tuple display long enough for Python to
    # build it as a list first
    groups = [", ".join(exprs[k:k + 16]) + "," for k in range(0, len(exprs), 16)]
    source = f"def table_kernel(i, {', '.join(params)}):\n    return ({', '.join(f'({g})' for g in groups)},)\n"
    namespace: dict[str, Any] = {"np": np, "numba": numba}
    exec(compile("\n\n".join(sorted(helpers) + [source]), "<table kernel>", "exec"), namespace)
    # codegen's kernels use NumPy's error model: division by zero gives inf, nan or 0
    return numba.njit(error_model="numpy")(namespace["table_kernel"])


def _same(got: np.ndarray, want: np.ndarray, ulps: int, signed_zero: bool = True) -> np.ndarray:
    """Element-wise: equal (nan with nan, -0.0 apart from 0.0 unless not ``signed_zero``) or
    within ``ulps`` units in the last place (0: bit for bit)."""
    if want.dtype.kind != "f":
        return got == want
    both_nan = np.isnan(got) & np.isnan(want)
    equal = (got == want) & ((np.signbit(got) == np.signbit(want)) | (not signed_zero))
    if ulps:
        with np.errstate(all="ignore"):
            close = np.isfinite(want) & (np.abs(got - want) <= ulps * np.spacing(np.abs(want)))
        equal |= close
    return both_nan | equal


@pytest.mark.parametrize("dtype", DTYPES)
def test_numba_expressions_equal_numpy(dtype):
    """Each element-wise opcode's table expression, in one compiled kernel per dtype, gives
    NumPy's values: bit for bit, but for transcendental functions (a few units in the last
    place: Numba calls the C library, NumPy its own vectorised code). Where NumPy's result is
    float64 the expression's own type must be float64 (codegen stores it unconverted);
    elsewhere codegen converts it to NumPy's type, and so does this test."""
    cases = _cases(dtype)
    assert len(cases) >= {"bool": 35, "int64": 50}.get(dtype, 50), [op.name for op, *_ in cases]
    kernel = _scalar_kernel(cases)
    flat = [a for _, _, args, _ in cases for a in args]
    rows = [sum(kernel(i, *flat), ()) for i in range(len(flat[0]))]
    types = [t for group in kernel.nopython_signatures[0].return_type for t in group]
    failures = []
    for k, (op, loop, args, want) in enumerate(cases):
        raw = as_dtype(types[k])
        if want.dtype == np.float64 and raw != np.float64:
            failures.append(f"{op.name}: the expression is {raw}, NumPy's result float64")
        got = np.array([row[k] for row in rows], dtype=raw)
        with np.errstate(all="ignore"):
            got = got.astype(want.dtype)
        ulps = ULPS if set(op.info.cost) & {"exp", "log"} else 0
        ok = _same(got, want, ulps, op not in SIGNLESS_ZERO)
        if not ok.all():
            bad = np.flatnonzero(~ok)[:4]
            failures.append(f"{op.name}{[tuple(a[j] for a in args) for j in bad]}: got {got[bad]}, NumPy {want[bad]}")
    assert not failures, "\n".join(failures)
    assert not failures, "\n".join(failures)


# --------------------------------------------------------------------------- differential: reductions and scans


def _np_type(dtype: np.dtype) -> str:
    return "np.bool_" if dtype.kind == "b" else f"np.{dtype.name}"


def _identity_source(op: Opcode, dtype: np.dtype) -> str:
    value = op.info.identity_of(dtype)
    text = ("np.inf" if value > 0 else "-np.inf") if isinstance(value, float) and math.isinf(value) else repr(value)
    return f"{_np_type(dtype)}({text})"


def _fold_source(k: int, op: Opcode, dtype: np.dtype) -> list[str]:
    """Lines folding ``x{k}`` with the table's identity and combine (a scan: those of its
    reduction, every running value stored), each step in ``dtype`` as a kernel's is."""
    r = op.combining
    t, acc = _np_type(dtype), f"acc{k}"
    lines = [f"    {acc} = {_identity_source(r, dtype)}", f"    run{k} = np.empty(x{k}.shape[0], dtype={t})",
             f"    for j in range(x{k}.shape[0]):",
             f"        {acc} = {t}(" + r.info.combine.format(a=acc, b=f"x{k}[j]") + ")",
             f"        run{k}[j] = {acc}"]
    parts = f"x{k}.{r.info.partials}()" if op in OpFamily.REDUCTION else acc
    return lines + [f"    part{k} = {t}({parts})"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_reductions_and_scans_fold_as_numpy(dtype):
    """A reduction's identity, then its combine element by element, ends at NumPy's
    ``reduce``, and its partials method (the combination of per-chunk results) gives the
    same; a scan's running values, from its reduction's identity and combine, are NumPy's
    ``accumulate``. Sample values whose sums are exact in any order: bit for bit."""
    xs = [v for v in _samples(dtype) if not (isinstance(v, float) and (math.isnan(v) or abs(v) > 1e3))]
    xs = xs + xs[::-1][:5]
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        source = np.array(xs, dtype=dtype)
        wants = [(op, np.asarray(op.info.numpy(source))) for op in REDUCING]
    # each in NumPy's result dtype, as capture records the output (and casts the input first)
    args = [source.astype(w.dtype) for _, w in wants]
    body = [line for k, (op, w) in enumerate(wants) for line in _fold_source(k, op, w.dtype)]
    names = ", ".join(f"x{k}" for k in range(len(wants)))
    returns = ", ".join(f"acc{k}, run{k}, part{k}" for k in range(len(wants)))
    text = f"def fold_kernel({names}):\n" + "\n".join(body) + f"\n    return ({returns},)\n"
    namespace: dict[str, Any] = {"np": np}
    exec(compile(text, "<fold kernel>", "exec"), namespace)
    with np.errstate(all="ignore"):
        got = numba.njit(error_model="numpy")(namespace["fold_kernel"])(*args)
    failures = []
    for k, (op, want) in enumerate(wants):
        acc, run, part = got[3 * k: 3 * k + 3]
        if op in OpFamily.REDUCTION:
            checks = [("fold", np.asarray(acc, dtype=want.dtype).reshape(1), want.reshape(1)),
                      ("partials", np.asarray(part, dtype=want.dtype).reshape(1), want.reshape(1))]
        else:
            checks = [("running values", run, want)]
        for what, g, w in checks:
            if g.dtype != w.dtype or not _same(g, w, 0, op not in SIGNLESS_ZERO).all():
                failures.append(f"{op.name} {what}: {g} ({g.dtype}), NumPy {w} ({w.dtype})")
    assert not failures, "\n".join(failures)


def test_identities_are_neutral_in_every_dtype():
    """NumPy's own check of the table's identities: ``ufunc(identity, x) == x``."""
    for op in OpFamily.REDUCTION - OpFamily.ARG_REDUCTION:
        for dtype in ("bool", "int8", "uint16", "int64", "float32", "float64"):
            xs = np.array([v for v in _samples("float64") if not math.isnan(v) and abs(v) < 1e3]) \
                if dtype != "bool" else np.array([False, True])
            ident = np.array(op.info.identity_of(dtype)).astype(dtype)
            with np.errstate(all="ignore"):
                xs = xs.astype(dtype)
                got = op.ufunc(ident, xs).astype(np.result_type(dtype, op.ufunc(xs, xs).dtype))
                want = xs.astype(got.dtype) if op not in (Opcode.LOGICAL_AND_REDUCE, Opcode.LOGICAL_OR_REDUCE) \
                    else xs.astype(bool)
            assert np.array_equal(got, want), (op, dtype, got, want)


# --------------------------------------------------------------------------- one place


def _is_opcode(node: ast.AST | None) -> bool:
    """``Opcode.X`` (or ``bytecode.Opcode.X``)."""
    return isinstance(node, ast.Attribute) and (
        isinstance(node.value, ast.Name) and node.value.id == "Opcode"
        or isinstance(node.value, ast.Attribute) and node.value.attr == "Opcode")


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | \
        {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}


def opcode_mappings(source: str) -> list[tuple[int, str]]:
    """Where a module maps opcodes to facts: a dict literal with two or more ``Opcode.X``
    keys or values (anywhere), and, at module level, a dict built over Opcode or OpFamily, an
    item assigned at ``[Opcode.X]``, or a ``dict[Opcode, ...]`` / ``dict[..., Opcode]``.

    >>> opcode_mappings("T = {Opcode.ADD: '+', Opcode.SUBTRACT: '-'}")
    [(1, 'dict literal over opcodes')]
    >>> opcode_mappings("def f(op):\\n    return op in (Opcode.ADD, Opcode.SUBTRACT)")
    []
    """
    tree = ast.parse(source)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Dict) and (sum(map(_is_opcode, node.keys)) >= 2 or sum(map(_is_opcode, node.values)) >= 2):
            found.append((node.lineno, "dict literal over opcodes"))
    for stmt in tree.body:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target] \
            if isinstance(stmt, (ast.AnnAssign, ast.AugAssign)) else []
        value = getattr(stmt, "value", None)
        if isinstance(value, ast.DictComp) and any(_names(g.iter) & {"Opcode", "OpFamily", "OPCODES"}
                                                   for g in value.generators):
            found.append((stmt.lineno, "dict built over opcodes"))
        if any(isinstance(t, ast.Subscript) and _is_opcode(t.slice) for t in targets):
            found.append((stmt.lineno, "item assigned at an opcode"))
        ann = getattr(stmt, "annotation", None)
        if ann is not None and isinstance(ann, ast.Subscript) and _names(ann.value) & {"dict", "Dict", "Mapping"} \
                and "Opcode" in _names(ann.slice):
            found.append((stmt.lineno, "opcode mapping annotation"))
        if isinstance(stmt, (ast.For,)) and "Opcode" in _names(stmt.iter) and any(
                isinstance(t, ast.Subscript) for s in ast.walk(stmt) if isinstance(s, ast.Assign) for t in s.targets):
            found.append((stmt.lineno, "items assigned in a loop over opcodes"))
    return sorted(found)


def test_no_module_but_the_tables_maps_opcodes_to_facts():
    """Adding an opcode is one row of ``fusionlab/ir/opcodes.py``: no other module keeps its own
    table from opcodes to facts (the checker flags the five such tables fusionlab had)."""
    table = PACKAGE / "ir/opcodes.py"
    found = {str(path.relative_to(PACKAGE)): got for path in sorted(PACKAGE.rglob("*.py")) if path != table
             for got in [opcode_mappings(path.read_text())] if got}
    assert found == {}
    assert opcode_mappings(table.read_text()) != [], "the checker finds the table's own rows"


@pytest.mark.parametrize("snippet", [
    "_OPERATORS = {Opcode.ADD: '+', Opcode.SUBTRACT: '-'}",
    "_REDUCE = {'add': Opcode.ADD_REDUCE, 'multiply': Opcode.MULTIPLY_REDUCE}",
    "_UFUNCS = {op.value: op for op in OpFamily.UNARY | OpFamily.BINARY}",
    "_FAMILY_OF: dict[Opcode, tuple[str, ...]] = {}",
    "_FAMILY_OF[Opcode.POWER] = ('exp', 'log')",
    "for _op in (Opcode.EXP, Opcode.SIN):\n    _FAMILY_OF[_op] = ('exp',)",
    "def f(a, op):\n    return {Opcode.ADD_REDUCE: f'{a}.sum()', Opcode.MULTIPLY_REDUCE: f'{a}.prod()'}[op]",
])
def test_the_checker_finds_the_old_tables(snippet):
    assert opcode_mappings(snippet), snippet
