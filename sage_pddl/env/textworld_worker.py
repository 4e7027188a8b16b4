"""The TextWorld game worker: one ALFWorld game, played in ALFWorld's own engine, over JSON lines.

This file runs as a script in the ALFWorld environment's interpreter (the virtual environment
`sage-pddl env-setup alfworld` makes, holding `textworld[pddl]` and its compiled Fast
Downward), started by `env/textworld.py` as `PYTHON -I textworld_worker.py --max-bytes N
--max-memory M`. It imports only the standard library and TextWorld, never `sage_pddl` (whose
environment may hold a Fast Downward translator that clashes with TextWorld's), and `-I`
keeps this folder (whose `textworld.py` would shadow TextWorld) off its import path.

Protocol, version 1 (docs/alfworld.md, "The worker protocol"): one JSON object per line on
stdin, one reply per line on stdout, in order.

* `{"cmd": "hello"}` -> `{"ok": true, "protocol": 1, "textworld": VERSION}`
* `{"cmd": "load", "domain": PDDL, "problem": PDDL, "grammar": TWL2}` -> `{"ok": true,
  "state": STATE, "templates": {action: {"template": T, "parameters": [[name, type], ...]}}}`:
  TextWorld's `PddlEnv` loads the game and resets it.
* `{"cmd": "step", "command": TEXT}` -> `{"ok": true, "state": STATE}`: `PddlEnv.step`.
* `{"cmd": "close"}` -> `{"ok": true}`, and the worker ends.

STATE is `{"feedback", "won", "facts": [[name, arg, ...]], "admissible_commands", "valid":
[{"action", "command", "args": [[object, parameter type], ...]}]}`: TextWorld's game state
(`won` is its `check_goal()`, the problem's own goal; `valid` pairs each applicable ground
operator with its command). A failure is `{"ok": false, "kind": K, "error": TEXT}`, `kind`
one of `bad-request` (not a request of this protocol; the worker goes on), `load-failed`
(TextWorld or Fast Downward refused the game), `internals` (a TextWorld without an attribute
read below), `no-textworld` (TextWorld or its Fast Downward cannot be imported), `no-game`,
`step-failed` (TextWorld failed inside a step: the game ends), `too-large` (a request line
over `--max-bytes`, or the game over `--max-memory`: the worker ends after the reply).

The worker's own stdout is kept for replies: anything a library prints (Fast Downward's
translator does) goes to stderr. TextWorld's Fast Downward translator parses `sys.argv` on
import, so the worker's arguments are removed from it before TextWorld is imported.

Two fixes are applied to every game (the reasons are in their docstrings), reading attributes
TextWorld keeps private (a loaded game's `_logic` and `_pddl_state`; nothing public gives the
same): `INTERNALS` lists them, and a game without one is refused with `kind: internals`.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import sys
from typing import Any

PROTOCOL = 1

INTERNALS = (("_logic", "types", "_types"), ("_logic", "actions"),
             ("_pddl_state", "_actions"), ("_pddl_state", "name2type"))
"""The private attributes of a loaded TextWorld game (`PddlEnv`) the worker reads, each as its
path of attribute names."""


class WorkerError(Exception):
    """A request the worker answers with `ok: false` (`kind` says which failure)."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


def check_internals(game: Any) -> None:
    """Raise a WorkerError (kind `internals`) unless `game` has every attribute of INTERNALS."""
    for path in INTERNALS:
        found = game
        for name in path:
            found = getattr(found, name, None)
            if found is None:
                raise WorkerError("internals", f"TextWorld {_textworld_version()} has no "
                                  f"{'.'.join(('game', *path))}, which sage-pddl reads to fix "
                                  "what TextWorld reads from a domain")


def declare_implicit_types(game: Any) -> None:
    """Give TextWorld's type hierarchy the parent types a domain uses without declaring them.

    `(:types item receptacle - thing)` makes `thing` a type (a child of `object`), but Fast
    Downward's translator lists only declared types, so TextWorld's grammar conditions over
    `thing` would fail with a KeyError.
    """
    from textworld.logic import Type  # TextWorld: imported once the game is loaded

    hierarchy = game._logic.types
    known = set(hierarchy._types)
    for declared in list(hierarchy._types.values()):
        for parent in declared.parents:
            if parent not in known:
                hierarchy.add(Type(parent, ("object",)))
                known.add(parent)


def retype_operands(game: Any, state: Any) -> Any:
    """Type the objects of each applicable operator with their declared types.

    TextWorld types an operator's objects with the *parameter* types (`?x - thing`), while the
    state's facts carry the objects' own types (`fridge_1 - receptacle`); the feedback grammar's
    conditions would then never match a fact about an object bound to a supertype parameter.
    The operators are re-read by the next `step`, so fixing them here fixes that step's feedback.
    """
    from textworld.logic import Variable  # TextWorld: imported once the game is loaded

    declared = game._pddl_state.name2type
    for action in state["_valid_actions"]:
        action.mapping = {placeholder: Variable(value.name, declared.get(value.name, value.type))
                          for placeholder, value in action.mapping.items()}
    return state


def _textworld_version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # only to word an error

    try:
        return version("textworld")
    except PackageNotFoundError:
        return "(not installed)"


def _state(game: Any, state: Any) -> dict[str, Any]:
    """A TextWorld game state as the protocol's STATE (after the operand fix)."""
    retype_operands(game, state)
    valid = [{"action": operator.name, "command": command,
              "args": [[value.name, placeholder.type]
                       for placeholder, value in operator.mapping.items()]}
             for operator, command in zip(state["_valid_actions"], state["_valid_commands"])]
    return {"feedback": str(state.feedback), "won": bool(state["won"]),
            "facts": [[fact.name, *(v.name for v in fact.arguments)] for fact in state["_facts"]],
            "admissible_commands": list(state["admissible_commands"]), "valid": valid}


def _templates(game: Any) -> dict[str, Any]:
    """Each action's command template and its PDDL parameters (name without `?`, type)."""
    operators = game._pddl_state._actions
    templates = {}
    for name, action in game._logic.actions.items():
        operator = operators.get(name)
        parameters = operator.parameters if operator is not None else ()
        templates[name] = {"template": action.template,
                           "parameters": [[p.name.lstrip("?"), p.type_name] for p in parameters]}
    return templates


class Worker:
    """One game at a time, answering the protocol's requests."""

    def __init__(self) -> None:
        self.game: Any = None

    def handle(self, request: Any) -> dict[str, Any]:
        if not isinstance(request, dict) or not isinstance(request.get("cmd"), str):
            raise WorkerError("bad-request", "a request is a JSON object with a 'cmd'")
        command = request["cmd"]
        if command == "hello":
            return self.hello()
        if command == "load":
            return self.load(*(_text_field(request, name)
                               for name in ("domain", "problem", "grammar")))
        if command == "step":
            if self.game is None:
                raise WorkerError("no-game", "no game loaded: send 'load' first")
            state = self.game.step(_text_field(request, "command"))[0]
            return {"ok": True, "state": _state(self.game, state)}
        if command == "close":
            return {"ok": True}
        raise WorkerError("bad-request", f"unknown cmd {command!r} (hello, load, step, close)")

    def hello(self) -> dict[str, Any]:
        """Import TextWorld's PDDL engine as a game would, and say which TextWorld it is."""
        try:
            from textworld.envs.pddl import pddl  # TextWorld: imported as `load` will
        except ImportError as error:
            raise WorkerError("no-textworld", f"cannot import TextWorld: {error}") from error
        if getattr(pddl, "fast_downward_missing", True):
            raise WorkerError("no-textworld", "TextWorld's Fast Downward (package "
                              "fast-downward-textworld) cannot be imported")
        return {"ok": True, "protocol": PROTOCOL, "textworld": _textworld_version()}

    def load(self, domain: str, problem: str, grammar: str) -> dict[str, Any]:
        import textworld  # TextWorld: imported after sys.argv is cleared (see the docstring)
        from textworld.envs.pddl import PddlEnv  # TextWorld: as above

        self.game = None
        game = PddlEnv(textworld.EnvInfos(admissible_commands=True, facts=True))
        try:
            game.load({"pddl_domain": domain, "pddl_problem": problem, "grammar": grammar})
            check_internals(game)
            declare_implicit_types(game)
            state = game.reset()
        except (WorkerError, MemoryError):
            raise
        except Exception as error:  # TextWorld/Fast Downward report bad input with bare errors
            raise WorkerError("load-failed", f"{type(error).__name__}: {error}") from error
        self.game = game
        return {"ok": True, "state": _state(game, state), "templates": _templates(game)}


def _text_field(request: dict[str, Any], name: str) -> str:
    value = request.get(name)
    if not isinstance(value, str):
        raise WorkerError("bad-request", f"'{request['cmd']}' needs '{name}' as a string")
    return value


def serve(requests: Any, replies: Any, max_bytes: int) -> None:
    """Answer request lines from `requests` (binary) on `replies` (binary) until `close`,
    end of input, or a failure that ends the worker."""
    worker = Worker()
    while True:
        line = requests.readline(max_bytes + 1)
        if not line:
            return
        ends = False
        if len(line) > max_bytes:
            reply: dict[str, Any] = {"ok": False, "kind": "too-large",
                                     "error": f"a request line is longer than {max_bytes} bytes"}
            ends = True
        else:
            try:
                request = json.loads(line)
                reply = worker.handle(request)
                ends = request.get("cmd") == "close"
            except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as error:
                reply = {"ok": False, "kind": "bad-request", "error": f"not JSON: {error}"}
            except WorkerError as error:
                reply = {"ok": False, "kind": error.kind, "error": str(error)}
            except MemoryError:
                worker.game = None
                reply = {"ok": False, "kind": "too-large",
                         "error": "the game needs more memory than the worker may use"}
                ends = True
            except Exception as error:  # a game that fails mid-step: reported, the game ends
                worker.game = None
                reply = {"ok": False, "kind": "step-failed",
                         "error": f"{type(error).__name__}: {error}"}
        replies.write(json.dumps(reply).encode("utf-8") + b"\n")
        replies.flush()
        if ends:
            return


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="sage-pddl's TextWorld game worker")
    parser.add_argument("--max-bytes", type=int, default=16 * 1024 * 1024)
    parser.add_argument("--max-memory", type=int, default=0, help="bytes; 0: no cap")
    args = parser.parse_args(argv)
    sys.argv = sys.argv[:1]  # TextWorld's translator reads sys.argv on import
    if args.max_memory > 0:
        resource.setrlimit(resource.RLIMIT_AS, (args.max_memory, args.max_memory))
    replies = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # whatever a library prints goes to stderr, not into the replies
    sys.stdout = sys.stderr
    serve(sys.stdin.buffer, replies, args.max_bytes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
