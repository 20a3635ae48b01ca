"""The opt-in ipywidgets explorer over a :class:`~fusionlab.explore.jupyter.session.FuseResult`,
for front ends with a live kernel but no JupyterLab extension (``res.widgets()`` or
``%%fuse --widgets``; never shown by default: widgets do not survive a reload).

Its tabs are drawn from the report alone. Every control recomputes in the kernel and updates
the explorer's one display (:class:`~fusionlab.explore.jupyter.display.ExplorerView`) in place, so
the widgets, the extension and the fallback view show the same partition.
"""

from __future__ import annotations

from html import escape
from typing import Any, Callable

import ipywidgets as W

from fusionlab.explore.report import BATCHES_LISTED, MIME_TYPE, batch_menu, format_cost  # noqa: F401  (docstring examples; the constant's old home)
from fusionlab.explore.viz.charts import cost_chart_svg, timing_chart_svg
from fusionlab.explore.viz.listing import (
    code_html, cost_table_html, find_partition, listing_html, notices_html, partition_summary,
    status_line, timing_table_html,
)
from fusionlab.explore.viz.roofline import profile_html
from fusionlab.explore.viz.tree import tree_summary, tree_svg
from fusionlab.explore.jupyter.contraction import ContractionView, contractions_tab
from fusionlab.explore.jupyter.display import ExplorerView
from fusionlab.explore.jupyter.session import FuseResult

__all__ = ["Explorer"]


def _batch_options(report: dict[str, Any]) -> list[tuple[str, int]]:
    """The batch selector's options: the report's ``batch_menu``
    (:func:`fusionlab.explore.report.batch_menu`, the JupyterLab extension's menu too).

    >>> bs = [{"index": k, "instructions": 3, "same_as": None if k < 2 else k % 2} for k in range(60)]
    >>> [label for label, _ in _batch_options({"batches": bs, "batch": 7, "batch_menu": batch_menu(bs, 7)})]
    ['batch 1: 3 instructions (and 29 more batches like it)', 'batch 2: 3 instructions (and 29 more batches like it)', 'batch 8: 3 instructions — same as batch 2 (partitions cached)']
    """
    return [(m["label"], m["index"]) for m in report["batch_menu"]]


class Explorer:
    """Controls, views and the report display for one ``%%fuse`` result.

    Parameters
    ----------
    result
        The :class:`FuseResult` explored.
    repeat
        Timed runs per partition for "Compile & time".
    display
        The function that shows and updates outputs; IPython's by default (tests pass
        their own to capture what would be displayed).
    view
        The explorer's display, when it is shown already (the magic's); else one is made.

    Examples
    --------
    >>> from fusionlab.ir.examples import fig3
    >>> shown = []
    >>> ex = Explorer(FuseResult.from_program(fig3(), algorithms=["linear", "greedy"]),
    ...               display=lambda obj, **kw: shown.append((obj, kw)))
    >>> ex.show()                                  # the controls, then the one report display
    >>> ex.cost_model.value = "robinson"          # as the front end would set it
    >>> ex.displayed[MIME_TYPE]["selected"]
    {'algorithm': 'greedy', 'cost_model': 'robinson'}
    """

    def __init__(self, result: FuseResult, repeat: int = 3, display: Callable[..., Any] | None = None,
                 view: ExplorerView | None = None) -> None:
        self.result = result
        self.repeat = repeat
        self._display = display
        self.view = view if view is not None else ExplorerView(result, display=display)
        self._busy = False
        self._charts: dict[int, str] = {}  # the cost chart depends on the batch only (~0.1 s to draw)
        report = result.report()
        alg_options = list(report["algorithms"]) + ["manual"]
        self.batch = W.Dropdown(description="batch",
                                options=_batch_options(report),
                                value=result.batch, layout=W.Layout(width="auto"),
                                disabled=len(report["batches"]) < 2)
        self.algorithm = W.Dropdown(description="algorithm", options=alg_options, value=result.selected[0])
        self.cost_model = W.Dropdown(description="cost model", options=report["cost_models"],
                                     value=result.selected[1])
        self.summary = W.HTML()
        self.listing = W.HTML()
        self.costs = W.HTML()
        self.tree = W.HTML()
        self.tree_step = W.IntSlider(description="step", min=0, max=0, value=0, continuous_update=True,
                                     layout=W.Layout(width="60%"))
        self.tree_play = W.Play(min=0, max=0, interval=150, description="replay")
        W.jslink((self.tree_play, "value"), (self.tree_step, "value"))
        self.tree_info = W.HTML()
        self.code = W.HTML()
        # manual mode
        self.merge_a = W.BoundedIntText(description="merge", min=1, max=1, value=1, layout=W.Layout(width="150px"))
        self.merge_b = W.BoundedIntText(description="with", min=1, max=1, value=1, layout=W.Layout(width="150px"))
        # buttons sized to their labels (a fixed width cut "Split into instructions" off)
        fit = W.Layout(width="auto")
        self.merge_button = W.Button(description="Merge blocks", icon="compress", layout=fit)
        self.split_block = W.BoundedIntText(description="split", min=1, max=1, value=1,
                                            layout=W.Layout(width="150px"))
        self.split_button = W.Button(description="Split into instructions", icon="expand", layout=fit)
        self.reset_button = W.Button(description="Reset", layout=fit)
        self.manual_message = W.HTML()
        # timing
        self.time_button = W.Button(description="Compile & time", button_style="primary", icon="play", layout=fit)
        # each block of the selected partition timed beside the time model's prediction, a roofline
        self.profile_button = W.Button(description="Profile", icon="tachometer", layout=fit,
                                       tooltip="time each block of the selected partition beside the time model's "
                                               "prediction, and draw the roofline")
        self.profile_view = W.HTML()
        self.progress = W.IntProgress(min=0, max=1, value=0, description="", layout=W.Layout(width="40%"))
        self.progress_label = W.HTML()
        self.timing = W.HTML()

        self.batch.observe(self._on_batch, names="value")
        self.algorithm.observe(self._on_select, names="value")
        self.cost_model.observe(self._on_select, names="value")
        self.tree_step.observe(lambda _: self._draw_tree(), names="value")
        self.merge_button.on_click(lambda _: self._manual(lambda: self.result.merge(self.merge_a.value,
                                                                                    self.merge_b.value)))
        self.split_button.on_click(lambda _: self._manual(lambda: self.result.split(self.split_block.value)))
        self.reset_button.on_click(lambda _: self._reset())
        self.time_button.on_click(lambda _: self.run_timing())
        self.profile_button.on_click(lambda _: self.run_profile())

        tabs = W.Tab(children=[
            self.listing, self.costs,
            W.VBox([self.tree_info, W.HBox([self.tree_play, self.tree_step]), self.tree]),
            self.code,
            W.VBox([W.HBox([self.merge_a, self.merge_b, self.merge_button]),
                    W.HBox([self.split_block, self.split_button, self.reset_button]), self.manual_message]),
            W.VBox([W.HBox([self.time_button, self.profile_button, self.progress, self.progress_label]), self.timing,
                    self.profile_view]),
        ])
        for k, title in enumerate(["Bytecode", "Costs", "Search tree", "Code", "Manual", "Timing"]):
            tabs.set_title(k, title)
        self.tabs = tabs
        self.contraction_views: list[ContractionView] = []
        self._contractions_key: tuple[Any, ...] = ()
        self._sync_contractions(report)
        self.widget = W.VBox([W.HBox([self.batch, self.algorithm, self.cost_model]), self.summary, tabs],
                             layout=W.Layout(border="1px solid #d1d5db", padding="4px"))
        self._refresh(tree_to_end=True)

    # -- showing -------------------------------------------------------------------------
    def _show(self, obj: Any, **kwargs: Any) -> None:
        if self._display is not None:
            self._display(obj, **kwargs)
            return
        from IPython.display import display, update_display

        if kwargs.pop("update", False):
            update_display(obj, **kwargs)
        else:
            display(obj, **kwargs)

    @property
    def display_id(self) -> str:
        """The display id of the explorer's one display (the report's ``id``)."""
        return self.view.display_id

    @property
    def displayed(self) -> dict[str, Any]:
        """The bundle last displayed."""
        return self.view.displayed

    def show(self) -> None:
        """Display the controls, and the report display unless it is shown already."""
        self._show(self.widget)
        if not self.view.shown:
            self.view.show(draw=True)

    def _update_display(self) -> None:
        self.view.update(force=True, draw=True)

    # -- reacting ------------------------------------------------------------------------
    def _on_batch(self, change: dict[str, Any]) -> None:
        self.result.set_batch(change["new"])
        self._sync_controls()
        self._refresh(tree_to_end=True)

    def _on_select(self, change: dict[str, Any]) -> None:
        if self._busy:
            return
        self.result.select(self.algorithm.value, self.cost_model.value)
        self._refresh(tree_to_end=True)

    def _sync_controls(self) -> None:
        self._busy = True
        try:
            self.algorithm.value, self.cost_model.value = self.result.selected
        finally:
            self._busy = False

    def _manual(self, action: Callable[[], Any]) -> None:
        try:
            outcome = action()
        except (IndexError, ValueError) as exc:
            self.manual_message.value = f'<span style="color:#b91c1c">{escape(str(exc))}</span>'
            return
        colour = "#15803d" if outcome.legal else "#b91c1c"
        delta = outcome.cost_after - outcome.cost_before
        sign = "+" if delta >= 0 else "-"
        text = (f"{outcome.action}: legal; cost {format_cost(outcome.cost_before)} → "
                f"{format_cost(outcome.cost_after)} ({sign}{format_cost(abs(delta))})"
                if outcome.legal else f"{outcome.action} refused — {outcome.reason.lower()}: {outcome.detail}")
        self.manual_message.value = f'<span style="color:{colour}">{escape(text)}</span>'
        self._sync_controls()
        self._refresh()

    def _reset(self) -> None:
        self.result.reset_manual()
        self.manual_message.value = ""
        self._sync_controls()
        self._refresh()

    def run_timing(self) -> None:
        """Compile and time the selected algorithm under every cost model, with progress
        per row and per kernel compiled, within the result's compile budget
        (``FuseResult.compile_seconds``) and run budget (``FuseResult.run_seconds``: the
        timed runs and the check). Kernel -> Interrupt stops it between kernels or runs:
        the rows timed are kept, the others say why not, and the explorer stays usable.
        It runs in the kernel's main thread, blocking the next cell until it returns (why
        not a worker thread: docs/explorer.md, "Compile & time")."""
        self.time_button.disabled = True
        self.timing.value = ""

        def progress(label: str, done: int, total: int) -> None:
            self.progress.max, self.progress.value = total, done
            self.progress_label.value = escape(f"{done}/{total}: {label}" if done < total else "done")

        try:
            self.result.time(repeat=self.repeat, progress=progress)
        except Exception as exc:  # timing must never lose the explorer: say what failed
            self.timing.value = f'<pre style="color:#b91c1c">{escape(f"{type(exc).__name__}: {exc}")}</pre>'
        finally:
            self.time_button.disabled = False
        self._refresh()

    def run_profile(self) -> None:
        """Profile the selected partition (:meth:`FuseResult.profile`): each block timed
        ``repeat`` times beside the ``time`` model's prediction, and the roofline. It runs in
        the kernel's main thread, as Compile & time does; a failure is shown, never raised."""
        self.profile_button.disabled = True
        self.progress_label.value = escape("profiling the selected partition ...")
        try:
            self.result.profile(repeat=max(self.repeat, 1))
            self.progress_label.value = "profiled"
        except Exception as exc:  # profiling must never lose the explorer: say what failed
            self.profile_view.value = f'<pre style="color:#b91c1c">{escape(f"{type(exc).__name__}: {exc}")}</pre>'
            self.progress_label.value = ""
            return
        finally:
            self.profile_button.disabled = False
        self._refresh()

    # -- drawing (reads only the report) -----------------------------------------------------
    def _refresh(self, tree_to_end: bool = False) -> None:
        report = self.result.report()
        sel = report["selected"]
        entry = find_partition(report, sel["algorithm"], sel["cost_model"])
        self.summary.value = (f"<div>{escape(status_line(report))}</div>"
                              f"<div><b>{escape(partition_summary(entry))}</b></div>"
                              + "".join(f"<div>note: {escape(n)}</div>" for n in entry["notes"])
                              + notices_html(report))
        self.listing.value = listing_html(report, entry)
        self._sync_contractions(report)
        if report["batch"] not in self._charts:
            self._charts[report["batch"]] = cost_chart_svg(report)
        self.costs.value = cost_table_html(report) + self._charts[report["batch"]]
        self.code.value = code_html(report)
        blocks = len(entry["blocks"])
        for w in (self.merge_a, self.merge_b, self.split_block):
            w.max = max(blocks, 1)
        trace = report["trace"]
        last = trace["nodes"][-1]["id"] if trace and trace["nodes"] else 0
        self.tree_step.max = self.tree_play.max = last
        if tree_to_end:
            self.tree_step.value = last
        self._draw_tree()
        timings = report["timings"]
        if timings:
            self.timing.value = timing_table_html(timings, len(report["batches"])) + timing_chart_svg(timings)
        if report.get("profile"):
            self.profile_view.value = profile_html(report["profile"])
        self._update_display()

    def _sync_contractions(self, report: dict[str, Any]) -> None:
        """A tab for the rewrite rules of paper 003 while the batch shown has contractions."""
        entries = report.get("contractions") or []
        key = tuple((e["n"], e["subscripts"], str(e["shapes"])) for e in entries)
        if key == self._contractions_key:
            return
        self._contractions_key = key
        kids = tuple(self.tabs.children[:6])
        self.contraction_views = []
        if entries:
            # timings stored in the report's entry: the one display (the extension) shows them too
            tab, self.contraction_views = contractions_tab(entries, on_timed=self._update_display)
            kids += (tab,)
        self.tabs.children = kids
        if entries:
            self.tabs.set_title(6, "Contractions")

    def _draw_tree(self) -> None:
        trace = self.result.report()["trace"]
        if trace is None:
            self.tree_info.value = "No search tree: the optimal algorithm is not among those explored."
            self.tree.value = ""
            return
        step = self.tree_step.value
        self.tree_info.value = (f"<div>Branch and bound under {escape(trace['cost_model'])}: "
                                f"{escape(tree_summary(trace, step))}</div>")
        self.tree.value = tree_svg(trace, step)
