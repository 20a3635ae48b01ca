"""The layers the imports keep: the oracle and the front half of the pipeline import no code
generator (issue 33).

The reference executor is the oracle every backend is checked against, so it must not share
code with any of them: a bug in the code generator could otherwise change both sides of a
check alike. Capture and the graph's analysis run before any backend is chosen. The walk
reads the imports from the source (every ``import`` and ``from ... import``, inside
functions too), so a lazy import inside a function counts as well.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "fusionlab"


def _modules() -> dict[str, pathlib.Path]:
    out = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


MODULES = _modules()


def imports_of(name: str) -> set[str]:
    """The fusionlab modules ``name`` imports (a ``from m import x`` names ``m.x`` when that
    is a module, else ``m``)."""
    path = MODULES[name]
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names if a.name.split(".")[0] == "fusionlab"}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module.split(".")[0] != "fusionlab":
                continue
            for a in node.names:
                full = f"{module}.{a.name}"
                found.add(full if full in MODULES else module)
    return {m for m in found if m in MODULES}


def closure(name: str) -> set[str]:
    """Every fusionlab module ``name`` reaches through imports, itself included."""
    seen, todo = set(), [name]
    while todo:
        m = todo.pop()
        if m not in seen:
            seen.add(m)
            todo.extend(imports_of(m))
    return seen


def is_code_generator(module: str) -> bool:
    leaf = module.rpartition(".")[2]
    return leaf.startswith("codegen") or leaf in {"numba_backend", "driver", "driver_loops", "intrinsics"}


def test_the_walk_sees_imports_inside_functions_and_relative_ones():
    # fusionlab.execute.runner imports the backend at module level and relatively
    assert "fusionlab.execute.numba_backend" in imports_of("fusionlab.execute.runner")
    assert any(is_code_generator(m) for m in closure("fusionlab.execute.runner"))
    # __init__ re-exports the jupyter package inside a function
    assert "fusionlab.jupyter" in imports_of("fusionlab")


@pytest.mark.parametrize("module", ["fusionlab.execute.reference", "fusionlab.capture", "fusionlab.wsp",
                                    "fusionlab.legality", "fusionlab.costs", "fusionlab.partition",
                                    "fusionlab.reroll", "fusionlab.deadwrites", "fusionlab.remat"])
def test_no_code_generator_below_the_backend(module):
    generators = sorted(m for m in closure(module) if is_code_generator(m))
    assert generators == [], f"{module} reaches the code generator through {generators}"
