"""The contraction view (ipywidgets): apply the rewrite rules of paper 003 one by one.

Drawn from a contraction's data alone (an entry of the report's ``contractions``, or
:func:`fusionlab.explore.hof.view.get_contraction_data`): the current term, one button per rule
that applies at each position (apply one; undo; back to the start), the rules refused
there with their reasons, the derivation chain, the generated loop nest and, once timed,
a chart of every arrangement's time beside NumPy's. Applying a rule follows an edge of
the precomputed graph: nothing is recomputed but the timings ("Time every arrangement").

Examples
--------
>>> v = show_contraction("ij,jk->ik", (4, 32), (32, 5), display=lambda w: None)
>>> v.loops()
['i', 'k', 'j']
>>> v.apply("map-rnz exchange", 1).loops()
['i', 'j', 'k']
>>> v.undo().loops()
['i', 'k', 'j']
"""

from __future__ import annotations

from html import escape
from typing import Any, Callable, Mapping, Sequence

import ipywidgets as W

from fusionlab.explore.hof.view import default_blocks, get_contraction_data, time_arrangements
from fusionlab.explore.viz.contraction import (
    applicable, contraction_chart_svg, contraction_title, moves_html, nest_html, path_html,
    step_label, term_html,
)

__all__ = ["ContractionView", "show_contraction", "contractions_tab"]


class ContractionView:
    """Controls and views over one contraction's rewrite graph.

    Parameters
    ----------
    data
        The contraction's data (terms, edges, refusals; optional ``timings``).
    repeat
        Timed runs per arrangement for "Time every arrangement".
    on_timed
        Called once timings are in; when ``data`` is a report's entry (a dict) the timings
        are stored in it too, so the report (and the extension's view of it) carries them.
    """

    def __init__(self, data: Mapping[str, Any], repeat: int = 3,
                 on_timed: Callable[[], Any] | None = None) -> None:
        self.data = dict(data)
        self._source = data
        self._on_timed = on_timed
        self.repeat = repeat
        self.path: list[int] = [int(data["start"])]
        self.steps: list[dict[str, Any]] = []
        fit = W.Layout(width="auto")
        self.title = W.HTML(f"<b>{escape(contraction_title(self.data))}</b>")
        self.term = W.HTML()
        self.rules = W.HBox(layout=W.Layout(flex_flow="row wrap"))
        self.refusals = W.HTML()
        self.undo_button = W.Button(description="Undo", icon="undo", layout=fit)
        self.reset_button = W.Button(description="Back to the start", layout=fit)
        self.derivation = W.HTML()
        self.nest = W.HTML()
        self.time_button = W.Button(description="Time every arrangement", icon="play", button_style="primary",
                                    layout=fit)
        self.message = W.HTML()
        self.chart = W.HTML()
        self.undo_button.on_click(lambda _: self.undo())
        self.reset_button.on_click(lambda _: self.reset())
        self.time_button.on_click(lambda _: self.run_timing())
        self.widget = W.VBox([
            self.title, self.term, W.HTML("<b>rules that apply here</b> (click to apply)"), self.rules,
            W.HBox([self.undo_button, self.reset_button]), self.refusals, self.derivation,
            W.HTML("<b>loop nest</b> (Numba)"), self.nest, W.HBox([self.time_button, self.message]), self.chart,
        ], layout=W.Layout(border="1px solid #d1d5db", padding="4px"))
        self._draw()

    # -- state ---------------------------------------------------------------------------
    @property
    def current(self) -> int:
        """The id of the term shown."""
        return self.path[-1]

    def loops(self) -> list[str]:
        """The current term's loop variables, outermost first."""
        return list(self.data["terms"][self.current]["loops"])

    def apply(self, rule: str, position: int, param: int | None = None) -> "ContractionView":
        """Apply ``rule`` at ``position``; a refused or unknown move raises ``ValueError`` with the reason."""
        for e in applicable(self.data, self.current):
            if (e["rule"], e["position"], e["param"]) == (rule, position, param):
                return self._follow(e)
        why = next((r["message"] for r in self.data["refusals"] if r["term"] == self.current
                    and (r["rule"], r["position"], r["param"]) == (rule, position, param)), None)
        raise ValueError(f"{step_label({'rule': rule, 'position': position, 'param': param})} "
                         + (f"is refused here: {why}" if why else "is not a move of this term; the moves are "
                            + "; ".join(step_label(e) for e in applicable(self.data, self.current))))

    def _follow(self, edge: Mapping[str, Any]) -> "ContractionView":
        self.path.append(int(edge["target"]))
        self.steps.append(dict(edge))
        self._draw()
        return self

    def undo(self) -> "ContractionView":
        """Go back one step (nothing at the start)."""
        if self.steps:
            self.path.pop()
            self.steps.pop()
            self._draw()
        return self

    def reset(self) -> "ContractionView":
        """Back to the start term."""
        del self.path[1:], self.steps[:]
        self._draw()
        return self

    def run_timing(self) -> None:
        """Compile and time every arrangement (checked against NumPy), then draw the chart."""
        self.time_button.disabled = True
        self.message.value = "compiling and timing every arrangement…"
        try:
            self.data["timings"] = time_arrangements(self.data, repeat=self.repeat)
            self.message.value = ""
            if isinstance(self._source, dict):
                self._source["timings"] = self.data["timings"]
            if self._on_timed is not None:
                self._on_timed()
        except Exception as exc:  # timing must never lose the view: say what failed
            self.message.value = f'<span style="color:#b91c1c">{escape(f"{type(exc).__name__}: {exc}")}</span>'
        finally:
            self.time_button.disabled = False
        self._draw()

    # -- drawing -------------------------------------------------------------------------
    def _draw(self) -> None:
        k = self.current
        self.term.value = term_html(self.data, k)
        buttons = []
        for e in applicable(self.data, k):
            b = W.Button(description=step_label(e), tooltip=f"eq. {e['equation']}", layout=W.Layout(width="auto"))
            b.on_click(lambda _, e=e: self._follow(e))
            buttons.append(b)
        self.rules.children = tuple(buttons)
        self.undo_button.disabled = not self.steps
        self.reset_button.disabled = not self.steps
        self.refusals.value = moves_html(self.data, k)
        self.derivation.value = path_html(self.data, self.path, self.steps)
        self.nest.value = nest_html(self.data, k)
        self.chart.value = contraction_chart_svg(self.data, k)


def show_contraction(subscripts: str, shape_a: Sequence[int], shape_b: Sequence[int], dtype: str = "float64",
                     blocks: Mapping[str, int] | None = None, timed: bool = False, repeat: int = 3,
                     display: Callable[[Any], Any] | None = None) -> ContractionView:
    """Show the contraction view of ``np.einsum(subscripts, A, B)`` for the given shapes.

    ``blocks`` defaults to the first summed index subdivided by 16 when 16 divides it
    (:func:`~fusionlab.explore.hof.view.default_blocks`); ``timed`` times every arrangement first.
    """
    if blocks is None:
        blocks = default_blocks(subscripts, shape_a, shape_b)
    view = ContractionView(get_contraction_data(subscripts, shape_a, shape_b, dtype, blocks), repeat=repeat)
    if timed:
        view.run_timing()
    if display is None:
        from IPython.display import display
    display(view.widget)
    return view


def contractions_tab(entries: Sequence[Mapping[str, Any]], on_timed: Callable[[], Any] | None = None
                     ) -> tuple[W.Widget, list[ContractionView]]:
    """A chooser over a report's contractions and the view of the chosen one (the explorer's tab)."""
    views = [ContractionView(e, on_timed=on_timed) for e in entries]
    pick = W.Dropdown(description="contraction", options=[(contraction_title(e), k) for k, e in enumerate(entries)],
                      layout=W.Layout(width="auto"))
    slot = W.VBox([views[0].widget] if views else [])
    pick.observe(lambda ch: setattr(slot, "children", (views[ch["new"]].widget,)), names="value")
    return W.VBox([pick, slot]), views
