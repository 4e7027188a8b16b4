"""Evaluate induced domains: held-out prediction of step success, and recovered preconditions.

* `score(result, transitions)`: predict each held-out transition's success with the learned
  preconditions and compare with what happened. Failure is the positive class: precision = of
  the steps predicted to fail, how many failed; recall = of the steps that failed, how many were
  predicted. A step whose action (name, arity) the induced domain lacks is predicted to fail
  (counted in `unseen`). Transitions whose failure is not about preconditions
  (`learner.EXCLUDED_CODES`) are left out.
* `holdout_by(transitions, unit)`: leave-one-unit-out splits (unit: a function of a transition,
  e.g. its task's scene).
* `compare_preconditions(induced, reference)`: per action of the reference domain, which of its
  precondition literals (positive or negated atoms over the parameters, compared by predicate
  and parameter position) the induced action has (`recovered`), lacks (`missing`) and adds
  (`extra`). Non-literal parts of the reference (disjunctions, quantifiers) are listed as
  `not_comparable`.
"""
from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass

from sage_pddl.env.transitions import Transition
from sage_pddl.pddl import write_formula
from sage_pddl.pddl.model import And, Atom, Domain, Not, Variable, key

from .learner import EXCLUDED_CODES, InductionResult


@dataclass(frozen=True)
class Score:
    total: int = 0
    correct: int = 0
    true_fail: int = 0      # predicted failure, failed
    false_fail: int = 0     # predicted failure, succeeded
    missed_fail: int = 0    # predicted success, failed
    unseen: int = 0

    @property
    def accuracy(self) -> float:
        return self.correct / self.total if self.total else 1.0

    @property
    def precision(self) -> float:
        predicted = self.true_fail + self.false_fail
        return self.true_fail / predicted if predicted else 1.0

    @property
    def recall(self) -> float:
        actual = self.true_fail + self.missed_fail
        return self.true_fail / actual if actual else 1.0

    def __add__(self, other: Score) -> Score:
        return Score(*(a + b for a, b in zip(
            (self.total, self.correct, self.true_fail, self.false_fail, self.missed_fail, self.unseen),
            (other.total, other.correct, other.true_fail, other.false_fail, other.missed_fail,
             other.unseen))))

    def to_json(self) -> dict:
        return {"transitions": self.total, "accuracy": round(self.accuracy, 4),
                "failure_precision": round(self.precision, 4),
                "failure_recall": round(self.recall, 4), "unseen_actions": self.unseen}


def score(result: InductionResult, transitions: Iterable[Transition]) -> dict[str, Score]:
    """Per action name (and "*" for all): the prediction score on `transitions`."""
    per: dict[str, list[int]] = defaultdict(lambda: [0] * 6)
    for t in transitions:
        if not t.success and t.code in EXCLUDED_CODES:
            continue
        predicted = result.predict(t)
        unseen = predicted is None
        predicted = bool(predicted)
        for name in (t.action.action, "*"):
            row = per[name]
            row[0] += 1
            row[1] += predicted == t.success
            row[2] += (not predicted) and not t.success
            row[3] += (not predicted) and t.success
            row[4] += predicted and not t.success
            row[5] += unseen
    return {name: Score(*row) for name, row in per.items()}


def holdout_by(transitions: Sequence[Transition], unit: Callable[[Transition], str]
               ) -> Iterator[tuple[str, list[Transition], list[Transition]]]:
    """(held-out unit, training transitions, held-out transitions) for every unit."""
    units = sorted({unit(t) for t in transitions})
    for held in units:
        train = [t for t in transitions if unit(t) != held]
        test = [t for t in transitions if unit(t) == held]
        yield held, train, test


Lit = tuple[bool, str, tuple[int, ...]]


@dataclass(frozen=True)
class PreconditionMatch:
    action: str
    reference: tuple[str, ...]
    recovered: tuple[str, ...]
    missing: tuple[str, ...]
    extra: tuple[str, ...]
    not_comparable: tuple[str, ...] = ()
    induced: bool = True

    def to_json(self) -> dict:
        return {"action": self.action, "reference": len(self.reference),
                "recovered": list(self.recovered), "missing": list(self.missing),
                "extra": list(self.extra), "not_comparable": list(self.not_comparable),
                "induced": self.induced}


def _literals(formula, params: Sequence[str]) -> tuple[list[Lit], list[str]]:
    """Positional literals of a conjunction; the parts that are not literals, as text."""
    index = {key(p): i for i, p in enumerate(params)}
    parts = formula.parts if isinstance(formula, And) else (formula,)
    literals, other = [], []
    for part in parts:
        positive, atom = (False, part.arg) if isinstance(part, Not) else (True, part)
        if isinstance(atom, Atom) and all(isinstance(a, Variable) and key(a.name) in index
                                          for a in atom.args):
            literals.append((positive, key(atom.predicate),
                             tuple(index[key(a.name)] for a in atom.args)))
        else:
            other.append(write_formula(part))
    return literals, other


def _text(literal: Lit) -> str:
    words = " ".join([literal[1], *(f"?{i + 1}" for i in literal[2])])
    return f"({words})" if literal[0] else f"(not ({words}))"


def compare_preconditions(induced: Domain, reference: Domain) -> list[PreconditionMatch]:
    """Per reference action (same name, case-insensitive, same arity), see the module doc."""
    matches = []
    for action in reference.actions:
        params = [p.name for p in action.parameters]
        ref, other = _literals(action.precondition, params)
        mine = induced.action(action.name)
        if mine is None or len(mine.parameters) != len(params):
            matches.append(PreconditionMatch(action.name, tuple(map(_text, ref)), (),
                                             tuple(map(_text, ref)), (), tuple(other), False))
            continue
        got, _ = _literals(mine.precondition, [p.name for p in mine.parameters])
        matches.append(PreconditionMatch(
            action.name, tuple(map(_text, ref)),
            tuple(_text(lit) for lit in ref if lit in got),
            tuple(_text(lit) for lit in ref if lit not in got),
            tuple(_text(lit) for lit in got if lit not in ref), tuple(other)))
    return matches


__all__ = ["PreconditionMatch", "Score", "compare_preconditions", "holdout_by", "score"]
