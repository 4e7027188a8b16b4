"""From a household task to a PDDL problem of the ithor/procthor domain: objects, init, goal.

`task_scene(task, domain)` works out the scene and records where every fact came from;
`task_problem(task, domain)` renders it as a `Problem` (write it with `write_problem`).

Objects
    The task's scene objects: visible_objects ∪ expected_objects ∪ the objects named in the
    observation text ∪ the objects of the reference plan ∪ the objects the goal names. Every
    name is normalised to its AI2-THOR type (`dining_table` -> DiningTable, `nightstand` ->
    SideTable, see `catalogue.canonical_type`). ProcTHOR room names become objects of type
    `room`. Names the catalogue does not know stay objects with no affordance and are listed in
    `TaskScene.unknown_types`.

Initial state, by source (`SceneFact.source`)
    catalogue    static affordances of each type; fixtures that stand together (`near`).
    observation  held object (else `hand-empty`); open/closed and on/off as observed (an
                 openable object not observed open is closed; a toggleable one not observed on
                 is off, except types that start on: lights); objects within AI2-THOR's
                 interaction distance (1.5 m) and the server's Found/Arrived objects are
                 `reachable`; ProcTHOR's current room and which objects are in which room.
    instruction  where an object lies when the instruction says so: "X from the Y", "open
                 the Y and take X" -> X in/on Y (inside a closed container it is `enclosed`).
    reference    facts the reference plan proves. The references were recorded on a simulator
                 on which every kept step succeeded (REFERENCE §6.5), so when a reference step
                 interacts with an object the other sources leave out of reach, the weakest
                 location fact explaining that success is added: a pickupable object taken
                 right after the robot went to (and opened) a receptacle lay in/on it; a fixture
                 used after going to X stands near X; an object used before any move was within
                 reach from the start. Likewise a state the observation does not show is set
                 by what the reference proves (TurnOff of an unobserved lamp succeeded: it was
                 on). Affordances are never changed, observed states never overridden, and
                 each added fact names the reference step behind it.

Goal (`TaskScene.goal_source`)
    instruction  The instruction is split into clauses ("and", commas, ":", "then", dashes) and
                 each clause is matched against the verbs of the paper's task templates and the
                 curated tasks: turn on/off X, open/close X, pick up/take/grab/get/retrieve X,
                 place/put/set/hang X on|in Y (the relation follows the receptacle's kind:
                 inside a container, on a surface), place/put X without a receptacle (X is put
                 down: not held), sit/lie on X, heat/cool/wash/clean X. Pronouns (it, one, them)
                 refer to the last object named that suits the verb. A clause whose object does
                 not resolve to a scene object or a known type is ignored. Holding X is dropped
                 when a later clause places X.
    reference    When no clause matches (free-form instructions such as "Make a cup of coffee"),
                 the goal is what the reference plan changes: the goal-relevant atoms it adds
                 (holding, turned-on, opened, closed, on, inside, sat-on, lying-on, heated,
                 cooled, cleaned) and the `turned-on` atoms it deletes, as negative literals.
                 Such a goal is reached by its own reference by construction; it still checks
                 other plans.
    none         Neither gives a goal (the reference changes nothing the goal vocabulary can
                 name): the goal is empty.
    Instruction goals are what make success checking honest: a reference plan recorded as a
    prefix of a failed attempt (X01 never puts the apple in the microwave) does not reach it.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from ..pddl.model import And, Atom, Constant, Domain, Not, Problem, Typed
from ..pddl.validate import check_problem, raise_first_error
from ..pddl.vocabulary import loose_step_words, name_key
from . import catalogue
from .catalogue import affordances, canonical_type
from .observation import ObservedState, read_observation
from .taskset import Task, normalize_steps

GOAL_PREDICATES = ("holding", "turned-on", "opened", "closed", "on", "inside", "sat-on",
                   "lying-on", "heated", "cooled", "cleaned")

# Canonical actions whose execution locates their target (the domain's effects say so).
_LOCATING = {"moveto", "find", "place", "putin", "serve", "sit", "lieon"}


@dataclass(frozen=True)
class SceneFact:
    """One initial fact with its provenance: `atom` is (predicate, *objects)."""

    atom: tuple[str, ...]
    source: str  # "catalogue" | "observation" | "instruction" | "reference"
    note: str = ""


@dataclass(frozen=True)
class GoalLiteral:
    atom: tuple[str, ...]
    positive: bool = True
    clause: str = ""

    def text(self) -> str:
        inner = "(" + " ".join(self.atom) + ")"
        return inner if self.positive else f"(not {inner})"


@dataclass(frozen=True)
class TaskScene:
    """Everything the problem is made of, with where it came from."""

    task: Task
    domain: str
    things: tuple[str, ...]
    rooms: tuple[str, ...]
    facts: tuple[SceneFact, ...]
    goal: tuple[GoalLiteral, ...]
    goal_source: str
    unknown_types: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()

    def facts_from(self, source: str) -> tuple[SceneFact, ...]:
        return tuple(f for f in self.facts if f.source == source)


# --- names -----------------------------------------------------------------------------------

def _pddl_name(name: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9_\-]", "", name)
    return cleaned if cleaned[:1].isalpha() else f"obj{cleaned}"


def _room_name(name: str) -> str:
    return _pddl_name(catalogue.camel_case(name))


def _step_words(step: Mapping[str, str]) -> list[str]:
    return [w for w in loose_step_words(step) if w]


# --- instruction -----------------------------------------------------------------------------

_CLAUSES = re.compile(r"\s*(?:,|;|:|\u2014|\u2013|\s-\s|\.\s|\.$|\bthen\b|\band\b)\s*",
                      re.IGNORECASE)
_ARTICLES = re.compile(r"^(?:the|a|an|some|one of the|each|every|your)\s+", re.IGNORECASE)
_CUT = re.compile(r"\s+(?:from|at|with|under|near|next to|beside|by|inside|in|into|on|onto|"
                  r"neatly|nearby|away|down|up|back|carefully|properly|to)\b.*$", re.IGNORECASE)
_PRONOUNS = {"it", "one", "them", "this", "that"}

_PATTERNS: tuple[tuple[str, re.Pattern], ...] = tuple(
    (kind, re.compile(rx, re.IGNORECASE)) for kind, rx in (
        ("on", r"^(?:turn|switch)\s+on\s+(?P<x>.+)$"),
        ("on", r"^(?:turn|switch)\s+(?P<x>.+?)\s+on$"),
        ("off", r"^(?:turn|switch)\s+off\s+(?P<x>.+)$"),
        ("off", r"^(?:turn|switch)\s+(?P<x>.+?)\s+off$"),
        ("open", r"^open\s+(?P<x>.+)$"),
        ("close", r"^(?:close|shut)\s+(?P<x>.+)$"),
        ("pick", r"^(?:pick\s+up|pick|take|grab|get|retrieve|fetch)\s+(?P<x>.+?)(?:\s+up)?"
                 r"(?:\s+from\s+(?P<y>.+))?$"),
        ("place", r"^(?:place|put|set|hang|move|leave|store)\s+(?P<x>.+?)\s+"
                  r"(?:on\s+top\s+of|onto|on|into|inside|in)\s+(?P<y>.+)$"),
        ("putdown", r"^(?:place|put|set|hang|leave)\s+(?!up\b|down\b|away\b)(?P<x>.+)$"),
        ("sit", r"^sit(?:\s+down)?\s+on\s+(?P<x>.+)$"),
        ("lie", r"^lie(?:\s+down)?\s+on\s+(?P<x>.+)$"),
        ("heat", r"^(?:heat|warm)(?:\s+up)?\s+(?P<x>.+)$"),
        ("cool", r"^(?:cool|chill)\s+(?P<x>.+)$"),
        ("clean", r"^(?:wash|rinse|clean)\s+(?P<x>.+)$"),
    ))

_VERB_NEEDS = {"on": "toggleable", "off": "toggleable", "open": "openable",
               "close": "openable", "pick": "pickupable", "place": "pickupable",
               "putdown": "pickupable", "heat": "pickupable", "cool": "pickupable",
               "clean": "pickupable", "sit": "sittable", "lie": "lieable"}


_MOVES_ITEM = {"pick", "place", "putdown"}


class _Resolver:
    """Instruction noun phrases -> scene object names (AI2-THOR types)."""

    def __init__(self, scene_names: Iterable[str], focus: Iterable[str] = ()):
        self.scene = {n.lower(): n for n in scene_names}
        self.focus = [self.scene.get(canonical_type(f).lower(), canonical_type(f)) for f in focus]
        self.mentioned: list[str] = []

    def _head(self, phrase: str) -> str:
        phrase = phrase.strip().strip(".!?").strip()
        phrase = _ARTICLES.sub("", phrase)
        phrase = _CUT.sub("", phrase)
        return _ARTICLES.sub("", phrase).strip()

    def resolve(self, phrase: str, need: str | None = None) -> str | None:
        head = self._head(phrase)
        if not head:
            return None
        if head.lower() in _PRONOUNS:
            return self.antecedent(need)
        words = head.split()
        for start in range(len(words)):
            candidate = " ".join(words[start:])
            name = canonical_type(candidate, prefer=tuple(self.scene.values()))
            if name.lower() in self.scene or catalogue.lookup(name):
                found = self.scene.get(name.lower(), name)
                self.mentioned.append(found)
                return found
        return None

    def antecedent(self, need: str | None) -> str | None:
        for name in reversed(self.mentioned):
            if need is None or getattr(affordances(name), need, False):
                return name
        if need == "pickupable":  # "Prepare a coffee and place it ...": the one item in focus
            pickable = list(dict.fromkeys(n for n in self.focus if affordances(n).pickupable))
            if len(pickable) == 1:
                return pickable[0]
        return None

    def note_mentions(self, clause: str) -> None:
        """Remember the objects a clause names even when no verb pattern matches it."""
        words = re.findall(r"[A-Za-z]+", clause)
        for size in (3, 2, 1):
            for i in range(len(words) - size + 1):
                name = canonical_type(" ".join(words[i:i + size]))
                if name.lower() in self.scene:
                    self.mentioned.append(self.scene[name.lower()])


def _placement(item: str, receptacle: str) -> tuple[str, str, str]:
    relation = "inside" if affordances(receptacle).container else "on"
    return (relation, item, receptacle)


def instruction_goal(instruction: str, scene_names: Iterable[str], focus: Iterable[str] = ()
                     ) -> tuple[list[GoalLiteral], list[tuple[str, str]]]:
    """Goal literals read from the instruction, and (item, receptacle) location hints.

    `focus` (the task's expected objects) settles a pronoun with no antecedent. Location hints
    come from "X from the Y" and "open the Y and take X" (see module docstring).
    """
    resolver = _Resolver(scene_names, focus)
    goal: list[GoalLiteral] = []
    hints: list[tuple[str, str]] = []
    last_opened: str | None = None
    for clause in (c.strip() for c in _CLAUSES.split(instruction or "")):
        if not clause:
            continue
        matched = False
        for kind, pattern in _PATTERNS:
            match = pattern.match(clause)
            if not match:
                continue
            x = resolver.resolve(match["x"], _VERB_NEEDS.get(kind))
            if x is None:
                continue
            if kind in _MOVES_ITEM and affordances(x).known and not affordances(x).pickupable:
                continue  # "set up the dining table" is not putting a table down
            matched = True
            if kind == "on":
                goal.append(GoalLiteral(("turned-on", x), True, clause))
            elif kind == "off":
                goal.append(GoalLiteral(("turned-on", x), False, clause))
            elif kind == "open":
                goal.append(GoalLiteral(("opened", x), True, clause))
                last_opened = x
            elif kind == "close":
                goal.append(GoalLiteral(("closed", x), True, clause))
            elif kind == "pick":
                goal.append(GoalLiteral(("holding", x), True, clause))
                source = match.groupdict().get("y")
                y = resolver.resolve(source, "receptacle") if source else None
                if y and y != x:
                    hints.append((x, y))
                elif last_opened and affordances(last_opened).receptacle:
                    hints.append((x, last_opened))
            elif kind == "place":
                y = resolver.resolve(match["y"], "receptacle")
                if y is None or y == x:
                    matched = False
                    continue
                goal.append(GoalLiteral(_placement(x, y), True, clause))
            elif kind == "putdown":
                goal.append(GoalLiteral(("holding", x), False, clause))
            elif kind == "sit":
                goal.append(GoalLiteral(("sat-on", x), True, clause))
            elif kind == "lie":
                goal.append(GoalLiteral(("lying-on", x), True, clause))
            elif kind == "heat":
                goal.append(GoalLiteral(("heated", x), True, clause))
            elif kind == "cool":
                goal.append(GoalLiteral(("cooled", x), True, clause))
            elif kind == "clean":
                goal.append(GoalLiteral(("cleaned", x), True, clause))
            break
        if not matched:
            resolver.note_mentions(clause)
    placed = {lit.atom[1] for lit in goal if lit.atom[0] in ("on", "inside")}
    goal = [lit for lit in goal if not (lit.atom[0] == "holding" and lit.positive
                                        and lit.atom[1] in placed)]
    unique: dict[tuple, GoalLiteral] = {}
    for lit in goal:
        unique[(lit.atom, lit.positive)] = lit
    return list(unique.values()), hints


def _instruction_objects(task: Task, scene_names: Iterable[str]) -> list[str]:
    goal, hints = instruction_goal(task.instruction, scene_names, task.expected_objects)
    names = [a for lit in goal for a in lit.atom[1:]]
    names += [n for pair in hints for n in pair]
    return names


# --- the scene -------------------------------------------------------------------------------

def _collect_objects(task: Task, observed: ObservedState, domain: Domain
                     ) -> tuple[list[str], list[str], dict[str, str]]:
    """(things, rooms, raw name -> object name) of the task."""
    raw: list[str] = []
    raw += list(task.visible_objects) + list(task.expected_objects) + list(observed.objects())
    for step in normalize_steps(task.reference_steps, domain):
        if step["action"].lower() == "wait":
            continue
        raw += _step_words(step)
    room_names = [r for r, _ in observed.rooms] if task.domain == "procthor" else []
    room_keys = {name_key(r): _room_name(r) for r in room_names}
    if task.domain == "procthor" and observed.current_room:
        room_keys.setdefault(name_key(observed.current_room), _room_name(observed.current_room))
    mapping: dict[str, str] = {}
    things: dict[str, str] = {}
    prefer = tuple(raw)
    for name in raw:
        if name_key(name) in room_keys:
            mapping[name] = room_keys[name_key(name)]
            continue
        canon = _pddl_name(canonical_type(name, prefer=prefer))
        mapping[name] = canon
        things.setdefault(canon.lower(), canon)
    scene = list(things.values())
    for name in _instruction_objects(task, scene):
        things.setdefault(name.lower(), name)
        mapping.setdefault(name, name)
    rooms = list(dict.fromkeys(room_keys.values()))
    rooms_lower = {r.lower() for r in rooms}
    return [t for t in things.values() if t.lower() not in rooms_lower], rooms, mapping


def _observation_facts(task: Task, observed: ObservedState, things: list[str], rooms: list[str],
                       mapping: dict[str, str]) -> list[SceneFact]:
    facts: list[SceneFact] = []
    by_key = {t.lower(): t for t in things}

    def obj(name: str | None) -> str | None:
        if not name:
            return None
        mapped = mapping.get(name) or _pddl_name(canonical_type(name))
        return by_key.get(mapped.lower())

    held = obj(observed.holding)
    if held:
        facts.append(SceneFact(("holding", held), "observation", "Holding: line"))
        facts.append(SceneFact(("reachable", held), "observation", "held"))
    else:
        facts.append(SceneFact(("hand-empty",), "observation",
                               "Holding: nothing" if observed.format in ("nearby", "server")
                               else "no held object stated"))
    seen_state: dict[str, tuple[bool, bool]] = {}
    for near in observed.nearby:  # nearest first: the instance the server would pick
        name = obj(near.name)
        if name and name.lower() not in seen_state:
            seen_state[name.lower()] = (near.is_open, near.is_on)
        if name and near.within_reach:
            facts.append(SceneFact(("reachable", name), "observation",
                                   f"{near.name} at {near.distance} m (within 1.5 m)"))
    for label, value in (("Found", observed.found), ("Arrived", observed.arrived)):
        name = obj(value)
        if name:
            facts.append(SceneFact(("reachable", name), "observation", f"{label}: {value}"))
    for thing in things:
        info = affordances(thing)
        state = seen_state.get(thing.lower())
        if info.openable:
            is_open = bool(state and state[0])
            facts.append(SceneFact(("opened" if is_open else "closed", thing), "observation",
                                   "observed open" if is_open else
                                   ("observed closed" if state else "not observed open")))
        if info.toggleable:
            is_on = state[1] if state else info.starts_on
            if is_on:
                facts.append(SceneFact(("turned-on", thing), "observation",
                                       "observed on" if state else
                                       f"{thing} starts on in AI2-THOR scenes"))
    if task.domain == "procthor":
        current = _room_name(observed.current_room) if observed.current_room else None
        for room in rooms:
            facts.append(SceneFact(("is-room", room), "observation", "room of the house"))
            facts.append(SceneFact(("here", room), "observation", "rooms are always reachable"))
        if current:
            facts.append(SceneFact(("robot-in", current), "observation", "Current room"))
        for room_label, names in observed.rooms:
            room = _room_name(room_label)
            for raw in names:
                name = obj(raw)
                if name:
                    facts.append(SceneFact(("in-room", name, room), "observation",
                                           f"listed under {room_label}"))
                    if room == current:
                        facts.append(SceneFact(("here", name), "observation",
                                               "in the current room"))
    return facts


def _catalogue_facts(things: list[str]) -> list[SceneFact]:
    facts = []
    for thing in things:
        for predicate in affordances(thing).predicates():
            facts.append(SceneFact((predicate, thing), "catalogue"))
    for a, b in sorted(catalogue.fixture_neighbours(set(things))):
        facts.append(SceneFact(("near", a, b), "catalogue", "fixtures that stand together"))
    return facts


def _location_facts(item: str, place: str, state: set[tuple], source: str, note: str
                    ) -> list[SceneFact]:
    """item lies in/on place (in a closed container it is enclosed)."""
    relation = "inside" if affordances(place).container else "on"
    facts = [SceneFact((relation, item, place), source, note)]
    if relation == "inside" and ("closed", place) in state:
        facts.append(SceneFact(("enclosed", item), source, f"{place} is closed"))
    return facts


# --- assembling ------------------------------------------------------------------------------

def _problem(task: Task, domain: Domain, things: Sequence[str], rooms: Sequence[str],
             facts: Sequence[SceneFact], goal: Sequence[GoalLiteral]) -> Problem:
    objects = tuple(Typed(r, ("room",)) for r in sorted(rooms, key=str.lower))
    objects += tuple(Typed(t, ("thing",)) for t in sorted(things, key=str.lower))
    atoms = sorted({f.atom for f in facts}, key=lambda a: (a[0], tuple(x.lower() for x in a[1:])))
    init = tuple(Atom(a[0], tuple(Constant(x) for x in a[1:])) for a in atoms)
    parts = []
    for lit in goal:
        atom = Atom(lit.atom[0], tuple(Constant(x) for x in lit.atom[1:]))
        parts.append(atom if lit.positive else Not(atom))
    name = _pddl_name(f"{task.domain}-{task.task_id}".replace("+", "_"))
    return Problem(name=name.lower(), domain_name=domain.name, objects=objects, init=init,
                   goal=And(tuple(parts)))


def _gate(domain: Domain, problem: Problem):
    from ..gate.gate import compile_gate  # the gate checks the reference against the domain
    return compile_gate(domain, problem)


_STATE_FIXES = {  # violation code -> (atoms the reference proves, atoms it disproves)
    "already-off": (("turned-on",), ()),
    "already-on": ((), ("turned-on",)),
    "already-closed": (("opened",), ("closed",)),
    "already-open": (("closed",), ("opened",)),
}


def _explain_reference(task: Task, domain: Domain, things: list[str], rooms: list[str],
                       facts: list[SceneFact], observed_state: set[str]
                       ) -> tuple[list[SceneFact], list[SceneFact]]:
    """Facts that explain the reference plan's success (see module docstring).

    Returns the facts to keep (defaults the reference disproves removed) and the facts added.
    `observed_state` holds the (lower-case) objects whose open/on state the observation shows.
    """
    steps = normalize_steps(task.reference_steps, domain)
    if not steps:
        return facts, []
    by_lower = {t.lower(): t for t in [*things, *rooms]}
    added: list[SceneFact] = []
    for _ in range(len(steps) + 1):
        problem = _problem(task, domain, things, rooms, facts + added, ())
        gate = _gate(domain, problem)
        verdict = gate.check(steps, mode="first")
        if verdict.valid or not verdict.violations:
            break
        violation = verdict.violations[0]
        fix = _STATE_FIXES.get(violation.code)
        if fix:
            subject = next((atom[1] for _, atom in violation.atoms if len(atom) > 1), None)
            if subject is None or subject in observed_state:
                break  # the observation showed this state: the reference is wrong, not the scene
            target = by_lower.get(subject, subject)
            adds, removes = fix
            note = (f"reference step {violation.step + 1} ({violation.step_text}) succeeded, "
                    f"so the unobserved {target} was {'/'.join(adds)}")
            gone = {(predicate, target) for predicate in removes}
            facts = [f for f in facts if f.atom not in gone]
            added = [f for f in added if f.atom not in gone]
            added += [SceneFact((predicate, target), "reference", note) for predicate in adds]
            continue
        wanted = [atom for positive, atom in violation.atoms
                  if positive and atom and atom[0] == "reachable"]
        if not wanted:
            break
        target = by_lower.get(wanted[0][1], wanted[0][1])
        place = None
        opened_since = False
        for earlier in reversed(steps[:violation.step]):
            canonical = name_key(earlier["action"])
            if canonical in ("open",):
                opened_since = True
            if canonical in _LOCATING:
                try:
                    ground = gate.ground(earlier)
                except Exception:  # a structural problem is the gate's to report
                    continue
                if ground.args:
                    place = by_lower.get(ground.args[0], ground.args[0])
                    break
        state = {f.atom for f in facts + added}
        step_text = f"reference step {violation.step + 1} ({violation.step_text})"
        info, place_info = affordances(target), affordances(place) if place else None
        if place and info.pickupable and place_info and place_info.receptacle:
            added += _location_facts(target, place, state, "reference",
                                     f"{step_text} takes {target} after reaching {place}"
                                     + (" and opening it" if opened_since else ""))
        elif place:
            note = f"{step_text} uses {target} after reaching {place}"
            added += [SceneFact(("near", target, place), "reference", note),
                      SceneFact(("near", place, target), "reference", note)]
        else:
            added.append(SceneFact(("reachable", target), "reference",
                                   f"{step_text} uses {target} before any move"))
    return facts, added


def _reference_goal(task: Task, domain: Domain, problem: Problem) -> list[GoalLiteral]:
    steps = normalize_steps(task.reference_steps, domain)
    if not steps:
        return []
    gate = _gate(domain, problem)
    verdict = gate.check(steps, mode="all")
    initial = gate.initial_state
    names = {o.name.lower(): o.name for o in problem.objects}

    def spelled(atom: tuple) -> tuple[str, ...]:
        return (atom[0], *(names.get(a, a) for a in atom[1:]))

    goal = [GoalLiteral(spelled(a), True, "reference plan")
            for a in sorted(verdict.final_state - initial) if a[0] in GOAL_PREDICATES
            and not (a[0] == "closed" and ("opened", *a[1:]) in initial)]
    goal += [GoalLiteral(spelled(a), False, "reference plan")
             for a in sorted(initial - verdict.final_state) if a[0] == "turned-on"]
    return goal


def task_scene(task: Task, domain: Domain, use_reference: bool = True) -> TaskScene:
    """The scene of a task: objects, initial facts with provenance, goal (module docstring)."""
    observed = read_observation(task.obs)
    things, rooms, mapping = _collect_objects(task, observed, domain)
    facts = _catalogue_facts(things) + _observation_facts(task, observed, things, rooms, mapping)
    state = {f.atom for f in facts}
    goal, hints = instruction_goal(task.instruction, things, task.expected_objects)
    for item, place in hints:
        if affordances(item).pickupable and affordances(place).receptacle:
            facts += _location_facts(item, place, state, "instruction",
                                     f"the instruction: {task.instruction!r}")
    if use_reference:
        observed_state = {mapping.get(n.name, n.name).lower() for n in observed.nearby}
        facts, added = _explain_reference(task, domain, things, rooms, facts, observed_state)
        facts += added
    goal_source = "instruction" if goal else "none"
    if not goal and use_reference:
        goal = _reference_goal(task, domain, _problem(task, domain, things, rooms, facts, ()))
        goal_source = "reference" if goal else "none"
    unknown = tuple(sorted(t for t in things if not affordances(t).known))
    notes = tuple(f"unknown AI2-THOR type {t}: no affordances" for t in unknown)
    unique: dict[tuple, SceneFact] = {}
    for fact in facts:
        unique.setdefault(fact.atom, fact)
    return TaskScene(task=task, domain=task.domain, things=tuple(things), rooms=tuple(rooms),
                     facts=tuple(unique.values()), goal=tuple(goal), goal_source=goal_source,
                     unknown_types=unknown, notes=notes)


def scene_problem(scene: TaskScene, domain: Domain) -> Problem:
    return _problem(scene.task, domain, scene.things, scene.rooms, scene.facts, scene.goal)


def task_problem(task: Task, domain: Domain | str | None = None,
                 use_reference: bool = True) -> Problem:
    """The PDDL problem of a task in `domain` (a Domain, a registry name, or the task's own):
    the task's own problem, checked against the domain, or the one built from its scene."""
    if not isinstance(domain, Domain):
        from ..domains import load_domain
        domain = load_domain(domain or task.domain)
    if task.problem is not None:
        raise_first_error(check_problem(task.problem, domain))
        return task.problem
    return scene_problem(task_scene(task, domain, use_reference), domain)
