"""The layers of docs/architecture.md, enforced: no module imports from a layer above its own.

Every `import` and `from ... import` of every module under `sage_pddl/` is read with `ast`,
function-local ones included (a lazy import is still a dependency). An import of another area
of the package must go DOWN the layers; two areas on one layer must not import each other
(they are independent by design). The picture this checks is the one in docs/architecture.md;
the test also checks that the doc still lists these layers, so the two cannot drift apart.
"""
from __future__ import annotations

import ast
from pathlib import Path

import networkx as nx
import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "sage_pddl"
DOC = Path(__file__).resolve().parents[1] / "docs" / "architecture.md"

LAYERS: tuple[tuple[str, ...], ...] = (
    ("pddl",),
    ("gate", "llm", "domains"),
    ("tasks", "export"),
    ("env",),
    ("planners", "induce", "runtime"),
    ("bench",),
    ("cli", "__main__", "__init__"),
)
"""Bottom to top. `__init__` is the package's public API (it re-exports lazily from every layer)
and `__main__` runs the CLI, so both sit with the CLI at the top."""

LAYER_OF = {area: level for level, areas in enumerate(LAYERS) for area in areas}


def _module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 1:
        parts = parts[:-1]
    return ".".join(parts)


def _area(module: str) -> str:
    """The area of a module: the first component below `sage_pddl` (`sage_pddl` itself is
    `__init__`)."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _is_module(module: str, package: Path) -> bool:
    """Whether `module` (`sage_pddl.a.b`) is a module or subpackage of the package (not a
    name defined in one)."""
    path = package.joinpath(*module.split(".")[1:])
    return path.is_dir() or path.with_suffix(".py").is_file()


def imports_of(path: Path, package_dir: Path = PACKAGE) -> list[tuple[int, str]]:
    """(line, imported module) for every import of `sage_pddl` in the file, each resolved to the
    module it names (`from .taskset import Task` -> `sage_pddl.tasks.taskset`)."""
    module = _module_name(path, package_dir)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target == "sage_pddl" or target.startswith("sage_pddl."):
                # `from X import name` imports the module X.name when there is one, else X
                for alias in node.names:
                    member = f"{target}.{alias.name}"
                    found.append((node.lineno, member if _is_module(member, package_dir)
                                  else target))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names if a.name.startswith("sage_pddl")]
    return found


def violations_in(path: Path, package_dir: Path = PACKAGE) -> list[str]:
    area = _area(_module_name(path, package_dir))
    level = LAYER_OF[area]
    out = []
    for line, target in imports_of(path, package_dir):
        other = _area(target)
        if other == area:
            continue
        if LAYER_OF[other] > level or (LAYER_OF[other] == level and level < LAYER_OF["cli"]):
            out.append(f"{path.relative_to(package_dir.parent)}:{line}: {area} (layer {level}) "
                       f"imports {target} ({other}, layer {LAYER_OF[other]})")
    return out


def test_every_area_is_on_a_layer():
    areas = {_area(_module_name(p)) for p in PACKAGE.rglob("*.py")}
    assert areas <= set(LAYER_OF), f"areas missing from LAYERS: {sorted(areas - set(LAYER_OF))}"


def test_no_module_imports_from_a_layer_above_its_own():
    found = [v for path in sorted(PACKAGE.rglob("*.py")) for v in violations_in(path)]
    assert not found, "imports going up the layers:\n" + "\n".join(found)


def test_the_check_fails_on_an_upward_import(tmp_path):
    """The checker itself can fail: a function-local import of the planners in a gate module,
    and a same-layer import of the LLM backends from the gate, are both caught."""
    package = tmp_path / "sage_pddl"
    bad = package / "gate" / "bad.py"
    bad.parent.mkdir(parents=True)
    (package / "planners").mkdir()
    bad.write_text("from ..llm import get_backend\n\n"
                   "def f():\n    from ..planners import get_planner\n")
    found = violations_in(bad, package)
    assert len(found) == 2
    assert "bad.py:1: gate (layer 1) imports sage_pddl.llm (llm, layer 1)" in found[0]
    assert "bad.py:4: gate (layer 1) imports sage_pddl.planners (planners, layer 4)" in found[1]


def import_graph(package_dir: Path = PACKAGE) -> nx.DiGraph:
    """Module -> module it imports (function-local imports included), each edge with the line
    of an import that makes it. Importing a submodule is not counted as importing its package's
    `__init__` (Python runs it, but a re-export there is not a dependency of the submodule)."""
    graph = nx.DiGraph()
    for path in sorted(package_dir.rglob("*.py")):
        module = _module_name(path, package_dir)
        graph.add_node(module)
        for line, target in imports_of(path, package_dir):
            if target != module and not graph.has_edge(module, target):
                graph.add_edge(module, target, line=line)
    return graph


def import_cycles(graph: nx.DiGraph) -> list[list[str]]:
    """Each group of modules that import each other (a strongly connected component of more
    than one module), as its sorted modules followed by its edges (`a:LINE -> b`)."""
    cycles = []
    for group in nx.strongly_connected_components(graph):
        if len(group) > 1:
            edges = sorted(f"{a}:{graph.edges[a, b]['line']} -> {b}"
                           for a, b in graph.subgraph(group).edges)
            cycles.append(sorted(group) + edges)
    return sorted(cycles)


def test_no_import_cycles():
    """Imports go one way within an area too: no module reaches itself through imports, local
    ones included (a function-local import that only hides a cycle from Python is a cycle)."""
    found = import_cycles(import_graph())
    assert not found, "import cycles:\n" + "\n".join("  " + "\n      ".join(c) for c in found)


def test_the_cycle_check_finds_a_local_import_cycle(tmp_path):
    """The checker itself can fail: a cycle closed by a function-local import is found, with
    its modules and the lines of its imports."""
    package = tmp_path / "sage_pddl"
    (package / "tasks").mkdir(parents=True)
    (package / "tasks" / "__init__.py").write_text("")
    (package / "tasks" / "a.py").write_text("from .b import f\n")
    (package / "tasks" / "b.py").write_text("def f():\n    from . import a\n")
    (package / "tasks" / "c.py").write_text("from .a import f\n")
    assert import_cycles(import_graph(package)) == [[
        "sage_pddl.tasks.a", "sage_pddl.tasks.b",
        "sage_pddl.tasks.a:1 -> sage_pddl.tasks.b", "sage_pddl.tasks.b:2 -> sage_pddl.tasks.a"]]


@pytest.mark.parametrize("areas", LAYERS)
def test_the_architecture_doc_shows_every_layer(areas):
    text = DOC.read_text(encoding="utf-8")
    for area in areas:
        if not area.startswith("__"):
            assert f"`{area}`" in text, f"docs/architecture.md does not mention `{area}`"
