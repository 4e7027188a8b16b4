"""The instruction reader: a household instruction in English -> a goal over object types.

For tasks that come without a written goal (docs/goals.md). It reads the phrasings of the
bundled task sets and the common ALFRED and AI2-THOR ones, clause by clause:

    turn/switch on X, turn X on, X on         (turned-on X)
    turn/switch off X, turn X off, X off      (not (turned-on X))
    open X / close X, shut X                  (opened X) / (closed X)
    pick up X, take X, grab X, get X, retrieve X, fetch X      (holding X)
    put/place/set/hang/move/bring/take/carry X in|into|inside|on|onto|to Y
                                              (inside X Y) for a container Y, else (on X Y);
                                              "Y on|in Z" also places Y on|in Z
    put down X, put X away                    (not (holding X))
    heat/warm X, cool/chill X, cook X         (heated X), (cooled X), (cooked X)
    wash/rinse/clean X, slice/cut X           (cleaned X), (sliced X)
    fill X [with water|coffee|wine]           (filled X water|coffee|wine)
    sit [down] on X, lie [down] on X          (sat-on X), (lying-on X)
    examine/look at X under|by|with Y         (holding X) and (turned-on Y)

Clauses are split at commas, semicolons, "and", "then" and the like. A pronoun (it, them, one)
names the last object that suits its verb; "put X in Y and close it" ties the closed Y to the
one that holds X. An adjective of state on an object (a clean, heated, cold, sliced X) adds that
state to the same object. When an instruction is a summary followed by a dash or a colon and
its elaboration ("Watch TV — turn it on and sit on the sofa"), the elaboration is read if the
summary cannot be.

Object words are AI2-THOR types, the domain's other names for them (its `; @sage synonym`
annotations: TV, Stove, Nightstand) and the plain-English words that stand for one of several
types (`catalogue.EVERYDAY_WORDS`: lamp, table), settled by the task's objects.

The reader never guesses: an object word that names no AI2-THOR type, a verb it does not know,
or a place it cannot say in PDDL ("under the sink") leaves the clause unread, and an
instruction with an unread clause gets no goal (`Reading.goal` is None and `Reading.unread`
lists the clauses), so that success is never checked against half an instruction.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from ..domains import load_domain
from ..pddl.model import And, Atom, Constant, Domain, Exists, Formula, Not, Typed, Variable
from ..pddl.vocabulary import vocabulary
from ..pddl.writer import write_formula
from .catalogue import affordances, canonical_type, lookup

_SPLIT = re.compile(r"\s*(?:,|;|\u2014|\u2013|\s-\s|:|\.\s|\.$|\band then\b|\bthen\b|\band\b"
                    r"|\bafter that\b)\s*", re.IGNORECASE)
_ELABORATION = re.compile(r"\s*(?:\u2014|\u2013|\s-\s|:)\s*")
_LEAD = re.compile(r"^(?:first|next|finally|please|also|now|lastly)\b[\s,]*", re.IGNORECASE)
_ARTICLES = re.compile(r"^(?:the|a|an|some|your|one of the|any)\s+", re.IGNORECASE)
_ROOM_WORDS = re.compile(r"^(?:kitchen|bathroom|bedroom|living room|living-room)\s+",
                         re.IGNORECASE)
_PRONOUNS = {"it", "them", "one", "this", "that"}
_LIQUIDS = {"water": "water", "coffee": "coffee", "wine": "wine"}
_STATE_WORDS = {"clean": "cleaned", "washed": "cleaned", "rinsed": "cleaned",
                "hot": "heated", "heated": "heated", "warm": "heated", "warmed": "heated",
                "cold": "cooled", "chilled": "cooled", "cooled": "cooled",
                "cooked": "cooked", "sliced": "sliced", "cut": "sliced"}
_PLACE_VERBS = r"(?:put|place|set|hang|move|bring|take|carry|leave|store|drop)"
_PREPOSITION = r"(?:on\s+top\s+of|onto|into|inside(?:\s+of)?|in|on|to)"

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (kind, re.compile(rx, re.IGNORECASE)) for kind, rx in (
        ("on", r"^(?:turn|switch)\s+on\s+(?P<x>.+)$"),
        ("on", r"^(?:turn|switch)\s+(?P<x>.+?)\s+on$"),
        ("on", r"^(?P<x>.+?)\s+on$"),
        ("off", r"^(?:turn|switch)\s+off\s+(?P<x>.+)$"),
        ("off", r"^(?:turn|switch)\s+(?P<x>.+?)\s+off$"),
        ("off", r"^(?P<x>.+?)\s+off$"),
        ("open", r"^open\s+(?P<x>.+)$"),
        ("close", r"^(?:close|shut)\s+(?P<x>.+)$"),
        ("examine", r"^(?:examine|look\s+at|inspect|read)\s+(?P<x>.+?)\s+"
                    r"(?:under|by|with|using|in\s+the\s+light\s+of)\s+(?P<y>.+)$"),
        ("place", rf"^{_PLACE_VERBS}\s+(?P<x>.+?)\s+{_PREPOSITION}\s+(?P<y>.+)$"),
        ("putdown", r"^(?:put|set|place)\s+down\s+(?P<x>.+)$"),
        ("putdown", r"^(?:put|set|place)\s+(?P<x>.+?)\s+(?:down|away)$"),
        ("pick", r"^(?:pick\s+up|pick|take|grab|get|retrieve|fetch|collect)\s+(?P<x>.+?)"
                 r"(?:\s+up)?(?:\s+from\s+(?P<y>.+))?$"),
        ("fill", r"^fill(?:\s+up)?\s+(?P<x>.+?)(?:\s+with\s+(?P<liquid>\w+))?"
                 r"(?:\s+(?:from|at)\s+(?P<y>.+))?$"),
        ("sit", r"^sit(?:\s+down)?\s+on\s+(?P<x>.+)$"),
        ("lie", r"^lie(?:\s+down)?\s+on\s+(?P<x>.+)$"),
        ("heat", r"^(?:heat|warm)(?:\s+up)?\s+(?P<x>.+?)(?:\s+(?:in|on|with|using)\s+(?P<y>.+))?$"),
        ("cool", r"^(?:cool|chill)\s+(?P<x>.+?)(?:\s+(?:in|with|using)\s+(?P<y>.+))?$"),
        ("cook", r"^cook\s+(?P<x>.+?)(?:\s+(?:in|on|with|using)\s+(?P<y>.+))?$"),
        ("clean", r"^(?:wash|rinse|clean)(?:\s+off|\s+up)?\s+(?P<x>.+?)"
                  r"(?:\s+(?:in|at|with|using|under)\s+(?P<y>.+))?$"),
        ("slice", r"^(?:slice|cut)\s+(?P<x>.+?)(?:\s+(?:with|using)\s+(?P<y>.+))?$"),
    ))

_NEEDS = {"on": "toggleable", "off": "toggleable", "open": "openable", "close": "openable",
          "pick": "pickupable", "place": "pickupable", "putdown": "pickupable",
          "heat": "pickupable", "cool": "pickupable", "cook": "pickupable",
          "clean": "pickupable", "slice": "pickupable", "fill": "pickupable",
          "examine": "pickupable", "sit": "sittable", "lie": "lieable"}
_STATE_OF = {"heat": "heated", "cool": "cooled", "cook": "cooked", "clean": "cleaned",
             "slice": "sliced"}


class _Unread(Exception):
    """A clause the reader cannot read without guessing."""


@dataclass(frozen=True)
class Reading:
    """What the reader made of an instruction: the goal (None when a clause is unread), each
    clause with the PDDL it read, and the unread clauses."""

    goal: Formula | None
    clauses: tuple[tuple[str, str], ...] = ()
    unread: tuple[str, ...] = ()
    note: str = ""


@dataclass
class _State:
    prefer: tuple[str, ...]
    synonyms: Mapping[str, tuple[str, ...]]
    parts: list[Formula] = field(default_factory=list)
    mentioned: list[str] = field(default_factory=list)
    placed: dict[str, tuple[str, str]] = field(default_factory=dict)
    """item -> (relation, receptacle) of the last placement of the item."""


def _atom(predicate: str, *names: str) -> Atom:
    return Atom(predicate, tuple(Constant(n) for n in names))


class _Reader:
    def __init__(self, prefer: Iterable[str], synonyms: Mapping[str, tuple[str, ...]]):
        self.state = _State(tuple(prefer), synonyms)

    def type_of(self, words: str) -> str:
        return canonical_type(words, self.state.prefer, self.state.synonyms)

    # -- noun phrases --------------------------------------------------------------------

    def obj(self, phrase: str | None, need: str | None = None) -> tuple[str, list[str]]:
        """The AI2-THOR type a noun phrase names and the states its adjectives give."""
        if phrase is None:
            raise _Unread
        text = phrase.strip().strip(".!?").strip()
        text = _ARTICLES.sub("", text)
        words = text.split()
        states: list[str] = []
        while words and words[0].lower() in _STATE_WORDS:
            states.append(_STATE_WORDS[words.pop(0).lower()])
        text = _ROOM_WORDS.sub("", " ".join(words))
        if text.lower() in _PRONOUNS:
            return self.antecedent(need), states
        if not text or not re.fullmatch(r"[A-Za-z][A-Za-z \-_]*", text):
            raise _Unread
        name = self.type_of(text)
        if lookup(name) is None:
            raise _Unread
        self.state.mentioned.append(name)
        return name, states

    def note_mentions(self, clause: str) -> None:
        """Remember the types an unread clause names, for a later pronoun ("watch TV — turn
        it on")."""
        words = re.findall(r"[A-Za-z]+", clause)
        for size in (3, 2, 1):
            for i in range(len(words) - size + 1):
                name = self.type_of(" ".join(words[i:i + size]))
                if lookup(name) is not None:
                    self.state.mentioned.append(name)

    def antecedent(self, need: str | None) -> str:
        for name in reversed(self.state.mentioned):
            if need is None or getattr(affordances(name), need, False):
                return name
        raise _Unread

    def receptacle(self, phrase: str) -> tuple[str, tuple[str, str] | None]:
        """`Y` or `Y on|in Z`: the receptacle, and where it stands itself."""
        nested = re.match(rf"^(?P<y>.+?)\s+{_PREPOSITION}\s+(?P<z>.+)$", phrase, re.IGNORECASE)
        if nested:
            y, _ = self.obj(nested["y"], "receptacle")
            z, _ = self.obj(nested["z"], "receptacle")
            return y, (self.relation(z), z)
        y, _ = self.obj(phrase, "receptacle")
        return y, None

    @staticmethod
    def relation(receptacle: str) -> str:
        return "inside" if affordances(receptacle).container else "on"

    # -- clauses -------------------------------------------------------------------------

    def clause(self, text: str) -> list[Formula]:
        for kind, pattern in _PATTERNS:
            match = pattern.match(text)
            if match is None:
                continue
            try:
                return self.read(kind, match)
            except _Unread:
                continue
        raise _Unread

    def read(self, kind: str, match: re.Match[str]) -> list[Formula]:
        x, states = self.obj(match["x"], _NEEDS.get(kind))
        out: list[Formula] = [_atom(state, x) for state in states]
        groups = match.groupdict()
        if kind == "on":
            out.append(_atom("turned-on", x))
        elif kind == "off":
            out.append(Not(_atom("turned-on", x)))
        elif kind == "open":
            out.append(_atom("opened", x))
        elif kind == "close":
            placed = [(item, rel) for item, (rel, where) in self.state.placed.items()
                      if where == x]
            if placed and len(placed) == 1 and match["x"].strip().lower() in _PRONOUNS:
                item, rel = placed[0]  # closed is the one that holds the item
                out.append(Exists((Typed("r", (x,)),), And((
                    Atom(rel, (Constant(item), Variable("r"))), Atom("closed", (Variable("r"),))))))
            else:
                out.append(_atom("closed", x))
        elif kind == "pick":
            out.append(_atom("holding", x))
        elif kind == "putdown":
            out.append(Not(_atom("holding", x)))
        elif kind == "place":
            y, below = self.receptacle(match["y"])
            if y == x:
                raise _Unread
            relation = self.relation(y)
            self.state.placed[x] = (relation, y)
            if states:  # a clean X on Y: the same X
                tied: list[Formula] = [And((*out, _atom(relation, x, y)))]
                return tied + ([_atom(below[0], y, below[1])] if below else [])
            out.append(_atom(relation, x, y))
            if below:
                out.append(_atom(below[0], y, below[1]))
        elif kind == "examine":
            y, _ = self.obj(match["y"], "toggleable")
            out += [_atom("holding", x), _atom("turned-on", y)]
        elif kind == "fill":
            liquid = _LIQUIDS.get((groups.get("liquid") or "water").lower())
            if liquid is None:
                raise _Unread
            out.append(_atom("filled", x, liquid))
        elif kind in _STATE_OF:
            out.append(_atom(_STATE_OF[kind], x))
            where = groups.get("y")
            if where and kind != "clean":  # "heat X in the microwave": X goes there
                y, _ = self.obj(where, None)
                if kind != "slice":
                    self.state.placed.setdefault(x, (self.relation(y), y))
        elif kind == "sit":
            out.append(_atom("sat-on", x))
        elif kind == "lie":
            out.append(_atom("lying-on", x))
        return out


def _clauses(text: str) -> list[str]:
    out = []
    for piece in _SPLIT.split(text or ""):
        piece = _LEAD.sub("", piece.strip()).strip()
        if piece:
            out.append(piece)
    return out


def read_instruction(text: str, prefer: Iterable[str] = (),
                     domain: Domain | None = None) -> Reading:
    """The goal an instruction states (module docstring). `prefer` (the scene's object types)
    settles a word with several AI2-THOR types ("lamp": DeskLamp or FloorLamp); `domain` (the
    household domain the goal is for, `ithor` when not given) gives the object synonyms."""
    pieces = _ELABORATION.split(text or "", maxsplit=1)
    summary, elaboration = (pieces[0], pieces[1]) if len(pieces) == 2 else ("", pieces[0])
    reader = _Reader(prefer, vocabulary(domain or load_domain("ithor")).synonyms)
    clauses: list[tuple[str, str]] = []
    unread: list[tuple[bool, str]] = []
    read_parts: list[tuple[bool, Formula]] = []
    for in_summary, piece in ((True, summary), (False, elaboration)):
        for clause in _clauses(piece):
            try:
                parts = reader.clause(clause)
            except _Unread:
                reader.note_mentions(clause)
                unread.append((in_summary, clause))
                clauses.append((clause, ""))
                continue
            read_parts += [(in_summary, p) for p in parts]
            clauses.append((clause, " ".join(write_formula(p) for p in parts)))
    note = ""
    if unread and summary and all(s for s, _ in unread) and any(not s for s, _ in read_parts):
        note = f"read the elaboration after {summary.strip()!r}"
        read_parts = [(s, p) for s, p in read_parts if not s]
        unread = []
    if unread or not read_parts:
        return Reading(None, tuple(clauses), tuple(c for _, c in unread) or (text.strip(),))
    parts = [p for _, p in read_parts]
    placed = {p.args[0].name.lower() for p in parts
              if isinstance(p, Atom) and p.predicate in ("on", "inside")
              and isinstance(p.args[0], Constant)}
    kept = [p for p in parts if not (isinstance(p, Atom) and p.predicate == "holding"
                                     and isinstance(p.args[0], Constant)
                                     and p.args[0].name.lower() in placed)]
    unique = tuple(dict.fromkeys(kept))
    return Reading(unique[0] if len(unique) == 1 else And(unique), tuple(clauses), (), note)
