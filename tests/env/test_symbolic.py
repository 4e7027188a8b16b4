"""The symbolic environment: true-state execution with the gate, partial view, registry."""
from __future__ import annotations

import pytest

import sage_pddl.env as env_module
from sage_pddl.env import EnvError, get_env, list_envs, register_env
from sage_pddl.env.base import Environment, parse_fact
from sage_pddl.env.symbolic import SymbolicEnv
from sage_pddl.pddl.errors import PlanSyntaxError
from sage_pddl.pddl.registry import Registry
from tests.steps import as_step

from .conftest import HIDDEN, SOLUTION


@pytest.fixture
def env(kitchen_domain):
    environment = get_env("symbolic", domain=kitchen_domain, hidden=HIDDEN)
    yield environment
    environment.close()


def test_registry_builds_symbolic_and_rejects_unknown_names(kitchen_domain, monkeypatch):
    assert {"symbolic", "thor", "ai2thor"} <= set(list_envs())
    assert isinstance(get_env("symbolic", domain=kitchen_domain), Environment)
    with pytest.raises(EnvError, match="unknown environment 'nope'"):
        get_env("nope")
    with pytest.raises(EnvError, match="environment 'symbolic': no option 'colour'"):
        get_env("symbolic", colour="red")
    monkeypatch.setattr(env_module, "ENVIRONMENTS", Registry("environment", EnvError))
    register_env("symbolic-alias", SymbolicEnv)
    assert isinstance(get_env("symbolic-alias"), SymbolicEnv)


def test_hidden_facts_are_true_but_not_observed(env, kitchen_problem):
    observation = env.reset(kitchen_problem)
    assert parse_fact("(in apple fridge)") in env.true_state()
    assert "Apple" not in observation.visible_objects  # inside the closed fridge
    assert all("apple" not in fact for fact in observation.facts)
    assert "Mug: on Counter" in observation.text and "Holding: nothing" in observation.text


def test_the_reference_plan_executes_and_reaches_the_goal(env, kitchen_problem):
    env.reset(kitchen_problem)
    assert env.goal_reached() is False
    for index, step in enumerate(SOLUTION):
        result = env.step(as_step(step))
        assert result.success, (step, result.message)
        assert result.message == "ok" and result.code is None and result.step_index == index
    assert env.goal_reached() is True


def test_opening_the_fridge_reveals_its_content(env, kitchen_problem):
    env.reset(kitchen_problem)
    env.step(as_step("moveto Fridge"))
    opened = env.step(as_step("open Fridge")).observation
    assert "Apple" in opened.visible_objects
    assert ("in", "apple", "fridge") in opened.facts
    assert "Apple: in Fridge" in opened.text


def test_a_rejected_step_fails_with_the_gate_reason_and_changes_nothing(env, kitchen_problem):
    env.reset(kitchen_problem)
    before = env.true_state()
    result = env.step(as_step({"action": "pick", "args": ["Apple", "Fridge"]}))
    assert not result.success
    assert result.code == "pick/requires/at"
    assert "(at Fridge)" in result.message
    assert env.true_state() == before
    env.step(as_step("moveto Fridge"))
    closed = env.step(as_step("(pick apple fridge)"))  # in the fridge, but the fridge is closed
    assert not closed.success and closed.code == "pick/requires/any-of"


def test_annotated_reason_and_structural_codes(env, kitchen_problem):
    env.reset(kitchen_problem)
    for step in ("moveto Counter", "pick Mug Counter"):
        assert env.step(as_step(step)).success
    hand_full = env.step(as_step("pick Mug Counter"))
    assert (hand_full.code, hand_full.message) == ("hand-full", "the hand already holds an object")
    assert env.step(as_step("pick Banana Counter")).code == "unknown-object"
    assert env.step(as_step("fly Counter")).code == "unknown-action"
    assert env.step(as_step("pick Mug")).code == "wrong-arity"
    assert env.step(as_step("moveto Mug")).code == "type-mismatch"
    # what is no step is refused where it is read, before any environment sees it
    with pytest.raises(PlanSyntaxError, match="no action name"):
        as_step({"object": "Mug"})
    with pytest.raises(PlanSyntaxError, match="empty"):
        as_step("   ")


def test_json_steps_and_deterministic_replay(kitchen_domain, kitchen_problem):
    def run() -> list[tuple]:
        environment = SymbolicEnv(kitchen_domain, hidden=HIDDEN)
        environment.reset(kitchen_problem)
        steps = [{"action": "moveto", "object": "Counter"}, "pick Apple Counter",
                 {"action": "pick", "object": "Mug", "target": "Counter"}, *SOLUTION]
        return [(r.success, r.code, r.message, r.observation)
                for r in map(environment.step, map(as_step, steps))] + [environment.true_state()]

    assert run() == run()


def test_true_state_override_and_validation(kitchen_domain, kitchen_problem):
    environment = SymbolicEnv(kitchen_domain)
    environment.reset(kitchen_problem, true_state=["(at table)", "(hand-empty)",
                                                   "(on apple table)"])
    assert environment.goal_reached() is True
    with pytest.raises(EnvError, match="does not declare: banana"):
        environment.reset(kitchen_problem, hidden=["(in banana fridge)"])
    with pytest.raises(EnvError, match="cannot read a fact"):
        environment.reset(kitchen_problem, hidden=["in apple fridge"])


def test_step_before_reset_is_an_error(kitchen_domain):
    with pytest.raises(EnvError, match="before reset"):
        SymbolicEnv(kitchen_domain).step("moveto Table")


def test_domain_is_loaded_by_name_from_a_domains_dir(tmp_path, kitchen_problem):
    from .conftest import KITCHEN_DOMAIN

    (tmp_path / "mini-kitchen.pddl").write_text(KITCHEN_DOMAIN)
    environment = SymbolicEnv(domains_dirs=[tmp_path])
    environment.reset(kitchen_problem)
    assert environment.domain.name == "mini-kitchen"
