"""A sweep's specification: a small TOML (or YAML) file, checked key by key.

A spec names the programs (workloads, files, random programs), the presets, algorithms,
cost models and repeats, and optional ``[partition]`` and ``[timing]`` tables::

    name = "cost-models"
    workloads = ["heat_equation", "rosenbrock"]   # or "paper" (Table I), "all" (with the
                                                  # teaching programs) or "corpus"
    files = ["kernels/stencil.py", "fig3.bc"]     # Python files are captured; others are bytecode
    presets = ["tiny", "medium"]
    algorithms = ["linear", "greedy", "optimal"]
    cost_models = ["bohrium", "max_contract", "max_locality", "robinson"]
    repeats = 3

    [random]                                     # random programs (fusionlab.ir.examples.random_program)
    instructions = [50, 200]
    seeds = { first = 0, count = 100 }           # or a list: seeds = [1, 2, 3]

    [partition]                                  # budgets of optimal and ilp
    time_limit = 2.0
    max_nodes = 20000

    [timing]                                     # present: every row is also timed
    runs = 5
    min_size = 4096
    driver = "python"

A malformed spec raises :class:`SpecError` naming the line and the reason.

Examples
--------
>>> spec = parse_spec('''
... workloads = ["fig3"]
... algorithms = ["greedy", "optimal"]
... cost_models = ["bohrium"]
... ''')
>>> [t.label for t in spec.tasks()]
['fig3 / tiny / greedy / bohrium / r0', 'fig3 / tiny / optimal / bohrium / r0']
>>> parse_spec('algorithms = ["greedy", "fastest"]\\nworkloads = ["fig3"]')
Traceback (most recent call last):
...
fusionlab.tools.sweep.spec.SpecError: <spec>:1: unknown algorithm 'fastest' in 'algorithms'; choose from singleton, linear, ...
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = ["SpecError", "ProgramSpec", "TimingSpec", "SweepSpec", "Task", "parse_spec", "load_spec", "DRIVERS"]

#: The ways ``run`` calls kernels (fusionlab.backend.numba.driver.MODES; not imported here so that
#: reading a spec does not load Numba).
DRIVERS: tuple[str, ...] = ("python", "numba", "blocks")

_TOP_KEYS = ("name", "store", "workloads", "files", "random", "presets", "algorithms", "cost_models",
             "repeats", "prepared", "partition", "timing")
_TABLE_KEYS = {
    "random": ("instructions", "seeds", "arrays", "size"),
    "partition": ("time_limit", "max_nodes"),
    "timing": ("runs", "min_size", "driver"),
}


class SpecError(ValueError):
    """A spec that cannot be run: where (file, line, column when known) and why.

    >>> str(SpecError("sweep.toml", 4, None, "'repeats' must be a whole number >= 1, got 0"))
    "sweep.toml:4: 'repeats' must be a whole number >= 1, got 0"
    """

    def __init__(self, source: str, line: int | None, column: int | None, reason: str) -> None:
        self.source, self.line, self.column, self.reason = source, line, column, reason
        where = source + (f":{line}" if line else "") + (f":{column}" if line and column else "")
        super().__init__(f"{where}: {reason}")


@dataclass(frozen=True)
class ProgramSpec:
    """One program of a sweep.

    ``kind`` is ``"workload"`` (``name`` is the workload), ``"python"`` or ``"bytecode"``
    (a file: ``name`` as the spec wrote it, ``source`` its text, read by the client so that
    workers on other machines need no shared file system), or ``"random"``
    (``random_program(instructions, seed, arrays, size)``).
    """

    kind: str
    name: str
    source: str = field(default="", repr=False)
    instructions: int | None = None
    seed: int | None = None
    arrays: int = 6
    size: int = 1000


@dataclass(frozen=True)
class TimingSpec:
    """How the timing tasks run each partition: ``runs`` timed runs after a compiling one."""

    runs: int = 5
    min_size: int = 4096
    driver: str = "python"


@dataclass(frozen=True)
class Task:
    """One row of a sweep, before the machine is known."""

    program: ProgramSpec
    preset: str
    algorithm: str
    cost_model: str
    repeat: int
    #: the batches partitioned are those ``fusionlab run`` partitions (rerolled, dead parts of
    #: writes dropped, arrays freed early: the pipeline's preparing passes), or, ``False``,
    #: the program as captured or written (the paper's figures are of its Fig. 3 as written)
    prepared: bool = True

    @property
    def key(self) -> tuple[str, str, str, str, bool, int]:
        """(program, preset, algorithm, cost model, prepared, repeat): with the machine, a
        row's key (a partition of the batches prepared and one of them as captured are two
        figures, two rows)."""
        return (self.program.name, self.preset, self.algorithm, self.cost_model, self.prepared, self.repeat)

    @property
    def id(self) -> str:
        """A short stable identifier of :attr:`key` (Dask task keys, file names)."""
        return hashlib.sha1(repr(self.key).encode()).hexdigest()[:12]

    @property
    def label(self) -> str:
        return " / ".join(str(k) for k in self.key[:4]) + f" / r{self.repeat}"


@dataclass(frozen=True)
class SweepSpec:
    """A checked spec: every program x preset x algorithm x cost model x repeat is a task."""

    name: str
    programs: tuple[ProgramSpec, ...]
    presets: tuple[str, ...]
    algorithms: tuple[str, ...]
    cost_models: tuple[str, ...]
    repeats: int = 1
    #: partition the prepared batches (:attr:`Task.prepared`)
    prepared: bool = True
    partition_options: dict[str, float] = field(default_factory=dict, hash=False)
    timing: TimingSpec | None = None
    store: str | None = None
    source: str = "<spec>"
    text: str = field(default="", repr=False)

    def tasks(self) -> list[Task]:
        """Every row of the sweep, in a stable order (workload presets; "" for the others)."""
        out = []
        for p in self.programs:
            for preset in (self.presets if p.kind == "workload" else ("",)):
                for model in self.cost_models:
                    for algorithm in self.algorithms:
                        out.extend(Task(p, preset, algorithm, model, r, self.prepared) for r in range(self.repeats))
        return out

    def options_for(self, algorithm: str) -> dict[str, float]:
        """The keyword options ``partition`` gets for ``algorithm`` (budgets of optimal, ilp)."""
        wanted = {"optimal": ("time_limit", "max_nodes"), "ilp": ("time_limit",)}.get(algorithm, ())
        return {k: v for k, v in self.partition_options.items() if k in wanted}


# ---- where a key is: line numbers for TOML and YAML --------------------------------------

_BARE = r"[A-Za-z0-9_\-]+"


def _toml_lines(text: str) -> dict[tuple[Any, ...], int]:
    """Line of each table header and key (tomllib gives values, not positions)."""
    lines: dict[tuple[Any, ...], int] = {}
    table: tuple[str, ...] = ()
    for no, raw in enumerate(text.splitlines(), 1):
        s = raw.strip()
        head = re.match(rf"^\[\s*({_BARE}(?:\s*\.\s*{_BARE})*)\s*\]\s*(#.*)?$", s)
        if head:
            table = tuple(p.strip() for p in head.group(1).split("."))
            lines.setdefault(table, no)
            continue
        key = re.match(rf"^({_BARE}(?:\s*\.\s*{_BARE})*)\s*=", s)
        if key:
            lines.setdefault(table + tuple(p.strip() for p in key.group(1).split(".")), no)
    return lines


def _yaml_lines(text: str) -> dict[tuple[Any, ...], int]:
    import yaml

    lines: dict[tuple[Any, ...], int] = {}

    def walk(node: Any, path: tuple[Any, ...]) -> None:
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                lines.setdefault(path + (k.value,), k.start_mark.line + 1)
                walk(v, path + (k.value,))
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                lines.setdefault(path + (i,), v.start_mark.line + 1)
                walk(v, path + (i,))

    root = yaml.compose(text, Loader=yaml.SafeLoader)
    if root is not None:
        walk(root, ())
    return lines


class _Where:
    """Finds the line of a key (or of one item of a list) for error messages."""

    def __init__(self, source: str, text: str, lines: dict[tuple[Any, ...], int]) -> None:
        self.source, self.text, self.lines = source, text, lines

    def line(self, path: tuple[Any, ...], item: Any = None) -> int | None:
        for n in range(len(path), 0, -1):
            if path[:n] in self.lines:
                start = self.lines[path[:n]]
                if item is not None and isinstance(item, str) and n == len(path):
                    # an item of a list: the first line from the key on that quotes it
                    rows = self.text.splitlines()
                    for k in range(start - 1, len(rows)):
                        if re.search(rf"""(["']){re.escape(item)}\1""", rows[k]) or (
                                k > start - 1 and re.match(rf"^\s*-\s*{re.escape(item)}\s*(#.*)?$", rows[k])):
                            return k + 1
                return start
        return None

    def error(self, path: tuple[Any, ...], reason: str, item: Any = None) -> SpecError:
        return SpecError(self.source, self.line(path, item), None, reason)


# ---- parsing -----------------------------------------------------------------------------

def _read(text: str, source: str, fmt: str) -> tuple[dict[str, Any], _Where]:
    if fmt == "yaml":
        try:
            import yaml
        except ImportError:
            raise SpecError(source, None, None, "YAML specs need PyYAML (pip install pyyaml); or write the spec "
                                                "in TOML") from None
        try:
            data = yaml.safe_load(text)
            where = _Where(source, text, _yaml_lines(text))
        except yaml.MarkedYAMLError as exc:
            mark = exc.problem_mark
            raise SpecError(source, mark.line + 1 if mark else None, mark.column + 1 if mark else None,
                            f"not valid YAML: {exc.problem}") from None
        data = {} if data is None else data
        if not isinstance(data, dict):
            raise SpecError(source, 1, None, "a spec is a mapping of keys (workloads, algorithms, ...), "
                                             f"not a {type(data).__name__}")
        return data, where
    import tomllib

    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        found = re.search(r"\s*\(at line (\d+), column (\d+)\)", message)
        line = getattr(exc, "lineno", None) or (int(found.group(1)) if found else None)
        column = getattr(exc, "colno", None) or (int(found.group(2)) if found else None)
        reason = getattr(exc, "msg", None) or (message[:found.start()] if found else message)
        raise SpecError(source, line, column, f"not valid TOML: {reason}") from None
    return data, _Where(source, text, _toml_lines(text))


def _suggest(word: str, choices: Any) -> str:
    close = difflib.get_close_matches(str(word), list(choices), n=1)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _check_keys(data: dict[str, Any], allowed: tuple[str, ...], path: tuple[str, ...], where: _Where) -> None:
    for key in data:
        if key not in allowed:
            inside = f" in [{'.'.join(path)}]" if path else ""
            raise where.error(path + (key,), f"unknown key {key!r}{inside}{_suggest(key, allowed)}; "
                                             f"the keys are: {', '.join(allowed)}")


def _names(data: dict[str, Any], key: str, where: _Where, valid: Any, what: str,
           default: tuple[str, ...] | None = None, expand: dict[str, tuple[str, ...]] | None = None
           ) -> tuple[str, ...]:
    value = data.get(key, default)
    if value is None:
        return ()
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise where.error((key,), f"'{key}' must be a list of names, e.g. {key} = [\"{next(iter(valid))}\"]")
    out: list[str] = []
    for v in value:
        if expand and v in expand:
            out.extend(x for x in expand[v] if x not in out)
            continue
        if v not in valid:
            raise where.error((key,), f"unknown {what} {v!r} in '{key}'{_suggest(v, valid)}; choose from "
                                      f"{', '.join(valid)}" + (f" (or {', '.join(expand)})" if expand else ""), v)
        if v not in out:
            out.append(v)
    if not out and key in data:
        raise where.error((key,), f"'{key}' is empty: name at least one {what}")
    return tuple(out)


def _whole(value: Any, path: tuple[str, ...], where: _Where, least: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < least:
        raise where.error(path, f"'{'.'.join(path)}' must be a whole number >= {least}, got {value!r}")
    return value


def _positive(value: Any, path: tuple[str, ...], where: _Where) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        raise where.error(path, f"'{'.'.join(path)}' must be a number of seconds > 0, got {value!r}")
    return float(value)


def _table(data: dict[str, Any], key: str, where: _Where) -> dict[str, Any] | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise where.error((key,), f"'{key}' must be a table ([{key}] with its keys below it), got {value!r}")
    _check_keys(value, _TABLE_KEYS[key], (key,), where)
    return value


def _random_programs(table: dict[str, Any], where: _Where) -> list[ProgramSpec]:
    sizes = table.get("instructions", 50)
    sizes = [sizes] if not isinstance(sizes, list) else sizes
    sizes = [_whole(n, ("random", "instructions"), where, 8) for n in sizes]
    seeds_value = table.get("seeds", [0])
    if isinstance(seeds_value, dict):
        _check_keys(seeds_value, ("first", "count"), ("random", "seeds"), where)
        first = _whole(seeds_value.get("first", 0), ("random", "seeds", "first"), where, 0)
        count = _whole(seeds_value.get("count", 1), ("random", "seeds", "count"), where, 1)
        seeds = list(range(first, first + count))
    elif isinstance(seeds_value, list):
        seeds = [_whole(s, ("random", "seeds"), where, 0) for s in seeds_value]
    else:
        raise where.error(("random", "seeds"), "'random.seeds' must be a list of whole numbers or a table "
                                               "{ first = 0, count = 100 }")
    arrays = _whole(table.get("arrays", 6), ("random", "arrays"), where, 1)
    size = _whole(table.get("size", 1000), ("random", "size"), where, 1)
    return [ProgramSpec("random", f"random-{n}-{arrays}x{size}-s{s}", instructions=n, seed=s, arrays=arrays,
                        size=size) for n in sizes for s in seeds]


def _file_programs(data: dict[str, Any], where: _Where, base: Path) -> list[ProgramSpec]:
    files = data.get("files", [])
    files = [files] if isinstance(files, str) else files
    if not isinstance(files, list) or not all(isinstance(f, str) for f in files):
        raise where.error(("files",), "'files' must be a list of paths (Python files or bytecode), "
                                      "relative to the spec")
    out = []
    for f in files:
        path = Path(f) if os.path.isabs(f) else base / f
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise where.error(("files",), f"cannot read {f!r} ({exc.strerror}; looked at {path})", f) from None
        out.append(ProgramSpec("python" if f.endswith(".py") else "bytecode", f, source=text))
    return out


def _workload_programs(data: dict[str, Any], where: _Where, presets: tuple[str, ...]) -> list[ProgramSpec]:
    from fusionlab.workloads import ALL_WORKLOADS, CORPUS, PAPER_WORKLOADS, WORKLOADS

    names = _names(data, "workloads", where, ALL_WORKLOADS, "workload",
                   expand={"paper": PAPER_WORKLOADS, "all": tuple(WORKLOADS), "corpus": tuple(CORPUS)})
    for name in names:
        missing = [p for p in presets if p not in ALL_WORKLOADS[name].presets]
        if missing:
            raise where.error(("presets",), f"workload {name!r} has no preset {missing[0]!r} (it has "
                                            f"{', '.join(ALL_WORKLOADS[name].presets)}); drop the preset or the "
                                            "workload", missing[0])
    return [ProgramSpec("workload", n) for n in names]


def _timing(data: dict[str, Any], where: _Where) -> TimingSpec | None:
    table = _table(data, "timing", where)
    if table is None:
        return None
    driver = table.get("driver", "python")
    if driver not in DRIVERS:
        raise where.error(("timing", "driver"), f"unknown driver {driver!r}{_suggest(driver, DRIVERS)}; "
                                                f"choose from {', '.join(DRIVERS)}")
    return TimingSpec(runs=_whole(table.get("runs", 5), ("timing", "runs"), where, 1),
                      min_size=_whole(table.get("min_size", 4096), ("timing", "min_size"), where, 0),
                      driver=driver)


def _partition_options(data: dict[str, Any], where: _Where) -> dict[str, float]:
    table = _table(data, "partition", where) or {}
    out: dict[str, float] = {}
    if "time_limit" in table:
        out["time_limit"] = _positive(table["time_limit"], ("partition", "time_limit"), where)
    if "max_nodes" in table:
        out["max_nodes"] = _whole(table["max_nodes"], ("partition", "max_nodes"), where, 1)
    return out


def _build(data: dict[str, Any], where: _Where, base: Path, text: str) -> SweepSpec:
    from fusionlab.costs import MODEL_NAMES
    from fusionlab.partition import ALGORITHMS
    from fusionlab.workloads import ALL_WORKLOADS, PRESETS

    _check_keys(data, _TOP_KEYS, (), where)
    all_presets = tuple(dict.fromkeys(p for w in ALL_WORKLOADS.values() for p in w.presets))
    presets = _names(data, "presets", where, all_presets, "preset", default=(PRESETS[0],))
    programs = _workload_programs(data, where, presets) + _file_programs(data, where, base)
    random = _table(data, "random", where)
    if random is not None:
        programs += _random_programs(random, where)
    if not programs:
        raise SpecError(where.source, None, None, "the spec names no program: give 'workloads', 'files' or a "
                                                  "[random] table")
    name = data.get("name", Path(where.source).stem if where.source != "<spec>" else "sweep")
    store = data.get("store")
    for key, value in (("name", name), ("store", store)):
        if value is not None and not isinstance(value, str):
            raise where.error((key,), f"'{key}' must be a string, got {value!r}")
    prepared = data.get("prepared", True)
    if not isinstance(prepared, bool):
        raise where.error(("prepared",), f"'prepared' must be true or false, got {prepared!r}")
    return SweepSpec(
        name=name,
        programs=tuple(programs),
        presets=presets,
        algorithms=_names(data, "algorithms", where, ALGORITHMS, "algorithm", default=("greedy",)),
        cost_models=_names(data, "cost_models", where, MODEL_NAMES, "cost model", default=("bohrium",)),
        repeats=_whole(data.get("repeats", 1), ("repeats",), where, 1),
        prepared=prepared,
        partition_options=_partition_options(data, where),
        timing=_timing(data, where),
        store=None if store is None else str(store if os.path.isabs(store) else base / store),
        source=where.source,
        text=text,
    )


def parse_spec(text: str, source: str = "<spec>", fmt: str | None = None, base: str | Path | None = None
               ) -> SweepSpec:
    """Check a spec's text and return it as a :class:`SweepSpec`.

    Parameters
    ----------
    text
        The spec (TOML, or YAML when ``fmt="yaml"`` or ``source`` ends in ``.yaml``/``.yml``).
    source
        Its name in error messages.
    fmt
        ``"toml"`` or ``"yaml"``; by default from ``source``'s suffix (TOML otherwise).
    base
        The folder that relative ``files`` and ``store`` are relative to (the current one).

    Raises
    ------
    SpecError
        With the line (and column for syntax errors) and the reason.

    Examples
    --------
    >>> s = parse_spec('workloads = ["fig3"]\\nrepeats = 2\\n[timing]\\nruns = 3')
    >>> len(s.tasks()), s.timing.runs
    (2, 3)
    >>> parse_spec('workloads = ["fig3"]\\n[timing]\\nrun = 3')
    Traceback (most recent call last):
    ...
    fusionlab.tools.sweep.spec.SpecError: <spec>:3: unknown key 'run' in [timing] (did you mean 'runs'?); the keys are: runs, min_size, driver
    """
    fmt = fmt or ("yaml" if source.endswith((".yaml", ".yml")) else "toml")
    data, where = _read(text, source, fmt)
    return _build(data, where, Path(base) if base is not None else Path.cwd(), text)


def load_spec(path: str | Path) -> SweepSpec:
    """Read and check a spec file (relative ``files`` and ``store`` are relative to it).

    >>> import tempfile, pathlib
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "s.toml"
    >>> _ = f.write_text('workloads = ["fig3"]\\nstore = "out"')
    >>> load_spec(f).store == str(f.parent / "out")
    True
    """
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise SpecError(str(path), None, None, f"cannot read the spec: {exc.strerror}") from None
    return parse_spec(text, str(path), base=path.parent)

