"""Executing programs: the NumPy reference executor (the oracle for every backend), and
the Numba backend with its timing harness."""

from .reference import OPAQUE_FUNCTIONS, Externals, block_order, run_reference

__all__ = ["run_reference", "Externals", "OPAQUE_FUNCTIONS", "block_order", "run", "compare"]


def run(*args, **kwargs):  # type: ignore[no-untyped-def]
    """See :func:`fusionlab.execute.runner.run` (imported lazily: it loads Numba)."""
    from .runner import run as _run

    return _run(*args, **kwargs)


def compare(*args, **kwargs):  # type: ignore[no-untyped-def]
    """See :func:`fusionlab.execute.runner.compare` (imported lazily: it loads Numba)."""
    from .runner import compare as _compare

    return _compare(*args, **kwargs)
