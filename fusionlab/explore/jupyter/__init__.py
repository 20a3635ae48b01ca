"""Jupyter integration: ``%load_ext fusionlab`` registers ``%%fuse``, ``%fuse_config`` and
the kernel channel (comm target ``fusionlab.explorer``).

Pieces: :mod:`.session` (the result object, data only), :mod:`.display` (the one display,
updated in place), :mod:`.channel` (the actions the JupyterLab extension asks of the
kernel), :mod:`.magic` (the magics), :mod:`.explorer` (opt-in ipywidgets over the report).
"""

from __future__ import annotations

from typing import Any

from fusionlab.explore.jupyter.session import FuseResult, ManualOutcome

__all__ = ["load_ipython_extension", "unload_ipython_extension", "FuseResult", "ManualOutcome"]


def load_ipython_extension(ipython: Any) -> None:
    """Register the magics and the kernel channel (``%load_ext fusionlab``)."""
    from fusionlab.explore.jupyter.channel import ExplorerChannel
    from fusionlab.explore.jupyter.magic import FuseMagics

    channel = ExplorerChannel()
    channel.register(ipython)
    ipython.register_magics(FuseMagics(ipython, channel))


def unload_ipython_extension(ipython: Any) -> None:
    """Nothing to undo beyond the magics, which IPython keeps until restart."""
