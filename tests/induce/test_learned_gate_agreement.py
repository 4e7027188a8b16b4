"""The learned actions' own evaluator against the gate on the PDDL that induce writes for them.

`induce/learned.py` predicts with the learned actions directly (`LearnedAction.applicable`,
`changes`: the held-out scores and the learner's own accuracy); the domain it writes is checked
by the gate. The two must say the same: on every transition of the logs a domain was learned
from, the gate on the written domain (read back from its text) accepts the step exactly when
the learned action does (closed world: no unobserved facts), and where the step is applied
(accepted, or a logged success, the steps the held-out scores read the effects of) it changes
the same facts. Checked on every kind of domain induce writes in the tests: hand-made
transitions under each learner setting, iTHOR logs (gate-guided and through the symbolic
world) and VirtualHome logs (EAI's domain in the symbolic world), untyped and in the types of
the hand-written domain (`types_from`), whose gate reads the task's own problem.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from sage_pddl.domains import load_domain
from sage_pddl.env.transitions import Transition
from sage_pddl.env.virtualhome import eai_available
from sage_pddl.gate import Gate, compile_gate
from sage_pddl.induce import induce, read_logs
from sage_pddl.induce.collect import collect
from sage_pddl.induce.learner import InductionResult, learn
from sage_pddl.pddl import parse_domain, write_domain
from sage_pddl.pddl.model import Atom, Constant, Domain, PlanStep, Problem, Typed
from sage_pddl.tasks import load_task, load_taskset, task_problem

from .test_either import grabs
from .test_learner import toy_transitions, tr
from .test_noise_and_observability import many_picks
from .test_protocols import openings
from .test_several_clauses import closings

SETTINGS = ({}, {"exceptions": 0}, {"safe": True}, {"min_successes": 3}, {"keep_static": True},
            {"noise": 0.05})
"""The learner settings each domain is learned with."""


def _own_problem(domain: Domain, t: Transition) -> Problem:
    """The transition's pre-state as a problem: its objects are those the state and the step
    name (what the learned evaluator ranges over)."""
    objects = sorted({o for fact in t.pre for o in fact[1:]} | {a.lower() for a in t.action.args})
    return Problem("transition", domain.name, objects=tuple(Typed(o) for o in objects),
                   init=tuple(Atom(f[0], tuple(Constant(o) for o in f[1:])) for f in t.pre))


def _disagreements(result: InductionResult, transitions: Sequence[Transition],
                   task_problems: bool = False) -> tuple[list, int, int, int]:
    """(disagreements, steps compared, of them accepted, steps whose changes were compared):
    the gate on `result`'s written domain against the learned actions, on each transition
    whose action was learned, from its pre-state; the gate reads the task's problem with
    `task_problems`, else the transition's own (`_own_problem`)."""
    domain = parse_domain(write_domain(result.domain))
    gates: dict[str | Problem, Gate] = {}

    def gate_of(t: Transition) -> Gate:
        if task_problems:
            if t.task not in gates:
                gates[t.task] = compile_gate(domain, task_problem(load_task(t.task), domain))
            return gates[t.task]
        own = _own_problem(domain, t)  # the steps probed in one state share its problem
        if own not in gates:
            gates[own] = compile_gate(domain, own)
        return gates[own]
    found: list = []
    compared = accepted = applied = 0
    for t in transitions:
        learned = result.actions.get(result.schema_key(t.action.action, len(t.action.args)))
        if learned is None:
            continue
        gate = gate_of(t)
        ground = gate.ground(PlanStep(learned.name, t.action.args), state=t.pre)
        verdict = gate.applies(t.pre, ground)
        mine = learned.applicable(t.pre, t.action.args)
        compared, accepted = compared + 1, accepted + mine
        if verdict != mine:
            found.append(("accepts", t.action.text, sorted(t.pre), verdict, mine))
        if mine or t.success:
            after = gate.apply(t.pre, ground)
            applied += 1
            theirs = (after - t.pre, t.pre - after)
            if learned.changes(t.pre, t.action.args) != theirs:
                found.append(("changes", t.action.text, sorted(t.pre), theirs,
                              learned.changes(t.pre, t.action.args)))
    return found, compared, accepted, applied


def _assert_agree(learn_with: Callable[..., InductionResult], transitions: Sequence[Transition],
                  task_problems: bool = False) -> None:
    for settings in SETTINGS:
        result = learn_with(**settings)
        found, compared, accepted, applied = _disagreements(result, transitions, task_problems)
        assert not found, (settings, found[:3])
        # both verdicts met, and effects compared
        assert 0 < accepted < compared and applied >= accepted, (settings, compared, accepted)


def _opening() -> list[Transition]:
    """Open un-encloses what is in the opened box (a universal effect: `test_protocols`),
    refused when the box is open."""
    return openings() + [tr("Open", [box], [f"(opened {box})", f"(in apple {box})"], False,
                            code="already-open") for box in ("b1", "b2")]


def _walking() -> list[Transition]:
    """Walk nears what is furniture or an appliance (an effect with an exception: `(when (not
    (and (not (appliance ?x)) (not (furniture ?x)))) (near ?x))`); Enter visits what holds
    something (an existential condition: `(when (exists (?o) (inside ?o ?x)) (visited ?x))`);
    neither while tired."""
    kinds = {"f1": "furniture", "f2": "furniture", "a1": "appliance", "a2": "appliance",
             "r1": "room", "r2": "room", "p1": None, "p2": None}
    base = [f"({k} {o})" for o, k in kinds.items() if k] + ["(inside cup r1)", "(inside fig f1)"]
    ts = []
    for o, k in kinds.items():
        near = [f"(near {o})"] if k in ("furniture", "appliance") else []
        ts.append(tr("Walk", [o], base, True, base + near))
        visited = [f"(visited {o})"] if o in ("r1", "f1") else []
        ts.append(tr("Enter", [o], base, True, base + visited))
    for o in ("f2", "r2"):
        ts += [tr(action, [o], base + ["(tired)"], False, code="tired")
               for action in ("Walk", "Enter")]
    return ts


def _serving() -> list[Transition]:
    """Serve marks the target served when something else is held (an existential condition)
    and lets go of every other object held (a universal effect); not while tired. Serving
    the very object held (as `collect --env symbolic` logs `Serve KeyChain` while holding it)
    changes nothing: the learner's ?o is an object other than the arguments, which the PDDL
    must say (`(not (= ?o ?x))`), since a PDDL variable ranges over the arguments too."""
    ts = []
    for plate, food in (("p1", "f1"), ("p2", "f2"), ("p3", "f1")):
        pre = [f"(plate {plate})", f"(holding {food})"]
        ts.append(tr("Serve", [plate], pre, True, [f"(plate {plate})", f"(served {plate})"]))
        ts.append(tr("Serve", [plate], [f"(plate {plate})"], True))
        ts.append(tr("Serve", [plate], pre + ["(tired)"], False, code="tired"))
    for food in ("f1", "f2"):
        ts.append(tr("Serve", [food], [f"(holding {food})"], True))
    return ts


def _enclosing() -> list[Transition]:
    """Find is refused when the object is shut in some container (a precondition about some
    other object: `(not (exists (?o) (and (not (= ?o ?x)) (shut-in ?x ?o))))`); a container
    that shuts something in is found; nothing is found while tired."""
    ts = []
    for obj, box in (("apple", "b1"), ("cup", "b2"), ("pen", "b1")):
        ts.append(tr("Find", [obj], [f"(box {box})"], True, [f"(box {box})", f"(seen {obj})"]))
        shut = [f"(box {box})", f"(shut-in {obj} {box})"]
        ts.append(tr("Find", [obj], shut, False, code="shut-in"))
        ts.append(tr("Find", [box], shut, True, shut + [f"(seen {box})"]))
    ts.append(tr("Find", ["apple"], ["(box b1)", "(tired)"], False, code="tired"))
    return ts


def _nested_closings() -> list[Transition]:
    """Close shuts in what is inside the box, directly or in an open bowl inside it (a
    universal effect of two clauses, one through a further object ?m: `test_several_clauses`),
    not what a closed bowl inside it holds."""
    return closings(closed_bowl=True)


def _grabbing() -> list[Transition]:
    """Grab succeeds when the agent is near the thing or near something beside it (a
    precondition with an alternative through a further object, `test_either`), never through
    the agent itself: `(or (near ?x ?y) (exists (?o) (and (not (= ?o ?x)) (not (= ?o ?y))
    ...)))`."""
    return grabs()


def test_the_hand_made_sets_write_every_kind_of_effect():
    """What the sets below make induce write: conditional, universal, existential and
    excepted effects, negative preconditions, a precondition about some other object, a
    universal effect's condition through a further object, a precondition that a literal
    holds or some further object relates the arguments."""
    written = "\n".join(write_domain(learn(make()).domain)
                        for make in (toy_transitions, many_picks, _opening, _walking, _serving,
                                      _enclosing, _nested_closings, _grabbing))
    for construct in ("(forall (?o) (when", "(exists (?o) (and (not (= ?o ?x))",
                      "(exists (?m)", "(not (= ?m ?o))",
                      "(or (near ?x ?y) (exists (?o) (and (not (= ?o ?x)) (not (= ?o ?y))",
                      "(not (and (not", "(not (tired))", "(not (container ?x))",
                      "(not (exists (?o) (and (not (= ?o ?x)) (shut-in ?x ?o))))"):
        assert construct in " ".join(written.split()), construct


@pytest.mark.parametrize("transitions", [toy_transitions, many_picks, _opening, _walking,
                                         _serving, _enclosing, _nested_closings, _grabbing])
def test_hand_made_transitions(transitions):
    ts = transitions()
    _assert_agree(lambda **settings: learn(ts, **settings), ts)


def _collected(root: Path, domain_name: str, task_ids: Sequence[str], env: str | None
               ) -> list[Transition]:
    domain = load_domain(domain_name)
    tasks = [t for t in load_taskset(domain_name) if t.task_id in task_ids]
    summary = collect(tasks, domain, root, taskset=domain_name, progress=False, env=env)
    assert len(summary.written) == len(task_ids) and not summary.failed
    return list(read_logs([root]))


@pytest.mark.parametrize("domain_name, task_ids, env", [
    pytest.param("ithor", ("L11", "L06"), None,  # the two smallest iTHOR problems, gate-guided
                 marks=pytest.mark.slow),  # (its collection takes the longest)
    ("ithor", ("L11", "L06"), "symbolic"),
    ("virtualhome", ("3_1", "6_1"), None),  # EAI's domain, in the symbolic world
])
def test_collected_logs_untyped_and_typed(tmp_path, domain_name, task_ids, env):
    ts = _collected(tmp_path, domain_name, task_ids, env)
    _assert_agree(lambda **settings: induce([tmp_path], **settings), ts)
    hand_written = load_domain(domain_name)
    _assert_agree(lambda **settings: induce([tmp_path], types_from=hand_written, **settings),
                  ts, task_problems=True)


@pytest.mark.slow
@pytest.mark.skipif(not eai_available(), reason="eai-eval is not installed (the virtualhome "
                    "extra)")
def test_virtualhome_simulator_logs_with_alternatives_through_a_further_object(tmp_path):
    """EAI's simulator, collected with the default settings (`collect`'s default probe
    settings, as `sage-pddl collect --env virtualhome`): the character close to something
    close to the target is close enough, and the domain says so with `(or (next_to ?x ?y)
    (exists (?o) ...))`; the gate on it and the learned actions still agree everywhere."""
    ts = _collected(tmp_path, "virtualhome", ("3_1", "6_1", "11_1", "12_2"), "virtualhome")
    assert "(or (next_to ?x ?y) (exists (?o)" in " ".join(
        write_domain(induce([tmp_path]).domain).split())
    _assert_agree(lambda **settings: induce([tmp_path], **settings), ts)
    _assert_agree(lambda **settings: induce([tmp_path], types_from=load_domain("virtualhome"),
                                            **settings), ts, task_problems=True)
