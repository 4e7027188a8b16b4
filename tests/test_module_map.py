"""docs/architecture.md names every module of sage_pddl (`tools/module_map.py --check`)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

TOOL = Path(__file__).resolve().parents[1] / "tools" / "module_map.py"


def _tool():
    spec = importlib.util.spec_from_file_location("module_map", TOOL)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_architecture_page_names_every_module():
    assert _tool().main(["--check"]) == 0, "run `python tools/module_map.py --write`"


def test_the_check_names_what_the_page_leaves_out(tmp_path):
    tool = _tool()
    (tmp_path / "gate").mkdir()
    (tmp_path / "gate" / "table.py").write_text('"""The table. More words."""\n')
    (tmp_path / "gate" / "new.py").write_text('"""A new module, e.g. a split one.\n\nMore."""\n')
    (tmp_path / "runtime.py").write_text("x = 1\n")
    doc = "| 1 | `gate` | ... |\n| 4 | `runtime` | ... |\n\n`gate/table.py` is the table.\n"
    found = tool.modules(tmp_path)
    assert tool.unmentioned(found, doc) == ["gate/new.py", "runtime.py"]
    rendered = tool.tables(found, doc)
    assert "#### `gate` (layer 1)" in rendered and "#### `runtime` (layer 4)" in rendered
    assert "| `gate/new.py` | A new module, e.g. a split one. |" in rendered
    assert "| `gate/table.py` | The table. |" in rendered
    assert "| `runtime.py` | (no docstring) |" in rendered
    assert tool.unmentioned(found, tool.with_tables("<!-- module-map -->\n<!-- /module-map -->",
                                                    rendered)) == []
