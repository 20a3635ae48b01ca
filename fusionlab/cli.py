"""The ``fusionlab`` command line.

::

    fusionlab partition PROGRAM [--algorithm A] [--cost C] [--format text|json|dot]
    fusionlab cost PROGRAM --partition '[[1,2],[3]]' [--cost C] [--format text|json]
    fusionlab demo

PROGRAM is a bytecode file, ``-`` for standard input, or ``fig3`` for the paper's example.
Exit status: 0 on success, 1 when ``cost`` is given an illegal partition, 2 on bad input.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Sequence

from .bytecode import Program, ProgramError
from .costs import COST_MODELS, Bohrium, Evaluator, get_cost_model
from .examples import fig3_text
from .partition import ALGORITHMS, partition
from .text import BytecodeError, format_instruction, parse
from .wsp import WSPGraph, partition_problems


class _InputError(Exception):
    """A problem with the user's input, already phrased for the terminal."""


def _load(source: str) -> Program:
    if source == "fig3":
        text, name = fig3_text(), "fig3"
    elif source == "-":
        text, name = sys.stdin.read(), "<stdin>"
    else:
        try:
            with open(source, encoding="utf-8") as fh:
                text = fh.read()
        except OSError as exc:
            raise _InputError(f"cannot read {source}: {exc.strerror}") from None
        name = source
    try:
        return parse(text)
    except BytecodeError as exc:
        raise _InputError(f"{name}:{exc.line}:{exc.column}: {exc.message}\n{exc.excerpt()}") from None
    except ProgramError as exc:
        raise _InputError(f"{name}: {exc}") from None


def _cmd_partition(args: argparse.Namespace) -> int:
    program = _load(args.program)
    options = {}
    if args.algorithm == "optimal":
        options = {"time_limit": args.time_limit, "max_nodes": args.max_nodes}
    elif args.algorithm == "ilp":
        options = {"time_limit": args.time_limit}
    result = partition(program, args.algorithm, args.cost, **options)
    if args.format == "json":
        print(result.to_json(trace=args.trace))
    elif args.format == "dot":
        from .dot import get_dot

        print(get_dot(result))
    else:
        print(result.format_text())
    return 0


def _parse_blocks(text: str, n: int) -> list[list[int]]:
    try:
        blocks = json.loads(text)
    except json.JSONDecodeError as exc:
        raise _InputError(f"--partition is not JSON ({exc.msg} at column {exc.colno}); write e.g. '[[1,2],[3]]'") from None
    if not isinstance(blocks, list) or not all(
        isinstance(b, list) and all(isinstance(i, int) and not isinstance(i, bool) for i in b) for b in blocks
    ):
        raise _InputError("--partition must be a list of lists of instruction numbers, e.g. '[[1,2],[3]]'")
    bad = sorted({i for b in blocks for i in b if not 1 <= i <= n})
    if bad:
        raise _InputError(f"--partition names instructions {bad}, but they are numbered 1..{n}")
    listed = [i for b in blocks for i in b]
    twice = sorted({i for i in listed if listed.count(i) > 1})
    if twice:
        raise _InputError(f"--partition puts instructions {twice} in more than one block")
    # instructions left out run alone, so a partition can list just its merged blocks
    return [[i - 1 for i in b] for b in blocks if b] + [[i] for i in range(n) if i + 1 not in listed]


def _cmd_cost(args: argparse.Namespace) -> int:
    program = _load(args.program)
    blocks = _parse_blocks(args.partition, len(program))
    graph = WSPGraph(program)
    problems = partition_problems(graph, blocks)
    model = get_cost_model(args.cost)
    cost = Evaluator(model, graph).cost(blocks)
    elements = Evaluator(Bohrium(unit="elements"), graph).cost(blocks) if isinstance(model, Bohrium) else None
    out = {
        "cost_model": model.name,
        "cost": cost,
        "cost_elements": elements,
        "blocks": [[i + 1 for i in b] for b in blocks],
        "legal": not problems,
        "problems": problems,
    }
    if args.format == "json":
        print(json.dumps(out, indent=2))
    else:
        label = {i: k + 1 for k, b in enumerate(blocks) for i in b}
        for i, ins in enumerate(program):
            print(f"{i + 1:>3}  [{label[i]}]  {format_instruction(ins)}")
        extra = f" ({elements} elements)" if elements is not None else ""
        print(f"{model.name}: cost {cost}{extra}")
        print("legal" if not problems else "ILLEGAL:\n  " + "\n  ".join(problems))
    return 0 if not problems else 1


def _cmd_demo(args: argparse.Namespace) -> int:
    program = parse(fig3_text())
    print("The paper's Fig. 3b program (Kristensen et al., Fusion of Array Operations at Runtime):\n")
    for i, ins in enumerate(program):
        print(f"  {i + 1:>2}  {format_instruction(ins)}")
    print("\nPartitions under the Bohrium cost model (Def. 13), cost in elements accessed:\n")
    paper = {"singleton": 94, "linear": 58, "unintrusive": 70, "greedy": 58, "optimal": 38}
    for name in ("singleton", "linear", "unintrusive", "greedy", "optimal", "ilp"):
        r = partition(program, name, "bohrium")
        blocks = " ".join("{" + ",".join(map(str, b)) + "}" for b in r.numbered())
        ref = f"  (paper: {paper[name]})" if name in paper else ""
        print(f"  {name:<12} cost {r.cost_elements:>3}{ref:<14} {r.kernels:>2} blocks  {blocks}")
    print("\nThe same algorithms under the other cost models (cost in each model's unit):\n")
    print(f"  {'':<12}" + "".join(f"{m:>14}" for m in COST_MODELS))
    for name in ("singleton", "linear", "greedy", "optimal", "ilp"):
        row = [partition(program, name, m).cost for m in COST_MODELS]
        print(f"  {name:<12}" + "".join(f"{c:>14g}" for c in row))
    print("\nSee docs/paper-reproduction.md for why linear, unintrusive and greedy differ from the paper.")
    return 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``fusionlab`` command."""
    ap = argparse.ArgumentParser(prog="fusionlab", description="Explore the fusion of array operations (WSP).")
    sub = ap.add_subparsers(dest="command", required=True)
    p = sub.add_parser("partition", help="partition a program and print the result")
    p.add_argument("program", help="bytecode file, '-' for stdin, or 'fig3'")
    p.add_argument("--algorithm", "-a", choices=list(ALGORITHMS), default="greedy")
    p.add_argument("--cost", "-c", choices=list(COST_MODELS), default="bohrium")
    p.add_argument("--format", "-f", choices=["text", "json", "dot"], default="text")
    p.add_argument("--trace", action="store_true", help="include the search trace in JSON (optimal)")
    p.add_argument("--time-limit", type=float, default=30.0, help="seconds for optimal and ilp")
    p.add_argument("--max-nodes", type=int, default=1_000_000, help="search-tree nodes for optimal")
    p.set_defaults(run=_cmd_partition)
    c = sub.add_parser("cost", help="price a given partition and check that it is legal")
    c.add_argument("program", help="bytecode file, '-' for stdin, or 'fig3'")
    c.add_argument("--partition", "-p", required=True,
                   help="blocks of 1-based instruction numbers, '[[1,2],[3]]'; unlisted instructions run alone")
    c.add_argument("--cost", "-c", choices=list(COST_MODELS), default="bohrium")
    c.add_argument("--format", "-f", choices=["text", "json"], default="text")
    c.set_defaults(run=_cmd_cost)
    d = sub.add_parser("demo", help="print the paper's Fig. 3 example under every algorithm")
    d.set_defaults(run=_cmd_demo)
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except _InputError as exc:
        print(f"fusionlab: {exc}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
