"""Round 5 of programs nobody here wrote: focused regressions for what the new programs
(``tests/data/unseen/u5_*.py``) and sessions (``s78``-``s95``) found. The programs and
sessions themselves run in ``test_unseen_programs.py`` and ``test_unseen_sessions.py``."""

from __future__ import annotations

import io
from contextlib import redirect_stdout

import numpy as np
import pytest

from fusionlab.capture import capture
from fusionlab.execute.check import compare_values, plain_namespace

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
