"""One display per explorer: shown once, then updated in place through its display id.

:class:`ExplorerView` shows a :class:`~fusionlab.explore.jupyter.session.FuseResult`'s bundle (the
report for the extension, the static ``text/html`` fallback, text) with
``display(..., display_id=report id)`` and later replaces it with ``update_display``, at
most a few times a second while the searches run (each update re-sends the report), and
always once at the end.

Examples
--------
>>> from fusionlab.ir.examples import fig3
>>> from fusionlab.explore.jupyter.session import FuseResult
>>> shown = []
>>> view = ExplorerView(FuseResult.from_program(fig3(), algorithms=["greedy"]),
...                     display=lambda bundle, **kw: shown.append(kw))
>>> view.show(); view.update(force=True)
>>> [kw.get("update", False) for kw in shown], shown[0]["display_id"] == view.display_id
([False, True], True)
"""

from __future__ import annotations

import time
from typing import Any, Callable

from fusionlab.support.budget import Budget
from fusionlab.explore.jupyter.session import SVG_SECONDS, FuseResult

__all__ = ["ExplorerView", "UPDATE_INTERVAL"]

# Seconds between two in-place updates while the work goes on (a few per second).
UPDATE_INTERVAL = 0.3


class ExplorerView:
    """The one output of a ``%%fuse`` cell.

    Parameters
    ----------
    result
        The result shown.
    display
        ``display(bundle, raw=True, display_id=..., update=bool)``; IPython's by default
        (tests pass their own to capture what would be displayed).
    interval
        Minimum seconds between throttled updates.
    """

    def __init__(self, result: FuseResult, display: Callable[..., Any] | None = None,
                 interval: float = UPDATE_INTERVAL) -> None:
        self.result = result
        self._display = display
        self.interval = interval
        self.shown = False
        self.updates = 0
        self._last = 0.0
        self.displayed: dict[str, Any] = {}

    @property
    def display_id(self) -> str:
        """The display id: the report's ``id``."""
        return self.result.report_id

    def _emit(self, bundle: dict[str, Any], update: bool) -> None:
        if self._display is not None:
            self._display(bundle, raw=True, display_id=self.display_id, update=update)
            return
        from IPython.display import display, update_display

        if update:
            update_display(bundle, raw=True, display_id=self.display_id)
        else:
            display(bundle, raw=True, display_id=self.display_id)

    def show(self, draw: bool = False, budget: Budget | None = None) -> None:
        """Display the bundle (the first display does not wait for a graph layout unless
        ``draw``)."""
        self.displayed = self.result.bundle(budget, draw=draw)
        self._emit(self.displayed, update=False)
        self.shown = True
        self._last = time.perf_counter()

    def update(self, force: bool = False, draw: bool = False, budget: Budget | None = None) -> None:
        """Replace the display with the current state: at once when ``force``, else only
        if :attr:`interval` has passed since the last one (``draw``: lay out the graph
        within ``budget`` if it has not been)."""
        if not self.shown:
            return
        now = time.perf_counter()
        if not force and now - self._last < self.interval:
            return
        self.displayed = self.result.bundle(budget if budget is not None else Budget(SVG_SECONDS), draw=draw)
        self._emit(self.displayed, update=True)
        self.updates += 1
        self._last = time.perf_counter()

    def throttled(self) -> None:
        """:meth:`update` as the work's ``on_update`` callback."""
        self.update()
