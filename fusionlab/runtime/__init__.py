"""The NumPy reference executor (the oracle every backend is checked against), the error
model and the check of a run against it."""

from fusionlab.runtime.reference import OPAQUE_FUNCTIONS, Externals, block_order, run_reference

__all__ = ["run_reference", "Externals", "OPAQUE_FUNCTIONS", "block_order"]
