"""Probing through the environment interface: the environment alone decides every outcome.

A world whose rules are not the domain's (switching a lamp on needs it plugged in, not off; a
refused step knocks something over) is probed with the domain's action names; the logs and the
domain learned from them follow the world. The symbolic world is probed through `collect`
(resumable, deterministic), and EAI's VirtualHome simulator through a live one-task collection.
"""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from sage_pddl.env.base import Observation, StepResult, numbered, parse_fact
from sage_pddl.env.transitions import TransitionLog, make_transition
from sage_pddl.env.virtualhome import eai_available
from sage_pddl.gate import compile_gate
from sage_pddl.induce import read_logs
from sage_pddl.induce.collect import collect
from sage_pddl.induce.learner import learn
from sage_pddl.induce.probe import ProbeSettings, probe_task
from sage_pddl.pddl import parse_domain, parse_problem
from sage_pddl.pddl.model import PlanStep, key
from tests.steps import as_step

LAMPS = """
(define (domain lamps)
  (:requirements :strips :typing)
  (:types lamp)
  (:predicates (off ?x - lamp) (on ?x - lamp) (plugged ?x - lamp) (bumped))
  (:action switch_on :parameters (?x - lamp) :precondition (off ?x)
    :effect (and (on ?x) (not (off ?x))))
  (:action switch_off :parameters (?x - lamp) :precondition (on ?x)
    :effect (and (off ?x) (not (on ?x)))))
"""
PROBLEM = """
(define (problem three) (:domain lamps)
  (:objects a b c - lamp)
  (:init (off a) (off b) (off c) (plugged a) (plugged c))
  (:goal (on c)))
"""


class Lamps:
    """Not the domain: `switch_on X` needs (plugged X) and ignores (off X); `switch_off X`
    needs (on X); a refused step adds (bumped), so the world changes on a failure too."""

    name = "lamps"

    def __init__(self) -> None:
        self.state: frozenset = frozenset()
        self.last_transition = None
        self.resets = 0

    def reset(self, problem, **options):
        self.state = frozenset(parse_fact(atom) for atom in problem.init)
        self.index, self.resets = 0, self.resets + 1
        return Observation("")

    def step(self, step):
        plan_step = numbered(step, self.index)
        self.index += 1
        pre, lamp = self.state, key(plan_step.args[0])
        if key(plan_step.action) == "switch_on":
            ok = ("plugged", lamp) in pre
            post = (pre - {("off", lamp)}) | {("on", lamp)}
        else:
            ok = ("on", lamp) in pre
            post = (pre - {("on", lamp)}) | {("off", lamp)}
        self.state = post if ok else pre | {("bumped",)}
        self.last_transition = make_transition(
            task="lamps", env=self.name, domain="lamps", step=plan_step.index,
            plan_step=plan_step, pre=pre, success=ok, message="ok" if ok else "no",
            post=self.state, code=None if ok else "lamps/refused")
        return StepResult(ok, "ok" if ok else "no", Observation(""),
                          None if ok else "lamps/refused", plan_step.index)

    def true_state(self):
        return self.state


def test_the_environment_decides_and_a_refused_step_is_undone(tmp_path):
    domain, problem = parse_domain(LAMPS), parse_problem(PROBLEM)
    task = SimpleNamespace(task_id="three", scene="", reference_steps=(
        {"action": "switch_on", "args": ["a"]}, {"action": "switch_off", "args": ["a"]},
        {"action": "switch_on", "args": ["c"]}))
    world = Lamps()
    with TransitionLog(tmp_path / "lamps.jsonl") as log:
        logged = probe_task(task, domain, problem, world, log,
                            ProbeSettings(seed=1, random=3, walks=0, proposed_walks=0),
                            "lamps#three")
    transitions = list(read_logs([tmp_path / "lamps.jsonl"]))
    assert len(transitions) == logged > 10
    assert {t.task for t in transitions} == {"lamps#three"}
    assert {t.env for t in transitions} == {"lamps"}
    # the world, not the domain, decided: switching on what is on succeeded (the domain says
    # (off ?x) is required), switching on the unplugged lamp b failed (the domain allows it)
    gate = compile_gate(domain, problem)
    disagree = [t for t in transitions if gate.check(
        [PlanStep(t.action.action, t.action.args, 0, t.action.text)], state=t.pre).valid
        != t.success]
    assert disagree
    assert any(t.success and t.action.action == "switch_on" and ("off", t.action.args[0]) not in t.pre
               for t in transitions)
    # every probe started from a state of the reference trajectory: refused steps were undone
    assert all(("bumped",) not in t.pre for t in transitions)
    assert world.resets > 1
    switch_on = {r.name: r for r in learn(transitions).report.actions}["switch_on"]
    assert switch_on.preconditions == ("(plugged ?x)",)


SMALL_PROBE = ProbeSettings(random=1, displaced=1, walks=1, walk_steps=2, max_tuples=8,
                            proposed_walks=1, proposed_steps=2)
"""Fewer probes per state than the default: resuming and the world's answers are the same
behaviour at any size, and an iTHOR state is hundreds of facts, each logged before and after."""


@pytest.fixture(scope="module")
def ithor_tasks():
    from sage_pddl.tasks import load_taskset

    small = ("L11", "L16", "L06")  # the smallest iTHOR problems: what is shown needs no kitchen
    return [t for t in load_taskset("ithor") if t.task_id in small]


def test_symbolic_collection_through_the_interface_resumes(tmp_path, ithor_tasks):
    from sage_pddl.domains import load_domain
    from sage_pddl.tasks import normalize_steps, task_problem

    ithor = load_domain("ithor")
    first = collect(ithor_tasks[:2], ithor, tmp_path / "a", taskset="ithor", env="symbolic",
                    probe=SMALL_PROBE, progress=False)
    assert first.written == tuple(t.task_id for t in ithor_tasks[:2]) and first.transitions
    transitions = list(read_logs(first.files))
    assert {t.env for t in transitions} == {"symbolic"}
    assert {t.task for t in transitions} == {f"ithor#{t.task_id}" for t in ithor_tasks[:2]}
    # the symbolic world's answers are its domain's, from the logged state
    for task in ithor_tasks[:2]:
        gate = compile_gate(ithor, task_problem(task, ithor))
        for t in (t for t in transitions if t.task == f"ithor#{task.task_id}"):
            verdict = gate.check([PlanStep(t.action.action, t.action.args, 0, t.action.text)],
                                 state=t.pre)
            assert verdict.valid == t.success
        # the reference plan ran first, each step in the state the previous ones left
        steps = normalize_steps(task.reference_steps, ithor)
        assert gate.check(steps).valid
    # a crash left a partial file: it is redone, finished tasks are skipped, same transitions
    (tmp_path / "a" / f"{ithor_tasks[2].task_id}.jsonl.part").write_text("{half")
    again = collect(ithor_tasks, ithor, tmp_path / "a", taskset="ithor", env="symbolic",
                    probe=SMALL_PROBE, progress=False)
    assert again.skipped == first.written and again.written == (ithor_tasks[2].task_id,)
    fresh = collect(ithor_tasks[2:], ithor, tmp_path / "b", taskset="ithor", env="symbolic",
                    probe=SMALL_PROBE, progress=False)

    def plain(paths):
        return [(t.action, t.pre, t.success, t.post, t.code) for t in read_logs(paths)]

    assert plain([tmp_path / "a" / f"{ithor_tasks[2].task_id}.jsonl"]) == plain(fresh.files)


@pytest.mark.skipif(not eai_available(), reason="eai-eval is not installed "
                    "(pip install 'sage-pddl[virtualhome]'; CI installs it)")
def test_virtualhome_collection_is_eai_simulator_evidence(tmp_path):
    """A live collection of one EAI task (about a second): EAI's executor decides."""
    from sage_pddl.domains import load_domain
    from sage_pddl.env.virtualhome import VirtualHomeEnv
    from sage_pddl.tasks import load_task

    task = load_task("virtualhome#11_1")  # walk to the floor lamp, plug it in, switch it on
    summary = collect([task], load_domain("virtualhome"), tmp_path, taskset="virtualhome",
                      env="virtualhome", progress=False)
    transitions = list(read_logs(summary.files))
    assert summary.transitions == len(transitions) > 20
    assert {t.env for t in transitions} == {"virtualhome"}
    assert {t.task for t in transitions} == {"virtualhome#11_1"}
    codes = {t.code for t in transitions if not t.success}
    assert {"eai/missing_step", "eai/affordance_error"} <= codes
    # switching on the lamp that is on: the executor refuses it, and the probe keeps that
    again = [t for t in transitions if t.code == "eai/additional_step"]
    assert again and all(("on", t.action.args[1].lower()) in t.pre for t in again)
    switch_on = {r.name: r for r in learn(transitions).report.actions}["switch_on"]
    assert switch_on.successes and switch_on.accuracy == 1.0
    assert {"(off ?y)", "(not (on ?y))"} & set(switch_on.preconditions)
    # the same step played as EAI's scorer counts it: forgiven, a success that does nothing
    env = VirtualHomeEnv()
    env.reset(task.problem, task="virtualhome#11_1")
    env.step(as_step("walk_towards character floor_lamp"))
    assert env.step(as_step("switch_on character floor_lamp")).success
    forgiven = env.step(as_step("switch_on character floor_lamp"))
    assert forgiven.success and "additional step" in forgiven.message


@pytest.mark.skipif(not eai_available(), reason="eai-eval is not installed "
                    "(pip install 'sage-pddl[virtualhome]'; CI installs it)")
def test_set_ups_after_the_proposed_walks_reach_drink_and_pour(tmp_path):
    """EAI task 26_1 (a cup, pourable and a recipient; the character starts sitting): drink
    and pour succeed only once the cup is held. The proposed walks set up one action each,
    drawn among many; the set-ups after them go toward each action not succeeded yet, so the
    default settings reach both, and without them (`setup_budget=0`) neither."""
    from sage_pddl.domains import load_domain
    from sage_pddl.tasks import load_task

    task, domain = load_task("virtualhome#26_1"), load_domain("virtualhome")

    def successes(settings: ProbeSettings) -> set[str]:
        out = tmp_path / str(settings.setup_budget)
        summary = collect([task], domain, out, taskset="virtualhome", env="virtualhome",
                          progress=False, probe=settings)
        return {t.action.action for t in read_logs(summary.files) if t.success}

    assert {"drink", "pour", "drop", "wipe"} <= successes(ProbeSettings())
    assert not {"drink", "pour"} & successes(ProbeSettings(setup_budget=0))


def test_collect_names_an_unknown_environment(tmp_path, capsys):
    from sage_pddl import cli

    assert cli.main(["collect", "--env", "holodeck", "--out", str(tmp_path), "--limit", "1"]) == 2
    err = capsys.readouterr().err
    assert "--env 'holodeck'" in err and "symbolic" in err


def test_probes_name_an_object_twice_only_where_the_types_allow_it():
    from sage_pddl.domains import load_domain
    from sage_pddl.induce.probe import types_allow

    vh = load_domain("virtualhome")
    find = next(a for a in vh.actions if a.name == "find")  # ?char - character ?obj - object
    assert not types_allow(find, ("character", "character"))
    assert types_allow(find, ("character", "novel"))
    put = next(a for a in vh.actions if a.name == "put_inside")
    assert [p.types for p in put.parameters][1] == [p.types for p in put.parameters][2]
    assert types_allow(put, ("character", "novel", "novel"))  # both declared `object`
    assert not types_allow(put, ("character", "novel", "character"))
