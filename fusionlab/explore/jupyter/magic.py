"""The ``%%fuse`` cell magic and the ``%fuse_config`` line magic.

``%load_ext fusionlab`` registers both, and the kernel channel (comm target
``fusionlab.explorer``). ``%%fuse`` runs the cell under capture (the user's variables
afterwards are the plain ndarrays NumPy computes), then explores its fusion within one time
budget (``--budget``): the display appears as soon as the cheap partitions are known and is
updated in place as the searches finish. Kernel -> Interrupt stops the searches and keeps
what is known. Options left out come from the session defaults that ``%fuse_config`` sets.

The exact searches (branch and bound, ILP) share ``--exact-time`` seconds (default 3), each
getting a fair part of what is left, so a small cell returns in a few seconds, not when the
budget ends; those cut are marked not proven, with a notice saying how to search longer.
The partition asked for first (``--algorithm optimal``) keeps its own limit outside the
share. Measured on a 348-instruction substitution loop and a 303-instruction heat loop: the
cell returned after 13.5 s and 13.2 s, now after 2.4-2.6 s. Chosen over running the searches
on in the background (the branch and bound is Python and would hold the GIL while the user
works; the ILP's solver could, which is left open) and over a smaller ``--budget`` (which
would also cut the graph and the heuristics of big cells); the figures: docs/explorer.md.
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import linecache
import sys
import time
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring

from fusionlab.support.budget import Budget, Interrupt
from fusionlab.capture import (
    DEFAULT_BUDGET as DEFAULT_CAPTURE, CaptureBudget, CaptureError, capture, real_object,
)
from fusionlab.capture.recorder import CELL_FILENAME, user_traceback
from fusionlab.costs import MODEL_NAMES, NonMonotonicCostModel
from fusionlab.partition import ALGORITHMS
from fusionlab.explore.report import DEFAULT_ALGORITHMS, DEFAULT_COST_MODELS, DEFAULT_TRACE_LIMIT
from fusionlab.explore.jupyter.channel import ExplorerChannel
from fusionlab.explore.jupyter.display import ExplorerView
from fusionlab.explore.jupyter.session import (
    FIRST_DISPLAY_SECONDS, OTHER_BATCHES_SECONDS, REROLL_SECONDS, SVG_SECONDS, WINDOW_INSTRUCTIONS, FuseResult,
)
from fusionlab.explore.jupyter.timing import DEFAULT_COMPILE_SECONDS

__all__ = ["FuseMagics", "LAST_RESULT", "DEFAULT_BUDGET", "DEFAULT_EXACT_TIME"]

# the name the last result is bound to in the user's namespace (like IPython's ``_``)
LAST_RESULT = "_fuse"
_DEFAULTS: dict[str, Any] = {
    "algorithm": "greedy",
    "cost": "bohrium",
    "compare": ",".join(DEFAULT_COST_MODELS),
    "algorithms": ",".join(DEFAULT_ALGORITHMS),
    "repeat": 3,
    "time": False,
    "optimal_time": 2.0,
    "exact_time": 3.0,
    "budget": 15.0,
    "compile_budget": DEFAULT_COMPILE_SECONDS,
    "trace_limit": DEFAULT_TRACE_LIMIT,
    "capture_budget": DEFAULT_CAPTURE.seconds,
    "capture_instructions": DEFAULT_CAPTURE.instructions,
    "batch_instructions": DEFAULT_CAPTURE.batch_instructions,
    "window": float(WINDOW_INSTRUCTIONS),
}
# Seconds of the whole exploration of a cell by default (capture is not cut).
DEFAULT_BUDGET = _DEFAULTS["budget"]
# Seconds all the exact searches of a cell may take together by default (see the module's
# docstring and docs/jupyter.md: the cell returns in a few seconds, not at the budget's end).
DEFAULT_EXACT_TIME = _DEFAULTS["exact_time"]
# Seconds at the end of the budget kept for the graph's layout (at most 15 % of the budget).
LAYOUT_RESERVE = 2.0


def _names(text: str, known: dict[str, Any], what: str, ns: dict[str, Any] | None = None) -> list[Any]:
    """Names from a comma-separated option. For cost models, a name may also be a variable
    of the notebook holding the user's own model (an instance, or a class to instantiate)."""
    out: list[Any] = []
    for raw in (x.strip() for x in text.split(",")):
        if not raw:
            continue
        key = raw.lower().replace("-", "_")
        if key in known:
            out.append(key)
        elif ns is not None and raw in ns and _is_model(ns[raw]):
            value = ns[raw]
            out.append(value() if isinstance(value, type) else value)
        else:
            extra = " or a variable holding your cost model" if ns is not None else ""
            raise UsageError(f"unknown {what} {raw!r}; choose from {', '.join(known)}{extra}")
    if not out:
        raise UsageError(f"--{what.replace(' ', '-')}s needs at least one name")
    return out


def _is_model(value: Any) -> bool:
    from fusionlab.costs import AdditiveCostModel, CostModel

    if isinstance(value, type):
        return issubclass(value, AdditiveCostModel)
    return isinstance(value, (AdditiveCostModel, CostModel))


def _model_name(model: Any) -> str:
    return model if isinstance(model, str) else model.name


@magics_class
class FuseMagics(Magics):
    """``%%fuse`` and ``%fuse_config``; ``config_values`` holds the session defaults and
    ``channel`` the explorers the front end can reach."""

    def __init__(self, shell: Any, channel: ExplorerChannel | None = None) -> None:
        super().__init__(shell)
        self.config_values: dict[str, Any] = dict(_DEFAULTS)
        self.last: FuseResult | None = None
        self.channel = channel if channel is not None else ExplorerChannel()
        # the result being computed (None between cells): what an interrupt stops
        self.current: FuseResult | None = None

    @magic_arguments("%fuse")
    @argument("--algorithm", "-a", default=None,
              help="algorithm of the partition shown first (singleton, linear, unintrusive, greedy, "
                   "optimal, ilp, exhaustive); default greedy")
    @argument("--cost", "-c", default=None,
              help="cost model shown first (bohrium, max_contract, max_locality, robinson, or the name of "
                   "a variable holding your own model); default bohrium")
    @argument("--compare", default=None,
              help="comma-separated cost models to compute and time side by side (names or variables); "
                   "default all four")
    @argument("--algorithms", default=None,
              help="comma-separated algorithms to compute; default singleton,linear,unintrusive,greedy,optimal,ilp")
    @argument("--budget", "-b", type=float, default=None,
              help="seconds the whole exploration may take (capture is not cut); searches cut by it show "
                   "their best so far, not proven; default 15")
    @argument("--time", action="store_true", default=None,
              help="compile and time at once (otherwise the explorer's button does)")
    @argument("--repeat", "-r", type=int, default=None, help="timed runs per partition (median reported); default 3")
    @argument("--compile-budget", type=float, default=None,
              help="seconds Compile & time may spend partitioning and compiling kernels (checked between "
                   "kernels; rows that do not fit are marked not timed; inf: no limit); "
                   f"default {DEFAULT_COMPILE_SECONDS:g}")
    @argument("--name", "-n", default=None,
              help="bind the result object to this variable (the last result is always in _fuse)")
    @argument("--optimal-time", type=float, default=None,
              help="seconds the optimal search may take before returning its best so far; default 2")
    @argument("--exact-time", type=float, default=None,
              help="seconds all the exact searches (optimal, ilp) of the cell may take together, shared between "
                   "the cost models; those it cuts show their best so far, not proven; default 3")
    @argument("--trace-limit", type=int, default=None,
              help="search-tree nodes kept in the saved report (the whole tree is fetched from the kernel); "
                   f"default {DEFAULT_TRACE_LIMIT}")
    @argument("--capture-budget", type=float, default=None,
              help="seconds capture may record the cell; past them (or --capture-instructions) the rest of the "
                   "cell runs as plain NumPy and the explorer shows the part recorded before (inf: no limit); "
                   f"default {DEFAULT_CAPTURE.seconds:g}")
    @argument("--capture-instructions", type=float, default=None,
              help="instructions capture may record (inf: no limit; 0: run the cell as plain NumPy); "
                   f"default {int(DEFAULT_CAPTURE.instructions)}")
    @argument("--batch-instructions", type=float, default=None,
              help="close a batch at the next iteration of the loop once it holds this many instructions "
                   f"(inf: only where Python reads a value); default {int(DEFAULT_CAPTURE.batch_instructions)}")
    @argument("--window", type=float, default=None,
              help="instructions of each batch the explorer shows (its first ones; inf: all); Compile & time "
                   f"runs the whole cell; default {WINDOW_INSTRUCTIONS:,}")
    @argument("--widgets", action="store_true", default=False,
              help="also show the ipywidgets explorer (for front ends without the JupyterLab extension)")
    @argument("--no-reroll", action="store_true", default=False,
              help="explore and run the batches as captured, without rerolling the runs of an unrolled Python "
                   "loop into 2-D instructions")
    @argument("--as-captured", action="store_true", default=False,
              help="explore (and time) the batches as captured, rerolled unless --no-reroll: no pass drops or moves "
                   "an instruction (by default the explorer shows what `fusionlab run` partitions: rerolled, dead "
                   "parts of writes dropped, arrays freed early)")
    @argument("--no-explorer", action="store_true", default=False,
              help="run and bind the result, but display nothing")
    @cell_magic
    def fuse(self, line: str, cell: str) -> Any:
        """Run the cell under fusionlab's capture and explore its fusion.

        The user's variables afterwards are plain ndarrays equal to plain NumPy's. The
        explorer shows the bytecode, the WSP graph, every algorithm x cost model partition
        with its cost, the search tree, the generated code and (with ``--time`` or the
        button) timings against NumPy eager. It appears once the cheap partitions are known
        and fills in as the searches finish, all within ``--budget`` seconds, the exact
        searches within ``--exact-time`` seconds together; Kernel -> Interrupt stops the
        searches and keeps what is known.
        """
        opts = self._options(line)
        ns = self.shell.user_ns
        # IPython's syntax (%time, !ls, obj?) becomes Python as in a plain cell; the
        # output's ``;`` is judged on what the user typed
        raw, quiet, cell = cell, cell.rstrip().endswith(";"), self.shell.transform_cell(cell)
        baseline_ns = _referenced(cell, ns)
        started = time.perf_counter()
        cell_file = self._cell_filename(cell, raw)
        try:
            with _inspecting_numpy(self.shell):
                cap = capture(cell, ns, budget=opts["capture"], filename=cell_file)
        except KeyboardInterrupt as exc:   # shown as a plain cell's: its frames, not capture's
            raise self._user_error(exc, cell_file) from None
        except CaptureError as exc:  # the user's error, syntax errors included
            # raised, as plain IPython would: the cell fails (Run All stops, the kernel
            # replies 'error' with the user's ename), with the user's frames only
            error = self._user_error(exc.original, cell_file)
            if not isinstance(error, SyntaxError):
                raise error from None
            try:  # shown as IPython shows a cell's (raised, it would show the frames that compiled it)
                raise error from None
            except SyntaxError:
                self.shell.showsyntaxerror()
            return None
        # the cell's last expression is its output, as in a plain cell (``;`` silences it)
        shown = None if quiet else cap.value
        if cap.stopped is not None:  # said before anything else: the program is not the whole cell
            print(f"fusionlab: {cap.stopped}", file=sys.stderr)
        if not cap.batches or not any(len(b) for b in cap.batches):
            if cap.stopped is not None:
                return shown  # said above: the budget left nothing recorded
            print("fusionlab: warning: the cell recorded no array instruction (an empty program); nothing to "
                  "explore. fusionlab records NumPy array operations: use them in the cell.", file=sys.stderr)
            return shown
        models = list(opts["compare"])
        if _model_name(opts["cost"]) not in [_model_name(m) for m in models]:
            models = [opts["cost"]] + models
        algorithms = opts["algorithms"]
        if opts["algorithm"] not in algorithms:
            algorithms = algorithms + [opts["algorithm"]]
        # one budget for the cell: it started with the capture, which it does not cut
        budget = Budget(opts["budget"], started=started, interrupt=Interrupt())
        try:
            result = FuseResult(
                [b for b in cap.batches if len(b)], capture=cap, name=opts["name"] or "",
                algorithms=algorithms, cost_models=models, selected=(opts["algorithm"], _model_name(opts["cost"])),
                options={"optimal": {"time_limit": opts["optimal_time"], "max_nodes": 20_000},
                         "ilp": {"time_limit": 10.0, "max_variables": 4000}},
                baseline_namespace=baseline_ns, budget_seconds=opts["budget"], trace_limit=opts["trace_limit"],
                exact_seconds=opts["exact_time"], compile_seconds=opts["compile_budget"],
                reroll=not opts["reroll_off"], reroll_budget=budget.child(REROLL_SECONDS),
                as_captured=opts["as_captured"],
                window=None if opts["window"] == float("inf") else int(opts["window"]),
            )
        except NonMonotonicCostModel as exc:
            print(f"fusionlab: {exc}", file=sys.stderr)
            return shown
        self.last = result
        ns[LAST_RESULT] = result
        if opts["name"]:
            ns[opts["name"]] = result
        view = None if opts["no_explorer"] else ExplorerView(result)
        if not self._explore(result, view, budget):
            return shown
        if view is not None:
            self.channel.add(view)
            if opts["widgets"]:
                result.widgets(repeat=opts["repeat"])
        if opts["time"]:
            result.time(repeat=opts["repeat"])
            if view is not None:
                view.update(force=True, draw=True)
        return shown

    def _explore(self, result: FuseResult, view: ExplorerView | None, budget: Budget) -> bool:
        """Compute the partitions within ``budget``, showing ``view`` once the cheap ones
        are known and updating it as the rest finish. ``False`` when nothing can be shown
        (the selected cost model was refused)."""
        # the searches leave the end of the budget to the graph's layout of the fallback view
        searches = budget
        if view is not None and budget.seconds is not None:
            searches = Budget(max(budget.seconds - min(LAYOUT_RESERVE, 0.15 * budget.seconds), 0.0),
                              started=budget.started, interrupt=budget.interrupt)
        with contextlib.ExitStack() as armed:
            if budget.interrupt is not None:
                armed.enter_context(budget.interrupt.armed())
            if not self._search(result, view, searches):
                return False
        if view is not None:
            # after an interrupt the user wants out: no graph layout then (one made before is kept)
            draw = not result.status["interrupted"]
            try:
                if not view.shown:
                    view.show(draw=draw, budget=budget.child(SVG_SECONDS))
                else:
                    view.update(force=True, draw=draw, budget=budget.child(SVG_SECONDS))
            except KeyboardInterrupt:
                result.mark_interrupted()
        if result.status["interrupted"]:
            print("fusionlab: interrupted; the display shows what was computed. The cell's variables are as plain "
                  "NumPy computed them.", file=sys.stderr)
        return True

    def _search(self, result: FuseResult, view: ExplorerView | None, searches: Budget) -> bool:
        """The first display, then the rest of the partitions; ``False`` when the selected
        cost model was refused. Kernel -> Interrupt stops the work and marks what is left."""
        self.current = result
        try:
            result.compute(searches, first_only=True, first_by=searches.started + FIRST_DISPLAY_SECONDS)
            error = result.parts.entries.get(result.selected, {})
            if error.get("status") == "error":
                # the cell ran and its variables are kept; only the exploration is refused
                print(f"fusionlab: {'; '.join(error['notes'])}", file=sys.stderr)
                return False
            if view is not None:
                view.show()
            result.compute(searches, on_update=view.throttled if view is not None else None)
            if not result.status["interrupted"] and not searches.expired():
                # the other batches' first partitions, for the saved notebook (saved_batches)
                result.compute_others(searches.child(OTHER_BATCHES_SECONDS))
        except KeyboardInterrupt:  # outside a search (a display): the work is stopped the same way
            result.mark_interrupted()
        finally:
            self.current = None
            if searches.interrupt is not None:
                searches.interrupt.acknowledge()  # handled: the final display may check its budget
        return True

    def _options(self, line: str) -> dict[str, Any]:
        try:
            args = parse_argstring(self.fuse, line)
        except SystemExit as exc:  # argparse exits on some errors; say it as a usage error
            raise UsageError(f"bad %%fuse options: {line!r}; `%%fuse?` lists them") from exc
        c = self.config_values
        ns = self.shell.user_ns
        opts = {
            "algorithm": (args.algorithm or c["algorithm"]).lower(),
            "cost": _names(args.cost or c["cost"], MODEL_NAMES, "cost model", ns)[0],
            "compare": _names(args.compare or c["compare"], MODEL_NAMES, "cost model", ns),
            "algorithms": _names(args.algorithms or c["algorithms"], ALGORITHMS, "algorithm"),
            "time": bool(args.time) or bool(c["time"]),
            "repeat": args.repeat if args.repeat is not None else c["repeat"],
            "optimal_time": args.optimal_time if args.optimal_time is not None else c["optimal_time"],
            "exact_time": args.exact_time if args.exact_time is not None else c["exact_time"],
            "budget": args.budget if args.budget is not None else c["budget"],
            "compile_budget": args.compile_budget if args.compile_budget is not None else c["compile_budget"],
            "trace_limit": args.trace_limit if args.trace_limit is not None else c["trace_limit"],
            "capture": _capture_budget(args, c),
            "window": args.window if args.window is not None else c["window"],
            "reroll_off": bool(args.no_reroll),
            "as_captured": bool(args.as_captured),
            "name": args.name,
            "no_explorer": args.no_explorer,
            "widgets": args.widgets,
        }
        if opts["algorithm"] not in ALGORITHMS:
            raise UsageError(f"unknown algorithm {opts['algorithm']!r}; choose from {', '.join(ALGORITHMS)}")
        if opts["repeat"] < 1:
            raise UsageError("--repeat must be at least 1")
        if opts["optimal_time"] <= 0:
            raise UsageError("--optimal-time must be positive")
        if not opts["exact_time"] >= 0:
            raise UsageError("--exact-time must be 0 or more seconds (0 skips them)")
        if opts["budget"] is not None and not opts["budget"] > 0:
            raise UsageError("--budget must be a positive number of seconds")
        if not opts["compile_budget"] >= 0:
            raise UsageError("--compile-budget must be 0 or more seconds (inf: no limit)")
        if not opts["window"] >= 1:
            raise UsageError("--window must be 1 or more instructions (inf: all)")
        if opts["trace_limit"] < 0:
            raise UsageError("--trace-limit must be 0 or more search-tree nodes")
        if args.name is not None and not args.name.isidentifier():
            raise UsageError(f"--name needs a Python identifier, not {args.name!r}")
        return opts

    def _cell_filename(self, cell: str, raw: str) -> str:
        """The file name a plain cell of this source gets (IPython's compiler caches its
        lines and shows it as ``Cell In[n]``): the cell's warnings and code objects name it,
        as plain ones do. fusionlab's own name when the shell has no such compiler."""
        compiled = getattr(self.shell, "compile", None)
        try:
            return compiled.cache(cell, self._cell_number(raw), raw_code=raw)
        except (AttributeError, TypeError):
            linecache.cache[CELL_FILENAME] = (len(cell), None, cell.splitlines(True), CELL_FILENAME)
            return CELL_FILENAME

    def _cell_number(self, raw: str) -> int:
        """The number of the cell this magic runs in, as its prompt and a plain cell's
        traceback show it (``In [n]``).

        IPython moves ``execution_count`` on before a cell that stores its history runs, and
        stores the cell's text at the number it had; a cell that stores none (``silent``,
        ``store_history=False``) leaves both alone, and IPython names it by the count as it
        is. So the cell runs as ``count - 1`` exactly when the history's last input is this
        cell (``%%fuse`` and its body), else as ``count`` (the magic called from code, e.g.
        ``run_cell_magic``, or a cell that stores no history)."""
        count = getattr(self.shell, "execution_count", 1)
        history = getattr(getattr(self.shell, "history_manager", None), "input_hist_raw", None)
        if not isinstance(count, int) or not isinstance(history, list) or len(history) != count or count < 2:
            return count
        last = history[-1] if isinstance(history[-1], str) else ""
        head, _, body = last.partition("\n")
        if head.lstrip().startswith("%%fuse") and body.rstrip("\n") == raw.rstrip("\n"):
            return count - 1
        return count

    def _user_error(self, error: BaseException, filename: str = CELL_FILENAME) -> BaseException:
        """The user's ``error``, shown as plain IPython shows it: the traceback has the
        cell's frames and the user's own, not fusionlab's (capture's wrappers of NumPy
        calls; plain NumPy raises from C), and the cell is ``Cell In[n]``."""
        tb = user_traceback(error.__traceback__, filename)
        if isinstance(error, SyntaxError):
            return error  # shown without frames, by showsyntaxerror
        shown = self.shell.InteractiveTB.structured_traceback(type(error), error, tb)

        def render() -> list[str]:
            # once: the exception object the user may keep (sys.last_value) stays theirs
            error.__dict__.pop("_render_traceback_", None)
            return shown

        error._render_traceback_ = render  # type: ignore[attr-defined]  # IPython's hook
        return error

    @magic_arguments("fuse_config")
    @argument("--algorithm", "-a", default=None, help="default algorithm shown first")
    @argument("--cost", "-c", default=None, help="default cost model shown first")
    @argument("--compare", default=None, help="default cost models, comma-separated")
    @argument("--algorithms", default=None, help="default algorithms, comma-separated")
    @argument("--repeat", "-r", type=int, default=None, help="default timed runs")
    @argument("--time", default=None, choices=["on", "off"], help="time every cell at once")
    @argument("--optimal-time", type=float, default=None, help="default budget of the optimal search, seconds")
    @argument("--exact-time", type=float, default=None,
              help="default seconds of all the exact searches of a cell together (fusionlab's default: 3)")
    @argument("--budget", "-b", type=float, default=None,
              help="default seconds the exploration of a cell may take (fusionlab's default: 15)")
    @argument("--compile-budget", type=float, default=None,
              help=f"default seconds of Compile & time's partitioning and compiling (fusionlab's default: "
                   f"{DEFAULT_COMPILE_SECONDS:g})")
    @argument("--trace-limit", type=int, default=None, help="default search-tree nodes kept in the report")
    @argument("--capture-budget", type=float, default=None,
              help=f"default seconds capture records a cell (fusionlab's default: {DEFAULT_CAPTURE.seconds:g})")
    @argument("--capture-instructions", type=float, default=None,
              help=f"default instructions capture records (fusionlab's default: {int(DEFAULT_CAPTURE.instructions)})")
    @argument("--batch-instructions", type=float, default=None,
              help="default length past which a batch is closed at the next iteration (fusionlab's default: "
                   f"{int(DEFAULT_CAPTURE.batch_instructions)})")
    @argument("--window", type=float, default=None,
              help=f"default instructions of a batch the explorer shows (fusionlab's default: {WINDOW_INSTRUCTIONS})")
    @argument("--reset", action="store_true", default=False, help="back to fusionlab's defaults")
    @line_magic
    def fuse_config(self, line: str) -> dict[str, Any]:
        """Set the session defaults of ``%%fuse``; with no option, show them."""
        args = parse_argstring(self.fuse_config, line)
        if args.reset:
            self.config_values = dict(_DEFAULTS)
        new = dict(self.config_values)
        if args.algorithm is not None:
            new["algorithm"] = args.algorithm.lower()
        if args.cost is not None:
            _names(args.cost, MODEL_NAMES, "cost model", self.shell.user_ns)
            new["cost"] = args.cost
        if args.compare is not None:
            _names(args.compare, MODEL_NAMES, "cost model", self.shell.user_ns)
            new["compare"] = args.compare
        if args.algorithms is not None:
            new["algorithms"] = ",".join(_names(args.algorithms, ALGORITHMS, "algorithm"))
        if args.repeat is not None:
            new["repeat"] = args.repeat
        if args.time is not None:
            new["time"] = args.time == "on"
        if args.optimal_time is not None:
            new["optimal_time"] = args.optimal_time
        if args.exact_time is not None:
            new["exact_time"] = args.exact_time
        if args.budget is not None:
            new["budget"] = args.budget
        if args.trace_limit is not None:
            new["trace_limit"] = args.trace_limit
        if args.compile_budget is not None:
            new["compile_budget"] = args.compile_budget
        if args.capture_budget is not None:
            new["capture_budget"] = args.capture_budget
        if args.capture_instructions is not None:
            new["capture_instructions"] = args.capture_instructions
        if args.batch_instructions is not None:
            new["batch_instructions"] = args.batch_instructions
        if args.window is not None:
            new["window"] = args.window
        saved, self.config_values = self.config_values, new
        try:
            self._options("")  # validate the whole set before keeping it
        except UsageError:
            self.config_values = saved
            raise
        return dict(self.config_values)


def _capture_budget(args: Any, config: dict[str, Any]) -> CaptureBudget:
    """The capture budget of a cell: its options, else the session's defaults."""
    seconds = args.capture_budget if args.capture_budget is not None else config["capture_budget"]
    count = args.capture_instructions if args.capture_instructions is not None else config["capture_instructions"]
    batch = args.batch_instructions if args.batch_instructions is not None else config["batch_instructions"]
    if not seconds >= 0 or not count >= 0:
        raise UsageError("--capture-budget (seconds) and --capture-instructions must be 0 or more (inf: no limit)")
    if not batch >= 1:
        raise UsageError("--batch-instructions must be 1 or more (inf: batches end only where Python reads a value)")
    return CaptureBudget(seconds=seconds, instructions=count, batch_instructions=batch)


def _referenced(cell: str, ns: dict[str, Any]) -> dict[str, Any]:
    """The user's values the cell names, copied where mutable arrays (the NumPy baseline
    of the timing reruns the cell on these, never on the user's own objects)."""
    import numpy as np

    try:
        tree = ast.parse(cell)
    except SyntaxError:
        return {}
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    out = {}
    for k in names:
        if k in ns:
            v = ns[k]
            out[k] = v.copy() if isinstance(v, np.ndarray) else v
    return out


def _clean_help(doc: str | None, name: str) -> str:
    """IPython's help text of a magic without the reStructuredText ``::`` it starts with,
    naming the magic as it is typed (``%%fuse``)."""
    text = doc or ""
    if text.startswith("::"):
        text = text[2:].lstrip("\n")
    lines = text.splitlines()
    if lines and lines[0].strip().startswith("%"):
        lines[0] = lines[0].replace(lines[0].strip().split()[0], name, 1).lstrip()
    return "\n".join(lines)


FuseMagics.fuse.__doc__ = _clean_help(FuseMagics.fuse.__doc__, "%%fuse")
FuseMagics.fuse_config.__doc__ = _clean_help(FuseMagics.fuse_config.__doc__, "%fuse_config")


@contextlib.contextmanager
def _inspecting_numpy(shell: Any) -> Any:
    """``np.sum?`` (and ``%pinfo``, ``obj??``) in a captured cell inspects NumPy's object,
    not capture's stand-in for it ("Type: Recording"). IPython finds the object with its
    ``_object_find``: the stand-in it finds is replaced by what it stands for."""
    find = shell._object_find

    def object_find(oname: str, namespaces: Any = None) -> Any:
        info = find(oname, namespaces)
        real, parent = real_object(info.obj), real_object(info.parent)
        if real is None and parent is None:
            return info
        return dataclasses.replace(info, obj=info.obj if real is None else real,
                                   parent=info.parent if parent is None else parent)

    shell._object_find = object_find
    try:
        yield
    finally:
        del shell._object_find   # the shell's own method again
