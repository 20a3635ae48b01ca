"""How much of a cell capture records before the rest runs as plain NumPy.

A student's Python loop of array operations records every instruction of every
iteration; past a few tens of thousands of instructions nothing fusion finds repays the
recording (each costs tens of microseconds, NumPy's own operation about one). A
:class:`CaptureBudget` bounds the recording by instructions and by seconds: when capture
passes either, it finishes the operation it is in, SYNCs what the recorded part computed,
stops recording, and the rest of the cell runs as plain NumPy on the arrays' real values
(capture computes eagerly: every traced array holds NumPy's own result). The program
explored is then the recorded prefix, and a :attr:`~.recorder.NoticeKind.BUDGET` notice
says where and why capture stopped.

The budget also bounds one batch: once the open batch holds ``batch_instructions``
instructions it is closed at the start of the next iteration of the user's loop (Bohrium
flushes a long instruction list too). The WSP graph of a batch lists every conflicting pair
of its instructions, so an array updated in every iteration of a long loop makes it grow
with the square of the loop's length (pythran's gradient descent: 69,000 dependencies at
100 epochs, 2.1 million at 400); cut into batches of whole iterations, the batches after the
first are alike and each is partitioned once (the merge cache).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Callable

__all__ = ["CaptureBudget", "DEFAULT_BUDGET", "UNLIMITED", "BATCH_INSTRUCTIONS"]

#: the length past which an open batch is cut at the next iteration: pythran's gradient
#: descent (24 instructions per epoch, each array reused every epoch) takes 1.3 s of graph
#: and greedy at 1,219 instructions, 3.4 s at 2,419 and 22 s at 4,819 (docs/capture.md,
#: "Long batches are cut")
BATCH_INSTRUCTIONS = 2048


@dataclass(frozen=True)
class CaptureBudget:
    """At most ``instructions`` recorded instructions and ``seconds`` of capture
    (``math.inf``: no limit; 0: record nothing, the whole cell runs as plain NumPy).

    ``clock`` is the time source (tests inject one; wall-clock time by default). The time
    is read every :attr:`every` instructions (1 by default: ``time.perf_counter`` costs
    ~0.1 µs, recording an instruction 20 µs or more; read every 64 instructions, a cell of
    10^7-element operations, each 0.3 s on a loaded machine, stopped after 20.9 s of a
    10 s budget).

    Examples
    --------
    >>> b = CaptureBudget(seconds=5, instructions=1000)
    >>> b.passed(999, 1.0), b.passed(1000, 1.0), b.passed(10, 5.0)
    (False, True, True)
    >>> UNLIMITED.passed(10**9, 1e9), CaptureBudget(instructions=0).passed(0, 0.0)
    (False, True)
    >>> UNLIMITED.batch_instructions
    2048
    >>> CaptureBudget(seconds=-1)
    Traceback (most recent call last):
    ...
    ValueError: a capture budget is a number >= 0 of seconds and of instructions (math.inf: no limit), not seconds=-1
    """

    seconds: float = math.inf
    instructions: float = math.inf
    clock: Callable[[], float] = field(default=time.perf_counter, compare=False)
    every: int = 1
    #: the open batch is closed at the next iteration once it holds this many instructions
    #: (``math.inf``: batches end only where a value leaves the program)
    batch_instructions: float = BATCH_INSTRUCTIONS

    def __post_init__(self) -> None:
        if not self.batch_instructions >= 1:
            raise ValueError(f"a batch holds at least one instruction, not batch_instructions="
                             f"{self.batch_instructions!r}")
        for name in ("seconds", "instructions"):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not value >= 0:
                raise ValueError(f"a capture budget is a number >= 0 of seconds and of instructions "
                                 f"(math.inf: no limit), not {name}={value!r}")

    @property
    def unlimited(self) -> bool:
        """Whether nothing ever stops the recording."""
        return self.seconds == math.inf and self.instructions == math.inf

    def passed(self, recorded: int, elapsed: float) -> bool:
        """Whether ``recorded`` instructions after ``elapsed`` seconds exhaust the budget."""
        return recorded >= self.instructions or elapsed >= self.seconds

    def describe(self) -> str:
        """The budget as the options that set it say it.

        >>> DEFAULT_BUDGET.describe()
        '10 s or 50,000 instructions'
        """
        parts = []
        if self.seconds != math.inf:
            parts.append(f"{self.seconds:g} s")
        if self.instructions != math.inf:
            parts.append(f"{int(self.instructions):,} instructions")
        return " or ".join(parts) or "no limit"


#: what ``%%fuse`` records by default: ~10 s and 50,000 instructions (a loop of tiny-array
#: operations records ~20 µs per instruction, so the instruction cap usually comes first; a
#: program of large arrays — where each operation itself takes long — stops on time)
DEFAULT_BUDGET = CaptureBudget(seconds=10.0, instructions=50_000)
#: no limit: what :func:`fusionlab.capture.capture` records unless told otherwise
UNLIMITED = CaptureBudget()
