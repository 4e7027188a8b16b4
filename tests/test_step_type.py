"""`PlanStep` is the one step type where steps are executed: the environments, the runtime's
dispatch, the gate's `ground` and the EAI scorer take it, and the union of step forms that
used to travel through them (`StepLike`: a PlanStep, a JSON dict or text) is gone. JSON and text
are read at the edges (`pddl.plans.step_from_json`, `step_from_text`)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from sage_pddl.pddl.errors import PlanSyntaxError
from sage_pddl.pddl.model import PlanStep
from sage_pddl.pddl.plans import step_from_json, step_from_text, step_json

PACKAGE = Path(__file__).resolve().parents[1] / "sage_pddl"
TAKERS = {
    "env/base.py": ["Environment.step"],
    "env/episode.py": ["GatedEnv.step", "GatedEnv.refuse"],
    "env/thor/client.py": ["ThorClientEnv.step"],
    "env/virtualhome.py": ["VirtualHomeEnv.step", "script_words"],
    "env/alfworld.py": ["AlfworldEnv.step", "AlfworldEnv.command_for"],
    "runtime.py": ["_gate_step", "_advance"],
    "gate/gate.py": ["Gate.ground"],
}
"""What executes or checks one step, by module: each takes the step as a `PlanStep`."""


def _step_annotations(path: Path) -> dict[str, list[str]]:
    """`Class.function` or `function` -> the annotations of its parameters named like a step
    (`step`, `plan_step`)."""
    found: dict[str, list[str]] = {}

    def visit(node: ast.AST, owner: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, child.name + ".")
            elif isinstance(child, ast.FunctionDef):
                found[owner + child.name] = [
                    ast.unparse(arg.annotation) if arg.annotation else ""
                    for arg in child.args.args if arg.arg in ("step", "plan_step")]

    visit(ast.parse(path.read_text(encoding="utf-8")), "")
    return found


def test_no_module_names_a_union_of_step_forms():
    users = [str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("*.py")
             if "StepLike" in p.read_text(encoding="utf-8")]
    assert users == []


@pytest.mark.parametrize("module", sorted(TAKERS))
def test_what_executes_or_checks_a_step_takes_a_plan_step(module):
    found = _step_annotations(PACKAGE / module)
    for function in TAKERS[module]:
        assert found.get(function) == ["PlanStep"], (module, function, found.get(function))


def test_the_eai_scorer_takes_plan_steps():
    found = _step_annotations(PACKAGE / "bench" / "eai.py")
    source = (PACKAGE / "bench" / "eai.py").read_text(encoding="utf-8")
    assert "plan: Plan | Sequence[PlanStep]" in source and "plan_to_llm_output" in found


@pytest.mark.parametrize("value", [
    {"action": "Pick", "args": ["Apple", "Table"]},
    {"action": "Place", "object": "Apple", "target": "Table"},
    {"action": "Place", "object": "", "target": "Table", "text": "Place Table"},
])
def test_json_steps_round_trip_through_the_one_reader_and_writer(value):
    step = step_from_json(value)
    again = step_from_json(step_json(step))
    assert (again.action, again.args, again.fields, again.text) == (
        step.action, step.args, step.fields, step.text)


def test_the_readers_refuse_what_is_no_step():
    with pytest.raises(PlanSyntaxError, match="no action name"):
        step_from_json({"object": "Apple"})
    with pytest.raises(PlanSyntaxError, match="must be a string"):
        step_from_json({"action": "Pick", "args": [1]})
    with pytest.raises(PlanSyntaxError, match="empty"):
        step_from_text("  ")
    assert step_from_text("(pick apple)", 3) == PlanStep("pick", ("apple",), 3, "(pick apple)")
