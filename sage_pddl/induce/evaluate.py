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
  as `not_comparable`. A reference literal the induced action requires only with an
  alternative through a further object (`(or (next_to ?x ?y) (exists (?o) ...))`, learned
  where the simulator accepts that too) is missing, and listed in `widened` as well.
* `gate_agreement(induced, reference, tasks)`: the induced domain used in place of the
  hand-written one on each task's problem: whether it reads the problem, and which reference
  plans each domain's gate accepts.

Held-out protocols (`heldout_predictions`, `summarise`). Each held-out transition gets one
`Prediction` per predictor: the learner, and the baselines *always-fail* (every step refused)
*majority* (each action's more frequent outcome in the training data; an action never seen
in training is predicted to fail, as the learner predicts it) and *majority by arguments* (the
more frequent outcome of the same action on the same arguments, else the action's: a lookup
table of the steps seen). `summarise` scores a predictor
two ways: ours, transition-weighted (accuracy, and balanced accuracy: the mean of the recall of
successes and of failures, which a constant predictor cannot lift above 0.5), and the paper's,
the unweighted mean of the accuracy of each (action, held-out group) cell. A step an
environment refused because its effect already held (`ALREADY_HOLDS_CODES`, such as
VirtualHome's additional step, which EAI's own scorer forgives) is marked, so every figure can be
given with and without those steps.
"""
from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from sage_pddl.env.base import Fact
from sage_pddl.env.transitions import Transition
from sage_pddl.gate import PlanChecker, compile_gate
from sage_pddl.pddl import check_problem, write_formula
from sage_pddl.pddl.errors import SageError
from sage_pddl.pddl.model import (
    And,
    Atom,
    Domain,
    Exists,
    Not,
    Or,
    PlanStep,
    Problem,
    Variable,
    key,
)
from sage_pddl.tasks import normalize_steps, task_problem

from .learner import EXCLUDED_CODES, InductionResult
from .lifting import Literal

ALREADY_HOLDS_CODES = frozenset({"eai/additional_step"})
"""Failure codes by which an environment says it refused a step because the step's effect
already held (switching on what is on). Such a refusal is real evidence of the executor's
behaviour, but a scorer may forgive it, so evaluations report with and without these steps."""


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
        if not is_evidence(t):
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
    widened: tuple[str, ...] = ()
    """The missing literals the induced action has as the literal of an alternative through a
    further object (`(or L (exists (?o) ...))`)."""

    def to_json(self) -> dict:
        return {"action": self.action, "reference": len(self.reference),
                "recovered": list(self.recovered), "missing": list(self.missing),
                "extra": list(self.extra), "not_comparable": list(self.not_comparable),
                "induced": self.induced, "alternatives": self.alternatives,
                "widened": list(self.widened)}


def _literal(formula, index: Mapping[str, int]) -> Literal | None:
    positive, atom = (False, formula.arg) if isinstance(formula, Not) else (True, formula)
    if isinstance(atom, Atom) and all(isinstance(a, Variable) and key(a.name) in index
                                      for a in atom.args):
        return Literal(positive, key(atom.predicate), tuple(index[key(a.name)] for a in atom.args))
    return None


def _conjuncts(formula) -> tuple:
    return formula.parts if isinstance(formula, And) else (formula,)


def precondition_literals(formula, params: Sequence[str]) -> tuple[list[Literal], list[str]]:
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


def widened_literals(formula, params: Sequence[str]) -> set[Literal]:
    """The literals a precondition has only with an alternative through a further object:
    `L` of each conjunct `(or L (exists ...))`, as induce writes them (`lifting.Either`)."""
    index = {key(p): i for i, p in enumerate(params)}
    found = set()
    for part in _conjuncts(formula):
        if isinstance(part, Or) and len(part.parts) == 2 and isinstance(part.parts[1], Exists):
            literal = _literal(part.parts[0], index)
            if literal is not None:
                found.add(literal)
    return found


def precondition_alternatives(formula, params: Sequence[str]
                              ) -> tuple[list[frozenset[Literal]], list[str]]:
    """The conjunctions of literals a precondition allows: its top-level literals with one
    disjunct of each disjunction whose disjuncts are literals or conjunctions of literals
    (multiplied out); the other parts (quantifiers, nested formulas), as text."""
    index = {key(p): i for i, p in enumerate(params)}
    alternatives: list[frozenset[Literal]] = [frozenset()]
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


def positional_text(literal: Literal) -> str:
    words = " ".join([literal.predicate, *(f"?{i + 1}" for i in literal.slots)])
    return f"({words})" if literal.positive else f"(not ({words}))"


def _texts(literals) -> tuple[str, ...]:
    in_order = sorted(literals, key=lambda lit: (lit.predicate, lit.slots, lit.positive))
    return tuple(positional_text(lit) for lit in in_order)


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
        names = [p.name for p in mine.parameters]
        got = set(precondition_literals(mine.precondition, names)[0])
        best = max(alternatives, key=lambda a: (len(a & got) - len(got - a), -len(a)))
        matches.append(PreconditionMatch(
            action.name, _texts(best), _texts(best & got), _texts(best - got), _texts(got - best),
            tuple(other), True, len(alternatives),
            _texts((best - got) & widened_literals(mine.precondition, names))))
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


# --- held-out protocols ------------------------------------------------------------------

LEARNER, ALWAYS_FAIL, MAJORITY = "learner", "always-fail", "majority"
MAJORITY_BY_ARGS = "majority by arguments"
"""The lookup table of each (action, arguments): the step's more frequent outcome in training,
else its action's (`MAJORITY`)."""


def is_evidence(t: Transition) -> bool:
    """Whether a transition says something about preconditions (the learner and `score` use
    exactly these: successes, and failures whose code is not in `EXCLUDED_CODES`)."""
    return t.success or t.code not in EXCLUDED_CODES


@dataclass(frozen=True)
class Prediction:
    """One held-out transition: its action, held-out group, outcome, whether it is an
    already-holds refusal, and each predictor's verdict (True: predicted to succeed)."""

    action: str
    group: str
    success: bool
    already_holds: bool
    predicted: Mapping[str, bool]


def action_majority(transitions: Iterable[Transition], schema_key: Callable[[Transition], object]
                    ) -> dict[object, bool]:
    """Per action schema: whether success is its more frequent outcome (ties: success)."""
    tally: dict[object, list[int]] = defaultdict(lambda: [0, 0])
    for t in transitions:
        if is_evidence(t):
            tally[schema_key(t)][t.success] += 1
    return {slot: ok >= bad for slot, (bad, ok) in tally.items()}


def _arg_keys(t: Transition) -> tuple[str, ...]:
    return tuple(key(a) for a in t.action.args)


Changes = tuple[frozenset[Fact], frozenset[Fact]]
"""(added, deleted) ground facts of one step."""

NOTHING_CHANGES = "nothing-changes"


@dataclass(frozen=True)
class NextState:
    """One held-out success: what its step added and deleted, and each predictor's
    (added, deleted) from the pre-state. Facts the record did not observe are left out of
    both sides."""

    action: str
    group: str
    actual: Changes
    predicted: Mapping[str, Changes]


@dataclass(frozen=True)
class Heldout:
    """Everything predicted on held-out transitions (`heldout`)."""

    predictions: tuple[Prediction, ...]
    next_states: tuple[NextState, ...]


def heldout(folds: Iterable[tuple[str, Sequence[Transition], Sequence[Transition]]],
            learn: Callable[[Sequence[Transition]], InductionResult],
            group: Callable[[Transition], str] | None = None,
            accepts: Mapping[str, Callable[[Transition], bool]] | None = None,
            changes: Mapping[str, Callable[[Transition], Changes]] | None = None,
            learners: Mapping[str, Callable[[Sequence[Transition]], InductionResult]]
            | None = None) -> Heldout:
    """Train on each fold's training transitions with `learn`, predict its held-out ones:
    every step's outcome (`Prediction`) and every success's next state (`NextState`).
    `folds`: (fold name, training, held out); a transition's group is `group(t)` (default:
    the fold's name). `accepts` and `changes`: further predictors that need no training (a
    hand-written domain's gate), by name; `learners`: further learners trained on each fold
    (the safe learner), by name, predicting the steps' outcomes."""
    predictions: list[Prediction] = []
    next_states: list[NextState] = []
    for name, train, test in folds:
        result = learn(train)
        others = {label: trained(train) for label, trained in (learners or {}).items()}

        def slot(t: Transition, result: InductionResult = result) -> object:
            return result.schema_key(t.action.action, len(t.action.args))

        majority = action_majority(train, slot)
        def step_slot(t: Transition, slot: Callable[[Transition], object] = slot) -> object:
            return (slot(t), _arg_keys(t))

        by_args = action_majority(train, step_slot)
        for t in test:
            if not is_evidence(t):
                continue
            where = group(t) if group else name
            predicted = {LEARNER: bool(result.predict(t)), ALWAYS_FAIL: False,
                         MAJORITY: majority.get(slot(t), False)}
            predicted[MAJORITY_BY_ARGS] = by_args.get(step_slot(t), predicted[MAJORITY])
            for label, predictor in (accepts or {}).items():
                predicted[label] = predictor(t)
            for label, other in others.items():
                predicted[label] = bool(other.predict(t))
            predictions.append(Prediction(t.action.action.lower(), where, t.success,
                                          t.code in ALREADY_HOLDS_CODES, predicted))
            if not t.success:
                continue
            guesses = {LEARNER: result.changes(t) or (frozenset(), frozenset()),
                       NOTHING_CHANGES: (frozenset(), frozenset())}
            for label, guess in (changes or {}).items():
                guesses[label] = guess(t)
            hidden = t.unknown
            next_states.append(NextState(
                t.action.action.lower(), where, (t.added, t.deleted - hidden),
                {label: (added - hidden, deleted - hidden)
                 for label, (added, deleted) in guesses.items()}))
    return Heldout(tuple(predictions), tuple(next_states))


@dataclass(frozen=True)
class Summary:
    """A predictor's held-out figures (see the module docstring)."""

    transitions: int
    accuracy: float
    balanced_accuracy: float
    failure_precision: float
    failure_recall: float
    cell_mean: float
    """The paper's protocol: unweighted mean of the accuracy of each (action, group) cell."""
    cells: int

    def to_json(self) -> dict:
        return {k: round(v, 4) if isinstance(v, float) else v
                for k, v in dataclasses.asdict(self).items()}


def summarise(predictions: Iterable[Prediction], predictor: str,
              without_already_holds: bool = False) -> Summary:
    """`predictor`'s figures over `predictions` (optionally leaving out already-holds steps)."""
    rows = [p for p in predictions if not (without_already_holds and p.already_holds)]
    hits = [p.predicted[predictor] == p.success for p in rows]
    successes = [h for p, h in zip(rows, hits) if p.success]
    failures = [h for p, h in zip(rows, hits) if not p.success]
    flagged = [not p.predicted[predictor] for p in rows]
    true_fail = sum(f and not p.success for p, f in zip(rows, flagged))
    cells: dict[tuple[str, str], list[bool]] = defaultdict(list)
    for p, h in zip(rows, hits):
        cells[(p.action, p.group)].append(h)

    def rate(values: Sequence[bool]) -> float:
        return sum(values) / len(values) if values else 1.0

    recalls = [rate(v) for v in (successes, failures) if v]
    return Summary(
        transitions=len(rows), accuracy=rate(hits),
        balanced_accuracy=sum(recalls) / len(recalls) if recalls else 1.0,
        failure_precision=true_fail / sum(flagged) if any(flagged) else 1.0,
        failure_recall=true_fail / len(failures) if failures else 1.0,
        cell_mean=(sum(rate(v) for v in cells.values()) / len(cells)) if cells else 1.0,
        cells=len(cells))


def summary_table(predictions: Sequence[Prediction]) -> dict[str, dict[str, dict]]:
    """Every predictor's `Summary`, with and without already-holds steps, as JSON."""
    names = list(predictions[0].predicted) if predictions else []
    return {name: {"all": summarise(predictions, name).to_json(),
                   "without_already_holds": summarise(predictions, name, True).to_json()}
            for name in names}


class DomainPredictor:
    """A written domain as a predictor of logged transitions, for comparison with a learned
    one: its gate on the problem of each transition's task (`problem_of(task reference)`),
    from the logged pre-state. `accepts` says whether the gate accepts the step there (a step
    it cannot read is refused); `changes` applies the step's effects there, whether or not its
    precondition holds (nothing changes for a step it cannot read)."""

    def __init__(self, domain: Domain, problem_of: Callable[[str], Problem]):
        self.domain, self._problem_of = domain, problem_of
        self._gates: dict[str, PlanChecker] = {}  # task -> its gate: one per task of the logs

    def _gate(self, task: str) -> PlanChecker:
        gate = self._gates.get(task)
        if gate is None:
            gate = self._gates[task] = compile_gate(self.domain, self._problem_of(task))
        return gate

    @staticmethod
    def _step(t: Transition) -> PlanStep:
        return PlanStep(t.action.action, t.action.args, 0, t.action.text)

    def accepts(self, t: Transition) -> bool:
        try:
            return self._gate(t.task).check([self._step(t)], state=t.pre).valid
        except SageError:
            return False

    def changes(self, t: Transition) -> Changes:
        try:
            gate = self._gate(t.task)
            after = gate.apply(t.pre, gate.ground(self._step(t), state=t.pre))
        except SageError:
            return frozenset(), frozenset()
        return frozenset(after - t.pre), frozenset(t.pre - after)


@dataclass(frozen=True)
class EffectSummary:
    """A predictor's next-state figures over held-out successes: the share whose next state
    it predicts exactly, and the precision and recall of the facts it predicts added and
    deleted (pooled over the steps); `exact_by_action` is per action."""

    successes: int
    exact: float
    added_precision: float
    added_recall: float
    deleted_precision: float
    deleted_recall: float
    exact_by_action: Mapping[str, float] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"successes": self.successes, "exact": round(self.exact, 4),
                "added_precision": round(self.added_precision, 4),
                "added_recall": round(self.added_recall, 4),
                "deleted_precision": round(self.deleted_precision, 4),
                "deleted_recall": round(self.deleted_recall, 4),
                "exact_by_action": {a: round(v, 4) for a, v in self.exact_by_action.items()}}


def summarise_effects(next_states: Sequence[NextState], predictor: str) -> EffectSummary:
    """`predictor`'s next-state figures (see `EffectSummary`). A precision with nothing
    predicted, or a recall with nothing to find, is 1."""
    exact: dict[str, list[bool]] = defaultdict(list)
    counts = [0] * 6  # added: hit, predicted, actual; deleted: hit, predicted, actual
    for row in next_states:
        guess = row.predicted[predictor]
        exact[row.action].append(guess == row.actual)
        for side in (0, 1):
            counts[3 * side] += len(guess[side] & row.actual[side])
            counts[3 * side + 1] += len(guess[side])
            counts[3 * side + 2] += len(row.actual[side])

    def ratio(hit: int, total: int) -> float:
        return hit / total if total else 1.0

    every = [v for values in exact.values() for v in values]
    return EffectSummary(len(every), ratio(sum(every), len(every)),
                         ratio(counts[0], counts[1]), ratio(counts[0], counts[2]),
                         ratio(counts[3], counts[4]), ratio(counts[3], counts[5]),
                         {a: ratio(sum(v), len(v)) for a, v in sorted(exact.items())})


def effect_table(next_states: Sequence[NextState]) -> dict[str, dict]:
    """Every predictor's `EffectSummary`, as JSON."""
    names = list(next_states[0].predicted) if next_states else []
    return {name: summarise_effects(next_states, name).to_json() for name in names}


__all__ = ["ALREADY_HOLDS_CODES", "ALWAYS_FAIL", "LEARNER", "MAJORITY", "MAJORITY_BY_ARGS",
           "GateAgreement",
           "NOTHING_CHANGES", "DomainPredictor", "EffectSummary", "Heldout", "NextState", "Prediction",
           "PreconditionMatch", "Score", "Summary", "action_majority", "compare_preconditions",
           "effect_table", "gate_agreement", "heldout", "holdout_by",
           "is_evidence", "positional_text", "precondition_alternatives",
           "precondition_literals", "score", "summarise", "summarise_effects",
           "summary_table"]
