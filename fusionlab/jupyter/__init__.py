"""Jupyter integration: ``%load_ext fusionlab`` registers ``%%fuse`` and ``%fuse_config``.
Pieces: :mod:`.session` (the result object, data only), :mod:`.explorer` (ipywidgets over
it), :mod:`.magic` (the magics).
"""

from __future__ import annotations

from typing import Any

from .session import FuseResult, ManualOutcome

__all__ = ["load_ipython_extension", "unload_ipython_extension", "FuseResult", "ManualOutcome"]


def load_ipython_extension(ipython: Any) -> None:
    """Register the magics (``%load_ext fusionlab``)."""
    from .magic import FuseMagics

    ipython.register_magics(FuseMagics)


def unload_ipython_extension(ipython: Any) -> None:
    """Nothing to undo beyond the magics, which IPython keeps until restart."""
