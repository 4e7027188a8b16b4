"""Held-out protocols: the baselines, balanced accuracy, the paper's cell mean, already-holds
refusals, and next-state scoring of learned effects against 'nothing changes'."""
from __future__ import annotations

import pytest

from sage_pddl.induce.evaluate import (
    ALWAYS_FAIL,
    LEARNER,
    MAJORITY,
    MAJORITY_BY_ARGS,
    NOTHING_CHANGES,
    Prediction,
    heldout,
    holdout_by,
    summarise,
    summarise_effects,
)
from sage_pddl.induce.learner import learn

from .test_learner import fact, toy_transitions, tr


def row(action: str, group: str, success: bool, predicted: bool, already: bool = False):
    return Prediction(action, group, success, already, {"p": predicted})


def test_balanced_accuracy_and_the_paper_cell_mean_weigh_what_accuracy_does_not():
    rows = ([row("a", "g1", False, False)] * 8 + [row("a", "g1", True, False)] * 2
            + [row("b", "g2", True, True)])
    s = summarise(rows, "p")
    assert s.accuracy == pytest.approx(9 / 11)
    # successes: 1 of 3 right; failures: 8 of 8
    assert s.balanced_accuracy == pytest.approx((1 / 3 + 1) / 2)
    # cells (a, g1): 0.8 and (b, g2): 1.0, unweighted
    assert s.cell_mean == pytest.approx(0.9) and s.cells == 2
    assert s.failure_precision == pytest.approx(0.8) and s.failure_recall == 1.0


def test_already_holds_refusals_can_be_left_out():
    rows = [row("on", "g", False, True, already=True), row("on", "g", True, True)]
    assert summarise(rows, "p").accuracy == 0.5
    kept = summarise(rows, "p", without_already_holds=True)
    assert kept.transitions == 1 and kept.accuracy == 1.0


def test_heldout_scores_the_learner_beside_the_baselines():
    transitions = toy_transitions()
    for i, t in enumerate(transitions):
        object.__setattr__(t, "task", f"task{i % 2}")
    result = heldout(holdout_by(transitions, lambda t: t.task), lambda ts: learn(ts))
    names = set(result.predictions[0].predicted)
    assert names == {LEARNER, ALWAYS_FAIL, MAJORITY, MAJORITY_BY_ARGS}
    assert all(not p.predicted[ALWAYS_FAIL] for p in result.predictions)
    learner, fail = summarise(result.predictions, LEARNER), summarise(result.predictions,
                                                                      ALWAYS_FAIL)
    assert fail.balanced_accuracy == 0.5
    assert learner.accuracy > fail.accuracy and learner.balanced_accuracy > 0.5
    effects = summarise_effects(result.next_states, LEARNER)
    nothing = summarise_effects(result.next_states, NOTHING_CHANGES)
    assert nothing.exact == 0.0 and nothing.added_recall == 0.0
    assert effects.exact > nothing.exact and effects.added_recall > 0


def test_the_lookup_by_arguments_answers_from_the_same_step_else_from_the_action():
    # in training, Pick apple always fails and Pick cup always succeeds; Pick mug is unseen
    train = ([tr("Pick", ["apple"], ["(hand-empty)"], False, code="pick/requires/x")] * 3
             + [tr("Pick", ["cup"], ["(hand-empty)"], True, ["(holding cup)"])] * 4)
    test = [tr("Pick", [obj], ["(hand-empty)"], True, [f"(holding {obj})"])
            for obj in ("apple", "cup", "mug")]
    result = heldout([("fold", train, test)], lambda ts: learn(ts))
    by_args = [p.predicted[MAJORITY_BY_ARGS] for p in result.predictions]
    assert by_args == [False, True, True]  # mug: the action's majority (4 successes to 3)
    assert [p.predicted[MAJORITY] for p in result.predictions] == [True] * 3


def openings() -> list:
    """Open ?x makes (opened ?x) and un-encloses what is inside ?x, and only that."""
    ts = []
    for box, other in (("b1", "b2"), ("b2", "b1")):
        pre = [f"(closed {box})", f"(in apple {box})", "(enclosed apple)", f"(in cup {other})",
               "(enclosed cup)", f"(closed {other})"]
        post = [f for f in pre if f not in (f"(closed {box})", "(enclosed apple)")]
        ts.append(tr("Open", [box], pre, True, post + [f"(opened {box})"]))
    return ts


def test_the_next_state_of_a_learned_action_follows_its_effects():
    result = learn(openings())
    added, deleted = result.actions[("open", 1)].changes(
        {fact("(closed b3)"), fact("(in pear b3)"), fact("(enclosed pear)"),
         fact("(in fig b4)"), fact("(enclosed fig)")}, ["b3"])
    assert added == {fact("(opened b3)")}
    assert deleted == {fact("(closed b3)"), fact("(enclosed pear)")}


def test_a_universal_effect_is_bounded_by_what_relates_its_objects_to_the_arguments():
    # every Open seen: the container's contents un-enclosed, nothing enclosed elsewhere; the
    # learned effect must not un-enclose an apple in another closed cabinet
    ts = [tr("Open", [box], [f"(closed {box})", f"(in {obj} {box})", f"(enclosed {obj})"], True,
             [f"(in {obj} {box})", f"(opened {box})"])
          for box, obj in (("b1", "cup"), ("b2", "fig"))]
    opening = learn(ts).actions[("open", 1)]
    added, deleted = opening.changes(
        {fact("(closed b3)"), fact("(in pear b3)"), fact("(enclosed pear)"),
         fact("(in apple b1)"), fact("(enclosed apple)"), fact("(closed b1)")}, ["b3"])
    assert fact("(enclosed pear)") in deleted and fact("(enclosed apple)") not in deleted
