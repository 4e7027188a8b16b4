"""Transition logs: one JSON line per executed step (the input of `sage-pddl induce`).

Every environment given a log path appends one record per `step` call, written and flushed as
soon as the step finishes, so a crashed run keeps every transition up to the crash. A record:

    {"v": 1,
     "task": "ithor#K01",            # task id or problem name of the episode
     "env": "symbolic",               # environment that executed the step
     "domain": "ithor",               # domain name
     "episode": 0,                    # reset counter of the writing environment (0-based)
     "step": 3,                       # 0-based attempt number inside the episode
     "action": {"action": "Pick", "args": ["Apple"], "text": "Pick Apple"},
     "pre":  ["(hand-empty)", "(reachable apple)", ...],   # true state before the step
     "success": true,
     "code": null,                    # reason code on failure (gate code, injected-failure, ...)
     "message": "ok",                 # executor message; the failure reason otherwise
     "post": ["(holding apple)", ...],                     # true state after the step
     "unknown": ["(opened fridge)"],  # optional: facts not observed before the step
     "ts": 1732240000.123}            # wall-clock time (seconds since the epoch)

Facts are PDDL ground atoms in lower case, `(predicate arg ...)`, sorted. `pre`/`post` are the
state as the environment knows it: the symbolic environment's true state (including facts the
planner cannot see); for AI2-THOR the domain-level state tracked from the simulator's reports.
A failed step normally has `post == pre` (an injected disappearance is the exception: the object
vanishes before the step runs, so `pre` already lacks it). Readers ignore unknown keys; `v` is the
format version (absent means 1).

Compact records (`"v": 2`, what `TransitionLog` writes). A state of a thousand facts written
twice per step made logs large and their readers larger, so a log file stores each state as
its change from the one before. Every record names its `writer` (one per `TransitionLog`, a
random id, so writers appending to one file stay apart); `pre` is a full list in a writer's
first record and otherwise `{"add": [...], "del": [...]}` against the `post` of that writer's
previous record; `post` is `{"add": [...], "del": [...]}` against the record's own `pre`. A
full list is accepted anywhere a change is. `Transition.to_json` (the thor server's wire form)
stays version 1, self-contained.

`TransitionLog` writes, `read_transitions` reads both versions (raising `TransitionLogError`
with file:line on a malformed record), holding one state per writer. docs/transitions.md
documents the same format.
"""
from __future__ import annotations

import json
import secrets
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sage_pddl.pddl.errors import PDDLSyntaxError, SageError
from sage_pddl.pddl.limits import bounded_lines, decode, load_json
from sage_pddl.pddl.model import PlanStep

from .base import Fact, format_fact, parse_fact

FORMAT_VERSION = 1
"""The self-contained record: both states in full."""
COMPACT_VERSION = 2
"""The record `TransitionLog` writes: states as changes (the module docstring)."""


class TransitionLogError(SageError):
    """A transition log line that is not a valid record."""


@dataclass(frozen=True)
class StepAction:
    """The step as executed: action word, argument words, the original text."""

    action: str
    args: tuple[str, ...] = ()
    text: str = ""


@dataclass(frozen=True)
class Transition:
    """One executed step: the state before, the action, the outcome and the state after."""

    task: str
    env: str
    domain: str
    step: int
    action: StepAction
    pre: frozenset[Fact]
    success: bool
    message: str
    post: frozenset[Fact]
    ts: float = field(default=0.0, compare=False)
    code: str | None = None
    episode: int = 0
    unknown: frozenset[Fact] = frozenset()
    """Facts whose truth before the step was not observed (partial observability): neither in
    `pre` (known true) nor known false."""

    @property
    def added(self) -> frozenset[Fact]:
        """Facts known false before the step and true after it (an unobserved fact that holds
        afterwards may have held before: it is not counted as added)."""
        return self.post - self.pre - self.unknown

    @property
    def deleted(self) -> frozenset[Fact]:
        return self.pre - self.post

    def header_json(self) -> dict:
        """Every field of the record but the version and the states (`pre`, `post`)."""
        return {"task": self.task, "env": self.env, "domain": self.domain,
                "episode": self.episode, "step": self.step,
                "action": {"action": self.action.action, "args": list(self.action.args),
                           "text": self.action.text},
                "success": self.success, "code": self.code, "message": self.message,
                "ts": self.ts,
                **({"unknown": fact_list(self.unknown)} if self.unknown else {})}

    def to_json(self) -> dict:
        """The self-contained record (version 1): both states written in full."""
        return {"v": FORMAT_VERSION, **self.header_json(), "pre": fact_list(self.pre),
                "post": fact_list(self.post)}

    @classmethod
    def from_json(cls, data: Any) -> Transition:
        """Read a self-contained record (version 1); `read_transitions` also reads the compact
        records of version 2, whose states need the records before them."""
        return StateChain().transition(data)

    @classmethod
    def from_fields(cls, data: dict, pre: frozenset[Fact], post: frozenset[Fact],
                    unknown: frozenset[Fact]) -> Transition:
        """A transition from a record's checked fields and its states, already read."""
        action = data["action"]
        code = data.get("code")
        return cls(task=data["task"], env=data["env"], domain=data["domain"], step=data["step"],
                   action=StepAction(action["action"], tuple(action.get("args", [])),
                                     str(action.get("text", ""))),
                   pre=pre, success=data["success"], message=str(data.get("message", "")),
                   post=post, ts=float(data.get("ts", 0.0)),
                   code=None if code is None else str(code),
                   episode=int(data.get("episode", 0)), unknown=unknown)


def fact_list(facts: Iterable[Fact]) -> list[str]:
    """Facts as a record writes them: `(predicate arg ...)`, sorted."""
    return sorted(format_fact(f) for f in facts)


def state_change(before: frozenset[Fact], after: frozenset[Fact]) -> dict[str, list[str]]:
    """`after` written as its change from `before` (a compact record's state)."""
    return {"add": fact_list(after - before), "del": fact_list(before - after)}


_HEADER_FIELDS = (("task", str), ("env", str), ("domain", str), ("step", int), ("action", dict),
                  ("success", bool))


class StateChain:
    """Reads records in file order, resolving each compact state against the state it changes:
    holds the last `post` of each writer, and one parsed copy of each fact (a log's states
    share their facts, so a thousand-fact state costs a table of references)."""

    def __init__(self) -> None:
        self._last: dict[str, frozenset[Fact]] = {}
        self._facts: dict[str, Fact] = {}

    def _facts_of(self, values: Any, field_name: str) -> frozenset[Fact]:
        if not isinstance(values, list):
            raise ValueError(f"field {field_name!r} must be a list of facts")
        facts = []
        for value in values:
            fact = self._facts.get(value) if isinstance(value, str) else None
            if fact is None:
                fact = parse_fact(value)
                if isinstance(value, str):
                    self._facts[value] = fact
            facts.append(fact)
        return frozenset(facts)

    def _state(self, value: Any, base: frozenset[Fact] | None, field_name: str,
               base_name: str) -> frozenset[Fact]:
        if isinstance(value, list):
            return self._facts_of(value, field_name)
        if not isinstance(value, dict):
            raise ValueError(f"field {field_name!r} must be a list of facts or a change "
                             '{"add": [...], "del": [...]}')
        if base is None:
            raise ValueError(f"field {field_name!r} is a change from {base_name}, and the file "
                             "holds no such record before it")
        added = self._facts_of(value.get("add", []), field_name + ".add")
        deleted = self._facts_of(value.get("del", []), field_name + ".del")
        return (base - deleted) | added if added or deleted else base

    def transition(self, data: Any) -> Transition:
        """The transition of the next record (a JSON object) of the file."""
        if not isinstance(data, dict):
            raise ValueError("a record must be a JSON object")
        version = data.get("v", 1)
        if version not in (FORMAT_VERSION, COMPACT_VERSION) or isinstance(version, bool):
            raise ValueError(f"format version {version!r} is not supported (expected "
                             f"{FORMAT_VERSION} or {COMPACT_VERSION})")
        for name, kind in _HEADER_FIELDS + (("pre", object), ("post", object)):
            if name not in data:
                raise ValueError(f"missing field {name!r}")
            if not isinstance(data[name], kind) or (kind is int and isinstance(data[name], bool)):
                raise ValueError(f"field {name!r} must be {kind.__name__}")
        action = data["action"]
        if not isinstance(action.get("action"), str):
            raise ValueError("field 'action.action' must be a string")
        args = action.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise ValueError("field 'action.args' must be a list of strings")
        writer = data.get("writer", "")
        if version == COMPACT_VERSION and (not isinstance(writer, str) or not writer):
            raise ValueError("field 'writer' must be a non-empty string in a version 2 record")
        previous = self._last.get(writer) if version == COMPACT_VERSION else None
        pre = self._state(data["pre"], previous, "pre",
                          f"the previous record of writer {writer!r}")
        post = self._state(data["post"], pre, "post", "'pre'")
        unknown = self._facts_of(data.get("unknown", []), "unknown")
        if version == COMPACT_VERSION:
            self._last[writer] = post
        return Transition.from_fields(data, pre, post, unknown)


def make_transition(*, task: str, env: str, domain: str, step: int, plan_step: PlanStep,
                    pre: Iterable[Fact], success: bool, message: str, post: Iterable[Fact],
                    code: str | None = None, episode: int = 0, ts: float | None = None) -> Transition:
    text = plan_step.text or " ".join([plan_step.action, *plan_step.args])
    return Transition(task=task, env=env, domain=domain, step=step,
                      action=StepAction(plan_step.action, plan_step.args, text),
                      pre=frozenset(pre), success=success, message=message, post=frozenset(post),
                      ts=time.time() if ts is None else ts, code=code, episode=episode)


class TransitionLog:
    """Appends transitions to a JSONL file, one flushed line per compact record (version 2).

    The file is opened in append mode (runs resume; several episodes share one file) and its
    parent folder is created. Each log is one writer (a random id in every record): its first
    record holds the full state, the others only what changed. Use as a context manager or
    call `close()`.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.writer = secrets.token_hex(4)
        self._last: frozenset[Fact] | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = self.path.open("a", encoding="utf-8")
        except OSError as error:
            raise TransitionLogError(f"cannot open transition log {self.path}: {error}") from error

    def append(self, transition: Transition) -> None:
        pre: Any = (fact_list(transition.pre) if self._last is None
                    else state_change(self._last, transition.pre))
        record = {"v": COMPACT_VERSION, "writer": self.writer, **transition.header_json(),
                  "pre": pre, "post": state_change(transition.pre, transition.post)}
        self._file.write(json.dumps(record, ensure_ascii=False) + "\n")
        self._file.flush()
        self._last = transition.post

    def close(self) -> None:
        if not self._file.closed:
            self._file.close()

    def __enter__(self) -> TransitionLog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


MAX_LINE_BYTES = 1024 * 1024
"""The longest transition record read (a record is a few KB)."""


def read_transitions(path: str | Path) -> Iterator[Transition]:
    """Yield the records of a transition log in file order; blank lines are skipped.

    Raises TransitionLogError naming `file:line` for a line that is not a valid record.
    """
    path = Path(path)
    try:
        handle = path.open("rb")
    except OSError as error:
        raise TransitionLogError(f"cannot read transition log {path}: {error}") from error
    chain = StateChain()
    with handle:
        for number, raw in enumerate(bounded_lines(handle, MAX_LINE_BYTES), start=1):
            if raw is None:
                raise TransitionLogError(f"{path}:{number}: error: not a transition record: "
                                         f"the line is longer than the {MAX_LINE_BYTES:,} "
                                         "bytes sage-pddl reads")
            if not raw.strip():
                continue
            try:
                text = decode(raw, f"{path}:{number}", "the line", max_bytes=MAX_LINE_BYTES)
                record = load_json(text, f"{path}:{number}", "JSON")
                yield chain.transition(record)
            except PDDLSyntaxError as error:
                raise TransitionLogError(f"{path}:{number}: error: not a transition record: "
                                         f"{error.message}") from None
            except (ValueError, TypeError, KeyError, AttributeError, SageError) as error:
                raise TransitionLogError(f"{path}:{number}: error: not a transition record: "
                                         f"{type(error).__name__}: {error}") from None
