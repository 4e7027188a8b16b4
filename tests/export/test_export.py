"""Export round trip, unified-planning reading/validating the files, classical planners."""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from sage_pddl.domains import load_domain
from sage_pddl.export import ExportError, classical, export_files, ground_plan
from sage_pddl.export.classical import (
    ClassicalPlannerError,
    solve,
    solve_result,
    up_environment,
    validate,
)
from sage_pddl.gate import compile_gate
from sage_pddl.pddl import load_domain as load_domain_file
from sage_pddl.pddl import load_plan, load_problem, parse_plan, parse_problem
from sage_pddl.tasks import load_task, normalize_steps, task_problem

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "corpus" / "val-depots"
TASKS = ("L11", "K01", "L03", "B04")  # B05 is infeasible in its scene
ONE_TASK_FAST = [TASKS[0], *(pytest.param(t, marks=pytest.mark.slow) for t in TASKS[1:])]
"""The first task (L11, the smallest iTHOR problem) in the quick suite; the others, which prove
the same on larger problems (the kitchen K01 is ten times its size), behind the `slow` marker."""


@pytest.fixture(scope="module")
def ithor():
    return load_domain("ithor")


def _fast_downward_usable() -> str | None:
    """Why Fast Downward cannot be tested here, or None. Only a missing package is a reason to
    skip: the test extra installs up-fast-downward, so a broken install must fail the test."""
    import importlib.util

    if importlib.util.find_spec("up_fast_downward") is None:
        return "up-fast-downward is not installed (pip install 'sage-pddl[planners]')"
    up_environment()
    from unified_planning.shortcuts import OneshotPlanner

    with OneshotPlanner(name="fast-downward"):
        return None


@pytest.mark.parametrize("task_id", ONE_TASK_FAST)
def test_export_round_trip_and_up_accepts_the_reference_plan(tmp_path, ithor, task_id):
    from unified_planning.io import PDDLReader

    task = load_task(f"ithor#{task_id}")
    problem = task_problem(task, ithor)
    files = export_files(ithor, problem, list(task.reference_steps), tmp_path)
    assert load_domain_file(files.domain) == ithor
    assert load_problem(files.problem) == problem
    exported_plan = load_plan(files.plan)
    gate = compile_gate(ithor, problem)
    assert [(s.action, s.args) for s in exported_plan] == \
        [(s.action, s.args) for s in ground_plan(gate, task.reference_steps)]
    ours = gate.check(exported_plan)
    assert ours.valid == gate.check(normalize_steps(task.reference_steps, ithor)).valid
    # unified-planning reads the files and its validator agrees with the gate
    up_environment()
    reader = PDDLReader()
    up_problem = reader.parse_problem(str(files.domain), str(files.problem))
    up_plan = reader.parse_plan(up_problem, str(files.plan))
    assert len(up_plan.actions) == len(exported_plan)
    assert validate(ithor, problem, exported_plan).valid == ours.solved


def test_json_steps_become_ground_actions_and_annotations_can_go(tmp_path, ithor):
    problem = task_problem(load_task("ithor#K01"), ithor)
    plan = [{"action": "Navigate", "object": "Mug"}, {"action": "Grab", "object": "Mug"},
            {"action": "Place", "object": "Mug", "target": "CoffeeMachine"}]
    files = export_files(ithor, problem, plan, tmp_path, strip_annotations=True)
    assert files.plan.read_text() == "(moveto mug)\n(pick mug)\n(place coffeemachine)\n"
    text = files.domain.read_text()
    assert "@sage" not in text
    assert load_domain_file(files.domain) == ithor  # annotations never take part in equality
    with pytest.raises(ExportError, match="step 2"):
        export_files(ithor, problem, [{"action": "MoveTo", "object": "Mug"},
                                      {"action": "Fly", "object": "Mug"}], tmp_path)


def test_up_validator_rejects_an_invalid_plan(ithor):
    problem = task_problem(load_task("ithor#K01"), ithor)
    verdict = validate(ithor, problem, parse_plan("(pick fridge)\n"))
    assert not verdict.valid and verdict.message


def test_classical_corpus_triple_with_pyperplan():
    domain = load_domain_file(FIXTURES / "Depots.pddl")
    problem = load_problem(FIXTURES / "pfile1")
    reference = load_plan(FIXTURES / "pfile1.plan")
    assert validate(domain, problem, reference).valid
    gate = compile_gate(domain, problem)
    assert gate.check(reference).solved
    result = solve_result(domain, problem, "pyperplan", timeout=None)
    assert result.planner == "pyperplan" and result.plan is not None
    assert gate.check(result.plan).solved
    assert validate(domain, problem, result.plan).valid


def test_pyperplan_refuses_conditional_effects_by_name(ithor):
    problem = task_problem(load_task("ithor#K01"), ithor)
    with pytest.raises(ClassicalPlannerError, match="conditional-effects"):
        solve(ithor, problem, planner="pyperplan")
    with pytest.raises(ClassicalPlannerError, match="unknown planner"):
        solve(ithor, problem, planner="lama")


@pytest.mark.slow
@pytest.mark.parametrize("task_id", TASKS)
def test_fast_downward_solves_ithor_tasks_and_the_gate_agrees(ithor, task_id):
    reason = _fast_downward_usable()
    if reason:
        pytest.skip(reason)
    problem = task_problem(load_task(f"ithor#{task_id}"), ithor)
    plan = solve(ithor, problem, planner="fast-downward", timeout=None)
    verdict = compile_gate(ithor, problem).check(plan)
    assert verdict.valid and verdict.goal_reached
    assert validate(ithor, problem, plan).valid
    assert all(ithor.action(step.action) is not None for step in plan)


def test_export_and_solve_commands(tmp_path, capsys):
    import json

    from sage_pddl import cli

    assert cli.main(["export", "ithor", "ithor#K01", "ithor#K01", "--out", str(tmp_path),
                     "--strip-annotations"]) == 0
    assert (tmp_path / "plan.ipc").read_text().startswith("(moveto mug)\n")
    assert str(tmp_path / "domain.pddl") in capsys.readouterr().out
    code = cli.main(["solve", str(FIXTURES / "Depots.pddl"), str(FIXTURES / "pfile1"),
                     str(FIXTURES / "pfile1.plan"), "--planner", "pyperplan", "--json",
                     "--up-validate"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert out["classical"]["gate_valid"] and out["classical"]["up_valid"]
    assert out["compared"]["gate_valid"] and out["compared"]["up_valid"]
    assert out["compared"]["source"].startswith("plan file ")
    assert cli.main(["solve", "ithor", "ithor#K01", "--planner", "pyperplan"]) == 2
    assert "conditional-effects" in capsys.readouterr().err


def test_b3_export_refuses_to_overwrite_its_inputs(tmp_path):
    from sage_pddl.cli import main

    for name in ("Depots.pddl", "pfile1", "pfile1.plan"):
        (tmp_path / name).write_bytes((FIXTURES / name).read_bytes())
    (tmp_path / "domain.pddl").write_bytes((FIXTURES / "Depots.pddl").read_bytes())
    before = (tmp_path / "domain.pddl").read_bytes()
    code = main(["export", str(tmp_path / "domain.pddl"), str(tmp_path / "pfile1"),
                 "--out", str(tmp_path)])
    assert code == 2
    assert (tmp_path / "domain.pddl").read_bytes() == before
    assert not (tmp_path / "problem.pddl").exists()  # refused before anything was written
    domain = load_domain_file(tmp_path / "Depots.pddl")
    (tmp_path / "problem.pddl").write_bytes((FIXTURES / "pfile1").read_bytes())
    problem = load_problem(tmp_path / "problem.pddl")  # the file it was read from is protected
    with pytest.raises(ExportError, match="would overwrite the input file"):
        export_files(domain, problem, None, tmp_path)
    with pytest.raises(ExportError, match="would overwrite the input file"):
        export_files(domain, load_problem(tmp_path / "pfile1"), None, tmp_path,
                     inputs=[tmp_path / "problem.pddl"])
    files = export_files(domain, problem, None, tmp_path / "out")
    assert files.domain.read_text().startswith("(define (domain")


@pytest.mark.slow
def test_fast_downward_on_our_files_plans_as_through_unified_planning(ithor):
    """`solve` hands in-scope problems to the engine's Fast Downward as our own files; its plan
    and status must be those of the whole unified-planning way (same driver and options), and a
    problem outside the gate's scope still goes that way and is refused by feature."""
    reason = _fast_downward_usable()
    if reason:
        pytest.skip(reason)
    from sage_pddl.export.classical import UP_LOCK, _direct_fast_downward, _solve_result

    unsolvable = task_problem(load_task("ithor#K01"), ithor)
    goal = parse_problem("(define (problem g) (:domain ithor) (:init) (:goal (opened mug)))")
    unsolvable = dataclasses.replace(unsolvable, goal=goal.goal)  # a mug does not open
    problems = [(ithor, task_problem(load_task(f"ithor#{t}"), ithor)) for t in TASKS]
    problems += [(load_domain_file(FIXTURES / "Depots.pddl"), load_problem(FIXTURES / "pfile1")),
                 (ithor, unsolvable)]
    for domain, problem in problems:
        direct = _direct_fast_downward(domain, problem, None)
        with UP_LOCK:
            through_up = _solve_result(domain, problem, "fast-downward", None)
        assert direct is not None and direct.status == through_up.status
        assert direct.plan == through_up.plan
    assert direct.status.startswith("unsolvable")
    numeric = FIXTURES.parent / "hello-world-functions"
    domain, problem = load_domain_file(numeric / "domain.pddl"), load_problem(numeric / "p0.pddl")
    assert _direct_fast_downward(domain, problem, 60) is None
    with pytest.raises(ClassicalPlannerError, match="increase-effects"):
        solve(domain, problem, planner="fast-downward")


@pytest.mark.slow
def test_fast_downward_calls_from_several_threads_get_their_own_plans(ithor):
    """Concurrent bench cells call the planner at once: each call must plan its own problem
    (Fast Downward's translator writes its output to the working directory)."""
    reason = _fast_downward_usable()
    if reason:
        pytest.skip(reason)
    from concurrent.futures import ThreadPoolExecutor

    problems = [task_problem(load_task(f"ithor#{t}"), ithor)
                for t in ("K01", "K02", "K03", "K04", "L03", "B04")]
    with ThreadPoolExecutor(len(problems)) as pool:
        plans = list(pool.map(lambda p: solve(ithor, p, "fast-downward", None), problems * 2))
    for problem, plan in zip(problems * 2, plans):
        verdict = compile_gate(ithor, problem).check(plan)
        assert verdict.valid and verdict.goal_reached


@pytest.mark.parametrize("seconds", [1, 2])
def test_fast_downward_is_stopped_by_its_own_cpu_time_limit(ithor, monkeypatch, seconds):
    """The time limit is Fast Downward's own, on its CPU time (so a benchmark's rows do not
    depend on the machine's load): K04's translation alone takes it longer than 2 s on any
    machine, and the planner reports its timeout, with one second too (which its driver leaves
    the translator none of); neither the wall-clock bound nor unified-planning's way ends it."""
    reason = _fast_downward_usable()
    if reason:
        pytest.skip(reason)

    def not_taken(*args, **kwargs):
        raise AssertionError("unified-planning's way taken")
    monkeypatch.setattr(classical, "_solve_result", not_taken)
    monkeypatch.setattr(classical, "STARVED", 1000)  # not ended by the wall-clock bound
    problem = task_problem(load_task("ithor#K04"), ithor)
    result = solve_result(ithor, problem, "fast-downward", timeout=seconds)
    assert (result.status, result.plan, result.planner) == ("timeout", None, "fast-downward")
