"""The precondition table: a domain and problem compiled for checking plans.

Semantics
---------
* **Objects and types.** The objects of a task are the domain constants followed by the problem
  objects (a name declared in both is one object whose types are merged; constants that the
  domain's actions use without declaring them, as ALFWorld does, are simply problem objects). An
  object belongs to its declared types, their ancestors (a type with several parents, an
  `either` parent, belongs to all of them) and `object`. An `(either a b)` parameter or
  quantified variable accepts an object of any of the listed types; an untyped one accepts any.
* **Initial state and goal.** `Not` facts in `:init` are documentation of absence and ignored;
  numeric initial values are ignored. The goal is ground once, like a precondition.
* **Grounding.** An action and a tuple of object names become a `GroundAction` on first use and
  are cached: nothing is ground that no plan step names (as VAL does). Quantifiers range over
  the objects of their types and are expanded when the action is grounded (`forall` becomes a
  conjunction, `exists` a disjunction); equality is decided at grounding time.
* **Costs.** `increase`/`decrease` of a 0-ary cost fluent (the one the problem's metric names,
  or `total-cost`/`totalCost`) is ignored: costs never change whether a plan is valid.
* **Scope.** Numeric comparisons, other numeric effects, durative actions, derived predicates,
  preferences, `oneof` and any other `Unsupported` node make `compile_table` raise
  `UnsupportedConstruct` naming the construct and its line:column.
* **Speed.** Everything that depends on the domain alone (the vocabulary, names, types, scope
  hazards, canonical texts, one template and step function per action) is compiled once per
  `Domain` object (`schema.domain_schema`). A problem comes with its objects' declared types,
  its initial state and a goal of ground literals in key form (`Problem.declared`, `facts`,
  `goal_literals`, made as it is read, and its objects' spellings); a table takes them and
  checks the scope, and builds the objects' types with their ancestors, the ground goal with
  its sources, the static facts and the bit sets when first read (`lazy`). Grounding
  substitutes the step's objects into the action's template (one generated function goes
  straight from the objects to the bit masks of all literal atoms; the atom sets are built only
  when read) and walks only quantifiers, disjunctions, implications and conditional effects; a
  gate's first check grounds nothing but a rejected step whose precondition is not a
  conjunction of literals (see `Gate.check`). The bit-set form of a ground action (`fast_form`)
  decides what the static facts decide (an implication with a static condition, a disjunction
  with a static alternative), so most steps of the household domains take the loop's plain
  path; it is exact in every state a pruned table checks from (see `prune_static`).

Annotations (`; @sage alias|step|reason`, docs/annotations.md) come from the domain's
`Vocabulary`: action names, the JSON-field map of each action's parameters, and the friendly
code and message of a precondition literal.
"""
from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Generic, TypeVar, overload

from ..pddl import limits
from ..pddl.errors import GroundingTooLarge, PDDLSemanticError, UnsupportedConstruct
from ..pddl.model import (
    Action,
    And,
    Atom,
    Comparison,
    Domain,
    Equals,
    Exists,
    Forall,
    ForallEffect,
    FunctionTerm,
    Imply,
    Location,
    Not,
    NumericEffect,
    ObjectKeys,
    Or,
    Problem,
    Term,
    Typed,
    Unsupported,
    Variable,
    When,
    key,
    object_keys,
    walk,
    walk_numeric,
)
from ..pddl.vocabulary import Reason, canonical_sexpr
from ..pddl.writer import write_formula
from .bits import BitSets, Successors, successor_masks
from .ground import (
    _EMPTY,
    EQUALS,
    TRUE,
    AnyOf,
    Cond,
    ConditionalEffect,
    ConditionalEffects,
    GroundAction,
    GroundAtom,
    GroundLiteral,
    Implies,
    State,
    conjoin,
    spelled,
)
from .schema import domain_schema

_StaticChecks = tuple[tuple[tuple[str, tuple[Term, ...]], ...], ...]
"""Per quantified variable, the static literals (predicate, terms) bound once it is."""

T = TypeVar("T")


class lazy(Generic[T]):
    """An attribute computed on first read and then stored on the instance (where later reads
    find it as a plain attribute). `functools.cached_property` does the same, behind a lock
    that costs more than building most of these attributes."""

    def __init__(self, build: Callable[[Any], T]) -> None:
        self.build = build
        self.name = build.__name__
        self.__doc__ = build.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, instance: None, owner: type | None = None) -> lazy[T]: ...
    @overload
    def __get__(self, instance: object, owner: type | None = None) -> T: ...

    def __get__(self, instance: object, owner: type | None = None) -> T | lazy[T]:
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.build(instance)
        return value


class PreconditionTable:
    """A domain and problem compiled for checking plans: objects, types, actions, annotations,
    the initial state, the goal, and a cache of ground actions. Build it with `compile_table`.

    Everything that depends on the domain alone comes from its cached `DomainSchema`. Of the
    problem, compiling reads only what every check needs (the scope check, the objects'
    declared types, the initial state, a goal of ground literals as two sets, all in the key
    form the problem comes with); the other object tables, the ground goal with its sources,
    the static facts and the bit sets are built when first read."""

    # what a table starts without (class defaults and `lazy` attributes: a compile sets only
    # what every check needs, see `Gate`)
    _initial_mask: int | None = None
    _goal_test: Callable[[int], bool] | None = None

    def __init__(self, domain: Domain, problem: Problem, prune_static: bool = True):
        self.domain = domain
        self.problem = problem
        self.schema = schema = domain_schema(domain)
        self.vocabulary = vocab = schema.vocabulary
        if not prune_static:
            self.prune_static = False
        if schema.hazards or domain.unsupported or problem.unsupported:
            self._check_domain_scope()
        self.declared, self.object_names = self._object_keys()
        """`declared`: object key -> its declared type key, or keys (`model.object_keys`): the
        domain constants and the problem objects, what a first check binds every step's words
        with (`object_types` has their ancestors). `object_names`: object key -> original
        spelling, in declaration order (a name declared twice: its first spelling)."""
        self.initial_state: State = self._initial_state()  # raises on an unsupported fact
        """The initial state (`Problem.facts`)."""
        goal = problem.goal
        self.has_goal = not (type(goal) is And and not goal.parts)
        self.goal_sets = problem.goal_literals if self.has_goal else None
        """The goal as `(pos, neg)` atom sets when it is a conjunction of ground literals
        (`Problem.goal_literals`: it holds when `pos <= state` and `state.isdisjoint(neg)`),
        else None."""
        complex_goal = self.has_goal and self.goal_sets is None
        if complex_goal:
            self._check_formula_scope(goal, f"in the goal of {problem.name}")
        if vocab.error is not None:
            raise vocab.error
        if complex_goal:
            # ground now: a free variable or an oversized quantifier is a compile error
            self.goal = self._ground_goal()

    # -- scope ----------------------------------------------------------------------------

    prune_static = True
    """With `prune_static`, grounding drops a conditional effect whose static condition is
    false in the initial state (a MoveTo reaches only what stands `near` its target); a gate
    asked to start from a state with other static facts uses an unpruned table instead
    (`Gate.for_state`). See `dynamic`."""

    @lazy
    def _ground_budget(self) -> int:
        # read on first use, not at import: a worker sets its own limit (`--max-atoms`)
        return limits.MAX_GROUND

    @lazy
    def _interned(self) -> dict[GroundAtom, GroundAtom]:
        """Ground atoms of ground actions and bit sets, one object per value."""
        return {}

    @lazy
    def _canon(self) -> dict[int, tuple[object, str]]:
        return {}

    @lazy
    def _ground_cache(self) -> dict[tuple[str, tuple[str, ...]], GroundAction]:
        return {}

    @lazy
    def _cost_fluents(self) -> frozenset[str]:
        names = {"total-cost", "totalcost"}
        metric = self.problem.metric
        if metric is not None:
            for node in walk_numeric(metric.expression):
                if isinstance(node, FunctionTerm) and not node.args:
                    names.add(key(node.name))
        return frozenset(names)

    def _unsupported(self, construct: str, loc: Location | None, context: str) -> UnsupportedConstruct:
        return UnsupportedConstruct(
            f"{construct} {context} is outside the gate's scope "
            "(it evaluates STRIPS/ADL with typing, equality, quantifiers, conditional effects "
            "and action costs)", loc)

    def _check_node_scope(self, node: object, context: str) -> None:
        if isinstance(node, Comparison):
            raise self._unsupported(f"numeric comparison `{node.op}`", node.loc, context)
        if isinstance(node, Unsupported):
            raise self._unsupported(node.construct, node.loc, context)
        if isinstance(node, NumericEffect):
            cost = (node.op in ("increase", "decrease") and not node.fluent.args
                    and key(node.fluent.name) in self._cost_fluents)
            if not cost:
                raise self._unsupported(
                    f"numeric effect `({node.op} ({node.fluent.name}) ...)`", node.loc, context)

    def _check_formula_scope(self, formula: object, context: str) -> None:
        for node in walk(formula):
            self._check_node_scope(node, context)

    def _check_domain_scope(self) -> None:
        """The domain's sections and actions, and the problem's sections (its facts are
        checked as the initial state is read, then its goal)."""
        domain, problem = self.domain, self.problem
        if domain.unsupported:
            first = domain.unsupported[0]
            raise self._unsupported(first.construct, first.loc, f"in domain {domain.name}")
        for node, context in self.schema.hazards:  # the domain's actions, walked once per domain
            self._check_node_scope(node, context)
        if problem.unsupported:
            first = problem.unsupported[0]
            raise self._unsupported(first.construct, first.loc, f"in problem {problem.name}")

    # -- types and objects ----------------------------------------------------------------

    def ancestors(self, type_name: str) -> frozenset[str]:
        """The type, its ancestors and `object`."""
        return self.schema.ancestors(type_name)

    def _object_keys(self) -> ObjectKeys:
        """`model.object_keys` of the domain's constants and then the problem's objects: the
        tables each holds put together (a name declared in both: made again of all)."""
        schema, problem = self.schema, self.problem
        if not schema.declared:
            return problem.declared, problem.spelling
        declared = {**schema.declared, **problem.declared}
        if len(declared) < len(schema.declared) + len(problem.declared):
            return object_keys([*self.domain.constants, *problem.objects])
        return declared, {**schema.spelling, **problem.spelling}

    @lazy
    def object_types(self) -> dict[str, frozenset[str]]:
        """Object key -> the type keys it belongs to (declared types, their ancestors and
        `object`; a name declared twice, as a constant and an object, belongs to both)."""
        type_set = self.schema.type_set
        return {name: type_set(types) for name, types in self.declared.items()}

    @lazy
    def declared_types(self) -> dict[str, tuple[str, ...]]:
        """Object key -> its declared type names (`object` when untyped), for messages."""
        declared: dict[str, list[str]] = {}
        for typed in itertools.chain(self.domain.constants, self.problem.objects):
            names = declared.setdefault(typed.name.lower(), [])
            for type_name in typed.types or ("object",):
                if type_name not in names:
                    names.append(type_name)
        return {n: tuple(t) for n, t in declared.items()}

    @lazy
    def _objects_of(self) -> dict[tuple[str, ...], tuple[str, ...]]:
        return {}

    def objects_of(self, types: tuple[str, ...]) -> tuple[str, ...]:
        """Object keys that fit a parameter typed `types` (() = any), in declaration order."""
        return self.objects_of_keys(tuple(key(t) for t in types))

    def objects_of_keys(self, wanted: tuple[str, ...]) -> tuple[str, ...]:
        """`objects_of` for type keys (what generated step functions call)."""
        found = self._objects_of.get(wanted)
        if found is None:
            if not wanted or "object" in wanted:
                found = tuple(self.object_names)
            else:
                want = set(wanted)
                object_types = self.object_types
                found = tuple(o for o in self.object_names if object_types[o] & want)
            self._objects_of[wanted] = found
        return found

    def fits(self, obj: str, types: tuple[str, ...]) -> bool:
        if not types:
            return True
        have = self.object_types.get(obj, frozenset({"object"}))
        return any(key(t) in have for t in types)

    @property
    def predicate_names(self) -> dict[str, str]:
        """Predicate key -> its spelling in the domain."""
        return self.schema.predicate_names

    # -- names ----------------------------------------------------------------------------

    def resolve_action(self, name: str) -> Action | None:
        """The action a step names: exact (case-insensitive), then alias/loose match."""
        return self.vocabulary.action(name)

    def atom(self, parts: tuple[str, ...]) -> GroundAtom:
        return self._interned.setdefault(parts, parts)

    def format_atom(self, atom: GroundAtom) -> str:
        """`("found", "apple")` -> `(found Apple)` in the domain's and problem's spelling."""
        return spelled(self.schema.predicate_names.get(atom[0], atom[0]), atom[1:],
                       self.object_names)

    def format_literal(self, literal: GroundLiteral) -> str:
        text = self.format_atom(literal.atom)
        return text if literal.positive else f"(not {text})"

    # -- annotations ----------------------------------------------------------------------

    def canonical(self, node: object, positive: bool = True) -> str:
        """Canonical text of a node: the domain's from its vocabulary (computed once per
        domain), the problem's (its goal) cached here, so they die with the table."""
        vocab = self.vocabulary
        entry = vocab._canon.get(id(node))
        if entry is None or entry[0] is not node:
            entry = self._canon.get(id(node))
            if entry is None or entry[0] is not node:
                entry = self._canon[id(node)] = (node, canonical_sexpr(write_formula(node)))
        return entry[1] if positive else f"(not {entry[1]})"

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
                    raise self._unsupported(fact.construct, fact.loc,
                                            f"in the :init of {problem.name}")
        return problem.facts

    @lazy
    def goal(self) -> Cond | None:
        """The ground goal with every literal's source (what `goal_unmet` reports); None when
        the problem has no goal."""
        if not self.has_goal:
            return None
        return self._ground_goal()

    def _ground_goal(self) -> Cond:
        return self.ground_condition(self.problem.goal, {}, anchor="")

    def ground_condition(self, formula: object, env: dict[str, str],
                         anchor: str | None) -> Cond:
        """`ground_formula` of a whole condition (a precondition, the goal, one of its
        conjuncts) under a grounding budget of its own, read now: a worker sets its own limit
        (`--max-atoms`) after import."""
        self._ground_budget = limits.MAX_GROUND
        return self.ground_formula(formula, env, True, anchor)

    def goal_holds_in(self, state: State | set[GroundAtom]) -> bool | None:
        """Whether the goal holds in `state` (None when the problem has no goal)."""
        sets = self.goal_sets
        if sets is not None:
            return sets[0] <= state and state.isdisjoint(sets[1])
        return None if self.goal is None else self.goal.holds(state)

    @lazy
    def dynamic(self) -> frozenset[str]:
        """Predicates some action changes; the others are static: they hold in every state
        reached from the initial one exactly as there (see `prune_static`)."""
        return self.vocabulary.effect_predicates

    @lazy
    def static_state(self) -> State:
        """The initial state's static facts."""
        dynamic = self.dynamic
        return frozenset(a for a in self.initial_state if a[0] not in dynamic)

    @lazy
    def bits(self) -> BitSets:
        """The bit-set form of states, built when a check first runs on bit sets."""
        return BitSets(self._interned)

    @property
    def initial_mask(self) -> int:
        """The initial state as a state mask (its atoms' bits and `BitSets.ALWAYS`)."""
        if self._initial_mask is None:
            self._initial_mask = self.bits.mask(self.initial_state) | BitSets.ALWAYS
        return self._initial_mask

    @property
    def goal_masks(self) -> tuple[int, int] | None:
        """(pos, neg) masks when the goal is a conjunction of literals, else None."""
        if self.goal_sets is not None:
            return self.bits.mask(self.goal_sets[0]), self.bits.mask(self.goal_sets[1])
        goal = self.goal
        if goal is None or goal.subs or goal.unsat:
            return None
        return self.bits.mask(goal.pos), self.bits.mask(goal.neg)

    @property
    def goal_test(self) -> Callable[[int], bool] | None:
        """The goal on bit-set states (None when the problem has no goal)."""
        if self._goal_test is None and self.goal is not None:
            self._goal_test = self.bits.cond_test(self.goal)
        return self._goal_test

    # -- grounding ------------------------------------------------------------------------

    def ground(self, action: Action, args: tuple[str, ...]) -> GroundAction:
        """The cached ground action for `action` with object keys `args` (already checked)."""
        cache_key = (action.name.lower(), args)
        found = self._ground_cache.get(cache_key)
        if found is None:
            found = self._ground_cache[cache_key] = self._ground(action, args)
        return found

    def precondition_holds(self, action: Action, args: tuple[str, ...],
                           state: State | set[GroundAtom]) -> bool:
        """Whether `action` with object keys `args` (already checked) applies in `state`.

        Grounds the precondition only, once per `(action, args)`: a caller that asks this of
        every candidate step (SayCan) pays nothing for effects it never applies, which in
        the household domains (a MoveTo reaches what is in, on and near its target) cost far
        more than the precondition. A ground action already built answers itself."""
        cache_key = (action.name.lower(), args)
        built = self._ground_cache.get(cache_key)
        if built is not None:
            return built.applicable(state)
        condition = self._precondition_cache.get(cache_key)
        if condition is None:
            env = dict(zip(self.schema.template(action).param_keys, args))
            condition = self._precondition_cache[cache_key] = self.ground_condition(
                action.precondition, env, anchor=None)
        return condition.holds(state)

    @lazy
    def _precondition_cache(self) -> dict[tuple[str, tuple[str, ...]], Cond]:
        return {}

    @property
    def grounded_count(self) -> int:
        return len(self._ground_cache)

    def _ground(self, action: Action, args: tuple[str, ...]) -> GroundAction:
        """Substitute `args` into the action's template; walk only its non-literal parts.

        The literal atoms come from the template when first read (`GroundAction.pre_pos` &
        co.); the bit-set form from `fast_form` when the check loop first needs it."""
        template = self.schema.template(action)
        self._ground_budget = limits.MAX_GROUND
        unsat = template.unsat is not None and template.unsat(args)
        subs: tuple[Any, ...] = ()
        conditional = None
        extra = None
        if template.complex_pre or template.complex_effects:
            env = dict(zip(template.param_keys, args))
            extra_pos = extra_neg = extra_add = extra_delete = _EMPTY
            if template.complex_pre:
                rest = conjoin(self.ground_formula(part, env, True, self.canonical(part))
                               for part in template.complex_pre)
                extra_pos, extra_neg, subs = rest.pos, rest.neg, rest.subs
                unsat = unsat or bool(rest.unsat)
            if template.complex_effects:
                more_add: list[GroundAtom] = []
                more_delete: list[GroundAtom] = []
                effects: list[ConditionalEffect] = []
                for node in template.complex_effects:
                    self._ground_effect(node, env, TRUE, more_add, more_delete, effects)
                extra_add, extra_delete = frozenset(more_add), frozenset(more_delete)
                conditional = ConditionalEffects.build(effects)
            extra = (extra_pos, extra_neg, extra_add, extra_delete)
        return GroundAction(self, action, args, None, extra, subs, unsat, conditional)

    def fast_form(self, ground: GroundAction) -> tuple[Any, ...]:
        """The bit-set form of a ground action for the check loop (`GroundAction.fast`): the
        template's generated `masks` gives the literal part's masks directly, without the
        atom sets. With `prune_static`, a disjunction or implication that the static facts
        decide is decided here (`_static_guard`): `(imply (toggles-closed ?x) ...)` is no
        guard for an object that does not toggle closed."""
        bits = self.bits
        pos_mask, neg_mask, add_mask, delete_mask, _ = self.schema.template(ground.schema).masks(
            ground.args, bits.bit_of.get, bits.new)
        extra, subs, unsat, conditional = (ground._extra, ground._subs, ground._unsat,
                                           ground.conditional)
        if extra is not None:
            pos_mask |= bits.mask(extra[0])
            neg_mask |= bits.mask(extra[1])
            add_mask |= bits.mask(extra[2])
            delete_mask |= bits.mask(extra[3])
        if subs and self.prune_static:
            more_pos, more_neg, subs, unsat_more = self._static_guard(subs)
            pos_mask |= bits.mask(set(more_pos))
            neg_mask |= bits.mask(set(more_neg))
            unsat = unsat or unsat_more
        guard = bits.guard(subs, unsat) if subs or unsat else None
        reads = 0
        if guard is not None:
            for sub in subs:
                reads |= bits.sub_reads(sub)
        delta, delta_trigger = None, None
        if conditional is not None:
            delta, delta_trigger, delta_reads = bits.effects(conditional)
            reads |= delta_reads
        plain_add, plain_delete = successor_masks(add_mask, delete_mask)
        literals = pos_mask | neg_mask
        if guard is None and delta is None:
            return (literals, pos_mask, plain_add, plain_delete, (literals, 0, None, ground))
        # Without a guard, a step whose conditional effects all wait on trigger atoms takes
        # the plain path when none of them is present: the loop's one test asks for the
        # literals to hold and the trigger atoms to be absent. A guard, or a trigger the
        # precondition requires, always takes the special path (`ALWAYS` is in every state).
        if guard is None and delta_trigger is not None and not delta_trigger & pos_mask:
            trigger = delta_trigger
        else:
            trigger = BitSets.ALWAYS
        successors = Successors(guard, delta, delta_trigger, add_mask, delete_mask)
        return (literals | trigger, pos_mask, plain_add, plain_delete,
                (literals, reads, successors, ground))

    def _static_guard(self, subs: tuple[Any, ...]
                      ) -> tuple[list[GroundAtom], list[GroundAtom], tuple[Any, ...], bool]:
        """The precondition's disjunctions and implications with what the static facts decide
        taken out: `(pos, neg, subs, unsat)`, the literals that join the literal test, the
        parts still to evaluate, and whether one is false in every state. An implication whose
        condition is static is dropped when the condition is false and replaced by its
        consequent when it is true; a disjunction with a static alternative that holds is
        dropped, one whose alternatives are all static and false is false. Valid in every
        state that has the problem's static facts (the only states a pruned table checks
        from, `Gate.for_state`)."""
        pos: list[GroundAtom] = []
        neg: list[GroundAtom] = []
        kept: list[Any] = []
        unsat = False
        for sub in subs:
            if isinstance(sub, Implies):
                holds = self._static_truth(sub.condition)
                if holds is None:
                    kept.append(sub)
                elif holds:
                    then = sub.then
                    pos.extend(then.pos)
                    neg.extend(then.neg)
                    unsat = unsat or bool(then.unsat)
                    more_pos, more_neg, more, more_unsat = self._static_guard(then.subs)
                    pos += more_pos
                    neg += more_neg
                    kept.extend(more)
                    unsat = unsat or more_unsat
            else:
                truths = [self._static_truth(part) for part in sub.parts]
                if any(truths):
                    continue
                if all(truth is False for truth in truths):
                    unsat = True
                else:
                    kept.append(sub)
        return pos, neg, tuple(kept), unsat

    def _static_truth(self, cond: Cond) -> bool | None:
        """Whether `cond` holds, when it is a conjunction of static literals (the same in
        every state with the problem's static facts); None when it reads a fluent."""
        if cond.subs:
            return None
        dynamic = self.dynamic
        for atom in itertools.chain(cond.pos, cond.neg):
            if atom[0] in dynamic:
                return None
        initial = self.initial_state
        return (not cond.unsat and all(atom in initial for atom in cond.pos)
                and not any(atom in initial for atom in cond.neg))

    def ground_by_walking(self, action: Action, args: tuple[str, ...]) -> tuple[Any, ...]:
        """(pre_pos, pre_neg, add, delete, conditional) by walking the whole action, uncached:
        the reference the templates must agree with (tests compare the two)."""
        env = {key(p.name): a for p, a in zip(action.parameters, args)}
        precondition = self.ground_condition(action.precondition, env, anchor=None)
        add: list[GroundAtom] = []
        delete: list[GroundAtom] = []
        conditional: list[ConditionalEffect] = []
        self._ground_effect(action.effect, env, TRUE, add, delete, conditional)
        return (precondition.pos, precondition.neg, frozenset(add), frozenset(delete),
                conditional, precondition)

    def _term(self, term: object, env: dict[str, str]) -> str:
        if isinstance(term, Variable):
            value = env.get(key(term.name))
            if value is None:
                raise PDDLSemanticError(f"free variable ?{term.name}", term.loc)
            return value
        return key(term.name)  # type: ignore[attr-defined]  # a constant (declared or not)

    def _instances(self, variables: tuple[Typed, ...], env: dict[str, str],
                   where: object = None, when: object = None) -> Iterator[dict[str, str]]:
        """Every binding of `variables` over the problem's objects, counted against the
        grounding budget first: a formula that would enumerate more than `limits.MAX_GROUND`
        instances in all is refused before any is built. `when`, the condition of the
        conditional effect the variables range over, prunes bindings by its static literals."""
        domains = [self.objects_of(v.types) for v in variables]
        count = 1
        for values in domains:
            count *= len(values)
        self._ground_budget -= count
        if self._ground_budget < 0:
            sizes = " x ".join(str(len(values)) for values in domains)
            raise GroundingTooLarge(
                f"grounding needs more than {limits.MAX_GROUND:,} quantifier instances "
                f"(this quantifier alone ranges over {sizes} = {count:,} bindings)",
                getattr(where, "loc", None))
        names = [key(v.name) for v in variables]
        checks = self._static_checks(when, names) if when is not None else ()
        if not checks:
            for values in itertools.product(*domains):
                inner = dict(env)
                inner.update(zip(names, values))
                yield inner
            return
        yield from self._pruned_instances(domains, names, checks, 0, dict(env))

    def _static_checks(self, condition: object, names: list[str]) -> _StaticChecks:
        """Per quantified variable (in order), the static positive literals of a `when`
        condition that are fully bound once that variable is: a binding that makes one false
        makes the condition false in every state, so `_pruned_instances` skips the bindings
        below it instead of enumerating them (`(forall (?b ?o) (when (and (controls ?x ?b)
        ...)))` visits only the burners ?x controls)."""
        if not self.prune_static or len(names) < 2:
            return ()
        parts = condition.parts if isinstance(condition, And) else (condition,)
        levels: list[list[tuple[str, tuple[Term, ...]]]] = [[] for _ in names]
        for part in parts:
            if not isinstance(part, Atom) or key(part.predicate) in self.dynamic:
                continue
            depth = max((names.index(key(a.name)) for a in part.args
                         if isinstance(a, Variable) and key(a.name) in names), default=-1)
            if depth >= 0:
                levels[depth].append((key(part.predicate), part.args))
        return tuple(tuple(level) for level in levels) if any(levels) else ()

    def _pruned_instances(self, domains: list[tuple[str, ...]], names: list[str],
                          checks: _StaticChecks, depth: int,
                          env: dict[str, str]) -> Iterator[dict[str, str]]:
        for value in domains[depth]:
            env[names[depth]] = value
            if any(self.atom((predicate, *(self._term(a, env) for a in args)))
                   not in self.initial_state for predicate, args in checks[depth]):
                continue
            if depth + 1 == len(names):
                yield dict(env)
            else:
                yield from self._pruned_instances(domains, names, checks, depth + 1, env)
        del env[names[depth]]

    def ground_formula(self, formula: object, env: dict[str, str], positive: bool,
                       anchor: str | None) -> Cond:
        """Ground `formula` (negated when not `positive`) under `env` into a `Cond`.

        `anchor` is the canonical text of the enclosing top-level precondition conjunct; None
        means `formula` is the whole precondition, whose conjuncts become the anchors.
        """
        if anchor is None:
            if isinstance(formula, And) and positive:
                return conjoin(self.ground_formula(p, env, True, self.canonical(p))
                               for p in formula.parts)
            anchor = self.canonical(formula, positive)
        if isinstance(formula, Atom):
            atom = self.atom((key(formula.predicate), *(self._term(a, env) for a in formula.args)))
            literal = GroundLiteral(atom, positive, self.canonical(formula, positive), anchor)
            if positive:
                return Cond(frozenset((atom,)), frozenset(), (literal,))
            return Cond(frozenset(), frozenset((atom,)), (literal,))
        if isinstance(formula, Equals):
            left, right = self._term(formula.left, env), self._term(formula.right, env)
            if (left == right) == positive:
                return TRUE
            literal = GroundLiteral((EQUALS, left, right), positive,
                                    self.canonical(formula, positive), anchor)
            return Cond(frozenset(), frozenset(), (literal,), (), (literal,))
        if isinstance(formula, Not):
            return self.ground_formula(formula.arg, env, not positive, anchor)
        if isinstance(formula, (And, Or)):
            conjunctive = isinstance(formula, And) == positive
            parts = (self.ground_formula(p, env, positive, anchor) for p in formula.parts)
            if conjunctive:
                return conjoin(parts)
            return self._any_of(parts, formula, env, positive, anchor)
        if isinstance(formula, Imply):
            condition = self.ground_formula(formula.antecedent, env, True, anchor)
            if positive:
                if condition.is_false:
                    return TRUE
                then = self.ground_formula(formula.consequent, env, True, anchor)
                if condition.is_true or then.is_true:
                    return then
                return Cond(frozenset(), frozenset(), (), (Implies(condition, then),))
            return conjoin([condition, self.ground_formula(formula.consequent, env, False, anchor)])
        if isinstance(formula, (Exists, Forall)):
            conjunctive = isinstance(formula, Forall) == positive
            parts = (self.ground_formula(formula.body, inner, positive, anchor)
                     for inner in self._instances(formula.variables, env, formula))
            if conjunctive:
                return conjoin(parts)
            return self._any_of(parts, formula, env, positive, anchor)
        raise self._unsupported(type(formula).__name__, getattr(formula, "loc", None),
                                "in a condition")

    def literal_failures(self, ground: GroundAction, state: State | set[GroundAtom]
                         ) -> list[GroundLiteral] | None:
        """The failed literals of `ground`'s precondition in `state`, as `_failures` finds them
        in `ground.precondition` (equalities false for these objects first, then the literals
        that fail in source order, each once), read from the action's template without
        grounding the precondition; None when the precondition has a complex part."""
        found = self.failed_literals(ground.schema, ground.args, state)
        if found is None:
            return None
        literals = self.schema.template(ground.schema).literals
        failures = []
        for position, values in found:
            positive, _, _, predicate, text, anchor = literals[position]
            atom = self.atom((predicate, *values)) if predicate else (EQUALS, *values)
            failures.append(GroundLiteral(atom, positive, text, anchor))
        return failures

    def failed_literals(self, action: Action, args: tuple[str, ...],
                        state: State | set[GroundAtom]
                        ) -> list[tuple[int, tuple[str, ...]]] | None:
        """`literal_failures` of `action` with object keys `args`, nothing built but the
        answer: each failed literal as its position in the template's `literals` and its
        objects, each atom once (the template's generated `failed`). None when the
        precondition has a complex part."""
        template = self.schema.template(action)
        if template.complex_pre:
            return None
        found = template.failed(state, args)
        if len(found) < 2:
            return found
        literals = template.literals
        seen: set[tuple[bool, tuple[str, ...]]] = set()
        once = []
        for position, values in found:
            literal = literals[position]
            if literal.predicate:  # an equality is reported as often as it is written
                atom = (literal.positive, (literal.predicate, *values))
                if atom in seen:
                    continue
                seen.add(atom)
            once.append((position, values))
        return once

    def _any_of(self, parts: Iterable[Cond], source: object, env: dict[str, str],
                positive: bool, anchor: str) -> Cond:
        kept = []
        for part in parts:
            if part.is_true:
                return TRUE
            if not part.is_false:
                kept.append(part)
        if len(kept) == 1:
            return kept[0]
        bindings = tuple(sorted(env.items()))
        any_of = AnyOf.of(tuple(kept), source, bindings, positive,
                          self.canonical(source, positive), anchor)
        return Cond(frozenset(), frozenset(), (), (any_of,))

    def _effect_condition(self, formula: object, env: dict[str, str]) -> Cond | None:
        """The ground condition of a `when`, simplified by the static facts: a static literal
        that holds is dropped, one that does not makes the condition false (None). A condition
        is never reported, so a conjunction of literals becomes two sets without the sources
        `ground_formula` records for explanations."""
        parts = formula.parts if isinstance(formula, And) else (formula,)
        pos: list[GroundAtom] = []
        neg: list[GroundAtom] = []
        for part in parts:
            positive = not isinstance(part, Not)
            node = part.arg if isinstance(part, Not) else part
            if not isinstance(node, Atom):  # a quantifier, `or`, `=`...: the general grounder
                cond = self.ground_formula(formula, env, True, "")
                return None if cond.is_false else cond
            atom = self.atom((key(node.predicate), *(self._term(a, env) for a in node.args)))
            if self.prune_static and atom[0] not in self.dynamic:
                if (atom in self.initial_state) != positive:
                    return None
                continue
            (pos if positive else neg).append(atom)
        return Cond(frozenset(pos), frozenset(neg)) if pos or neg else TRUE

    def agrees_on_static(self, state: State) -> bool:
        """Whether `state` has exactly the problem's static facts: only then may effects
        dropped by them (`prune_static`) be left out."""
        dynamic = self.dynamic
        return frozenset(a for a in state if a[0] not in dynamic) == self.static_state

    def _ground_effect(self, effect: object, env: dict[str, str], condition: Cond,
                       add: list[GroundAtom], delete: list[GroundAtom],
                       conditional: list[ConditionalEffect]) -> None:
        if isinstance(effect, And):
            for part in effect.parts:
                self._ground_effect(part, env, condition, add, delete, conditional)
        elif isinstance(effect, (Atom, Not)):
            positive = isinstance(effect, Atom)
            atom_node = effect.arg if isinstance(effect, Not) else effect
            if not isinstance(atom_node, Atom):
                raise PDDLSemanticError("an effect may only negate an atom", effect.loc)
            atom = self.atom((key(atom_node.predicate),
                              *(self._term(a, env) for a in atom_node.args)))
            if condition.is_true:
                (add if positive else delete).append(atom)
            else:
                conditional.append(ConditionalEffect(
                    condition, frozenset((atom,)) if positive else frozenset(),
                    frozenset() if positive else frozenset((atom,))))
        elif isinstance(effect, When):
            when = self._effect_condition(effect.condition, env)
            if when is None:  # false in every state: a static literal that does not hold
                return
            inner = when if condition.is_true else conjoin([condition, when])
            if not inner.is_false:
                self._ground_effect(effect.effect, env, inner, add, delete, conditional)
        elif isinstance(effect, ForallEffect):
            guard = effect.effect.condition if isinstance(effect.effect, When) else None
            for inner_env in self._instances(effect.variables, env, effect, guard):
                self._ground_effect(effect.effect, inner_env, condition, add, delete, conditional)
        elif isinstance(effect, NumericEffect):
            pass  # a cost increase (anything else was rejected by _check_scope)
        else:
            raise self._unsupported(type(effect).__name__, getattr(effect, "loc", None),
                                    "in an effect")


def compile_table(domain: Domain, problem: Problem,
                  prune_static: bool = True) -> PreconditionTable:
    """Resolve `domain` and `problem` into a `PreconditionTable` (raises UnsupportedConstruct)."""
    return PreconditionTable(domain, problem, prune_static)
