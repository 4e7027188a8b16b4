"""tools/plan_precision.py names the learner settings its rows were gated with, and refuses to
report rows gated with different ones (a rerun with other settings gates every plan again)."""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest

from sage_pddl.pddl.errors import SageError

TOOLS = Path(__file__).resolve().parents[2] / "tools"


def _tool():
    sys.path.insert(0, str(TOOLS))  # plan_precision imports its sibling induce_plans
    spec = importlib.util.spec_from_file_location("plan_precision", TOOLS / "plan_precision.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _row(kind, executes, induced, learner):
    return {"task": "t1", "kind": kind, "steps": [f"{kind} a"], "executes": executes,
            "accepted": {"virtualhome-induced": induced, "virtualhome": True},
            "learner": learner}


def test_the_induced_row_names_the_settings_and_mixed_settings_are_refused(tmp_path):
    tool = _tool()
    out = tmp_path / "rows.jsonl"
    out.write_text("\n".join(json.dumps(r) for r in [
        _row("gold", True, True, {"exceptions": 0.0}),
        _row("drop", False, False, {"exceptions": 0.0})]) + "\n")
    table = tool.table(out)
    assert "induced (--exceptions 0.0, held-out logs) | 1 | 1.000 | 1 | 1.000 | 1.000" in table
    out.write_text("\n".join(json.dumps(r) for r in [
        _row("gold", True, True, {}), _row("drop", False, False, {})]) + "\n")
    assert "induced (default learner, held-out logs)" in tool.table(out)
    with out.open("a") as sink:
        sink.write(json.dumps(_row("swap", False, True, {"noise": 0.05})) + "\n")
    with pytest.raises(SageError, match="different learner settings"):
        tool.table(out)
