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

`TransitionLog` writes, `read_transitions` reads (raising `TransitionLogError` with file:line on
a malformed record). docs/transitions.md documents the same format.
"""
from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sage_pddl.pddl.errors import PDDLSyntaxError, SageError
from sage_pddl.pddl.limits import bounded_lines, decode, load_json
from sage_pddl.pddl.model import PlanStep

from .base import Fact, format_fact, parse_fact, step_json

FORMAT_VERSION = 1


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

    def to_json(self) -> dict:
        return {"v": FORMAT_VERSION, "task": self.task, "env": self.env, "domain": self.domain,
                "episode": self.episode, "step": self.step,
                "action": {"action": self.action.action, "args": list(self.action.args),
                           "text": self.action.text},
                "pre": sorted(format_fact(f) for f in self.pre),
                "success": self.success, "code": self.code, "message": self.message,
                "post": sorted(format_fact(f) for f in self.post), "ts": self.ts,
                **({"unknown": sorted(format_fact(f) for f in self.unknown)}
                   if self.unknown else {})}

    @classmethod
    def from_json(cls, data: Any) -> Transition:
        if not isinstance(data, dict):
            raise ValueError("a record must be a JSON object")
        version = data.get("v", 1)
        if version != FORMAT_VERSION:
            raise ValueError(f"format version {version!r} is not supported (expected {FORMAT_VERSION})")
        for name, kind in (("task", str), ("env", str), ("domain", str), ("step", int),
                           ("action", dict), ("pre", list), ("success", bool), ("post", list)):
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
        code = data.get("code")
        unknown = data.get("unknown", [])
        if not isinstance(unknown, list):
            raise ValueError("field 'unknown' must be a list of facts")
        return cls(task=data["task"], env=data["env"], domain=data["domain"], step=data["step"],
                   action=StepAction(action["action"], tuple(args), str(action.get("text", ""))),
                   pre=frozenset(parse_fact(f) for f in data["pre"]),
                   success=data["success"], message=str(data.get("message", "")),
                   post=frozenset(parse_fact(f) for f in data["post"]),
                   ts=float(data.get("ts", 0.0)), code=None if code is None else str(code),
                   episode=int(data.get("episode", 0)),
                   unknown=frozenset(parse_fact(f) for f in unknown))


def make_transition(*, task: str, env: str, domain: str, step: int, plan_step: PlanStep,
                    pre: Iterable[Fact], success: bool, message: str, post: Iterable[Fact],
                    code: str | None = None, episode: int = 0, ts: float | None = None) -> Transition:
    action = step_json(plan_step)
    return Transition(task=task, env=env, domain=domain, step=step,
                      action=StepAction(action["action"], tuple(action["args"]), action["text"]),
                      pre=frozenset(pre), success=success, message=message, post=frozenset(post),
                      ts=time.time() if ts is None else ts, code=code, episode=episode)


class TransitionLog:
    """Appends transitions to a JSONL file, one flushed line per record.

    The file is opened in append mode (runs resume; several episodes share one file) and its
    parent folder is created. Use as a context manager or call `close()`.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._file = self.path.open("a", encoding="utf-8")
        except OSError as error:
            raise TransitionLogError(f"cannot open transition log {self.path}: {error}") from error

    def append(self, transition: Transition) -> None:
        self._file.write(json.dumps(transition.to_json(), ensure_ascii=False) + "\n")
        self._file.flush()

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
                yield Transition.from_json(record)
            except PDDLSyntaxError as error:
                raise TransitionLogError(f"{path}:{number}: error: not a transition record: "
                                         f"{error.message}") from None
            except (ValueError, TypeError, KeyError, AttributeError, SageError) as error:
                raise TransitionLogError(f"{path}:{number}: error: not a transition record: "
                                         f"{type(error).__name__}: {error}") from None
