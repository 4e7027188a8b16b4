"""Induction from hand-made transitions with a known ground truth, and the `induce` command."""
from __future__ import annotations

import json

import pytest

from sage_pddl.env.transitions import StepAction, Transition
from sage_pddl.gate import compile_gate
from sage_pddl.induce import induce
from sage_pddl.induce.learner import learn
from sage_pddl.pddl import Problem, parse_domain, write_domain
from sage_pddl.pddl.errors import SageError
from sage_pddl.pddl.model import Atom, Constant, Typed


def fact(text: str) -> tuple[str, ...]:
    return tuple(text.strip("()").split())


def tr(action: str, args, pre, success: bool, post=None, code=None, task="t") -> Transition:
    pre = frozenset(map(fact, pre))
    post = pre if post is None else frozenset(map(fact, post))
    return Transition(task=task, env="test", domain="toy", step=0,
                      action=StepAction(action, tuple(args), " ".join([action, *args])),
                      pre=pre, success=success, message="", post=post, code=code)


BASE = ["(pickupable apple)", "(pickupable cup)", "(receptacle table)", "(receptacle box)",
        "(container box)"]


def toy_transitions() -> list[Transition]:
    """Pick needs pickupable + reachable + hand-empty; Place R adds (on held R) or (in held R)."""
    ts = []
    for obj in ("apple", "cup"):
        pre = BASE + ["(hand-empty)", f"(reachable {obj})", f"(on {obj} table)"]
        post = [f for f in pre if f not in ("(hand-empty)", f"(on {obj} table)")] + [f"(holding {obj})"]
        ts.append(tr("Pick", [obj], pre, True, post))
        ts.append(tr("Pick", [obj], BASE + ["(hand-empty)"], False, code="pick/requires/reachable"))
        ts.append(tr("Pick", [obj], BASE + [f"(reachable {obj})", "(holding cup)"], False,
                     code="hand-full"))
    ts.append(tr("Pick", ["table"], BASE + ["(hand-empty)", "(reachable table)"], False,
                 code="not-pickupable"))
    for obj in ("apple", "cup"):
        for recep in ("table", "box"):
            pre = BASE + [f"(holding {obj})"]
            rel = "in" if recep == "box" else "on"
            post = BASE + ["(hand-empty)", f"({rel} {obj} {recep})", f"(reachable {recep})"]
            ts.append(tr("Place", [recep], pre, True, post))
        ts.append(tr("Place", ["table"], BASE + ["(hand-empty)"], False, code="hand-empty"))
    ts.append(tr("Place", ["apple"], BASE + ["(holding cup)"], False, code="not-receptacle"))
    return ts


def test_preconditions_are_the_literals_that_explain_the_failures():
    result = learn(toy_transitions(), domain_name="toy")
    pick = result.actions[("pick", 1)]
    texts = {r.name: r for r in result.report.actions}
    assert set(texts["Pick"].preconditions) == {"(hand-empty)", "(pickupable ?x)", "(reachable ?x)"}
    assert texts["Pick"].unexplained_failures == 0
    assert texts["Pick"].accuracy == 1.0 and texts["Pick"].successes == 2
    assert set(texts["Place"].preconditions) == {"(receptacle ?x)", "(not (hand-empty))"}
    assert pick.applicable({fact("(pickupable pear)"), fact("(reachable pear)"),
                            fact("(hand-empty)")}, ["Pear"])
    assert not pick.applicable({fact("(pickupable pear)"), fact("(hand-empty)")}, ["pear"])


def test_effects_lifted_with_conditional_and_universal_parts():
    result = learn(toy_transitions(), domain_name="toy")
    report = {r.name: r for r in result.report.actions}
    pick_effects = set(report["Pick"].effects)
    assert "(holding ?x)" in pick_effects and "(not (hand-empty))" in pick_effects
    # ?o is an object other than the step's arguments (the PDDL says so)
    assert "(forall (?o) (when (not (= ?o ?x)) (not (on ?x ?o))))" in pick_effects
    place = " ".join(report["Place"].effects)
    assert ("(forall (?o) (when (and (not (= ?o ?x)) (container ?x) (holding ?o)) "
            "(in ?o ?x)))") in place
    assert "(on ?o ?x)" in place and "(not (holding ?o))" in place
    assert not report["Place"].effect_issues


def test_unexplained_failures_and_noise_are_reported():
    ts = toy_transitions()
    # a failure whose state satisfies everything a success had: nothing can explain it
    ts.append(tr("Pick", ["apple"], BASE + ["(hand-empty)", "(reachable apple)"], False,
                 code="simulator-said-no"))
    report = {r.name: r for r in learn(ts).report.actions}["Pick"]
    assert report.unexplained_failures == 1
    assert "simulator-said-no" in str(report.unexplained_examples[0])
    assert report.accuracy < 1.0
    # excluded codes never count as failures
    ts.append(tr("Pick", ["pear"], BASE, False, code="unknown-object"))
    assert {r.name: r for r in learn(ts).report.actions}["Pick"].excluded == 1


def test_noise_tolerance_keeps_a_literal_violated_by_a_rare_success():
    ts = toy_transitions()
    ts.append(tr("Pick", ["cup"], BASE + ["(hand-empty)", "(on cup table)"], True,
                 BASE + ["(holding cup)"]))  # a noisy success without (reachable cup)
    strict = {r.name: r for r in learn(ts, exceptions=0).report.actions}["Pick"]
    assert "(reachable ?x)" not in strict.preconditions
    tolerant = {r.name: r for r in learn(ts, exceptions=0, noise=0.15).report.actions}["Pick"]
    assert "(reachable ?x)" in tolerant.preconditions
    assert tolerant.contradicting_successes == 1
    # by default a literal may be false in a share of the successes (a simulator's
    # exceptions): kept, since it explains two failures and contradicts one success
    default = {r.name: r for r in learn(ts).report.actions}["Pick"]
    assert "(reachable ?x)" in default.preconditions


def test_an_action_whose_successes_label_noise_explains_is_not_learned():
    # 1 success in 12 steps: with 10% of labels flipped, 2.4 successes could be flipped failures
    ts = [tr("Pour", ["cup"], ["(holding cup)"], False, code="pour/requires/x")] * 11 + [
        tr("Pour", ["cup"], ["(holding cup)"], True, ["(holding cup)", "(poured cup)"])]
    assert ("pour", 1) in learn(ts).actions
    noisy = learn(ts, noise=0.1)
    assert ("pour", 1) not in noisy.actions
    assert noisy.report.not_learned == ("Pour/1",)
    assert "label noise" in noisy.report.actions[0].effect_issues[0]


def test_min_support_drops_weak_preconditions():
    report = {r.name: r for r in learn(toy_transitions(), min_support=2).report.actions}
    # only one failure needs (pickupable ?x): below the support threshold
    assert "(pickupable ?x)" not in report["Pick"].preconditions
    assert report["Pick"].unexplained_failures == 1


def test_domain_is_valid_pddl_that_reparses_and_compiles():
    result = learn(toy_transitions(), domain_name="toy")
    text = write_domain(result.domain)
    again = parse_domain(text)
    assert again == result.domain
    problem = Problem("p", "toy", objects=tuple(Typed(n) for n in ("apple", "cup", "table", "box")),
                      init=tuple(Atom(p, tuple(Constant(a) for a in args)) for p, *args in
                                 map(fact, BASE + ["(hand-empty)", "(reachable apple)"])))
    gate = compile_gate(again, problem)
    verdict = gate.check([{"action": "Pick", "object": "apple"},
                          {"action": "Place", "object": "box"}])
    assert verdict.valid
    assert ("in", "apple", "box") in verdict.final_state
    rejected = gate.check([{"action": "Pick", "object": "cup"}])
    assert not rejected.valid and rejected.violations[0].code == "pick/requires/reachable"


def test_actions_without_success_are_left_out_and_reported():
    ts = toy_transitions() + [tr("Heat", ["apple"], BASE, False, code="heat/requires/holding")]
    result = learn(ts)
    assert result.domain.action("Heat") is None
    report = {r.name: r for r in result.report.actions}["Heat"]
    assert not report.in_domain and report.failures == 1


def test_induce_reads_files_and_folders(tmp_path):
    log = tmp_path / "logs" / "a.jsonl"
    log.parent.mkdir()
    log.write_text("".join(json.dumps(t.to_json()) + "\n" for t in toy_transitions()))
    result = induce(tmp_path / "logs", domain_name="toy")
    assert result.report.transitions == len(toy_transitions())
    assert result.domain.action("Pick") is not None
    with pytest.raises(SageError):
        induce(tmp_path / "missing")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    with pytest.raises(SageError, match="bad.jsonl:1"):
        induce(bad)


def _run_cli(argv, capsys):
    from sage_pddl import cli

    code = cli.main(argv)
    return code, capsys.readouterr()


def test_induce_command_prints_a_domain_and_a_report(tmp_path, capsys):
    log = tmp_path / "t.jsonl"
    log.write_text("".join(json.dumps(t.to_json()) + "\n" for t in toy_transitions()))
    code, out = _run_cli(["induce", str(log), "--domain-name", "toy", "--min-support", "1"], capsys)
    assert code == 0
    assert parse_domain(out.out).name == "toy"
    assert "Pick/1: support 2" in out.err
    code, out = _run_cli(["induce", str(tmp_path / "nothing")], capsys)
    assert code == 2 and "does not exist" in out.err


def _finds(reachable_in_failures: bool) -> list[Transition]:
    """Find succeeds on what is reachable and shut in nothing; fails on what is shut in a box
    (and, with `reachable_in_failures` False, also not reachable)."""
    ts = []
    for obj, box in (("apple", "b1"), ("cup", "b2"), ("pen", "b1")):
        ts.append(tr("Find", [obj], [f"(reachable {obj})"], True))
        shut = [f"(shut-in {obj} {box})"] + ([f"(reachable {obj})"] if reachable_in_failures
                                             else [])
        ts.append(tr("Find", [obj], shut, False, code="refused"))
    return ts


def test_a_precondition_about_some_other_object_only_where_no_parameter_literal_explains():
    # the failures are shut in a box and reachable: only "no object shuts ?x in" explains them
    enclosed = {r.name: r for r in learn(_finds(True)).report.actions}["Find"]
    assert enclosed.preconditions == (
        "(not (exists (?o) (and (not (= ?o ?x)) (shut-in ?x ?o))))",)
    assert enclosed.accuracy == 1.0
    # (reachable ?x), over the parameter, explains them too: it is learned instead
    reachable = {r.name: r for r in learn(_finds(False)).report.actions}["Find"]
    assert reachable.preconditions == ("(reachable ?x)",)
