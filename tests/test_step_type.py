"""`PlanStep` is the one step type inside the program: the environments, the runtime's
dispatch, the gate's `ground` and the EAI scorer take it; planners return it (`PlanResult.steps`,
sub-goal blocks), are given it (`repair`) and remember it (memory items); the union of step forms
that used to travel through them (`StepLike`: a PlanStep, a JSON dict or text) and the planners'
dict alias (`Step = dict[str, Any]`) are gone. JSON and text are read at the edges
(`pddl.plans.step_from_json`, `step_from_text`; an LLM's answer in `planners/parsing.py`) and
written at the edges (`pddl.plans.written_json`: prompts, results rows, memory files)."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from sage_pddl.pddl.errors import PlanSyntaxError
from sage_pddl.pddl.model import PlanStep
from sage_pddl.pddl.plans import step_from_json, step_from_text, step_json, written_json

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


def _dict_aliases(path: Path) -> list[str]:
    """Module-level names bound to a `dict[...]` type whose name says step (`Step = dict[...]`)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = []
    for node in tree.body:
        targets = (node.targets if isinstance(node, ast.Assign) else
                   [node.target] if isinstance(node, ast.AnnAssign) else [])
        value = getattr(node, "value", None)
        if isinstance(value, ast.Subscript) and ast.unparse(value.value) in ("dict", "Dict"):
            names += [t.id for t in targets if isinstance(t, ast.Name) and "step" in t.id.lower()]
    return names


def test_no_module_defines_a_dict_step_alias():
    found = {str(p.relative_to(PACKAGE)): _dict_aliases(p) for p in PACKAGE.rglob("*.py")}
    assert not {module for module, names in found.items() if names}, found


def _annotations(path: Path) -> dict[str, str]:
    """`Class.field`, `Class.method.param`, `function.param` and `....return` -> annotation."""
    found: dict[str, str] = {}

    def visit(node: ast.AST, owner: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, child.name + ".")
            elif isinstance(child, ast.AnnAssign) and isinstance(child.target, ast.Name):
                found[owner + child.target.id] = ast.unparse(child.annotation)
            elif isinstance(child, ast.FunctionDef):
                for arg in child.args.args + child.args.kwonlyargs:
                    if arg.annotation is not None:
                        found[f"{owner}{child.name}.{arg.arg}"] = ast.unparse(arg.annotation)
                if child.returns is not None:
                    found[f"{owner}{child.name}.return"] = ast.unparse(child.returns)

    visit(ast.parse(path.read_text(encoding="utf-8")), "")
    return found


PLANNER_SIDE = {
    "planners/base.py": {"PlanResult.steps": "tuple[PlanStep, ...]",
                         "SubgoalBlock.steps": "tuple[PlanStep, ...]",
                         "Planner.repair.done": "Sequence[PlanStep]",
                         "Planner.repair.failed_step": "PlanStep | None",
                         "CallLog.result.steps": "Sequence[PlanStep]",
                         "same_step.a": "PlanStep"},
    "planners/parsing.py": {"parse_steps.return": "list[PlanStep]",
                            "steps_in.return": "list[PlanStep]",
                            "Canonicalizer.step.step": "PlanStep",
                            "Canonicalizer.step.return": "PlanStep"},
    "planners/session.py": {"RepairPoint.done": "list[PlanStep]",
                            "RepairPoint.failed": "PlanStep | None",
                            "LLMPlanner.begin_repair.done": "Sequence[PlanStep]",
                            "LLMPlanner.begin_repair.failed_step": "PlanStep | None"},
    "planners/memory.py": {"MemoryItem.steps": "tuple[PlanStep, ...]",
                           "HybridMemory.add_episode.steps": "Sequence[PlanStep]"},
    "planners/gating.py": {"feasible.step": "PlanStep", "check_block.steps": "Sequence[PlanStep]"},
    "runtime.py": {"StepRecord.step": "PlanStep"},
    "bench/metrics.py": {"check_plan.steps": "Sequence[PlanStep]",
                         "plan_metrics.steps": "Sequence[PlanStep]"},
}
"""Where planners' steps are returned, repaired, remembered, executed and scored: each holds
`PlanStep`s."""


@pytest.mark.parametrize("module", sorted(PLANNER_SIDE))
def test_planners_results_repair_and_memory_carry_plan_steps(module):
    found = _annotations(PACKAGE / module)
    wanted = PLANNER_SIDE[module]
    assert {name: found.get(name) for name in wanted} == wanted


def test_every_planner_repair_takes_plan_steps():
    repairs = {f"{p.name}:{name}": annotation
               for p in (PACKAGE / "planners").glob("*.py")
               for name, annotation in _annotations(p).items()
               if name.endswith((".repair.done", ".repair.failed_step"))}
    assert len(repairs) >= 20  # Planner and every planner class
    assert all(annotation in ("Sequence[PlanStep]", "PlanStep | None")
               for annotation in repairs.values()), repairs


@pytest.mark.parametrize("value", [
    {"action": "Pick", "args": ["Apple", "Table"]},
    {"action": "Pick", "args": []},
    {"action": "Place", "object": "Apple", "target": "Table"},
    {"action": "Place", "object": "", "target": "Table", "arg2": "Shelf"},
])
def test_the_forms_planners_write_are_written_back_byte_for_byte(value):
    """What a planner writes into prompts, results rows and memory files is the JSON it read:
    rows compared across versions stay equal."""
    assert written_json(step_from_json(value)) == value


def test_an_answers_commentary_is_not_part_of_the_step():
    from sage_pddl.planners.parsing import parse_steps

    steps = parse_steps('{"steps": [{"action": "Pick", "args": ["Apple"], "reason": "hungry"},'
                        ' {"action": "Place", "object": "Apple", "target": "Table",'
                        ' "reason": "tidy"}, {"reason": "no action"}, 7]}')
    assert all(isinstance(step, PlanStep) for step in steps)
    assert [written_json(step) for step in steps] == [
        {"action": "Pick", "args": ["Apple"]},
        {"action": "Place", "object": "Apple", "target": "Table"}]
    assert parse_steps("I cannot do that.") == [] and parse_steps(None) == []


@pytest.mark.parametrize("planner", ["SAGE", "Direct", "CoT", "Self-Refine", "ReAct",
                                     "Hierarchical", "SayCan"])
def test_a_planners_result_holds_plan_steps(planner):
    from sage_pddl.bench.oracle import reference_responder
    from sage_pddl.domains import load_domain
    from sage_pddl.llm import get_backend
    from sage_pddl.planners import plan_task
    from sage_pddl.tasks import load_task

    domain, task = load_domain("ithor"), load_task("ithor#K19")
    llm = get_backend("scripted", responder=reference_responder([task], lambda _t: domain))
    result = plan_task(task, planner=planner, llm=llm, domain=domain)
    assert result.steps and all(isinstance(step, PlanStep) for step in result.steps)
    assert all(isinstance(step, PlanStep) for block in result.blocks for step in block.steps)
    assert result.to_dict()["steps"] == [written_json(step) for step in result.steps]
