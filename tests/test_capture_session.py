"""After a capture the session holds exactly plain NumPy's objects (issue 13): generators,
arrays in containers, instances, closures, subclasses and scalars; a later *plain* cell
using them behaves as if no capture had happened."""

from __future__ import annotations

import builtins
import io
import types
from contextlib import redirect_stdout

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from fusionlab.capture import capture

from test_capture_idioms import assert_equal_values

# (what the captured cell builds, what the next plain cell does with it)
PIECES = [
    ("rng = np.random.default_rng({n})\nx = rng.random(5)\n", "r_rng = rng.random(3)\nr_x = x * 2\n"),
    ("g = np.random.default_rng({n})\ndraw = g.normal\n", "r_draw = draw(size=2)\nr_g = g.integers(0, 9, 4)\n"),
    ("pairs = [[np.ones(3) * {n}], [np.arange(2.0)]]\n", "r_pairs = pairs[0][0] + pairs[1][0].sum()\n"),
    ("d = {{'u': np.arange(4.0) * {n}, 'v': [np.zeros(2), (np.ones(1),)]}}\n",
     "r_d = d['u'] + 1\nd['v'][0][0] = 5\nr_v = d['v'][1][0] * 3\n"),
    ("t = (np.ones(2), 3.0, np.float64(2) * np.ones(1) + {n})\n", "r_t = t[0] + t[2]\n"),
    ("s = {{float(np.arange(3.0).sum()), np.arange(3.0)[1] + {n}}}\n", "r_s = sorted(s)\n"),
    ("from dataclasses import dataclass\n@dataclass\nclass P:\n    x: object\n    y: object = None\n"
     "p = P(np.ones(2) * {n}, [np.zeros(1)])\n", "r_p = p.x + p.y[0]\n"),
    ("class Q:\n    __slots__ = ('v',)\n    def __init__(self):\n        self.v = np.arange(3.0) + {n}\nq = Q()\n",
     "r_q = q.v * 2\n"),
    ("class Box:\n    scale = np.ones(2) * {n}\n    def __init__(self):\n        self.data = {{'w': np.zeros(3)}}\nbox = Box()\n",
     "r_box = box.data['w'] + Box.scale.sum()\n"),
    ("def make(a):\n    k = a * 2\n    return lambda: k + 1\nf = make(np.ones(3) * {n})\n", "r_f = f()\n"),
    ("def dflt(b=np.arange(3.0) + {n}, *, c=np.ones(1)):\n    return b * 2 + c\n", "r_dflt = dflt()\n"),
    ("def h():\n    import numpy as np2\n    return np2.ones(2) * {n}\nh0 = h()\n", "r_h = h()\nr_h0 = h0 + 1\n"),
    ("class Sub(np.ndarray):\n    pass\nm = (np.arange(4.0) * {n}).view(Sub)\n", "r_m = m * 2\n"),
    ("sc = np.arange(5.0).sum() + {n}\ni = np.arange(5)[2]\nb = np.arange(3.0)[0] > -1\n",
     "r_sc = sc * 2\nr_i = i + 1\nr_b = bool(b)\n"),
    ("from numpy import zeros as Z, linspace\nfrom numpy.random import default_rng\nL = linspace(0, 1, 3) * {n}\n",
     "r_Z = Z(2)\nr_rng2 = default_rng(3).random(2)\nr_L = L + 1\n"),
    ("import numpy.random as npr\nnpr.seed({n})\nu = npr.random(3)\n", "r_npr = npr.random(2)\n"),
    ("fns = [lambda: np.ones(2) * {n}, np.sqrt]\n", "r_fns = fns[0]() + fns[1](4.0)\n"),
    ("ns_obj = __import__('types').SimpleNamespace(a=np.ones(2) * {n}, b=[np.zeros(1)])\n",
     "r_ns_obj = ns_obj.a + ns_obj.b[0]\n"),
]


@st.composite
def sessions(draw: st.DrawFn) -> tuple[str, str]:
    chosen = draw(st.lists(st.integers(0, len(PIECES) - 1), min_size=1, max_size=6, unique=True))
    n = draw(st.integers(1, 5))
    first = "import numpy as np\n" + "".join(PIECES[k][0].format(n=n) for k in chosen)
    second = "".join(PIECES[k][1] for k in chosen)
    return first, second


def leaks(x, seen=None, path="") -> list[str]:
    """Paths to any of fusionlab's objects reachable from ``x``."""
    seen = set() if seen is None else seen
    # the builtins' dict (``exec`` puts it in a namespace it is given) holds IPython's shell,
    # whose registry of magics holds fusionlab's own: not an object of the user's
    if id(x) in seen or x is vars(builtins) or isinstance(
            x, (str, bytes, int, float, np.ndarray, np.generic, types.ModuleType)):
        return []
    seen.add(id(x))
    if (type(x).__module__ or "").startswith("fusionlab"):
        return [path]
    found: list[str] = []
    if isinstance(x, (list, tuple, set, frozenset)):
        for i, y in enumerate(x):
            found += leaks(y, seen, f"{path}[{i}]")
    elif isinstance(x, dict):
        for k, y in x.items():
            found += leaks(k, seen, f"{path}.key") + leaks(y, seen, f"{path}[{k!r}]")
    elif isinstance(x, types.FunctionType):
        for c in x.__closure__ or ():
            found += leaks(c.cell_contents, seen, f"{path}.<closure>")
        found += leaks(x.__defaults__, seen, f"{path}.__defaults__") + leaks(x.__kwdefaults__, seen, path)
    elif isinstance(x, type):
        found += leaks({k: v for k, v in vars(x).items() if not k.startswith("__")}, seen, path)
    elif hasattr(x, "__dict__") or hasattr(type(x), "__slots__"):
        attrs = dict(getattr(x, "__dict__", {}))
        attrs.update({s: getattr(x, s) for s in getattr(type(x), "__slots__", ()) if hasattr(x, s)})
        found += leaks(attrs, seen, path)
    return found


def both_ways(first: str, second: str) -> tuple[dict, dict]:
    plain: dict = {}
    captured: dict = {}
    with redirect_stdout(io.StringIO()):
        exec(first, plain)
        exec(second, plain)
        capture(first, captured)
        assert not [k for k, v in captured.items() if k != "__builtins__" for p in leaks(v, path=k)], \
            [p for k, v in captured.items() if k != "__builtins__" for p in leaks(v, path=k)]
        exec(second, captured)
    return plain, captured


def assert_same_session(plain: dict, captured: dict) -> None:
    assert set(plain) == set(captured)
    for k, v in plain.items():
        if k.startswith("__") or isinstance(v, types.ModuleType):
            continue
        if isinstance(v, np.random.Generator):
            assert type(captured[k]) is np.random.Generator
            assert captured[k].bit_generator.state == v.bit_generator.state, k
            continue
        assert_equal_values(captured[k], v, k)
        if type(v).__name__ in ("P", "Q", "Box", "SimpleNamespace"):
            assert leaks(captured[k]) == []


@settings(max_examples=60)
@given(sessions())
def test_session_after_a_capture_is_plain_numpys(cell):
    first, second = cell
    state = np.random.get_state()   # the legacy global generator: both runs start from it
    plain: dict = {}
    with redirect_stdout(io.StringIO()):
        exec(first, plain)
        exec(second, plain)
    legacy_plain = np.random.get_state()[1].copy()
    np.random.set_state(state)
    _, captured = both_ways(first, second)
    legacy_captured = np.random.get_state()[1].copy()
    np.testing.assert_array_equal(legacy_captured[:8], legacy_plain[:8])
    assert_same_session(plain, captured)


def test_every_piece_together():
    first = "import numpy as np\n" + "".join(a.format(n=2) for a, _ in PIECES)
    second = "".join(b for _, b in PIECES)
    plain, captured = both_ways(first, second)
    assert_same_session(plain, captured)
    assert type(captured["rng"]) is np.random.Generator and type(captured["m"]).__name__ == "Sub"
    assert type(captured["sc"]) is np.float64 and type(captured["i"]) is np.int64 and type(captured["b"]) is np.bool_
    assert type(captured["r_rng"]) is np.ndarray and captured["Z"] is np.zeros


def test_a_function_defined_in_a_captured_cell_imports_real_numpy_later():
    ns: dict = {}
    capture("def fresh():\n    import numpy\n    return numpy.zeros(2)\n", ns)
    exec("a = fresh()\nimport numpy\nsame = numpy is __import__('numpy')\n", ns)
    assert type(ns["a"]) is np.ndarray and ns["same"]


def test_an_interrupted_cell_leaves_plain_numpy_values():
    ns: dict = {}
    source = (
        "import numpy as np\nrng = np.random.default_rng(0)\nkept = [np.ones(3)]\nx = np.arange(5.0)\n"
        "for i in range(10):\n    x = x * 2\n    if i == 3:\n        raise KeyboardInterrupt\n"
    )
    try:
        capture(source, ns)
    except KeyboardInterrupt:
        pass
    else:
        raise AssertionError("the interrupt must reach the caller")
    assert type(ns["rng"]) is np.random.Generator and type(ns["kept"][0]) is np.ndarray
    assert type(ns["x"]) is np.ndarray and ns["x"].tolist() == [16.0 * k for k in range(5)]
    # capture's hooked builtins are gone: the real ones stay, as a plain exec leaves them
    assert ns["__builtins__"] is vars(__import__("builtins")) and ns["np"] is np
