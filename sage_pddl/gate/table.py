"""The precondition table: a domain and problem compiled for checking plans, and its grounding.

The table holds three parts, each in a module of its own: the objects, their types and how they
are written (`objects.ProblemObjects`, `table.objects`), the goal (`goal.ProblemGoal`,
`table.goal`), and, here, the initial state and the grounding of actions and conditions.

Semantics
---------
* **Objects and types.** See `objects.py`.
* **Initial state and goal.** `Not` facts in `:init` are documentation of absence and ignored;
  numeric initial values are ignored. The goal is ground once, like a precondition
  (`goal.py`).
* **Grounding.** An action and a tuple of object names become a `GroundAction` on first use and
  are cached: nothing is ground that no plan step names (as VAL does). Grounding substitutes
  the objects into the action's template, lifted once per domain (`lifted.py`). Quantifiers
  range over the objects of their types and are expanded when the action is grounded
  (`forall` becomes a conjunction, `exists` a disjunction); equality is decided at grounding
  time.
* **Scope and costs.** A construct outside the gate's scope makes compiling a table raise
  `UnsupportedConstruct` (`scope.py`); a cost fluent's `increase`/`decrease` is ignored.
* **Caches.** Everything that depends on the domain alone (the vocabulary, names, types, scope
  hazards, canonical texts, the actions' templates) is compiled once per `Domain` object
  (`schema.domain_schema`). A
  table keeps the ground actions plans have named (`ground`, at most `GROUND_ACTIONS_KEPT`,
  the oldest forgotten first). Threads may share a table: what it keeps is filled under its
  `lock` on a miss only (grounding also counts its budget under it), and read without it.

Annotations (`; @sage alias|step|reason`, docs/annotations.md) come from the domain's
`Vocabulary`: action names, the JSON-field map of each action's parameters, and the friendly
code and message of a precondition literal.
"""
from __future__ import annotations

import itertools
import threading
from collections.abc import Iterable, Iterator
from functools import cached_property
from itertools import repeat
from operator import call  # an atom template applied to the values, in C (`lifted.py`)

from ..pddl import limits
from ..pddl.built_once import keep_bounded
from ..pddl.errors import GroundingTooLarge
from ..pddl.model import (
    Action,
    Atom,
    Domain,
    Not,
    Problem,
    Unsupported,
    literal_goal,
)
from ..pddl.vocabulary import Reason
from .goal import ProblemGoal
from .ground import (
    TRUE,
    AnyOf,
    Cond,
    ConditionalEffect,
    GroundAction,
    GroundAtom,
    GroundLiteral,
    Implies,
    State,
    conjoin,
    ground_literals,
)
from .lifted import (
    AnyOfTemplate,
    AtomTemplate,
    ConditionTemplate,
    EffectLiteral,
    EffectTemplate,
    ForallTemplate,
    ImpliesTemplate,
    LiteralTemplate,
    Quantified,
    Values,
    WhenTemplate,
    lift_condition,
    unsupported,
)
from .objects import ProblemObjects
from .schema import domain_schema
from .scope import check_formula, check_sections, cost_fluents

GROUND_ACTIONS_KEPT = 4096
"""Ground actions (and ground preconditions) one table keeps, at most: far more than the
distinct steps of the plans checked against one problem."""


class PreconditionTable:
    """A domain and problem compiled for checking plans: its objects (`objects`), its goal
    (`goal`), the initial state, and the ground actions, made and kept here.

    Everything that depends on the domain alone comes from its cached `DomainSchema`. Of the
    problem, compiling reads only what every check needs (the scope check, the objects'
    declared types, the initial state, a goal of ground literals as two sets, all in the key
    form the problem comes with); the other object tables, the ground goal with its sources
    and the static facts are built when first read."""

    def __init__(self, domain: Domain, problem: Problem, prune_static: bool = True):
        self.domain = domain
        self.problem = problem
        self.lock = threading.RLock()
        """Held while the table (and its gate, `Gate`) fills what it keeps."""
        self.schema = schema = domain_schema(domain)
        self.vocabulary = vocab = schema.vocabulary
        if not prune_static:
            self.prune_static = False
        if schema.hazards or domain.unsupported or problem.unsupported:
            check_sections(domain, problem, schema.hazards)
        self.objects = ProblemObjects(schema, domain, problem)
        """The objects, their types and spellings (`objects.py`)."""
        self.initial_state: State = self._initial_state()  # raises on an unsupported fact
        """The initial state (`Problem.facts`)."""
        self.goal = ProblemGoal(problem, self.ground_condition, self.lock)
        """The goal (`goal.py`)."""
        self._ground_actions: dict[tuple[str, tuple[str, ...]], GroundAction] = {}
        """(action name, object keys) -> its ground action (`ground`, `GROUND_ACTIONS_KEPT`)."""
        if self.goal.is_complex:
            check_formula(problem.goal, f"in the goal of {problem.name}", cost_fluents(problem))
        if vocab.error is not None:
            raise vocab.error
        if self.goal.is_complex:
            # ground now: a free variable or an oversized quantifier is a compile error
            _ = self.goal.ground

    # -- scope ----------------------------------------------------------------------------

    prune_static = True
    """With `prune_static`, grounding drops a conditional effect whose static condition is
    false in the initial state (a MoveTo reaches only what stands `near` its target); a gate
    asked to start from a state with other static facts uses an unpruned table instead
    (`Gate.for_state`). See `dynamic`."""

    @cached_property
    def _ground_budget(self) -> int:
        # read on first use, not at import: a worker sets its own limit (`--max-atoms`)
        return limits.MAX_GROUND

    # -- annotations ----------------------------------------------------------------------

    def canonical(self, node: object, positive: bool = True) -> str:
        """Canonical text of a node: a node of the goal's from the goal (so they die with the
        problem), any other (the domain's actions) from the domain's vocabulary."""
        text = self.goal.text_of(node, positive)
        return self.vocabulary.canonical(node, positive) if text is None else text

    def reason(self, action: Action, literal_or_anchor: Iterable[str]) -> Reason | None:
        return self.vocabulary.reason(action.name, literal_or_anchor)

    # -- state ----------------------------------------------------------------------------

    def _initial_state(self) -> State:
        """The `Atom` facts of `:init` (`Problem.facts`); `Not` facts document absence and
        numeric values are ignored, an unsupported fact raises."""
        problem = self.problem
        if len(problem.facts) < len(problem.init):  # not only atoms: any unsupported?
            for fact in problem.init:
                if isinstance(fact, Unsupported):
                    raise unsupported(fact.construct, fact.loc,
                                            f"in the :init of {problem.name}")
        return problem.facts

    def ground_condition(self, formula: object, env: dict[str, str],
                         anchor: str | None) -> Cond:
        """A whole condition (the goal, one of its conjuncts) with its variables bound by `env`
        (variable key -> object key), ground under a grounding budget of its own, read now (a
        worker sets its own limit, `--max-atoms`, after import). `anchor` is that of every
        literal, and the literals name no schema (`""`: no `@sage reason` can name a literal
        outside the domain's actions); None: a precondition, whose top-level conjuncts are the
        anchors and whose literals name their canonical texts. A ground literal (a goal's
        usual conjunct) needs no lifting: its atom is its key (`model.literal_goal`)."""
        if anchor is not None:
            if isinstance(formula, (Atom, Not)) and (sets := literal_goal(formula)) is not None:
                pos, neg = sets
                (atom,) = pos or neg
                return Cond(pos, neg, (GroundLiteral(atom, bool(pos), "", anchor),))
            words, template = lift_condition(formula, env, _no_text, anchor)
        else:
            words, template = lift_condition(formula, env, self.canonical, anchor)
        with self.lock:
            self._ground_budget = limits.MAX_GROUND
            return self._condition(template, words + tuple(env.values()))

    @cached_property
    def dynamic(self) -> frozenset[str]:
        """Predicates some action changes; the others are static: they hold in every state
        reached from the initial one exactly as there (see `prune_static`)."""
        return self.vocabulary.effect_predicates

    @cached_property
    def static_state(self) -> State:
        """The initial state's static facts."""
        dynamic = self.dynamic
        return frozenset(a for a in self.initial_state if a[0] not in dynamic)

    def agrees_on_static(self, state: State) -> bool:
        """Whether `state` has exactly the problem's static facts: only then may effects
        dropped by them (`prune_static`) be left out."""
        dynamic = self.dynamic
        return frozenset(a for a in state if a[0] not in dynamic) == self.static_state

    # -- grounding ------------------------------------------------------------------------

    def precondition(self, action: Action, args: tuple[str, ...]) -> Cond:
        """The ground precondition of `action` with object keys `args` (already checked), kept.

        Grounds the precondition only, once per `(action, args)`: a caller that asks whether
        every candidate step applies (SayCan, through `Gate.precondition_holds`) pays nothing
        for effects it never applies, which in the household domains (a MoveTo reaches what is
        in, on and near its target) cost far more than the precondition."""
        cache_key = (action.name, args)
        found = self._preconditions.get(cache_key)
        if found is None:
            with self.lock:
                found = self._ground_precondition(action.name, args)
                keep_bounded(self._preconditions, GROUND_ACTIONS_KEPT, cache_key, found)
        return found

    @cached_property
    def _preconditions(self) -> dict[tuple[str, tuple[str, ...]], Cond]:
        """(action name, object keys) -> its ground precondition (`precondition`,
        `GROUND_ACTIONS_KEPT`); made on first use (most tables never ask)."""
        return {}

    def ground(self, action: Action, args: tuple[str, ...]) -> GroundAction:
        """The ground action of `action` with object keys `args` (already checked), kept."""
        cache_key = (action.name, args)
        found = self._ground_actions.get(cache_key)
        if found is None:
            with self.lock:
                found = self._ground_actions.get(cache_key) or self._ground(action.name, args)
                keep_bounded(self._ground_actions, GROUND_ACTIONS_KEPT, cache_key, found)
        return found

    @property
    def grounded_count(self) -> int:
        """Ground actions kept."""
        return len(self._ground_actions)

    def _ground_precondition(self, name: str, args: tuple[str, ...]) -> Cond:
        template = self.schema.template(name)
        self._ground_budget = limits.MAX_GROUND
        return self._condition(template.precondition, template.words + args)

    def _ground(self, name: str, args: tuple[str, ...]) -> GroundAction:
        """The action `name` with its parameters bound to `args`: its template (lifted once
        per domain, `schema.template`) with the objects substituted, under one grounding
        budget for its precondition and its effect."""
        template = self.schema.template(name)
        values = template.words + args
        self._ground_budget = limits.MAX_GROUND
        precondition = self._condition(template.precondition, values)
        add = frozenset(map(call, template.add, repeat(values)))
        delete = frozenset(map(call, template.delete, repeat(values)))
        conditional: tuple[ConditionalEffect, ...] = ()
        if template.conditional:
            more_add: list[GroundAtom] = []
            more_delete: list[GroundAtom] = []
            effects: list[ConditionalEffect] = []
            self._effects(template.conditional, values, TRUE, more_add, more_delete, effects)
            add, delete = add.union(more_add), delete.union(more_delete)
            conditional = tuple(effects)
        return GroundAction(template.action, args, precondition, add, delete, conditional,
                            tuple(map(self.objects.object_names.get, args, args)))

    def _instances(self, quantified: Quantified, values: Values,
                   checks: tuple[tuple[AtomTemplate, ...], ...] = ()) -> Iterator[Values]:
        """`values` extended by every binding of the `quantified` variables over the
        problem's objects, counted against the grounding budget first: a formula that would
        enumerate more than `limits.MAX_GROUND` instances in all is refused before any is
        built. `checks` (of a conditional effect, `ForallEffectTemplate`) prune bindings by
        the static facts."""
        domains = [self.objects.objects_of(types) for types in quantified.types]
        count = 1
        for objects in domains:
            count *= len(objects)
        self._ground_budget -= count
        if self._ground_budget < 0:
            sizes = " x ".join(str(len(objects)) for objects in domains)
            raise GroundingTooLarge(
                f"grounding needs more than {limits.MAX_GROUND:,} quantifier instances "
                f"(this quantifier alone ranges over {sizes} = {count:,} bindings)",
                quantified.loc)
        if checks and self.prune_static:
            yield from self._pruned_instances(domains, checks, 0, values)
        else:
            for objects in itertools.product(*domains):
                yield values + objects

    def _pruned_instances(self, domains: list[tuple[str, ...]],
                          checks: tuple[tuple[AtomTemplate, ...], ...], depth: int,
                          values: Values) -> Iterator[Values]:
        """The bindings of `_instances`, skipping those below a value that makes a static
        atom of `checks` false (`(forall (?b ?o) (when (and (controls ?x ?b) ...)))`
        visits only the burners ?x controls)."""
        initial, last = self.initial_state, depth + 1 == len(domains)
        for value in domains[depth]:
            inner = (*values, value)
            if any(atom(inner) not in initial for atom in checks[depth]):
                continue
            if last:
                yield inner
            else:
                yield from self._pruned_instances(domains, checks, depth + 1, inner)

    def _condition(self, template: ConditionTemplate, values: Values) -> Cond:
        """The ground conjunction of `template` with `values`."""
        columns = template.literals
        if columns is not None:  # literals of atoms only: `_conjoin`'s result, at once
            if not columns.atoms:
                return TRUE
            atoms = list(map(call, columns.atoms, repeat(values)))
            literals = ground_literals(atoms, columns.positive, columns.schemas,
                                       columns.anchors)
            if columns.negative is None:
                return Cond(frozenset(atoms), frozenset(), literals)
            return Cond(frozenset(itertools.compress(atoms, columns.positive)),
                        frozenset(itertools.compress(atoms, columns.negative)), literals)
        conjunction = _Conjunction()
        self._conjoin(template, values, conjunction)
        return conjunction.cond()

    def _conjoin(self, template: ConditionTemplate, values: Values,
                 into: _Conjunction) -> None:
        """Add the ground items of `template` to `into`: literals (an equality decided now:
        a false one makes the conjunction false), quantifiers expanded, disjunctions and
        implications simplified."""
        for item in template.items:
            if isinstance(item, LiteralTemplate):
                atom = item.atom(values)
                positive = item.positive
                if not item.equality:
                    (into.pos if positive else into.neg).append(atom)
                elif (atom[1] == atom[2]) == positive:
                    continue
                literal = GroundLiteral(atom, positive, item.schema,
                                        item.anchor)
                into.literals.append(literal)
                if item.equality:
                    into.unsat.append(literal)
            elif isinstance(item, ForallTemplate):
                for inner in self._instances(item.quantified, values):
                    self._conjoin(item.body, inner, into)
            elif isinstance(item, ImpliesTemplate):
                condition = self._condition(item.condition, values)
                if condition.is_false:
                    continue
                then = self._condition(item.then, values)
                if condition.is_true or then.is_true:
                    into.add(then)
                else:
                    into.subs.append(Implies(condition, then))
            else:
                self._any_of(item, values, into)

    def _any_of(self, item: AnyOfTemplate, values: Values, into: _Conjunction) -> None:
        """Add a ground disjunction to `into`: nothing when an alternative holds in every
        state, the one alternative that is not false in every state, or an `AnyOf`."""
        if item.quantified is None:
            parts = (self._condition(part, values) for part in item.parts)
        else:
            body = item.parts[0]
            parts = (self._condition(body, inner)
                     for inner in self._instances(item.quantified, values))
        kept = []
        for part in parts:
            if part.is_true:
                return
            if not part.is_false:
                kept.append(part)
        if len(kept) == 1:
            into.add(kept[0])
            return
        bindings = tuple((name, values[slot]) for name, slot in item.scope)
        into.subs.append(AnyOf.of(tuple(kept), item.source, bindings, item.positive,
                                  item.schema, item.anchor))

    def _effects(self, template: EffectTemplate, values: Values, condition: Cond,
                 add: list[GroundAtom], delete: list[GroundAtom],
                 conditional: list[ConditionalEffect]) -> None:
        """Ground the effect items of `template` under `condition` into `add` and `delete`
        (the atoms it adds and deletes when `condition` holds) and, for each `when` inside,
        `conditional`: one `ConditionalEffect` per ground condition, with all it adds and
        deletes."""
        for item in template:
            if isinstance(item, EffectLiteral):
                (add if item.positive else delete).append(item.atom(values))
            elif isinstance(item, WhenTemplate):
                when = self._when(item, values)
                if when is None:  # false in every state: a static literal that does not hold
                    continue
                if when.is_true:
                    self._effects(item.effects, values, condition, add, delete, conditional)
                    continue
                inner = when if condition.is_true else conjoin([condition, when])
                if inner.is_false:
                    continue
                inner_add: list[GroundAtom] = []
                inner_delete: list[GroundAtom] = []
                self._effects(item.effects, values, inner, inner_add, inner_delete, conditional)
                if inner_add or inner_delete:
                    conditional.append(ConditionalEffect(inner, frozenset(inner_add),
                                                         frozenset(inner_delete)))
            else:
                for inner_values in self._instances(item.quantified, values,
                                                    item.checks):
                    self._effects(item.effects, inner_values, condition,
                                  add, delete, conditional)

    def _when(self, item: WhenTemplate, values: Values) -> Cond | None:
        """The ground condition of a `when`, simplified by the static facts: a static literal
        that holds is dropped, one that does not makes the condition false (None). A condition
        is never reported, so a conjunction of literals becomes two sets without the sources
        a `GroundLiteral` records for explanations; any other condition is ground whole."""
        pos: list[GroundAtom] = []
        neg: list[GroundAtom] = []
        prune, initial = self.prune_static, self.initial_state
        for atom_of, positive, static in item.literals:
            atom = atom_of(values)
            if prune and static:
                if (atom in initial) != positive:
                    return None
                continue
            (pos if positive else neg).append(atom)
        if item.general is not None:
            cond = self._condition(item.general, values)
            return None if cond.is_false else cond
        return Cond(frozenset(pos), frozenset(neg)) if pos or neg else TRUE


def _no_text(node: object, positive: bool) -> str:
    """The schema text of a literal outside the domain's actions: none (`ground_condition`)."""
    return ""


class _Conjunction:
    """A ground conjunction being built: the parts of a `Cond`, in source order."""

    __slots__ = ("pos", "neg", "literals", "subs", "unsat")

    def __init__(self) -> None:
        self.pos: list[GroundAtom] = []
        self.neg: list[GroundAtom] = []
        self.literals: list[GroundLiteral] = []
        self.subs: list[AnyOf | Implies] = []
        self.unsat: list[GroundLiteral] = []

    def add(self, cond: Cond) -> None:
        self.pos += cond.pos
        self.neg += cond.neg
        self.literals += cond.literals
        self.subs += cond.subs
        self.unsat += cond.unsat

    def cond(self) -> Cond:
        if not (self.pos or self.neg or self.literals or self.subs or self.unsat):
            return TRUE
        return Cond(frozenset(self.pos), frozenset(self.neg), tuple(self.literals),
                    tuple(self.subs), tuple(self.unsat))
