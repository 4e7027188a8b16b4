"""Label noise, unobserved facts and the evidence behind each learned precondition."""
from __future__ import annotations

import dataclasses
import random

import pytest

from sage_pddl.induce.learner import learn, mislabelled_successes
from sage_pddl.pddl.errors import SageError

from .test_learner import BASE, fact, toy_transitions, tr


def many_picks(count: int = 40, seed: int = 0) -> list:
    """Pick succeeds exactly when the object is reachable and the hand is empty."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        obj = f"o{i}"
        reachable, empty = rng.random() < 0.5, rng.random() < 0.6
        pre = [f"(pickupable {obj})"] + ([f"(reachable {obj})"] if reachable else []) + \
            (["(hand-empty)"] if empty else [f"(holding x{i})"])
        ok = reachable and empty
        post = ([f for f in pre if f != "(hand-empty)"] + [f"(holding {obj})"]) if ok else pre
        out.append(tr("Pick", [obj], pre, ok, post, code=None if ok else "refused"))
    return out


def test_mislabelled_share_of_successes_follows_the_class_balance():
    assert mislabelled_successes(0.0, 10, 90) == 0.0
    # 10 successes, 90 failures, 10% flipped: ~9 of the ~18 logged successes may be flips
    assert mislabelled_successes(0.1, 18, 82) == pytest.approx(0.5)
    # balanced outcomes: about the rate itself (doubled for sampling), never below it
    assert mislabelled_successes(0.05, 50, 50) == pytest.approx(0.1)
    assert mislabelled_successes(0.05, 99, 1) == 0.05
    with pytest.raises(SageError, match="noise"):
        learn(toy_transitions(), noise=0.5)


def test_flipped_outcomes_keep_the_rule_with_noise_and_lose_it_without():
    clean = many_picks(80)
    successes = [i for i, t in enumerate(clean) if t.success]
    failures = [i for i, t in enumerate(clean) if not t.success]
    flip = set(successes[:2]) | set(failures[:1])  # two successes logged as failures, and back
    noisy = [dataclasses.replace(t, success=not t.success, code="noise" if t.success else None)
             if i in flip else t for i, t in enumerate(clean)]
    truth = {r.name: r for r in learn(clean).report.actions}["Pick"]
    assert set(truth.preconditions) == {"(hand-empty)", "(reachable ?x)"}
    strict = {r.name: r for r in learn(noisy, exceptions=0).report.actions}["Pick"]
    assert set(strict.preconditions) != {"(hand-empty)", "(reachable ?x)"}
    tolerant = {r.name: r for r in learn(noisy, exceptions=0, noise=0.05).report.actions}["Pick"]
    assert set(tolerant.preconditions) == {"(hand-empty)", "(reachable ?x)"}
    assert tolerant.contradicting_successes == 1 and tolerant.unexplained_failures == 2
    # the default learner allows a simulator's exceptions: the rule survives without --noise
    default = {r.name: r for r in learn(noisy).report.actions}["Pick"]
    assert set(default.preconditions) == {"(hand-empty)", "(reachable ?x)"}


def test_a_literal_is_kept_only_when_it_explains_more_failures_than_it_contradicts():
    ts = many_picks(80)
    # a failure no rule explains, where (dusty ?x) alone is false
    odd = tr("Pick", ["z"], ["(pickupable z)", "(reachable z)", "(hand-empty)"], False,
             code="refused")
    two = [i for i, t in enumerate(ts) if t.success][:2]

    def dusty(spared):
        return [t if i in spared else dataclasses.replace(t, pre=t.pre | {("dusty", t.action.args[0])})
                for i, t in enumerate(ts)] + [odd]

    # false in two successes, explains one failure: left out, the failure stays unexplained
    report = {r.name: r for r in learn(dusty(two), noise=0.1).report.actions}["Pick"]
    assert "(dusty ?x)" not in report.preconditions and report.unexplained_failures == 1
    # true in every success: it explains the failure at no cost, so it is kept
    report = {r.name: r for r in learn(dusty([]), noise=0.1).report.actions}["Pick"]
    assert "(dusty ?x)" in report.preconditions and report.unexplained_failures == 0


def test_unobserved_facts_explain_nothing_and_are_reported_as_evidence():
    ts = toy_transitions()
    # the failure that needs (reachable ?x): its reachability was not observed
    hidden = [dataclasses.replace(t, unknown=frozenset({("reachable", t.action.args[0])}))
              if t.code == "pick/requires/reachable" else t for t in ts]
    report = {r.name: r for r in learn(hidden).report.actions}["Pick"]
    assert "(reachable ?x)" not in report.preconditions
    assert report.unexplained_failures == 2
    # a success that did not observe a literal's atom counts neither for nor against it
    seen = [dataclasses.replace(t, pre=t.pre - {("reachable", "apple")},
                                unknown=frozenset({("reachable", "apple")}))
            if t.success and t.action.args == ("apple",) else t for t in ts]
    pick = {r.name: r for r in learn(seen).report.actions}["Pick"]
    assert "(reachable ?x)" in pick.preconditions and pick.accuracy == 1.0
    evidence = {e.literal: e for e in pick.evidence}["(reachable ?x)"]
    assert (evidence.held, evidence.observed, evidence.unobserved) == (1, 1, 1)
    assert evidence.explains == 2
    assert "1 not observed" in str(evidence)
    assert pick.to_json()["evidence"][0].keys() >= {"literal", "held", "observed", "explains"}


def test_a_fact_unobserved_before_the_step_is_not_an_effect():
    before = BASE + ["(hand-empty)", "(reachable apple)"]
    after = [f for f in before if f != "(hand-empty)"] + ["(holding apple)", "(lit lamp)"]
    t = tr("Pick", ["apple"], before, True, after)
    unseen = dataclasses.replace(t, unknown=frozenset({fact("(lit lamp)")}))
    assert ("lit", "lamp") in t.added and ("lit", "lamp") not in unseen.added
    report = {r.name: r for r in learn([unseen] + toy_transitions()[1:]).report.actions}["Pick"]
    assert not any("lit" in e for e in report.effects)
