"""Contractions end to end (issue 15): ``@``, np.matmul, np.dot, np.inner, np.outer and
np.einsum captured as CONTRACT, the WSP graph's epilogue rules, the kernels (BLAS tiles and
loop nests) and a lone contraction's library kernel, all against plain NumPy.

Tolerance. A fused kernel sums a contraction's products in another order than NumPy (a loop
nest with reassociation, or BLAS on tiles of rows instead of the whole product). For K
products the rounding error of any order is at most ``K * eps * sum_k |a_k| |b_k|`` (the
standard bound for recursive summation, Higham, *Accuracy and Stability*, eq. 4.4, with
``gamma_K ~ K eps``); both NumPy's and the kernel's results are within it of the exact sum,
so they differ by at most twice that: :func:`_assert_close` checks each element against it.
Integer contractions are exact in every order (wrapping sums commute): compared bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from fusionlab import BytecodeError, parse
from fusionlab.ir.bytecode import Opcode, ProgramError
from fusionlab.capture import capture
from fusionlab.backend.numba.codegen import Unsupported, get_kernel
from fusionlab.costs import get_cost_model
from fusionlab.backend.numba.plan import KernelCache, plan, run_plan
from fusionlab.pipeline.runner import run
from fusionlab.partition import partition
from fusionlab.analysis.wsp import Conflict, WSPGraph
from test_numba import RecordingStorage

CACHE = KernelCache()


def _plain(source: str) -> dict:
    ns: dict = {}
    exec(source, ns)
    return ns


def _contracts(c) -> list:
    return [i for i in c.program if i.opcode is Opcode.CONTRACT]


def _assert_close(got, want, bound_of) -> None:
    """``got`` equals ``want`` exactly for integers, else within the summation bound."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype
    if want.dtype.kind in "iu":
        np.testing.assert_array_equal(got, want)
        return
    k, magnitude = bound_of
    bound = 2 * k * np.finfo(want.dtype).eps * magnitude + np.finfo(want.dtype).tiny
    assert np.all(np.abs(got.astype(np.float64) - want) <= bound), np.max(np.abs(got - want) - bound)


# --------------------------------------------------------------------------- capture forms

_SETUP = """import numpy as np
rng = np.random.default_rng(0)
A = rng.random((5, 4)); B = rng.random((4, 3)); v = rng.random(4); u = rng.random(3)
T = rng.random((2, 5, 4)); S = rng.random((2, 4, 3)); I = rng.integers(-5, 5, (4, 3))
assert type(np.ascontiguousarray(A)) is np.ndarray   # under capture too: a plain array
"""

#: (expression, subscripts, via): each one CONTRACT whose value is NumPy's bit for bit
FORMS = [
    ("A @ B", "ij,jk->ik", "matmul"),
    ("A.T.T @ B[:, ::-1]", "ij,jk->ik", "matmul"),
    ("np.matmul(A, B)", "ij,jk->ik", "matmul"),
    ("B.T @ A.T", "ij,jk->ik", "matmul"),
    ("A @ v", "ij,j->i", "matmul"),
    ("v @ B", "i,ij->j", "matmul"),
    ("v @ v", "i,i->", "matmul"),
    ("T @ S", "ijk,ikl->ijl", "matmul"),
    ("T @ B", "ijk,kl->ijl", "matmul"),
    ("v @ S", "i,jik->jk", "matmul"),
    ("np.ascontiguousarray(A) @ B", "ij,jk->ik", "matmul"),   # a plain ndarray on the left
    ("B.T @ np.ascontiguousarray(A).T", "ij,jk->ik", "matmul"),   # ... and on the right
    ("np.matmul(np.ascontiguousarray(A), B)", "ij,jk->ik", "matmul"),
    ("np.dot(A, B)", "ij,jk->ik", "dot"),
    ("np.dot(T, B)", "ijk,kl->ijl", "dot"),
    ("np.dot(T, S)", "ijk,lkm->ijlm", "dot"),
    ("A.dot(v)", "ij,j->i", "dot"),
    ("np.dot(A, I)", "ij,jk->ik", "dot"),          # float64 by int64: float64
    ("np.inner(A, A)", "ij,kj->ik", "inner"),
    ("np.outer(v, u)", "i,j->ij", "outer"),
    ("np.outer(A, u)", "i,j->ij", "outer"),         # NumPy flattens A: a view here
    ("np.einsum('ij,jk->ik', A, B)", "ij,jk->ik", "einsum"),
    ("np.einsum('ij,kj', A, B.T)", "ij,kj->ik", "einsum"),
    ("np.einsum('...ij,...jk', T, S)", "lij,ljk->lik", "einsum"),
    ("np.einsum('bij,bjk->bik', T, S)", "bij,bjk->bik", "einsum"),
    ("np.einsum('ij,ij->', A, A)", "ij,ij->", "einsum"),
    ("np.einsum('i,j', v, u)", "i,j->ij", "einsum"),
    ("np.einsum('ij,j->', A, v)", "ij,j->", "einsum"),
]


@pytest.mark.parametrize("expr, subscripts, via", FORMS)
def test_each_form_is_one_contract_with_numpys_value(expr, subscripts, via):
    source = _SETUP + f"Y = {expr}\n"
    c = capture(source)
    (ins,) = _contracts(c)
    assert (ins.attr("subscripts"), ins.attr("via")) == (subscripts, via)
    assert not [i for i in c.program if i.opcode is Opcode.OPAQUE]
    want = _plain(source)["Y"]
    got = c.namespace["Y"]
    assert type(got) is type(want) and np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_array_equal(got, want)   # NumPy's own call, the same bits
    # the reference executor replays the same NumPy call: the same bits again
    r = run(c, "singleton", check=True, min_size=0, cache=CACHE)
    assert r.max_abs_error == 0.0 and r.check.ok


def test_operands_are_views_not_copies():
    c = capture(_SETUP + "Y = A.T[::-1] @ A[:, ::2]\n")
    (ins,) = _contracts(c)
    a, b = ins.views_in
    assert a.base.name == b.base.name == "A"
    assert a.strides == (-1, 4) and b.strides == (4, 2)
    assert not [i for i in c.program if i.opcode is Opcode.COPY]


#: forms with no exact CONTRACT: recorded as OPAQUE, exactly as before issue 15
OPAQUE_FORMS = [
    "np.einsum('ii,ij->j', A[:4], B)",            # a repeated letter (a diagonal)
    "np.einsum('ij,jk,kl->il', A, B, B.T)",        # three operands
    "np.einsum('ij->j', A)",                       # one operand
    "np.einsum(A, [0, 1], B, [1, 2])",             # the interleaved form
    "np.einsum('ij,jk', A, B, optimize=True)",     # other arguments
    "(A > 0.5) @ (B > 0.5)",                       # bool: NumPy's logical or of ands
    "A.astype(np.float16) @ B.astype(np.float16)",  # float16: NumPy sums in float32
    "A.astype(np.complex128) @ B",                 # complex: left to NumPy
    "np.matmul(A, B, out=np.empty((5, 3)))",       # out=
    "T @ S[:1]",                                   # a batch axis of length 1 broadcast
    "np.dot(A, 2.0)",                              # a scalar operand
]


@pytest.mark.parametrize("expr", OPAQUE_FORMS)
def test_forms_without_an_exact_contract_stay_opaque(expr):
    source = _SETUP + f"Y = {expr}\n"
    c = capture(source)
    assert not _contracts(c)
    assert [i for i in c.program if i.opcode is Opcode.OPAQUE]
    np.testing.assert_array_equal(c.namespace["Y"], _plain(source)["Y"])


def test_numpys_errors_are_the_users():
    with pytest.raises(Exception, match="ValueError: matmul: Input operand 1 has a mismatch"):
        capture(_SETUP + "Y = A @ A\n")


def test_via_must_match_its_functions_subscripts():
    text = "ARRAY A float64[3,4]\nARRAY B float64[4,5]\nARRAY C float64[3,5]\n"
    assert parse(text + 'CONTRACT C, A, B, subscripts="ij,jk->ik", via="dot"')
    with pytest.raises((ProgramError, BytecodeError), match="computes subscripts='ij,jk->ik'"):
        parse(text.replace("[3,5]", "[5,3]") + 'CONTRACT C, A, B, subscripts="ij,jk->ki", via="matmul"')
    with pytest.raises((ProgramError, BytecodeError), match="one of"):
        parse(text + 'CONTRACT C, A, B, subscripts="ij,jk->ik", via="tensordot"')


# --------------------------------------------------------------------------- fusion rules

_RULES = """
ARRAY X float64[4,4]
ARRAY W float64[4,4]
ARRAY P float64[4,4]
ARRAY T float64[4,4]
ARRAY U float64[4,4]
ARRAY s float64[]
ARRAY Q float64[4,4]
ARRAY R float64[4,4]
MULTIPLY P, X, 2
CONTRACT T, P, W, subscripts="ij,jk->ik"
ADD U, T, X
ADD_REDUCE s, U
CONTRACT Q, U, W, subscripts="ij,jk->ik"
COPY W, 0
ADD R, T[::-1], 1
"""


def test_each_refusal_has_its_conflict():
    g = WSPGraph(parse(_RULES))
    assert g.forbidden(1, 2) is None                                    # the epilogue
    assert g.forbidden(0, 1)[0] is Conflict.CONTRACTION_PRODUCER        # computes P
    assert g.forbidden(1, 3)[0] is Conflict.CONTRACTION_EPILOGUE        # a reduction
    assert g.forbidden(1, 4)[0] is Conflict.CONTRACTION_PAIR            # another contraction
    assert g.forbidden(1, 5)[0] is Conflict.CONTRACTION_OPERAND         # writes W, read by both
    assert g.forbidden(4, 5)[0] is Conflict.CONTRACTION_OPERAND
    assert g.forbidden(1, 6)[0] is Conflict.OVERLAP                     # T through another view
    assert "computes P" in g.forbidden(0, 1)[1]
    assert all(g.explicit_mask[1] >> j & 1 for j in (0, 3, 4, 5, 6))
    # every partition algorithm keeps to them: no block holds a refused pair
    for algorithm in ("greedy", "linear", "optimal"):
        blocks = partition(parse(_RULES), algorithm).blocks
        for b in blocks:
            assert all(g.forbidden(u, v) is None for u in b for v in b), (algorithm, blocks)


def test_an_element_wise_producer_is_not_fused_into_the_contraction():
    c = capture(_SETUP + "Y = np.maximum((A * 2) @ B + u, 0)\n")
    blocks = partition(c.program, "greedy").blocks
    ops = [[c.program[i].opcode.name for i in b if c.program[i].opcode.name not in ("DEL", "SYNC")] for b in blocks]
    assert ["CONTRACT", "ADD", "MAXIMUM"] in ops and not any("MULTIPLY" in o and "CONTRACT" in o for o in ops)


# --------------------------------------------------------------------------- kernels

_DENSE = """import numpy as np
rng = np.random.default_rng(1)
x = rng.random((200, 70)); w = rng.random((70, 90)) - 0.5; b = rng.random(90) - 0.5
y = np.maximum(x @ w + b, 0)
"""


def test_relu_of_a_product_is_one_kernel_that_never_allocates_the_product():
    c = capture(_DENSE)
    p = c.program
    blocks = partition(p, "greedy").blocks
    (block,) = [b for b in blocks if any(p[i].opcode is Opcode.CONTRACT for i in b)]
    assert sorted(p[i].opcode.name for i in block if p[i].opcode.name not in ("DEL", "SYNC")) == \
        ["ADD", "CONTRACT", "MAXIMUM"]
    k = get_kernel(p, block, parallel=True)
    product = next(i for i in p if i.opcode is Opcode.CONTRACT).outputs[0].base.name
    assert product in k.contracted and "np.dot(" in k.source and k.library_blas
    storage = RecordingStorage()   # x, w and b are recorded draws: no inputs
    pl = plan(p, blocks, min_size=0)
    out = run_plan(pl, storage, c.externals, CACHE)
    assert product not in storage.allocated and "y" in storage.allocated
    want = _plain(_DENSE)
    _assert_close(out["y"], want["y"], (70, np.abs(want["x"]) @ np.abs(want["w"]) + np.abs(want["b"])))


@pytest.mark.parametrize("driver", ["python", "blocks", "numba"])
def test_dense_layer_under_every_driver(driver):
    c = capture(_DENSE)
    r = run(c, "greedy", check=True, min_size=0, driver=driver, cache=CACHE)
    want = _plain(_DENSE)
    assert not r.fallbacks and not r.library_kernels
    (fused,) = [b for p in r.plans for b in p.blocks if any(c.program[i].opcode is Opcode.CONTRACT for i in b.instructions)]
    assert fused.kernel is not None and "np.dot(" in fused.kernel.source
    _assert_close(r.values["y"], want["y"], (70, np.abs(want["x"]) @ np.abs(want["w"]) + np.abs(want["b"])))
    assert r.check.ok


def test_a_lone_contraction_is_a_library_kernel_with_numpys_bits():
    source = _SETUP + "Y = A @ B\nZ = (A @ v).sum()\n"
    c = capture(source)
    r = run(c, "greedy", check=True, min_size=0, cache=CACHE)
    assert len(r.library_kernels) == 2 and not r.fallbacks
    assert all("library kernel: a contraction alone runs as NumPy's own call (np.matmul)" in x for x in r.library_kernels)
    want = _plain(source)
    np.testing.assert_array_equal(r.values["Y"], want["Y"])   # BLAS itself: the same bits
    with pytest.raises(Unsupported, match="library kernel"):
        get_kernel(c.program, [next(i for i, ins in enumerate(c.program) if ins.opcode is Opcode.CONTRACT)])


def test_loop_nest_for_integers_and_batched_subscripts_is_exact():
    source = """import numpy as np
rng = np.random.default_rng(2)
a = rng.integers(-9, 9, (3, 6, 5)); b = rng.integers(-9, 9, (3, 4, 5))
y = np.einsum('bij,bkj->bik', a, b[:, ::-1]) * 3 - 1
"""
    c = capture(source)
    p = c.program
    (block,) = [b for b in partition(p, "greedy").blocks if any(p[i].opcode is Opcode.CONTRACT for i in b)]
    k = get_kernel(p, block, parallel=True)
    assert "np.dot" not in k.source and "for k0 in range(" in k.source and "acc" in k.source
    for driver in ("python", "blocks"):
        r = run(c, "greedy", min_size=0, driver=driver, cache=CACHE)
        np.testing.assert_array_equal(r.values["y"], _plain(source)["y"])


def test_bohrium_prices_the_fused_epilogue_without_the_product():
    p = parse("""
ARRAY X float64[8,3]
ARRAY W float64[3,5]
ARRAY b float64[5]
ARRAY T float64[8,5]
ARRAY Y float64[8,5]
CONTRACT T, X, W, subscripts="ij,jk->ik"
ADD Y, T, b
DEL T
SYNC Y
""")
    m = get_cost_model("bohrium", unit="elements")
    # each operand counted once (its reuse inside the product is the kernel's, not memory's)
    assert m.cost(p, [[0], [1], [2], [3]]) == (24 + 15 + 40) + (40 + 5 + 40)
    assert m.cost(p, [[0, 1, 2, 3]]) == 24 + 15 + 5 + 40   # T contracted away


# --------------------------------------------------------------------------- random contractions

_LETTERS = "abcd"


@st.composite
def _contractions(draw):
    """Two-operand einsum calls on views: random letters per operand (distinct within one),
    an output of distinct letters of theirs, extents 1-4, float32/float64/int64, and each
    operand a transposed, sliced or reversed view of a larger array."""
    extent = {c: draw(st.integers(1, 4)) for c in _LETTERS}
    ta = "".join(draw(st.permutations(_LETTERS))[:draw(st.integers(1, 3))])
    tb = "".join(draw(st.permutations(_LETTERS))[:draw(st.integers(1, 3))])
    union = sorted(set(ta) | set(tb))
    out = "".join(draw(st.permutations(union))[:draw(st.integers(0, len(union)))])
    dtype = draw(st.sampled_from(["float64", "float32", "int64"]))
    views = [draw(st.sampled_from(["plain", "reversed", "sliced", "transposed"])) for _ in range(2)]
    epilogue = draw(st.sampled_from(["", " * 2 + 1", " - 0.5"])) if out else ""
    if dtype == "int64" and epilogue == " - 0.5":
        epilogue = " - 1"
    return extent, (ta, tb, out), dtype, views, epilogue


def _operand_source(name: str, letters: str, extent: dict, dtype: str, view: str) -> str:
    shape = [extent[c] for c in letters]
    values = f"rng.integers(-4, 5, {tuple(shape)!r})" if dtype == "int64" else \
        f"rng.uniform(-1, 1, {tuple(shape)!r}).astype(np.{dtype})"
    if view == "reversed":
        return f"{name} = {values}.copy()[::-1]\n" if shape else f"{name} = {values}\n"
    if view == "sliced":
        big = [n + 1 for n in shape]
        return (f"{name}_big = np.zeros({tuple(big)!r}, dtype=np.{dtype})\n"
                f"{name}_big[{', '.join('1:' for _ in shape)}] = {values}\n"
                f"{name} = {name}_big[{', '.join('1:' for _ in shape)}]\n")
    if view == "transposed":   # drawn in the reversed shape, read through its transpose
        drawn = values.replace(repr(tuple(shape)), repr(tuple(shape[::-1])))
        return f"{name} = {drawn}.T\n"
    return f"{name} = {values}\n"


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(_contractions(), st.sampled_from(["greedy", "singleton", "linear"]), st.sampled_from(["python", "blocks"]))
def test_random_contractions_equal_numpy(case, algorithm, driver):
    extent, (ta, tb, out), dtype, views, epilogue = case
    source = "import numpy as np\nrng = np.random.default_rng(3)\n"
    source += _operand_source("a", ta, extent, dtype, views[0]) + _operand_source("b", tb, extent, dtype, views[1])
    source += f"y = np.einsum('{ta},{tb}->{out}', a, b){epilogue}\n"
    want = _plain(source)
    c = capture(source)
    assert len(_contracts(c)) == 1
    np.testing.assert_array_equal(c.namespace["y"], want["y"])
    r = run(c, algorithm, driver=driver, cache=CACHE)   # small: serial kernels (quicker to compile)
    k = max(1, int(np.prod([extent[x] for x in set(ta + tb) - set(out)])))
    magnitude = np.einsum(f"{ta},{tb}->{out}", np.abs(want["a"]).astype(np.float64), np.abs(want["b"]))
    _assert_close(r.values["y"], want["y"], (k, 2 * magnitude + 2))


@pytest.mark.parametrize("left, right", [
    ("X[::-1]", "W"), ("X", "W[:, ::-1]"), ("X2.T", "W"), ("X[:, 1:][:, ::-1]", "W[1:]"), ("X[::2]", "W2.T"),
])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_blas_tiles_read_any_view(left, right, dtype):
    source = f"""import numpy as np
rng = np.random.default_rng(4)
X = rng.random((150, 40)).astype(np.{dtype}); X2 = rng.random((40, 150)).astype(np.{dtype})
W = rng.random((40, 30)).astype(np.{dtype}) - 0.5; W2 = rng.random((30, 40)).astype(np.{dtype})
if {left}.shape[1] != {right}.shape[0]:
    W = rng.random(({left}.shape[1], 30)).astype(np.{dtype}) - 0.5
y = np.maximum({left} @ {right} + 0.25, 0)
"""
    c = capture(source)
    p = c.program
    (block,) = [b for b in partition(p, "greedy").blocks if any(p[i].opcode is Opcode.CONTRACT for i in b)]
    assert "np.dot(" in get_kernel(p, block).source
    want = _plain(source)
    a = eval(left, {}, want).astype(np.float64)
    b = eval(right, {}, want).astype(np.float64)
    r = run(c, "greedy", min_size=0, cache=CACHE)
    _assert_close(r.values["y"], want["y"], (a.shape[1], np.abs(a) @ np.abs(b) + 1))


@pytest.mark.parametrize("expr, row", [("a @ b", True), ("a @ a.T", False), ("np.einsum('ij,kj->ik', a, a)", False),
                                       ("np.einsum('ji,jk->ik', a, b)", True)])
def test_loop_nest_runs_innermost_the_letter_with_the_smaller_strides(expr, row):
    source = f"""import numpy as np
rng = np.random.default_rng(5)
a = rng.integers(-9, 9, (60, 60)); b = rng.integers(-9, 9, (60, 50))
y = {expr} + 1
"""
    c = capture(source)
    p = c.program
    (block,) = [bl for bl in partition(p, "greedy").blocks if any(p[i].opcode is Opcode.CONTRACT for i in bl)]
    src = get_kernel(p, block).source
    assert ("np.zeros((" in src) == row   # a row of the output per outer index, else a scalar
    r = run(c, "greedy", min_size=0, cache=CACHE)
    np.testing.assert_array_equal(r.values["y"], _plain(source)["y"])


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_batched_matrix_products_call_blas_per_batch_element(dtype):
    source = f"""import numpy as np
rng = np.random.default_rng(6)
a = rng.random((3, 40, 20)).astype(np.{dtype}); b = rng.random((3, 30, 20)).astype(np.{dtype})
y = np.sqrt(a @ b.transpose(0, 2, 1) + 1)
"""
    c = capture(source)
    p = c.program
    (block,) = [bl for bl in partition(p, "greedy").blocks if any(p[i].opcode is Opcode.CONTRACT for i in bl)]
    k = get_kernel(p, block)
    assert "tile = np.dot(" in k.source and k.library_blas and "prange(n0)" in k.source
    want = _plain(source)
    r = run(c, "greedy", min_size=0, cache=CACHE)
    a, b = want["a"].astype(np.float64), want["b"].astype(np.float64)
    # sqrt halves a relative error: the product's bound, plus one rounding of the sum and the root
    _assert_close(r.values["y"], want["y"], (20, np.abs(a) @ np.abs(b).transpose(0, 2, 1) + 2))


def test_the_check_allows_a_contractions_reordered_sums():
    from fusionlab.runtime.check import reduction_terms

    c = capture(_SETUP + "Y = np.einsum('bij,bjk->bik', T, S)\nZ = A @ v\n")
    assert reduction_terms(c.batches) == 4   # the summed extent (j: 4), as a reduction of 4 terms
    p = parse('ARRAY A float64[3,4,5]\nARRAY B float64[5,4,2]\nARRAY C float64[3,2]\n'
              'CONTRACT C, A, B, subscripts="ijk,kjl->il"')
    assert reduction_terms([p]) == 20


def test_covariance_shrinkage_captures_its_product_as_a_contract():
    from fusionlab.workloads import get_workload

    c = capture(get_workload("covariance_shrinkage").script("tiny"))
    (ins,) = [i for b in c.batches for i in b if i.opcode is Opcode.CONTRACT]
    a, b = ins.views_in
    assert ins.attr("subscripts") == "ij,jk->ik" and a.base.name == b.base.name == "xc" and a.strides == (1, 6)
    assert not [i for b in c.batches for i in b if i.opcode is Opcode.OPAQUE and "matmul" in str(i.attr("name"))]


def test_a_run_with_blas_tiles_gives_scipy_blas_its_thread_count_back():
    from fusionlab.backend.numba.contract import _library_blas

    lib = _library_blas()
    if lib is None:
        import scipy

        blas = str(scipy.show_config(mode="dicts")["Build Dependencies"]["blas"].get("name", "unknown"))
        # SciPy's wheels (what `make setup` installs) bundle OpenBLAS: not finding it there is a bug
        assert "openblas" not in blas.lower(), f"SciPy is built with {blas}, but fusionlab did not find its library"
        pytest.skip(f"SciPy here uses {blas}, not OpenBLAS: fusionlab leaves that BLAS's threads alone, so a run "
                    "has no thread count to give back")
    get, set_ = lib
    before = get()
    set_(2)
    try:
        seen = []
        source = """import numpy as np
rng = np.random.default_rng(6)
x = rng.random((300, 40)); w = rng.random((40, 20))
y = np.maximum(x @ w - 5.0, 0)
"""
        c = capture(source)
        r = run(c, "greedy", min_size=0, cache=CACHE)
        assert any(k.library_blas for p in r.plans for bp in p.blocks for k in (bp.kernel,) if k is not None)
        seen.append(get())
        np.testing.assert_allclose(r.values["y"], _plain(source)["y"], rtol=1e-12)
        assert seen == [2]
    finally:
        set_(before)
