"""What the Numba backend compiles: :data:`NUMBA`, its
:class:`~fusionlab.analysis.capabilities.Capabilities` (issue 33).

The facts are stated once, as data, in :data:`fusionlab.analysis.capabilities.DEFAULT`: the
WSP graph is built in ``analysis/``, which may not import this package, and a graph built
without a backend in mind must forbid what the default backend (this one) cannot run. This
module names that object as Numba's; the pipeline passes it to the graphs it builds
(``pipeline/planning.py``), and the layout asks
:func:`~fusionlab.analysis.capabilities.refusal` with it
(:func:`fusionlab.backend.numba.layout.get_kernel_layout`). ``tests/test_capabilities.py``
checks the facts against Numba itself (its dtypes) and the kernels (its refusals).

To add a fact of this backend (an opcode it now compiles on complex values, a dtype it
computes with), change ``DEFAULT``'s field; a new kind of fact is a new field of
:class:`~fusionlab.analysis.capabilities.Capabilities`, read by the rule or by ``refusal``.

>>> NUMBA.name, NUMBA.scan_with_reduction, NUMBA.mixed_scan_axes
('Numba', False, False)
"""

from __future__ import annotations

from fusionlab.analysis.capabilities import DEFAULT, Capabilities

__all__ = ["NUMBA"]

#: the Numba backend's capabilities (the default backend's: the same object)
NUMBA: Capabilities = DEFAULT
