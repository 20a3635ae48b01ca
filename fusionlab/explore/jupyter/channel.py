"""The kernel channel of the explorer: Jupyter comm target ``fusionlab.explorer``.

The JupyterLab extension opens a comm with ``{"id": report id}`` and sends actions
(``docs/explorer-protocol.md``): ``select``, ``batch``, ``merge``, ``split``, ``reset``,
``time``, ``profile``, ``trace``. :meth:`ExplorerChannel.handle` does the work on the explorer's
:class:`~fusionlab.explore.jupyter.session.FuseResult`, updates its display in place (the extension
re-renders from the new report) and returns the reply, which echoes ``request``. It needs
no front end: tests call it with message dictionaries.

Examples
--------
>>> from fusionlab.ir.examples import fig3
>>> from fusionlab.explore.jupyter.session import FuseResult
>>> from fusionlab.explore.jupyter.display import ExplorerView
>>> channel = ExplorerChannel()
>>> view = ExplorerView(FuseResult.from_program(fig3(), algorithms=["singleton", "greedy"]),
...                     display=lambda bundle, **kw: None)
>>> view.show()
>>> channel.add(view)
>>> reply = channel.handle({"id": view.display_id, "action": "select", "algorithm": "singleton",
...                         "cost_model": "bohrium", "request": 7})
>>> reply["ok"], reply["request"], reply["selected"]
(True, 7, {'algorithm': 'singleton', 'cost_model': 'bohrium'})
>>> channel.handle({"id": "gone", "action": "reset"})["ok"]
False
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, Mapping

from fusionlab.support.budget import Budget
from fusionlab.explore.jupyter.display import ExplorerView

__all__ = ["ExplorerChannel", "TARGET", "MAX_EXPLORERS"]

TARGET = "fusionlab.explorer"
GONE = ("this explorer is not in the kernel any more (the kernel restarted, or many cells ran since): "
        "run the cell again to explore it")
# Explorers the channel keeps alive (each holds a capture and copies of the arrays its cell
# read, for timing); older ones answer "run the cell again".
MAX_EXPLORERS = 10


class ExplorerChannel:
    """The explorers of this kernel, by report id, and the handler of their messages."""

    def __init__(self, max_explorers: int = MAX_EXPLORERS) -> None:
        self.views: OrderedDict[str, ExplorerView] = OrderedDict()
        self.max_explorers = max_explorers

    def add(self, view: ExplorerView) -> None:
        """Make ``view`` reachable from the front end (the oldest is forgotten past the cap)."""
        self.views[view.display_id] = view
        self.views.move_to_end(view.display_id)
        while len(self.views) > self.max_explorers:
            self.views.popitem(last=False)

    # -- the comm ------------------------------------------------------------------------
    def register(self, ipython: Any = None) -> bool:
        """Register the comm target with the kernel's comm manager; ``False`` when there
        is no kernel (a terminal IPython): the static views still work."""
        if ipython is not None and getattr(ipython, "kernel", None) is None:
            return False
        try:
            from comm import get_comm_manager

            manager = get_comm_manager()
        except Exception:  # no comm support in this kernel: the views stay static
            return False
        manager.register_target(TARGET, self.open)
        return True

    def open(self, comm: Any, msg: Mapping[str, Any]) -> None:
        """A comm was opened by the front end for explorer ``data["id"]``."""
        report_id = str((msg.get("content", {}).get("data") or {}).get("id", ""))
        if report_id not in self.views:
            # a saved notebook's explorer after a restart: say so at once (the front end
            # shows its controls need the cell run again)
            comm.close({"message": GONE})
            return

        def on_msg(message: Mapping[str, Any]) -> None:
            data = dict(message.get("content", {}).get("data") or {})
            data.setdefault("id", report_id)
            comm.send(self.handle(data))

        comm.on_msg(on_msg)

    # -- the actions ---------------------------------------------------------------------
    def handle(self, data: Mapping[str, Any]) -> dict[str, Any]:
        """Do what ``data`` asks of the explorer ``data["id"]``; the reply to send back."""
        request = data.get("request")
        action = str(data.get("action", ""))
        view = self.views.get(str(data.get("id", "")))
        if view is None:
            return _reply(request, False, GONE, action=action)
        handler = self._actions().get(action)
        if handler is None:
            return _reply(request, False, f"unknown action {action!r}; the kernel answers "
                                          f"{', '.join(self._actions())}", action=action)
        try:
            ok, message, extra = handler(view, data)
        except (ValueError, IndexError, KeyError, TypeError) as exc:
            return _reply(request, False, str(exc), action=action)
        except KeyboardInterrupt:
            view.result.mark_interrupted()
            ok, message, extra = False, "interrupted", {}
        if action != "trace":
            view.update(force=True, draw=True)
        extra.setdefault("selected", dict(view.result.report()["selected"]))
        return _reply(request, ok, message, action=action, **extra)

    def _actions(self) -> dict[str, Callable[[ExplorerView, Mapping[str, Any]], tuple[bool, str, dict[str, Any]]]]:
        return {"select": _select, "batch": _batch, "merge": _merge, "split": _split, "reset": _reset,
                "time": _time, "profile": _profile, "trace": _trace, "time_waterfall": _time_waterfall}


def _reply(request: Any, ok: bool, message: str, **extra: Any) -> dict[str, Any]:
    return {"request": request, "ok": ok, "message": message, **extra}


def _select(view: ExplorerView, data: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any]]:
    r = view.result
    r.select(data.get("algorithm") or None, data.get("cost_model") or None)
    if r.selected[0] != "manual" and r.selected not in r.parts.entries:
        r.compute(Budget(r.budget_seconds), on_update=view.throttled)  # not computed yet: within the budget
    if r.selected[0] != "manual" and r.selected not in r.parts.results:
        entry = r.parts.entries.get(r.selected, {})
        return False, f"{r.selected[0]} / {r.selected[1]} has no partition: " \
                      f"{'; '.join(entry.get('notes', [])) or entry.get('status', 'pending')}", {}
    return True, f"selected {r.selected[0]} / {r.selected[1]}", {}


def _batch(view: ExplorerView, data: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any]]:
    r = view.result
    r.set_batch(int(data["batch"]))
    r.compute(Budget(r.budget_seconds), on_update=view.throttled)
    return True, f"batch {r.batch + 1} of {len(r.batches)}", {}


def _merge(view: ExplorerView, data: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any]]:
    outcome = view.result.merge(int(data["a"]), int(data["b"]))
    return outcome.legal, outcome.summary, {"outcome": outcome.to_dict()}


def _split(view: ExplorerView, data: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any]]:
    ins = data.get("instructions")
    outcome = view.result.split(int(data["block"]), [int(i) for i in ins] if ins else None)
    return outcome.legal, outcome.summary, {"outcome": outcome.to_dict()}


def _reset(view: ExplorerView, data: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any]]:
    view.result.reset_manual()
    return True, "the manual partition is forgotten", {}


def _time(view: ExplorerView, data: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any]]:
    repeat = int(data.get("repeat") or 5)   # `fusionlab compare --repeat`'s default, as the button's
    if repeat < 1:
        raise ValueError("repeat must be at least 1")
    records = view.result.time(repeat=repeat)
    left = [r.not_timed for r in records if r.not_timed]
    why = f"; {len(left)} not timed ({left[0]})" if left else ""
    return True, f"timed with {repeat} runs per variant{why}", {"timings": view.result.timings}


def _time_waterfall(view: ExplorerView, data: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any]]:
    repeat = int(data.get("repeat") or 5)
    got = view.result.time_waterfall(str(data["a"]), str(data["b"]), str(data.get("cost_model") or "") or None,
                                     repeat=repeat)
    timed = sum(1 for p in got["points"] if p["median_seconds"] is not None)
    left = [p["not_timed"] for p in got["points"] if p["not_timed"]]
    why = f"; {len(left)} not timed ({left[0]})" if left else ""
    return True, (f"timed {timed} of the {got['timed_points']} partitions along the {got['steps']} steps "
                  f"with {repeat} runs each{why}"), {"measured_waterfall": got}


def _profile(view: ExplorerView, data: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any]]:
    repeat = int(data.get("repeat") or 5)
    if repeat < 1:
        raise ValueError("repeat must be at least 1")
    got = view.result.profile(repeat=repeat)
    err = got.model_error.median_abs_log_ratio
    said = "" if err is None else f"; the time model's median |log(predicted / measured)| {err:.2f}"
    return True, (f"profiled {len(got.kernels)} blocks of {got.algorithm} / {got.cost_model} with {repeat} runs"
                  f"{said}"), {"profile": view.result.report()["profile"]}


def _trace(view: ExplorerView, data: Mapping[str, Any]) -> tuple[bool, str, dict[str, Any]]:
    trace = view.result.full_trace()
    if trace is None:
        return False, "no search trace: the optimal algorithm did not run under this cost model", {"trace": None}
    return True, f"{len(trace['nodes'])} nodes", {"trace": trace}
