"""A compile budget for "Compile & time": watch Numba compile fusionlab's kernels, one by one.

Numba compiles a kernel on its first call, inside the driver's run, so the time a
comparison spends compiling is not known in advance: a cell with an unrolled Python loop
(LU by row operations at n = 60) has hundreds of distinct kernels and took 72 s to compile.
:class:`CompileWatch` listens to Numba's ``numba:compile`` events (its documented event
API) and, before each of *fusionlab's* kernels (or drivers) is compiled, checks the
:class:`~fusionlab.support.budget.Budget` it was given: a spent budget raises
:class:`CompileBudgetSpent`, a pending Kernel -> Interrupt raises ``KeyboardInterrupt``.
Both are raised between kernels, never inside LLVM, so Numba's state stays whole and the
kernels compiled so far stay usable. After each kernel it calls ``on_kernel`` (a progress
line).

:class:`CompileBudgetSpent` derives from ``BaseException``, as ``KeyboardInterrupt`` does:
the driver catches ``Exception`` to fall back to running block by block, and a spent
budget must stop the run, not send it to a slower path that compiles the same kernels.

Examples
--------
>>> from fusionlab.support.budget import Budget
>>> watch = CompileWatch(Budget(0.0))
>>> try:
...     watch.before_compile("fusionlab_kernel_abc")
... except CompileBudgetSpent as exc:
...     print(exc)
compile budget of 0 s spent after 0 kernels compiled
>>> watch.before_compile("numba.np.npyimpl")   # Numba's own helpers are never stopped
False
"""

from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from fusionlab.support.budget import Budget

__all__ = ["CompileBudgetSpent", "CompileWatch", "OUR_MODULES"]

#: the module names fusionlab gives its generated kernels and drivers (``KernelCache``)
OUR_MODULES = ("fusionlab_kernel_", "fusionlab_driver_")
#: Seconds of compilation per source line assumed before any kernel of the comparison was
#: compiled (after, the larger of this and the rate seen). Measured on a loaded 2-core
#: machine: an element-by-element loop of 2,000 iterations fused into one kernel of 4,119
#: lines was still in LLVM's optimiser after 80 s. One compile cannot be stopped once it has
#: started (it is one call into LLVM), so a kernel predicted to outlast the budget left is
#: not started.
SECONDS_PER_LINE = 0.02
#: Kernels this short are always tried (a second or two each at most).
SMALL_KERNEL_LINES = 200


class CompileBudgetSpent(BaseException):
    """The compile budget ran out before a kernel was compiled (see the module's docstring
    for why this is a ``BaseException``)."""

    def __init__(self, seconds: float | None, compiled: int, why: str = "") -> None:
        self.seconds = seconds
        self.compiled = compiled
        self.why = why
        limit = "no" if seconds is None else f"{seconds:g} s"
        super().__init__(f"compile budget of {limit} spent after {compiled} kernels compiled"
                         + (f" ({why})" if why else ""))


@dataclass
class CompileWatch:
    """Counts, times and gates Numba's compilations of fusionlab's kernels.

    Parameters
    ----------
    budget
        Checked before each kernel's compilation (its ``interrupt`` too).
    on_kernel
        Called after each kernel compiled, with the count so far and the seconds spent
        compiling them.
    """

    budget: Budget
    on_kernel: Callable[[int, float], None] | None = None
    compiled: int = 0
    seconds: float = 0.0
    #: source lines of the kernels compiled (the observed seconds per line)
    lines: int = 0
    _started: dict[int, tuple[float, int, int]] = field(default_factory=dict)

    def before_compile(self, module: str, lines: int = 0) -> bool:
        """Whether ``module``'s compilation is watched; raise when it may not start (the
        budget is spent, or a kernel of ``lines`` source lines would outlast it)."""
        if not module.startswith(OUR_MODULES):
            return False
        if self.budget.interrupt is not None and self.budget.interrupt.pending:
            raise KeyboardInterrupt
        if self.budget.expired():
            raise CompileBudgetSpent(self.budget.seconds, self.compiled)
        predicted = self.predict(lines)
        if lines > SMALL_KERNEL_LINES and predicted > self.budget.remaining():
            raise CompileBudgetSpent(self.budget.seconds, self.compiled,
                                     f"a kernel of {lines:,} lines would take about {predicted:.0f} s to "
                                     f"compile, more than the {self.budget.remaining():.0f} s left")
        return True

    def predict(self, lines: int) -> float:
        """Seconds a kernel of ``lines`` source lines is expected to take to compile."""
        rate = SECONDS_PER_LINE if not self.lines else max(SECONDS_PER_LINE, self.seconds / self.lines)
        return lines * rate

    def on_start(self, event: Any) -> None:
        """Numba's listener hook: a compilation starts."""
        dispatcher = event.data["dispatcher"]
        lines = _lines(dispatcher)
        if self.before_compile(_module(dispatcher), lines):
            self._started[id(dispatcher)] = (time.perf_counter(), len(dispatcher.overloads), lines)

    def on_end(self, event: Any) -> None:
        """Numba's listener hook: a compilation ended (or failed: no new overload)."""
        dispatcher = event.data["dispatcher"]
        started = self._started.pop(id(dispatcher), None)
        if started is None:
            return
        self.seconds += time.perf_counter() - started[0]
        if len(dispatcher.overloads) > started[1]:
            self.compiled += 1
            self.lines += started[2]
            if self.on_kernel is not None:
                self.on_kernel(self.compiled, self.seconds)

    @contextmanager
    def watching(self) -> Iterator["CompileWatch"]:
        """Listen to Numba's compilations while the block runs."""
        from numba.core import event

        watch = self

        class _Listener(event.Listener):  # Numba's registry takes its own Listener class only
            def on_start(self, ev: Any) -> None:
                watch.on_start(ev)

            def on_end(self, ev: Any) -> None:
                watch.on_end(ev)

        listener = _Listener()
        event.register("numba:compile", listener)
        try:
            yield self
        finally:
            event.unregister("numba:compile", listener)


def _module(dispatcher: Any) -> str:
    return getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""


def _lines(dispatcher: Any) -> int:
    """Source lines of the function ``dispatcher`` compiles (0 when unknown)."""
    code = getattr(getattr(dispatcher, "py_func", None), "__code__", None)
    if code is None:
        return 0
    numbers = [line for _, _, line in code.co_lines() if line is not None]
    return max(numbers) - min(numbers) + 1 if numbers else 0
