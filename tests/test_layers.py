"""The layers the imports keep (issue 33): fusionlab's modules live in packages by stage, no
module imports from a later stage, and the oracle and the front half of the pipeline import
no code generator.

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
    return module.startswith("fusionlab.backend.")


#: The stages, earliest first: a module imports from its own stage and earlier ones only
#: (docs/architecture.md, "The stages"). ``fusionlab`` itself, ``__main__`` and ``cli`` are
#: the front doors and sit above them all.
STAGES = ("support", "workloads", "ir", "analysis", "runtime", "capture", "passes", "costs", "partition",
          "backend", "pipeline", "explore", "tools")
FRONT_DOORS = {"fusionlab", "fusionlab.__main__", "fusionlab.cli"}


def stage_of(module: str, graph: dict[str, set[str]]) -> int:
    """The stage's index; ``fusionlab`` itself counts as the latest stage it imports from
    (it re-exports the IR and, when called, the explorer's magic)."""
    if module == "fusionlab":
        return max(stage_of(m, graph) for m in graph["fusionlab"])
    return STAGES.index(module.split(".")[1])


def later_stage_imports(graph: dict[str, set[str]]) -> list[tuple[str, str]]:
    """Every import of ``graph`` (module -> the modules it imports) from a later stage into
    an earlier one."""
    return sorted((m, i) for m, imported in graph.items() if m not in FRONT_DOORS for i in imported
                  if i in FRONT_DOORS - {"fusionlab"} or stage_of(i, graph) > stage_of(m, graph))


def test_every_module_is_in_a_stage_and_no_module_is_flat():
    flat = sorted(m for m in MODULES if m.count(".") == 1 and m not in FRONT_DOORS
                  and MODULES[m].name != "__init__.py")
    assert flat == [], f"modules outside the stages' packages: {flat}"
    assert sorted({m.split(".")[1] for m in MODULES if m not in FRONT_DOORS}) == sorted(STAGES)


def test_no_import_from_a_later_stage_into_an_earlier_one():
    graph = {m: imports_of(m) for m in MODULES}
    assert later_stage_imports(graph) == []


def test_the_stage_rule_sees_a_backward_import():
    # the graph before the packages (e58cf21): capture's recorder reached the oracle and the
    # oracle the code generator; put in today's names, the rule flags the second
    graph = {"fusionlab": {"fusionlab.ir.text"}, "fusionlab.ir.text": set(),
             "fusionlab.runtime.reference": {"fusionlab.ir.text", "fusionlab.backend.numba.emit"},
             "fusionlab.backend.numba.emit": {"fusionlab.ir.text"}, "fusionlab.capture": {"fusionlab.runtime.reference"}}
    assert later_stage_imports(graph) == [("fusionlab.runtime.reference", "fusionlab.backend.numba.emit")]
    graph["fusionlab.ir.text"] = {"fusionlab.cli"}
    assert ("fusionlab.ir.text", "fusionlab.cli") in later_stage_imports(graph)


def test_the_walk_sees_imports_inside_functions_and_relative_ones(tmp_path, monkeypatch):
    assert "fusionlab.backend.numba.plan" in imports_of("fusionlab.pipeline.runner")
    # a relative import, resolved against the module's package
    fake = tmp_path / "m.py"
    fake.write_text("def f():\n    from ..ir import bytecode\n    from .reference import run_reference\n")
    monkeypatch.setitem(MODULES, "fusionlab.runtime.fake", fake)
    assert imports_of("fusionlab.runtime.fake") == {"fusionlab.ir.bytecode", "fusionlab.runtime.reference"}
    assert any(is_code_generator(m) for m in closure("fusionlab.pipeline.runner"))
    # __init__ re-exports the jupyter package inside a function
    assert "fusionlab.explore.jupyter" in imports_of("fusionlab")


@pytest.mark.parametrize("module", ["fusionlab.runtime.reference", "fusionlab.capture", "fusionlab.analysis.wsp",
                                    "fusionlab.analysis.legality", "fusionlab.costs", "fusionlab.partition",
                                    "fusionlab.passes.reroll", "fusionlab.passes.deadwrites", "fusionlab.passes.remat"])
def test_no_code_generator_below_the_backend(module):
    generators = sorted(m for m in closure(module) if is_code_generator(m))
    assert generators == [], f"{module} reaches the code generator through {generators}"
