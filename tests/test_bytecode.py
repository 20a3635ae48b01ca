"""The IR and its text format: views, overlap, round trip, errors with line and column."""

from __future__ import annotations

import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from fusionlab import Base, BytecodeError, Instruction, Literal, Opcode, OpFamily, Program, ProgramError, parse
from fusionlab.ir.examples import fig3, fig3_text
from fusionlab.ir.text import format_program, format_view

from strategies import programs

G = Base("G", "float64", (6, 7))


def _index(draw: st.DrawFn, n: int):
    kind = draw(st.integers(0, 3))
    if kind == 0:
        return draw(st.integers(-n, n - 1))
    start = draw(st.none() | st.integers(-n - 2, n + 2))
    stop = draw(st.none() | st.integers(-n - 2, n + 2))
    step = draw(st.none() | st.sampled_from([1, 2, 3, -1, -2]))
    return slice(start, stop, step)


@st.composite
def views(draw: st.DrawFn, base: Base = G):
    index = tuple(_index(draw, n) for n in base.shape[: draw(st.integers(1, base.ndim))])
    return base[index], index


@given(views(), views())
def test_overlap_matches_enumeration(a, b):
    (v, _), (w, _) = a, b
    expected = bool(np.intersect1d(v.indices(), w.indices()).size) if v.size and w.size else False
    assert v.overlaps(w) is expected
    assert w.overlaps(v) is expected


@given(views())
def test_view_addresses_what_numpy_slicing_addresses(a):
    v, index = a
    data = np.arange(G.size).reshape(G.shape)
    np.testing.assert_array_equal(v.indices(), data[index])


@given(views())
def test_view_text_round_trips(a):
    v, _ = a
    text = f"ARRAY G float64[6,7]\nCOPY {format_view(v)}, 1"
    assert parse(text)[0].outputs[0] == v


def test_raw_views_round_trip():
    transposed = __import__("fusionlab").View(G, (7, 6), (1, 7), 0)
    text = format_view(transposed)
    assert text == "G{offset=0, shape=(7,6), strides=(1,7)}"
    assert parse(f"ARRAY G float64[6,7]\nCOPY {text}, 0")[0].outputs[0] == transposed


def test_families_are_disjoint_and_cover_every_opcode():
    fams = [OpFamily.ELEMENTWISE, OpFamily.REDUCTION, OpFamily.SCAN, OpFamily.GENERATOR, OpFamily.FILTER,
            OpFamily.GATHER, OpFamily.CONTRACTION, OpFamily.HISTOGRAM, OpFamily.OPAQUE, OpFamily.SYSTEM]
    assert sum(len(f) for f in fams) == len(Opcode)
    assert frozenset().union(*fams) == frozenset(Opcode)
    assert Opcode.ADD in OpFamily.BINARY and Opcode.SQRT in OpFamily.UNARY and Opcode.WHERE in OpFamily.TERNARY


def test_fig3b_parses_as_printed():
    p = fig3()
    assert len(p) == 17
    assert [i.opcode.name for i in p][:11] == [
        "COPY", "COPY", "COPY", "COPY", "ADD", "COPY", "ADD", "COPY", "MULTIPLY", "MAXIMUM", "MINIMUM",
    ]
    assert [i.opcode.name for i in p][11:] == ["DEL", "DEL", "DEL", "DEL", "SYNC", "DEL"]
    D = p.base("D")
    assert p[9].outputs == (D[1:],) and p[9].inputs[1] == p.base("E")[1:]
    assert p[0].inputs == (Literal(0),)


def test_fig3_round_trips():
    p = fig3()
    assert parse(format_program(p)) == p
    assert parse(format_program(p, numbers=True)) == p


@given(programs(max_size=12))
def test_random_programs_round_trip(p):
    assert parse(format_program(p)) == p


def test_literals_keep_their_type_and_value():
    p = parse("ARRAY A float64[2]\nADD A, A, 1\nADD A, A, 1.0\nADD A, A, nan\nADD A, A, -inf\nLESS A, A, True")
    assert [i.inputs[1] for i in p] == [Literal(1), Literal(1.0), Literal(float("nan")), Literal(float("-inf")), Literal(True)]
    assert Literal(1) != Literal(1.0) and Literal(1) != Literal(True)
    assert parse(format_program(p)) == p


def test_keyword_operands_and_aliases():
    p = parse("ARRAY A float64[3,4]\nARRAY r float64[4]\nSUM r, A, axis=0\nOPAQUE A, A, r, name=\"np.sort\"")
    assert p[0].opcode is Opcode.ADD_REDUCE and p[0].attr("axis") == 0
    assert p[1].attr("name") == "np.sort"
    assert parse(format_program(p)) == p


@pytest.mark.parametrize(
    "text, line, column, message",
    [
        ("ARRAY A float64[4]\nADD A, A, B", 2, 11, "array B is not declared"),
        ("ARRAY A float64[4]\nFROB A, A", 2, 1, "unknown opcode 'FROB'"),
        ("ARRAY A float64[4]\nADD A A", 2, 7, "expected ',' between operands"),
        ("ARRAY A float64[4]\nADD A, A[1:", 2, 12, "expected ',' or ']'"),
        ("ARRAY A float64[4]\nADD A, A[9], 1", 2, 9, "out of bounds"),
        ("ARRAY A float64[4\n", 1, 18, "expected ',' or ']'"),
        ("ARRAY A floaty[4]", 1, 9, "unknown dtype 'floaty'"),
        ("ARRAY A float64[4]\nARRAY A float64[4]", 2, 7, "declared twice"),
        ("ARRAY A float64[4]\nADD A, A, $", 2, 11, "unexpected character '$'"),
        ("ARRAY D float64[5]\nADD D[1:], D[:-1], 1", 2, 1, "not data-parallel (Def. 11)"),
        ("ARRAY A float64[4]\nARRAY B float64[5]\nADD A, A, B", 3, 1, "does not broadcast"),
        ("ARRAY A float64[4]\nADD A, A", 2, 1, "takes 2 input operand(s)"),
        ("ARRAY A float64[4]\nDEL A\nCOPY A, 1", 3, 6, "used after its DEL on line 2"),
        ("ARRAY A float64[4]\nDEL A[1:]", 2, 1, "applies to a whole array"),
        ("ARRAY A float64[4]\nCOPY 1, A", 2, 6, "the first operand is the output"),
        ("ARRAY A float64[4]\nADD A, A, 1, axis=0", 2, 1, "does not take axis="),
    ],
)
def test_malformed_lines_name_line_and_column(text, line, column, message):
    with pytest.raises(BytecodeError) as info:
        parse(text)
    err = info.value
    assert (err.line, err.column) == (line, column), str(err)
    assert message in err.message
    assert str(err).startswith(f"line {line}, column {column}: ")
    assert err.excerpt().splitlines()[1] == " " * (column - 1) + "^"


def test_programs_built_in_python_are_checked():
    D = Base("D", "float64", (5,))
    bad = Instruction(Opcode.ADD, (D[1:],), (D[:-1], Literal(1)))
    with pytest.raises(ProgramError, match="instruction 1: ADD is not data-parallel"):
        Program((D,), (bad,))
    A = Base("A", "float64", (4,))
    with pytest.raises(ProgramError, match="array A is not declared"):
        Program((D,), (Instruction(Opcode.COPY, (A.view(),), (Literal(0),)),))


def test_signature_ignores_names():
    renamed = re.sub(r"\bA\b", "Q", fig3_text())
    assert parse(renamed) != fig3() and parse(renamed).signature() == fig3().signature()


@pytest.mark.parametrize("text, message", [
    ('CONTRACT C, A, B, subscripts="ij,jk"', "explicit form"),
    ('CONTRACT C, A, B, subscripts="ii,jk->ik"', "distinct letters"),
    ('CONTRACT C, A, B, subscripts="ij,jk->iz"', "every output letter"),
    ('CONTRACT C, A, B, subscripts="ijk,jk->ik"', "names 3"),
    ('CONTRACT C, A, B, subscripts="ij,kj->ik"', "extents 4 and 5"),
    ('CONTRACT C, A, B, subscripts="ij,jk->ki"', "should be (5, 3)"),
    ("CONTRACT C, A, B", "subscripts="),
    ('CONTRACT C, A, 2, subscripts="ij,jk->ik"', "two arrays"),
])
def test_malformed_contractions_say_how_to_fix_them(text: str, message: str) -> None:
    head = "ARRAY A float64[3,4]\nARRAY B float64[4,5]\nARRAY C float64[3,5]\n"
    with pytest.raises(Exception, match=re.escape(message)):
        parse(head + text + "\n")


def test_a_contraction_is_einsum_of_its_operands() -> None:
    from fusionlab.runtime import run_reference

    p = parse("ARRAY A float64[3,4]\nARRAY C float64[3,3]\nRANDOM A, seed=1\n"
              'CONTRACT C, A[:, ::-1], A, subscripts="ij,kj->ik"\nSYNC C\n')
    a = np.random.default_rng(1).random((3, 4))
    assert np.allclose(run_reference(p)["C"], np.einsum("ij,kj->ik", a[:, ::-1], a))
