"""House habits the linters do not check, enforced on every module of the package, the tests
and the tools: each opens with a docstring saying what it is for, and a function-local import
says why it is not at the top of its module (an optional extra, or the start-up time of a
command), in a comment on its line or the line above."""
from __future__ import annotations

import ast
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCES = sorted(p for folder in ("sage_pddl", "tests", "tools")
                 for p in (REPO / folder).rglob("*.py"))


def test_every_module_opens_with_a_docstring():
    missing = [str(p.relative_to(REPO)) for p in SOURCES
               if ast.get_docstring(ast.parse(p.read_text(encoding="utf-8"))) is None]
    assert len(SOURCES) > 150 and missing == []


def _function_local_imports(path: Path) -> list[tuple[int, str, bool]]:
    """(line, imported module, has a comment) of each import inside a function."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    found = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if in_function and isinstance(child, (ast.Import, ast.ImportFrom)):
                module = (child.module or "") if isinstance(child, ast.ImportFrom) \
                    else child.names[0].name
                if isinstance(child, ast.ImportFrom):
                    module = "." * child.level + module
                span = lines[child.lineno - 1:(child.end_lineno or child.lineno)]
                above = lines[child.lineno - 2].strip() if child.lineno > 1 else ""
                commented = any("#" in line for line in span) or above.startswith("#")
                found.append((child.lineno, module, commented))
            visit(child, inside)

    visit(ast.parse(text), False)
    return found


def test_function_local_imports_say_why():
    bare = []
    for path in SOURCES:
        relative = str(path.relative_to(REPO))
        if not relative.startswith("sage_pddl/"):
            continue
        for line, module, commented in _function_local_imports(path):
            if not commented:
                bare.append(f"{relative}:{line} imports {module}")
    assert bare == []


def test_the_import_check_sees_a_bare_local_import(tmp_path):
    module = tmp_path / "example.py"
    module.write_text('"""An example."""\n\ndef f():\n    import json\n    return json\n\n'
                      'def g():\n    import csv  # start-up time\n    return csv\n')
    assert _function_local_imports(module) == [(4, "json", False), (8, "csv", True)]
