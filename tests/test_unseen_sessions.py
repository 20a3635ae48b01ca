"""Notebook sessions nobody on the project wrote (``tests/data/unseen/sessions/``), cell by cell.

Each session is a file of cells separated by ``# %%`` lines; a ``# %% fuse`` cell runs as a
``%%fuse`` cell, the others as plain cells. The session runs twice in a fresh IPython shell:
once with every cell plain, once with the fused cells fused. After every cell the two runs
must agree: the cell succeeded or raised the same error (type and message), printed the same
text and displayed the same objects, and every name the user holds is of plain NumPy's kind
with plain NumPy's value (arrays, subclasses and masks, scalars, containers, instances of the
session's classes, a Generator's state), with none of fusionlab's objects reachable from it.
"""

from __future__ import annotations

import dataclasses
import pathlib
import re
import types
from typing import Any

import numpy as np
import pytest
from IPython.testing.globalipapp import start_ipython
from IPython.terminal.interactiveshell import TerminalInteractiveShell
from IPython.utils.capture import capture_output

from test_capture_session import leaks

SESSIONS = pathlib.Path(__file__).parent / "data" / "unseen" / "sessions"
NAMES = sorted(p.name for p in SESSIONS.glob("*.py"))
FUSE = "%%fuse --no-explorer --algorithms greedy --compare bohrium --budget 1\n"
start_ipython()
ip = TerminalInteractiveShell.instance()
if "fusionlab" not in ip.extension_manager.loaded:
    ip.run_line_magic("load_ext", "fusionlab")
ip.reset()
_BASELINE = set(ip.user_ns)
_PRINT, _ERR = np.get_printoptions(), np.geterr()
_HIDDEN = {"In", "Out", "exit", "quit", "get_ipython"}
#: lines whose text is a measurement (%time, %timeit), not a value
_TIMING = re.compile(r"^(CPU times|Wall time|.* per loop \(mean).*$", re.M)


def cells(text: str) -> list[tuple[bool, str]]:
    """The session's cells: (fused?, source)."""
    out: list[tuple[bool, str]] = []
    for chunk in re.split(r"^# %%", text, flags=re.M)[1:]:
        head, _, body = chunk.partition("\n")
        out.append((head.strip() == "fuse", body))
    return out


def fingerprint(v: Any, depth: int = 0) -> Any:
    """What a user can observe of ``v``, copied now (later cells may change it)."""
    if depth > 6:
        return "..."
    if isinstance(v, np.ndarray) and v.dtype.kind == "O":
        return ("array", type(v).__name__, "O", v.shape, [fingerprint(x, depth + 1) for x in v.ravel()])
    if isinstance(v, np.ndarray):
        data = np.array(v, copy=True, subok=False)
        mask = np.ma.getmaskarray(v).copy() if isinstance(v, np.ma.MaskedArray) else None
        return ("array", type(v).__name__, v.dtype.str, v.shape, data, mask)
    if isinstance(v, np.generic):
        return ("scalar", type(v).__name__, v.item() if v.dtype.kind not in "V" else v.tolist())
    if v is None or isinstance(v, (bool, int, float, complex, str, bytes)):
        return v
    if isinstance(v, (list, tuple)):
        return (type(v).__name__, [fingerprint(x, depth + 1) for x in v])
    if isinstance(v, dict):
        return ("dict", {repr(k): fingerprint(x, depth + 1) for k, x in v.items()})
    if isinstance(v, (set, frozenset)):
        return ("set", sorted(map(repr, v)))
    if isinstance(v, np.random.Generator):
        return ("Generator", repr(v.bit_generator.state))
    if isinstance(v, (types.FunctionType, types.BuiltinFunctionType, types.MethodType, type, types.ModuleType,
                      types.GeneratorType)):
        return ("kind", type(v).__name__)
    if dataclasses.is_dataclass(v) or type(v).__module__ == "__main__" and hasattr(v, "__dict__"):
        return ("object", type(v).__qualname__, fingerprint(dict(vars(v)), depth + 1))
    return ("kind", type(v).__qualname__)


def same(got: Any, want: Any, path: str) -> list[str]:
    """Where two fingerprints differ (arrays: equal, or within 1e-12 relative)."""
    if isinstance(want, np.ndarray) and isinstance(got, np.ndarray):
        if got.dtype != want.dtype or got.shape != want.shape:
            return [f"{path}: {got.dtype}{got.shape} != {want.dtype}{want.shape}"]
        if want.dtype.kind in "fc":
            ok = np.allclose(got, want, rtol=1e-12, atol=0, equal_nan=True)
        else:
            ok = np.array_equal(got, want)
        return [] if ok else [f"{path}: {got!r} != {want!r}"]
    if type(got) is not type(want):
        return [f"{path}: {type(got).__name__} != {type(want).__name__} ({got!r} vs {want!r})"]
    if isinstance(want, (list, tuple)):
        if len(got) != len(want):
            return [f"{path}: length {len(got)} != {len(want)}: {got!r} vs {want!r}"]
        return [m for i, (g, w) in enumerate(zip(got, want)) for m in same(g, w, f"{path}[{i}]")]
    if isinstance(want, dict):
        if set(got) != set(want):
            return [f"{path}: keys {sorted(got)} != {sorted(want)}"]
        return [m for k in want for m in same(got[k], want[k], f"{path}[{k}]")]
    if isinstance(want, float) and isinstance(got, float):
        return [] if got == want or abs(got - want) <= 1e-12 * abs(want) or got != got and want != want \
            else [f"{path}: {got!r} != {want!r}"]
    return [] if got == want else [f"{path}: {got!r} != {want!r}"]


def _fresh() -> None:
    """The user's names of the shell removed, as ``ip.reset()`` does without its
    ``gc.collect()`` (seconds per call once a test run has compiled many kernels)."""
    for k in [k for k in ip.user_ns if k not in _BASELINE]:
        del ip.user_ns[k]
    # in the shell's hidden names too, and the display hook's own last results: the hook
    # leaves ``_`` alone once ``_`` differs from what it last set there (it takes that for
    # the user's own assignment), so a session whose plain run ended on a value left the
    # fused run's ``_`` at '' (s62; IPython's DisplayHook.update_user_ns)
    for unders in ("_", "__", "___"):
        setattr(ip.displayhook, unders, "")
    ip.push({"_": "", "__": "", "___": ""}, interactive=False)


def _walkable(v: Any) -> bool:
    """Whether the leak walk may look inside ``v``: not an installed library's object (a
    Numba dispatcher's ``__dict__`` is not a mapping)."""
    return (type(v).__module__ or "").partition(".")[0] not in ("numba", "scipy", "matplotlib")


def play(name: str, fused: bool) -> list[dict[str, Any]]:
    """Every cell's outcome: error, printed text, displayed objects and the user's names."""
    _fresh()
    # NumPy's process-wide settings a session may change (print options, seterr): each run
    # starts from the same ones
    np.set_printoptions(**_PRINT)
    np.seterr(**_ERR)
    steps = []
    for k, (fuse, source) in enumerate(cells((SESSIONS / name).read_text())):
        with capture_output() as out:
            result = ip.run_cell((FUSE if fused and fuse else "") + source)
        err = result.error_in_exec or result.error_before_exec
        user = {n: v for n, v in ip.user_ns.items() if not n.startswith("_") and n not in _HIDDEN
                and not isinstance(v, types.ModuleType)}
        steps.append({
            "cell": k,
            "error": None if err is None else (type(err).__name__, str(err)),
            "stdout": _TIMING.sub("<timing>", out.stdout),
            "displayed": [o.data.get("text/plain") for o in out.outputs],
            "names": {n: fingerprint(v) for n, v in user.items()},
            "leaks": [p for n, v in user.items() if _walkable(v) for p in leaks(v, path=n)],
            "stderr": out.stderr,
        })
    return steps


def test_the_sessions_are_there():
    assert len(NAMES) >= 30
    assert all(any(f for f, _ in cells((SESSIONS / n).read_text())) for n in NAMES)   # each fuses a cell


@pytest.mark.parametrize("name", NAMES)
def test_a_session_with_fused_cells_is_a_plain_session(name):
    want = play(name, fused=False)
    got = play(name, fused=True)
    for w, g in zip(want, got):
        where = f"cell {w['cell']}"
        assert "Traceback" not in g["stderr"] or w["error"] is not None, (where, g["stderr"])
        assert g["error"] == w["error"], (where, g["error"], w["error"])
        assert g["stdout"] == w["stdout"], where
        assert g["displayed"] == w["displayed"], where
        assert g["leaks"] == [], (where, g["leaks"])
        assert sorted(g["names"]) == sorted(w["names"]), where
        diffs = [m for n in w["names"] for m in same(g["names"][n], w["names"][n], n)]
        assert diffs == [], (where, diffs)


def _plain_cell(source: str, ns: dict, name: str) -> None:
    """Run ``source`` as IPython runs a plain cell: compiled under a name whose lines
    ``linecache`` holds (what ``inspect.getsource`` of its functions reads)."""
    import linecache

    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    exec(compile(source, name, "exec"), ns)


def test_a_helper_from_an_earlier_plain_cell_runs_as_the_cell_does():
    # the helper's code was the plain cell's: scipy got the stand-in, isinstance(x,
    # np.ndarray) was False for a traced array, x.__class__ the stand-in's class
    from fusionlab.capture import capture
    from fusionlab.runtime.check import compare_values

    helper = ("import numpy as np\nfrom scipy import ndimage\n"
              "def smooth(a, s=1.0):\n    return ndimage.gaussian_filter(a, s) + a.mean()\n"
              "def kind(v):\n    return (isinstance(v, np.ndarray), type(v) is np.ndarray, v.__class__.__name__)\n"
              "class K:\n    def twice(self, v):\n        return ndimage.shift(v, 1, order=0) * 2\n"
              "def make(k):\n    def f(v):\n        return isinstance(v, np.ndarray), ndimage.shift(v, k, order=0)\n"
              "    return f\nclose = make(2)\n"   # a closure: its free variable k is its own cell's
              "lam = lambda v: (isinstance(v, np.ndarray), ndimage.shift(v, -1, order=0))\n")
    cell = ("img = np.eye(6) * 3\nout = smooth(img * 2)\nkinds = kind(img + 1)\nsh = K().twice(np.arange(4.0) + 1)\n"
            "isarr, shifted = close(np.arange(5.0) * 2)\nlam_isarr, lam_out = lam(np.arange(3.0) + 2)\n")
    results = []
    for fused in (False, True):
        ns: dict = {"__name__": "__main__"}
        _plain_cell(helper, ns, f"<plain-cell-{fused}>")
        if fused:
            capture(cell, ns)
        else:
            exec(cell, ns)
        results.append(ns)
    plain, got = results
    assert got["kinds"] == plain["kinds"] == (True, True, "ndarray")
    assert got["isarr"] is plain["isarr"] is True and got["lam_isarr"] is plain["lam_isarr"] is True
    for k in ("out", "sh", "shifted", "lam_out"):
        assert type(got[k]) is np.ndarray and compare_values(got[k], plain[k], k).ok, k
    assert leaks(got["smooth"], path="smooth") == []


def test_object_arrays_and_polynomials_hand_back_plain_arrays():
    from fusionlab.capture import capture

    ns: dict = {}
    capture("import numpy as np\nobj = np.empty(2, dtype=object)\nobj[0] = np.arange(3.0) * 2\nobj[1] = 'x'\n"
            "p = np.poly1d(np.array([1.0, 2.0]) * 3)\nq = np.polynomial.Polynomial(np.ones(2) + 1)\n", ns)
    assert type(ns["obj"][0]) is np.ndarray and ns["obj"][0].tolist() == [0.0, 2.0, 4.0] and ns["obj"][1] == "x"
    assert type(ns["p"].coeffs) is np.ndarray and ns["p"](1.0) == 9.0
    assert type(ns["q"].coef) is np.ndarray and ns["q"](2.0) == 6.0


def test_a_ufunc_into_a_plain_array_returns_that_array():
    # ``into += x`` on a function default (a plain ndarray) returned a new stand-in
    from fusionlab.capture import capture

    ns: dict = {"__name__": "__main__"}
    _plain_cell("import numpy as np\ndef acc(x, into=np.zeros(3)):\n    into += x\n    return into\n", ns, "<acc>")
    capture("r1 = acc(np.ones(3))\nr2 = acc(np.arange(3.0))\nsame = r1 is r2\n", ns)
    assert ns["same"] is True and type(ns["r1"]) is np.ndarray and ns["r1"].tolist() == [1.0, 2.0, 3.0]
