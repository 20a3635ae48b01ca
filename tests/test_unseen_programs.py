"""Programs nobody on the project wrote (``tests/data/unseen/``), through every path a user has.

Each program is a realistic NumPy script (PolyBench kernels, notebook statistics, integer and
bit arithmetic, NEP 50 promotion, views written through, containers of arrays, generators kept,
exceptions caught halfway) that defines its results as module-level names. Each must give
plain NumPy's answers:

- captured and replayed under greedy partitions (what ``fusionlab verify`` does), every name
  the program leaves compared structurally with a plain run (:mod:`fusionlab.runtime.check`);
- run with Numba kernels (``run --check``, block by block, the default ``min_size``), against
  the plain run;
- as a ``%%fuse`` cell: every name the user holds afterwards is of plain NumPy's type with
  plain NumPy's value (no stand-in leaks), and a later plain cell using them computes what it
  computes after a plain cell.
"""

from __future__ import annotations

import gc
import io
import re
import pathlib
import types
from contextlib import redirect_stdout

import numpy as np
import pytest
from IPython.testing.globalipapp import get_ipython
from IPython.utils.capture import capture_output

from fusionlab.capture import CaptureBudget, capture
from fusionlab.capture.recorder import CELL_FILENAME
from fusionlab.runtime.check import check_namespace, compare_values, plain_namespace, reduction_terms
from fusionlab.pipeline.runner import run
from fusionlab.partition import partition

from test_capture_session import leaks
from test_numba import CACHE   # parallel kernels: the regressions of their own below
from kernels import CHECKED   # every program's kernels bounds-checked (tests/kernels.py)

UNSEEN = pathlib.Path(__file__).parent / "data" / "unseen"
#: Programs the corpus tests leave out, and why (each has a test of its own below).
SLOW = {
    "tiny_many.py": "10,000 steps of 11 instructions on 3-element arrays: capture without a budget records "
                    "every one (~40 s in all before the per-operation work was cut, where plain NumPy takes "
                    "0.03 s); %%fuse's budget stops it at 50,000 instructions (9 s on a loaded machine, 3 s "
                    "of CPU); see test_a_long_loop_of_tiny_arrays_leaves_recording",
}
PROGRAMS = sorted(p.name for p in UNSEEN.glob("*.py") if p.name not in SLOW)



def _reset() -> None:
    """``ip.reset()`` without its full ``gc.collect()``: with every kernel of the test session
    in memory, that collection took seconds per test (most of this file's time in a clean
    run); cycles are still collected by the interpreter's own generational collections."""
    collect = gc.collect
    gc.collect = lambda generation=2: 0
    try:
        ip.reset()
    finally:
        gc.collect = collect


def _user_names(ns: dict) -> list[str]:
    return [k for k, v in ns.items() if not k.startswith("_") and not isinstance(v, types.ModuleType)]


def _same_kind(got: object, want: object) -> bool:
    # a class the program defines is created anew by each run: same name, not same object
    return type(got) is type(want) or type(got).__qualname__ == type(want).__qualname__


def test_the_corpus_is_there():
    assert len(PROGRAMS) >= 25


@pytest.mark.parametrize("name", PROGRAMS)
def test_captured_and_replayed_equals_plain_numpy(name):
    source = (UNSEEN / name).read_text()
    plain = plain_namespace(source, name)
    ns: dict = {"__name__": "__main__"}
    with redirect_stdout(io.StringIO()):
        cap = capture(source, ns, filename=name)   # as the plain run names it (warnings keep the file name)
    names = _user_names(plain)
    terms = reduction_terms(cap.batches)
    held = check_namespace({n: ns[n] for n in names}, plain, names, terms)
    assert held.ok, held.mismatches
    parts = {k: partition(b, "greedy", "bohrium").blocks for k, b in enumerate(cap.batches)}
    replay = check_namespace(cap.replay(parts), plain, terms=terms)
    assert replay.ok, replay.mismatches
    for n in names:
        assert _same_kind(ns[n], plain[n]), (n, type(ns[n]), type(plain[n]))


@pytest.mark.parametrize("name", PROGRAMS)
def test_kernels_equal_plain_numpy(name):
    source = (UNSEEN / name).read_text()
    with redirect_stdout(io.StringIO()):
        cap = capture(source, {"__name__": "__main__"})
    r = run(cap, "greedy", "bohrium", check=True, driver="blocks", cache=CHECKED)
    assert r.check is not None and r.check.ok, r.check.mismatches


@pytest.mark.parametrize("driver", ["blocks", "python", "numba"])
@pytest.mark.parametrize("n", [16, 40_000])
def test_a_max_reduction_kernel_propagates_nan(driver, n):
    # the partials were combined with ``part.max()``, which Numba's parfor pass turns into a
    # reduction that drops NaN: x.max() gave -inf where NumPy gives nan
    source = (f"import numpy as np\nx = np.array([1.0, np.nan, -2.0, 3.0] * {n // 4})\n"
              "top = x.max()\nlow = (x * 2).min()\nboth = np.maximum.reduce(x) + np.minimum.reduce(-x)\n")
    r = run(capture(source, {}), "greedy", "bohrium", check=True, driver=driver, min_size=0, cache=CACHE)
    assert r.kernels >= 1
    assert np.isnan(r.values["top"]) and np.isnan(r.values["low"]) and np.isnan(r.values["both"])


def test_numpy_scalars_through_asarray_array_and_astype_keep_numpys_kinds():
    # np.asarray(x.mean()) gave the traced np.float64 itself (a traced array already is the
    # array), and a scalar's astype gave a 0-d array: NumPy gives a 0-d array and a scalar
    source = ("import numpy as np\nx = np.linspace(1, 2, 8)\na = np.asarray(x.mean())\n"
              "b = np.asarray(x.max(), dtype=np.float32)\nc = np.array(x.sum())\nd = x[2].astype(np.float32)\n"
              "e = x.sum().astype(int)\nf = np.asarray(x)\na += 1\n")
    plain = plain_namespace(source)
    ns: dict = {}
    cap = capture(source, ns)
    for k in "abcdef":
        assert type(ns[k]) is type(plain[k]), (k, type(ns[k]), type(plain[k]))
        assert ns[k].dtype == plain[k].dtype and np.array_equal(ns[k], plain[k]), k
    replay = cap.replay({i: partition(b, "greedy", "bohrium").blocks for i, b in enumerate(cap.batches)})
    assert check_namespace(replay, plain).ok


ip = get_ipython()
ip.run_line_magic("load_ext", "fusionlab")

#: The next plain cell: reads every name the program left (arrays computed on, generators
#: drawn from), as a user's next cell would.
FOLLOW_UP = """
_after = {}
for _k, _v in list(globals().items()):
    if _k.startswith('_') or _k in ('In', 'Out', 'exit', 'quit', 'get_ipython') or callable(_v) \\
            or isinstance(_v, type(np)):
        continue
    if isinstance(_v, np.ndarray) and _v.dtype.kind in 'biufc':
        _after[_k] = (type(_v).__name__, _v.dtype.str, _v.shape, (_v * 1 if _v.dtype.kind != 'b' else ~_v).tolist())
    elif isinstance(_v, np.random.Generator):
        _after[_k] = ('Generator', _v.random(2).tolist())
    else:
        _after[_k] = type(_v).__qualname__
"""


@pytest.mark.parametrize("name", PROGRAMS)
def test_fuse_cell_leaves_plain_numpys_session(name):
    source = (UNSEEN / name).read_text()
    _reset()
    # a plain cell of this source is compiled under IPython's name for it (a caught warning keeps it)
    plain = plain_namespace(source, ip.compile.get_code_name(source, ip.transform_cell(source), ip.execution_count))
    with capture_output() as out:
        # one algorithm and cost model, no explorer: the cell's namespace is the subject here
        # (with the defaults a 24-row substitution loop cell takes ~15 s on this machine)
        ip.run_cell_magic("fuse", "--no-explorer --algorithms greedy --compare bohrium --budget 1", source)
    assert "Traceback" not in out.stdout + out.stderr, out.stdout + out.stderr
    held = ip.user_ns
    for k in _user_names(plain):
        assert k in held, k
        assert _same_kind(held[k], plain[k]), (k, type(held[k]), type(plain[k]))
        assert leaks(held[k], path=k) == []
        want = plain[k]
        if type(held[k]) is not type(want) and isinstance(want, tuple):
            want = type(held[k])(*want)   # a namedtuple the program defines: the cell's own class
        if type(held[k]) is type(want):
            report = compare_values(held[k], want, k)
            assert report.ok, report.mismatches
    exec(FOLLOW_UP, plain)
    assert ip.run_cell(FOLLOW_UP).success
    mine, theirs = ip.user_ns["_after"], plain["_after"]
    assert set(mine) == set(theirs)
    for k in theirs:
        if isinstance(theirs[k], tuple) and theirs[k][0] == "ndarray":
            assert mine[k][:3] == theirs[k][:3], k
            assert compare_values(np.asarray(mine[k][3]), np.asarray(theirs[k][3]), k).ok, k
        else:
            assert mine[k] == theirs[k], k


#: Cells that raise halfway: in a loop, from NumPy (inside capture's wrappers), in a function
#: the cell defines, after catching another error, from next() and from an errstate.
RAISING_CELLS = {
    "loop": "import numpy as np\nx = np.linspace(0, 1, 50)\nacc = np.zeros(50)\nfor k in range(5):\n"
            "    acc += x * k\n    if k == 3:\n        raise ValueError(f'stop at {k}')\nafter = acc * 2\n",
    "numpy": "import numpy as np\na = np.ones((4, 3))\nb = a * 2\nc = b.sum(axis=0)\nd = a @ np.ones(4)\n",
    "index": "import numpy as np\nx = np.arange(20.0)\ny = x ** 2\nx += 1\nz = y[100]\n",
    "function": "import numpy as np\ndef f(a):\n    b = a * 2\n    return b.reshape(3, 5)\n"
                "x = np.arange(10.0)\ny = x + 1\nz = f(y)\n",
    "caught": "import numpy as np\nx = np.arange(5.0)\ntry:\n    y = x[10]\nexcept IndexError as e:\n"
              "    y = x[-1]\n    msg = str(e)\nraise TypeError('final ' + msg)\n",
    "errstate": "import numpy as np\nx = np.linspace(-1, 1, 9)\nwith np.errstate(all='raise'):\n"
                "    y = x * 2\n    z = np.log(x)\n",
}


def _play(cell: str) -> tuple:
    _reset()
    with capture_output() as out:
        result = ip.run_cell(cell)
    names = {k: v for k, v in ip.user_ns.items() if k in _user_names(ip.user_ns)
             and k not in ("In", "Out", "exit", "quit", "get_ipython")}
    text = re.sub(r"In\[\d+\]", "In[n]", out.stdout + out.stderr)
    return result, text, names


@pytest.mark.parametrize("name", sorted(RAISING_CELLS))
def test_a_cell_that_raises_fails_as_a_plain_cell_fails(name):
    # the magic showed the traceback and returned: the cell "succeeded" (Run All went on,
    # the kernel replied 'ok'), and the traceback had capture's frames and <fusionlab-capture>
    cell = RAISING_CELLS[name]
    want, want_text, want_ns = _play(cell)
    got, got_text, got_ns = _play("%%fuse --no-explorer --algorithms greedy --compare bohrium --budget 1\n" + cell)
    assert type(got.error_in_exec) is type(want.error_in_exec) and str(got.error_in_exec) == str(want.error_in_exec)
    assert got_text == want_text
    assert set(got_ns) == set(want_ns)
    for k in want_ns:
        if not callable(want_ns[k]):
            assert type(got_ns[k]) is type(want_ns[k]) and compare_values(got_ns[k], want_ns[k], k).ok, k


def test_a_cells_last_expression_is_its_output():
    # plain IPython shows a cell's last expression (Out[n], ``_``); the magic returned None
    opts = "%%fuse --no-explorer --algorithms greedy --compare bohrium --budget 1\n"
    r = ip.run_cell(opts + "import numpy as np\nx = np.arange(4.0)\ny = x + 1\n(x * 2).sum(), y[::-1]\n")
    assert r.success and type(r.result) is tuple and type(r.result[0]) is np.float64 and r.result[0] == 12.0
    assert type(r.result[1]) is np.ndarray and r.result[1].tolist() == [4.0, 3.0, 2.0, 1.0]
    assert leaks(r.result, path="Out") == []
    assert ip.run_cell(opts + "import numpy as np\nx = np.arange(4.0)\nx * 2;\n").result is None
    assert ip.run_cell(opts + "import numpy as np\nx = np.arange(4.0)\ny = x * 2\n").result is None


def test_type_of_a_traced_value_is_numpys_class():
    # ``type`` was the real builtin under capture: type(x) was the stand-in's class, so
    # ``type(x) is np.ndarray`` took the other branch and ``type(s).__name__`` printed 'Traced'
    source = ("import numpy as np\nx = np.linspace(0, 1, 8)\ns = x.sum()\n"
              "y = x * 2 if type(x) is np.ndarray else -x\nname = type(s).__name__\n"
              "same = type(x[2]) == np.float64\ndef kind(v):\n    return type(v).__name__\nk = kind(x * 3)\n"
              "checks = (isinstance(int, type), isinstance(x, type), issubclass(bool, type), type(3) is int)\n"
              "K = type('K', (), {'v': 3})\nkv = (K().v, K.__module__, repr(K))\n"
              "class Meta(type):\n    def __new__(mcs, name, bases, ns):\n        ns['tag'] = name.lower()\n"
              "        return super().__new__(mcs, name, bases, ns)\n"
              "class Foo(metaclass=Meta):\n    pass\ntag = (Foo.tag, type(Foo) is Meta, isinstance(Foo, type))\n")
    plain = plain_namespace(source)
    ns: dict = {"__name__": "__main__"}
    with redirect_stdout(io.StringIO()):
        capture(source, ns)
    for k in ("name", "same", "k", "checks", "kv", "tag"):
        assert ns[k] == plain[k], (k, ns[k], plain[k])
    assert compare_values(ns["y"], plain["y"]).ok


@pytest.mark.parametrize("driver", ["blocks", "numba"])
@pytest.mark.parametrize("n", [40, 20_000])
def test_out_of_range_floats_cast_to_small_integers_wrap_as_in_numpy(driver, n):
    # LLVM's float -> uint16 of -250.0 is undefined: the kernel's vector loop and its
    # remainder loop gave different values (0 in the last 8 elements); NumPy's C cast wraps
    source = (f"import numpy as np\nx = np.linspace(-300, 300, {n})\nu8 = (x * 1.2).astype(np.uint8)\n"
              "u16 = (-x).astype(np.uint16)\ni8 = (x - 100).astype(np.int8)\ni16 = (x * 200).astype(np.int16)\n"
              "u32 = (x - 1).astype(np.uint32)\nu64 = (x * 3).astype(np.uint64)\nok = (x * 2).astype(np.int32)\n")
    with np.errstate(invalid="ignore"):
        plain = plain_namespace(source)
        r = run(capture(source, {}), "greedy", "bohrium", check=True, driver=driver, min_size=0, cache=CACHE)
    assert r.kernels >= 1
    for k in ("u8", "u16", "i8", "i16", "u32", "u64", "ok"):
        assert r.values[k].dtype == plain[k].dtype and np.array_equal(r.values[k], plain[k]), k


def test_suspended_generators_and_partials_hand_back_plain_arrays():
    # a generator the cell left suspended kept traced arrays in its frame's locals, and a
    # functools.partial its traced arguments: the next plain cell got stand-ins from them
    source = ("import numpy as np\nfrom functools import partial\n"
              "def chunks(a, k):\n    for i in range(0, len(a), k):\n        yield a[i:i + k] * 2\n"
              "x = np.arange(10.0)\ng = chunks(x * 1, 4)\nfirst = next(g)\n"
              "gen = (v + w for v, w in zip(x[:3] * 1, x[3:6] * 1))\nhead = next(gen)\n"
              "def scale(v, by, shift=0):\n    return v * by + shift\n"
              "s2 = partial(scale, x[:2] + 1, shift=x[2:4] * 3)\nout = s2(2.0)\n")
    ns: dict = {"__name__": "__main__"}
    capture(source, ns)
    plain = plain_namespace(source)
    for k in ("g", "gen", "s2"):
        assert leaks(ns[k], path=k) == [], k
    for got, want in ((next(ns["g"]), next(plain["g"])), (next(ns["gen"]), next(plain["gen"])),
                      (ns["s2"](3.0), plain["s2"](3.0))):
        assert type(got) is type(want) and compare_values(got, want).ok
    assert ns["s2"].args[0].__class__ is np.ndarray and type(ns["s2"].keywords["shift"]) is np.ndarray


def test_ipython_syntax_in_a_fused_cell_runs_as_in_a_plain_cell():
    # the cell went to capture untransformed: %time, !cmd and obj? were SyntaxErrors
    cell = ("import numpy as np\nx = np.arange(100.0)\n%time y = np.sqrt(x) * 2\nsaid = !echo hello\n"
            "z = y.sum() + len(said)\nnp.sum?\nz * 2\n")
    want, _, want_ns = _play(cell)
    got, text, got_ns = _play("%%fuse --no-explorer --algorithms greedy --compare bohrium --budget 1\n" + cell)
    assert want.success and got.success, text
    assert set(got_ns) == set(want_ns) and list(got_ns["said"]) == ["hello"]
    for k in ("x", "y", "z"):
        assert type(got_ns[k]) is type(want_ns[k]) and compare_values(got_ns[k], want_ns[k], k).ok, k
    assert got.result == want.result


class _Node:
    def __init__(self, prev: object) -> None:
        self.a = self.b = prev          # two paths to the same object: 2**depth paths in all
        self.v = np.ones(2)


def test_an_object_graph_is_compared_once_per_object():
    # the check walked objects attribute by attribute along every path: a matplotlib figure
    # kept by a program took the check (and the %%fuse cell's test) to a MemoryError at 23 GB
    def chain(n: int) -> _Node:
        node = None
        for _ in range(n):
            node = _Node(node)
        return node
    r = compare_values(chain(18), chain(18), "g")
    assert r.ok and r.compared == 18 + 2   # each node's v, and the first node's a and b (None)
    bad = chain(18)
    bad.a.a.v[1] = 5.0
    assert [m.path for m in compare_values(bad, chain(18), "g").mismatches] == ["g.__dict__['a'].__dict__['a'].__dict__['v']"]


def test_an_installed_librarys_objects_compare_by_identity_only():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figs = []
    for _ in range(2):
        fig, ax = plt.subplots()
        ax.plot([1.0, 2.0])
        figs.append(fig)
        plt.close(fig)
    r = compare_values(figs[0], figs[1], "fig")   # their attributes hold ids and weak references
    assert r.ok and r.skipped[0].reason == "a matplotlib.figure.Figure (an installed library's object) compares by identity only"


def test_a_closed_npz_file_is_skipped_not_a_crash(tmp_path):
    # ``with np.load('x.npz') as z: ...`` leaves a closed NpzFile, a Mapping whose items
    # raise AttributeError: the check raised it from ``fusionlab verify``
    np.savez(tmp_path / "a.npz", a=np.ones(2))
    with np.load(tmp_path / "a.npz") as z, np.load(tmp_path / "a.npz") as w:
        pass
    r = compare_values({"z": z, "k": 1}, {"z": w, "k": 1})
    assert r.ok and r.compared == 1 and r.skipped[0].path == "value['z']"
    assert r.skipped[0].reason.startswith("its items cannot be read (AttributeError")


def test_introspection_of_a_traced_array_answers_as_numpy():
    # x.__class__ was the stand-in's class (type(x) already was ndarray), y.base the real
    # array behind x (``y.base is x`` False), and x.__array_interface__ an AttributeError
    # that failed the capture
    source = ("import numpy as np\nx = np.arange(12.0).reshape(3, 4) * 2\ny = x[:, 1:3]\n"
              "cls = (x.__class__.__name__, x.__class__ is np.ndarray, x.sum().__class__, y.T.__class__)\n"
              "same = (y.base is x, x.base is None, (x + 1).base is None)\n"
              "ai = (x.__array_interface__['shape'], y.__array_interface__['strides'], sorted(x.__array_interface__))\n"
              "class K:\n    pass\nk = K().__class__.__name__\ndef f(v):\n    return v.__class__\nfv = f(x * 1)\n")
    plain = plain_namespace(source)
    ns: dict = {"__name__": "__main__"}
    capture(source, ns)
    for k in ("cls", "same", "ai", "k", "fv"):
        assert ns[k] == plain[k], (k, ns[k], plain[k])
    assert ns["f"](np.ones(2)) is np.ndarray   # a function the cell defined, called afterwards


def test_an_installed_librarys_functions_are_handed_plain_numpy_objects():
    # matplotlib's ax.hist took a traced array for 50 data sets (counts of shape (50, 5)) and
    # the figure kept traced stand-ins; a cell's calls now look the callee up first and hand
    # an installed library (site-packages, not NumPy) the real arrays, through containers,
    # while NumPy's own functions stay captured and the call stays in the user's frame
    source = ("import matplotlib\nmatplotlib.use('Agg')\nimport matplotlib.pyplot as plt\nimport numpy as np\n"
              "y = np.sin(np.linspace(0, 6, 50))\nfig, ax = plt.subplots()\nline, = ax.plot(y * 2)\n"
              "counts, edges, _ = ax.hist(y, bins=5)\nmulti, _, _ = ax.hist([y, y + 1], bins=4)\n"
              "kinds = (type(line._yorig).__name__, type(line.get_ydata()).__name__)\nplt.close(fig)\n"
              "class A:\n    def f(self):\n        return 1\nclass B(A):\n    def f(self):\n        return super().f() + 1\n"
              "b = B().f()\ndef g():\n    a = 5\n    return sorted(locals())\nloc = g()\ne = (y ** 2).sum()\n"
              "import numba\n@numba.njit\ndef total(a):\n    s = 0.0\n    for v in a:\n        s += v\n    return s\n"
              "t = total(y * 3)\n")   # a Numba dispatcher raised "Cannot determine Numba type of Traced"
    plain = plain_namespace(source)
    ns: dict = {"__name__": "__main__"}
    with redirect_stdout(io.StringIO()):
        cap = capture(source, ns)
    assert ns["kinds"] == plain["kinds"] == ("ndarray", "ndarray")
    for k in ("counts", "edges", "multi", "b", "loc", "e", "t"):
        assert compare_values(ns[k], plain[k], k).ok, k
    assert ns["counts"].shape == (5,) and ns["multi"].shape == (2, 4)
    assert any(ins.opcode.name == "ADD_REDUCE" for b in cap.batches for ins in b)   # NumPy's sum still captured
    assert leaks(ns["line"], path="line") == []


@pytest.mark.parametrize("ask", ["np.sum?", "np.random.default_rng?", "rng.random?", "y?", "np.linalg.norm??"])
def test_object_help_in_a_fused_cell_shows_numpys_object(ask):
    # IPython's inspector found capture's stand-ins: "Type: Recording", the wrapper's
    # signature, and for an array the stand-in's class
    cell = f"import numpy as np\nrng = np.random.default_rng(0)\ny = rng.random(3) * 2\n{ask}\n"
    _, want, _ = _play(cell)
    _, got, _ = _play("%%fuse --no-explorer --algorithms greedy --compare bohrium --budget 1\n" + cell)
    hide = re.compile(r"0x[0-9a-fA-F]+|\[[-0-9. e]+\]")   # addresses, and the array's values
    assert "Recording" not in got and "Traced" not in got and "GeneratorProxy" not in got
    assert hide.sub("?", got) == hide.sub("?", want)


def test_a_long_loop_of_tiny_arrays_leaves_recording():
    # a loop of whole-array instructions on 3 elements never goes plain by itself (only a
    # loop over elements does, past SCALAR_LOOP_THRESHOLD): the capture budget stops it, and
    # the rest of the loop runs as plain NumPy (the %%fuse default: DEFAULT_BUDGET)
    source = (UNSEEN / "tiny_many.py").read_text().replace("range(10000)", "range(1000)")
    assert "range(1000)" in source
    ns: dict = {"__name__": "__main__"}
    cap = capture(source, ns, budget=CaptureBudget(instructions=1000))
    plain = plain_namespace(source)
    assert compare_values(ns["pos"], plain["pos"]).ok and ns["bounces"] == plain["bounces"]
    assert type(ns["energy"]) is type(plain["energy"]) and ns["energy"] == plain["energy"]
    # a bound on what is recorded, not on time: past the budget the loop runs plainly
    assert sum(len(b) for b in cap.batches) < 20 * 64
    assert cap.stopped is not None and cap.stopped.line in range(9, 15)


def test_a_ufuncs_warnings_name_the_users_line():
    # a ufunc's floating-point warnings were attributed to capture's own line (array.py), so
    # the user saw fusionlab's source, and the 'default' filter showed one warning for all
    # of the cell's lines instead of one per line
    import warnings

    source = ("import numpy as np\nx = np.linspace(-1, 1, 5)\ny = np.log(x)\nfor k in range(3):\n"
              "    z = np.log(x * k)\nw = 1.0 / (x * 0)\n")
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("default")
        capture(source, {"__name__": "__main__"})
    with warnings.catch_warnings(record=True) as want:
        warnings.simplefilter("default")
        plain_namespace(source)
    assert [(w.lineno, str(w.message)) for w in got] == [(w.lineno, str(w.message)) for w in want]
    assert len(want) == 5 and all(w.filename == CELL_FILENAME for w in got)   # not capture's array.py
