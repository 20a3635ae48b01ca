"""The bytecode's text format: one instruction per line, ``#`` comments.

::

    ARRAY A float64[4]          # declare a base: name, dtype, shape
    ARRAY G float64[100,100]
    COPY A, 0                   # the first operand is the output
    ADD A, A, D[:-1]            # views use NumPy basic slicing
    ADD_REDUCE s, A, axis=0     # keyword operands come last
    DEL A
    SYNC D

Views that basic slicing cannot express (a transpose, a broadcast, a reshape of a slice)
are written raw: ``G{offset=0, shape=(100,100), strides=(1,100)}``.

``parse(format_program(p)) == p`` for every program. Errors carry the line and column.

Examples
--------
>>> p = parse("ARRAY D float64[5]\\nARRAY A float64[4]\\nMUL A, D[:-1], D[1:]")
>>> print(format_program(p))
ARRAY D float64[5]
ARRAY A float64[4]
MULTIPLY A, D[:-1], D[1:]
>>> parse("ARRAY A float64[4]\\nADD A, A, B")
Traceback (most recent call last):
...
fusionlab.ir.text.BytecodeError: line 2, column 11: array B is not declared; add a line such as `ARRAY B float64[4]` before it
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np

from fusionlab.ir.bytecode import (
    ALIASES, Base, Instruction, Literal, Opcode, Program, ProgramError, View, check_instruction,
)

__all__ = ["BytecodeError", "parse", "format_program", "format_instruction", "format_view"]


class BytecodeError(ValueError):
    """A malformed line of bytecode text, with its 1-based ``line`` and ``column``."""

    def __init__(self, message: str, line: int, column: int, source: str = "") -> None:
        self.message, self.line, self.column, self.source = message, line, column, source
        super().__init__(f"line {line}, column {column}: {message}")

    def excerpt(self) -> str:
        """The offending line with a caret under the column."""
        return f"{self.source}\n{' ' * (self.column - 1)}^"


# --------------------------------------------------------------------------- formatting


def _fmt_literal(v: Any) -> str:
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
    return repr(v)


def _fmt_attr(v: Any) -> str:
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, tuple):
        return "(" + ",".join(_fmt_attr(x) for x in v) + ("," if len(v) == 1 else "") + ")"
    return _fmt_literal(v)


def _fmt_slice(s: slice, n: int) -> str:
    start, stop, step = s.start, s.stop, s.step
    text_start = "" if (step > 0 and start == 0) or (step < 0 and start == n - 1) else str(start)
    if step > 0:
        if stop >= n:
            text_stop = ""
        elif start == 0 or n - stop < stop - start:
            text_stop = str(stop - n)
        else:
            text_stop = str(stop)
    else:
        text_stop = "" if stop is None else str(stop)
    text = f"{text_start}:{text_stop}"
    if step != 1:
        text += f":{step}"
    return text


def format_view(v: View, rename: dict[str, str] | None = None) -> str:
    """The text of a view: ``NAME``, ``NAME[slices]`` or ``NAME{offset=..., ...}``.

    >>> G = Base("G", "float64", (100, 100))
    >>> format_view(G[1:-1, :-2]), format_view(G[5]), format_view(G[::-1, 3])
    ('G[1:-1, :-2]', 'G[5]', 'G[::-1, 3]')
    """
    name = rename.get(v.base.name, v.base.name) if rename else v.base.name
    if v.is_full():
        return name
    index = v.as_index()
    if index is not None:
        parts = []
        for item, n in zip(index, _axis_extents(index, v.base.shape)):
            if item is None:
                parts.append("None")
            elif isinstance(item, slice):
                parts.append(_fmt_slice(item, n))
            else:
                parts.append(str(item))
        # trailing full slices are implied, as in NumPy
        while len(parts) > 1 and parts[-1] == ":":
            parts.pop()
        return f"{name}[{', '.join(parts)}]"
    shape = ",".join(map(str, v.shape)) + ("," if v.ndim == 1 else "")
    strides = ",".join(map(str, v.strides)) + ("," if v.ndim == 1 else "")
    return f"{name}{{offset={v.offset}, shape=({shape}), strides=({strides})}}"


def _axis_extents(index: tuple[Any, ...], shape: tuple[int, ...]) -> list[int]:
    out, axis = [], 0
    for item in index:
        if item is None:
            out.append(1)
        else:
            out.append(shape[axis])
            axis += 1
    return out


def format_instruction(ins: Instruction, rename: dict[str, str] | None = None) -> str:
    """One line of text for ``ins`` (no number, no comment).

    >>> A = Base("A", "float64", (4,))
    >>> format_instruction(Instruction(Opcode.ADD_REDUCE, (Base("s", "float64", ()).view(),), (A.view(),), {"axis": 0}))
    'ADD_REDUCE s, A, axis=0'
    """
    ops = [format_view(v, rename) for v in ins.outputs]
    for x in ins.inputs:
        ops.append(format_view(x, rename) if isinstance(x, View) else _fmt_literal(x.value))
    ops += [f"{k}={_fmt_attr(v)}" for k, v in ins.attrs]
    return f"{ins.opcode.name} {', '.join(ops)}".rstrip()


def format_program(
    program: Program,
    rename: dict[str, str] | None = None,
    numbers: bool = False,
    declare_unused: bool = True,
) -> str:
    """The text of a program: ARRAY declarations, then one instruction per line.

    ``numbers=True`` appends ``# n`` to each instruction (comments parse back unchanged).
    """
    used = {v.base.name for ins in program for v in ins.outputs + ins.views_in}
    lines = []
    bases = program.bases
    if rename:
        bases = tuple(sorted(bases, key=lambda b: (b.name not in rename, rename.get(b.name, ""))))
    for b in bases:
        if declare_unused or b.name in used:
            name = rename.get(b.name, b.name) if rename else b.name
            lines.append(f"ARRAY {name} {b.dtype}[{','.join(map(str, b.shape))}]")
    for n, ins in enumerate(program, 1):
        line = format_instruction(ins, rename)
        lines.append(f"{line:<40} # {n}" if numbers else line)
    return "\n".join(lines)


# --------------------------------------------------------------------------- parsing

_TOKEN = re.compile(
    r"""
    (?P<ws>[ \t]+)
  | (?P<comment>\#.*)
  | (?P<string>"(?:[^"\\]|\\.)*")
  | (?P<number>[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?j?|[-+]?(?:inf|nan)\b)
  | (?P<name>[A-Za-z_][A-Za-z_0-9]*)
  | (?P<punct>[\[\]{}(),:=.])
  | (?P<bad>.)
    """,
    re.VERBOSE,
)


class _Line:
    """A cursor over one line's tokens."""

    def __init__(self, text: str, lineno: int) -> None:
        self.text, self.lineno = text, lineno
        self.tokens: list[tuple[str, str, int]] = []
        for m in _TOKEN.finditer(text):
            kind = m.lastgroup or "bad"
            if kind in ("ws", "comment"):
                continue
            if kind == "bad":
                raise self.error(f"unexpected character {m.group()!r}", m.start())
            self.tokens.append((kind, m.group(), m.start()))
        self.pos = 0

    def error(self, message: str, col: int | None = None) -> BytecodeError:
        if col is None:
            col = self.tokens[self.pos][2] if self.pos < len(self.tokens) else len(self.text.rstrip())
        return BytecodeError(message, self.lineno, col + 1, self.text)

    def peek(self) -> tuple[str, str, int] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def at(self, value: str) -> bool:
        t = self.peek()
        return t is not None and t[1] == value and t[0] == "punct"

    def take(self, kind: str | None = None, value: str | None = None, what: str = "") -> tuple[str, str, int]:
        t = self.peek()
        if t is None or (kind and t[0] != kind) or (value and t[1] != value):
            found = "the end of the line" if t is None else repr(t[1])
            raise self.error(f"expected {what or value or kind}, found {found}")
        self.pos += 1
        return t

    def done(self) -> bool:
        return self.pos >= len(self.tokens)


def _int(line: _Line, what: str) -> int:
    kind, text, col = line.take("number", what=what)
    try:
        return int(text)
    except ValueError:
        raise line.error(f"expected {what}, found {text!r}", col) from None


def _parse_decl(line: _Line, bases: dict[str, Base]) -> None:
    _, name, col = line.take("name", what="an array name after ARRAY")
    if name in bases:
        raise line.error(f"array {name} is declared twice", col)
    _, dtype, dcol = line.take("name", what="a dtype such as float64")
    try:
        np.dtype(dtype)
    except TypeError:
        raise line.error(f"unknown dtype {dtype!r}; use a NumPy name such as float64", dcol) from None
    line.take("punct", "[", what="'[' and the shape, as in float64[4]")
    shape: list[int] = []
    while not line.at("]"):
        shape.append(_int(line, "an extent (a non-negative integer)"))
        if shape[-1] < 0:
            raise line.error("extents must be non-negative")
        if not line.at("]"):
            line.take("punct", ",", what="',' or ']'")
    line.take("punct", "]")
    if not line.done():
        raise line.error("unexpected text after the declaration")
    bases[name] = Base(name, dtype, tuple(shape))


def _parse_index_item(line: _Line) -> Any:
    t = line.peek()
    if t and t[0] == "name" and t[1] == "None":
        line.pos += 1
        return None
    if line.at("."):
        for _ in range(3):
            line.take("punct", ".", what="'...'")
        return Ellipsis
    parts: list[int | None] = []
    cur: int | None = None
    while True:
        if line.at(":"):
            line.pos += 1
            parts.append(cur)
            cur = None
            continue
        t = line.peek()
        if t and t[0] == "number":
            cur = _int(line, "an integer index")
            continue
        break
    if not parts:
        if cur is None:
            raise line.error("expected an index, a slice such as 1:-1, '...' or None")
        return cur
    parts.append(cur)
    if len(parts) > 3:
        raise line.error("a slice has at most start:stop:step")
    if len(parts) == 3 and parts[2] == 0:
        raise line.error("slice step cannot be zero")
    return slice(*parts)


def _parse_operand(line: _Line, bases: dict[str, Base]) -> Any:
    t = line.peek()
    if t is None:
        raise line.error("expected an operand")
    kind, text, col = t
    if kind == "number":
        line.pos += 1
        try:
            if text.endswith("j"):
                return Literal(complex(text))
            if re.fullmatch(r"[-+]?\d+", text):
                return Literal(int(text))
            return Literal(float(text))
        except ValueError:
            raise line.error(f"bad number {text!r}", col) from None
    if kind != "name":
        raise line.error(f"expected an array name or a literal, found {text!r}", col)
    line.pos += 1
    if text in ("True", "False"):
        return Literal(text == "True")
    if line.at("="):
        line.pos += 1
        return (text, _parse_attr_value(line))
    if text not in bases:
        raise line.error(
            f"array {text} is not declared; add a line such as `ARRAY {text} float64[4]` "
            "before it",
            col,
        )
    view = bases[text].view()
    if line.at("["):
        lcol = line.take("punct", "[")[2]
        items = []
        while not line.at("]"):
            items.append(_parse_index_item(line))
            if not line.at("]"):
                line.take("punct", ",", what="',' or ']' in the index")
        line.take("punct", "]")
        try:
            view = view[tuple(items)]
        except (IndexError, ProgramError) as exc:
            raise line.error(str(exc), lcol) from None
    elif line.at("{"):
        lcol = line.take("punct", "{")[2]
        fields: dict[str, Any] = {}
        while not line.at("}"):
            _, key, kcol = line.take("name", what="offset=, shape= or strides=")
            line.take("punct", "=")
            fields[key] = _parse_attr_value(line)
            if not line.at("}"):
                line.take("punct", ",", what="',' or '}'")
        line.take("punct", "}")
        if set(fields) != {"offset", "shape", "strides"}:
            raise line.error("a raw view needs exactly offset=, shape= and strides=", lcol)
        try:
            view = View(bases[text], tuple(fields["shape"]), tuple(fields["strides"]), int(fields["offset"]))
        except (ProgramError, TypeError) as exc:
            raise line.error(str(exc), lcol) from None
    return view


def _parse_attr_value(line: _Line) -> Any:
    t = line.peek()
    if t is None:
        raise line.error("expected a value after '='")
    kind, text, col = t
    if kind == "string":
        line.pos += 1
        return re.sub(r"\\(.)", r"\1", text[1:-1])
    if kind == "name" and text in ("None", "True", "False"):
        line.pos += 1
        return {"None": None, "True": True, "False": False}[text]
    if line.at("("):
        line.pos += 1
        items = []
        while not line.at(")"):
            items.append(_parse_attr_value(line))
            if not line.at(")"):
                line.take("punct", ",", what="',' or ')'")
        line.take("punct", ")")
        return tuple(items)
    lit = _parse_operand(line, {})
    if not isinstance(lit, Literal):
        raise line.error("expected a number, a string, None or a tuple", col)
    return lit.value


def _parse_opcode(line: _Line) -> Opcode:
    _, text, col = line.take("name", what="an opcode or ARRAY")
    key = text.upper()
    if key in ALIASES:
        return ALIASES[key]
    try:
        return Opcode[key]
    except KeyError:
        raise line.error(
            f"unknown opcode {text!r}; opcodes are NumPy ufunc names in capitals (ADD, "
            "MULTIPLY, SQRT, ...), COPY, *_REDUCE, *_ACCUMULATE, RANGE, RANDOM, COMPRESS, GATHER, CONTRACT, BINCOUNT, OPAQUE, DEL, SYNC",
            col,
        ) from None


def parse(text: str) -> Program:
    """Parse bytecode text into a :class:`Program`.

    Raises
    ------
    BytecodeError
        With the line and column of the first problem and what was expected there.

    Examples
    --------
    >>> p = parse("ARRAY A float64[4]\\nCOPY A, 0  # zero it\\nSYNC A")
    >>> [ins.opcode.name for ins in p]
    ['COPY', 'SYNC']
    >>> parse("ARRAY D float64[5]\\nADD D[1:], D[:-1], 1")
    Traceback (most recent call last):
    ...
    fusionlab.ir.text.BytecodeError: line 2, column 1: ADD is not data-parallel (Def. 11): input D[:-1] overlaps output D[1:] without being identical to it
    """
    bases: dict[str, Base] = {}
    instructions: list[Instruction] = []
    deleted: dict[str, int] = {}
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = _Line(raw, lineno)
        if line.done():
            continue
        if line.peek()[1] == "ARRAY":
            line.pos += 1
            _parse_decl(line, bases)
            continue
        op_col = line.peek()[2]
        opcode = _parse_opcode(line)
        outputs: list[View] = []
        inputs: list[Any] = []
        attrs: list[tuple[str, Any]] = []
        first = True
        while not line.done():
            if not first:
                line.take("punct", ",", what="',' between operands")
            col = line.peek()[2] if line.peek() else 0
            operand = _parse_operand(line, bases)
            if isinstance(operand, tuple):
                attrs.append(operand)
            elif attrs:
                raise line.error("keyword operands (key=value) come after the others", col)
            elif first and opcode is not Opcode.SYNC:
                if not isinstance(operand, View):
                    raise line.error("the first operand is the output: it must be an array", col)
                outputs.append(operand)
            else:
                inputs.append(operand)
            for v in ([operand] if isinstance(operand, View) else []):
                if v.base.name in deleted:
                    raise line.error(
                        f"array {v.base.name} is used after its DEL on line {deleted[v.base.name]}",
                        col,
                    )
            first = False
        ins = Instruction(opcode, tuple(outputs), tuple(inputs), tuple(attrs))
        try:
            check_instruction(ins)
        except ProgramError as exc:
            raise line.error(str(exc), op_col) from None
        if opcode is Opcode.DEL:
            deleted[outputs[0].base.name] = lineno
        instructions.append(ins)
    return Program(tuple(bases.values()), tuple(instructions))
