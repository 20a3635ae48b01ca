"""The ``fusionlab`` command line.

::

    fusionlab partition PROGRAM [--algorithm A] [--cost C] [--format text|json|dot] [--budget S]
    fusionlab cost PROGRAM --partition '[[1,2],[3]]' [--cost C] [--format text|json]
    fusionlab capture FILE.py|WORKLOAD [--format text|json]
    fusionlab verify FILE.py|WORKLOAD [--algorithm A] [--cost C] [--format text|json]
    fusionlab compare FILE.py|WORKLOAD [--algorithms A1,A2] [--costs C1,C2] [--profile]
    fusionlab profile FILE.py|WORKLOAD [--algorithm A] [--cost C] [--repeat N] [--format text|json]
    fusionlab workloads
    fusionlab demo

PROGRAM is a bytecode file, ``-`` for standard input, ``fig3`` for the paper's example, or
(for ``partition``) a Python file or workload, partitioned batch by batch with a merge cache.
Exit status: 0 on success, 1 when ``cost`` is given an illegal partition or ``verify``
finds a mismatch, 2 on bad input.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import statistics
import sys
import warnings
from typing import TYPE_CHECKING, Any, Sequence


from fusionlab.ir.bytecode import Program, ProgramError
from fusionlab.costs import COST_MODELS, MODEL_NAMES, Bohrium, Evaluator, get_cost_model
from fusionlab.ir.examples import fig3_text
from fusionlab.partition import ALGORITHMS, partition
from fusionlab.ir.text import BytecodeError, format_instruction, parse
from fusionlab.analysis.wsp import WSPGraph, partition_problems


if TYPE_CHECKING:
    from fusionlab.capture import Capture, CaptureBudget
    from fusionlab.pipeline import PipelineConfig

#: Keep in step with fusionlab.backend.numba.plan.DEFAULT_MIN_SIZE (not imported here:
#: that module loads Numba, which the other commands do not need).
DEFAULT_MIN_SIZE = 4096
#: Keep in step with fusionlab.backend.numba.driver.MODES (tests/test_cli.py checks both).
DRIVER_MODES = ("python", "numba", "blocks")


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


def _target_source(target: str, preset: str) -> tuple[str, str]:
    """Python source and a label for a workload name or a ``.py`` file."""
    from fusionlab.workloads import ALL_WORKLOADS

    if target in ALL_WORKLOADS:
        return ALL_WORKLOADS[target].script(preset), f"{target} ({preset})"
    try:
        with open(target, encoding="utf-8") as fh:
            return fh.read(), target
    except OSError as exc:
        raise _InputError(f"cannot read {target}: {exc.strerror}") from None


def _capture(target: str, preset: str, budget: "CaptureBudget | None" = None) -> "Capture":
    """Capture a workload or Python file (all of it unless a ``budget`` stops the recording);
    the program's own output goes to stderr."""
    import contextlib

    from fusionlab.capture import UNLIMITED, CaptureError, capture

    source, label = _target_source(target, preset)
    with contextlib.redirect_stdout(sys.stderr):
        try:
            return capture(source, {"__name__": "__main__"}, budget=budget or UNLIMITED,
                           filename=label)   # as plain Python names it
        except CaptureError as exc:
            raise _InputError(f"{label} raised {exc}:\n{_user_frames(exc.original, source, label)}") from None
        except SyntaxError as exc:
            raise _InputError(f"{label}:{exc.lineno}:{exc.offset}: {exc.msg}") from None


def _user_frames(error: BaseException, source: str, label: str) -> str:
    """The program's traceback as plain Python prints it: its own frames, with its lines,
    not capture's wrappers around the NumPy call that raised."""
    import linecache
    import traceback

    from fusionlab.capture.recorder import user_traceback

    linecache.cache[label] = (len(source), None, source.splitlines(True), label)
    lines = traceback.format_exception(type(error), error, user_traceback(error.__traceback__, label))
    return "".join(lines)


def _is_python(target: str) -> bool:
    """Python to capture, or bytecode? ``fig3`` names the paper's bytecode listing here
    (its Python version is the ``fig3`` workload of ``capture`` and ``verify``)."""
    from fusionlab.workloads import ALL_WORKLOADS

    return target.endswith(".py") or (target in ALL_WORKLOADS and target != "fig3")


def _batches(target: str, preset: str) -> list[Program]:
    if _is_python(target):
        return _capture(target, preset).batches
    return [_load(target)]


def _options(args: argparse.Namespace) -> dict[str, object]:
    opts: dict[str, object] = {}
    if args.algorithm in ("optimal", "exact"):
        opts = {"time_limit": args.time_limit, "max_nodes": args.max_nodes}
    elif args.algorithm == "ilp":
        opts = {"time_limit": args.time_limit}
    seconds = getattr(args, "budget", None)
    if seconds is not None:
        from fusionlab.support.budget import Budget

        # one budget for the whole command (all batches), made on first use
        opts["budget"] = getattr(args, "budget_object", None) or Budget(seconds)
        args.budget_object = opts["budget"]
    return opts


def _cmd_partition(args: argparse.Namespace) -> int:
    from fusionlab.pipeline import PipelineCaches, PipelineConfig, partition_batch, prepare
    from fusionlab.support.budget import UNLIMITED

    opts = _options(args)
    budget = opts.pop("budget", UNLIMITED)
    config = PipelineConfig(args.algorithm, args.cost, options=tuple(sorted(opts.items())))
    if _is_python(args.program):
        # the batches `fusionlab run` partitions (rerolled, dead writes dropped, arrays freed
        # early), unless --as-captured; a bytecode program is partitioned as written
        cap = _capture(args.program, args.preset)
        config = config.as_captured() if args.as_captured else config
        batches = list(prepare(cap, config).programs)
    else:
        batches = [_load(args.program)]
    caches = PipelineCaches()
    cache = caches.merge
    # the pipeline's partition pass: the merge cache, and a search given greedy's partition
    results = [partition_batch(b, config, caches, budget) for b in batches]
    for k, b in enumerate(batches):
        if len(b) == 0:
            where = f"batch {k + 1}" if len(batches) > 1 else args.program
            print(f"fusionlab: warning: {where} is an empty program (0 instructions): nothing to partition",
                  file=sys.stderr)
    if args.format == "json":
        if len(results) == 1:
            print(results[0].to_json(trace=args.trace))
        else:
            print(json.dumps({"batches": [r.to_dict() for r in results],
                              "merge_cache": {"hits": cache.hits, "misses": cache.misses}}, indent=2))
    elif args.format == "dot":
        from fusionlab.explore.dot import get_dot

        for r in results:
            print(get_dot(r))
    else:
        for k, r in enumerate(results):
            if len(results) > 1:
                print(f"# batch {k + 1} of {len(results)}" + (" (merge cache hit)" if r.cache_hit else ""))
            print(r.format_text())
        if len(results) > 1:
            print(f"merge cache: {cache.hits} hits, {cache.misses} misses")
    return 0


def _budget(args: argparse.Namespace) -> "CaptureBudget":
    """The capture budget ``--capture-budget`` and ``--capture-instructions`` ask for."""
    from fusionlab.capture import CaptureBudget
    from fusionlab.capture.budget import BATCH_INSTRUCTIONS

    batch = BATCH_INSTRUCTIONS if args.batch_instructions is None else args.batch_instructions
    try:
        return CaptureBudget(seconds=args.capture_budget, instructions=args.capture_instructions,
                             batch_instructions=batch)
    except ValueError as exc:
        raise _InputError(f"--capture-budget/--capture-instructions/--batch-instructions: {exc}") from None


def _cmd_capture(args: argparse.Namespace) -> int:
    cap = _capture(args.program, args.preset, _budget(args))
    if args.format == "json":
        print(json.dumps({
            "instructions": cap.instructions,
            "batches": [{"instructions": len(b), "text": b.to_text()} for b in cap.batches],
            "notices": [str(n) for n in cap.notices],
            "seconds": round(cap.seconds, 6),
        }, indent=2))
        return 0
    for k, b in enumerate(cap.batches):
        print(f"# batch {k + 1} of {len(cap.batches)}: {len(b)} instructions")
        print(b.to_text())
    for n in cap.notices:
        print(f"# note: {n}")
    return 0


#: verify's text lists this many of the values it did not compare
SHOWN_SKIPPED = 10


def _program_names(plain: dict[str, object]) -> list[str]:
    """The names of the program's own values in its plain run's namespace: not modules
    (``np``), and not the functions and classes it imported (``from numpy import *`` binds
    some 600); the functions and classes it defines stay (and are skipped with a reason).

    >>> import numpy as np
    >>> def step(x): return x
    >>> step.__module__ = "__main__"
    >>> _program_names({"np": np, "sin": np.sin, "float32": np.float32, "pi": np.pi, "step": step,
    ...                 "mgrid": np.mgrid, "x": np.zeros(2), "__name__": "__main__"})
    ['pi', 'step', 'x']
    """
    import types

    import numpy

    def imported(n: str, v: object) -> bool:
        if (isinstance(v, type) or callable(v)) and getattr(v, "__module__", "__main__") != "__main__":
            return True
        # NumPy's own objects the star import binds (``mgrid``, ``ScalarType``), not its numbers
        return not isinstance(v, (int, float, complex)) and getattr(numpy, n, None) is v

    return [n for n, v in plain.items()
            if not n.startswith("__") and not isinstance(v, types.ModuleType) and not imported(n, v)]


def _cmd_verify(args: argparse.Namespace) -> int:
    from fusionlab.runtime.check import check_namespace, plain_namespace, program_bounds, reduction_terms

    source, label = _target_source(args.program, args.preset)
    with contextlib.redirect_stdout(sys.stderr):
        try:
            plain = plain_namespace(source, label)
        except Exception as exc:  # the user's program: any exception
            raise _InputError(f"{label} fails under plain NumPy: {type(exc).__name__}: {exc}") from None
    cap = _capture(args.program, args.preset, _budget(args))
    replayed = _replayed(cap, args)
    if cap.stopped is not None:
        # the batches are the part recorded before the budget: their replay is checked
        # against NumPy replaying that part (what the user holds is plain NumPy's, checked below)
        print(f"{label}: {cap.stopped}; the replay is checked against NumPy replaying the part recorded",
              file=sys.stderr)
    terms = reduction_terms(cap.batches)
    names = _program_names(plain)
    # what the user holds after the capture, and the arrays the partition's replay computes,
    # each against plain NumPy (runtime/check.py: structural, tolerances from reordering)
    bounds = program_bounds(cap)   # the error model's bound of each value (runtime/errors.py)
    held = check_namespace({n: cap.namespace.get(n, _MISSING) for n in names}, plain, names, terms, bounds)
    oracle = plain if cap.stopped is None else _replayed(cap, args, partitioned=False)
    replay = check_namespace(replayed, oracle, terms=terms, bounds=bounds)
    mismatches = [{"variable": m.path, "where": "namespace", "reason": m.reason, "max_abs_error": m.max_abs_error}
                  for m in held.mismatches]
    mismatches += [{"variable": m.path, "where": f"replay under {args.algorithm}", "reason": m.reason,
                    "max_abs_error": m.max_abs_error} for m in replay.mismatches]
    skipped = [{"variable": s.path, "reason": s.reason} for s in held.skipped + replay.skipped]
    out = {"variables": len(names), "compared": held.compared + replay.compared, "replayed": len(replayed),
           "batches": len(cap.batches), "instructions": cap.instructions, "mismatches": mismatches,
           "skipped": skipped}
    if args.format == "json":
        print(json.dumps(out, indent=2))
    else:
        print(f"{label}: {len(names)} variables, {len(replayed)} arrays replayed from {len(cap.batches)} batches "
              f"({cap.instructions} instructions) under {args.algorithm}/{args.cost}")
        for m in mismatches:
            print(f"  MISMATCH {m['variable']} ({m['where']}): {m['reason']}")
        for sk in skipped[:SHOWN_SKIPPED]:
            print(f"  not compared: {sk['variable']}: {sk['reason']}")
        if len(skipped) > SHOWN_SKIPPED:
            print(f"  not compared: {len(skipped) - SHOWN_SKIPPED} more (--format json lists them)")
        print("OK" if not mismatches else f"{len(mismatches)} mismatches")
    return 0 if not mismatches else 1


def _replayed(cap: "Capture", args: argparse.Namespace, partitioned: bool = True) -> dict[str, object]:
    """The capture's arrays as its batches compute them under the partition ``run`` executes
    (the same pipeline and configuration: :func:`_pipeline_config`), replayed by the reference
    executor block by block in the plans' order. ``partitioned=False``: the batches as
    captured, instruction by instruction (NumPy replaying them)."""
    import numpy as np

    from fusionlab.runtime.reference import Storage, block_order, run_reference
    from fusionlab.pipeline import build

    storage, synced = Storage(dict(cap.inputs)), {}
    if not partitioned:
        with np.errstate(all="ignore"):
            for b in cap.batches:
                synced.update(run_reference(b, externals=cap.externals, storage=storage))
        return cap.values_from(synced)
    built = build(cap, _pipeline_config(args))
    storage = Storage(dict(built.inputs))
    with np.errstate(all="ignore"):   # the program's own warnings were shown when it ran
        for p, blocks in zip(built.plans, built.planned.blocks):
            # each block whole, in the order the driver runs them
            order = [i for bp in p.blocks for i in bp.instructions]
            if sorted(order) != list(range(len(p.program))):
                order = block_order(p.program, blocks)
            synced.update(run_reference(p.program, externals=cap.externals, storage=storage, order=order))
    return cap.values_from(synced)


def _pipeline_config(args: argparse.Namespace) -> "PipelineConfig":
    """The pipeline's configuration of ``run`` and ``verify`` from their flags: ``run``'s
    (:func:`fusionlab.pipeline.runner.run_config`), with ``--time-limit``/``--max-nodes``
    when given for the algorithms that take them."""
    from dataclasses import replace

    from fusionlab.backend.numba.plan import DEFAULT_MIN_SIZE
    from fusionlab.pipeline.runner import run_config

    config = run_config(args.algorithm, args.cost, getattr(args, "min_size", DEFAULT_MIN_SIZE),
                        not getattr(args, "no_reroll", False))
    takes = {"optimal": ("time_limit", "max_nodes"), "exact": ("time_limit", "max_nodes"), "ilp": ("time_limit",)}
    options = tuple((name, getattr(args, name)) for name in takes.get(args.algorithm, ())
                    if getattr(args, name, None) is not None)
    return replace(config, options=options)


class _Missing:
    """Stands for a variable the captured namespace lacks (never equal to anything)."""

    def __repr__(self) -> str:
        return "<missing>"


_MISSING = _Missing()


def _cmd_run(args: argparse.Namespace) -> int:
    from fusionlab.pipeline.runner import run

    cap = _capture(args.program, args.preset, _budget(args))
    if cap.stopped is not None:
        print(f"{args.program}: {cap.stopped}; the part recorded runs fused and is checked against NumPy "
              "replaying it", file=sys.stderr)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = run(cap, check=args.check, driver=args.driver, repeat=args.repeat, config=_pipeline_config(args))
    for w in caught:
        print(f"warning: {w.message}", file=sys.stderr)
    if r.fallback is not None:   # a size recorded from the data did not hold: the run is NumPy's
        print(f"{args.program}: {len(cap.batches)} batches under {args.algorithm}/{args.cost}: every block ran as "
              f"NumPy, {r.seconds:.4f} s (the first run: compilation included): {r.fallback.describe()}")
    else:
        print(f"{args.program}: {len(cap.batches)} batches under {args.algorithm}/{args.cost}: "
              f"{r.kernels} compiled kernels, {len(r.fallbacks)} blocks run by NumPy, {r.seconds:.4f} s "
              f"(the first run: compilation included); {r.driver}")
    for rewrite in r.rerolled[:10]:
        print(f"  {rewrite.describe()}")
    if r.times:
        print(f"{len(r.times)} more runs: median {statistics.median(r.times):.3g} s, minimum {min(r.times):.3g} s")
    for f in r.fallbacks[:10] if r.fallback is None else []:
        print(f"  NumPy: {f}")
    for line in r.split[:10]:
        print(f"  split: {line}")
    if args.check:
        report = r.check
        assert report is not None   # run(check=True) always checks
        print(f"against plain NumPy: {report.compared} values compared, {len(report.mismatches)} differ, "
              f"largest difference {report.max_abs_error:.3g} (each value within its error bound, propagated "
              f"through the program: fusionlab/runtime/errors.py); against fusionlab's reference executor: "
              f"{r.max_abs_error:.3g}")
        for m in report.mismatches[:10]:
            print(f"  MISMATCH {m}")
        for t in report.at_threshold[:10]:
            print(f"  at a threshold (legitimate): {t}")
        for sk in report.skipped[:10]:
            print(f"  not compared: {sk}")
        return 0 if report.ok else 1
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    from fusionlab.backend.numba.plan import KernelCache
    from fusionlab.pipeline import PipelineCaches
    from fusionlab.pipeline.comparison import compare, format_records

    cap = _capture(args.program, args.preset)
    # one set of caches and kernels for the comparison and its profiles: the same plans, compiled once
    caches, kernels = PipelineCaches(), KernelCache()
    records = compare(cap, args.algorithms.split(","), args.costs.split(","), repeat=args.repeat,
                      min_size=args.min_size, driver=args.driver, reroll=not args.no_reroll, caches=caches,
                      cache=kernels)
    profiles = _compare_profiles(cap, records, args, caches, kernels) if args.profile else []
    if args.format == "json":
        # NaN (a row not timed, or not comparable) is not JSON: null
        def clean(v: Any) -> Any:
            return None if isinstance(v, float) and not math.isfinite(v) else v

        rows = [{k: clean(v) for k, v in r.to_dict().items()} for r in records]
        protocol = {k: clean(v) for k, v in records.protocol.items()}
        out: dict[str, Any] = {"protocol": protocol, "records": rows}
        if args.profile:
            out["profiles"] = [{"label": label, **p.to_dict()} for label, p in profiles]
        print(json.dumps(out, indent=2))
    else:
        print(format_records(records))
        from fusionlab.pipeline.profiling import format_profile

        for label, p in profiles:
            print(f"\n{label}:")
            print(format_profile(p))
    return 0


def _compare_profiles(cap: "Capture", records: Sequence[Any], args: argparse.Namespace, caches: Any,
                      kernels: Any) -> list[tuple[str, Any]]:
    """``compare --profile``: the profile of each distinct partition the comparison timed
    (rows with the same kernels share one), with the configuration its row used (``run``'s,
    from the same flags) on the comparison's caches and kernels; each row slower than NumPy
    gets the profile's ``why_slower``."""
    from fusionlab.pipeline.profiling import profile
    from fusionlab.pipeline.runner import run_config

    numpy = records[0].median_seconds if records and math.isfinite(records[0].median_seconds) else None
    out: list[tuple[str, Any]] = []
    done: dict[str, Any] = {}
    for r in records[1:]:
        if r.not_timed:
            continue
        if r.same_kernels_as and r.same_kernels_as in done:
            got = done[r.same_kernels_as]
        else:
            config = run_config(r.algorithm, r.cost_model, args.min_size, not args.no_reroll)
            # a row whose speed-up is not comparable did other work than NumPy's: no "why slower"
            got = profile(cap, config, caches=caches, cache=kernels, repeat=args.repeat, driver=args.driver,
                          numpy_seconds=None if r.not_comparable else numpy)
            done[r.label] = got
            out.append((r.label, got))
        if not r.not_comparable and numpy is not None and math.isfinite(r.median_seconds) and r.median_seconds > numpy:
            r.why_slower = [w.to_dict() for w in got.with_numpy(numpy).why_slower()]
    return out


def _cmd_profile(args: argparse.Namespace) -> int:
    """``fusionlab profile FILE``: each block of the partition ``run`` executes timed beside the
    ``time`` model's prediction, the roofline in words, and why the run is slower than plain
    NumPy (the program run plainly ``--repeat`` times after a warm-up)."""
    from fusionlab.pipeline.profiling import format_profile, profile

    cap = _capture(args.program, args.preset, _budget(args))
    numpy = None if cap.stopped is not None else _plain_seconds(cap.source, args.repeat)
    got = profile(cap, _pipeline_config(args), repeat=args.repeat, driver=args.driver, numpy_seconds=numpy)
    if args.format == "json":
        print(json.dumps(got.to_dict(), indent=2))
    else:
        print(f"{args.program}: {len(cap.batches)} batches under {args.algorithm}/{args.cost}")
        print(format_profile(got))
    return 0


def _plain_seconds(source: str, repeat: int) -> float | None:
    """The median seconds of ``repeat`` plain runs of ``source`` after a warm-up (its output
    discarded), or ``None`` when it fails."""
    import io
    import time

    def once() -> float:
        t = time.perf_counter()
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(source, "<numpy>", "exec"), {"__name__": "__main__"})
        return time.perf_counter() - t

    try:
        once()
        return statistics.median(once() for _ in range(max(repeat, 1)))
    except Exception:  # the user's program: any exception (its capture ran it already)
        return None


def _cmd_workloads(args: argparse.Namespace) -> int:
    from fusionlab.workloads import ALL_WORKLOADS

    for w in ALL_WORKLOADS.values():
        sizes = "  ".join(f"{p}: " + ", ".join(f"{k}={v}" for k, v in kw.items()) for p, kw in w.presets.items())
        print(f"{w.name:<26} {w.title:<28} {sizes}")
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
        budget = {"max_nodes": 20_000} if name == "optimal" else {}
        row = [partition(program, name, m, **budget) for m in COST_MODELS]
        print(f"  {name:<12}" + "".join(f"{r.cost:>13g}" + (" " if r.proven_optimal or name != "optimal" else "*")
                                         for r in row))
    print("  (* best within a budget of 20,000 search nodes, not proven optimal)")
    print("\nSee docs/paper-reproduction.md for why linear, unintrusive and greedy differ from the paper.")
    return 0


def _cmd_calibrate(args: argparse.Namespace) -> int:
    """Measure this machine for the ``time`` cost model, or show the stored figures."""
    from pathlib import Path

    from fusionlab.costs.timemodel import load_figures, machine_path

    path = Path(args.file) if args.file else machine_path()
    if args.show:
        from fusionlab.tools.calibrate import format_figures

        figures = load_figures(path)
        print(f"{path}{'' if path.exists() else ' (absent: the defaults below)'}")
        print(format_figures(figures))
        return 0
    from fusionlab.tools.calibrate import CalibrationOptions, calibrate, format_figures

    print(f"measuring this machine{' (quick)' if args.quick else ''}; the first run compiles the kernels ...",
          file=sys.stderr)
    cal = calibrate(CalibrationOptions(quick=args.quick), path=path)
    print(format_figures(cal.figures))
    print(f"stored in {cal.path}")
    if cal.noisy:
        print("fusionlab: the figures are NOISY (stored with \"noisy\": true): " + "; ".join(cal.figures.reasons)
              + ". Calibrate again when the machine is idle, or pass --force to accept them.", file=sys.stderr)
        return 0 if args.force else 1
    return 0


def _cmd_sweep(args: argparse.Namespace) -> int:
    from fusionlab.tools.sweep import SpecError, SweepError, load_spec, run_sweep

    try:
        spec = load_spec(args.spec)
    except SpecError as exc:
        raise _InputError(str(exc)) from None
    if args.workers < 1:
        raise _InputError(f"--workers must be at least 1, got {args.workers}")
    scheduler = "serial" if args.serial else args.scheduler
    try:
        report = run_sweep(spec, store=args.store, scheduler=scheduler, workers=args.workers,
                           dashboard_address=args.dashboard_address, progress="none" if args.quiet else "text",
                           log=lambda text: print(text, file=sys.stderr), retry_errors=args.retry_errors)
    except SweepError as exc:
        raise _InputError(str(exc)) from None
    if args.format == "json":
        print(json.dumps({k: v for k, v in report.__dict__.items() if k != "executed_keys"}, indent=2))
    return 1 if report.failed else 0


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``fusionlab`` command."""
    ap = argparse.ArgumentParser(prog="fusionlab", description="Explore the fusion of array operations (WSP).")
    sub = ap.add_subparsers(dest="command", required=True)
    target_help = "bytecode file, '-' for stdin, 'fig3', a Python file (.py) or a workload name"
    algorithm_help = f"partitioning algorithm: {', '.join(ALGORITHMS)}; default greedy"
    cost_help = f"cost model: {', '.join(MODEL_NAMES)}; default bohrium"
    p = sub.add_parser("partition", help="partition a program (each batch of a Python file or workload)")
    p.add_argument("program", help=target_help)
    p.add_argument("--preset", default="tiny", help="workload size preset (tiny, medium, paper)")
    p.add_argument("--algorithm", "-a", choices=list(ALGORITHMS), default="greedy", metavar="ALGORITHM",
                   help=algorithm_help)
    p.add_argument("--cost", "-c", choices=list(MODEL_NAMES), default="bohrium", metavar="COST", help=cost_help)
    p.add_argument("--format", "-f", choices=["text", "json", "dot"], default="text",
                   help="output: text (listing with blocks), json, or dot (Graphviz source); default text")
    p.add_argument("--trace", action="store_true", help="include the search trace in JSON (optimal)")
    p.add_argument("--time-limit", type=float, default=30.0, help="seconds for optimal, ilp and exact")
    p.add_argument("--max-nodes", type=int, default=1_000_000, help="search-tree nodes for optimal (and exact's branch and bound)")
    p.add_argument("--budget", type=float, default=None, metavar="SECONDS",
                   help="seconds the whole command may spend partitioning (all batches); a search cut by it "
                        "returns its best so far, not proven; default: no limit")
    p.add_argument("--as-captured", action="store_true",
                   help="a Python file or workload: partition its batches as captured, not as `fusionlab run` "
                        "does (rerolled, dead parts of writes dropped, arrays freed early)")
    p.set_defaults(run=_cmd_partition)
    c = sub.add_parser("cost", help="price a given partition and check that it is legal")
    c.add_argument("program", help="bytecode file, '-' for stdin, or 'fig3'")
    c.add_argument("--partition", "-p", required=True,
                   help="blocks of 1-based instruction numbers, '[[1,2],[3]]'; unlisted instructions run alone")
    c.add_argument("--cost", "-c", choices=list(MODEL_NAMES), default="bohrium", metavar="COST", help=cost_help)
    c.add_argument("--format", "-f", choices=["text", "json"], default="text", help="output; default text")
    c.set_defaults(run=_cmd_cost)
    d = sub.add_parser("demo", help="print the paper's Fig. 3 example under every algorithm")
    d.set_defaults(run=_cmd_demo)
    def python_command(name: str, help: str, run: object) -> argparse.ArgumentParser:
        # capture, verify, run and compare all take a Python file or workload and a preset
        q = sub.add_parser(name, help=help)
        q.add_argument("program", help="a Python file (.py) or a workload name")
        q.add_argument("--preset", default="tiny", help="workload size preset (tiny, medium, paper)")
        q.set_defaults(run=run)
        return q

    def partition_choice(q: argparse.ArgumentParser) -> None:
        q.add_argument("--algorithm", "-a", choices=list(ALGORITHMS), default="greedy", metavar="ALGORITHM",
                       help=algorithm_help)
        q.add_argument("--cost", "-c", choices=list(MODEL_NAMES), default="bohrium", metavar="COST",
                       help=cost_help)

    min_size_help = "blocks with fewer elements run serially, or with NumPy if one instruction (docs/backend.md)"
    driver_help = ("who calls the kernels: the run's driver as Python (python), compiled by Numba (numba: "
                   "fastest, compiles for seconds once), or block by block from Python (blocks); docs/backend.md")
    reroll_help = ("run the batches as captured, without rewriting the runs of an unrolled Python loop into 2-D "
                   "instructions (docs/passes.md, Rerolling)")
    def batch_length(sub: argparse.ArgumentParser) -> None:
        # (the default is capture's, read when the budget is made: importing capture here
        # would cost every command 0.2 s)
        sub.add_argument("--batch-instructions", type=float, default=None, metavar="N",
                         help="close a batch at the next iteration of the loop once it holds this many "
                              "instructions (default 2048: fusionlab.capture.budget.BATCH_INSTRUCTIONS; inf: "
                              "only where Python reads a value)")

    cp = python_command("capture", "print the bytecode a Python file or workload records", _cmd_capture)
    cp.add_argument("--format", "-f", choices=["text", "json"], default="text")
    cp.add_argument("--capture-budget", type=float, default=float("inf"), metavar="SECONDS",
                    help="stop recording after this many seconds; the rest runs as plain NumPy and the "
                         "program printed is the part recorded before (default: no limit)")
    cp.add_argument("--capture-instructions", type=float, default=float("inf"), metavar="N",
                    help="stop recording after this many instructions (default: no limit)")
    batch_length(cp)
    def capture_budget(sub: argparse.ArgumentParser) -> None:
        # a Python loop of tiny operations records an instruction per operation: bounded by
        # default, as in a %%fuse cell (docs/capture.md, "The capture budget")
        sub.add_argument("--capture-budget", type=float, default=float("inf"), metavar="SECONDS",
                         help="stop recording after this many seconds; the rest runs as plain NumPy and the part "
                              "recorded before is run and checked (default: no limit)")
        sub.add_argument("--capture-instructions", type=float, default=50_000, metavar="N",
                         help="stop recording after this many instructions (default 50000; inf: no limit)")
        batch_length(sub)

    v = python_command("verify", "run plainly and captured (replayed under a partition); compare", _cmd_verify)
    capture_budget(v)
    partition_choice(v)
    v.add_argument("--format", "-f", choices=["text", "json"], default="text")
    v.add_argument("--no-reroll", action="store_true", help=reroll_help)
    v.add_argument("--time-limit", type=float, default=None,
                   help="seconds for optimal, ilp and exact (default: run's, no limit)")
    v.add_argument("--max-nodes", type=int, default=None,
                   help="search-tree nodes for optimal and exact (default: run's, 20000 for optimal)")
    r = python_command("run", "run a Python file or workload with fused Numba kernels", _cmd_run)
    capture_budget(r)
    partition_choice(r)
    r.add_argument("--check", action="store_true",
                   help="compare the values with plain NumPy run on the same inputs (and with the reference executor)")
    r.add_argument("--min-size", type=int, default=DEFAULT_MIN_SIZE, help=min_size_help)
    r.add_argument("--repeat", type=int, default=0, help="run N more times and report the median and minimum")
    r.add_argument("--driver", choices=list(DRIVER_MODES), default="python", help=driver_help)
    r.add_argument("--no-reroll", action="store_true", help=reroll_help)
    c2 = python_command("compare", "time the partitions of several algorithms and cost models", _cmd_compare)
    c2.add_argument("--algorithms", default="linear,greedy,optimal")
    c2.add_argument("--costs", default="bohrium,max_contract,max_locality,robinson")
    c2.add_argument("--repeat", type=int, default=5)
    c2.add_argument("--min-size", type=int, default=DEFAULT_MIN_SIZE, help=min_size_help)
    c2.add_argument("--driver", choices=list(DRIVER_MODES), default="python", help=driver_help)
    c2.add_argument("--format", "-f", choices=["text", "json"], default="text")
    c2.add_argument("--no-reroll", action="store_true", help=reroll_help)
    c2.add_argument("--profile", action="store_true",
                    help="after the table, each distinct partition's profile: every block timed beside the time "
                         "model's prediction, the roofline in words, and why a row slower than NumPy is")
    pr = python_command("profile", "time each block of the partition run executes beside the time model's "
                        "prediction (a roofline in words)", _cmd_profile)
    capture_budget(pr)
    partition_choice(pr)
    pr.add_argument("--repeat", type=int, default=5, help="timed runs after a warm-up")
    pr.add_argument("--min-size", type=int, default=DEFAULT_MIN_SIZE, help=min_size_help)
    pr.add_argument("--driver", choices=list(DRIVER_MODES), default="python", help=driver_help)
    pr.add_argument("--format", "-f", choices=["text", "json"], default="text")
    pr.add_argument("--no-reroll", action="store_true", help=reroll_help)
    pr.add_argument("--time-limit", type=float, default=None, help="seconds for optimal, ilp and exact")
    pr.add_argument("--max-nodes", type=int, default=None, help="search-tree nodes for optimal and exact")
    sw = sub.add_parser("sweep", help="run a sweep spec (TOML or YAML) on Dask; rows go to a Parquet store")
    sw.add_argument("spec", help="the sweep's spec file (docs/sweeps.md)")
    sw.add_argument("--store", help="the store's folder (default: the spec's 'store', else <name>-store beside it)")
    sw.add_argument("--scheduler", metavar="ADDRESS", help="a running Dask scheduler (default: a local cluster)")
    sw.add_argument("--workers", type=int, default=2, help="workers of the local cluster")
    sw.add_argument("--serial", action="store_true", help="no Dask: every task in this process, in turn")
    sw.add_argument("--dashboard-address", default=":8787", help="the local cluster's dashboard (':0': any port)")
    sw.add_argument("--retry-errors", action="store_true", help="compute again the rows stored with an error")
    sw.add_argument("--quiet", "-q", action="store_true", help="no progress bar")
    sw.add_argument("--format", "-f", choices=["text", "json"], default="text", help="json: the summary on stdout")
    sw.set_defaults(run=_cmd_sweep)
    w = sub.add_parser("workloads", help="list the workloads and their size presets")
    w.set_defaults(run=_cmd_workloads)
    cal = sub.add_parser("calibrate", help="measure this machine for the time cost model (under a minute)")
    cal.add_argument("--show", action="store_true", help="print the stored figures (or the defaults) and exit")
    cal.add_argument("--quick", action="store_true", help="smaller arrays, fewer rounds (seconds; for tests)")
    cal.add_argument("--force", action="store_true", help="exit 0 even when the figures are noisy")
    cal.add_argument("--file", default=None, help="where to store (default: the cache folder's machine-<host>.json)")
    cal.set_defaults(run=_cmd_calibrate)
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
