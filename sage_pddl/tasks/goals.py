"""Task goals as reviewed data: one PDDL goal per task, written by a person from the instruction.

A goals file is TOML, one table per task id::

    [K19]
    instruction = "Put the apple in the cabinet and close it"
    goal = '''
    (and (exists (?c - Cabinet) (inside Apple ?c))
         (forall (?c - Cabinet) (imply (inside Apple ?c) (closed ?c))))'''
    note = "how an ambiguous instruction was read (optional, one line)"
    infeasible = "why the task's scene cannot reach the goal (optional, one line)"

`instruction` repeats the task's instruction so that a reviewer reads the two side by side (a
test holds it equal to the task set's). The bundled sets' goals are `data/sage/goals/*.toml`
(`bundled_goals`); docs/goals.md states the rules they follow.

Names in a goal are object *types* (AI2-THOR's `Apple`, `Cabinet`), as an instruction names
them, because how many instances a scene has is the problem builder's business, not the goal
writer's. `compile_goal` turns a written goal into the PDDL goal of one scene:

* a type with one instance in the scene names that object;
* a type with several instances, named in a top-level conjunct, means *some* instance: the
  conjunct becomes a disjunction over the instances, every mention of the type inside that
  conjunct being the same instance (`(and (on Plate DiningTable) ...)`: some plate);
* a type with several instances named only inside a `(not F)` of the conjunct is chosen
  inside the negation: `(not (turned-on StoveBurner))` is "not (some burner is on)", every
  burner off, compiled to a conjunction of negations (a goal that is this one condition is
  the only conjunct of an `and`, so goal-condition success still counts one condition);
* `(exists (?v - Type) F)` and `(forall (?v - Type) F)` with a type the domain does not declare
  range over that type's instances and become a disjunction or conjunction of copies of `F`,
  which is how a goal ties two mentions together ("put the apple in the cabinet and close
  it"); a variable of a domain type (`thing`) stays a PDDL quantifier.

The compiled goal keeps the written goal's top-level conjuncts one for one, so goal-condition
success (the fraction of top-level conjuncts met) counts what the writer wrote.

A task marked `infeasible` cannot be done in its scene (its scene lacks an object type the
goal names, or AI2-THOR cannot produce a state it asks for): the reason is reported with the
problem, in benchmark rows and in the report, which leaves such tasks out of success rates.
A sliced type (`BreadSliced`, `EggCracked`: catalogue.SLICED_TYPES) names an object of the type
it is made from once sliced, as AI2-THOR renames it: `(inside BreadSliced Toaster)` is some
Bread inside the toaster that is `(sliced ...)`, where the scene has no BreadSliced object.
A goal naming a type the scene lacks compiles only for such a task (`absent`), each top-level
conjunct that names it becoming `(or)`, which never holds.
"""
from __future__ import annotations

import itertools
import logging
import re
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from ..pddl.errors import PDDLError, PDDLSemanticError, PDDLSyntaxError
from ..pddl.limits import read_text
from ..pddl.model import (
    And,
    Atom,
    Constant,
    Domain,
    Equals,
    Exists,
    Forall,
    Formula,
    Imply,
    Location,
    Not,
    Or,
    Term,
    Typed,
    Variable,
    key,
    walk,
)
from ..pddl.parser import parse_problem
from . import catalogue
from .taskset import Task, TaskSetError, json_tasks

log = logging.getLogger(__name__)

GOAL_FILES: dict[str, str] = {"ithor": "ithor.toml", "ithor-gt": "ithor.toml",
                              "compound": "ithor.toml", "procthor": "procthor.toml"}
"""Bundled task set -> its goals file in `data/sage/goals/` (ithor-gt is ithor's first 38; a
compound task's goal is made of its ithor members' goals)."""

_FIELDS = {"instruction", "goal", "note", "infeasible"}
_HEADER = re.compile(r"^\s*\[\s*\"?(?P<id>[^\]\"]+?)\"?\s*\]\s*(?:#.*)?$")
_GOAL_LINE = re.compile(r"^\s*goal\s*=\s*(?P<quote>'''|\"\"\"|'|\")?")


@dataclass(frozen=True)
class GoalSpec:
    """One task's goal as written: `goal` is the formula over type names (`compile_goal` makes
    it the goal of a scene); `where` locates its text for error messages."""

    task_id: str
    instruction: str
    text: str
    goal: Formula
    note: str = ""
    where: Location | None = None
    infeasible: str = ""
    """Why the task's scene cannot reach the goal; "" for a feasible task."""


def _goal_lines(text: str) -> dict[str, int]:
    """Task id (lower case) -> the 1-based line where its goal's text starts."""
    lines: dict[str, int] = {}
    current: str | None = None
    for number, line in enumerate(text.splitlines(), 1):
        header = _HEADER.match(line)
        if header:
            current = header["id"].strip().lower()
            continue
        match = _GOAL_LINE.match(line)
        if match and current is not None and current not in lines:
            quote = match["quote"] or ""
            rest = line[match.end():]
            lines[current] = number + 1 if len(quote) == 3 and not rest.strip() else number
    return lines


def parse_goal(text: str, where: Location | None = None) -> Formula:
    """A goal formula from its PDDL text; a PDDLError located in the text's own file and line
    (`where` is where the text starts)."""
    _check_parentheses(text, where)
    wrapped = "(define (problem goal) (:domain goal) (:init) (:goal\n" + text + "\n))"
    try:
        return parse_problem(wrapped).goal
    except PDDLError as error:
        loc = error.loc
        if where is not None and loc is not None:
            line = where.line + loc.line - 2
            loc = Location(where.file, line, loc.column)
        raise type(error)(error.message, loc, error.text, error.expected,
                          error.source_line) from None


def _check_parentheses(text: str, where: Location | None) -> None:
    """A PDDLSyntaxError at the unmatched parenthesis of a goal's text (the goal is parsed
    inside a wrapper, whose positions would mean nothing to the writer)."""
    open_at: list[tuple[int, int]] = []
    lines = text.splitlines() or [""]
    for number, line in enumerate(lines, 1):
        for column, char in enumerate(line.split(";", 1)[0], 1):
            if char == "(":
                open_at.append((number, column))
            elif char == ")" and not open_at:
                raise _goal_error("')' closes nothing", number, column, line, where)
            elif char == ")":
                open_at.pop()
    if open_at:
        number, column = open_at[-1]
        raise _goal_error("this '(' is never closed", number, column, lines[number - 1], where)


def _goal_error(message: str, line: int, column: int, source: str,
                where: Location | None) -> PDDLSyntaxError:
    first = where.line if where is not None else 1
    loc = Location(where.file if where is not None else None, first + line - 1, column)
    return PDDLSyntaxError(f"goal: {message}", loc, source_line=source)


def load_goals(path: str | Path) -> dict[str, GoalSpec]:
    """The goals of a goals file, by task id (lower case)."""
    path = Path(path)
    text = read_text(path, "the goals file")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise TaskSetError(f"{path}: not a goals file ({error})") from None
    lines = _goal_lines(text)
    goals: dict[str, GoalSpec] = {}
    for task_id, entry in data.items():
        if not isinstance(entry, Mapping):
            raise TaskSetError(f"{path}: {task_id!r} must be a table [{task_id}] with a goal")
        unknown = set(entry) - _FIELDS
        if unknown:
            raise TaskSetError(f"{path}: [{task_id}] has unknown field(s) "
                               f"{', '.join(sorted(unknown))} (fields: {', '.join(sorted(_FIELDS))})")
        goal_text = entry.get("goal")
        if not isinstance(goal_text, str) or not goal_text.strip():
            raise TaskSetError(f"{path}: [{task_id}] needs goal = \"(PDDL formula)\"")
        infeasible = entry.get("infeasible", "")
        if not isinstance(infeasible, str):
            raise TaskSetError(f"{path}: [{task_id}] infeasible must be the reason, a string")
        where = Location(str(path), lines.get(task_id.lower(), 1), 1)
        goals[task_id.lower()] = GoalSpec(
            task_id=task_id, instruction=str(entry.get("instruction", "")),
            text=goal_text.strip(), goal=parse_goal(goal_text, where),
            note=str(entry.get("note", "")), where=where,
            infeasible=infeasible.strip())
    return goals


def goals_dir() -> Path:
    """The bundled goals folder (`sage_pddl/data/sage/goals`)."""
    return Path(str(resources.files("sage_pddl") / "data" / "sage" / "goals"))


_BUNDLED_CACHE: dict[str, dict[str, GoalSpec]] = {}
"""Goals file -> its reviewed goals (`bundled_goals`), read once: one entry per file of
`GOAL_FILES`."""


def bundled_goals(set_name: str) -> dict[str, GoalSpec]:
    """The reviewed goals of a bundled task set (empty for a set without a goals file)."""
    file = GOAL_FILES.get(set_name.lower())
    if file is None:
        return {}
    if file not in _BUNDLED_CACHE:
        _BUNDLED_CACHE[file] = load_goals(goals_dir() / file)
    return _BUNDLED_CACHE[file]


def _same_text(a: str, b: str) -> bool:
    return a.split() == b.split()


_BUNDLED_TASKS: dict[str, dict[str, Task]] = {}
"""Bundled set name -> its tasks by id (lower case), read once."""
_WARNED: set[tuple[str, str]] = set()
"""(task file, message) pairs `warn_once` has logged: one per distinct warning of the task
files the process read."""


def warn_once(task: Task, message: str) -> None:
    """Log a warning about a task once per task file and message (a set is read many times)."""
    if (task.source, message) not in _WARNED:
        _WARNED.add((task.source, message))
        log.warning(message)


def bundled_task_goals(task: Task) -> Mapping[str, GoalSpec]:
    """The reviewed goals for a task read from a file that is not a bundled set (a copy of a
    bundled task file, or a set made from some of its tasks): the goals of the bundled set
    that has the same task, the same task id with the same instruction (words compared, not
    spaces) and, for a compound task, the same members. {} when no bundled set has the task;
    when one has its id with another instruction or other members, a warning says which and
    why its goal is not taken."""
    for set_name in GOAL_FILES:
        tasks = _BUNDLED_TASKS.get(set_name)
        if tasks is None:
            tasks = _BUNDLED_TASKS[set_name] = {t.task_id.lower(): t
                                                for t in json_tasks(set_name)}
        bundled = tasks.get(task.task_id.lower())
        if bundled is None:
            continue
        if _same_text(bundled.instruction, task.instruction) and \
                [m.lower() for m in bundled.members] == [m.lower() for m in task.members]:
            return bundled_goals(set_name)
        differs = (f"its instruction is {task.instruction!r}, the bundled task's "
                   f"{bundled.instruction!r}"
                   if not _same_text(bundled.instruction, task.instruction) else
                   f"its members are {', '.join(task.members) or 'none'}, the bundled "
                   f"task's {', '.join(bundled.members) or 'none'}")
        message = (f"task {task.task_id} of {task.source}: not the bundled task "
                   f"{set_name}#{bundled.task_id} ({differs}), so that task's reviewed goal "
                   "is not used")
        warn_once(task, message)
        return {}
    return {}


# --- compiling a written goal for one scene ------------------------------------------------

def _constants(node: object) -> list[str]:
    """The constant names a formula mentions, first mention first."""
    found: dict[str, str] = {}
    for item in walk(node):
        args = (item.args if isinstance(item, Atom) else
                (item.left, item.right) if isinstance(item, Equals) else ())
        for arg in args:
            if isinstance(arg, Constant):
                found.setdefault(key(arg.name), arg.name)
    return list(found.values())


def _constants_outside_negation(node: Formula) -> list[str]:
    """The constant names a formula mentions outside every `not`, first mention first."""
    if isinstance(node, Not):
        return []
    if isinstance(node, (Atom, Equals)):
        return _constants(node)
    parts: tuple[Formula, ...] = (
        node.parts if isinstance(node, (And, Or)) else
        (node.antecedent, node.consequent) if isinstance(node, Imply) else
        (node.body,) if isinstance(node, (Exists, Forall)) else ())
    return list(dict.fromkeys(name for part in parts
                              for name in _constants_outside_negation(part)))


def goal_names(goal: Formula, domain: Domain) -> list[str]:
    """The object types a written goal needs in the scene: the names it mentions (the domain's
    constants aside) and the types its quantifiers range over (the domain's types aside),
    first mention first."""
    domain_types = {key(t.name) for t in domain.types} | {"object"}
    constants = {key(c.name) for c in domain.constants}
    names = {key(n): n for n in _constants(goal) if key(n) not in constants}
    for item in walk(goal):
        if isinstance(item, (Exists, Forall)):
            for variable in item.variables:
                for type_name in variable.types:
                    if key(type_name) not in domain_types:
                        names.setdefault(key(type_name), type_name)
    return list(names.values())


_WHOLE_TYPES: dict[str, str] = {key(sliced): whole
                                for whole, sliced in catalogue.SLICED_TYPES.items()}
"""Sliced type -> the type it is made from (`breadsliced` -> `Bread`)."""


def whole_types(names: Iterable[str]) -> list[str]:
    """`names` (a goal's type names) with each sliced type as the type it is made from: the
    objects a goal naming `BreadSliced` needs are Breads (`_Compiler.whole`)."""
    return list(dict.fromkeys(_WHOLE_TYPES.get(key(n), n) for n in names))


class _Compiler:
    """See `compile_goal`."""

    def __init__(self, instances: Mapping[str, tuple[str, ...]], domain: Domain,
                 where: Location | None, absent: Iterable[str] = ()):
        self.instances = {key(t): tuple(names) for t, names in instances.items()}
        self.absent = {key(t) for t in absent} - set(self.instances)
        self.domain_types = {key(t.name) for t in domain.types} | {"object"}
        self.constants = {key(c.name) for c in domain.constants}
        self.where = where
        self.domain = domain

    def whole(self, type_name: str) -> str | None:
        """The type whose sliced objects `type_name` names (`BreadSliced` -> `Bread`,
        `EggCracked` -> `Egg`: catalogue.SLICED_TYPES) when the scene has no object of
        `type_name` itself but has that type, else None."""
        if key(type_name) in self.instances:
            return None
        whole = _WHOLE_TYPES.get(key(type_name))
        return whole if whole is not None and self.instances.get(key(whole)) else None

    def objects_of(self, type_name: str) -> tuple[str, ...]:
        whole = self.whole(type_name)
        found = self.instances.get(key(whole or type_name))
        if not found:
            raise PDDLSemanticError(
                f"the goal names {type_name}, which is not an object type of the scene (a task "
                "whose scene lacks it is marked infeasible = \"reason\" in its goals file)",
                self.where)
        return found

    def several(self, names: Iterable[str], bound: Mapping[str, str]) -> list[str]:
        """The names among `names` of types with several instances, not bound yet."""
        return [name for name in names if key(name) not in self.constants
                and key(name) not in bound and len(self.objects_of(name)) > 1]

    def some(self, node: Formula, names: list[str], bound: Mapping[str, str]) -> Formula:
        """`node` for some instance of each type in `names` (one disjunction, each mention
        of a type the same instance)."""
        if not names:
            return self.formula(node, bound)
        choices = [self.objects_of(name) for name in names]
        options = tuple(self.formula(node, {**bound, **dict(zip(map(key, names), combo))})
                        for combo in itertools.product(*choices))
        return options[0] if len(options) == 1 else Or(options)

    def top(self, part: Formula) -> Formula:
        """One top-level conjunct: the several-instance type names it mentions outside every
        negation become one disjunction over their instances (those mentioned only under a
        negation are chosen inside it: `formula`); a conjunct that names an absent type never
        holds."""
        if any(key(name) in self.absent for name in goal_names(part, self.domain)):
            return Or(())
        return self.some(part, self.several(_constants_outside_negation(part), {}), {})

    def term(self, term: Term, bound: Mapping[str, str]) -> Term:
        if isinstance(term, Variable) and "?" + key(term.name) in bound:
            return Constant(bound["?" + key(term.name)])
        if isinstance(term, Constant):
            name = key(term.name)
            if name in bound:
                return Constant(bound[name])
            if name in self.constants:
                return term
            return Constant(self.objects_of(term.name)[0])
        return term

    def formula(self, node: Formula, bound: Mapping[str, str]) -> Formula:
        if isinstance(node, Atom):
            atom = Atom(node.predicate, tuple(self.term(a, bound) for a in node.args))
            # a sliced type names an object of its whole type once sliced, as AI2-THOR
            # renames it: (inside BreadSliced Toaster) is a Bread inside it that is sliced
            sliced = tuple(Atom("sliced", (new,)) for old, new in zip(node.args, atom.args)
                           if isinstance(old, Constant) and self.whole(old.name) is not None)
            return And((atom, *sliced)) if sliced else atom
        if isinstance(node, Equals):
            return Equals(self.term(node.left, bound), self.term(node.right, bound))
        if isinstance(node, Not):
            # a type named only under the negation is chosen inside it: "not (some burner is
            # on)", written as "every burner is not on"
            inner = self.some(node.arg, self.several(_constants(node.arg), bound), bound)
            if isinstance(inner, Or):
                return And(tuple(Not(option) for option in inner.parts))
            return Not(inner)
        if isinstance(node, And):
            return And(tuple(self.formula(p, bound) for p in node.parts))
        if isinstance(node, Or):
            return Or(tuple(self.formula(p, bound) for p in node.parts))
        if isinstance(node, Imply):
            return Imply(self.formula(node.antecedent, bound),
                         self.formula(node.consequent, bound))
        if isinstance(node, (Exists, Forall)):
            return self.quantifier(node, bound)
        raise PDDLSemanticError(f"a goal cannot hold {type(node).__name__}", self.where)

    def quantifier(self, node: Exists | Forall, bound: Mapping[str, str]) -> Formula:
        kept: list[Typed] = []
        ranges: list[tuple[str, tuple[str, ...]]] = []
        for variable in node.variables:
            types = [t for t in variable.types if key(t) not in self.domain_types]
            if not types:
                kept.append(variable)
                continue
            if len(types) != len(variable.types) or len(types) > 1:
                raise PDDLSemanticError(
                    f"?{variable.name} ranges over {' '.join(variable.types)}: a goal variable "
                    "ranges over one object type, or over domain types only", self.where)
            ranges.append(("?" + key(variable.name), self.objects_of(types[0])))
        copies = []
        for combo in itertools.product(*(objects for _, objects in ranges)):
            inner = {**bound, **{name: obj for (name, _), obj in zip(ranges, combo)}}
            copies.append(self.formula(node.body, inner))
        joined: Formula = (copies[0] if len(copies) == 1 else
                           Or(tuple(copies)) if isinstance(node, Exists) else And(tuple(copies)))
        if not kept:
            return joined
        return (Exists if isinstance(node, Exists) else Forall)(tuple(kept), joined)


def flat_goal(goal: Formula) -> Formula:
    """`goal` with every conjunction among its top-level conjuncts spliced in and repeats
    dropped, in order: the goal the instruction reader's tied clauses compile to where the
    container has one instance ("put X in the fridge and close it": `(and (inside X Fridge)
    (closed Fridge))`, not the placement once more inside the tie), so each condition is
    counted once. Written goals keep their conjuncts one for one instead (module docstring)."""
    parts: list[Formula] = []

    def add(node: Formula) -> None:
        if isinstance(node, And):
            for part in node.parts:
                add(part)
        elif node not in parts:
            parts.append(node)
    add(goal)
    return parts[0] if len(parts) == 1 else And(tuple(parts))


def compile_goal(goal: Formula, instances: Mapping[str, Iterable[str]], domain: Domain,
                 where: Location | None = None, absent: Iterable[str] = ()) -> Formula:
    """The PDDL goal of one scene from a written goal (module docstring). `instances` maps
    each object type of the scene to its objects' names (one name: the object is the type);
    `absent` names types the scene lacks, whose conjuncts compile to `(or)` (an infeasible
    task's); any other type the scene lacks is an error."""
    compiler = _Compiler({t: tuple(names) for t, names in instances.items()}, domain, where,
                         absent)
    parts = goal.parts if isinstance(goal, And) else (goal,)
    compiled = tuple(compiler.top(part) for part in parts)
    # one written condition stays one condition: a goal that is not a conjunction but
    # compiles to one ("every burner off") is the only conjunct of the goal
    return And(compiled) if isinstance(goal, And) or isinstance(compiled[0], And) else compiled[0]
