"""fusionlab.runtime.check: structural comparison with plain NumPy, tolerances from
reordering, and the commands that use it (verify, run --check) catching a wrong capture."""

from __future__ import annotations

import io
import json
import textwrap
from contextlib import redirect_stdout
from dataclasses import dataclass

import numpy as np
import pytest

from fusionlab.capture import capture
from fusionlab.cli import main
from fusionlab.runtime.check import (
    ULPS, CheckReport, check_namespace, compare_values, lookup, plain_namespace, reduction_terms,
    tolerance,
)
from fusionlab.pipeline.runner import run

from test_numba import CACHE


def _paths(report: CheckReport) -> list[str]:
    return [m.path for m in report.mismatches]


def test_arrays_scalars_shapes_and_dtypes():
    assert compare_values(np.arange(5), np.arange(5)).ok
    r = compare_values(np.arange(5), np.arange(1, 6))
    assert not r.ok and r.mismatches[0].max_abs_error == 1.0 and "integer" in r.mismatches[0].reason
    r = compare_values(np.zeros(3), np.zeros(4))
    assert not r.ok and r.mismatches[0].max_abs_error is None and "shape (3,)" in r.mismatches[0].reason
    r = compare_values(np.zeros(3, np.float64), np.zeros(3, np.float32))
    assert not r.ok and "dtype float64 where NumPy gives float32" in r.mismatches[0].reason
    assert compare_values(np.float64(2.0), 2.0).ok      # a Python float is not typed by NumPy
    assert not compare_values(np.float32(2.0), np.float64(2.0)).ok
    assert compare_values(np.array([np.nan, np.inf, 1.0]), np.array([np.nan, np.inf, 1.0])).ok
    assert not compare_values(np.array([np.nan, 1.0]), np.array([1.0, 1.0])).ok
    assert not compare_values(np.array([np.inf]), np.array([-np.inf])).ok
    assert compare_values(np.array([True, False]), np.array([True, False])).ok


def test_a_0d_array_is_not_a_numpy_scalar():
    # np.asarray(x.mean()) is a 0-d ndarray: a capture that handed back the np.float64 was
    # passed as equal (``+=`` then rebinds instead of writing, and it hashes)
    r = compare_values(np.float64(1.5), np.array(1.5))
    assert not r.ok and "a float64 where NumPy gives a 0-d ndarray" in r.mismatches[0].reason
    assert not compare_values(np.array(2), 2).ok
    assert compare_values(np.array(1.5), np.array(1.5)).ok and compare_values(1.5, np.float64(1.5)).ok


@dataclass
class Particles:
    pos: np.ndarray
    name: str


class Plain:
    def __init__(self, x: np.ndarray) -> None:
        self.x = x


class Opaque:
    __slots__ = ()


def test_containers_dataclasses_and_objects_structurally():
    a = {"u": np.ones(3), "v": [np.zeros(2), (1, 2.0)], "p": Particles(np.arange(3.0), "p")}
    b = {"u": np.ones(3), "v": [np.zeros(2), (1, 2.0)], "p": Particles(np.arange(3.0), "p")}
    r = compare_values(a, b, "state")
    assert r.ok and r.compared == 6
    b["v"][0][1] = 5.0
    b["p"].pos[2] = 7.0
    assert _paths(compare_values(a, b, "state")) == ["state['v'][0]", "state['p'].pos"]
    assert "keys" in compare_values({"a": 1}, {"b": 1}).mismatches[0].reason
    assert "list of 1" in compare_values([1], [1, 2]).mismatches[0].reason
    assert "a tuple" in compare_values((1,), [1]).mismatches[0].reason
    # objects: by their attributes, by ==, or skipped with a reason — never an infinite error
    assert compare_values(Plain(np.ones(2)), Plain(np.ones(2))).ok
    assert _paths(compare_values(Plain(np.ones(2)), Plain(np.zeros(2)), "o")) == ["o.__dict__['x']"]
    r = compare_values(Opaque(), Opaque(), "o")
    assert r.ok and r.skipped[0].reason == "a Opaque compares by identity only"
    r = compare_values({"f": len, "m": np, "c": Plain, "lam": lambda: 1}, {"f": len, "m": np, "c": Plain,
                                                                          "lam": lambda: 2})
    assert r.ok and sorted(s.reason for s in r.skipped) == ["a class is not data", "a function is not data",
                                                             "a function is not data", "a module is not data"]
    assert all(m.max_abs_error != float("inf") for m in compare_values([np.ones(2), "x"], [None, "y"]).mismatches)


def test_generators_by_their_state():
    g, h = np.random.default_rng(3), np.random.default_rng(3)
    assert compare_values(g, h).ok
    h.random(2)
    r = compare_values(g, h, "rng")
    assert not r.ok and r.mismatches[0].path.startswith("rng.state")
    assert compare_values(np.random.RandomState(1), np.random.RandomState(1)).ok
    assert not compare_values(np.ones(3), np.random.default_rng(0)).ok   # a stand-in is not a Generator


def test_tolerances_are_relative_and_follow_the_reordering():
    # issue 13: an n-body energy near 9e17 "failed" by 96 under an absolute 1e-9
    assert compare_values(np.float64(9e17 + 96), np.float64(9e17), terms=1000).ok
    # but a float32 difference of 4.6e-05 on values near 1 is not float32 rounding
    assert not compare_values(np.float32(1.0) + np.float32(4.6e-5), np.float32(1.0)).ok
    t = tolerance(np.float32, terms=4000, magnitude=10.0)
    eps = float(np.finfo(np.float32).eps)
    assert t.rtol == pytest.approx((ULPS + 4000) * eps) and t.atol == pytest.approx(t.rtol * 10.0)
    # a sum of n terms reordered: its error is allowed to grow with n
    x = np.random.default_rng(0).random(100_000).astype(np.float32)
    reordered = np.float32(np.sum(x[::2], dtype=np.float32) + np.sum(x[1::2], dtype=np.float32))
    assert compare_values(reordered, np.sum(x), terms=x.size).ok
    assert tolerance(np.int32, terms=10).rtol == 0.0
    # a cancelled value is held to the magnitude of the array it is in
    assert compare_values(np.array([1e6, 1e-9]), np.array([1e6, 0.0]), terms=10).ok


def test_namespace_labels_and_missing_variables():
    ns = {"pairs": [np.ones(2), np.zeros(2)], "x": 1.0}
    assert lookup(ns, "pairs[1]") is ns["pairs"][1]
    r = check_namespace({"pairs[1]": np.zeros(2), "y": 1}, ns)
    assert _paths(r) == ["y"] and r.mismatches[0].reason == "plain NumPy has no such variable"


def test_reduction_terms_from_the_program():
    with redirect_stdout(io.StringIO()):
        cap = capture("import numpy as np\na = np.ones((30, 40))\nb = a.sum(axis=0)\nc = a.sum()\n", {})
    assert reduction_terms(cap.batches) == 1200


WRONG = "import numpy as np\na = np.zeros((4, 4))\na[0, :] = 1.0\n"   # what a broken capture records
RIGHT = "import numpy as np\na = np.zeros((4, 4))\nnp.fill_diagonal(a, 1.0)\n"


def test_run_check_catches_a_capture_that_records_something_else():
    # a capture whose bytecode computes something else than its source (as the ignored
    # ``strides`` assignment of issue 13 did): the replay agrees with itself, plain NumPy not
    with redirect_stdout(io.StringIO()):
        cap = capture(WRONG, {})
    cap.source = RIGHT
    r = run(cap, "greedy", check=True, cache=CACHE, min_size=0)
    assert r.max_abs_error == 0.0          # against fusionlab's own replay: nothing to see
    assert r.check is not None and not r.check.ok and _paths(r.check) == ["a"]


def test_verify_catches_a_wrong_capture(tmp_path, monkeypatch, capsys):
    import fusionlab.capture as fc

    real = fc.capture
    monkeypatch.setattr(fc, "capture", lambda source, ns=None, **kw: real(WRONG, ns, **kw))
    path = tmp_path / "diag.py"
    path.write_text(RIGHT)
    assert main(["verify", str(path), "--format", "json"]) == 1
    out = json.loads(capsys.readouterr().out)
    assert {m["variable"] for m in out["mismatches"]} == {"a"}
    assert all(m["max_abs_error"] is None or m["max_abs_error"] < float("inf") for m in out["mismatches"])


def test_verify_compares_containers_and_skips_functions(tmp_path, capsys):
    path = tmp_path / "prog.py"
    path.write_text(textwrap.dedent("""\
        import numpy as np
        fields = {"u": np.ones(8), "v": np.arange(8.0) * 2}
        pairs = [np.ones(3), np.zeros(3)]
        def energy(x):
            return float(np.sum(x * x))
        e = energy(fields["v"])
        """))
    assert main(["verify", str(path), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["mismatches"] == []
    assert {"variable": "energy", "reason": "a function is not data"} in out["skipped"]
    assert out["compared"] >= 4


def test_verify_leaves_out_what_a_star_import_binds(tmp_path, capsys):
    # `from numpy import *` binds ~600 functions, classes and objects: not the program's
    # values, so not listed as "not compared"; its own function still is, its arrays compared
    path = tmp_path / "prog.py"
    path.write_text(textwrap.dedent("""\
        from numpy import *
        from numpy.linalg import norm
        def f(v):
            return v * 2
        x = linspace(0, 2 * pi, 50)
        y = f(sin(x))
        n = norm(y)
        """))
    assert main(["verify", str(path), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["mismatches"] == [] and out["skipped"] == [{"variable": "f", "reason": "a function is not data"}]
    assert out["variables"] < 20 and out["compared"] >= 3
    # the text lists at most SHOWN_SKIPPED values it did not compare, then how many more
    path.write_text("import numpy as np\n" + "".join(f"def f{k}(v):\n    return v\n" for k in range(14))
                    + "x = np.ones(3)\n")
    assert main(["verify", str(path)]) == 0
    text = capsys.readouterr().out
    assert text.count("not compared: f") == 10 and "not compared: 4 more" in text


def test_verify_compares_instances_of_classes_the_program_defines(tmp_path, capsys):
    # each run of the source creates its own namedtuple / dataclass / class: the plain run's
    # Stats and the captured run's are different objects with the same module and name
    path = tmp_path / "prog.py"
    path.write_text(textwrap.dedent("""\
        import numpy as np
        from collections import namedtuple
        from dataclasses import dataclass
        Stats = namedtuple("Stats", ["mean", "hist"])
        @dataclass
        class Run:
            values: np.ndarray
        class Plain:
            def __init__(self, a):
                self.a = a
        x = np.linspace(0, 1, 20)
        st = Stats(x.mean(), np.histogram(x, bins=4)[0])
        run = Run(np.sqrt(x))
        obj = Plain(x * 2)
        """))
    assert main(["verify", str(path), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["mismatches"] == [] and out["compared"] >= 5


def test_a_class_of_the_same_name_elsewhere_is_still_another_type():
    A = type("A", (), {"__module__": "somewhere"})
    B = type("A", (), {"__module__": "somewhere"})
    assert not compare_values(A(), B()).ok
    a = {"__name__": "__main__"}
    b = {"__name__": "__main__"}
    src = "from collections import namedtuple\nS = namedtuple('S', 'p q')\ns = S(1.0, 2.0)\nt = S(1.0, 3.0)\n"
    exec(src, a)
    exec(src, b)
    assert compare_values(a["s"], b["s"]).ok
    assert _paths(compare_values(a["t"], b["s"])) == ["value[1]"]


def test_run_check_passes_against_plain_numpy(tmp_path, capsys):
    path = tmp_path / "prog.py"
    path.write_text("import numpy as np\nx = np.arange(100000.0)\ny = np.sqrt(x) * 2 + x\ns = y.sum()\n")
    assert main(["run", str(path), "--check"]) == 0
    out = capsys.readouterr().out
    assert "against plain NumPy: 3 values compared, 0 differ" in out


ERRSTATE = textwrap.dedent("""\
    import numpy as np
    x = np.array([1.0, np.nan, -2.0, np.inf, -np.inf, 0.0] * 4)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = np.linspace(-1, 1, 24) / x
        lg = np.log(x)
    m = np.maximum(x, 0.5)
    """)


def test_run_check_honours_the_programs_errstate_and_equal_infinities_do_not_differ(tmp_path, capsys):
    path = tmp_path / "prog.py"
    path.write_text(ERRSTATE)
    assert main(["run", str(path), "--check", "--driver", "blocks"]) == 0
    out, err = capsys.readouterr()
    assert "warning" not in err.lower()
    assert "against fusionlab's reference executor: 0\n" in out


def test_verify_replays_without_the_programs_silenced_warnings(tmp_path, capfd):
    path = tmp_path / "prog.py"
    path.write_text(ERRSTATE)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")   # a warning from the replay would fail verify
        assert main(["verify", str(path)]) == 0
    assert "Warning" not in capfd.readouterr().err


def test_plain_namespace_runs_the_source_plainly():
    ns = plain_namespace("import numpy as np\nprint('hi')\nz = np.ones(2) * 3\n")
    assert isinstance(ns["z"], np.ndarray) and ns["z"].tolist() == [3.0, 3.0]


def test_a_scalar_summary_is_compared_at_the_scale_of_the_programs_arrays():
    # a residual max|A x - b| is rounding noise: 4.4e-16 against 1.1e-15 is a relative
    # difference of 0.4, but an absolute one far below what x's rounding allows
    want = {"x": np.array([2.0, -7.5, 1.0]), "residual": 1.1e-15}
    got = {"x": want["x"] * (1 + 1e-16), "residual": 4.4e-16}
    assert check_namespace(got, want).ok
    alone = check_namespace({"residual": 4.4e-16}, {"residual": 1.1e-15})
    assert not alone.ok            # no arrays: the scalar's own magnitude is the scale
    wrong = check_namespace({**got, "residual": 1e-9}, want)
    assert [m.path for m in wrong.mismatches] == ["residual"]
    # an array keeps its own magnitude: a small array beside a big one is still checked
    small = check_namespace({"big": np.array([1e9]), "v": np.array([1e-3 + 1e-12])},
                            {"big": np.array([1e9]), "v": np.array([1e-3])})
    assert [m.path for m in small.mismatches] == ["v"]


def test_none_is_compared_not_skipped():
    r = compare_values({"bad": None}, {"bad": None})
    assert r.ok and r.skipped == [] and r.compared == 1
    assert _paths(compare_values({"bad": 0.0}, {"bad": None})) == ["value['bad']"]


def test_a_cancelled_reduction_to_an_array_is_compared_at_the_programs_scale():
    # logistic regression near convergence: grad = X.T @ (p - y) / n sums 60 terms of size
    # ~1 to ~1e-5; the kernel's order moved one value by 1.85e-17 (relative 1.3e-12)
    want = {"X": np.array([[1.0, 2.5], [1.0, -0.7]]), "grad": np.array([1.4e-5, -2.0e-6])}
    got = {"X": want["X"], "grad": want["grad"] + np.array([1.85e-17, 0.0])}
    assert check_namespace(got, want, terms=60).ok
    assert not check_namespace(got, want, terms=1).ok       # no reduction: its own magnitude
    wrong = {"X": want["X"], "grad": want["grad"] + np.array([1e-9, 0.0])}
    assert [m.path for m in check_namespace(wrong, want, terms=60).mismatches] == ["grad"]


def test_nested_labels_name_items_of_containers():
    ns = {"result": ([np.zeros(2), np.ones(2)], {"u": np.arange(3)}, 1.5)}
    assert lookup(ns, "result[0][1]") is ns["result"][0][1]
    assert lookup(ns, "result[1]['u']") is ns["result"][1]["u"]
    with pytest.raises(KeyError):
        lookup(ns, "other[0]")


def test_object_arrays_compare_element_by_element():
    # np.array_equal on arrays of arrays raised "truth value ... is ambiguous" from the check
    want = np.array([np.arange(2.0), np.arange(3.0)], dtype=object)
    got = np.array([np.arange(2.0), np.arange(3.0)], dtype=object)
    assert compare_values(got, want).ok
    got[1] = np.array([0.0, 1.0, 5.0])
    r = compare_values(got, want, "obj")
    assert not r.ok and r.mismatches[0].path == "obj[1]"
    assert not compare_values(np.arange(2.0), want).ok
    assert compare_values(np.array([1, "a", None], dtype=object), np.array([1, "a", None], dtype=object)).ok


def test_a_difference_from_numpys_zeros_is_said_in_words_not_as_an_overflow() -> None:
    import math
    import warnings

    from fusionlab.runtime.check import compare_values

    with warnings.catch_warnings():
        warnings.simplefilter("error")   # the old division by the tiny float overflowed, with a warning
        only_zeros = compare_values(np.array([1.0, 3.0]), np.array([1.0, 0.0]), "v").mismatches
        mixed = compare_values(np.array([1.0, 0.0, 3.0]), np.array([1.0, 2.0, 0.0]), "w").mismatches
    assert "NumPy's values there are 0" in only_zeros[0].reason and only_zeros[0].max_rel_error is None
    # relative to the nonzero expected values only: |0 - 2| / 2
    assert "(relative 1)" in mixed[0].reason and mixed[0].max_rel_error == 1.0
    assert all(m.max_abs_error is None or math.isfinite(m.max_abs_error) for m in only_zeros + mixed)
