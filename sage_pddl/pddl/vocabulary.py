"""What sage-pddl reads from a domain beyond PDDL: `; @sage` annotations and the name rules.

This module is the one place that parses annotations or matches names; every layer asks it.

Annotations (docs/annotations.md), one per comment line `; @sage <kind> <arguments>`:

* `alias ACTION NAME...`: other names a plan step may use for ACTION.
* `fields NAME...`: the domain's steps are also written with named fields, `{"action",
  "object", "target"}` for `fields object target` (the household form): prompts and schemas show
  that form, and the parameters are filled by the fields in order. Without it, a step is
  `{"action", "args": [...]}`, with any number of arguments; that form is accepted everywhere.
* `step ACTION FIELDS...`: for each parameter of ACTION in order, the JSON step fields that fill
  it (`target|object`: the first non-empty one wins).
* `reason ACTION LITERAL CODE "MESSAGE"`: the violation code and message of a precondition
  literal (`?var` in the message becomes the step's object).
* `describe TEXT`: a sentence about the domain that opens planner prompts (several lines join).
* `synonym NAME WORD...`: each WORD is another name for the objects named NAME (the object
  NAME, or its instances `NAME_1`, ...), as the executor reads it (`TV` for `Television`).
  A word given for several names takes the first, in annotation order, that the problem has.

A malformed annotation is kept as the `PDDLSemanticError` it raises (`Vocabulary.error`), so
listing a domain still works and compiling a gate reports it; an unknown kind is listed in
`Vocabulary.unknown` (`check` warns about it).

Name rules:

* `name_key(name)`: how plan words compare with action and object names: case, whitespace, `_`
  and `-` ignored (`turn_on`, `Turn On` and `TurnOn` are one name).
* An action word names the action with that name (case-insensitive), else the action whose
  name or alias has the same `name_key`.
* An object word names the object with that name (case-insensitive), else the object with the
  same `name_key`, else the *instances* of that stem: an object named `Stem_N`, `Stem.N` or
  `Stem N` (N digits) is an instance of `Stem` (ALFWorld's `apple_1`, VirtualHome's
  `light.245`, iTHOR's `Cabinet_1`). Which instance a step acts on is the gate's decision.
* A word that names no object that way and is a `synonym` (by `name_key`) names what its
  name names. Nothing else: no close match, prefix or substring names an object.

`vocabulary(domain)` is cached per `Domain` object (annotations are excluded from a domain's
equality, so two domains differing only in comments must not share one).
"""
from __future__ import annotations

import re
import shlex
import weakref
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, NamedTuple, TypeVar

from .errors import PDDLSemanticError
from .model import Action, Annotation, Domain, Plan, PlanStep, Problem, effect_literals, key, walk
from .writer import write_formula

V = TypeVar("V")

KINDS = ("alias", "fields", "step", "reason", "describe", "synonym")
"""The annotation kinds sage-pddl reads."""

DEFAULT_FIELDS = ("object", "target")
"""The JSON step fields that fill an action's parameters in order when no `step` annotation
maps them (the household step form)."""

_LOOSE = re.compile(r"[\s_\-]+")
_INSTANCE = re.compile(r"^(?P<stem>.*?[^\s_.\-])[_.\s](?P<number>\d+)$")
_TOKEN = re.compile(r"\(|\)|[^\s()]+")


def name_key(name: object) -> str:
    """How plan words compare with names: case, whitespace, `_` and `-` ignored."""
    return _LOOSE.sub("", str(name or "")).lower()


def instance_stem(name: str) -> str | None:
    """`Cabinet_2` -> `Cabinet`, `light.245` -> `light`, `apple 1` -> `apple`; else None."""
    match = _INSTANCE.match(name.strip())
    return match.group("stem") if match else None


def canonical_sexpr(text: str) -> str:
    """Lower-case, single-spaced s-expression text: how annotation literals are matched."""
    out: list[str] = []
    for token in _TOKEN.findall(text.lower()):
        if out and token != ")" and out[-1] != "(":
            out.append(" ")
        out.append(token)
    return "".join(out)


@dataclass(frozen=True)
class Reason:
    """The code and message a `reason` annotation gives a precondition literal."""

    code: str
    message: str


def annotation_error(annotation: Annotation, message: str) -> PDDLSemanticError:
    return PDDLSemanticError(f"@sage {annotation.kind}: {message}", annotation.loc,
                             text=annotation.text)


class ReasonText(NamedTuple):
    """The words of a `reason` annotation, `Action <literal> code "message"`, as written."""

    action: str
    literal: str
    code: str
    message: str


def split_reason(annotation: Annotation) -> ReasonText:
    """`Action <literal> code "message"` -> its `ReasonText`."""
    text = annotation.text.strip()
    head, _, rest = text.partition(" ")
    rest = rest.lstrip()
    if not head or not rest:
        raise annotation_error(annotation, "expected: <Action> <literal> <code> \"<message>\"")
    if rest.startswith("("):
        depth = 0
        for i, ch in enumerate(rest):
            depth += ch == "("
            depth -= ch == ")"
            if depth == 0:
                literal, rest = rest[: i + 1], rest[i + 1:].strip()
                break
        else:
            raise annotation_error(annotation, "unbalanced parentheses in the literal")
    else:
        literal, _, rest = rest.partition(" ")
        rest = rest.strip()
    try:
        words = shlex.split(rest)
    except ValueError as error:
        raise annotation_error(annotation, f"cannot read code and message ({error})") from None
    if not words:
        raise annotation_error(annotation, "missing the code after the literal")
    return ReasonText(head, literal, words[0], " ".join(words[1:]))


class Vocabulary:
    """What one domain says beyond PDDL (see the module docstring). Build with `vocabulary`."""

    def __init__(self, domain: Domain):
        self.domain_name = domain.name
        self.actions: tuple[Action, ...] = domain.actions
        self._exact: dict[str, Action] = {}
        self._loose: dict[str, Action] = {}
        for action in domain.actions:
            self._exact.setdefault(key(action.name), action)
            self._loose.setdefault(name_key(action.name), action)
        self.aliases: dict[str, tuple[str, ...]] = {}
        """Action name (as declared) -> its alias names, in annotation order."""
        self.step_fields: dict[str, tuple[tuple[str, ...], ...]] = {}
        """key(action name) -> per parameter, the JSON fields that fill it (`step`)."""
        self.reasons: dict[tuple[str, str], Reason] = {}
        """(key(action name), canonical literal text) -> its `reason`."""
        self.synonyms: dict[str, tuple[str, ...]] = {}
        """`name_key` of a synonym word -> the names it stands for, in annotation order."""
        self.description = ""
        self.named_fields: tuple[str, ...] = ()
        """The step fields of the `fields` annotation; () when steps are written with `args`."""
        self.unknown: tuple[Annotation, ...] = ()
        self.error: PDDLSemanticError | None = None
        # id(node) -> (node, its canonical text): one per formula node of this domain asked
        # about (`canonical`); the node is held so that its id is not reused
        self._canon: dict[int, tuple[object, str]] = {}
        self._effect_predicates: frozenset[str] | None = None
        try:
            self._read(domain.annotations)
        except PDDLSemanticError as error:
            self.error = error

    # -- annotations ----------------------------------------------------------------------

    def _read(self, annotations: Iterable[Annotation]) -> None:
        unknown: list[Annotation] = []
        described: list[str] = []
        for annotation in annotations:
            kind = annotation.kind.lower()
            words = annotation.text.split()
            if kind == "alias":
                action = self._annotated(annotation, words[0] if words else "")
                names = list(self.aliases.get(action.name, ()))
                for alias in words[1:]:
                    self._loose.setdefault(name_key(alias), action)
                    if alias not in names:
                        names.append(alias)
                self.aliases[action.name] = tuple(names)
            elif kind == "fields":
                if not words or any(not re.fullmatch(r"[A-Za-z_]\w*", w) or w in ("action", "args")
                                    for w in words):
                    raise annotation_error(annotation, "expected field names, e.g. "
                                           "'fields object target'")
                self.named_fields = tuple(words)
            elif kind == "step":
                action = self._annotated(annotation, words[0] if words else "")
                fields = tuple(tuple(f for f in w.split("|") if f) for w in words[1:])
                if len(fields) != len(action.parameters):
                    raise annotation_error(
                        annotation, f"{action.name} has {len(action.parameters)} parameter(s) "
                        f"but the annotation maps {len(fields)}")
                self.step_fields[key(action.name)] = fields
            elif kind == "reason":
                action_name, literal, code, message = split_reason(annotation)
                action = self._annotated(annotation, action_name)
                wanted = canonical_sexpr(literal)
                if wanted not in {self.canonical(n) for n in walk(action.precondition)}:
                    raise annotation_error(
                        annotation, f"{literal} is not a precondition literal of {action.name}")
                self.reasons[(key(action.name), wanted)] = Reason(code, message)
            elif kind == "describe":
                described.append(annotation.text.strip())
            elif kind == "synonym":
                if len(words) < 2:
                    raise annotation_error(annotation, "expected: <Name> <word>..., e.g. "
                                           "'synonym Television TV'")
                for word in words[1:]:
                    meant = self.synonyms.get(name_key(word), ())
                    if words[0] not in meant:
                        self.synonyms[name_key(word)] = (*meant, words[0])
            else:
                unknown.append(annotation)
        self.description = " ".join(d for d in described if d)
        self.unknown = tuple(unknown)

    def _annotated(self, annotation: Annotation, name: str) -> Action:
        action = self._exact.get(key(name)) if name else None
        if action is None:
            raise annotation_error(annotation, f"unknown action {name!r}")
        return action

    def canonical(self, node: object, positive: bool = True) -> str:
        """Canonical text of a formula node (cached by identity; the entry keeps it alive)."""
        entry = self._canon.get(id(node))
        if entry is None or entry[0] is not node:
            entry = self._canon[id(node)] = (node, canonical_sexpr(write_formula(node)))
        return entry[1] if positive else f"(not {entry[1]})"

    def reason(self, action_name: str, texts: Iterable[str]) -> Reason | None:
        """The `reason` of the first of `texts` (canonical literal texts) that has one."""
        action_key = key(action_name)
        for text in texts:
            found = self.reasons.get((action_key, text))
            if found is not None:
                return found
        return None

    def reasons_of(self, action_name: str) -> list[Reason]:
        action_key = key(action_name)
        return [r for (a, _), r in self.reasons.items() if a == action_key]

    # -- actions --------------------------------------------------------------------------

    def action(self, word: str) -> Action | None:
        """The action a step's action word names (exact, then alias/loose), or None."""
        return self._exact.get(word.lower()) or self._loose.get(name_key(word))

    @property
    def action_keys(self) -> dict[str, str]:
        """`name_key` of every action name and alias -> the action's declared name."""
        return {word: action.name for word, action in self._loose.items()}

    def action_name(self, word: str) -> str:
        """The declared spelling of the action `word` names, else `word` stripped."""
        found = self.action(word)
        return found.name if found is not None else word.strip()

    def fields(self, action: Action) -> tuple[tuple[str, ...], ...] | None:
        """Per parameter of `action`, the JSON step fields that fill it (its `step`
        annotation), or None: then the non-empty values of `object`, `target` fill the
        parameters in that order."""
        return self.step_fields.get(key(action.name))

    def step_from_args(self, action_name: str, args: Sequence[str]) -> dict[str, str]:
        """The JSON step that fills `action_name`'s parameters with `args` in order: each
        argument goes to the first field its parameter's `step` annotation names, else to
        `object`, `target`, `arg2`, ... by position."""
        action = self.action(action_name)
        spelled = action.name if action is not None else action_name.strip()
        mapped = self.step_fields.get(key(spelled))
        fields = self.named_fields or DEFAULT_FIELDS
        step: dict[str, str] = {"action": spelled, **{name: "" for name in fields}}
        for index, value in enumerate(args):
            positional = fields[index] if index < len(fields) else f"arg{index}"
            name = mapped[index][0] if mapped and index < len(mapped) and mapped[index] else positional
            if step.get(name):  # two parameters mapped to one field: fall back to position
                name = positional
            step[name] = str(value)
        return step

    def uses_fields(self, action: Action) -> bool:
        """Whether prompts show `action`'s steps with named fields (see `fields`)."""
        return bool(self.named_fields) and (
            key(action.name) in self.step_fields
            or len(action.parameters) <= len(self.named_fields))

    def written_step(self, action_name: str, args: Sequence[str]) -> dict[str, Any]:
        """The step that applies `action_name` to `args`, in the form this domain's prompts
        show: named fields where `uses_fields`, else `{"action", "args"}`."""
        action = self.action(action_name)
        if action is not None and self.uses_fields(action) and len(args) == len(action.parameters):
            return self.step_from_args(action.name, args)
        spelled = action.name if action is not None else action_name.strip()
        return {"action": spelled, "args": [str(a) for a in args]}

    def written_plan(self, plan: Plan) -> list[dict[str, Any]]:
        """A classical plan's steps as JSON steps, each as `written_step` writes it."""
        return [self.written_step(step.action, step.args) for step in plan.steps]

    @property
    def effect_predicates(self) -> frozenset[str]:
        """Names (lower case) of the predicates some action can change: the dynamic ones."""
        if self._effect_predicates is None:
            self._effect_predicates = frozenset(
                key(atom.predicate) for action in self.actions
                for atom, _ in effect_literals(action.effect))
        return self._effect_predicates


class PerDomain(Generic[V]):
    """Values built from a `Domain` object, kept for as long as that very object lives.

    Keyed on `id(domain)` with a weak reference: an entry is used only while that object is
    alive (`ref() is domain`) and dropped by the reference's callback when it is collected, so a
    recycled id can never return another domain's value. Not keyed on the domain's hash: a
    frozen dataclass rehashes its whole tree on every call, and `Domain.annotations` is excluded
    from equality, so two domains that differ only in their `@sage` comments compare equal. A
    value must not hold the domain itself, or the cache would keep it alive."""

    def __init__(self, build: Callable[[Domain], V]) -> None:
        self._build = build
        self._entries: dict[int, tuple[weakref.ref[Domain], V]] = {}

    def __call__(self, domain: Domain) -> V:
        ident = id(domain)
        entry = self._entries.get(ident)
        if entry is not None and entry[0]() is domain:
            return entry[1]
        value = self._build(domain)
        entries = self._entries

        def forget(ref: weakref.ref[Domain], ident: int = ident) -> None:
            current = entries.get(ident)
            if current is not None and current[0] is ref:
                del entries[ident]

        entries[ident] = (weakref.ref(domain, forget), value)
        return value


vocabulary = PerDomain(Vocabulary)
"""`vocabulary(domain)`: the cached `Vocabulary` of this very `domain` object."""


class SynonymReading(NamedTuple):
    """What a synonym word stands for here (`ObjectNames.synonym`): the `name` it was read as
    and the keys of the `objects` that name names, in declaration order."""

    name: str
    objects: tuple[str, ...]


class ObjectNames:
    """The object words of one domain and problem: how a plan word names objects.

    `spelling` maps an object's key (lower case) to its declared spelling, constants first then
    the problem's objects, in declaration order.
    """

    def __init__(self, domain: Domain, problem: Problem | None):
        objects = tuple(domain.constants) + (tuple(problem.objects) if problem else ())
        self._synonyms = vocabulary(domain).synonyms
        self.spelling: dict[str, str] = {}
        self._loose: dict[str, str] = {}
        self._instances: dict[str, list[str]] = {}
        for typed in objects:
            name_lower = key(typed.name)
            if name_lower in self.spelling:
                continue
            self.spelling[name_lower] = typed.name
            self._loose.setdefault(name_key(typed.name), name_lower)
            stem = instance_stem(typed.name)
            if stem is not None:
                self._instances.setdefault(name_key(stem), []).append(name_lower)

    def exact(self, word: str) -> str | None:
        """The key of the object named `word` exactly (case-insensitive) or loosely."""
        lowered = word.strip().lower()
        if lowered in self.spelling:
            return lowered
        return self._loose.get(name_key(word))

    def candidates(self, word: str) -> tuple[str, ...]:
        """The keys of the objects `word` names: the object itself, else the instances of the
        stem `word`, in declaration order, else what the synonym `word` names (`synonym`);
        () when it names none."""
        found = self._named(word)
        if found:
            return found
        read = self.synonym(word)
        return read.objects if read else ()

    def _named(self, word: str) -> tuple[str, ...]:
        found = self.exact(word)
        if found is not None:
            return (found,)
        return tuple(self._instances.get(name_key(word), ()))

    def synonym(self, word: str) -> SynonymReading | None:
        """The name `word` stands for as a synonym, with its objects' keys: the first of its
        names that names objects here; None when `word` names objects itself, or is no
        synonym, or none of its names names an object here."""
        names = self._synonyms.get(name_key(word))
        if not names or self._named(word):
            return None
        for name in names:
            found = self._named(name)
            if found:
                return SynonymReading(name, found)
        return None

    def spell(self, word: str) -> str:
        """The declared spelling of the object `word` names (its first instance for a stem),
        else `word` stripped."""
        found = self.candidates(word)
        return self.spelling[found[0]] if len(found) == 1 else word.strip()


def step_words(step: PlanStep, action: Action | None, vocab: Vocabulary) -> tuple[str, ...]:
    """The argument words of a step: its `args` when it has no named fields, else its fields
    as the action's `step` annotation maps them (a parameter whose fields are all empty gives
    ""), else the non-empty values of `object` and `target` in that order."""
    if not step.fields:
        return step.args
    mapped = vocab.fields(action) if action is not None else None
    if mapped is None:
        return tuple(v for v in (step.field(f) for f in DEFAULT_FIELDS) if v)
    return tuple(next((step.field(n) for n in names if step.field(n)), "") for names in mapped)


def loose_step_words(step: PlanStep) -> tuple[str, ...]:
    """A step's argument words without a domain: its `args` when it has no named fields, else
    the non-empty values of its fields (`object`, `target`, ... in the order written;
    commentary such as `reason` excluded)."""
    if not step.fields:
        return step.args
    return tuple(value for name, value in step.fields if name not in NOT_ARGUMENTS and value)


NOT_ARGUMENTS = frozenset({"action", "args", "reason", "thought", "text", "id"})
"""The fields of a JSON step that are not its words: its action and commentary."""


def step_text(step: PlanStep) -> str:
    """`action word word ...`: a step in one line, for prompts, notes and reports."""
    return " ".join(w for w in (step.action, *loose_step_words(step)) if w)


def step_key(step: PlanStep) -> tuple[str, ...]:
    """What two steps share when they are the same step, whichever form each is written in:
    the action and argument words, lower case."""
    return tuple(step_text(step).lower().split())
