"""The rule-deletion study: injected violations are the mutation classes of tasks/mutations.py,
each caught by the full domain; a deleted rule misses exactly the ones its weakened gate lets
through; an induced domain restores a rule when it has the literal."""
from __future__ import annotations

import dataclasses
import json

import pytest

from sage_pddl.domains import load_domain
from sage_pddl.gate import compile_gate
from sage_pddl.induce.deletion import deletion_study
from sage_pddl.induce.learner import EXCLUDED_CODES
from sage_pddl.pddl import load_domain as parse_domain_file
from sage_pddl.pddl.errors import SageError
from sage_pddl.pddl.model import And
from sage_pddl.tasks import load_taskset, task_problem
from sage_pddl.tasks.mutations import MUTATION_CLASSES, detect, plan_mutants


@pytest.fixture(scope="module")
def ithor():
    return load_domain("ithor")


@pytest.fixture(scope="module")
def tasks():
    """Five small iTHOR problems (a kitchen shows the same, ten times slower)."""
    small = ("L11", "L16", "L06", "X04", "L07")
    return [t for t in load_taskset("ithor") if t.task_id in small]


@pytest.fixture(scope="module")
def study(ithor, tasks):
    return deletion_study(ithor, tasks)


def test_injected_violations_are_the_mutation_classes_the_full_domain_catches(study, ithor,
                                                                               tasks):
    structural = {k for k, code in MUTATION_CLASSES.items() if code in EXCLUDED_CODES}
    assert structural == {"unknown-action", "absent-object"}
    assert study.mutants and not set(study.mutants) & structural
    assert set(study.mutants) <= set(MUTATION_CLASSES)
    expected = {}
    for task in tasks:
        problem = task_problem(task, ithor)
        gate = compile_gate(ithor, problem)
        for mutant in plan_mutants(ithor, problem, task.reference_steps, task.task_id):
            if mutant.kind not in structural and detect(gate, mutant).at_step:
                expected[mutant.kind] = expected.get(mutant.kind, 0) + 1
    assert dict(study.mutants) == expected
    assert study.plans <= study.tasks == len(tasks)


def test_each_row_counts_what_its_weakened_gate_lets_through(study, ithor, tasks):
    rules = [(a.name, part) for a in ithor.actions
             for part in (a.precondition.parts if isinstance(a.precondition, And) else ())]
    assert len(study.rows) + len(study.not_rules) == len(rules)
    for row in study.rows:
        assert sum(row.missed_by_class.values()) == row.missed <= study.total
        assert set(row.missed_by_class) <= set(study.mutants)
    # recount one rule that catches something by hand: its deletion from the domain file
    row = next(r for r in study.rows if r.missed)
    action = ithor.action(row.action)
    index = ithor.actions.index(action)
    parts = action.precondition.parts
    kept = tuple(p for p in parts if p is not next(q for q in parts if _text(q) == row.rule))
    weakened = dataclasses.replace(ithor, actions=tuple(
        dataclasses.replace(a, precondition=And(kept)) if i == index else a
        for i, a in enumerate(ithor.actions)), annotations=())
    missed = 0
    for task in tasks:
        problem = task_problem(task, ithor)
        full, weak = compile_gate(ithor, problem), compile_gate(weakened, problem)
        missed += sum(1 for m in plan_mutants(ithor, problem, task.reference_steps, task.task_id)
                      if m.kind in study.mutants and detect(full, m).at_step
                      and not detect(weak, m).at_step)
    assert missed == row.missed


def _text(part) -> str:
    from sage_pddl.pddl import write_formula

    return write_formula(part)


@pytest.mark.slow  # a study of its own, beside the module's
def test_an_induced_domain_restores_the_rules_it_has(ithor, tasks, study):
    # the hand-written domain as its own "induced" domain restores and catches everything
    itself = deletion_study(ithor, tasks, induced=ithor)
    assert all(row.restored for row in itself.rows)
    assert all(row.induced_catches == row.missed for row in itself.rows)
    # without one literal of the rule that catches the most, that rule is not restored and
    # its violations are missed
    row = max(study.rows, key=lambda r: r.missed)
    action = ithor.action(row.action)
    index = ithor.actions.index(action)
    kept = tuple(p for p in action.precondition.parts if _text(p) != row.rule)
    weaker = dataclasses.replace(ithor, name="weaker", annotations=(), actions=tuple(
        dataclasses.replace(a, precondition=And(kept)) if i == index else a
        for i, a in enumerate(ithor.actions)))
    partial = deletion_study(ithor, tasks, induced=weaker)
    again = {(r.action, r.rule): r for r in partial.rows}[(row.action, row.rule)]
    assert again.restored is False and again.induced_catches == 0
    assert sum(1 for r in partial.rows if not r.restored) == 1


@pytest.mark.slow  # a study of its own, beside the module's
def test_a_domain_the_tasks_do_not_fit_is_an_error_not_a_table_of_zeros(tasks, fixtures_dir):
    # before: every rule's row said 0 missed, as if the domain's rules caught nothing
    depots = parse_domain_file(fixtures_dir / "corpus" / "val-depots" / "Depots.pddl")
    with pytest.raises(SageError, match=r"accepts none of the 5 tasks' reference plans.*"
                                        r"\[unknown-action\] unknown action 'Navigate'"):
        deletion_study(depots, tasks)


def test_the_command_writes_the_table(tmp_path, capsys):
    from sage_pddl import cli

    out = tmp_path / "table.md"
    assert cli.main(["rule-deletion", "ithor", "--limit", "1", "--out", str(out)]) == 0
    table = out.read_text()
    assert "| action | deleted rule | violations missed | by class |" in table
    assert "injected violations" in table
    capsys.readouterr()
    assert cli.main(["rule-deletion", "ithor", "--limit", "1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["tasks"] == 1 and data["rows"] and data["induced"] is None
