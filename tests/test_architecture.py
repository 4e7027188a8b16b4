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


def _is_package_member(name: str, package: Path) -> bool:
    """Whether `sage_pddl.<name>` is a module or subpackage (not a function of __init__)."""
    return (package / name).is_dir() or (package / f"{name}.py").is_file()


def imports_of(path: Path, package_dir: Path = PACKAGE) -> list[tuple[int, str]]:
    """(line, imported module) for every import of `sage_pddl` in the file."""
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
            if target == "sage_pddl":
                for alias in node.names:
                    found.append((node.lineno, f"sage_pddl.{alias.name}"
                                  if _is_package_member(alias.name, package_dir)
                                  else "sage_pddl"))
            elif target.startswith("sage_pddl."):
                found.append((node.lineno, target))
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


@pytest.mark.parametrize("areas", LAYERS)
def test_the_architecture_doc_shows_every_layer(areas):
    text = DOC.read_text(encoding="utf-8")
    for area in areas:
        if not area.startswith("__"):
            assert f"`{area}`" in text, f"docs/architecture.md does not mention `{area}`"
