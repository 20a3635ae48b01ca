"""Round 5 of programs nobody here wrote: focused regressions for what the new programs
(``tests/data/unseen/u5_*.py``) and sessions (``s78``-``s95``) found. The programs and
sessions themselves run in ``test_unseen_programs.py`` and ``test_unseen_sessions.py``."""

from __future__ import annotations

import io
from contextlib import redirect_stdout

import numpy as np
import pytest

from fusionlab.capture import capture
from fusionlab.runtime.check import compare_values, plain_namespace

from test_capture_session import leaks


def _both(source: str, ns: dict | None = None) -> tuple[dict, dict]:
    plain = plain_namespace(source)
    got: dict = {"__name__": "__main__"} if ns is None else ns
    with redirect_stdout(io.StringIO()):
        capture(source, got)
    return got, plain


@pytest.mark.parametrize("make", ["np.random.RandomState(2024)", "np.random.Generator(np.random.PCG64(3))"])
def test_a_random_state_objects_methods_shuffle_and_permute_the_real_arrays(make):
    # rs.shuffle(M) on a 2-D traced array swapped the stand-in's rows through views (rows
    # duplicated: M held 0,1,2 three times), and rs.permutation(col) permuted stand-ins
    source = (f"import numpy as np\nrs = {make}\nM = np.arange(15.0).reshape(5, 3) * 1\nrs.shuffle(M)\n"
              "perm = rs.permutation(M[:, 0])\nv = np.arange(6.0) + 1\nrs.shuffle(v[1:])\n"
              "pick = rs.choice(M[:, 1] * 2, 3)\nafter = M.sum(axis=0) + v[:3].sum()\n")
    got, plain = _both(source)
    for k in ("M", "perm", "v", "pick", "after"):
        assert type(got[k]) is np.ndarray and np.array_equal(got[k], plain[k]), (k, got[k], plain[k])
    assert sorted(got["M"][:, 0].tolist()) == [0.0, 3.0, 6.0, 9.0, 12.0]   # a permutation of the rows


def test_a_random_state_from_an_earlier_plain_cell_shuffles_a_cells_array():
    ns: dict = {"__name__": "__main__"}
    exec("import numpy as np\nrs = np.random.RandomState(5)\n", ns)
    plain: dict = {"__name__": "__main__"}
    exec("import numpy as np\nrs = np.random.RandomState(5)\n", plain)
    cell = "x = np.arange(8.0).reshape(4, 2) * 2\nrs.shuffle(x)\ny = x + 1\n"
    exec(cell, plain)
    capture(cell, ns)
    assert type(ns["y"]) is np.ndarray and np.array_equal(ns["y"], plain["y"])
    assert leaks(ns["rs"], path="rs") == [] and type(ns["rs"]) is np.random.RandomState


def test_an_uninitialised_array_written_outside_the_program_is_reloaded_even_if_unchanged():
    # np.empty_like's memory, then written by np.nditer (outside the program): the change was
    # seen by comparing the memory with what it held at the escape, and memory that already
    # held the written values (freed by an earlier run of the same cell) looked unchanged, so
    # the program read ``out`` as never written: ``run --check`` gave zeros (u5_nditer_ops).
    # Writing the memory's own values back makes that coincidence certain.
    from fusionlab.ir.bytecode import Opcode
    from fusionlab.partition import partition

    source = ("import numpy as np\nout = np.empty((3, 4))\n"
              "with np.nditer(out, op_flags=['readwrite']) as it:\n    for z in it:\n        z[...] = z * 1\n"
              "twice = out * 2\n")
    ns: dict = {"__name__": "__main__"}
    cap = capture(source, ns)
    ops = [ins.opcode for b in cap.batches for ins in b]
    assert Opcode.OPAQUE in ops and ops.index(Opcode.OPAQUE) < ops.index(Opcode.MULTIPLY)
    replay = cap.replay({k: partition(b, "greedy", "bohrium").blocks for k, b in enumerate(cap.batches)})
    assert np.array_equal(replay["twice"], ns["out"] * 2, equal_nan=True)


def test_arrays_in_a_dict_with_numpy_string_or_bool_keys_replay_under_their_keys():
    # the output's label was d[np.str_('abc')] (NumPy 2's repr of the key), which the check
    # could not look up: verify and run --check reported "plain NumPy has no such variable"
    # for each store of u5_structured_groupby; a True key gave d[True], the same
    from fusionlab.runtime.check import check_namespace
    from fusionlab.partition import partition

    source = ("import numpy as np\nstores = np.unique(np.array(['xyz', 'abc', 'xyz']))\n"
              "d = {s: np.arange(3.0) * k for k, s in enumerate(stores)}\n"
              "e = {True: np.ones(2) * 3, 2: np.ones(2) - 5}\n")
    plain = plain_namespace(source)
    ns: dict = {"__name__": "__main__"}
    cap = capture(source, ns)
    assert sorted(cap.outputs) == ["d['abc']", "d['xyz']", "e[2]"]
    replay = cap.replay({k: partition(b, "greedy", "bohrium").blocks for k, b in enumerate(cap.batches)})
    report = check_namespace(replay, plain)
    assert report.ok and report.compared == 3, report.mismatches


def test_a_ufunc_reduce_with_the_inputs_own_dtype_keeps_it():
    # np.add.reduce(i8, dtype=np.int8) was reduced without dtype= (the input had it already):
    # NumPy's default, int64, where NumPy gives int8 (u5_reduce_dtypes); dtype=int16 of an
    # int8 array was copied to int16 and then reduced to int64 the same way
    from fusionlab.pipeline.runner import run
    from test_numba import CACHE

    source = ("import numpy as np\ni8 = np.full(300, 100, dtype=np.int8)\na = np.add.reduce(i8, dtype=np.int8)\n"
              "b = np.add.reduce(i8 * 1, dtype=np.int16)\nc = np.add.accumulate(i8 + 0, dtype=np.int8)\n"
              "d = np.multiply.reduce(np.arange(1, 30, dtype=np.int32), dtype=np.int32)\n"
              "e = np.add.reduce(np.ones((3, 200), dtype=np.uint8), axis=1, dtype=np.uint8)\n")
    got, plain = _both(source)
    for k in "abcde":
        assert type(got[k]) is type(plain[k]) and got[k].dtype == plain[k].dtype, (k, got[k], plain[k])
        assert np.array_equal(got[k], plain[k]), k
    with redirect_stdout(io.StringIO()):
        cap = capture(source, {})
    r = run(cap, "greedy", "bohrium", check=True, driver="blocks", min_size=0, cache=CACHE)
    assert r.kernels >= 1 and r.check is not None and r.check.ok, r.check


def test_an_iterator_over_a_cells_array_is_numpys_iterator_at_the_same_position():
    # iter(rows) kept after one next() was capture's generator in the session (s101): the
    # values were plain arrays, the object a 'generator' where plain NumPy gives 'iterator'
    source = ("import numpy as np\nrows = np.arange(8.0).reshape(4, 2) * 2\nit = iter(rows)\nfirst = next(it)\n"
              "fresh = iter(rows[:, 0] + 1)\nkept = [iter(rows[1] * 1)]\n")
    got, plain = _both(source)
    for k in ("it", "fresh"):
        assert type(got[k]) is type(plain[k]), (k, type(got[k]), type(plain[k]))
    assert type(got["kept"][0]) is type(plain["kept"][0])
    for a, b in ((got["it"], plain["it"]), (got["fresh"], plain["fresh"]), (got["kept"][0], plain["kept"][0])):
        ours, theirs = list(a), list(b)
        assert len(ours) == len(theirs) and all(type(x) is type(y) and np.array_equal(x, y)
                                                for x, y in zip(ours, theirs))
    assert leaks(got["it"], path="it") == []


def test_a_weak_reference_taken_in_a_cell_refers_to_the_real_array_afterwards():
    # weakref.ref(keep) in a fused cell referred to the stand-in, which died with the cell:
    # r() was None afterwards where plain NumPy gives keep itself (s103)
    import weakref

    keep = np.arange(5.0)
    ns: dict = {"__name__": "__main__", "np": np, "keep": keep}
    capture("import weakref\nr = weakref.ref(keep)\nview = keep[1:4]\nview *= 10\nx = keep * 2\n"
            "rs = {'x': weakref.ref(x)}\nok = r() is keep\n", ns)
    assert ns["ok"] is True and ns["keep"] is keep and keep.tolist() == [0.0, 10.0, 20.0, 30.0, 4.0]
    assert type(ns["r"]) is weakref.ref and ns["r"]() is keep
    assert ns["rs"]["x"]() is ns["x"] and type(ns["x"]) is np.ndarray


def test_iter_of_a_traced_scalar_raises_at_once_as_numpys_does():
    # Traced.__iter__ was a generator: iter(x.sum()) succeeded and raised only at next(), so
    # the "is it iterable?" idiom (try: iter(v)) said True for scalars and the cell then
    # raised "iteration over a 0-d array" where plain NumPy takes the scalar branch
    source = ("import numpy as np\ndef iterable(v):\n    try:\n        iter(v)\n        return True\n"
              "    except TypeError:\n        return False\nx = np.linspace(0, 1, 5)\n"
              "a = (iterable(x), iterable(x.sum()), iterable(x[2]), iterable(np.asarray(x.max())), iterable(x * 2))\n"
              "s = x.sum()\nvals = [float(v) for v in (s if iterable(s) else [s])]\n")
    got, plain = _both(source)
    assert got["a"] == plain["a"] == (True, False, False, False, True)
    assert got["vals"] == plain["vals"] == [2.5]


@pytest.mark.parametrize("assign", ["x[:, 3] = x[1]", "x.T[3] = x[1]", "x[:, 3][...] = x[1]"])
def test_an_assignment_numpy_copies_element_by_element_from_its_own_target_replays_as_numpy(assign):
    # x[:, 3] = x[1] overlaps at x[1, 3]: NumPy copies a 1-D view of same-signed strides
    # without a temporary (array_assign_array.c), so x[3, 3] gets the x[1, 3] it has just
    # written (1.0); the bytecode's COPY read a copy first (2.0): verify and run --check
    # differed from NumPy (u5_row_to_column: a[:, i] = a[i] in a loop)
    from fusionlab.partition import partition

    source = f"import numpy as np\nx = np.zeros((4, 4))\nx[1] = np.arange(4.0)\n{assign}\ny = x * 2\n"
    got, plain = _both(source)
    assert np.array_equal(got["x"], plain["x"]) and plain["x"][3, 3] == 1.0
    cap = capture(source, {})
    for algorithm in ("greedy", "singleton"):
        replay = cap.replay({k: partition(b, algorithm, "bohrium").blocks for k, b in enumerate(cap.batches)})
        assert np.array_equal(replay["x"], plain["x"]) and np.array_equal(replay["y"], plain["y"]), algorithm


def test_an_overlapping_assignment_numpy_buffers_stays_a_recorded_copy():
    # where NumPy's result is the buffered one (a shift), the COPY stays in the program
    from fusionlab.ir.bytecode import Opcode

    cap = capture("import numpy as np\nx = np.arange(10.0) * 1\nx[1:] = x[:-1]\nx[::-1] = x * 1\n", {})
    ops = [ins.opcode for b in cap.batches for ins in b]
    assert Opcode.OPAQUE not in ops and ops.count(Opcode.COPY) >= 2


def test_a_memoryview_of_a_cells_array_is_its_memory():
    # memoryview(x) raised "a bytes-like object is required, not 'Traced'" from capture
    # where NumPy hands out the buffer; writes through it reach the array
    from fusionlab.partition import partition

    source = ("import numpy as np\na = np.arange(6.0) * 3\nm = memoryview(a)\nn = m.nbytes + m.itemsize\n"
              "m[1] = -1.0\nb = np.asarray(m)\nb[0] = 42\nd = a + 1\n")
    got, plain = _both(source)
    assert got["n"] == plain["n"] == 56 and type(got["m"]) is memoryview
    for k in ("a", "b", "d"):
        assert type(got[k]) is np.ndarray and np.array_equal(got[k], plain[k]), k
    cap = capture(source, {})
    replay = cap.replay({k: partition(b, "greedy", "bohrium").blocks for k, b in enumerate(cap.batches)})
    assert np.array_equal(replay["d"], plain["d"])


@pytest.mark.parametrize("change", ["y = np.nan_to_num(x, copy=False)", "y = x.byteswap(inplace=True)",
                                    "y = x.byteswap(True)"])
def test_a_function_that_changes_its_argument_and_hands_it_back_is_recorded(change):
    # np.nan_to_num(x, copy=False) and x.byteswap(inplace=True) return x itself, changed:
    # capture took the result for a view of x and never recorded the change (the replay
    # kept the NaN and the unswapped bytes: wrong answers), and ``y is x`` was False
    from fusionlab.partition import partition

    source = (f"import numpy as np\nx = np.array([1.0, np.nan, np.inf, -2.0]) * 1\n{change}\nsame = y is x\n"
              "z = x[:3] + 1\n")
    got, plain = _both(source)
    assert got["same"] is plain["same"] is True
    cap = capture(source, {})
    replay = cap.replay({k: partition(b, "greedy", "bohrium").blocks for k, b in enumerate(cap.batches)})
    for k in ("x", "z"):
        assert np.array_equal(replay[k], plain[k], equal_nan=True), (k, replay[k], plain[k])
        assert np.array_equal(got[k], plain[k], equal_nan=True), k


def test_ndarray_dot_takes_out():
    # x.dot(y, out=o) raised "Traced.dot() got an unexpected keyword argument 'out'"
    source = ("import numpy as np\nz = np.arange(6.0).reshape(2, 3) * 2\no = np.empty(2)\nr = z.dot(np.ones(3), out=o)\n"
              "same = r is o\nq = o + 1\n")
    got, plain = _both(source)
    assert got["same"] is plain["same"] is True
    assert np.array_equal(got["q"], plain["q"]) and np.array_equal(got["o"], plain["o"])


def test_ascontiguousarray_and_asanyarray_hand_back_the_array_itself_as_numpy_does():
    # np.ascontiguousarray(M) of a C-contiguous traced M went out through
    # __array_interface__ (the base escaped) and came back a new array: ``c is M`` False,
    # and a write to c did not reach M (u5_inplace_returns)
    source = ("import numpy as np\nM = np.arange(6.0).reshape(2, 3) * 1\nc = np.ascontiguousarray(M)\nc[0, 0] = -7\n"
              "t = np.ascontiguousarray(M.T)\nt[0, 1] = 50\nf = np.ascontiguousarray(M, dtype=np.float32)\n"
              "d = np.asanyarray(M)\nm = np.asanyarray(np.matrix([[1.0, 2.0]]))\n"
              "alias = (c is M, t is M, d is M, type(m).__name__, t.flags['C_CONTIGUOUS'], f.dtype.name)\n")
    got, plain = _both(source)
    assert got["alias"] == plain["alias"] == (True, False, True, "matrix", True, "float32")
    for k in ("M", "t", "f"):
        assert np.array_equal(got[k], plain[k]) and got[k].dtype == plain[k].dtype, k


def test_np_real_is_numpys_function_in_a_cell():
    # the numpy stand-in had a ``real`` property (the module it stands for), so np.real was
    # the numpy module: np.real(c) raised "'module' object is not callable"
    source = ("import numpy as np\nfrom numpy import real as re_\nx = np.linspace(0, 1, 6)\nc = np.exp(1j * x) * 2\n"
              "r = np.real(c) + np.imag(c)\nq = re_(c * 1j)\nfn = np.real.__name__\n")
    got, plain = _both(source)
    assert got["fn"] == plain["fn"] == "real"
    for k in ("r", "q"):
        assert type(got[k]) is np.ndarray and np.allclose(got[k], plain[k], rtol=1e-15, atol=0), k


def test_a_traced_numpy_scalar_has_its_python_methods_and_scalar_parts():
    # s = x.sum() under capture: s.is_integer() raised AttributeError (only ndarray's
    # attributes were looked up), and s.real / s.imag were 0-d arrays, not np.float64
    source = ("import numpy as np\nx = np.linspace(0.5, 2, 4)\ns = x.sum()\n"
              "b = (s.is_integer(), s.as_integer_ratio(), s.hex(), s.conjugate())\nparts = (s.real, s.imag, x[1].real)\n")
    got, plain = _both(source)
    assert got["b"] == plain["b"] == (True, (5, 1), "0x1.4000000000000p+2", 5.0)
    assert [type(v) for v in got["parts"]] == [type(v) for v in plain["parts"]] == [np.float64] * 3
    assert got["parts"] == plain["parts"]


def test_the_standard_librarys_numeric_modules_and_bytes_get_plain_values():
    # statistics.mean(x) converted its result with type(x[0]), the stand-in's class
    # (TypeError from Traced.__init__); fractions.Fraction(s) refused a stand-in; bytes(x)
    # took the stand-in for an integer ("only integer scalar arrays can be converted")
    source = ("import numpy as np, statistics, fractions\nx = np.linspace(0.5, 2, 4)\ns = x.sum()\n"
              "m = statistics.mean(x)\nmd = statistics.median(x * 2)\nfr = fractions.Fraction(s)\n"
              "u = np.arange(6).astype(np.uint8) * 3\nb = bytes(u)\nba = bytearray(u[::2])\nz = u + 1\n")
    got, plain = _both(source)
    for k in ("m", "md", "fr", "b", "ba"):
        assert type(got[k]) is type(plain[k]) and got[k] == plain[k], (k, got[k], plain[k])
    assert np.array_equal(got["z"], plain["z"])


def test_a_vectorized_function_keeps_plain_defaults_after_the_cell():
    # np.vectorize(lambda v, w=x * 2: ...) kept the traced default inside the vectorize
    # object (NumPy's class: not walked), a stand-in a later cell would get
    ns: dict = {"__name__": "__main__"}
    capture("import numpy as np\nx = np.linspace(0, 1, 4)\nvf = np.vectorize(lambda v, w=x * 2: v + w.sum())\n"
            "r = vf(x)\n", ns)
    assert leaks(ns["vf"], path="vf") == []
    assert type(ns["vf"].pyfunc.__defaults__[0]) is np.ndarray and ns["vf"](1.0) == 5.0


def test_a_fresh_namespace_keeps_builtins_so_the_cells_functions_work_afterwards():
    # capture removed __builtins__ from a namespace that had none (plain exec leaves them):
    # a method the cell defined then failed to print an array ("Unable to configure default
    # ndarray.__str__", from an import without builtins), in verify's and capture()'s namespace
    cap = capture("import numpy as np\nx = np.arange(4.0)\nclass A:\n    def __init__(self):\n        self.v = x * 2\n"
                  "    def __repr__(self):\n        return f'A({self.v})'\na = A()\n")
    assert repr(cap.namespace["a"]) == "A([0. 2. 4. 6.])"
