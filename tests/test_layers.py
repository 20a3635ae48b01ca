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
          "backend", "pipeline", "explore", "tools", "course")
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


#: the names a decision's prose travels under (a block's reason, a driver's name, an exception's text)
MESSAGE_NAMES = {"reason", "why", "message", "detail", "note", "msg", "error", "driver", "runs"}


def _is_message(node: ast.expr) -> bool:
    if isinstance(node, ast.Attribute):
        return node.attr in MESSAGE_NAMES
    if isinstance(node, ast.Name):
        return node.id in MESSAGE_NAMES
    # str(exc): an exception's text
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "str"
            and len(node.args) == 1 and isinstance(node.args[0], ast.Name) and node.args[0].id in {"e", "exc", "err"})


def _is_text(node: ast.expr) -> bool:
    if isinstance(node, ast.Constant):
        return isinstance(node.value, str)
    return isinstance(node, (ast.Tuple, ast.List, ast.Set)) and bool(node.elts) and all(_is_text(e) for e in node.elts)


def text_decisions(source: str) -> list[int]:
    """The lines of ``source`` that decide by a message's text: ``reason.startswith(...)``,
    ``driver in ("python driver", ...)``, ``str(exc) == TEXT``-like comparisons of a
    message against string literals."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
                and node.func.attr in ("startswith", "endswith") and _is_message(node.func.value):
            found.append(node.lineno)
        elif isinstance(node, ast.Compare) and any(isinstance(o, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)) for o in node.ops):
            sides = [node.left, *node.comparators]
            if any(_is_message(s) for s in sides) and any(_is_text(s) for s in sides):
                found.append(node.lineno)
    return sorted(found)


def test_the_text_check_sees_the_decisions_runner_py_made_by_text():
    # fusionlab/execute/runner.py at e58cf21, three of its lines
    old = ('def f(self, b, library):\n'
           '    k = b.compiled if self.driver in ("python driver", "compiled driver") else b.kernel\n'
           '    if not b.reason.startswith("no computing instruction") and b.reason.startswith(LIBRARY) == library:\n'
           '        return str(exc) == "x"\n')
    assert text_decisions(old) == [2, 3, 3, 4]
    # a type's decision and a message only shown pass
    assert text_decisions('if b.numpy is NumpyRuns.LIBRARY_CALL:\n    print(b.reason)\n') == []


def test_no_decision_reads_a_message():
    found = {name: lines for name, path in MODULES.items() if (lines := text_decisions(path.read_text()))}
    assert found == {}, f"decisions made by matching a message's text: {found}"
