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
  (`extra`). A reference precondition with disjunctions of literals (EAI's `(or (holds_lh ?c ?o)
  (holds_rh ?c ?o))`) allows several conjunctions; the induced action, itself a conjunction, is
  compared with the one it matches best (most shared literals less extra ones), and the match
  says how many there were. Other non-literal parts (quantifiers, nested formulas) are listed
  as `not_comparable`.
* `gate_agreement(induced, reference, tasks)`: the induced domain used in place of the
  hand-written one on each task's problem: whether it reads the problem, and which reference
  plans each domain's gate accepts.
"""
from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass

from sage_pddl.env.transitions import Transition
from sage_pddl.gate import compile_gate
from sage_pddl.pddl import check_problem, write_formula
from sage_pddl.pddl.errors import SageError
from sage_pddl.pddl.model import And, Atom, Domain, Not, Or, Variable, key
from sage_pddl.tasks import normalize_steps, task_problem

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
"""A precondition literal by position: (positive, predicate key, parameter indices)."""


@dataclass(frozen=True)
class PreconditionMatch:
    action: str
    reference: tuple[str, ...]
    recovered: tuple[str, ...]
    missing: tuple[str, ...]
    extra: tuple[str, ...]
    not_comparable: tuple[str, ...] = ()
    induced: bool = True
    alternatives: int = 1
    """How many conjunctions the reference precondition allows (its disjunctions multiplied
    out); `reference` is the one the induced precondition matches best."""

    def to_json(self) -> dict:
        return {"action": self.action, "reference": len(self.reference),
                "recovered": list(self.recovered), "missing": list(self.missing),
                "extra": list(self.extra), "not_comparable": list(self.not_comparable),
                "induced": self.induced, "alternatives": self.alternatives}


def _literal(formula, index: Mapping[str, int]) -> Lit | None:
    positive, atom = (False, formula.arg) if isinstance(formula, Not) else (True, formula)
    if isinstance(atom, Atom) and all(isinstance(a, Variable) and key(a.name) in index
                                      for a in atom.args):
        return (positive, key(atom.predicate), tuple(index[key(a.name)] for a in atom.args))
    return None


def _conjuncts(formula) -> tuple:
    return formula.parts if isinstance(formula, And) else (formula,)


def precondition_literals(formula, params: Sequence[str]) -> tuple[list[Lit], list[str]]:
    """Positional literals of a conjunction; the parts that are not literals, as text."""
    index = {key(p): i for i, p in enumerate(params)}
    literals, other = [], []
    for part in _conjuncts(formula):
        literal = _literal(part, index)
        if literal is None:
            other.append(write_formula(part))
        else:
            literals.append(literal)
    return literals, other


def precondition_alternatives(formula, params: Sequence[str]
                              ) -> tuple[list[frozenset[Lit]], list[str]]:
    """The conjunctions of literals a precondition allows: its top-level literals with one
    disjunct of each disjunction whose disjuncts are literals or conjunctions of literals
    (multiplied out); the other parts (quantifiers, nested formulas), as text."""
    index = {key(p): i for i, p in enumerate(params)}
    alternatives: list[frozenset[Lit]] = [frozenset()]
    other = []
    for part in _conjuncts(formula):
        literal = _literal(part, index)
        if literal is not None:
            alternatives = [a | {literal} for a in alternatives]
            continue
        options = None
        if isinstance(part, Or):
            options = [[_literal(q, index) for q in _conjuncts(d)] for d in part.parts]
        if options and all(None not in o for o in options):
            alternatives = [a | frozenset(o) for a in alternatives  # type: ignore[arg-type]
                            for o in options]
        else:
            other.append(write_formula(part))
    return alternatives, other


def positional_text(literal: Lit) -> str:
    words = " ".join([literal[1], *(f"?{i + 1}" for i in literal[2])])
    return f"({words})" if literal[0] else f"(not ({words}))"


def _texts(literals) -> tuple[str, ...]:
    return tuple(positional_text(lit) for lit in sorted(literals, key=lambda x: (x[1], x[2], x[0])))


def compare_preconditions(induced: Domain, reference: Domain) -> list[PreconditionMatch]:
    """Per reference action (same name, case-insensitive, same arity), see the module doc."""
    matches = []
    for action in reference.actions:
        params = [p.name for p in action.parameters]
        alternatives, other = precondition_alternatives(action.precondition, params)
        mine = induced.action(action.name)
        if mine is None or len(mine.parameters) != len(params):
            smallest = min(alternatives, key=len)
            matches.append(PreconditionMatch(action.name, _texts(smallest), (), _texts(smallest),
                                             (), tuple(other), False, len(alternatives)))
            continue
        got = set(precondition_literals(mine.precondition,
                                        [p.name for p in mine.parameters])[0])
        best = max(alternatives, key=lambda a: (len(a & got) - len(got - a), -len(a)))
        matches.append(PreconditionMatch(
            action.name, _texts(best), _texts(best & got), _texts(best - got), _texts(got - best),
            tuple(other), True, len(alternatives)))
    return matches


@dataclass(frozen=True)
class GateAgreement:
    """The induced domain in place of the reference one over a task set (`gate_agreement`)."""

    tasks: int
    problems_read: int
    """Tasks whose problem (built in the reference domain) the induced domain reads without an
    error diagnostic."""
    plans: int
    """Tasks with a reference plan."""
    reference_accepts: int
    induced_accepts: int
    both_accept: int
    problem_errors: tuple[tuple[str, str], ...] = ()
    disagreements: tuple[tuple[str, str], ...] = ()
    """(task id, what the induced gate said) where the two gates disagree on the plan."""

    def to_json(self) -> dict:
        return {"tasks": self.tasks, "problems_read": self.problems_read, "plans": self.plans,
                "reference_accepts": self.reference_accepts,
                "induced_accepts": self.induced_accepts, "both_accept": self.both_accept,
                "problem_errors": [{"task": t, "error": e} for t, e in self.problem_errors],
                "disagreements": [{"task": t, "induced": e} for t, e in self.disagreements]}


def gate_agreement(induced: Domain, reference: Domain, tasks: Iterable) -> GateAgreement:
    """Each task's problem in `reference` (the task's world, as the project builds it), read by
    `induced` (`check_problem`); its reference plan (steps normalised by `reference`) gated by
    both domains on that one problem, so only the gate differs."""
    count = read = plans = ref_ok = ind_ok = both = 0
    errors: list[tuple[str, str]] = []
    disagreements: list[tuple[str, str]] = []
    for task in tasks:
        count += 1
        problem = task_problem(task, reference)
        try:
            mine = dataclasses.replace(problem, domain_name=induced.name)
            bad = [d for d in check_problem(mine, induced) if d.severity == "error"]
            if bad:
                raise SageError(str(bad[0]))
            gate = compile_gate(induced, mine)
        except SageError as error:
            errors.append((task.task_id, str(error)))
            continue
        read += 1
        if not task.reference_steps:
            continue
        plans += 1
        steps = normalize_steps(task.reference_steps, reference)
        theirs = compile_gate(reference, problem).check(steps).valid
        verdict = gate.check(steps)
        ref_ok += theirs
        ind_ok += verdict.valid
        both += theirs and verdict.valid
        if theirs != verdict.valid:
            said = (f"step {verdict.violations[0].step + 1}: {verdict.violations[0].code}"
                    if verdict.violations else "accepted")
            disagreements.append((task.task_id, said))
    return GateAgreement(count, read, plans, ref_ok, ind_ok, both, tuple(errors),
                         tuple(disagreements))


__all__ = ["GateAgreement", "PreconditionMatch", "Score", "compare_preconditions",
           "gate_agreement", "holdout_by", "positional_text", "precondition_alternatives",
           "precondition_literals", "score"]
