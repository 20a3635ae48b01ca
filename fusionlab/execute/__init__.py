"""Executing programs: the NumPy reference executor (the oracle for every backend)."""

from .reference import OPAQUE_FUNCTIONS, Externals, block_order, run_reference

__all__ = ["run_reference", "Externals", "OPAQUE_FUNCTIONS", "block_order"]
