"""Capture records the same bytecode as before: a digest of every workload's and corpus
program's text (tiny preset) against ``tests/data/capture_golden.json``.

Speed work on capture must leave its programs unchanged. A change that is meant to change
them (a new opcode recorded, a naming rule) updates the file, in the same commit, with
``python tests/test_capture_golden.py --update`` (from the repository root), and says why.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path

import pytest

from fusionlab.capture import capture
from fusionlab.workloads import ALL_WORKLOADS

GOLDEN = Path(__file__).with_name("data") / "capture_golden.json"

# the explorer benchmark's heat cell (slicing, an in-place update, a sum leaving the program)
HEAT = """\
import numpy as np
n = 40
u = np.zeros((n, n))
u[0, :] = 100.0
for it in range(3):
    u[1:-1, 1:-1] = u[1:-1, 1:-1] + 0.1 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:]
                                           - 4 * u[1:-1, 1:-1])
total = float(u.sum())
"""


def sources() -> dict[str, str]:
    """Every program the digest covers, by name."""
    out = {name: w.script("tiny") for name, w in ALL_WORKLOADS.items()}
    out["heat_cell"] = HEAT
    return out


#: a float literal with more digits than its value's last few bits may change
_FLOAT = re.compile(r"(?<![\w.])-?\d+\.\d{9,}(?:e[-+]?\d+)?")


def _rounded(text: str) -> str:
    """``text`` with long float literals to 12 significant digits: a literal the program
    computed with NumPy's math (Black-Scholes' ``strike * np.exp(-rate * t)``) differs in its
    last bit between processors (NumPy's SIMD ``exp`` on AVX-512 and on AVX2), and the digest
    is of what capture records, not of the processor's libm.

    >>> _rounded("MULTIPLY t1, t0, 9.986853637633885")
    'MULTIPLY t1, t0, 9.98685363763'
    """
    return _FLOAT.sub(lambda m: f"{float(m.group()):.12g}", text)


def digest(source: str) -> dict[str, object]:
    """The batches' sizes and a digest of their text (long float literals rounded)."""
    batches = capture(source).batches
    text = _rounded("\n--- batch ---\n".join(b.to_text() for b in batches))
    return {"instructions": [len(b) for b in batches], "sha256": hashlib.sha256(text.encode()).hexdigest()}


def _golden() -> dict[str, dict[str, object]]:
    return json.loads(GOLDEN.read_text())


@pytest.mark.parametrize("name", sorted(sources()))
def test_capture_records_the_same_bytecode(name: str) -> None:
    want = _golden().get(name)
    assert want is not None, f"{name} has no digest: run python tests/test_capture_golden.py --update"
    assert digest(sources()[name]) == want


def test_every_golden_program_still_exists() -> None:
    assert sorted(_golden()) == sorted(sources())


if __name__ == "__main__":
    if sys.argv[1:] != ["--update"]:
        sys.exit("usage: python tests/test_capture_golden.py --update")
    GOLDEN.write_text(json.dumps({k: digest(v) for k, v in sorted(sources().items())}, indent=1) + "\n")
    print(f"wrote {GOLDEN}")
